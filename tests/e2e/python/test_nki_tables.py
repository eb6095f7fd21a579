"""KernelStackFrames, KernelIterationVariables, KernelInstructions and AssemblyInstruction
against an independent reading of the program file's NKI_FRAMES, NKI_ITERATIONS,
NKI_INSTRUCTIONS and ASSEMBLY sections (docs/capture-format.md byte layouts, read here with
struct, not through nxprof's reader), on a 2-core synth capture; the documented join of
Instruction and KernelInstructions in DuckDB; the tables read by pyarrow and DuckDB."""
import struct
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import REFERENCE, arrow_type, nx

KERNEL_TABLES = ["KernelStackFrames", "KernelIterationVariables", "KernelInstructions", "AssemblyInstruction"]


def read_program(path):
    """The sections of a program file: {id: (record_size, [record bytes])}, strings."""
    data = Path(path).read_bytes()
    assert data[:8] == b"NXPROG\0\0"
    toc_n, entry, toc_off = struct.unpack_from("<IIQ", data, 16)
    secs = {}
    for i in range(toc_n):
        sid, size, off, count = struct.unpack_from("<IIQQ", data, toc_off + i * entry)
        secs[sid] = (size, off, count)
    s_size, s_off, s_count = secs[1]
    strings = data[s_off:s_off + s_count]

    def string(ref):
        return strings[ref:strings.index(b"\0", ref)].decode()

    def records(sid):
        if sid not in secs:
            return []
        size, off, count = secs[sid]
        return [data[off + k * size: off + (k + 1) * size] for k in range(count)]

    return records, string


def program_model(path):
    records, string = read_program(path)
    instrs = []   # program order (engine, pc)
    for r in records(4):
        pc, engine = struct.unpack_from("<IB", r, 0)
        kname = string(struct.unpack_from("<I", r, 16 + 4 * 7)[0])   # slot 7: kernel_instruction_name
        compiler_pc = struct.unpack_from("<q", r, 88)[0]
        instrs.append((engine, pc, kname, compiler_pc))
    index = {(e, pc): i for i, (e, pc, _, _) in enumerate(instrs)}
    frames = [(struct.unpack_from("<q", r, 0)[0], string(struct.unpack_from("<I", r, 8)[0]),
               string(struct.unpack_from("<I", r, 12)[0]), struct.unpack_from("<I", r, 16)[0])
              for r in records(20)]
    iters = [(struct.unpack_from("<q", r, 0)[0], struct.unpack_from("<q", r, 8)[0],
              string(struct.unpack_from("<I", r, 16)[0]), string(struct.unpack_from("<I", r, 20)[0]),
              struct.unpack_from("<I", r, 24)[0]) for r in records(21)]
    maps = [(struct.unpack_from("<I", r, 0)[0], r[4], struct.unpack_from("<I", r, 8)[0],
             string(struct.unpack_from("<I", r, 12)[0]), struct.unpack_from("<I", r, 16)[0],
             struct.unpack_from("<q", r, 24)[0]) for r in records(22)]
    asm = [(struct.unpack_from("<I", r, 0)[0], r[4], string(struct.unpack_from("<I", r, 8)[0]),
            string(struct.unpack_from("<I", r, 12)[0]), struct.unpack_from("<q", r, 16)[0])
           for r in records(23)]
    return instrs, index, frames, iters, maps, asm


def depth(parents, i):
    d = 1
    while parents[i] != -1:
        i = parents[i]
        d += 1
    return d


def none_if(v, absent=-1):
    return None if v == absent else v


@pytest.fixture(scope="module")
def nki(tmp_path_factory):
    root = tmp_path_factory.mktemp("nki")
    nx("synth", "--out", root / "cap", "--preset", "tiny", "--cores", "2", "--no-system")
    nx("process", root / "cap", "--output-file", root / "prof")
    prog = next((root / "cap").rglob("program_*.nxprog"))
    dev = next((root / "prof" / "devices").glob("*-nd0-nc0"))
    return program_model(prog), dev


