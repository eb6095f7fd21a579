"""`nxprof sql` against DuckDB reading the Parquet files directly (docs/sql.md).

Each query of the corpus runs twice: through `nxprof sql --format json` over a profile
(or a data path), and in the .venv's DuckDB with every relation replaced by
read_parquet([the table's files]) (conftest.profile_files: the files on disk, found
without nxprof's catalogue). The answers are compared cell by cell: integers exactly
(nxprof writes those beyond 2^53 as strings), reals to 1e-9 relative, in order when the
query has an ORDER BY, as sorted multisets otherwise. Data-path queries (profile_name,
schema-qualified names) are checked against answers assembled in Python from one
DuckDB query per profile.

Profiles: `synth --preset tiny` (2 NeuronCores) processed into a data path as "tiny"
(system profile tiny, device profiles tiny-nd0-nc0 and tiny-nd0-nc1), the same capture
with --max-rows-per-file 300 (split tables), and the real PyTorch trace
tests/data/real-gpu/gpt2_eager.json.gz processed into the same data path as "gpt2".
"""
import decimal
import json
import math
import re

import duckdb
import numpy as np
import pytest

from conftest import TEST_DATA, nx, profile_files


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("sql")
    cap = root / "cap"
    nx("synth", "--out", cap, "--preset", "tiny", "--seed", "3")
    dp = root / "dp"
    nx("process", cap, "--data-path", dp, "--display-name", "tiny")
    nx("process", TEST_DATA / "real-gpu" / "gpt2_eager.json.gz", "--data-path", dp, "--display-name", "gpt2")
    split = root / "split"
    nx("process", cap, "--output-file", split, "--max-rows-per-file", "300")
    profiles = {p.name[: -len("@latest")]: p for p in (dp / "profiles" / "global").glob("*@latest")}
    assert sorted(profiles) == ["gpt2", "tiny", "tiny-nd0-nc0", "tiny-nd0-nc1"]
    profiles["split"] = split / "devices" / "split-nd0-nc0"
    assert len(profile_files(profiles["split"])["Instruction"]) > 1, "the split profile should split Instruction"
    return dp, profiles


def norm(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None  # nxprof's JSON writes nan and infinities as null
    return v


def nx_answer(path, query, *opts):
    r = nx("sql", path, query, "--format", "json", *opts)
    a = json.loads(r.stdout)
    assert a["row_count"] == len(a["rows"]) and not a["truncated"], query
    rows = []
    for row in a["rows"]:
        cells = []
        for v, t in zip(row, a["types"]):
            if isinstance(v, str) and re.fullmatch(r"U?(BIG|HUGE|TINY|SMALL)?INT(EGER)?", t):
                v = int(v)  # an integer beyond 2^53, written as a string
            cells.append(v)
        rows.append(tuple(cells))
    return a["types"], rows


def same_cell(a, b, t):
    a, b = norm(a), norm(b)
    if t == "FLOAT" and a is not None and b is not None:
        return np.float32(a) == np.float32(b)  # nxprof's text reads back to the same float
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def sort_key(row):
    return tuple((v is None, str(type(norm(v))), str(norm(v))) for v in row)


def compare(query, got, want, types):
    assert len(got) == len(want), f"{query}: {len(got)} rows, DuckDB {len(want)}"
    top = query
    while re.search(r"\([^()]*\)", top):  # the outermost query's text: parentheses dropped
        top = re.sub(r"\([^()]*\)", " ", top)
    if not re.search(r"\bORDER\s+BY\b", top, re.I):
        got, want = sorted(got, key=sort_key), sorted(want, key=sort_key)
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w) and all(same_cell(x, y, t) for x, y, t in zip(g, w, types)), \
            f"{query}: row {i}: nxprof {g}, DuckDB {w}"


def files_sql(files):
    return "read_parquet([" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "])"


def oracle(query, profile_dir, qualified=None):
    """query with each {Table} replaced by read_parquet of profile_dir's files, and each
    {profile.Table} by that profile's (qualified: {name: dir})."""
    def sub(m):
        name = m.group(1)
        if "." in name:
            prof, table = name.rsplit(".", 1)
            return files_sql(profile_files(qualified[prof])[table])
        return files_sql(profile_files(profile_dir)[name])
    return duckdb.connect().execute(re.sub(r"\{([A-Za-z0-9_.-]+)\}", sub, query)).fetchall()


def ours(query):
    """The query as nxprof gets it: {Table} -> Table, {profile.Table} -> "profile".Table."""
    def sub(m):
        name = m.group(1)
        if "." in name:
            prof, table = name.rsplit(".", 1)
            return f'"{prof}".{table}'
        return name
    return re.sub(r"\{([A-Za-z0-9_.-]+)\}", sub, query)


