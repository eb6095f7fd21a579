"""HTA (HolisticTraceAnalysis 0.5.0, in .venv-hta/: it needs pandas 2.x) as a second oracle of
the GPU figures, on the real traces gpt2_eager.json.gz and the DDP pair (ddp_rank0/1).
Runs with .venv-hta/bin/python and `--noconftest` (the .venv conftest imports pyarrow, which
this environment does not have); docs/analyses.md explains every difference found here.

  a. tests/e2e/hta/hta_figures.py's JSON of each set equals the committed
     tests/e2e/hta/expected/<set>.json (HTA's answers are deterministic; the pins are exact), and
     an analysis HTA cannot do is recorded as {"error": ...} (get_potential_stragglers on
     these traces, and the temporal breakdown of gpt2_eager), never a crash.
  b. Per-rank kernel time by HTA class (COMPUTATION, MEMORY; the sum over its per-kernel
     rows, "others" included) equals HTA's rules applied here to the raw JSON (hta_model);
     and against the exact figures of tests/e2e/python/gpu_oracle.py: the same events in exact
     ns lie within (hta, hta + 2 µs per event], the µs rounding, and every event HTA leaves
     out was launched at or after the start of the last ProfilerStep.
  c. Per-rank idle time and kernel time (the span) of HTA's temporal breakdown (DDP) and
     per-stream idle time of its idle-time breakdown (both sets) equal hta_model's.
  d. HTA's profiler steps are the oracle's steps, and its per-step GPU time (the iteration
     its parser gives each kept GPU event: its launching CPU event's ProfilerStep) equals
     hta_model's attribution.
  e. nxprof's own figures (`nxprof breakdown`, NXPROF_BIN or build/nxprof) against HTA's,
     per rank: kernel time per class (communication, memory, compute), busy and idle time,
     the temporal breakdown's compute time, comm/comp overlap and the launch statistics.
     Each figure differs from HTA's only by the causes above, checked here: nxprof's figure
     equals the exact one over every event (raw JSON), that less the events HTA drops
     (the last step) is the exact figure over HTA's events, and that is HTA's up to its µs
     rounding (under 2 µs per event, rule 1).
"""
import os
import subprocess
import json
import math
import shutil
import sys
from pathlib import Path

import pytest

import gpu_oracle

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "hta"))
import hta_figures  # noqa: E402

REAL = ROOT / "tests" / "data" / "real-gpu"
SETS = {"gpt2_eager": ["gpt2_eager.json.gz"], "ddp": ["ddp_rank0.json.gz", "ddp_rank1.json.gz"]}


@pytest.fixture(scope="module", params=sorted(SETS))
def hta_set(request, tmp_path_factory):
    """(set name, HTA's figures of its folder, the oracle's Trace of each file by rank)."""
    folder = tmp_path_factory.mktemp(request.param)
    for f in SETS[request.param]:
        shutil.copy(REAL / f, folder / f)
    traces = {t.rank or 0: t for t in (gpu_oracle.Trace(REAL / f) for f in SETS[request.param])}
    return request.param, hta_figures.figures(folder), traces


# --- HTA 0.5.0's rules, read from its source, applied to the raw JSON -------------------

def hta_us(trace, start, end):
    """HTA's times of an event: ts rounded up and ts + dur rounded down to whole µs (its
    round_down_time_stamps), so an event under 1 µs can end before it starts."""
    return math.ceil((start - trace.base) / 1000), math.floor((end - trace.base) / 1000)


def hta_kind(name):
    """HTA's get_kernel_type by name (no NCCL kernel in these traces)."""
    return "MEMORY" if name.startswith(("Memcpy", "Memset", "dma")) else "COMPUTATION"


def hta_model(trace):
    """[(ts µs, end µs, kind, stream, start ns, end ns)] of the GPU events HTA keeps: a
    kernel, memcpy or memset whose correlation matches a CPU event that starts before the
    last ProfilerStep start (_filter_irrelevant_gpu_kernels: the last step and what follows
    are left out; the ProfilerStep events of both sides count)."""
    last = max(hta_us(trace, s, e)[0] for s, e, ev in trace.slices
               if ev.get("name", "").startswith("ProfilerStep"))
    launched = {(ev.get("args") or {}).get("correlation") for s, e, ev in trace.slices
                if ev.get("cat") not in gpu_oracle.GPU_CATS and hta_us(trace, s, e)[0] < last}
    launched.discard(None)
    return [(*hta_us(trace, s, e), hta_kind(ev["name"]), ev["args"].get("stream"), s, e)
            for s, e, ev in trace.slices
            if ev.get("cat") in gpu_oracle.GPU_CATS and ev["args"].get("correlation") in launched]


def hta_merge(events):
    """HTA's merge_kernel_intervals: sorted by ts, a new interval where ts exceeds every
    earlier end (events of zero or negative length included); (span, busy)."""
    groups, top = [], None
    for a, b, *_ in sorted(events, key=lambda x: (x[0], x[1])):
        if top is None or a > top:
            groups.append([a, b])
        else:
            groups[-1][1] = max(groups[-1][1], b)
        top = b if top is None else max(top, b)
    return groups[-1][1] - groups[0][0], sum(b - a for a, b in groups)


