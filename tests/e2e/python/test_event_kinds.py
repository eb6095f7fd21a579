"""Every kind of Chrome event is a SystemProfileEvents row (docs/processing.md,
"SystemProfileEvents"): instants (Kineto's [memory] among them), counters, async b/e pairs
and n, flows s/t/f, bind_id, and any other phase; only M events that give no name, and
events that cannot be paired, are Warnings.

The real traces of tests/data/real-gpu are processed one by one and compared, per phase,
with a count made by Python's json module from the raw file: rows by extra_attributes_json
"ph" (absent: a slice), the [memory] instants with their args, the flows' flow_id, and the
stderr line's kept, per kind, names and warned adding up to the elements of traceEvents.
Hand-made traces check each kind's rows: times, durations, tracks (an async row's
thread_id), flow_id lists, members and Warnings, written out here by hand.
"""
import gzip
import random
import json
import re
from collections import Counter
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from chrome_model import model, us_to_ns
from conftest import TEST_DATA, nx, profile_files
from trace_ranks import scoped, trace_rank

REAL = ["gpt2_eager.json.gz", "ddp_rank0.json.gz", "ddp_rank1.json.gz", "jax_perfetto_trace.json.gz"]
LINE = re.compile(r": kept (\d+) events \(X: (\d+), B/E: (\d+), i: (\d+), C: (\d+), b/e: (\d+), n: (\d+), "
                  r"s/t/f: (\d+), other: (\d+), M names: (\d+)\)(?:, not stored yet (\d+) \(M: \d+\))?, "
                  r"warned (\d+)\n")
T0 = 1_700_000_000_000_000   # µs


def process(tmp_path, name, raw):
    """raw (bytes) alone in a capture: (framework rows, Warning rows, stderr)."""
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / name).write_bytes(raw)
    out = tmp_path / "out"
    r = nx("process", cap, "-o", out)
    files = profile_files(out)
    rows = [row for f in files["SystemProfileEvents"] for row in pq.read_table(f).to_pylist()]
    warnings = [row for f in files.get("Warning", []) for row in pq.read_table(f).to_pylist()]
    return [r for r in rows if r["trace_event_source"] == "framework"], warnings, r.stderr


def attrs(row):
    return json.loads(row["extra_attributes_json"])


@pytest.mark.parametrize("name", REAL)
def test_real_trace_rows_per_phase_equal_the_raw_json(tmp_path, name):
    raw = gzip.open(TEST_DATA / "real-gpu" / name).read()
    doc = json.loads(raw, parse_float=Decimal)
    elements = doc["traceEvents"] if isinstance(doc, dict) else doc
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    rows, warnings, err = process(tmp_path, name.removesuffix(".gz"), raw)

    # Per phase: one row per event, a slice (no "ph") per X; [memory] instants with their args.
    raw_ph = Counter(e.get("ph") for e in elements if isinstance(e, dict))
    got_ph = Counter(attrs(r).get("ph") for r in rows)
    assert raw_ph["B"] == raw_ph["E"] == 0 and got_ph[None] == raw_ph["X"]   # real traces write X, no B/E
    for ph in set(raw_ph) - {"X", "B", "E", "M", "b", "e", None}:
        assert got_ph[ph] == raw_ph[ph], ph
    assert set(got_ph) - {None} == set(raw_ph) - {"X", "B", "E", "M", "b", "e", None}

    def memory(args):
        return (args["Device Id"], args["Device Type"], args["Bytes"], args["Total Allocated"], args["Total Reserved"])
    want_mem = Counter((us_to_ns(e["ts"]) + base, memory(e["args"])) for e in elements
                       if isinstance(e, dict) and e.get("ph") in ("i", "I") and e.get("name") == "[memory]")
    got_mem = Counter((r["start_ts"], memory(json.loads(r["extra_attributes_json"], parse_float=Decimal)["args"]))
                      for r in rows if r["name"] == "[memory]")
    assert got_mem == want_mem
    assert all(r["duration_ns"] == 0 for r in rows if attrs(r).get("ph"))

    # Flows: "<cat>:<id>" on each s/t/f row (after "r<rank>:" in a file with a rank), as many
    # of each key as the file has.
    rank = trace_rank(name.removesuffix(".gz"), doc)
    want_flows = Counter(scoped(f"{e.get('cat', '')}:{e['id']}", rank) for e in elements
                         if isinstance(e, dict) and e.get("ph") in ("s", "t", "f") and "id" in e)
    got_flows = Counter(r["flow_id"][0] for r in rows if attrs(r).get("ph") in ("s", "t", "f"))
    assert got_flows == want_flows

    # Every row, as chrome_model works them out; and the stderr line adds up.
    m = model(elements, base)
    assert Counter((r["name"], r["start_ts"], r["end_ts"], attrs(r).get("ph"), tuple(r["flow_id"] or ()))
                   for r in rows) == Counter((r["name"], r["start"], r["end"], r["ph"],
                                              tuple(scoped(f, rank) for f in r["flow"] or ())) for r in m.rows)
    line = LINE.search(err)
    assert line, err
    kept, x, be, i, c, ab, n, stf, other, names, later, warned = (int(g or 0) for g in line.groups())
    assert (x, be, i, c, ab, n, stf, other) == tuple(m.kept[k] for k in ("X", "B/E", "i", "C", "b/e", "n", "s/t/f",
                                                                         "other"))
    assert (names, later, warned) == (m.names, m.unnamed, m.warned + len(m.skipped))
    assert x == raw_ph["X"] and i == raw_ph["i"] + raw_ph["I"] and stf == raw_ph["s"] + raw_ph["t"] + raw_ph["f"]
    assert kept + later + warned == len(elements)
    assert len(rows) + m.kept["B/E"] // 2 + m.kept["b/e"] // 2 + names + later + warned == len(elements)
    assert not [w for w in warnings if w["category"] == "Not Stored"] or later


