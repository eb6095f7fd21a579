"""`nxprof export-perfetto` and `view --output-format perfetto` (docs/query.md "export-perfetto"),
decoded with Perfetto's own protobuf definitions (the `perfetto` package's perfetto_trace_pb2),
against the Parquet tables read with pyarrow, on a synthesized capture (`synth --preset tiny`:
a system profile and two device profiles) and the real PyTorch trace
tests/data/real-gpu/gpt2_eager.json.gz:

  - one slice per row: the multiset of (table, start, end, raw track, name) of the trace's
    slices (BEGIN/END paired per track in the order Perfetto reads them, which also checks
    that they nest) equals that of the table's rows, the raw track computed here from the
    track rule of src/profile/timeline_rules.h and the name from the table's search field;
  - tracks: every event track sits under its viewer group's track and is named as the viewer
    names it (the raw track plus the table's suffix, or the thread label of a labelled
    framework thread under its process's label);
  - flows: every Flow row links its Instruction (flow_ids) to its DMA block
    (terminating_flow_ids); SystemProfileEvents events share a flow id exactly when they share
    a flow_id value;
  - args: each slice's debug annotations equal its row's non-null fields;
  - counters: the CPU, host memory and device HBM usage series and the DMA/HBM/SBUF/PSUM
    series, and gpt2's memory lanes, equal the table's samples reduced by the lanes' rule
    (one per bucket of the window, the largest), computed here;
  - the CLI: usage errors, a missing profile, +T windows, and the reference's file names from
    `view --output-format perfetto`.
"""
import collections
import json
import re
import shutil
import subprocess

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from conftest import BIN, ROOT, nx

REAL = ROOT / "tests" / "data" / "real-gpu"
GROUP = {"Instruction": "Compute engines", "DmaPacketAggregated": "DMA queues", "DmaPacket": "DMA queues",
         "SemaphoreUpdate": "Semaphores", "CcInstruction": "Collectives (CC)", "CcOp": "Collectives (CC)",
         "SystemProfileEvents": "System events", "CoreBarriers": "Compute engines",
         "SbufAllocation": "SBUF memory"}
SUFFIX = {"DmaPacket": " \u00b7 packets", "CcOp": " \u00b7 ops", "CoreBarriers": " \u00b7 barriers"}
NAME_FIELD = {"Instruction": "opcode", "DmaPacketAggregated": "variable", "DmaPacket": "variable",
              "SemaphoreUpdate": "id", "CcInstruction": "description", "CcOp": "operation",
              "SystemProfileEvents": "name", "CoreBarriers": "compiler_operands",
              "SbufAllocation": "tensor_name"}
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4


def rows(profile, table):
    files = sorted(profile.glob(f"{table}.parquet")) or sorted(profile.glob(f"{table}_[0-9]*.parquet"))
    out = []
    for f in files:
        out.extend(pq.read_table(f).to_pylist())
    return out


def raw_track(table, r):
    """The track rule of src/profile/timeline_rules.h, written again from its header."""
    if table == "Instruction":
        return r.get("timeline_track") or r["engine"]
    if table in ("DmaPacket", "DmaPacketAggregated"):
        if r["queue_name"] is not None:
            return r["queue_name"]
        return "" if r["queue_idx"] is None else f"queue{r['queue_idx']}"
    if table == "SemaphoreUpdate":
        return r["id"] or ""
    if table == "CcInstruction":
        return f"CC{r['core_idx']}"
    if table == "CcOp":
        return f"stream{r['stream_id']}"
    if table == "CoreBarriers":
        return r["engine_name"]
    if table == "SbufAllocation":
        return f"partition{r['partition']}"
    if r["trace_event_source"] != "framework" and r["nc_idx"] is not None:
        return f"nc{r['nc_idx']}"
    part = lambda v: "" if v is None else str(v)
    name = f"{part(r['instance_id'])[:255]}/{part(r['process_id'])}/{part(r['thread_id'])}"
    return name if r.get("worker_gid") is None else f"rank{r['worker_gid']}/{name}"


def start_end(table, r):
    if table == "SemaphoreUpdate":
        return r["timestamp"], r["timestamp"]
    return r["start_ts"], max(r["end_ts"], r["start_ts"])


