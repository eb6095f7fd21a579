"""GPU figures of one PyTorch (Kineto) rank trace, computed from its raw JSON alone: the
independent expectation that tests/python/test_scale_spark.py holds the Spark job
(scale/nxprof_spark.py) and `nxprof summary --format json` against, and that
tests/python/test_hta_oracle.py holds HTA against.

Times are integer ns exactly as docs/processing.md says the processor makes them: the µs
decimal text times 1000, rounded to the nearest ns with halves away from zero, plus the
file's top-level baseTimeNanoseconds. The JSON is parsed with Decimal numbers so no figure
goes through a binary float.

  device activity    X events of cat kernel, gpu_memcpy, gpu_memset (Kineto's GPU rows;
                     annotations excluded), on device "GPU <args.device>" (else the pid);
                     in a Neuron capture (Capture), every neuron_hw line of
                     runtime_events.tsv with an nc_idx, a kernel on "NeuronCore <nc_idx>"
  busy               the length of the union of a device's activity intervals; a kind's
                     time (kernel_ns, ...) the length of the union of that kind's intervals
  wall               the rank's trace span: first start to last end over every event that
                     has a ts (each becomes a SystemProfileEvents row)
  steps              X events named ProfilerStep#<N> of cat user_annotation (the host's step,
                     not Kineto's GPU-side copy), or X events whose args hold an integer
                     step_num (JAX's StepTraceAnnotation); a step's GPU figures are the
                     union of the activity of every device of the rank (of each kind, for
                     kernel_ns, ...) clipped to the window; kernel_count counts the kernels
                     starting inside it
  collectives        X events whose name is a communication op (COMM below), each given the
                     step whose window holds its start, numbered per (step, cat, name)
"""
import gzip
import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from trace_ranks import trace_rank

GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
STEP = re.compile(r"^ProfilerStep#(\d+)$")
COMM = re.compile(r"nccl|gloo|all_?reduce|all_?gather|reduce_?scatter|broadcast|all_?to_?all",
                  re.IGNORECASE)


def load(path):
    """The trace's JSON, numbers with decimals as Decimal."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)


def to_ns(us, base):
    """A µs JSON number as integer ns (round half away from zero), plus the base."""
    return int((Decimal(us) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)) + base


class Trace:
    """One rank's trace: its rank, its events as (start_ns, end_ns, event) slices."""

    def __init__(self, path):
        self._read(path, load(path))

    def _read(self, path, doc):
        base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        self.path = Path(path)
        self.base = base
        self.rank = trace_rank(path, doc)
        self.timed = []    # (start, end) of every event with a ts
        self.slices = []   # (start, end, event) of the X events
        for e in events:
            if not isinstance(e, dict) or e.get("ph") == "M" or "ts" not in e:
                continue
            start = to_ns(e["ts"], base)
            end = start + (to_ns(e.get("dur", 0), 0) if e.get("ph") == "X" else 0)
            self.timed.append((start, end))
            if e.get("ph") == "X":
                self.slices.append((start, end, e))

    def span(self):
        """(first start, last end) over every row of the trace."""
        return min(s for s, _ in self.timed), max(e for _, e in self.timed)

    def gpu(self):
        """{device: [(start, end, kind)]} of the GPU activity, kind kernel/memcpy/memset."""
        out = {}
        for s, e, ev in self.slices:
            kind = GPU_CATS.get(ev.get("cat"))
            if kind:
                args = ev.get("args") or {}
                dev = args.get("device", ev.get("pid"))
                out.setdefault(f"GPU {dev}", []).append((s, e, kind))
        return out

    def steps(self):
        """[(step number, name, start, end)] in order of start, then number."""
        out = [(n, ev.get("name", ""), s, e) for s, e, ev in self.slices
               if (n := step_number(ev)) is not None]
        return sorted(out, key=lambda x: (x[2], x[0]))

    def collectives(self):
        """{(step, cat, name, k): start} of the communication events inside a step window,
        k numbering one rank's events of that (step, cat, name) by start."""
        seen, out, windows = {}, {}, self.steps()
        for s, _, ev in sorted(self.slices, key=lambda x: (x[0], x[1])):
            if not COMM.search(ev.get("name", "")):
                continue
            step = next((n for n, _, a, b in windows if a <= s < b), None)
            if step is None:
                continue
            key = (step, ev.get("cat"), ev["name"])
            k = seen.get(key, 0)
            seen[key] = k + 1
            out[key + (k,)] = s
        return out


def step_number(ev):
    """The step an X event marks, or None: ProfilerStep#N of cat user_annotation, or an
    integer args.step_num (a number or a string of digits)."""
    m = STEP.match(ev.get("name", ""))
    if m and ev.get("cat") == "user_annotation":
        return int(m.group(1))
    args = ev.get("args")
    num = args.get("step_num") if isinstance(args, dict) else None
    if isinstance(num, int) and not isinstance(num, bool) and num >= 0:
        return num
    if isinstance(num, str) and num.isdigit() and num.isascii():
        return int(num)
    return None


