"""`nxprof serve` under hostile conditions, 127.0.0.1 only, bounded in count and time:
  - 1,000 connections that each sent part of a request header and trickle a header line now
    and then do not keep /api/health from answering (src/server/server.c,
    "Connections");
  - the whole URL is bounded (414 for a 10,000-byte query string);
  - a 500 names the file at fault relative to the profiles root, never by absolute path;
  - an empty profile directory is listed, and the server keeps running.
"""
import http.client
import json
import resource
import socket
import time

import pytest

from conftest import http_get as get, serving

SLOW = 1000


@pytest.fixture
def server(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < SLOW + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, SLOW + 200), hard))
    (tmp_path / "profiles" / "global").mkdir(parents=True)
    with serving(tmp_path) as (port, _):
        yield port


def health(port, hang_guard_s):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=hang_guard_s)
    c.request("GET", "/api/health")
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def test_health_answers_while_a_thousand_slow_clients_are_connected(server):
    port = server
    slow = []
    try:
        for i in range(SLOW):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.append(s)
        for round_ in range(5):
            for s in slow[round_::5]:
                s.sendall(b"X-Slow: 1\r\n")  # one more header line, the request never ends
            # A server out of slots refuses the connection or never answers (the client's
            # timeout, a hang guard, ends the wait): any answer at all is what is checked.
            status, body = health(port, hang_guard_s=30)
            assert status == 200 and b'"ok"' in body.replace(b" ", b""), body
    finally:
        for s in slow:
            s.close()


def test_whole_url_is_bounded(server):
    port = server
    status, body = get(port, "/api/health?x=" + "a" * 10000)
    assert status == 414, body
    status, _ = get(port, "/api/health?x=" + "a" * 100)
    assert status == 200


def test_errors_do_not_show_absolute_paths(tmp_path):
    from conftest import nx
    data = tmp_path / "data"
    nx("synth", "--preset", "tiny", "--cores", "1", "--no-system", "--seed", "3", "--out", str(tmp_path / "cap"))
    nx("process", str(tmp_path / "cap"), "--data-path", str(data), "--display-name", "p")
    (prof,) = [p for p in (data / "profiles" / "global").iterdir() if not p.name.startswith(".")]
    table = prof / "Instruction.parquet"
    table.write_bytes(table.read_bytes()[:200])  # truncated in place
    (prof / ".Instruction.nxtl").unlink()
    with serving(data) as (port, _):
        status, body = get(port, "/api/profiles/p/event?table=Instruction&ordinal=0")
        text = body.decode()
        assert status == 500, text
        assert "Instruction.parquet" in text, text
        assert str(tmp_path) not in text and str(tmp_path.resolve()) not in text, text


def test_empty_profile_directory_is_listed(tmp_path):
    """An empty x@latest directory (a profile being written by hand, or emptied) is listed
    with no tables; nothing crashes (it used to reach qsort(NULL, 0))."""
    (tmp_path / "profiles" / "global" / "x@latest").mkdir(parents=True)
    with serving(tmp_path) as (port, _):
        status, body = get(port, "/api/profiles")
        assert status == 200, body
        listed = json.loads(body)
        (x,) = [e for e in (listed["profiles"] if isinstance(listed, dict) else listed) if e["name"] == "x"]
        assert x["tables"] == []
        status, _ = get(port, "/api/profiles/x/tracks")
        assert status in (200, 404), status


def _device_profile(tmp_path, events):
    """A one-core device profile of about `events` records, processed: (data path, its dir)."""
    from conftest import nx
    data = tmp_path / "data"
    nx("synth", "--events", events, "--cores", "1", "--no-system", "--seed", "5", "--out", str(tmp_path / "cap"))
    nx("process", str(tmp_path / "cap"), "--data-path", str(data), "--display-name", "p")
    (prof,) = [p for p in (data / "profiles" / "global").iterdir() if not p.name.startswith(".")]
    return data, prof


def _read_until_closed(sock, hang_guard_s):
    got, t0 = bytearray(), time.monotonic()
    while time.monotonic() - t0 < hang_guard_s:
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        got += chunk
    return bytes(got)


def _window(port):
    """The profile's whole time span, as /api/profiles/p gives it: the query string's start and end."""
    status, body = get(port, "/api/profiles/p")
    assert status == 200, body[:300]
    info = json.loads(body)
    return f"start={info['first_ts']}&end={info['last_ts']}"


def test_a_file_truncated_under_a_request_fails_that_request_only(tmp_path):
    """F2: a Parquet file truncated in place while a streaming export reads it (the
    reader holds it mapped) used to kill the server with SIGBUS. Now that response
    stops short, the server keeps answering, and once the file is whole again the same
    export is served in full."""
    data, prof = _device_profile(tmp_path, 300000)
    table = prof / "Instruction.parquet"
    original = table.read_bytes()
    with serving(data) as (port, _):
        path = f"/api/profiles/p/export/Instruction.csv?{_window(port)}&sampled=0&max_rows=10000000"
        status, whole = get(port, path)
        assert status == 200 and len(whole) > 8 << 20, (status, len(whole))
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # the server waits on us
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = s.recv(1 << 14)
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        time.sleep(0.3)                                 # the stream is under way, the file mapped
        with open(table, "r+b") as f:
            f.truncate(4096)                            # in place: same inode, now 4 KiB
        rest = _read_until_closed(s, 30)
        s.close()
        assert len(head) + len(rest) < len(whole), "the response stopped short"
        assert not rest.endswith(b"0\r\n\r\n"), "a cut response does not end like a whole one"
        assert health(port, 5)[0] == 200
        status, body = get(port, path)
        assert status == 500 and b"Instruction.parquet" in body, (status, body[:300])
        table.write_bytes(original)                     # in place again, whole
        status, again = get(port, path)
        assert status == 200 and again == whole


def test_an_index_truncated_under_requests_never_kills_the_server(tmp_path):
    """F2: timeline indexes stay mapped between requests; one truncated in place while
    /timeline requests read it used to end the server with SIGBUS. Now each answer is
    the table's (read from the Parquet file when the index cannot be trusted) or a JSON
    error, and once the index is whole again the answers are those from before. Each
    request has a width of its own, so the response cache never answers it."""
    import threading
    data, prof = _device_profile(tmp_path, 300000)
    index = prof / ".Instruction.nxtl"
    original = index.read_bytes()
    widths = range(3000, 3300)
    with serving(data) as (port, _):                         # the answers of a quiet server
        window = _window(port)
        path = f"/api/profiles/p/timeline?tables=Instruction&{window}&width="
        before = {w: get(port, path + str(w)) for w in widths}
    assert all(status == 200 for status, _ in before.values())
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            with open(index, "r+b") as f:
                f.truncate(4096)
                time.sleep(0.001)
                f.seek(0)
                f.write(original)
            time.sleep(0.001)

    with serving(data) as (port, _):
        t = threading.Thread(target=flip)
        t.start()
        try:
            answers = {w: get(port, path + str(w)) for w in widths}
        finally:
            stop.set()
            t.join()
        for w, (status, body) in answers.items():
            if status == 200:
                assert body == before[w][1], w
            else:
                assert status == 500 and json.loads(body)["error"], body[:300]
        index.write_bytes(original)
        assert get(port, path + "2999")[0] == 200