class Trace:
    """A decoded trace: tracks, slices (paired), counters, with the interned names resolved."""

    def __init__(self, path):
        t = pb.Trace()
        t.ParseFromString(path.read_bytes())
        self.tracks, self.slices, self.counters = {}, [], collections.defaultdict(list)
        names = {1: {}, 2: {}, 3: {}}
        open_ = collections.defaultdict(list)
        assert t.packet[0].sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        for k in t.packet:
            assert k.trusted_packet_sequence_id == 1
            for e in k.interned_data.event_names:
                names[1][e.iid] = e.name
            for e in k.interned_data.debug_annotation_names:
                names[2][e.iid] = e.name
            for e in k.interned_data.event_categories:
                names[3][e.iid] = e.name
            if k.HasField("track_descriptor"):
                d = k.track_descriptor
                assert d.uuid not in self.tracks
                self.tracks[d.uuid] = d
            if not k.HasField("track_event"):
                continue
            assert k.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            e = k.track_event
            assert e.track_uuid in self.tracks, "an event before its track's descriptor"
            if e.type == COUNTER:
                v = e.counter_value if e.HasField("counter_value") else e.double_counter_value
                self.counters[e.track_uuid].append((k.timestamp, v))
                continue
            if e.type == END:
                s = open_[e.track_uuid].pop()
                assert k.timestamp >= s["start"] and k.timestamp <= s["outer_end"]
                s["end"] = k.timestamp
                continue
            args = {}
            for a in e.debug_annotations:
                which = a.WhichOneof("value")
                v = getattr(a, which)
                args[names[2][a.name_iid]] = json.loads(v) if which == "legacy_json_value" else v
            stack = open_[e.track_uuid]
            s = {"start": k.timestamp, "end": k.timestamp, "track": e.track_uuid, "name": names[1][e.name_iid],
                 "table": names[3][e.category_iids[0]], "args": args, "flows": list(e.flow_ids),
                 "terminating": list(e.terminating_flow_ids),
                 "outer_end": stack[-1]["outer_end"] if stack else 2**64}
            self.slices.append(s)
            if e.type == BEGIN:
                stack.append(s)
        assert not any(open_.values()), "slices left open"

    def event_track(self, uuid):
        """The event track of a slice's track (a lane's parent when it is a lane)."""
        d = self.tracks[uuid]
        return self.tracks[d.parent_uuid] if not d.HasField("description") else d

    def ancestors(self, uuid):
        out = []
        while uuid:
            out.append(self.tracks[uuid].name)
            uuid = self.tracks[uuid].parent_uuid
        return out


def export(profile, out, *args):
    r = subprocess.run([str(BIN), "export-perfetto", str(profile), "--out", str(out), *args], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return Trace(out)


def check_slices(profile, trace, tables):
    for table in tables:
        want = collections.Counter()
        for r in rows(profile, table):
            s, e = start_end(table, r)
            if s is None:
                continue
            name = r[NAME_FIELD[table]]
            want[(s, e, raw_track(table, r), table if name is None else str(name))] += 1
        got = collections.Counter()
        for s in trace.slices:
            if s["table"] == table:
                got[(s["start"], s["end"], trace.event_track(s["track"]).description, s["name"])] += 1
        assert sum(got.values()) == sum(want.values()), (table, sum(got.values()), sum(want.values()))
        assert got == want, table


def check_track_names(trace):
    for s in trace.slices:
        d = trace.event_track(s["track"])
        chain = trace.ancestors(d.uuid)
        assert chain[-1] == GROUP[s["table"]], chain
        nc = re.fullmatch(r"nc(\d+)", d.description) if s["table"] == "SystemProfileEvents" else None
        thread = re.fullmatch(r"(?:rank(\d+)/)?[^/]*/(\d+)/(\d+)", d.description)
        if nc:
            assert chain == [f"NeuronCore {nc.group(1)}", GROUP[s["table"]]], chain
        elif len(chain) == 2:   # directly under the group: the viewer's name
            assert d.name == d.description + SUFFIX.get(s["table"], ""), (d.name, d.description)
        else:                   # a framework thread under its process
            assert s["table"] == "SystemProfileEvents" and len(chain) == 3, chain
            if not re.fullmatch(r"thread \d+", chain[0]):
                continue        # a labelled thread: its label (checked by name in test_gpt2_eager)
            assert thread, d.description
            rank = f"rank {thread.group(1)} / " if thread.group(1) else ""
            assert chain[:2] == [f"thread {thread.group(3)}", f"{rank}process {thread.group(2)}"], chain


def check_args(profile, trace, table):
    by_start = collections.defaultdict(list)
    for s in trace.slices:
        if s["table"] == table:
            by_start[s["start"]].append(s["args"])
    for r in rows(profile, table):
        s, _ = start_end(table, r)
        want = {k: v for k, v in r.items() if v is not None}
        args = by_start[s]
        for a in args:   # floats compared as stored: FLOAT columns widen to double exactly
            if a == want:
                break
        else:
            raise AssertionError((table, want, args))


def bucket_max(samples, start, end, width):
    """usage.h's reduction, written again: one sample per bucket, the largest (ties: first)."""
    length = end - start + 1
    best = {}
    for t, v in samples:
        if start <= t <= end:
            b = (t - start) * width // length
            if b not in best or v > best[b][1]:
                best[b] = (t, v)
    return [best[b] for b in sorted(best)]


WIDTH = 50000   # NX_PF_COUNTER_WIDTH


def span(profile):
    m = rows(profile, "Metadata")
    return min(r["first_hw_timestamp"] for r in m), max(r["last_hw_timestamp"] for r in m)


def same_points(got, want, what):
    assert [t for t, _ in got] == [t for t, _ in want], what
    assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-7), what


