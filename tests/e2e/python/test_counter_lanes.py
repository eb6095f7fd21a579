"""GET /api/profiles/<name>/counters (docs/api.md) against values computed with pyarrow.

A SystemProfileEvents table is written with pyarrow in the shape the storage contract
gives framework rows (docs/processing.md): Kineto "[memory]" instants of two GPUs, the
CPU and a second rank's GPU, "ph":"C" counters of two processes with numeric and string
args, and rows that are no lane's (slices, other instants, a runtime "[memory]" row).
The expected lanes are computed here from the Parquet read back with pyarrow, parsing
extra_attributes_json with Python's json: lanes in order of first appearance (memory
lanes first), per series and pixel bucket the largest sample (ties: the earlier row),
before = the latest sample before the window (ties: the later row). Then the parameter
validation, /api/schema's viewer.counter_lanes, and async rows ("ph":"b" intervals on a
synthetic thread id named by their "thread_name" member) listed by /tracks as their own
tracks, labelled by that name.
"""
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import http_get_json, serving

MEMORY_SERIES = (("allocated", "Total Allocated"), ("reserved", "Total Reserved"))


def _rows():
    rnd = random.Random(27)
    rows = []
    devices = [(None, 1, 0), (None, 0, -1), (1, 1, 0), (None, 1, 1)]
    totals = {d: [10_000_000, 20_000_000] for d in devices}
    for i in range(600):
        ts = 1_700_000_000_000_000_000 + i * 997 + rnd.randrange(0, 900)
        kind = rnd.random()
        if kind < 0.55:
            d = rnd.choice(devices)
            totals[d][0] += rnd.randrange(-4096, 8192) * 512
            totals[d][1] = max(totals[d][1], totals[d][0] + rnd.randrange(0, 3) * 2**20)
            args = {"Total Reserved": totals[d][1], "Total Allocated": totals[d][0], "Bytes": 512,
                    "Device Id": d[2], "Device Type": d[1], "Addr": 140410869514240 + i}
            extra = {"ph": "i", "cat": "cpu_instant_event", "s": "t", "args": args}
            rows.append((ts, "[memory]", "framework", d[0], 469, 520, extra))
        elif kind < 0.8:
            pid = rnd.choice([7, 8])
            args = {m: rnd.randrange(0, 100) / 4 for m in rnd.sample(["a", "b", "c"], rnd.randrange(1, 3))}
            args["note"] = "12"   # a string: no series
            rows.append((ts, "queue", "framework", None, pid, pid, {"ph": "C", "cat": "", "args": args}))
        elif kind < 0.9:
            rows.append((ts, "queue", "framework", None, 7, 7, {"cat": "cpu_op", "args": {"a": 1e9}}))
        elif kind < 0.95:
            rows.append((ts, "queue", "framework", None, 7, 7, {"ph": "i", "args": {"a": 1e9}}))
        else:
            extra = {"args": {"Total Allocated": 9e15, "Total Reserved": 9e15, "Device Type": 1, "Device Id": 0}}
            rows.append((ts, "[memory]", "neuron_rt", None, 1, 1, extra))
    # Async intervals on their own tracks (the contract's synthetic negative thread ids).
    for k, (name, tid) in enumerate([("fetch batch", -4611686018427387905), ("all_reduce", -1234567)]):
        for j in range(3):
            ts = 1_700_000_000_000_000_000 + 1000 * (40 * j + 7 * k + 1)
            extra = {"ph": "b", "cat": "async", "id": f"0x{j}", "tid": 520, "thread_name": name, "args": {}}
            rows.append((ts, name, "framework", None, 469, tid, extra, ts + 20_000))
    rows.sort(key=lambda r: r[0])
    return rows


@pytest.fixture(scope="module")
def served(workdir):
    data = workdir / "counters-data"
    prof = data / "profiles" / "global" / "lanes@latest"
    prof.mkdir(parents=True)
    rows = _rows()
    t = pa.table({
        "id": pa.array(range(len(rows)), pa.int64()),
        "name": [r[1] for r in rows],
        "start_ts": pa.array([r[0] for r in rows], pa.int64()),
        "end_ts": pa.array([r[7] if len(r) > 7 else r[0] for r in rows], pa.int64()),
        "duration_ns": pa.array([(r[7] - r[0]) if len(r) > 7 else 0 for r in rows], pa.int64()),
        "trace_event_source": [r[2] for r in rows],
        "instance_id": ["host"] * len(rows),
        "process_id": pa.array([r[4] for r in rows], pa.int64()),
        "thread_id": pa.array([r[5] for r in rows], pa.int64()),
        "nc_idx": pa.array([None] * len(rows), pa.int64()),
        "worker_gid": pa.array([r[3] for r in rows], pa.int64()),
        "extra_attributes_json": [json.dumps(r[6], separators=(",", ":")) for r in rows],
    })
    pq.write_table(t, prof / "SystemProfileEvents.parquet", row_group_size=100, write_page_index=True)
    with serving(data) as (port, _pid):
        yield port, prof