def rows(dev, table):
    return pq.read_table(dev / f"{table}.parquet").to_pylist()


def test_sections_present_and_kernel_partial(nki):
    (instrs, _, frames, iters, maps, asm), _ = nki
    assert len(frames) >= 4 and len(iters) >= 2 and maps and len(asm) == len(instrs)
    assert 0 < len(maps) < len(instrs), "only the NKI kernel's instructions are mapped"


def test_kernel_stack_frames(nki):
    (_, _, frames, _, _, _), dev = nki
    want = [{"stack_frame_id": i, "fully_qualified_function_name": fn,
             "parent_stack_frame_id": none_if(parent), "pcore_idx": 0, "file_path": file,
             "line_number": line} for i, (parent, file, fn, line) in enumerate(frames)]
    assert rows(dev, "KernelStackFrames") == want


def test_kernel_iteration_variables(nki):
    (_, _, _, iters, _, _), dev = nki
    want = [{"iteration_variable_id": i, "variable_name": name, "variable_value": value,
             "parent_iteration_variable_id": none_if(parent), "pcore_idx": 0, "file_path": file,
             "line_number": line} for i, (parent, value, name, file, line) in enumerate(iters)]
    assert rows(dev, "KernelIterationVariables") == want


def test_kernel_instructions(nki):
    (instrs, index, frames, iters, maps, _), dev = nki
    fparents = [f[0] for f in frames]
    iparents = [v[0] for v in iters]
    want = []
    for pc, engine, frame, file, line, it in maps:
        want.append({"kernel_instruction_name": instrs[index[(engine, pc)]][2], "stack_frame_id": frame,
                     "stack_frame_depth": depth(fparents, frame), "iteration_variables_id": none_if(it),
                     "iteration_variable_depth": None if it == -1 else depth(iparents, it), "pcore_idx": 0,
                     "file_path": file, "line_number": line})
    assert rows(dev, "KernelInstructions") == want


def test_assembly_instruction(nki):
    (instrs, index, _, _, _, asm), dev = nki
    want = [{"instruction_id": index[(engine, pc)], "compiler_opcode": op, "compiler_operands": operands,
             "compiler_pc": cpc} for pc, engine, op, operands, cpc in asm]
    assert rows(dev, "AssemblyInstruction") == want
    assert [a["compiler_pc"] for a in want] == sorted({a["compiler_pc"] for a in want})


def test_schema_of_the_files(nki):
    _, dev = nki
    for table in KERNEL_TABLES:
        schema = pq.read_schema(dev / f"{table}.parquet")
        ref = REFERENCE[table]
        assert schema.names == [f["field"] for f in ref], table
        for f in ref:
            field = schema.field(f["field"])
            assert field.type == arrow_type(f), (table, f["field"])
            assert field.nullable == (f["required"] != "Yes"), (table, f["field"])


def test_join_instruction_in_duckdb(nki):
    """Every Instruction row of a kernel instruction finds its KernelInstructions row, on
    name and core; rows of other instructions find none, so coverage is below 100%."""
    (instrs, _, _, _, maps, _), dev = nki
    con = duckdb.connect()
    i, k = dev / "Instruction.parquet", dev / "KernelInstructions.parquet"
    joined, kernel_rows, total = con.execute(
        f"SELECT (SELECT count(*) FROM '{i}' i JOIN '{k}' k ON i.kernel_instruction_name = "
        f"k.kernel_instruction_name AND i.pcore_idx = k.pcore_idx), "
        f"(SELECT count(*) FROM '{i}' WHERE kernel_instruction_name IS NOT NULL), "
        f"(SELECT count(*) FROM '{i}')").fetchone()
    assert joined == kernel_rows > 0 and kernel_rows < total
    lines = con.execute(
        f"SELECT k.line_number, sum(i.duration_ns) FROM '{i}' i JOIN '{k}' k ON i.kernel_instruction_name = "
        f"k.kernel_instruction_name AND i.pcore_idx = k.pcore_idx GROUP BY 1").fetchall()
    assert {line for line, _ in lines} == {m[4] for m in maps}
    asm = dev / "AssemblyInstruction.parquet"
    unmatched = con.execute(f"SELECT count(*) FROM '{i}' i ANTI JOIN '{asm}' a ON i.compiler_pc = a.compiler_pc"
                            ).fetchone()[0]
    assert unmatched == 0