def test_counters_with_and_without_id(tmp_path):
    trace = [dict(ph="C", name="mem", ts=T0, pid=1, args={"used": 10, "free": 5}),
             dict(ph="C", name="mem", id=7, ts=T0 + 1, pid=1, tid=3, args={"used": 11}),
             dict(ph="C", name="q", id="gpu", ts=T0 + 2, pid="host", args={"depth": 2.5})]
    rows, warnings, _ = process(tmp_path, "trace.json", json.dumps({"traceEvents": trace}).encode())
    got = sorted((r["name"], r["start_ts"], r["duration_ns"], r["thread_id"], attrs(r)) for r in rows)
    assert got == [("mem", T0 * 1000, 0, 0, {"ph": "C", "args": {"used": 10, "free": 5}}),
                   ("mem 7", (T0 + 1) * 1000, 0, 3, {"ph": "C", "id": "7", "args": {"used": 11}}),
                   ("q gpu", (T0 + 2) * 1000, 0, 0, {"ph": "C", "pid": "host", "id": "gpu", "args": {"depth": 2.5}})]
    assert warnings == []


def test_async_pairs_nested_unmatched_and_instants(tmp_path):
    def ev(ph, name, ts, **kw):
        return {**dict(ph=ph, name=name, ts=T0 + ts, pid=1, tid=9, cat="net"), **kw}
    trace = [ev("b", "load", 0, id=1, args={"url": "a"}),
             ev("b", "parse", 2, id=1),              # nested in load: same (cat, id)
             ev("n", "chunk", 3, id=1),              # on the open b's track: parse's
             ev("e", "parse", 4, id=1),
             ev("e", "load", 10, id=1, args={"status": 200}),
             ev("n", "ping", 11, id=2),              # no open b of id 2: its own name's track
             ev("b", "load", 12, id=3, tid="io"),    # never ended
             ev("e", "lost", 13, id=4),              # no open b of id 4
             ev("b", "late", 20, id=5), ev("e", "late", 15, id=5),   # e earlier than b
             dict(ph="b", name="load", ts=T0 + 1, pid=1, tid=9, cat="other", id=1),
             dict(ph="e", ts=T0 + 5, pid=1, tid=9, cat="other", id=1)]
    rows, warnings, err = process(tmp_path, "trace.json", json.dumps({"traceEvents": trace}).encode())
    by = {(r["name"], attrs(r).get("cat")): r for r in rows}
    assert sorted((r["name"], r["start_ts"] - T0 * 1000, r["duration_ns"], attrs(r)["ph"]) for r in rows) == [
        ("chunk", 3000, 0, "n"), ("load", 0, 10000, "b"), ("load", 1000, 4000, "b"),
        ("parse", 2000, 2000, "b"), ("ping", 11000, 0, "n")]
    load, parse, chunk, ping = by["load", "net"], by["parse", "net"], by["chunk", "net"], by["ping", "net"]
    # One track per (cat, name) within the pid, a negative id no OS thread has; n joins parse's.
    tracks = {load["thread_id"], parse["thread_id"], ping["thread_id"], by["load", "other"]["thread_id"]}
    assert len(tracks) == 4 and all(t < 0 for t in tracks)
    assert chunk["thread_id"] == parse["thread_id"] and {r["process_id"] for r in rows} == {1}
    assert attrs(load) == {"ph": "b", "cat": "net", "tid": 9, "id": "1", "args": {"url": "a"}, "thread_name": "load",
                           "end_args": {"status": 200}}
    assert attrs(chunk) == {"ph": "n", "cat": "net", "tid": 9, "id": "1", "thread_name": "parse"}
    assert attrs(ping)["thread_name"] == "ping"
    said = sorted(w["message"].split(": ", 1)[1] for w in warnings)
    assert said == ["1 async b/e pairs whose e is earlier than its b were dropped",
                    "1 b (async begin) events without a matching e event of their cat and id were dropped",
                    "1 e (async end) events without an open b event of their cat and id were dropped"]
    assert "b/e: 6, n: 2," in err and "warned 4" in err


