"""The query API's SQL (databaseExplorerQuery, docs/api.md "Reference-compatible query
API"): answers equal DuckDB's on the same Parquet files, every form that is not one
read-only SELECT refused with 400 and a message (DDL, DML, ATTACH, PRAGMA, SET,
INSTALL/LOAD, COPY, EXPORT, transactions, functions that read files, several
statements) with nothing changed on disk, the row limit (--query-max-rows) stated in
the answer, the time limit (--query-timeout) a 408 after which the server still
answers, a damaged profile a 500 naming the file, and the status codes of the query
type. The rest of the endpoint is
test_query_api.py.
"""
import hashlib
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from conftest import nx, query_api_search as search, serving_api as server


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    """A data path with system profile "run" and device profiles run-nd0-nc0/-nc1, their
    tables split every 4000 rows (so a relation spans several files)."""
    work = tmp_path_factory.mktemp("query-api-sql")
    cap = work / "cap"
    nx("synth", "--out", cap, "--preset", "llama-layer", "--events", "20000", "--seed", "5")
    dp = work / "dp"
    nx("process", cap, "--data-path", dp, "--display-name", "run", "--max-rows-per-file", "4000")
    return dp


@pytest.fixture(scope="module")
def api(data_path):
    with server(data_path, "--disable-ui") as (ports, _):
        yield ports["api"]


def device_dir(data_path, name="run-nd0-nc0"):
    return data_path / "profiles" / "global" / f"{name}@latest"


def query(port, sql, name="run-nd0-nc0"):
    return search(port, name, {"type": "databaseExplorerQuery", "tableName": "Instruction", "query": sql})


def duck(directory, sql):
    """sql on DuckDB with each table of the profile directory a view over its files."""
    con = duckdb.connect()
    tables = {f.split("_")[0].removesuffix(".parquet") for f in os.listdir(directory) if f.endswith(".parquet")}
    for t in tables:
        con.execute(f"CREATE VIEW \"{t}\" AS SELECT * FROM read_parquet('{directory}/{t}[._]*parquet')")
    return [list(r) for r in con.execute(sql).fetchall()]


def plain(rows):
    """The API's rows with integers beyond 2^53 (sent as strings) back as integers."""
    return [[int(v) if isinstance(v, str) and v.lstrip("-").isdigit() else v for v in r] for r in rows]


