"""The reference-compatible query API without SQL (docs/api.md "Reference-compatible
API"): GET /api/v1/health, POST /api/v1/db/<name>/_search with "tableSchema" (checked
against the reference schema TSV of tests/data/reference, not the catalogue) and
"listDbFiles" (checked against the directory as os and pyarrow see it), every status
code of the endpoint and of the request-body rules, the second listener (--api-port:
the API without pages, the same guards) and --disable-ui (no pages, no UI port), and
the options' usage errors. The SQL half is test_query_api_sql.py.
"""
import http.client
import json
import os
import re
import socket
import subprocess

import pyarrow.parquet as pq
import pytest

from conftest import (BIN, HANG_GUARD_S, REFERENCE, free_port, http_request as request, nx, profile_files,
                      query_api_search as search, serving_api as server)


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    """A data path with system profile "run" and device profiles run-nd0-nc0 and
    run-nd0-nc1 side by side, their tables split every 4000 rows."""
    work = tmp_path_factory.mktemp("query-api")
    cap = work / "cap"
    nx("synth", "--out", cap, "--preset", "llama-layer", "--events", "20000", "--seed", "3")
    dp = work / "dp"
    nx("process", cap, "--data-path", dp, "--display-name", "run", "--max-rows-per-file", "4000")
    return dp


@pytest.fixture(scope="module")
def ports(data_path):
    with server(data_path) as (p, _):
        yield p


def test_health_on_both_ports(ports):
    for port in (ports["ui"], ports["api"]):
        status, headers, body = request(port, "GET", "/api/v1/health")
        assert status == 200 and json.loads(body) == {"status": "healthy"}
        assert headers["content-type"] == "application/json; charset=utf-8"


def test_table_schema_is_the_reference_schema(ports):
    for table in ["Instruction", "Summary", "SystemProfileEvents", "DmaPacket", "Metadata"]:
        for port in (ports["ui"], ports["api"]):
            status, got = search(port, "run-nd0-nc0", {"type": "tableSchema", "tableName": table})
            assert status == 200, got
            assert got["tableName"] == table
            want = REFERENCE[table]
            assert [f["name"] for f in got["fields"]] == [f["field"] for f in want]
            for g, w in zip(got["fields"], want):
                assert (g["type"], g["format"], g["unit"]) == (w["type"], w["format"], w["unit"]), (table, g, w)
                assert g["required"] is (w["required"] == "Yes"), (table, g)
                assert isinstance(g["description"], str) and g["description"], (table, g)


def test_list_db_files_is_the_directory(ports, data_path):
    root = data_path / "profiles" / "global"
    for name in ["run", "run-nd0-nc0", "run-nd0-nc1"]:
        status, got = search(ports["api"], name, {"type": "listDbFiles"})
        assert status == 200, got
        directory = root / f"{name}@latest"
        want = profile_files(directory)
        assert [t["name"] for t in got["tables"]] == sorted(want)
        for t in got["tables"]:
            files = want[t["name"]]
            assert [f["name"] for f in t["files"]] == [p.name for p in files]
            for f, p in zip(t["files"], files):
                assert f["size"] == os.stat(p).st_size
                assert f["rows"] == pq.ParquetFile(p).metadata.num_rows
            assert t["rows"] == sum(f["rows"] for f in t["files"])
            assert t["size"] == sum(f["size"] for f in t["files"])
            assert "error" not in t
    # The split table really is split here, and listed as one table.
    status, got = search(ports["api"], "run-nd0-nc0", {"type": "listDbFiles"})
    ins = next(t for t in got["tables"] if t["name"] == "Instruction")
    assert len(ins["files"]) > 1 and ins["files"][0]["name"] == "Instruction_0.parquet"