DEVICE = [
    # the reference workflows' queries
    "SELECT * FROM {Summary}",
    "SELECT total_time, event_count, dma_transfer_count, hbm_read_bytes, mbu_estimated_percent FROM {Summary}",
    "SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns FROM {Instruction} "
    "GROUP BY engine, opcode ORDER BY total_dur_ns DESC, engine, opcode",
    "SELECT engine, opcode, COUNT(*) as cnt, SUM(evt_wait_time_ns) as total_wait_ns, AVG(evt_wait_time_ns) AS avg_wait "
    "FROM {Instruction} GROUP BY engine, opcode ORDER BY total_wait_ns DESC, engine, opcode",
    "SELECT bir_debug_info_source_location, COUNT(*) AS cnt, SUM(duration_ns) AS total_dur_ns FROM {Instruction} "
    "GROUP BY 1 ORDER BY total_dur_ns DESC, 1",
    "SELECT m.bir_id, COUNT(*) AS matmuls, SUM(m.duration_ns) AS mm_ns, MIN(l.start_ts) AS first_ld "
    "FROM {Instruction} m JOIN {Instruction} l ON m.bir_id = l.bir_id "
    "WHERE m.opcode = 'MATMUL' AND l.opcode = 'LDWEIGHTS' GROUP BY m.bir_id",
    "SELECT queue_name, COUNT(*) AS packets, SUM(transfer_bytes) AS bytes FROM {DmaPacket} GROUP BY 1 ORDER BY 1",
    "SELECT COUNT(*), SUM(transfer_bytes), MIN(start_ts), MAX(end_ts) FROM {DmaPacket}",
    "SELECT queue_type, engine_idx, COUNT(*) FROM {DmaPacket} GROUP BY ALL",
    # GROUP BY, ORDER BY, LIMIT
    "SELECT opcode, COUNT(*) FROM {Instruction} GROUP BY opcode HAVING COUNT(*) > 10 ORDER BY 2 DESC, 1 LIMIT 5",
    "SELECT * FROM {Instruction} ORDER BY start_ts, id LIMIT 20",
    "SELECT id, opcode, duration_ns FROM {Instruction} ORDER BY duration_ns DESC, id LIMIT 10 OFFSET 5",
    "SELECT DISTINCT engine FROM {Instruction}",
    "SELECT COUNT(DISTINCT opcode), COUNT(DISTINCT bir_id), approx_count_distinct(id) > 0 FROM {Instruction}",
    "SELECT engine, quantile_cont(duration_ns, 0.5) AS p50, MAX(duration_ns) FROM {Instruction} GROUP BY 1 ORDER BY 1",
    "SELECT engine, STDDEV_POP(duration_ns), VAR_SAMP(duration_ns) FROM {Instruction} GROUP BY 1",
    # CASE
    "SELECT CASE WHEN duration_ns < 100 THEN 'short' WHEN duration_ns < 1000 THEN 'medium' ELSE 'long' END AS k, "
    "COUNT(*) FROM {Instruction} GROUP BY 1",
    "SELECT SUM(CASE WHEN opcode = 'MATMUL' THEN duration_ns ELSE 0 END) * 1.0 / SUM(duration_ns) FROM {Instruction}",
    # window functions
    "SELECT id, start_ts, start_ts - LAG(start_ts) OVER (PARTITION BY engine ORDER BY start_ts, id) AS gap "
    "FROM {Instruction} ORDER BY id LIMIT 200",
    "SELECT engine, opcode, n, RANK() OVER (PARTITION BY engine ORDER BY n DESC, opcode) AS r FROM "
    "(SELECT engine, opcode, COUNT(*) AS n FROM {Instruction} GROUP BY 1, 2)",
    "SELECT id, SUM(duration_ns) OVER (ORDER BY start_ts, id ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS s "
    "FROM {Instruction} ORDER BY start_ts, id LIMIT 300",
    "SELECT * FROM {Instruction} QUALIFY ROW_NUMBER() OVER (PARTITION BY opcode ORDER BY duration_ns DESC, id) = 1",
    # time-window filters
    "WITH b AS (SELECT MIN(start_ts) AS t0 FROM {Instruction}) SELECT COUNT(*), SUM(duration_ns) FROM {Instruction}, b "
    "WHERE start_ts >= t0 + 100000 AND start_ts < t0 + 1100000",
    "WITH b AS (SELECT MIN(start_ts) AS t0 FROM {Instruction}) SELECT i.* FROM {Instruction} i, b "
    "WHERE i.end_ts >= b.t0 + 500000 AND i.start_ts <= b.t0 + 600000 ORDER BY i.start_ts, i.id",
    "SELECT (start_ts - (SELECT MIN(start_ts) FROM {Instruction})) // 1000000 AS ms, COUNT(*) "
    "FROM {Instruction} GROUP BY 1 ORDER BY 1",
    # joins with Flow and HloInstruction
    "SELECT f.dependency_type, f.in_table, f.out_table, COUNT(*), SUM(f.gap_time) FROM {Flow} f GROUP BY ALL",
    "SELECT i.opcode, COUNT(*) AS edges FROM {Flow} f JOIN {Instruction} i ON f.out_id = i.id "
    "WHERE f.out_table = 'instruction' GROUP BY 1 ORDER BY 2 DESC, 1",
    "SELECT h.hlo_name, COUNT(*) AS n, SUM(i.duration_ns) AS ns FROM {Instruction} i "
    "JOIN {HloInstruction} h ON i.raw_hlo_id = h.raw_hlo_id GROUP BY 1 ORDER BY 3 DESC, 1",
    "SELECT h.id, h.hlo_name, h.start_ts, h.end_ts FROM {HloInstruction} h "
    "LEFT JOIN {Instruction} i ON i.raw_hlo_id = h.raw_hlo_id WHERE i.id IS NULL",
    "SELECT o.engine, o.opcode, o.instruction_count, x.n FROM {OpcodeSummary} o JOIN "
    "(SELECT engine, opcode, COUNT(*) AS n FROM {Instruction} GROUP BY 1, 2) x USING (engine, opcode)",
    # other tables, strings, NULLs
    "SELECT * FROM {Metadata}",
    "SELECT table_name, COUNT(*) FROM {SchemaFields} GROUP BY 1 ORDER BY 1",
    "SELECT * FROM {SemaphoreUpdate} ORDER BY ALL LIMIT 50",
    "SELECT opcode, upper(opcode), length(operands), operands LIKE '%[%' FROM {Instruction} ORDER BY id LIMIT 50",
    "SELECT COUNT(*) - COUNT(hlo_name), COUNT(*) FILTER (WHERE evt_wait_time_ns IS NULL) FROM {Instruction}",
    "SELECT * FROM {ActiveTime}",
]