class Capture(Trace):
    """A Neuron capture session folder (docs/capture-format.md): its trace.json, if any, as a
    Trace, plus the lines of its runtime_events.tsv (one row each; rank from worker_gid)."""

    def __init__(self, folder):
        tsv = sorted(Path(folder).glob("**/runtime_events.tsv"))
        assert len(tsv) == 1, f"{folder}: one session expected, found {tsv}"
        chrome = tsv[0].parent / "trace.json"
        self._read(chrome, load(chrome) if chrome.is_file() else {"traceEvents": []})
        self.neuron = []    # (start, end, nc_idx) of the neuron_hw lines
        gids = set()
        for line in tsv[0].read_text().splitlines()[2:]:
            start, end, source, _, _, _, nc, gid = line.split("\t")[:8]
            self.timed.append((int(start), int(end)))
            gids.add(gid)
            if source == "neuron_hw" and nc:
                self.neuron.append((int(start), int(end), int(nc)))
        if self.rank is None and len(gids - {""}) == 1:
            self.rank = int(next(iter(gids - {""})))

    def gpu(self):
        out = super().gpu()
        for s, e, nc in self.neuron:
            out.setdefault(f"NeuronCore {nc}", []).append((s, e, "kernel"))
        return out


def device_order(name):
    """GPUs before NeuronCores, then by number."""
    kind, number = name.rsplit(" ", 1)
    return kind != "GPU", int(number)


def union(intervals):
    """The disjoint segments covering intervals [(start, end, ...)], in order."""
    segs = []
    for s, e, *_ in sorted(intervals):
        if segs and s <= segs[-1][1]:
            segs[-1][1] = max(segs[-1][1], e)
        else:
            segs.append([s, e])
    return segs


def clip(s, e, a, b):
    """The length of [s, e) inside [a, b)."""
    return max(0, min(e, b) - max(s, a))


def devices(trace):
    """The contract's "devices" rows of one rank: per device its span, busy and idle time,
    utilization and per-kind time and count."""
    start, end = trace.span()
    rows = []
    for dev, acts in sorted(trace.gpu().items(), key=lambda d: device_order(d[0])):
        busy = sum(e - s for s, e in union(acts))
        row = {"device": dev, "rank": trace.rank, "start_ns": start, "end_ns": end,
               "wall_ns": end - start, "busy_ns": busy, "idle_ns": end - start - busy,
               "utilization": busy / (end - start) if end > start else 0.0}
        for kind in ("kernel", "memcpy", "memset"):
            mine = [(s, e) for s, e, k in acts if k == kind]
            row[f"{kind}_ns"] = sum(e - s for s, e in union(mine))
            row[f"{kind}_count"] = len(mine)
        rows.append(row)
    return rows


def steps(trace):
    """The contract's "steps" rows of one rank (GPU figures over all its devices)."""
    acts = [a for dev in trace.gpu().values() for a in dev]
    segs = {kind: union([x for x in acts if kind in (None, x[2])])
            for kind in (None, "kernel", "memcpy", "memset")}
    rows = []
    for n, name, a, b in trace.steps():
        row = {"name": name, "step": n, "rank": trace.rank, "start_ns": a, "end_ns": b,
               "duration_ns": b - a, "gpu_busy_ns": sum(clip(s, e, a, b) for s, e in segs[None])}
        for kind in ("kernel", "memcpy", "memset"):
            row[f"{kind}_ns"] = sum(clip(s, e, a, b) for s, e in segs[kind])
        row["kernel_count"] = sum(1 for s, _, k in acts if k == "kernel" and a <= s < b)
        rows.append(row)
    return rows


def _median(values):
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def skew(traces):
    """Per step number over the ranks that have it: {step: {n_ranks, min_ns, max_ns,
    median_ns, skew_ns, max_over_median, slowest_rank}} (ties: the lower rank)."""
    per = {}
    for t in traces:
        for r in steps(t):
            per.setdefault(r["step"], []).append((r["duration_ns"], t.rank))
    out = {}
    for n, v in per.items():
        durs = [d for d, _ in v]
        med = _median(durs)
        top = max(durs)
        out[n] = {"n_ranks": len(v), "min_ns": min(durs), "max_ns": top, "median_ns": med,
                  "skew_ns": top - min(durs), "max_over_median": top / med if med else None,
                  "slowest_rank": min(r for d, r in v if d == top)}
    return out


def _latest(starts):
    """(straggler rank, earliest start, latest start) of {rank: start}; ties: lower rank."""
    late = max(starts.values())
    return min(r for r, s in starts.items() if s == late), min(starts.values()), late


def stragglers(traces):
    """{(step, cat, name, k): {straggler_rank, lateness_ns, n_ranks}}: for each step's start
    (key (step, "step", name, 0)) and each collective occurrence, the rank that started it
    last and by how much after the earliest rank."""
    starts = {}
    for t in traces:
        for n, name, a, _ in t.steps():
            starts.setdefault((n, "step", name, 0), {})[t.rank] = a
        for key, s in t.collectives().items():
            starts.setdefault(key, {})[t.rank] = s
    out = {}
    for key, by_rank in starts.items():
        rank, first, last = _latest(by_rank)
        out[key] = {"straggler_rank": rank, "lateness_ns": last - first, "n_ranks": len(by_rank)}
    return out
