#!/usr/bin/env python3
"""run.py — `nxprof sql` against DuckDB (python) over the same Parquet files, in one run.

On a device profile of about 10M Instruction rows (made when --profile is not given:
`nxprof synth --events 20M --cores 1 --no-system`, then `nxprof process`), two queries:

  group   SELECT engine, opcode, COUNT(*), SUM(duration_ns) FROM Instruction
          GROUP BY 1, 2 ORDER BY 4 DESC                              (target: within 2x of DuckDB)
  window  the rows of a one-millisecond window in the middle of the profile
          (start_ts >= t AND start_ts < t + 1e6): SELECT * (every column) and the
          SELECT of five columns                                     (target: under 20 ms)

Three figures per query, each the median of --runs runs:
  nxprof sql   the command, process start to exit, answer written as CSV to /dev/null;
  in-process   build/bench/sql/bench_sql: the engine opened once (footers read then), the
               query run --runs times into a CSV answer, without the process start;
  duckdb       the .venv's DuckDB over read_parquet([the table's files]), one connection,
               the same Parquet footer cache on (parquet_metadata_cache), rows fetched.
and the ratios nxprof/duckdb. The row counts of the three must agree.

    .venv/bin/python bench/sql/run.py [--profile DIR] [--runs 7] [--bin build]
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_profile(bin_dir, work):
    cap, prof = os.path.join(work, "cap"), os.path.join(work, "prof")
    nx = os.path.join(bin_dir, "nxprof")
    subprocess.run([nx, "synth", "--out", cap, "--events", "20M", "--cores", "1", "--no-system"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([nx, "process", cap, "--output-file", prof], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return prof


def median_ms(fn, runs):
    fn()  # warm-up: files in the page cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    nx = os.path.join(args.bin, "nxprof")
    bench = os.path.join(args.bin, "bench", "sql", "bench_sql")
    with tempfile.TemporaryDirectory(prefix="nxprof-bench-sql-") as work:
        prof = args.profile or make_profile(args.bin, work)
        files = sorted(glob.glob(os.path.join(prof, "Instruction.parquet")) +
                       glob.glob(os.path.join(prof, "Instruction_*.parquet")),
                       key=lambda f: int(re.search(r"_(\d+)\.parquet$", f).group(1)) if "_" in os.path.basename(f) else 0)
        src = "read_parquet([" + ", ".join(f"'{f}'" for f in files) + "])"
        con = duckdb.connect()
        con.execute("SET parquet_metadata_cache = true")
        n, lo, hi = con.execute(f"SELECT COUNT(*), MIN(start_ts), MAX(start_ts) FROM {src}").fetchone()
        t = (lo + hi) // 2
        print(f"profile {prof}: Instruction {n} rows in {len(files)} file(s); duckdb {duckdb.__version__}; "
              f"{os.cpu_count()} CPUs; medians of {args.runs} runs")
        where = f"WHERE start_ts >= {t} AND start_ts < {t + 1_000_000}"
        queries = [
            ("group", "SELECT engine, opcode, COUNT(*), SUM(duration_ns) FROM {T} GROUP BY 1, 2 ORDER BY 4 DESC"),
            ("window *", "SELECT * FROM {T} " + where),
            ("window 5 cols", "SELECT start_ts, duration_ns, engine, opcode, id FROM {T} " + where),
        ]
        print(f"{'query':14} {'rows':>7} {'nxprof sql':>11} {'in-process':>11} {'duckdb':>9} "
              f"{'sql/duckdb':>11} {'in-proc/duckdb':>15}")
        for name, q in queries:
            ours, theirs = q.format(T="Instruction"), q.format(T=src)
            rows = len(con.execute(theirs).fetchall())
            dd = median_ms(lambda: con.execute(theirs).fetchall(), args.runs)
            cmd = [nx, "sql", prof, ours, "--format", "csv", "--max-rows", str(10 ** 9)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            if out.count("\n") - 1 != rows:
                sys.exit(f"run.py: {name}: nxprof sql answered {out.count(chr(10)) - 1} rows, DuckDB {rows}")
            cli = median_ms(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL), args.runs)
            r = subprocess.run([bench, prof, ours, str(args.runs + 1)], check=True, capture_output=True, text=True)
            m = dict(kv.split("=") for kv in r.stdout.split())
            if int(m["rows"]) != rows:
                sys.exit(f"run.py: {name}: bench_sql answered {m['rows']} rows, DuckDB {rows}")
            inproc = float(m["median_ms"])
            print(f"{name:14} {rows:>7} {cli:>8.1f} ms {inproc:>8.1f} ms {dd:>6.1f} ms {cli / dd:>10.2f}x "
                  f"{inproc / dd:>14.2f}x   (bench_sql: open {float(m['open_ms']):.1f} ms, first run "
                  f"{float(m['first_ms']):.1f} ms)")


if __name__ == "__main__":
    main()
