"""The export seam's formats and its one request, over both front ends
(src/query/engine/row_writer.h, src/query/export_request.h; docs/query.md "Export requests"):

  - `export-csv --format json` rows equal the table read with pyarrow, field by field, with
    integers beyond 2^53 as decimal strings (json_cell.h's rule) and the track first;
  - the server's /export/<Table>.json and /export/<Table>.csv give the CLI's bytes for the
    same window, sampled and complete;
  - the shared limits: width 100000 exported and 1048576 accepted (the query memory budget may refuse
    it, not the request) and 1048577 refused by both (the CLI's old
    limit; the server's was 10000) (CLI exit 2, HTTP 400),
    a max_rows above the old server cap of 10,000,000 accepted by both, width with
    sampled=0 refused by both, an ending other than .csv/.json is 404.
"""
import json
import subprocess

import pyarrow.parquet as pq
import pytest

from conftest import BIN, http_get, nx, serving


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats")
    nx("synth", "--out", root / "cap", "--preset", "tiny")
    nx("process", root / "cap", "--data-path", root / "dp", "--display-name", "p")
    return root


def device(data):
    return data / "dp" / "profiles" / "global" / "p-nd0-nc0@latest"


def span(profile):
    m = pq.read_table(profile / "Metadata.parquet").to_pylist()
    return min(r["first_hw_timestamp"] for r in m), max(r["last_hw_timestamp"] for r in m)


def cli(profile, out, *args):
    return subprocess.run([str(BIN), "export-csv", str(profile), "--out", str(out), *map(str, args)],
                          capture_output=True, text=True)


def test_json_rows_equal_pyarrow(data, tmp_path):
    prof = device(data)
    s0, s1 = span(prof)
    r = cli(prof, tmp_path, "--start", s0, "--end", s1, "--no-sample", "--tables", "Instruction,DmaPacket",
            "--format", "json")
    assert r.returncode == 0, r.stderr
    for table in ("Instruction", "DmaPacket"):
        got = json.loads((tmp_path / f"{table}.json").read_text())
        want = [x for x in pq.read_table(prof / f"{table}.parquet").to_pylist()
                if x["end_ts"] >= s0 and x["start_ts"] <= s1]
        assert len(got) == len(want) > 0
        for g, w in zip(got, want):
            assert list(g)[0] == "track"
            for k, v in w.items():
                if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53:
                    v = str(v)
                if isinstance(v, float):
                    assert g[k] == pytest.approx(v, rel=1e-7), k
                else:
                    assert g[k] == v, (table, k)


def test_server_equals_cli(data, tmp_path):
    prof = device(data)
    s0, s1 = span(prof)
    with serving(data / "dp") as (port, _):
        for fmt, ext in (("csv", "csv"), ("json", "json")):
            for sampled in (["--width", "40"], ["--no-sample"]):
                out = tmp_path / f"{fmt}{len(sampled)}"
                r = cli(prof, out, "--start", s0, "--end", s1, "--tables", "Instruction", "--format", fmt, *sampled)
                assert r.returncode == 0, r.stderr
                q = f"start={s0}&end={s1}" + ("&width=40" if len(sampled) == 2 else "&sampled=0")
                status, body = http_get(port, f"/api/profiles/p-nd0-nc0/export/Instruction.{ext}?{q}")
                assert status == 200
                assert body == (out / f"Instruction.{ext}").read_bytes(), (fmt, sampled)


def test_shared_limits(data, tmp_path):
    prof = device(data)
    s0, s1 = span(prof)
    assert cli(prof, tmp_path / "a", "--start", s0, "--end", s1, "--width", 100000).returncode == 0
    r = cli(prof, tmp_path / "a", "--start", s0, "--end", s1, "--width", 1048576)
    assert r.returncode in (0, 1) and "bad --width" not in r.stderr   # within the limit; the budget may refuse
    assert cli(prof, tmp_path / "b", "--start", s0, "--end", s1, "--width", 1048577).returncode == 2
    assert cli(prof, tmp_path / "c", "--start", s0, "--end", s1, "--max-rows", 20000000).returncode == 0
    base = f"/api/profiles/p-nd0-nc0/export/Instruction"
    w = f"start={s0}&end={s1}"
    with serving(data / "dp") as (port, _):
        assert http_get(port, f"{base}.csv?{w}&width=100000")[0] == 200
        assert http_get(port, f"{base}.csv?{w}&width=1048576")[0] != 400
        assert http_get(port, f"{base}.csv?{w}&width=1048577")[0] == 400
        assert http_get(port, f"{base}.csv?{w}&sampled=0&max_rows=20000000")[0] == 200
        assert http_get(port, f"{base}.csv?{w}&sampled=0&width=5")[0] == 400
        assert http_get(port, f"{base}.csv?start={s1}&end={s0}")[0] == 400
        assert http_get(port, f"{base}.xml?{w}")[0] == 404
        assert http_get(port, f"{base}.pftrace?{w}")[0] == 404
