"""GPU figures of one PyTorch (Kineto) rank trace, computed from its raw JSON alone: the
independent expectation that tests/e2e/python/test_scale_spark.py holds the Spark job
(scale/nxprof_spark.py) and `nxprof summary --format json` against, and that
tests/e2e/python/test_hta_oracle.py holds HTA against.

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
  collectives        X events whose name holds a word of the collective rule (the words of
                     scale/nxprof_spark.py, which test_scale_spark checks against nxprof's
                     own classification), on the host or a kernel on a GPU (a pid that
                     process_labels names "GPU <n>"); each gets the step of its rank whose
                     window holds its start (the latest-starting one), -1 when none, and its
                     occurrence: its place among the rank's collectives of that step and name
  skew, stragglers   `nxprof ranks` (docs/analyses.md "Ranks"), over the ranked traces:
                     medians are the lower middle, ties go to the lower rank
"""
import gzip
import json
import re
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from trace_ranks import trace_rank

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scale"))
from nxprof_spark import COLLECTIVE_WORDS  # noqa: E402

GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
STEP = re.compile(r"^ProfilerStep#(\d+)$")
COLLECTIVE = re.compile("|".join(map(re.escape, COLLECTIVE_WORDS)), re.IGNORECASE | re.ASCII)


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
        self.gpu_pids = {e.get("pid") for e in events
                         if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_labels"
                         and re.fullmatch(r"GPU \d+", str((e.get("args") or {}).get("labels")))}
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
        """{(step, name, occurrence): start} of the collectives (the rule above)."""
        windows = self.steps()
        rows = []
        for s, _, ev in self.slices:
            name = ev.get("name", "")
            on_gpu = ev.get("pid") in self.gpu_pids
            if not COLLECTIVE.search(name) or (on_gpu and ev.get("cat") != "kernel"):
                continue
            holding = [(a, n) for n, _, a, b in windows if a <= s < b]
            rows.append((max(holding)[1] if holding else -1, name, s))
        out, seen = {}, {}
        for step, name, s in sorted(rows):
            k = seen.get((step, name), 0)
            seen[(step, name)] = k + 1
            out[(step, name, k)] = s
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


def _lower_median(values):
    v = sorted(values)
    return v[(len(v) - 1) // 2]


def _ranked(traces):
    return [t for t in traces if t.rank is not None and t.rank >= 0]


def stragglers(traces):
    """`nxprof ranks`' "stragglers": per collective instance seen on 2 ranks or more, in
    order of step, first start, name."""
    starts = {}
    for t in _ranked(traces):
        for key, s in t.collectives().items():
            starts.setdefault(key, []).append((s, t.rank))
    out = []
    for (step, name, k), v in starts.items():
        if len(v) < 2:
            continue
        first, late = min(v), max(s for s, _ in v)
        last = min(r for s, r in v if s == late)
        out.append({"step": step, "name": name, "occurrence": k, "ranks": len(v),
                    "first_rank": first[1], "first_start_ns": first[0], "straggler_rank": last,
                    "start_ns": late, "lateness_ns": late - first[0],
                    "lateness_vs_median_ns": late - _lower_median(s for s, _ in v)})
    return sorted(out, key=lambda g: (g["step"], g["first_start_ns"], g["name"], g["occurrence"]))


def skew(traces):
    """`nxprof ranks`' "steps": per step number, over the ranked traces that have it (each
    with its first row of that number)."""
    per = {}
    for t in _ranked(traces):
        for n, _, a, b in sorted(t.steps(), key=lambda x: (x[0], x[2])):
            per.setdefault(n, {}).setdefault(t.rank, (a, b))
    late = {}
    for g in stragglers(traces):   # in output order: the first of equal latenesses stays
        if g["step"] not in late or g["lateness_ns"] > late[g["step"]][1]:
            late[g["step"]] = (g["straggler_rank"], g["lateness_ns"])
    out = {}
    for n, by_rank in per.items():
        durs = {r: b - a for r, (a, b) in by_rank.items()}
        top, low, med = max(durs.values()), min(durs.values()), _lower_median(durs.values())
        out[n] = {"step": n, "durations_ns": durs, "starts_ns": {r: a for r, (a, _) in by_rank.items()},
                  "min_ns": low, "max_ns": top, "median_ns": med, "skew_ns": top - low,
                  "max_over_median": top / med if med else 0.0,
                  "slowest_rank": min(r for r, d in durs.items() if d == top),
                  "fastest_rank": min(r for r, d in durs.items() if d == low),
                  "straggler_rank": late.get(n, (None, 0))[0], "max_lateness_ns": late.get(n, (None, 0))[1]}
    return out
