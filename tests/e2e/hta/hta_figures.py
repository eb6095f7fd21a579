#!/usr/bin/env python3
"""HTA's figures of a directory of rank traces, as JSON on stdout. Runs in .venv-hta/
(HolisticTraceAnalysis 0.5.0 with pandas 2.x, tests/e2e/hta/requirements.txt):

    .venv-hta/bin/python tests/e2e/hta/hta_figures.py TRACE_DIR > figures.json

HTA reads every *.json / *.json.gz of the directory as one rank (distributedInfo.rank, else
rank 0). Each analysis is one member; a table is a list of row objects (NaN as null); an
analysis that raises is {"error": "<exception>"}, never a crash. HTA's own log lines go to
stderr. The figures are HTA's, in its units (µs) and with its rules (docs/analyses.md#hta-as-a-second-oracle).
"""
import contextlib
import json
import math
import sys

import pandas as pd


def plain(value):
    """JSON-ready: DataFrames as lists of rows, numpy scalars as numbers, NaN as null."""
    if isinstance(value, pd.DataFrame):
        frame = value.reset_index() if value.index.name or isinstance(value.index, pd.MultiIndex) \
            else value
        return [plain(r) for r in frame.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return plain(value.to_dict())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item"):          # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def analyses(a):
    """{member: function of no argument} for each analysis reported; those that take ranks
    get every rank (HTA's default is rank 0 alone)."""
    ranks = sorted(a.t.traces)
    return {
        "ranks": lambda: ranks,
        "profiler_steps": a.get_profiler_steps,
        "temporal_breakdown": lambda: a.get_temporal_breakdown(visualize=False),
        "idle_time_breakdown": lambda: dict(zip(
            ("by_stream", "interval_stats"),
            a.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True))),
        "kernel_breakdown": lambda: dict(zip(
            ("by_type", "by_kernel"), a.get_gpu_kernel_breakdown(visualize=False))),
        "comm_comp_overlap": lambda: a.get_comm_comp_overlap(visualize=False),
        "cuda_kernel_launch_stats": lambda: {
            str(rank): {"count": len(df), **{f"{col}_sum": df[col].sum() for col in
                                             ("cpu_duration", "gpu_duration", "launch_delay")}}
            for rank, df in a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False).items()},
        "potential_stragglers": lambda: a.get_potential_stragglers(),
        # HTA's per-step attribution: the iteration column its parser adds (a GPU event
        # takes its launching CPU event's step), summed over the GPU events it kept
        "gpu_time_per_iteration": lambda: {
            str(rank): a.t.get_trace(rank).query("stream >= 0").groupby("iteration")["dur"].sum()
            for rank in ranks},
    }


def figures(trace_dir):
    """Every analysis of trace_dir, each its result or {"error": ...}."""
    from hta.trace_analysis import TraceAnalysis

    with contextlib.redirect_stdout(sys.stderr):
        a = TraceAnalysis(trace_dir=str(trace_dir))
        out = {}
        for name, fn in analyses(a).items():
            try:
                out[name] = plain(fn())
            except Exception as e:  # HTA's failures are figures too: recorded, not fatal
                out[name] = {"error": f"{type(e).__name__}: {e}"}
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: hta_figures.py TRACE_DIR", file=sys.stderr)
        return 2
    json.dump(figures(argv[1]), sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