def _events(prof):
    """The lane rows of the Parquet as (kind, key, label, ts, {series: value}), file order."""
    t = pq.read_table(prof / "SystemProfileEvents.parquet").to_pylist()
    out = []
    for r in t:
        extra = json.loads(r["extra_attributes_json"])
        if r["trace_event_source"] != "framework":
            continue
        rank = f"rank {r['worker_gid']} / " if r["worker_gid"] is not None else ""
        args = extra.get("args", {})
        if r["name"] == "[memory]":
            dt, di = args["Device Type"], args["Device Id"]
            label = rank + (f"GPU {di} memory" if dt == 1 else "CPU memory")
            vals = {name: args[member] for name, member in MEMORY_SERIES if member in args}
            out.append(("memory", (r["worker_gid"], dt, di), label, r["start_ts"], vals))
        elif extra.get("ph") == "C":
            vals = {k: v for k, v in args.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            out.append(("counter", (r["worker_gid"], r["process_id"], r["name"]),
                        f"{rank}{r['name']} (pid {r['process_id']})", r["start_ts"], vals))
    return out


def _expected(events, s, e, w):
    lanes = []
    for kind in ("memory", "counter"):
        keys = []
        for ev in events:
            if ev[0] == kind and ev[3] <= e and ev[1] not in [k for k, _ in keys]:
                keys.append((ev[1], ev[2]))
        for key, label in keys:
            mine = [ev for ev in events if ev[0] == kind and ev[1] == key and ev[3] <= e]
            names = [n for n, _ in MEMORY_SERIES] if kind == "memory" else []
            for ev in mine:
                names += [n for n in ev[4] if n not in names]
            series = []
            for n in names:
                before, buckets = None, {}
                for ev in mine:
                    if n not in ev[4]:
                        continue
                    t, v = ev[3], ev[4][n]
                    if t < s:
                        if before is None or t >= before[0]:
                            before = (t, v)
                        continue
                    b = (t - s) * w // (e - s + 1)
                    if b not in buckets or v > buckets[b][1]:
                        buckets[b] = (t, v)
                pts = [buckets[b] for b in sorted(buckets)]
                series.append({"name": n, "before": None if before is None else {"t": before[0] - s, "v": before[1]},
                               "t": [p[0] - s for p in pts], "v": [p[1] for p in pts]})
            lanes.append({"kind": kind, "label": label, "series": series})
    return lanes


def _as_expected(lane):
    return {"kind": lane["kind"], "label": lane["label"], "series": [
        {"name": s["name"], "before": s["before"] and {"t": int(s["before"]["t"]), "v": float(s["before"]["v"])},
         "t": [int(x) for x in s["t"]], "v": [float(x) for x in s["v"]]} for s in lane["series"]]}


def _floats(lanes):
    for lane in lanes:
        for s in lane["series"]:
            if s["before"]:
                s["before"]["v"] = float(s["before"]["v"])
            s["v"] = [float(x) for x in s["v"]]
    return lanes


def test_lanes_equal_pyarrow(served):
    port, prof = served
    events = _events(prof)
    first, last = min(ev[3] for ev in events), max(ev[3] for ev in events)
    windows = [(first, last, 800), (first, last, 7), (first + (last - first) // 3, first + (last - first) // 2, 50),
               (first + 1000, first + 1000, 3), (last + 1, last + 10**9, 10), (first - 10**6, first - 1, 4)]
    for s, e, w in windows:
        status, got = http_get_json(port, f"/api/profiles/lanes/counters?start={s}&end={e}&width={w}")
        assert status == 200, got
        assert (int(got["start"]), int(got["end"]), got["width"]) == (s, e, w)   # beyond 2^53: strings
        want = _floats(_expected(events, s, e, w))
        assert [_as_expected(lane) for lane in got["lanes"]] == want, (s, e, w)
    # The whole span: every lane kind, the rank's lane, a key read back as numbers.
    status, got = http_get_json(port, f"/api/profiles/lanes/counters?start={first}&end={last}&width=100")
    labels = [lane["label"] for lane in got["lanes"]]
    assert {"GPU 0 memory", "CPU memory", "rank 1 / GPU 0 memory", "GPU 1 memory", "queue (pid 7)",
            "queue (pid 8)"} == set(labels)
    gpu = got["lanes"][labels.index("rank 1 / GPU 0 memory")]
    assert (gpu["worker_gid"], gpu["device_type"], gpu["device_id"], gpu["unit"]) == (1, 1, 0, "bytes")
    q = got["lanes"][labels.index("queue (pid 8)")]
    assert (q["worker_gid"], q["process_id"], q["name"], q["unit"]) == (None, 8, "queue", None)


@pytest.mark.parametrize("query", ["start=1&end=2", "start=1&width=3", "start=5&end=4&width=3", "start=1&end=2&width=0",
                                   "start=1&end=2&width=10001", "start=x&end=2&width=3", "start=01&end=2&width=3"])
def test_parameters_are_validated(served, query):
    port, _ = served
    status, got = http_get_json(port, f"/api/profiles/lanes/counters?{query}")
    assert status == 400 and "error" in got, (query, got)


def test_unknown_profile_is_404(served):
    port, _ = served
    status, _ = http_get_json(port, "/api/profiles/nope/counters?start=1&end=2&width=3")
    assert status == 404


def test_schema_lists_the_lane_kinds(served):
    port, _ = served
    status, doc = http_get_json(port, "/api/schema")
    assert status == 200
    assert doc["viewer"]["counter_lanes"] == [
        {"kind": "memory", "unit": "bytes", "gauge": True, "series": ["allocated", "reserved"]},
        {"kind": "counter", "unit": None, "gauge": True, "series": []}]


def test_async_rows_are_tracks_of_their_own(served):
    port, prof = served
    t = pq.read_table(prof / "SystemProfileEvents.parquet").to_pylist()
    want = {}
    for r in t:
        extra = json.loads(r["extra_attributes_json"])
        if extra.get("ph") == "b":
            want.setdefault(r["thread_id"], [extra["thread_name"], 0])[1] += 1
    status, doc = http_get_json(port, "/api/profiles/lanes/tracks")
    assert status == 200, doc
    got = {}
    for g in doc["groups"]:
        for tr in g["tracks"]:
            if tr.get("tid") is not None and int(tr["tid"]) < 0:
                got[int(tr["tid"])] = [tr.get("thread_label"), int(tr["count"])]
    assert got == want
