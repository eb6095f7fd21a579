"""The system profile of each real PyTorch trace in tests/data/chrome-traces, checked against
depth and self time worked out here from the trace's JSON alone.

From the JSON (json with exact decimals, gzip): the framework rows nxprof writes, as
tests/e2e/python/chrome_model.py works them out by the rules of docs/processing.md ("System
tables"): complete "X" events (a missing dur is 0, a negative one is dropped), B/E pairs
matched per (pid, tid) as a stack, instants, counters, flows and every other phase as
zero-duration rows, async b/e pairs per (pid, cat, id) on a track per (cat, name); times are
the microsecond text turned into ns exactly (halves away from zero), plus
baseTimeNanoseconds. Each thread (or async track) is a track; events are ordered by start,
ties in file order. Then, by the rule of
src/profile/nesting.h but computed another way: an event's depth is the number of earlier
events in (start, -end, position) order that end no earlier than it (a Fenwick tree over
the ends), its parent the nearest such event (a monotonic stack over the ends), and its
self time its duration less its children's, at least 0.

Checked against nxprof: `top --by name --format json` (count, inclusive and self sums per
name, and the wall time), `summary --format json` (busy time = union of depth-0 events per
thread, with their count), and that top and summary exit 0 in text form too. And the
flow_id of every framework event (read back with pyarrow): [args.flow_id], else
[args.correlation] (the number Kineto gives a launch and the kernel it started), then
"<cat>:<bind_id>"; a flow event's "<cat>:<id>"; else null; each written "r<rank>:<id>" in a
file with a rank (trace_ranks.py).
"""
import gzip
import json
from bisect import bisect_left
from collections import Counter, defaultdict
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from chrome_model import model, thread_id
from conftest import CHROME_TRACES, nx, profile_files
from trace_ranks import scoped, trace_rank


def gpu_activity(events):
    """Whether a row of chrome_model is device activity by docs/analyses.md: a slice of a
    process labelled "GPU <n>" (or named "/device:GPU:<n>") whose cat is kernel, gpu_memcpy
    or gpu_memset (without a cat: any row of a "Stream #" thread). None: not on a GPU."""
    gpus, streams = set(), set()
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "M":
            v = str((e.get("args") or {}).get("labels" if e.get("name") == "process_labels" else "name", ""))
            if e.get("name") in ("process_labels", "process_name") and (
                    (v.startswith("GPU ") and v[4:].isdigit()) or
                    (v.startswith("/device:GPU:") and v[12:].isdigit())):
                gpus.add(thread_id(e.get("pid")))
            if e.get("name") == "thread_name" and v.startswith("Stream #"):
                streams.add((thread_id(e.get("pid")), thread_id(e.get("tid"))))

    def of(r):
        if r["ph"] is not None or r["thread"][0] not in gpus:
            return None
        cat = r["event"].get("cat")
        if cat is None:
            return r["thread"] in streams
        return cat in ("kernel", "gpu_memcpy", "gpu_memset")
    return of


def framework_events(path):
    """[(thread, position, start, end, name, flow_id, gpu)] of one trace file: every row
    chrome_model works out from its JSON, flow ids scoped to the file's rank, gpu whether it
    is device activity (gpu_activity)."""
    doc = json.loads(gzip.open(path).read(), parse_float=Decimal)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    rank = trace_rank(path, doc)
    gpu = gpu_activity(events)

    def flows(f):
        return None if f is None else [scoped(x, rank) for x in f]

    return [(r["thread"], r["pos"], r["start"], r["end"], r["name"], flows(r["flow"]), gpu(r))
            for r in model(events, base).rows]


class Fenwick:
    def __init__(self, n):
        self.t = [0] * (n + 1)

    def add(self, i):
        i += 1
        while i < len(self.t):
            self.t[i] += 1
            i += i & -i

    def prefix(self, i):
        """How many of positions [0, i) were added."""
        s = 0
        while i > 0:
            s += self.t[i]
            i -= i & -i
        return s


def nest(track):
    """depth and self time of each event of one track: {position: (depth, self, start, end)}."""
    order = sorted(track, key=lambda e: (e[2], -e[3], e[1]))
    ends = sorted({e[3] for e in order})
    fw = Fenwick(len(ends))
    seen = 0
    stack, selfs, depth = [], [e[3] - e[2] for e in order], [0] * len(order)
    for i, (_, _, start, end, *_) in enumerate(order):
        k = bisect_left(ends, end)
        depth[i] = seen - fw.prefix(k)      # earlier events ending at or after this end
        fw.add(k)
        seen += 1
        while stack and order[stack[-1]][3] < end:
            stack.pop()
        if stack:
            selfs[stack[-1]] -= end - start
        stack.append(i)
    return {e[1]: (depth[i], max(selfs[i], 0), e[2], e[3]) for i, e in enumerate(order)}