def test_top_by_source_line_equals_duckdb_join(nki):
    """`nxprof top --by file_path,line_number` on Instruction: the groups of DuckDB's LEFT JOIN
    of the Parquet files (nulls: instructions from no kernel), counts and summed durations."""
    import csv
    import io
    _, dev = nki
    out = nx("top", dev, "--table", "Instruction", "--by", "file_path,line_number", "--limit", "0",
             "--format", "csv").stdout
    got = {(r["file_path"] or None, int(r["line_number"]) if r["line_number"] else None):
           (int(r["count"]), int(r["sum_duration_ns"])) for r in csv.DictReader(io.StringIO(out))}
    i, k = dev / "Instruction.parquet", dev / "KernelInstructions.parquet"
    want = {(f, line): (n, int(s)) for f, line, n, s in duckdb.connect().execute(
        f"SELECT k.file_path, k.line_number, count(*), sum(i.duration_ns) FROM '{i}' i LEFT JOIN '{k}' k "
        f"ON i.kernel_instruction_name = k.kernel_instruction_name AND i.pcore_idx = k.pcore_idx "
        f"GROUP BY 1, 2").fetchall()}
    assert got == want
    assert len(want) > 2 and (None, None) in want


def test_summary_nki_coverage_equals_duckdb(nki):
    import json
    _, dev = nki
    got = json.loads(nx("summary", dev, "--format", "json").stdout)["nki_coverage"]
    i, k = dev / "Instruction.parquet", dev / "KernelInstructions.parquet"
    kernel_ns, total_ns, kernel_n, n = duckdb.connect().execute(
        f"SELECT sum(i.duration_ns) FILTER (WHERE k.kernel_instruction_name IS NOT NULL), sum(i.duration_ns), "
        f"count(k.kernel_instruction_name), count(*) FROM '{i}' i LEFT JOIN '{k}' k "
        f"ON i.kernel_instruction_name = k.kernel_instruction_name AND i.pcore_idx = k.pcore_idx").fetchone()
    assert (got["kernel_ns"], got["total_ns"], got["kernel_instructions"], got["instructions"]) == \
        (kernel_ns, total_ns, kernel_n, n)
    assert got["percent"] == pytest.approx(100 * kernel_ns / total_ns, rel=1e-12)
    assert 0 < got["percent"] < 100
    text = nx("summary", dev).stdout
    assert f"NKI coverage: {100 * kernel_ns / total_ns:.2f}% of instruction time" in text


def test_documented_join_in_nxprof_sql(nki):
    """docs/processing.md's join, run by `nxprof sql` over the profile's relations, equals
    DuckDB's over the files."""
    import csv
    import io
    _, dev = nki
    q = ("SELECT k.file_path, k.line_number, count(*) AS n, sum(i.duration_ns) AS time_ns "
         "FROM Instruction i JOIN KernelInstructions k ON i.kernel_instruction_name = k.kernel_instruction_name "
         "AND i.pcore_idx = k.pcore_idx GROUP BY 1, 2")
    got = {(r["file_path"], int(r["line_number"])): (int(r["n"]), int(r["time_ns"]))
           for r in csv.DictReader(io.StringIO(nx("sql", dev, q, "--format", "csv").stdout))}
    files = q.replace("FROM Instruction", f"FROM '{dev / 'Instruction.parquet'}'").replace(
        "JOIN KernelInstructions", f"JOIN '{dev / 'KernelInstructions.parquet'}'")
    want = {(f, line): (n, int(t)) for f, line, n, t in duckdb.connect().execute(files).fetchall()}
    assert got == want and len(want) > 1