QUERIES = [
    "SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns FROM Instruction "
    "GROUP BY engine, opcode ORDER BY total_dur_ns DESC, engine, opcode",
    "SELECT COUNT(*), MIN(start_ts), MAX(end_ts) FROM Instruction",
    "SELECT engine, COUNT(*) FROM Instruction WHERE duration_ns > 100 GROUP BY engine ORDER BY engine",
    "WITH t AS (SELECT opcode, duration_ns FROM Instruction) SELECT opcode, MAX(duration_ns) FROM t "
    "GROUP BY opcode ORDER BY opcode LIMIT 5",
    "SELECT CASE WHEN duration_ns > 1000 THEN 'long' ELSE 'short' END AS k, COUNT(*) FROM Instruction "
    "GROUP BY k ORDER BY k",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_answers_equal_duckdb(api, data_path, sql):
    status, got = query(api, sql)
    assert status == 200, got
    want = duck(device_dir(data_path), sql)
    assert plain(got["rows"]) == want
    assert got["row_count"] == len(want) and got["truncated"] is False
    assert len(got["columns"]) == len(got["types"]) == (len(want[0]) if want else len(got["columns"]))


def test_system_profile_relations(api, data_path):
    sql = "SELECT name, COUNT(*) AS n FROM SystemProfileEvents GROUP BY name ORDER BY n DESC, name LIMIT 10"
    status, got = query(api, sql, name="run")
    assert status == 200, got
    assert plain(got["rows"]) == duck(data_path / "profiles" / "global" / "run@latest", sql)


REFUSED = [
    "CREATE TABLE x AS SELECT 1",
    "CREATE VIEW v AS SELECT * FROM Instruction",
    "DROP TABLE Instruction",
    "ALTER TABLE Instruction RENAME TO y",
    "INSERT INTO Instruction SELECT * FROM Instruction",
    "UPDATE Instruction SET duration_ns = 0",
    "DELETE FROM Instruction",
    "ATTACH '/tmp/x.db' AS x",
    "DETACH x",
    "PRAGMA writable_schema = 1",
    "PRAGMA threads = 1",
    "PRAGMA enable_external_access",
    "SET threads = 1",
    "INSTALL httpfs",
    "LOAD httpfs",
    "COPY Instruction TO '/tmp/out.csv'",
    "COPY (SELECT 1) TO '/tmp/out.parquet'",
    "EXPORT DATABASE '/tmp/exported'",
    "BEGIN TRANSACTION",
    "VACUUM",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_parquet('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_json('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT readfile('/etc/passwd')",
    "SELECT load_extension('/tmp/x.so')",
    "SELECT 1; SELECT 2",
    "SELECT 1; DROP TABLE Instruction",
    "",
]


def fingerprint(directory):
    h = hashlib.sha256()
    for f in sorted(os.listdir(directory)):
        st = os.stat(directory / f)
        h.update(f"{f}/{st.st_size}/{st.st_mtime_ns}".encode())
    return h.hexdigest()


def test_refused_forms(api, data_path):
    before = fingerprint(device_dir(data_path))
    answered = {sql: query(api, sql) for sql in REFUSED}
    wrong = {sql: got for sql, (status, got) in answered.items()
             if status != 400 or not isinstance(got.get("error"), str) or not got["error"]}
    assert not wrong, wrong
    for sql, (_, got) in answered.items():
        assert "root:" not in json.dumps(got), sql
    assert fingerprint(device_dir(data_path)) == before
    for path in ["/tmp/out.csv", "/tmp/out.parquet", "/tmp/exported"]:
        assert not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(device_dir(data_path)), path
    # Still answering, and the tables are intact.
    status, got = query(api, "SELECT COUNT(*) FROM Instruction")
    assert status == 200 and plain(got["rows"]) == duck(device_dir(data_path), "SELECT COUNT(*) FROM Instruction")


def test_failed_queries_are_400(api):
    for sql in ["SELEC 1", "SELECT * FROM NoSuchTable", "SELECT no_such_column FROM Instruction"]:
        status, got = query(api, sql)
        assert status == 400 and got["error"], (sql, got)
    status, got = search(api, "run-nd0-nc0", {"type": "databaseExplorerQuery", "tableName": "Instruction"})
    assert status == 400 and "query" in got["error"]
    status, got = search(api, "run-nd0-nc0", {"type": "databaseExplorerQuery", "query": 5})
    assert status == 400
    status, got = query(api, "SELECT 1\u0000; DROP TABLE Instruction")
    assert status == 400 and "NUL" in got["error"]
    status, got = query(api, "SELECT 1", name="nope")
    assert status == 404


def test_row_limit_is_stated(data_path):
    with server(data_path, "--disable-ui", "--query-max-rows", "7") as (ports, _):
        status, got = query(ports["api"], "SELECT start_ts, opcode FROM Instruction ORDER BY start_ts, opcode")
        assert status == 200, got
        assert len(got["rows"]) == 7 and got["truncated"] is True and got["row_limit"] == 7
        want = duck(device_dir(data_path), "SELECT start_ts, opcode FROM Instruction ORDER BY start_ts, opcode LIMIT 7")
        assert plain(got["rows"]) == want
        status, got = query(ports["api"], "SELECT engine FROM Instruction GROUP BY engine ORDER BY engine LIMIT 3")
        assert status == 200 and got["truncated"] is False and len(got["rows"]) <= 3


def test_time_limit_is_408(data_path):
    slow = ("SELECT COUNT(*) FROM Instruction a, Instruction b, Instruction c "
            "WHERE a.duration_ns + b.duration_ns + c.duration_ns = -1")
    with server(data_path, "--disable-ui", "--query-timeout", "0.3") as (ports, _):
        status, got = query(ports["api"], slow)
        assert status == 408, got
        assert isinstance(got["error"], str) and got["error"]
        # The server, and the same engine, answer the next question.
        status, got = query(ports["api"], "SELECT COUNT(*) FROM Summary")
        assert status == 200, got


def test_damaged_profile_is_500(data_path, tmp_path):
    """A profile whose Instruction file is cut short: the engine cannot open it -> 500
    naming the file, relative (no absolute path in the answer)."""
    dp = tmp_path / "dp"
    broken = dp / "profiles" / "global" / "broken@latest"
    shutil.copytree(device_dir(data_path).resolve(), broken)
    victim = sorted(broken.glob("Instruction*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:1000])
    with server(dp, "--disable-ui") as (ports, _):
        status, got = query(ports["api"], "SELECT COUNT(*) FROM Summary", name="broken")
        assert status == 500, got
        assert victim.name in got["error"] and str(tmp_path) not in got["error"], got
        # The listing still answers, the damaged table with its error.
        status, got = search(ports["api"], "broken", {"type": "listDbFiles"})
        assert status == 200
        ins = next(t for t in got["tables"] if t["name"] == "Instruction")
        assert victim.name in ins["error"] and ins["files"] == []


def test_concurrent_queries_share_engines(api, data_path):
    """Queries from 8 clients at once, on one profile's kept engine and on another's,
    each answered as DuckDB answers it."""
    jobs = [(QUERIES[i % len(QUERIES)], "run-nd0-nc0" if i % 3 else "run-nd0-nc1") for i in range(48)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda job: query(api, job[0], name=job[1]), jobs))
    want = {}
    for (sql, name), (status, got) in zip(jobs, answers):
        assert status == 200, got
        if (sql, name) not in want:
            want[sql, name] = duck(device_dir(data_path, name), sql)
        assert plain(got["rows"]) == want[sql, name], (sql, name)
