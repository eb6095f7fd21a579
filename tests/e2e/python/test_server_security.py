"""`nxprof serve`'s security and HTTP hygiene (docs/api.md "Security" and "Conventions"),
over raw sockets on 127.0.0.1, so every header and byte sent is the test's own:
  - Host: a foreign name (DNS rebinding) -> 421; localhost, the bound address (with or
    without the port) and an --allow-host name -> 200; none (HTTP/1.0) -> 200;
  - Origin: any but the server's own (http, an allowed host, its port) -> 403, GETs too;
  - a POST without Content-Type: application/json -> 415, with it -> 405 (no POST
    endpoint yet), a cross-origin POST -> 403;
  - a raw NUL, %00 or a malformed percent escape in the path or the query -> 400, and a
    parameter given twice -> 400 naming it;
  - keep-alive: two pipelined GETs on one connection get two answers, in order;
  - every response (200 JSON, CSV and web asset, 400, 403, 404, 405, 415, 421) carries
    the security headers;
  - no answer, success or error, names the absolute data path, with a damaged table and a
    deleted device profile too;
  - a table rewritten in place (same inode) is answered as it is now by /timeline,
    /tracks, /summary and /export, although the first answers were cached.
"""
import json
import os
import shutil
import socket

import pyarrow.parquet as pq
import pytest

from conftest import nx, serving