def test_async_track_is_labelled_by_its_name(tmp_path):
    trace = [dict(ph="M", name="process_name", pid=5, args={"name": "server"}),
             dict(ph="b", name="request", cat="rpc", id=1, ts=T0, pid=5, tid=1),
             dict(ph="e", name="request", cat="rpc", id=1, ts=T0 + 4, pid=5, tid=1)]
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "trace.json").write_text(json.dumps({"traceEvents": trace}))
    nx("process", cap, "-o", tmp_path / "out")
    top = nx("top", tmp_path / "out", "--by", "thread").stdout
    assert "server (5) / request" in top, top


def test_flows_and_bind_id(tmp_path):
    trace = [dict(ph="X", name="launch", ts=T0, dur=5, pid=1, tid=1, cat="cuda_runtime",
                  args={"correlation": 42}, bind_id=9, flow_out=True),
             dict(ph="X", name="kernel", ts=T0 + 10, dur=3, pid=0, tid=7, cat="kernel", bind_id="0x9", flow_in=True),
             dict(ph="s", name="ac2g", id=42, ts=T0, pid=1, tid=1, cat="ac2g"),
             dict(ph="t", name="ac2g", id=42, ts=T0 + 5, pid=1, tid=2, cat="ac2g"),
             dict(ph="f", name="ac2g", id=42, ts=T0 + 10, pid=0, tid=7, cat="ac2g", bp="e"),
             dict(ph="s", name="nocat", id="x1", ts=T0 + 1, pid=1, tid=1),
             dict(ph="f", name="noid", ts=T0 + 2, pid=1, tid=1, cat="c")]
    rows, warnings, err = process(tmp_path, "trace.json", json.dumps({"traceEvents": trace}).encode())
    got = sorted((r["name"], attrs(r).get("ph"), r["thread_id"], r["duration_ns"], r["flow_id"]) for r in rows)
    assert got == [("ac2g", "f", 7, 0, ["ac2g:42"]), ("ac2g", "s", 1, 0, ["ac2g:42"]), ("ac2g", "t", 2, 0, ["ac2g:42"]),
                   ("kernel", None, 7, 3000, ["kernel:0x9"]), ("launch", None, 1, 5000, ["42", "cuda_runtime:9"]),
                   ("nocat", "s", 1, 0, [":x1"]), ("noid", "f", 1, 0, None)]
    by = {(r["name"], attrs(r).get("ph")): attrs(r) for r in rows}
    assert by["ac2g", "f"] == {"ph": "f", "cat": "ac2g", "id": "42", "bp": "e"}
    assert by["launch", None] == {"cat": "cuda_runtime", "flow_out": True, "args": {"correlation": 42}}
    assert by["kernel", None] == {"cat": "kernel", "flow_in": True}
    assert warnings == [] and "s/t/f: 5," in err


