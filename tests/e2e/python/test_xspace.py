"""The XSpace reader (src/capture/xspace.h) on the real JAX XSpace of tests/data/real-gpu,
checked two ways, neither of which uses nxprof's code:

1. Against this module's own protobuf decoder: a minimal wire-format reader (below,
   written from the protobuf encoding spec and xplane.proto) decodes jax.xplane.pb and
   derives the events the reader's documented mapping gives; the dump of
   tests/e2e/tools/chrome_trace_dump must equal them event for event (phase, name, time,
   duration, pid, tid, args).
2. Against JAX's own JSON of the same run (jax_perfetto_trace.json.gz, read with
   Python's json): the multiset of X events as (name, start, duration, process name,
   thread name, args) is the same. The XSpace holds 200 events that the JSON does not:
   the host's MemoryAllocation and MemoryDeallocation events (zero-length markers),
   which JAX's converter leaves out as internal and so does the reader.
"""
import gzip
import json
import os
import struct
import subprocess
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(os.environ.get("NXPROF_TEST_DATA", ROOT / "tests" / "data")) / "real-gpu"
DUMP = Path(os.environ.get("CHROME_TRACE_DUMP", ROOT / "build" / "tests" / "chrome_trace_dump"))

INTERNAL_EVENTS = {
    "MemoryAllocation", "MemoryDeallocation", "PrefetchProduce", "PrefetchConsume",
    "ParallelInterleaveProduce", "ParallelInterleaveConsume", "ParallelInterleaveInitializedInput",
    "ParallelMapProduce", "ParallelMapConsume", "MapAndBatchProduce", "MapAndBatchConsume",
    "ParseExampleProduce", "ParseExampleConsume",
}
INTERNAL_STATS = {"_pt", "_p", "_ct", "_c", "_r", "program_id", "symbol_id", "flops", "bytes_accessed"}


# ---- a minimal protobuf wire decoder -------------------------------------------------