def test_status_codes(ports):
    port = ports["api"]
    cases = [
        (404, "nope", {"type": "listDbFiles"}),
        (400, "..", {"type": "listDbFiles"}),  # an invalid name, as everywhere in the API
        (400, "run", {"type": "nonsense"}),
        (400, "run", {"tableName": "Instruction"}),
        (400, "run", {"type": 5}),
        (400, "run", [1, 2]),
        (400, "run", b"not json"),
        (400, "run", b""),
        (400, "run", {"type": "tableSchema"}),
        (404, "run", {"type": "tableSchema", "tableName": "NoSuchTable"}),
    ]
    for want, name, body in cases:
        status, got = search(port, name, body)
        assert status == want, (name, body, got)
        assert isinstance(got["error"], str) and got["error"], got
    # Methods: the path takes POST only; others get 405 with Allow.
    for method in ["GET", "PUT", "DELETE"]:
        status, headers, body = request(port, method, "/api/v1/db/run/_search",
                                        b"{}" if method == "PUT" else None)
        assert status == 405 and headers["allow"] == "POST", (method, body)
    status, headers, _ = request(port, "POST", "/api/v1/health", {})
    assert status == 405 and headers["allow"] == "GET, HEAD"


def test_body_rules(ports):
    port = ports["api"]
    path = "/api/v1/db/run/_search"
    # Not JSON, another site's page, another host: refused before the body is read.
    for ctype in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]:
        status, _, body = request(port, "POST", path, b'{"type":"listDbFiles"}', {"Content-Type": ctype})
        assert status == 415, body
    status, _, body = request(port, "POST", path, {"type": "listDbFiles"}, {"Origin": "http://attacker.example"})
    assert status == 403, body
    status, _, body = request(port, "POST", path, {"type": "listDbFiles"}, {"Origin": "null"})
    assert status == 403, body
    status, _, body = request(port, "POST", path, {"type": "listDbFiles"}, {"Host": f"attacker.example:{port}"})
    assert status == 421, body
    status, _, body = request(port, "POST", path, {"type": "listDbFiles"}, {"Origin": f"http://127.0.0.1:{port}"})
    assert status == 200, body
    # 1 MiB is the most: a body of exactly that much is read (and answered), one byte more is not.
    pad = b'{"type":"listDbFiles","pad":"' + b"x" * (1 << 20) + b'"}'
    exact = pad[: len(pad) - (len(pad) - (1 << 20)) - 2] + b'"}'
    assert len(exact) == 1 << 20
    status, _, body = request(port, "POST", path, exact)
    assert status == 200, body[:200]
    # One byte more, or 10 GiB: judged on the header alone, answered before the body is
    # sent (a client sending it anyway would find the connection closed).
    for length in [(1 << 20) + 1, 10 << 30]:
        with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as s:
            s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {length}\r\n\r\n".encode())
            answer = b""
            while b"}" not in answer:
                chunk = s.recv(4096)
                assert chunk, answer
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 413 ") and b"1 MiB" in answer, answer
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n".encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 411 ")
    # Expect: 100-continue: the go-ahead comes only for an admitted body.
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as s:
        body = b'{"type":"listDbFiles"}'
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                  f"Expect: 100-continue\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 100 Continue")
        s.sendall(body)
        assert s.recv(4096).startswith(b"HTTP/1.1 200 ")
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                  f"Expect: 100-continue\r\nContent-Length: {(1 << 20) + 1}\r\n\r\n".encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 413 ")
    # A body on a GET.
    status, _, _ = request(port, "GET", "/api/v1/health", b"hello", {"Content-Type": "text/plain"})
    assert status == 413