def counter(trace, name):
    uuids = [u for u, d in trace.tracks.items() if d.HasField("counter") and d.name == name]
    assert len(uuids) == 1, (name, uuids)
    return trace.counters[uuids[0]]


def check_usage(profile, trace, table, value, name_of):
    """usage.h: DmaUsage and HbmUsage have no "before" sample, the other lanes do."""
    s0, s1 = span(profile)
    series = collections.defaultdict(list)
    for r in rows(profile, table):
        if r["timestamp"] is not None and r[value] is not None and name_of(r) is not None:
            series[name_of(r)].append((r["timestamp"], r[value]))
    assert series, table
    for name, samples in series.items():
        before = [x for x in samples if x[0] < s0] if table not in ("DmaUsage", "HbmUsage") else []
        want = ([max(before, key=lambda x: x[0])] if before else []) + bucket_max(samples, s0, s1, WIDTH)
        same_points(counter(trace, name), want, name)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("pftiny")
    nx("synth", "--out", root / "cap", "--preset", "tiny")
    nx("process", root / "cap", "--output-file", root / "prof")
    return root


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    root = tmp_path_factory.mktemp("pfgpt2")
    (root / "cap").mkdir()
    shutil.copy(REAL / "gpt2_eager.json.gz", root / "cap")
    nx("process", root / "cap", "--output-file", root / "prof")
    return root


DEVICE_TABLES = ["Instruction", "DmaPacketAggregated", "DmaPacket", "SemaphoreUpdate", "CcInstruction", "CcOp"]


def test_device_profile(tiny, tmp_path):
    dev = next((tiny / "prof" / "devices").iterdir())
    trace = export(dev, tmp_path / "d.pftrace")
    check_slices(dev, trace, DEVICE_TABLES)
    check_track_names(trace)
    for table in ("Instruction", "DmaPacket", "SemaphoreUpdate"):
        check_args(dev, trace, table)
    for table, value in (("DmaUsage", "current_throughput"), ("HbmUsage", "current_throughput"),
                         ("SbufUsage", "avg_util_percent"), ("PsumUsage", "avg_util_percent")):
        label = {"DmaUsage": "DMA throughput", "HbmUsage": "HBM usage", "SbufUsage": "SBUF usage",
                 "PsumUsage": "PSUM usage"}[table]
        if rows(dev, table):
            check_usage(dev, trace, table, value, lambda r, l=label: f"{l} core {r['pcore_idx']}")


def test_device_flows(tiny, tmp_path):
    dev = next((tiny / "prof" / "devices").iterdir())
    trace = export(dev, tmp_path / "d.pftrace")
    by_id = {}
    for s in trace.slices:
        if s["table"] in ("Instruction", "DmaPacketAggregated"):
            by_id[(s["table"], s["args"]["id"])] = s
    table = {"instruction": "Instruction", "dma_block": "DmaPacketAggregated"}
    flows = rows(dev, "Flow")
    assert flows
    for r in flows:
        src, dst = by_id[(table[r["in_table"]], r["in_id"])], by_id[(table[r["out_table"]], r["out_id"])]
        assert set(src["flows"]) & set(dst["terminating"]), r
    assert sum(len(s["flows"]) for s in trace.slices) == len(flows)
    assert sum(len(s["terminating"]) for s in trace.slices) == len(flows)


def check_system_flows(profile, trace):
    want = collections.defaultdict(set)
    for r in rows(profile, "SystemProfileEvents"):
        for v in r["flow_id"] or []:
            if v is not None:
                want[v].add((r["start_ts"], r["name"]))
    got = collections.defaultdict(set)
    for s in trace.slices:
        for f in s["flows"]:
            got[f].add((s["start"], s["name"]))
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, want.values()))