SYSTEM = [
    "SELECT trace_event_source, COUNT(*), SUM(duration_ns) FROM {SystemProfileEvents} GROUP BY 1 ORDER BY 1",
    "SELECT name, COUNT(*) AS n, SUM(duration_ns) AS total_ns FROM {SystemProfileEvents} "
    "GROUP BY name ORDER BY total_ns DESC NULLS LAST, name LIMIT 25",
    # self time by name: duration less the direct children's on the same thread
    "WITH e AS (SELECT id, name, process_id, thread_id, start_ts, end_ts, duration_ns FROM {SystemProfileEvents} "
    "WHERE duration_ns IS NOT NULL), "
    "anc AS (SELECT c.id, COUNT(p.id) AS depth FROM e c LEFT JOIN e p ON p.process_id = c.process_id AND "
    "p.thread_id = c.thread_id AND p.start_ts <= c.start_ts AND p.end_ts >= c.end_ts AND p.id <> c.id GROUP BY c.id), "
    "d AS (SELECT e.*, anc.depth FROM e JOIN anc USING (id)), "
    "kids AS (SELECT p.id, SUM(c.duration_ns) AS child_ns FROM d p JOIN d c ON c.process_id = p.process_id AND "
    "c.thread_id = p.thread_id AND c.start_ts >= p.start_ts AND c.end_ts <= p.end_ts AND c.depth = p.depth + 1 "
    "GROUP BY p.id) "
    "SELECT name, COUNT(*) AS n, SUM(duration_ns - COALESCE(child_ns, 0)) AS self_ns FROM d LEFT JOIN kids USING (id) "
    "GROUP BY name ORDER BY self_ns DESC, name LIMIT 20",
    # kernels by stream
    "SELECT framework_stream_id, COUNT(*) AS kernels, SUM(duration_ns) AS ns FROM {SystemProfileEvents} "
    "WHERE json_extract_string(extra_attributes_json, '$.cat') = 'kernel' GROUP BY 1 ORDER BY 1",
    "SELECT process_id, thread_id, COUNT(*), MIN(start_ts), MAX(end_ts) FROM {SystemProfileEvents} GROUP BY ALL",
    "SELECT json_extract_string(extra_attributes_json, '$.cat') AS cat, COUNT(*) FROM {SystemProfileEvents} GROUP BY 1",
    "SELECT id, name, flow_id, len(flow_id) FROM {SystemProfileEvents} WHERE flow_id IS NOT NULL ORDER BY id LIMIT 100",
    "SELECT process_id, thread_id, list(DISTINCT framework_stream_id ORDER BY framework_stream_id) AS streams "
    "FROM {SystemProfileEvents} GROUP BY ALL",
    "SELECT * FROM {SystemProfileMetadata}",
]


