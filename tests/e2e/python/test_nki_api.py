"""The NKI answers over HTTP (docs/api.md): GET /api/profiles/<name>/source (time per NKI
source line) and the "nki" member of an Instruction's /event (source location, call stack,
loop iteration, assembly line), on a synth llama-layer device profile (its NKI
flash-attention kernel's debug tables).

Independent of nxprof: the expectations are DuckDB's join of the Parquet files
(Instruction JOIN KernelInstructions USING (kernel_instruction_name, pcore_idx),
AssemblyInstruction on compiler_pc, the instruction's opcode first) with the call and loop
chains walked here in Python.
"""
from collections import defaultdict

import duckdb
import pytest

from conftest import http_get_json, nx, serving


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """(data path, the NKI device profile's directory)."""
    work = tmp_path_factory.mktemp("nki")
    nx("synth", "--out", work / "cap", "--preset", "llama-layer", "--events", "20000", "--seed", "3")
    dp = work / "dp"
    nx("process", work / "cap", "--data-path", dp, "--display-name", "run")
    d = (dp / "profiles" / "global" / "run-nd0-nc0@latest").resolve()
    assert (d / "KernelInstructions.parquet").exists()
    return dp, d


@pytest.fixture(scope="module")
def port(profile):
    with serving(profile[0]) as (p, _):
        yield p


def q(sql):
    return duckdb.sql(sql).fetchall()


def frames_of(d):
    """(pcore, id) -> (parent, function, file, line)."""
    return {(r[0], r[1]): r[2:] for r in q(f"SELECT pcore_idx, stack_frame_id, parent_stack_frame_id, "
                                           f"fully_qualified_function_name, file_path, line_number "
                                           f"FROM '{d}/KernelStackFrames.parquet'")}


def chain(table, pcore, start):
    """Ids from start up the parent links on one core, outermost first (a cycle ends)."""
    out = []
    while start is not None and (pcore, start) in table and start not in out:
        out.append(start)
        start = table[(pcore, start)][0]
    return out[::-1]


def test_source_table_is_the_join(profile, port):
    _, d = profile
    frames = frames_of(d)
    rows = q(f"SELECT k.file_path, k.line_number, i.duration_ns, k.stack_frame_id, pcore_idx "
             f"FROM '{d}/Instruction.parquet' i "
             f"JOIN '{d}/KernelInstructions.parquet' k USING (kernel_instruction_name, pcore_idx)")
    want = defaultdict(lambda: [0, 0, 0])   # (file, line) -> count, self, total
    for file, line, dur, frame, pcore in rows:
        w = want[(file, line)]
        w[0] += 1
        w[1] += dur or 0
        w[2] += dur or 0
        sites = {frames[(pcore, f)][2:4] for f in chain(frames, pcore, frame)} - {(file, line)}
        for s in sites:
            want[s][2] += dur or 0
    total_ns = q(f"SELECT sum(duration_ns) FROM '{d}/Instruction.parquet'")[0][0]
    status, got = http_get_json(port, "/api/profiles/run-nd0-nc0/source?limit=100000")
    assert status == 200, got
    assert got["instruction_ns"] == total_ns
    assert got["attributed"] == len(rows) > 0
    assert got["total_lines"] == len(want) == len(got["lines"])
    order = sorted(want, key=lambda k: (-want[k][1], k[0], k[1]))
    assert [(x["file"], x["line"]) for x in got["lines"]] == order
    for x in got["lines"]:
        w = want[(x["file"], x["line"])]
        assert [x["count"], x["self_ns"], x["total_ns"]] == w, x
        assert x["self_percent"] == pytest.approx(100 * w[1] / total_ns, rel=1e-5)
    # the kernel's entry frame's call site carries all its time but no instruction of its own
    entry = [v[2:4] for v in frames.values() if v[0] is None]
    assert entry and all(want[e][2] == got["attributed_ns"] and want[e][0] == 0 for e in entry)
    status, got = http_get_json(port, "/api/profiles/run-nd0-nc0/source?limit=3")
    assert len(got["lines"]) == 3 and got["total_lines"] == len(want)


def test_event_nki_member_is_the_join(profile, port):
    _, d = profile
    frames = frames_of(d)
    iters = {(r[0], r[1]): r[2:] for r in q(f"SELECT pcore_idx, iteration_variable_id, parent_iteration_variable_id, "
                                            f"variable_name, variable_value, file_path, line_number "
                                            f"FROM '{d}/KernelIterationVariables.parquet'")}
    rows = q(f"SELECT file_row_number, kernel_instruction_name, compiler_pc, compiler_opcode, pcore_idx "
             f"FROM read_parquet('{d}/Instruction.parquet', file_row_number=true) "
             f"WHERE kernel_instruction_name IS NOT NULL OR file_row_number % 1000 = 0 ORDER BY 1")
    assert sum(1 for r in rows if r[1]) > 100
    for ordinal, name, pc, op, pcore in rows[::7]:
        status, ev = http_get_json(port, f"/api/profiles/run-nd0-nc0/event?table=Instruction&ordinal={ordinal}")
        assert status == 200, ev
        nki = ev["nki"]
        assert nki["kernel_instruction_name"] == name
        k = q(f"SELECT file_path, line_number, stack_frame_id, iteration_variables_id "
              f"FROM '{d}/KernelInstructions.parquet' WHERE kernel_instruction_name = '{name}' "
              f"AND pcore_idx = {pcore}") if name and pcore is not None else []
        if not k:
            assert nki["source"] is None and nki["stack"] == [] and nki["iteration"] == []
        else:
            file, line, frame, it = k[0]
            stack = chain(frames, pcore, frame)
            assert stack, name
            fr = {f: frames[(pcore, f)] for f in stack}
            assert nki["source"] == {"file": file, "line": line, "function": fr[stack[-1]][1]}
            assert nki["stack"] == [{"id": f, "function": fr[f][1], "file": fr[f][2], "line": fr[f][3]} for f in stack]
            loops = chain(iters, pcore, it)
            assert nki["iteration"] == [{"id": i, "name": iters[(pcore, i)][1], "value": iters[(pcore, i)][2],
                                         "file": iters[(pcore, i)][3], "line": iters[(pcore, i)][4]} for i in loops]
        # of the pc's rows, the instruction's opcode first, then the lowest instruction_id
        a = q(f"SELECT instruction_id, compiler_opcode, compiler_operands FROM '{d}/AssemblyInstruction.parquet' "
              f"WHERE compiler_pc = {pc} ORDER BY coalesce(compiler_opcode = $op, false) DESC, instruction_id "
              f"LIMIT 1".replace("$op", "NULL" if op is None else "'" + op.replace("'", "''") + "'")) if pc is not None else []
        if a and op is not None:
            assert a[0][1] == op
        want = {"instruction_id": a[0][0], "compiler_pc": pc, "opcode": a[0][1], "operands": a[0][2]} if a else None
        assert nki["assembly"] == want


def test_profile_without_nki_tables(port):
    status, got = http_get_json(port, "/api/profiles/run/source")   # the system profile
    assert status == 404 and "KernelInstructions" in got["error"]
    status, ev = http_get_json(port, "/api/profiles/run/event?table=SystemProfileEvents&ordinal=0")
    assert status == 200 and "nki" not in ev
    status, got = http_get_json(port, "/api/profiles/run-nd0-nc0/source?limit=0")
    assert status == 400