def expected(path):
    events = framework_events(path)
    by_thread = defaultdict(list)
    for e in events:
        by_thread[e[0]].append(e)
    values = {}
    busy = {}
    for thread, track in by_thread.items():
        v = nest(track)
        values.update(v)
        # Union of the depth-0 intervals, in start order; on a GPU's thread, of its kernels,
        # memcpys and memsets at any depth instead (its annotations left out).
        gpu = {e[1]: e[6] for e in track}
        tops = sorted((s, e) for pos, (d, _, s, e) in v.items()
                      if (d == 0 if gpu[pos] is None else gpu[pos]))
        total, cur = 0, None
        for s, e in tops:
            if cur and s <= cur[1]:
                cur[1] = max(cur[1], e)
                continue
            if cur:
                total += cur[1] - cur[0]
            cur = [s, e]
        if cur:
            total += cur[1] - cur[0]
        if tops:   # a thread with nothing counted (a GPU's annotations only) is not listed
            busy[thread] = (total, len(tops))
    names = defaultdict(lambda: [0, 0, 0])
    for thread, pos, start, end, name, *_ in events:
        g = names[name]
        g[0] += 1
        g[1] += end - start
        g[2] += values[pos][1]
    first = min(e[2] for e in events)
    last = max(e[3] for e in events)
    return names, busy, (first, last)


@pytest.mark.parametrize("trace", [t.name for t in CHROME_TRACES])
def test_self_time_and_busy_time_match_the_json(trace, framework_profiles):
    prof = framework_profiles[trace]
    path = next(t for t in CHROME_TRACES if t.name == trace)
    names, busy, (first, last) = expected(path)

    top = json.loads(nx("top", prof, "--by", "name", "--format", "json", "--limit", "0", "--profiler-rows").stdout)
    assert top["table"] == "SystemProfileEvents"
    assert (top["first_ts"], top["last_ts"], top["wall_ns"]) == (first, last, last - first)
    got = {g["name"]: [g["count"], g["sum_duration_ns"], g["sum_self_ns"]] for g in top["top"]}
    assert got == {k: v for k, v in names.items()}
    selfs = [g["sum_self_ns"] for g in top["top"]]
    assert selfs == sorted(selfs, reverse=True), "ordered by self time"

    summary = json.loads(nx("summary", prof, "--format", "json", "--profiler-rows").stdout)
    assert summary["kind"] == "system"
    assert summary["wall"] == {"first_ts": first, "last_ts": last, "duration_ns": last - first}
    got_busy = summary["threads"]
    # Numeric threads are named <instance>/<pid>/<tid>; string ones by a hash of the text:
    # compare those as a multiset of (busy, top-level events).
    numeric = {f"unknown/{k[0]}/{k[1]}": v for k, v in busy.items()
               if len(k) == 2 and isinstance(k[0], int) and isinstance(k[1], int)}
    for th in got_busy:
        if th["thread"] in numeric:
            assert (th["busy_ns"], th["top_level_events"]) == numeric[th["thread"]], th["thread"]
    assert sorted((t["busy_ns"], t["top_level_events"]) for t in got_busy) == sorted(busy.values())
    assert [t["name"] for t in summary["top_operators"]] == [g["name"] for g in top["top"][:10]]

    text = nx("top", prof).stdout
    assert "sum_self_ns" in text
    text = nx("summary", prof).stdout
    assert "Top 10 operators by self time" in text or "operators by self time" in text


@pytest.mark.parametrize("trace", [t.name for t in CHROME_TRACES])
def test_without_the_index_the_same_answers(trace, framework_profiles, tmp_path):
    """A copy of the profile without its timeline index: depth and self time are
    computed from the table, with a note on stderr, and every answer stays the same."""
    import shutil

    prof = framework_profiles[trace]
    copy = tmp_path / "copy"
    shutil.copytree(prof, copy)
    (copy / ".SystemProfileEvents.nxtl").unlink()
    for args in (["top", "--by", "cat", "--format", "csv", "--limit", "0"], ["summary", "--format", "json"]):
        a = nx(args[0], prof, *args[1:])
        b = nx(args[0], copy, *args[1:])
        assert b.stdout.replace(str(copy), str(prof)) == a.stdout
        assert "note:" in b.stderr and "note:" not in a.stderr


@pytest.mark.parametrize("trace", [t.name for t in CHROME_TRACES])
def test_flow_ids_match_the_json(trace, framework_profiles):
    prof = framework_profiles[trace]
    path = next(t for t in CHROME_TRACES if t.name == trace)
    want = Counter((start, end, name, tuple(flow) if flow else None)
                   for _, _, start, end, name, flow, _ in framework_events(path))
    rows = []
    for f in profile_files(prof)["SystemProfileEvents"]:
        rows += pq.read_table(f, columns=["start_ts", "end_ts", "name", "trace_event_source", "flow_id"]).to_pylist()
    got = Counter((r["start_ts"], r["end_ts"], r["name"], tuple(r["flow_id"]) if r["flow_id"] else None)
                  for r in rows if r["trace_event_source"] == "framework")
    assert got == want
    linked = Counter(f for (_, _, _, f), n in want.items() for _ in range(n) if f)
    if linked:
        assert any(n >= 2 for n in linked.values()), "some flow id links two events"