ALLOWED = "viewer.example"
SECURITY_HEADERS = {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
DEVICE = "tiny-nd0-nc0"


def make_data(root):
    """A tiny capture (system data and one NeuronCore) processed into root/data: its path."""
    data = root / "data"
    nx("synth", "--preset", "tiny", "--cores", "1", "--seed", "3", "--out", str(root / "cap"))
    nx("process", str(root / "cap"), "--data-path", str(data), "--display-name", "tiny")
    return data


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The tiny profiles served with --allow-host viewer.example: (port, data path)."""
    data = make_data(tmp_path_factory.mktemp("sec"))
    with serving(data, "--allow-host", ALLOWED) as (port, _):
        yield port, data


def read_response(f):
    """One HTTP/1.1 response from the file f: (status, {lower-case name: value}, body)."""
    status_line = f.readline()
    assert status_line.startswith(b"HTTP/1."), status_line
    status = int(status_line.split()[1])
    headers = {}
    while (line := f.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = f.read(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        body = b""
        while (size := int(f.readline().split(b";")[0], 16)) > 0:
            body += f.read(size)
            f.readline()
        f.readline()
    else:
        body = f.read()
    return status, headers, body


def exchange(port, raw, answers=1):
    """Sends raw bytes on one connection and reads `answers` responses."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(raw)
        f = s.makefile("rb")
        return [read_response(f) for _ in range(answers)]


def request(port, target, method="GET", host=None, headers=(), version="HTTP/1.1"):
    """One request: (status, headers, body). host None: 127.0.0.1:port; "" sends none."""
    lines = [f"{method} ".encode() + (target if isinstance(target, bytes) else target.encode()) +
             f" {version}".encode()]
    host = f"127.0.0.1:{port}" if host is None else host
    if host:
        lines.append(f"Host: {host}".encode())
    lines += [h.encode() for h in headers]
    lines.append(b"Connection: close")
    return exchange(port, b"\r\n".join(lines) + b"\r\n\r\n")[0]


def error_of(body):
    doc = json.loads(body)
    assert isinstance(doc["error"], str), doc
    return doc["error"]


def test_foreign_host_is_misdirected(server):
    port, _ = server
    for host in ["attacker.example", f"attacker.example:{port}", f"127.0.0.1:{port + 1}", f"localhost:{port + 1}",
                 f"{ALLOWED}.attacker.example:{port}", "[::2]", "127.0.0.1:", f"127.0.0.1:{port}x"]:
        status, _, body = request(port, "/api/profiles", host=host)
        assert status == 421, (host, status, body)
        error_of(body)


def test_allowed_host_forms_are_answered(server):
    port, _ = server
    for host in [f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST", f"{ALLOWED}:{port}",
                 ALLOWED.upper()]:
        status, _, body = request(port, "/api/profiles", host=host)
        assert status == 200, (host, status, body)
        assert "profiles" in json.loads(body)
    status, _, body = request(port, "/api/profiles", host="", version="HTTP/1.0")
    assert status == 200, body


def test_allow_host_is_checked_and_absent_by_default(tmp_path):
    r = nx("serve", "--allow-host", "evil.example:80", check=False)
    assert r.returncode == 2 and "--allow-host" in r.stderr, r.stderr
    (tmp_path / "profiles" / "global").mkdir(parents=True)
    with serving(tmp_path) as (port, _):
        status, _, _ = request(port, "/api/profiles", host=f"{ALLOWED}:{port}")
        assert status == 421


def test_foreign_origin_is_forbidden(server):
    port, _ = server
    for origin in ["http://attacker.example", f"http://attacker.example:{port}", f"https://127.0.0.1:{port}",
                   f"http://127.0.0.1:{port + 1}", "http://127.0.0.1", "null", f"http://127.0.0.1:{port}/x"]:
        status, _, body = request(port, "/api/profiles", headers=[f"Origin: {origin}"])
        assert status == 403, (origin, status, body)
        error_of(body)
    for origin in [f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://{ALLOWED}:{port}"]:
        status, _, body = request(port, "/api/profiles", headers=[f"Origin: {origin}"])
        assert status == 200, (origin, status, body)


def test_post_needs_json_and_same_origin(server):
    port, _ = server
    status, _, body = request(port, "/api/profiles", method="POST", headers=["Content-Length: 0"])
    assert status == 415, body
    status, _, body = request(port, "/api/profiles", method="POST",
                              headers=["Content-Type: text/plain", "Content-Length: 0"])
    assert status == 415, body
    status, headers, body = request(port, "/api/profiles", method="POST",
                                    headers=["Content-Type: application/json; charset=utf-8", "Content-Length: 0"])
    assert status == 405 and headers["allow"] == "GET, HEAD", body
    status, _, body = request(port, "/api/profiles", method="POST",
                              headers=["Content-Type: application/json", "Origin: http://attacker.example",
                                       "Content-Length: 0"])
    assert status == 403, body


def test_nul_and_bad_percent_encoding_are_bad_requests(server):
    port, _ = server
    for target in [f"/api/profiles/{DEVICE}\0x/tracks".encode(), f"/api/profiles/{DEVICE}%00x/tracks",
                   f"/api/profiles/{DEVICE}%zz/tracks", f"/api/profiles/{DEVICE}/tracks%4",
                   f"/api/profiles/{DEVICE}/event?table=Instruction&ordinal=0%00",
                   f"/api/profiles/{DEVICE}/event?table=Instruction&ordinal=0&x=%g1",
                   f"/api/profiles/{DEVICE}/event?table=Instruction%&ordinal=0", b"/index.html\0.js"]:
        status, _, body = request(port, target)
        assert status == 400, (target, status, body)
        error_of(body)
    status, _, _ = request(port, f"/api/profiles/{DEVICE}%2Dx/tracks")   # well formed: no such profile
    assert status == 404


def test_repeated_parameter_is_named(server):
    port, _ = server
    window = "tables=Instruction&start=0&end=9&width=5"
    for dup, name in [("start=1", "start"), ("START=1", "START"), ("tables=Instruction", "tables")]:
        status, _, body = request(port, f"/api/profiles/{DEVICE}/timeline?{window}&{dup}")
        assert status == 400, (dup, body)
        assert f"'{name}'" in error_of(body), body
    status, _, body = request(port, f"/api/profiles/{DEVICE}/timeline?{window}")
    assert status == 200, body


def test_pipelined_requests_are_answered_in_order(server):
    port, _ = server
    host = f"Host: 127.0.0.1:{port}\r\n"
    raw = (f"GET /api/health HTTP/1.1\r\n{host}\r\n"
           f"GET /api/profiles/{DEVICE} HTTP/1.1\r\n{host}\r\n"
           f"GET /api/nope HTTP/1.1\r\n{host}Connection: close\r\n\r\n").encode()
    (s1, h1, b1), (s2, h2, b2), (s3, _, b3) = exchange(port, raw, answers=3)
    assert s1 == 200 and json.loads(b1)["ok"] is True
    assert s2 == 200 and json.loads(b2)["name"] == DEVICE
    assert s3 == 404, b3
    assert h1.get("connection", "").lower() != "close" and h2.get("connection", "").lower() != "close"


def test_every_response_carries_the_security_headers(server):
    port, _ = server
    cases = [
        (200, "GET", f"/api/profiles/{DEVICE}/tracks", [], None),
        (200, "GET", "/", [], None),                           # the viewer's page (an asset)
        (200, "HEAD", "/api/health", [], None),
        (200, "GET", f"/api/profiles/{DEVICE}/export/Instruction.csv?start=0&end=9", [], None),
        (400, "GET", f"/api/profiles/{DEVICE}/timeline?start=x", [], None),
        (403, "GET", "/api/health", ["Origin: http://attacker.example"], None),
        (404, "GET", "/nope.js", [], None),
        (404, "GET", "/api/profiles/nope", [], None),
        (405, "DELETE", "/api/health", [], None),
        (415, "POST", "/api/health", ["Content-Length: 0"], None),
        (421, "GET", "/api/health", [], "attacker.example"),
    ]
    for want, method, target, headers, host in cases:
        status, got, _ = request(port, target, method=method, headers=headers, host=host)
        assert status == want, (method, target, status)
        for name, value in SECURITY_HEADERS.items():
            assert got.get(name) == value, (method, target, name, got)
        assert "frame-ancestors 'none'" in got.get("content-security-policy", ""), (target, got)


def window_of(port, name):
    """The whole time span of a profile's tracks: the query's start and end."""
    status, _, body = request(port, f"/api/profiles/{name}/tracks")
    assert status == 200, body
    t = json.loads(body)
    return f"start={t['first_ts']}&end={t['last_ts']}"


def test_no_answer_shows_the_absolute_data_path(tmp_path):
    data = make_data(tmp_path)
    secrets = {str(data.resolve()), str(data.absolute()), str(tmp_path.resolve())}
    answers = []

    def scan(port, targets):
        for t in targets:
            status, headers, body = request(port, t)
            answers.append((t, status))
            text = body.decode("utf-8", "replace") + json.dumps(headers)
            for secret in secrets:
                assert secret not in text, (t, status, text[:500])

    with serving(data) as (port, _):
        w = window_of(port, DEVICE)
        sys_w = window_of(port, "tiny")
        device_targets = [
            f"/api/profiles/{DEVICE}", f"/api/profiles/{DEVICE}/tracks", f"/api/profiles/{DEVICE}/summary",
            f"/api/profiles/{DEVICE}/timeline?tables=Instruction,DmaPacket&{w}&width=100",
            f"/api/profiles/{DEVICE}/event?table=Instruction&ordinal=0",
            f"/api/profiles/{DEVICE}/event?table=Instruction&ordinal=99999999",
            f"/api/profiles/{DEVICE}/usage?tables=DmaUsage,HbmUsage&{w}&width=50",
            f"/api/profiles/{DEVICE}/search?tables=Instruction&field=opcode&q=a",
            f"/api/profiles/{DEVICE}/aggregate?tables=Instruction&{w}",
            f"/api/profiles/{DEVICE}/flows?table=Instruction&ordinal=0",
            f"/api/profiles/{DEVICE}/export/Instruction.csv?{w}",
            f"/api/profiles/{DEVICE}/export/Nope.csv?{w}",
        ]
        common = [
            "/api/health", "/api/profiles", "/api/schema", "/", "/api/profiles/tiny",
            "/api/profiles/tiny/summary", "/api/profiles/tiny/tracks",
            f"/api/profiles/tiny/timeline?tables=SystemProfileEvents&{sys_w}&width=100",
            "/api/profiles/nope", "/api/profiles/nope/tracks", "/api/nope", "/nope", "/api/profiles/..%2f..",
            f"/api/profiles/{DEVICE}/timeline?start=1",
        ]
        scan(port, common + device_targets)
        # A damaged table: truncated, its index gone, so readers name the file.
        dev = data / "profiles" / "global" / f"{DEVICE}@latest"
        for table in ["Instruction", "Summary"]:
            f = dev / f"{table}.parquet"
            f.write_bytes(f.read_bytes()[:300])
            (dev / f".{table}.nxtl").unlink(missing_ok=True)
        scan(port, device_targets)
        # The device profile deleted: the system profile's summary and listing name it.
        # (a data path's profile name is a link into its set's generation: both go)
        target = dev.resolve()
        dev.unlink()
        shutil.rmtree(target)
        scan(port, common + device_targets)
        status, _, body = request(port, "/api/profiles/tiny/summary")
        (d,) = json.loads(body)["device_profiles"]
        assert status == 200 and DEVICE in d["error"], body
    statuses = {s for _, s in answers}
    assert {200, 400, 404, 500} <= statuses, answers   # successes and errors were scanned


def test_table_rewritten_in_place_is_answered_as_it_is(tmp_path):
    """F6: the response and tracks caches used to key on the profile directory, so a
    table rewritten in place (same inode, fewer rows) was still answered from the cache."""
    data = make_data(tmp_path)
    dev = data / "profiles" / "global" / f"{DEVICE}@latest"
    inst, ops = dev / "Instruction.parquet", dev / "OpcodeSummary.parquet"

    def answers(port, w):
        t = json.loads(request(port, f"/api/profiles/{DEVICE}/tracks")[2])
        tracks = sum(x["count"] for g in t["groups"] for x in g["tracks"] if x["table"] == "Instruction")
        tl = json.loads(request(port, f"/api/profiles/{DEVICE}/timeline?tables=Instruction&{w}&width=10000")[2])
        (tl_inst,) = tl["tables"]
        summary = json.loads(request(port, f"/api/profiles/{DEVICE}/summary")[2])
        _, headers, csv = request(port, f"/api/profiles/{DEVICE}/export/Instruction.csv?sampled=0&{w}")
        assert int(headers["x-nxprof-rows"]) == csv.count(b"\n") - 1
        return tracks, tl_inst["rows_in_window"], summary["opcode_summary"]["total_rows"], csv.count(b"\n") - 1

    with serving(data) as (port, _):
        w = window_of(port, DEVICE)
        full, full_ops = pq.read_table(inst), pq.read_table(ops)
        assert full.num_rows > 100 and full_ops.num_rows > 1
        want = (full.num_rows, full.num_rows, full_ops.num_rows, full.num_rows)
        assert answers(port, w) == want
        assert answers(port, w) == want     # now from the caches
        inode = (os.stat(inst).st_ino, os.stat(ops).st_ino)
        pq.write_table(full.slice(0, 100), inst)   # truncates and rewrites the same file
        pq.write_table(full_ops.slice(0, 1), ops)
        assert (os.stat(inst).st_ino, os.stat(ops).st_ino) == inode
        n, n_ops = pq.read_table(inst).num_rows, pq.read_table(ops).num_rows
        assert answers(port, w) == (n, n, n_ops, n) == (100, 100, 1, 100)