# --- tests -------------------------------------------------------------------------------

def test_figures_are_deterministic_and_errors_recorded(hta_set):
    name, figures, _ = hta_set
    expected = json.loads((ROOT / "tests" / "e2e" / "hta" / "expected" / f"{name}.json").read_text())
    assert json.loads(json.dumps(figures, sort_keys=True)) == expected
    assert "error" in figures["potential_stragglers"]
    assert ("error" in figures["temporal_breakdown"]) == (name == "gpt2_eager")


def test_kernel_time_per_rank(hta_set):
    _, figures, traces = hta_set
    for rank, trace in traces.items():
        model = hta_model(trace)
        for kind in ("COMPUTATION", "MEMORY"):
            hta = sum(r["sum (us)"] for r in figures["kernel_breakdown"]["by_kernel"]
                      if r["rank"] == rank and r["kernel_type"] == kind)
            mine = [m for m in model if m[2] == kind]
            assert hta == sum(b - a for a, b, *_ in mine), (rank, kind)
            # the same events in exact ns: HTA loses under 2 µs per event, never gains
            exact_ns = sum(e - s for *_, s, e in mine)
            assert hta * 1000 <= exact_ns < (hta + 2 * len(mine)) * 1000, (rank, kind)


def test_left_out_events_are_the_last_step_and_after(hta_set):
    _, _, traces = hta_set
    for trace in traces.values():
        kept = {(s, e) for *_, s, e in hta_model(trace)}
        last = max(s for s, e, ev in trace.slices if ev.get("name", "").startswith("ProfilerStep"))
        launches = {}
        for s, e, ev in trace.slices:
            c = (ev.get("args") or {}).get("correlation")
            if c is not None and ev.get("cat") not in gpu_oracle.GPU_CATS:
                launches.setdefault(c, []).append(s)
        for s, e, ev in trace.slices:
            if ev.get("cat") in gpu_oracle.GPU_CATS and (s, e) not in kept:
                times = launches.get(ev["args"].get("correlation"), [])
                assert all(t >= last - 999 for t in times), (ev["name"], s)


def test_idle_time_per_rank_and_stream(hta_set):
    name, figures, traces = hta_set
    for rank, trace in traces.items():
        model = hta_model(trace)
        if name == "ddp":
            row = next(r for r in figures["temporal_breakdown"] if r["rank"] == rank)
            span, busy = hta_merge(model)
            assert (row["idle_time(us)"], row["kernel_time(us)"]) == (span - busy, span)
        by_stream = {}
        for r in figures["idle_time_breakdown"]["by_stream"]:
            if r["rank"] == rank:
                by_stream[r["stream"]] = by_stream.get(r["stream"], 0) + r["idle_time"]
        streams = {m[3] for m in model}
        assert set(by_stream) == streams
        for st in streams:
            span, busy = hta_merge([x for x in model if x[3] == st])
            assert by_stream[st] == span - busy, (rank, st)


def hta_iteration(trace):
    """{correlation: step} of the CPU events, as HTA's add_iteration gives them: the step of
    the last ProfilerStep event (either side, file order) whose [ts, end) in HTA's µs holds
    the event's ts; -1 in none."""
    steps = [(*hta_us(trace, s, e), int(ev["name"].split("#")[1])) for s, e, ev in trace.slices
             if gpu_oracle.STEP.match(ev.get("name", ""))]
    out = {}
    for s, e, ev in trace.slices:
        corr = (ev.get("args") or {}).get("correlation")
        if corr is not None and ev.get("cat") not in gpu_oracle.GPU_CATS:
            ts = hta_us(trace, s, e)[0]
            out[corr] = ([n for a, b, n in steps if a <= ts < b] or [-1])[-1]
    return out


def test_profiler_steps_and_gpu_time_per_step(hta_set):
    _, figures, traces = hta_set
    for rank, trace in traces.items():
        assert figures["profiler_steps"] == sorted(n for n, *_ in trace.steps())
        step_of = hta_iteration(trace)
        corr = {(s, e): ev["args"].get("correlation") for s, e, ev in trace.slices
                if ev.get("cat") in gpu_oracle.GPU_CATS}
        want = {}
        for a, b, _, _, s, e in hta_model(trace):
            n = str(step_of.get(corr[(s, e)], -1))
            want[n] = want.get(n, 0) + b - a
        assert figures["gpu_time_per_iteration"][str(rank)] == want


# --- nxprof's figures against HTA's ---------------------------------------------------------

BIN = Path(os.environ.get("NXPROF_BIN", ROOT / "build" / "nxprof"))
KIND = {"kernel": "COMPUTATION", "gpu_memcpy": "MEMORY", "gpu_memset": "MEMORY"}