def test_instant_scopes_and_other_phases(tmp_path):
    trace = [dict(ph="i", name="g", s="g", ts=T0, pid=1, tid=2), dict(ph="i", name="p", s="p", ts=T0 + 1, pid=1, tid=2),
             dict(ph="I", name="t", s="t", ts=T0 + 2, pid=1, tid=2, args={"k": 1}),
             dict(ph="i", name="none", ts=T0 + 3, pid="Traces", tid="Trace PyTorch Profiler"),
             dict(ph="R", name="mark", ts=T0 + 4, pid=1, tid=2), dict(ph="O", name="obj", id="0x1", ts=T0 + 5, pid=1),
             dict(ph="Z", name="unknown", ts=T0 + 6, pid=1, tid=2, dur=9),
             dict(ph="M", name="other_meta", pid=1, args={"x": 1})]
    rows, warnings, err = process(tmp_path, "trace.json", json.dumps({"traceEvents": trace}).encode())
    got = [(r["name"], r["start_ts"] - T0 * 1000, r["duration_ns"], attrs(r)) for r in sorted(rows, key=lambda r: r["start_ts"])]
    assert got == [("g", 0, 0, {"ph": "i", "s": "g"}), ("p", 1000, 0, {"ph": "i", "s": "p"}),
                   ("t", 2000, 0, {"ph": "I", "s": "t", "args": {"k": 1}}),
                   ("none", 3000, 0, {"ph": "i", "pid": "Traces", "tid": "Trace PyTorch Profiler"}),
                   ("mark", 4000, 0, {"ph": "R"}), ("obj", 5000, 0, {"ph": "O", "id": "0x1"}),
                   ("unknown", 6000, 0, {"ph": "Z"})]
    assert [w["category"] for w in warnings] == ["Not Stored"]
    assert "i: 4," in err and "other: 3," in err and "not stored yet 1 (M: 1)" in err


def test_many_async_ids_pair_as_chrome_does(tmp_path):
    """Thousands of ids open at once and closed in another order, some twice nested, some
    never closed or closed twice, with n events among them: every pair, n and Warning is
    chrome_model's (the table of open ids grows, and shrinks as ids close)."""
    rng = random.Random(27)
    ids = list(range(3000))
    events = []
    for k in ids:
        events.append(dict(ph="b", name=f"r{k % 7}", cat="q", id=k, ts=T0 + rng.randrange(100), pid=1, tid=1))
        if k % 5 == 0:
            events.append(dict(ph="b", name="inner", cat="q", id=k, ts=T0 + 100 + rng.randrange(10), pid=1, tid=1))
    rng.shuffle(events)   # b events of one id keep their order below: outer first
    events.sort(key=lambda e: (e["id"], e["name"] == "inner"))
    rng.shuffle(ids)
    for k in ids:
        if k % 11:
            events.append(dict(ph="n", name="tick", cat="q", id=k, ts=T0 + 150, pid=1, tid=1))
        for _ in range((k % 5 == 0) + (k % 13 != 0) + (k % 17 == 0)):
            events.append(dict(ph="e", cat="q", id=k, ts=T0 + 200 + rng.randrange(50), pid=1, tid=1))
    rows, warnings, err = process(tmp_path, "trace.json", json.dumps({"traceEvents": events}).encode())
    m = model(events)
    got = Counter((r["name"], r["start_ts"], r["end_ts"], attrs(r)["ph"], attrs(r)["thread_name"]) for r in rows)
    assert got == Counter((r["name"], r["start"], r["end"], r["ph"], r["thread_name"]) for r in m.rows)
    assert len({r["thread_id"] for r in rows}) == len({r["thread"] for r in m.rows}) == 8   # r0..r6, inner
    assert f"warned {m.warned}" in err and m.warned > 0