@pytest.mark.parametrize("query", DEVICE)
@pytest.mark.parametrize("which", ["tiny-nd0-nc0", "split"])
def test_device_profile(data_path, which, query):
    _, profiles = data_path
    d = profiles[which]
    types, got = nx_answer(d, ours(query))
    compare(query, got, oracle(query, d), types)


@pytest.mark.parametrize("query", SYSTEM)
@pytest.mark.parametrize("which", ["tiny", "gpt2"])
def test_system_profile(data_path, which, query):
    _, profiles = data_path
    d = profiles[which]
    if which == "tiny" and "SystemProfileMetadata" in query and "SystemProfileMetadata" not in profile_files(d):
        pytest.skip("no SystemProfileMetadata")
    types, got = nx_answer(d, ours(query))
    compare(query, got, oracle(query, d), types)


def test_device_profile_of_data_path_by_name(data_path):
    """--profile NAME: that profile's tables unqualified."""
    dp, profiles = data_path
    q = "SELECT engine, COUNT(*) FROM {Instruction} GROUP BY 1 ORDER BY 1"
    types, got = nx_answer(dp, ours(q), "--profile", "tiny-nd0-nc1")
    compare(q, got, oracle(q, profiles["tiny-nd0-nc1"]), types)


QUALIFIED = [
    "SELECT COUNT(*), SUM(duration_ns) FROM {tiny-nd0-nc1.Instruction}",
    "SELECT a.opcode, COUNT(*) AS a_n FROM {tiny-nd0-nc0.Instruction} a GROUP BY 1 ORDER BY 1",
    "SELECT a.engine, a.opcode, a.instruction_count - b.instruction_count AS diff FROM {tiny-nd0-nc0.OpcodeSummary} a "
    "JOIN {tiny-nd0-nc1.OpcodeSummary} b USING (engine, opcode) ORDER BY 1, 2",
    "SELECT name, COUNT(*) FROM {gpt2.SystemProfileEvents} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
    "SELECT (SELECT COUNT(*) FROM {gpt2.SystemProfileEvents}) + (SELECT COUNT(*) FROM {tiny.SystemProfileEvents})",
]


@pytest.mark.parametrize("query", QUALIFIED)
def test_schema_qualified(data_path, query):
    dp, profiles = data_path
    types, got = nx_answer(dp, ours(query))
    compare(query, got, oracle(query, None, profiles), types)


def per_profile(profiles, table, query):
    """[(profile name,) + row] of query over table's files in every profile that has it."""
    out = []
    for name in sorted(profiles):
        if name == "split":
            continue
        files = profile_files(profiles[name]).get(table)
        if files:
            out += [(name,) + tuple(r) for r in duckdb.connect().execute(query.format(t=files_sql(files))).fetchall()]
    return out


@pytest.mark.parametrize("table,cols", [
    ("Instruction", "engine, COUNT(*), SUM(duration_ns)"),
    ("SystemProfileEvents", "trace_event_source, COUNT(*), SUM(duration_ns)"),
    ("SchemaFields", "COUNT(*), COUNT(DISTINCT table_name)"),
    ("Metadata", "COUNT(*)"),
])
def test_profile_name_union(data_path, table, cols):
    """Unqualified names over a data path: every profile's rows, with profile_name."""
    dp, profiles = data_path
    n_keys = 1 if cols.startswith(("engine", "trace_event_source")) else 0
    group = "GROUP BY " + ", ".join(str(i) for i in range(1, n_keys + 2))
    q = f"SELECT profile_name, {cols} FROM {table} {group}"
    types, got = nx_answer(dp, q)
    inner = f"SELECT {cols} FROM {{t}}" + (f" GROUP BY {', '.join(str(i) for i in range(1, n_keys + 1))}" if n_keys else "")
    compare(q, got, per_profile(profiles, table, inner), types)


def test_profile_name_in_where_and_join(data_path):
    dp, profiles = data_path
    q = ("SELECT a.opcode, a.n - b.n AS d FROM "
         "(SELECT opcode, COUNT(*) AS n FROM Instruction WHERE profile_name = 'tiny-nd0-nc0' GROUP BY 1) a JOIN "
         "(SELECT opcode, COUNT(*) AS n FROM Instruction WHERE profile_name = 'tiny-nd0-nc1' GROUP BY 1) b USING (opcode)")
    types, got = nx_answer(dp, q)
    want_q = ("SELECT a.opcode, a.n - b.n FROM (SELECT opcode, COUNT(*) AS n FROM {tiny-nd0-nc0.Instruction} GROUP BY 1) a "
              "JOIN (SELECT opcode, COUNT(*) AS n FROM {tiny-nd0-nc1.Instruction} GROUP BY 1) b USING (opcode)")
    compare(q, got, oracle(want_q, None, profiles), types)