def test_system_profile(tiny, tmp_path):
    prof = tiny / "prof"
    trace = export(prof, tmp_path / "s.pftrace")
    check_slices(prof, trace, ["SystemProfileEvents"])
    check_track_names(trace)
    check_args(prof, trace, "SystemProfileEvents")
    check_system_flows(prof, trace)
    check_usage(prof, trace, "HostMemUsage", "used_percent", lambda r: "Host memory host")
    check_usage(prof, trace, "SystemProfileHbmUsage", "total_bytes",
                lambda r: f"Device HBM device {r['device_idx']} hbm {r['hbm_idx']}")
    cpu = [r for r in rows(prof, "CpuUsage") if r["cpu_id"] == "average"]
    if cpu:
        check_usage(prof, trace, "CpuUsage", "util_percent",
                    lambda r: f"CPU (host) {r['cpu_id']}" if r["cpu_id"] == "average" else None)


def test_gpt2_eager(gpt2, tmp_path):
    prof = gpt2 / "prof"
    trace = export(prof, tmp_path / "g.pftrace")
    check_slices(prof, trace, ["SystemProfileEvents"])
    check_track_names(trace)
    check_system_flows(prof, trace)
    names = {d.name for d in trace.tracks.values()}
    assert {"python3 (469)", "thread 469 (python3)", "thread 520 (pt_autograd_0)", "stream 7"} <= names
    # The memory lanes: Kineto's [memory] instants, "Total Allocated" per device.
    s0, s1 = span(prof)
    mem = collections.defaultdict(list)
    for r in rows(prof, "SystemProfileEvents"):
        if r["name"] == "[memory]" and r["trace_event_source"] == "framework":
            a = json.loads(r["extra_attributes_json"])["args"]
            if a.get("Device Type") == 1:
                mem[a["Device Id"]].append((r["start_ts"], float(a["Total Allocated"])))
    assert mem
    for dev, samples in mem.items():
        same_points(counter(trace, f"GPU {dev} memory allocated"), bucket_max(samples, s0, s1, WIDTH), dev)


def test_window_and_tables(tiny, tmp_path):
    dev = next((tiny / "prof" / "devices").iterdir())
    s0, _ = span(dev)
    trace = export(dev, tmp_path / "w.pftrace", "--start", "+1us", "--end", "+20us", "--tables", "Instruction")
    assert {s["table"] for s in trace.slices} == {"Instruction"}
    want = [r for r in rows(dev, "Instruction") if r["end_ts"] >= s0 + 1000 and r["start_ts"] <= s0 + 20000]
    assert 0 < len(trace.slices) == len(want)


def test_cli_errors(tiny, tmp_path):
    dev = next((tiny / "prof" / "devices").iterdir())
    def run(*args):
        return subprocess.run([str(BIN), "export-perfetto", *map(str, args)], capture_output=True, text=True)
    assert run(dev).returncode == 2
    assert run("--out", tmp_path / "x").returncode == 2
    r = run(dev, "--out", tmp_path / "x", "--tables", "Summary")
    assert r.returncode == 2 and "unknown table 'Summary'" in r.stderr
    r = run(dev, "--out", tmp_path / "x", "--start", "5", "--end", "4")
    assert r.returncode == 2 and "before" in r.stderr
    assert run(tmp_path / "nope", "--out", tmp_path / "x").returncode == 1
    (tmp_path / "empty").mkdir()
    r = run(tmp_path / "empty", "--out", tmp_path / "x")
    assert r.returncode == 1 and "not a profile directory" in r.stderr and not (tmp_path / "x").exists()
    r = run(dev, "--out", tmp_path / "no-such-dir" / "x.pftrace")
    assert r.returncode == 1 and not (tmp_path / "no-such-dir").exists()


def test_view_output_format(tmp_path):
    nx("synth", "--out", tmp_path / "cap", "--preset", "tiny")
    out = tmp_path / "out"
    r = subprocess.run([str(BIN), "view", "-d", str(tmp_path / "cap"), "--ingest-only", "--output-format", "perfetto",
                        "--output-file", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    devices = sorted(p.name for p in (out / "devices").iterdir())
    want = {"system_profile.pftrace"} | {f"device_profile_model_{d.split('-', 1)[1]}.pftrace" for d in devices}
    assert {p.name for p in out.glob("*.pftrace")} == want
    for d in devices:
        trace = Trace(out / f"device_profile_model_{d.split('-', 1)[1]}.pftrace")
        check_slices(out / "devices" / d, trace, DEVICE_TABLES)
    check_slices(out, Trace(out / "system_profile.pftrace"), ["SystemProfileEvents"])
