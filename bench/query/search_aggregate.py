#!/usr/bin/env python3
"""Times the viewer's search and area aggregates over a whole table against DuckDB.

    .venv/bin/python bench/query/search_aggregate.py PROFILE_DIR [--runs 5] [--threads N]

Over PROFILE_DIR's Instruction table (one file or a split series), in one run:
  - nxprof (build/bench_scan, in-process): search opcode contains MATMUL (total,
    position of the first match at or after the middle of the span) and the
    aggregate by opcode over the middle half of the span, at 1 thread and at N
    (default: the processors);
  - DuckDB over the same Parquet files, same questions, at 1 and N threads.
Prints medians of --runs runs of wall and CPU time (user + system, all threads),
the ratios nxprof/DuckDB, nxprof's events per CPU-second at 1 thread (its
per-core throughput: the table's rows for the search, the events in the range for
the aggregate) and the CPU its split costs at N threads. On a shared
machine the CPU figures are the ones to compare; wall time shows the speed-up
only on an idle one. The answers are compared exactly; a mismatch fails the run.
"""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "build", "bench", "query", "bench_scan")


def files(profile):
    one = os.path.join(profile, "Instruction.parquet")
    if os.path.exists(one):
        return [one]
    series = glob.glob(os.path.join(profile, "Instruction_*.parquet"))
    return sorted(series, key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)   # DuckDB's threads run in this process
    return u.ru_utime + u.ru_stime


def duck(paths, threads, lo, hi, mid, runs):
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    src = f"read_parquet({paths!r})"
    events = f"SELECT * FROM {src} WHERE start_ts IS NOT NULL AND end_ts IS NOT NULL"
    search = (f"SELECT count(*), count(*) FILTER (WHERE start_ts < {mid}), min(start_ts) FILTER (WHERE start_ts >= {mid}) "
              f"FROM ({events}) WHERE opcode ILIKE '%matmul%'")
    agg = (f"SELECT opcode, count(*), sum(least(end_ts, {hi}) - greatest(start_ts, {lo})) FROM ({events}) "
           f"WHERE end_ts >= {lo} AND start_ts <= {hi} GROUP BY opcode")
    ts, ta, cs, ca = [], [], [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), cpu()
        s = con.execute(search).fetchone()
        t1, c1 = time.perf_counter(), cpu()
        g = con.execute(agg).fetchall()
        ta.append(time.perf_counter() - t1)
        ca.append(cpu() - c1)
        ts.append(t1 - t0)
        cs.append(c1 - c0)
    groups = sorted(([k, c, int(t)] for k, c, t in g), key=lambda r: (r[0] is None, r[0] or ""))
    return (ts, cs), (ta, ca), {"total": s[0], "position": s[1] + 1, "found_start": s[2], "groups": groups}


def nx(profile, threads, lo, hi, mid, runs):
    out = subprocess.run([BENCH, profile, "Instruction", "opcode", "MATMUL", str(mid), str(lo), str(hi), str(runs),
                          str(threads)], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return (r["search_s"], r["search_cpu_s"]), (r["aggregate_s"], r["aggregate_cpu_s"]), {k: r[k] for k in ("total", "position", "found_start", "groups")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    paths = files(a.profile)
    rows, lo, hi = duckdb.execute(f"SELECT count(*), min(start_ts), max(end_ts) FROM read_parquet({paths!r})").fetchone()
    span = hi - lo
    mid, lo, hi = lo + span // 2, lo + span // 4, lo + 3 * span // 4
    print(f"{rows:,} Instruction rows in {len(paths)} file(s); aggregate over [{lo}, {hi}]")
    med = {}
    answers = {}
    for th in sorted({1, a.threads}):
        for name, fn in (("nxprof", nx), ("duckdb", duck)):
            ts, ta, ans = fn(a.profile if name == "nxprof" else paths, th, lo, hi, mid, a.runs)
            for q, (wall, cpu_s) in (("search", ts), ("aggregate", ta)):
                med[(name, th, q)] = (statistics.median(wall), statistics.median(cpu_s))
            answers[(name, th)] = ans
    ref = answers[("duckdb", 1)]
    for k, ans in answers.items():
        if ans != ref:
            sys.exit(f"answers differ: {k} {json.dumps(ans)[:400]} vs duckdb {json.dumps(ref)[:400]}")
    print(f"answers identical: {ref['total']:,} matches, position {ref['position']:,}, {len(ref['groups'])} groups")
    for q in ("search", "aggregate"):
        for th in sorted({1, a.threads}):
            (nw, nc), (dw, dc) = med[("nxprof", th, q)], med[("duckdb", th, q)]
            print(f"{q:9} {th:2} thread(s): nxprof {nw:.3f} s wall {nc:.3f} s CPU, duckdb {dw:.3f} s wall "
                  f"{dc:.3f} s CPU; nxprof/duckdb wall {nw / dw:.2f} CPU {nc / dc:.2f}")
        c1, cn = med[("nxprof", 1, q)][1], med[("nxprof", a.threads, q)][1]
        n = rows if q == "search" else sum(g[1] for g in ref["groups"])   # the aggregate's events in its range
        print(f"{q:9} nxprof: {n / c1 / 1e6:.1f}M events per CPU-second at 1 thread; "
              f"CPU at {a.threads} threads / at 1: {cn / c1:.2f}")

if __name__ == "__main__":
    main()