def nxprof_breakdown(name, tmp_path):
    """{rank: nxprof's whole-span breakdown entry of GPU 0} of the set, processed as one
    profile (an unranked trace is rank 0, as HTA numbers it)."""
    cap = tmp_path / f"cap_{name}"
    cap.mkdir()
    for f in SETS[name]:
        shutil.copy(REAL / f, cap / f)
    out = tmp_path / f"out_{name}"
    for args in (["process", cap, "--output-file", out], ["breakdown", out, "--format", "json", "--top", "1"]):
        r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    return {e["rank"] or 0: e for e in json.loads(r.stdout)["entries"] if e["step"] is None}


def exact(events):
    """(summed duration, union length) in ns of [(start, end, ...)]."""
    return sum(e - s for s, e, *_ in events), sum(b - a for a, b in gpu_oracle.union(events))


def test_nxprof_against_hta(hta_set, tmp_path):
    name, figures, traces = hta_set
    entries = nxprof_breakdown(name, tmp_path)
    for rank, trace in traces.items():
        e, model = entries[rank], hta_model(trace)
        every = [(s, t, KIND[ev["cat"]]) for s, t, ev in trace.slices if ev.get("cat") in gpu_oracle.GPU_CATS]
        kept = [(s, t, kind) for *_, kind, _, s, t in model]
        # kernel time per class: nxprof = exact (all); less the last step = exact (HTA's);
        # HTA <= that < HTA + 2 us per event
        for kind, cls in (("COMPUTATION", "compute"), ("MEMORY", "memory")):
            hta = sum(r["sum (us)"] for r in figures["kernel_breakdown"]["by_kernel"]
                      if r["rank"] == rank and r["kernel_type"] == kind)
            mine = [x for x in kept if x[2] == kind]
            assert e["classes"][cls]["total_ns"] == exact([x for x in every if x[2] == kind])[0]
            assert e["classes"][cls]["count"] == sum(x[2] == kind for x in every)
            assert hta * 1000 <= exact(mine)[0] < (hta + 2 * len(mine)) * 1000, (rank, kind)
        # communication: no NCCL kernel, so none for either (gloo's collectives are host-side)
        assert e["classes"]["communication"]["count"] == 0
        assert not any(r["kernel_type"] == "COMMUNICATION" for r in figures["kernel_breakdown"]["by_kernel"])
        overlap = next(r for r in figures["comm_comp_overlap"] if r["rank"] == rank)["comp_comm_overlap_pctg"]
        assert e["temporal"]["overlap_pct"] is None and overlap is None
        # busy time: nxprof's = the exact union of every event; HTA's (span - idle, per
        # stream: one stream holds every kernel) is the union of the events it keeps,
        # each shortened by under 2 us
        busy = e["temporal"]["window_ns"] - e["temporal"]["idle_ns"]
        assert busy == exact(every)[1]
        # idle = window - busy, over different windows: nxprof's is the rank's trace span
        # (host rows too), HTA's the span of the GPU events it keeps
        assert e["temporal"]["window_ns"] == trace.span()[1] - trace.span()[0]
        span, hta_busy = hta_merge(model)
        assert hta_busy * 1000 <= exact(kept)[1] < (hta_busy + 2 * len(kept)) * 1000
        if name == "ddp":
            row = next(r for r in figures["temporal_breakdown"] if r["rank"] == rank)
            assert row["kernel_time(us)"] - row["idle_time(us)"] == hta_busy
            # compute: HTA sums the compute kernels' rounded durations (its per-kernel
            # COMPUTATION rows); nxprof takes their union, first in precedence
            computation = sum(r["sum (us)"] for r in figures["kernel_breakdown"]["by_kernel"]
                              if r["rank"] == rank and r["kernel_type"] == "COMPUTATION")
            assert row["compute_time(us)"] == computation
            assert e["temporal"]["compute_ns"] == exact([x for x in every if x[2] == "COMPUTATION"])[1]
        # launches: nxprof links every kernel; HTA counts the kept GPU events launched by
        # cudaLaunchKernel(ExC), cudaMemsetAsync or cudaMemcpyAsync, and its delay runs from
        # the launch's end (nxprof's from its start), clipped at 0, in whole us
        stats = figures["cuda_kernel_launch_stats"][str(rank)]
        launch = {(ev.get("args") or {}).get("correlation"): (s, t) for s, t, ev in trace.slices
                  if ev.get("name") in ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemsetAsync",
                                        "cudaMemcpyAsync")}
        counted = [(launch[c], (s, t)) for s, t, ev in trace.slices
                   if ev.get("cat") in gpu_oracle.GPU_CATS and (c := ev["args"].get("correlation")) in launch
                   and (s, t) in {(a, b) for a, b, _ in kept}]
        assert stats["count"] == len(counted)
        delay = 0
        for (ls, le), (ks, ke) in counted:
            l0, l1 = hta_us(trace, ls, le)
            delay += max(0, hta_us(trace, ks, ke)[0] - l0 - (l1 - l0))
        assert stats["launch_delay_sum"] == delay
        assert e["launch"]["linked"] == e["launch"]["kernels"] == sum(x[2] == "COMPUTATION" for x in every)