def test_keep_alive_across_posts(ports):
    c = http.client.HTTPConnection("127.0.0.1", ports["api"], timeout=HANG_GUARD_S)
    socks = set()
    for table in ["Instruction", "Summary", "Metadata"]:
        c.request("POST", "/api/v1/db/run-nd0-nc0/_search",
                  body=json.dumps({"type": "tableSchema", "tableName": table}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        assert r.status == 200 and json.loads(r.read())["tableName"] == table
        socks.add(id(c.sock))
    c.close()
    assert len(socks) == 1


def test_api_port_serves_no_pages(ports):
    for path in ["/", "/index.html", "/profile/run"]:
        status, _, body = request(ports["api"], "GET", path)
        assert status == 404 and "API only" in json.loads(body)["error"], path
        status, _, _ = request(ports["ui"], "GET", path)
        assert status == 200, path
    # The rest of the API is there too, with its own rules.
    status, _, body = request(ports["api"], "GET", "/api/profiles")
    assert status == 200 and {p["name"] for p in json.loads(body)["profiles"]} >= {"run", "run-nd0-nc0"}
    status, _, _ = request(ports["api"], "GET", "/api/health", headers={"Origin": f"http://127.0.0.1:{ports['ui']}"})
    assert status == 403  # the UI port's pages are another origin for the API port


def test_disable_ui(data_path):
    with server(data_path, "--disable-ui") as (p, _):
        assert p["ui"] is None
        status, _, body = request(p["api"], "GET", "/api/v1/health")
        assert status == 200 and json.loads(body) == {"status": "healthy"}
        for path in ["/", "/index.html", "/static/js/app.js", "/profile/run"]:
            status, _, _ = request(p["api"], "GET", path)
            assert status == 404, path
        status, got = search(p["api"], "run", {"type": "listDbFiles"})
        assert status == 200 and got["tables"]


def test_disable_ui_opens_no_ui_port(data_path):
    ui = free_port()
    with server(data_path, "--disable-ui", "--port", str(ui)) as (p, _):
        assert p["api"] != ui
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", ui), timeout=HANG_GUARD_S).close()


def test_same_port_is_one_listener(data_path):
    port = free_port()
    p = subprocess.Popen([str(BIN), "serve", "--data-path", str(data_path), "--port", str(port), "--api-port",
                          str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == f"nxprof: serving {data_path} at http://127.0.0.1:{port}/\n"
        status, _, body = request(port, "GET", "/api/v1/health")
        assert status == 200
        status, _, _ = request(port, "GET", "/")
        assert status == 200
    finally:
        p.terminate()
        assert p.wait(timeout=10) == 0


def test_default_api_port_taken_is_a_warning(data_path):
    """Without --api-port the API port is 3002; when that is taken (held here, or by
    anything else on the machine) the UI port serves the query API alone."""
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 3002))
        holder.listen()
        held = True
    except OSError:
        held = False  # someone else holds it: the same case for the server
    try:
        p = subprocess.Popen([str(BIN), "serve", "--data-path", str(data_path), "--port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            m = re.match(r"nxprof: serving .* at http://127\.0\.0\.1:(\d+)/$", p.stdout.readline())
            assert m
            port = int(m[1])
            status, _, body = request(port, "GET", "/api/v1/health")
            assert status == 200 and json.loads(body) == {"status": "healthy"}
        finally:
            p.terminate()
            out, err = p.communicate(timeout=10)
        if not held and "query API at" in out:
            pytest.skip("port 3002 was freed by its holder meanwhile")
        assert "query API at" not in out, out
        assert f"port 3002 is taken: the query API (/api/v1) is served on port {port} only" in err, err
        assert p.returncode == 0
    finally:
        holder.close()


def test_api_port_taken_is_an_error_when_given(data_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([str(BIN), "serve", "--data-path", str(data_path), "--port", "0", "--api-port", str(port)],
                           capture_output=True, text=True, timeout=HANG_GUARD_S)
        assert r.returncode == 1 and f"port {port} for the query API" in r.stderr, r.stderr
        r = subprocess.run([str(BIN), "serve", "--data-path", str(data_path), "--disable-ui", "--api-port",
                            str(port)], capture_output=True, text=True, timeout=HANG_GUARD_S)
        assert r.returncode == 1 and f"port {port} for the query API" in r.stderr, r.stderr


def test_option_usage_errors(data_path, tmp_path):
    for cmd in ["serve", "view"]:
        for opts in [["--api-port", "65536"], ["--api-port", "x"], ["--query-timeout", "0"],
                     ["--query-timeout", "-1"], ["--query-timeout", "abc"], ["--query-timeout", "nan"],
                     ["--query-timeout", "86401"], ["--query-max-rows", "0"], ["--query-max-rows", "1e3"],
                     ["--query-max-rows", "1000000001"]]:
            extra = ["-d", str(tmp_path)] if cmd == "view" else ["--data-path", str(data_path)]
            r = nx(cmd, *extra, *opts, check=False)
            assert r.returncode == 2 and opts[0] in r.stderr, (cmd, opts, r.stderr)
    r = nx("view", "-d", str(tmp_path), "--ingest-only", "--disable-ui", check=False)
    assert r.returncode == 2 and "--ingest-only" in r.stderr
    for cmd in ["serve", "view"]:
        out = nx(cmd, "--help").stdout
        for opt in ["--api-port P", "--disable-ui", "--query-timeout S", "--query-max-rows N"]:
            assert opt in out, (cmd, opt)