def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(buf):
    """Yields (field number, value): an int for varint/fixed, bytes for length-delimited."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value = struct.unpack_from("<Q", buf, i)[0]
            i += 8
        elif wire == 5:
            value = struct.unpack_from("<I", buf, i)[0]
            i += 4
        elif wire == 2:
            n, i = varint(buf, i)
            value = bytes(buf[i:i + n])
            i += n
        else:
            raise AssertionError(f"wire type {wire}")
        yield number, value


def signed(u):
    return u - (1 << 64) if u >= 1 << 63 else u


def first(msg, number, default=None):
    found = [v for n, v in fields(msg) if n == number]
    return found[-1] if found else default


def metadata_map(plane, number):
    """map<int64, M> field `number` of a plane: {key: value message}; a later entry wins."""
    out = {}
    for n, entry in fields(plane):
        if n == number:
            out[signed(first(entry, 1, 0))] = first(entry, 2, b"")
    return out


def stat_value(stat, stat_names):
    """The stat's name and its value as JAX's JSON writes it (a string)."""
    name = stat_names[signed(first(stat, 1, 0))]
    value = ""
    for n, v in fields(stat):
        if n == 2:
            value = "%.6g" % struct.unpack("<d", struct.pack("<Q", v))[0]
        elif n == 3:
            value = str(v)
        elif n == 4:
            value = str(signed(v))
        elif n == 5:
            value = v.decode()
        elif n == 6:
            value = v.hex()
        elif n == 7:
            value = stat_names[signed(v)]
    return name, value


def ps_to_ns(ps):
    q, r = divmod(abs(ps), 1000)
    q += r >= 500
    return q if ps >= 0 else -q


def expected_events(path):
    """The events the reader's mapping gives for the XSpace at path, and the internal
    events it leaves out (by name)."""
    events, left_out = [], Counter()
    for pid, plane in enumerate(v for n, v in fields(path.read_bytes()) if n == 1):
        lines = [v for n, v in fields(plane) if n == 3]
        if not lines:
            continue
        event_meta = metadata_map(plane, 4)
        stat_names = {k: first(m, 2, b"").decode() for k, m in metadata_map(plane, 5).items()}
        events.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": first(plane, 2, b"").decode()}})
        threads = []
        for line in lines:
            tid = (first(line, 10, 0) or first(line, 1, 0)) & 0xFFFFFFFF
            name = (first(line, 11, b"") or first(line, 2, b"")).decode()
            threads.append(tid)
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
        for line, tid in zip(lines, threads):
            base = signed(first(line, 3, 0))
            for ev in (v for n, v in fields(line) if n == 4):
                meta = event_meta[signed(first(ev, 1, 0))]
                name, display = first(meta, 2, b"").decode(), first(meta, 4, b"").decode()
                if name in INTERNAL_EVENTS:
                    left_out[name] += 1
                    continue
                assert first(ev, 5) is None, "no aggregated events in this file"
                args = {"long_name": name} if display else {}
                for stat in [v for n, v in fields(meta) if n == 5] + [v for n, v in fields(ev) if n == 4]:
                    key, value = stat_value(stat, stat_names)
                    if key not in INTERNAL_STATS:
                        args[key] = value
                events.append({"ph": "X", "name": display or name, "pid": pid, "tid": tid,
                               "ts_ns": str(base + ps_to_ns(signed(first(ev, 2, 0)))),
                               "dur_ns": str(ps_to_ns(signed(first(ev, 3, 0)))),
                               "args": dict(sorted(args.items()))})
    return events, left_out


# ---- the reader, through the dump tool -------------------------------------------------

@pytest.fixture(scope="module")
def dumped():
    assert DUMP.is_file(), f"{DUMP} is not built (CHROME_TRACE_DUMP names it)"
    r = subprocess.run([str(DUMP), "--events", str(DATA / "jax.xplane.pb")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    return lines[:-1], lines[-1]


def test_events_match_an_independent_decoder(dumped):
    events, summary = dumped
    want, left_out = expected_events(DATA / "jax.xplane.pb")
    got = [{k: v for k, v in e.items() if k != "i"} for e in events]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"event {i}"
        assert list(g.get("args", {})) == list(w["args"]), f"event {i}: args keys in byte order"
    assert summary["internal_events"] == sum(left_out.values())
    assert summary["x_events"] == sum(1 for e in want if e["ph"] == "X")


def named_x_events(events, ts_ns, dur_ns):
    """Counter of (name, start ns, duration ns, process name, thread name, args) of X events."""
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"]
               for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    return Counter((e["name"], ts_ns(e), dur_ns(e), processes[e["pid"]], threads[(e["pid"], e["tid"])],
                    json.dumps(e.get("args", {}), sort_keys=True))
                   for e in events if e.get("ph") == "X")


def test_same_events_as_jax_json(dumped):
    events, _ = dumped
    with gzip.open(DATA / "jax_perfetto_trace.json.gz") as f:
        trace = json.load(f)["traceEvents"]
    from_pb = named_x_events(events, lambda e: int(e["ts_ns"]), lambda e: int(e["dur_ns"]))
    # JSON times are microseconds with three decimals: whole nanoseconds
    from_json = named_x_events(trace, lambda e: round(e["ts"] * 1000), lambda e: round(e["dur"] * 1000))
    assert sum(from_json.values()) == 879
    assert from_pb == from_json
    # what the XSpace has beyond the JSON: exactly the internal memory markers
    _, left_out = expected_events(DATA / "jax.xplane.pb")
    assert left_out == Counter({"MemoryAllocation": 100, "MemoryDeallocation": 100})


# ---- through `process`: the registry reads *.xplane.pb like the JSON -------------------

def processed_events(tmp_path, fixture):
    """`nxprof process` on a capture holding only `fixture`: its SystemProfileEvents rows as
    (name, start_ts, duration_ns, thread label) and its Warning rows."""
    import pyarrow.parquet as pq
    from conftest import nx
    cap = tmp_path / fixture.split(".")[0] / "cap"
    cap.mkdir(parents=True)
    (cap / fixture).write_bytes((DATA / fixture).read_bytes())
    out = cap.parent / "out"
    r = nx("process", str(cap), "--output-file", str(out))
    rows = pq.read_table(out / "SystemProfileEvents.parquet").to_pylist()
    warnings = pq.read_table(out / "Warning.parquet").to_pylist() if (out / "Warning.parquet").exists() else []

    def thread(row):
        extra = json.loads(row["extra_attributes_json"] or "{}")
        return extra.get("process_name"), extra.get("thread_name")
    return Counter((x["name"], x["start_ts"], x["duration_ns"], thread(x)) for x in rows), warnings, r.stderr


def test_process_reads_the_xplane_like_its_json(tmp_path):
    """The same run as XSpace and as JAX's JSON gives the same 879 framework events, with
    the same times and process/thread names; the 200 internal memory markers only the
    XSpace holds are said (Warning rows and stderr), never silently dropped."""
    from_pb, pb_warnings, pb_err = processed_events(tmp_path, "jax.xplane.pb")
    from_json, _, _ = processed_events(tmp_path, "jax_perfetto_trace.json.gz")
    assert sum(from_pb.values()) == 879
    assert from_pb == from_json
    assert "jax.xplane.pb: kept 885 events (X: 879" in pb_err and "warned 200" in pb_err, pb_err
    said = [w for w in pb_warnings if "internal XSpace event" in (w.get("message") or "")]
    counted = [w for w in pb_warnings if "180 more events the source leaves out" in (w.get("message") or "")]
    assert len(said) == 20 and len(counted) == 1, pb_warnings
    assert {w["category"] for w in said + counted} == {"Not Stored"}, pb_warnings
