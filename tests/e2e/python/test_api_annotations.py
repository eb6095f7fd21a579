"""/api/profiles/<name>/annotations (docs/api.md "Annotations"), on a tiny capture's system
and device profiles served by `nxprof serve`:
  - GET before anything was saved: the empty document;
  - PUT a document -> 200 with the saved document; GET gives it again, the file in the
    profile holds it (read with Python's json module), times beyond 2^53 exact;
  - the listing and /api/profiles/<name> count the markers and regions;
  - invalid bodies (not JSON, an unknown member, a region ending before it starts, a bad
    colour, the wrong version) -> 400 naming the member, and the saved document stays;
  - a cross-site PUT (a foreign Origin) -> 403 and a PUT that is not JSON -> 415, the
    guard's rules, with nothing written; other methods -> 405 naming GET, HEAD, PUT;
  - an unknown profile -> 404;
  - `nxprof process` again while serving: the annotations are still answered.
"""
import http.client
import json

import pytest

from conftest import http_get_json, nx, serving

DEVICE = "tiny-nd0-nc0"
FILE = ".nxprof-annotations.json"
EMPTY = {"version": 1, "markers": [], "regions": []}
DOC = {
    "version": 1,
    "markers": [{"time_ns": 1700000000123456789, "label": "spike \u00e9", "colour": "#e4572e"},
                {"time_ns": 42, "label": "", "track": "SystemProfileEvents:3"}],
    "regions": [{"start_ns": 100, "end_ns": 250, "name": "warm-up", "note": "two\nlines", "colour": "#abc"}],
}


def norm(doc):
    """The document with every *_ns as an int (the API writes those beyond 2^53 as strings)."""
    item = lambda x: {k: int(v) if k.endswith("_ns") else v for k, v in x.items()}
    return {"version": doc["version"], "markers": [item(m) for m in doc.get("markers", [])],
            "regions": [item(r) for r in doc.get("regions", [])]}


def put(port, path, body, headers=None):
    """One PUT: (status, parsed JSON body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    c.request("PUT", path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, json.loads(raw), dict((k.lower(), v) for k, v in r.getheaders())


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("annot")
    data = root / "data"
    nx("synth", "--preset", "tiny", "--cores", "1", "--seed", "3", "--out", str(root / "cap"))
    nx("process", str(root / "cap"), "--data-path", str(data), "--display-name", "tiny")
    with serving(data) as (port, _):
        yield port, data, root / "cap"


def on_disk(data, name):
    return json.loads((data / "profiles" / "global" / f"{name}@latest" / FILE).read_text(encoding="utf-8"))


def test_empty_then_saved(served):
    port, data, _ = served
    for name in ["tiny", DEVICE]:
        status, doc = http_get_json(port, f"/api/profiles/{name}/annotations")
        assert status == 200 and doc == EMPTY, (name, doc)
    status, doc, _ = put(port, "/api/profiles/tiny/annotations", DOC)
    assert status == 200, doc
    assert norm(doc) == norm(DOC)
    assert doc["markers"][0]["time_ns"] == "1700000000123456789"   # beyond 2^53: a string
    status, again = http_get_json(port, "/api/profiles/tiny/annotations")
    assert status == 200 and again == doc
    assert norm(on_disk(data, "tiny")) == norm(DOC)
    # the device profile's are its own
    status, doc = http_get_json(port, f"/api/profiles/{DEVICE}/annotations")
    assert doc == EMPTY


def test_counts_in_listing(served):
    port, _, _ = served
    put(port, "/api/profiles/tiny/annotations", DOC)
    status, listing = http_get_json(port, "/api/profiles")
    assert status == 200
    by_name = {p["name"]: p for p in listing["profiles"]}
    assert by_name["tiny"]["annotations"] == {"markers": 2, "regions": 1}
    assert by_name[DEVICE]["annotations"] == {"markers": 0, "regions": 0}
    status, one = http_get_json(port, "/api/profiles/tiny")
    assert one["annotations"] == {"markers": 2, "regions": 1}


@pytest.mark.parametrize("body, part", [
    (b"{\"version\":1,", "the request body: "),
    (b"not json", "the request body: "),
    (b"", "the request body: "),
    ({"version": 1, "markers": [{"time_ns": 1, "label": "a", "size": 2}]}, 'markers[0]: unknown member "size"'),
    ({"version": 1, "regions": [{"start_ns": 9, "end_ns": 8, "name": "r"}]}, "regions[0].end_ns: 8 is before"),
    ({"version": 1, "markers": [{"time_ns": 1, "label": "a", "colour": "red"}]}, "markers[0].colour: not a colour"),
    ({"version": 1, "markers": [{"time_ns": 1.5, "label": "a"}]}, "markers[0].time_ns: not an integer"),
    ({"version": 2}, "version: 2 is not supported"),
    ([], "not a JSON object"),
])
def test_invalid_bodies_are_refused(served, body, part):
    port, data, _ = served
    put(port, "/api/profiles/tiny/annotations", DOC)
    status, doc, _ = put(port, "/api/profiles/tiny/annotations", body)
    assert status == 400, doc
    assert part in doc["error"], doc
    assert norm(on_disk(data, "tiny")) == norm(DOC)


def test_guard_and_methods(served):
    port, data, _ = served
    put(port, "/api/profiles/tiny/annotations", DOC)
    status, doc, _ = put(port, "/api/profiles/tiny/annotations", EMPTY, {"Origin": "http://attacker.example"})
    assert status == 403, doc
    status, doc, _ = put(port, "/api/profiles/tiny/annotations", EMPTY, {"Content-Type": "text/plain"})
    assert status == 415, doc
    assert norm(on_disk(data, "tiny")) == norm(DOC)
    # the server's own page sends its Origin with a PUT: answered
    status, doc, _ = put(port, "/api/profiles/tiny/annotations", DOC, {"Origin": f"http://127.0.0.1:{port}"})
    assert status == 200, doc
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("DELETE", "/api/profiles/tiny/annotations")
    r = c.getresponse()
    r.read()
    assert r.status == 405 and r.getheader("Allow") == "GET, HEAD, PUT"
    c.close()
    status, doc, _ = put(port, "/api/profiles/nope/annotations", DOC)
    assert status == 404, doc
    status, doc = http_get_json(port, "/api/profiles/nope/annotations")
    assert status == 404, doc


def test_reprocess_keeps_them(served):
    port, data, cap = served
    status, saved, _ = put(port, f"/api/profiles/{DEVICE}/annotations", DOC)
    assert status == 200
    put(port, "/api/profiles/tiny/annotations", DOC)
    nx("process", str(cap), "--data-path", str(data), "--display-name", "tiny")
    for name in ["tiny", DEVICE]:
        status, doc = http_get_json(port, f"/api/profiles/{name}/annotations")
        assert status == 200 and norm(doc) == norm(DOC), (name, doc)
