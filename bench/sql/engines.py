#!/usr/bin/env python3
"""engines.py — the measurement behind the SQL engine choice (docs/architecture.md).

On one device profile (e.g. `nxprof synth --out CAP --events 20M --cores 1 --no-system`,
then `nxprof process CAP --output-file PROF`: about 10M Instruction rows) it times two
queries with two engines, in one run:

  duckdb  DuckDB over the profile's Parquet files (read_parquet of Instruction's files),
          each run from the files, nothing cached in tables;
  sqlite  SQLite (python's sqlite3) over the Instruction rows already loaded into an
          in-memory table with an index on start_ts: a lower bound for any SQLite
          virtual table over nxprof's Parquet reader, which would also decode the pages.

Queries: (a) SELECT engine, opcode, COUNT(*), SUM(duration_ns) FROM Instruction GROUP BY
1,2 ORDER BY 4 DESC; (b) the rows of a one-millisecond window in the middle of the
profile (start_ts between t and t + 1e6). Prints each median of --runs runs in ms and
the ratios sqlite/duckdb.

    .venv/bin/python bench/sql/engines.py PROF [--runs 5]
"""
import argparse
import glob
import os
import sqlite3
import statistics
import sys
import time

import duckdb
import pyarrow.parquet as pq

GROUP_BY = ("SELECT engine, opcode, COUNT(*), SUM(duration_ns) FROM {t} "
            "GROUP BY 1, 2 ORDER BY 4 DESC")
WINDOW = "SELECT * FROM {t} WHERE start_ts >= {lo} AND start_ts < {hi}"
COLUMNS = ["start_ts", "end_ts", "duration_ns", "engine", "opcode", "operands", "id", "pc",
           "evt_wait_time_ns", "bir_id", "hlo_name"]


def instruction_files(prof):
    files = sorted(glob.glob(os.path.join(prof, "Instruction.parquet")) +
                   glob.glob(os.path.join(prof, "Instruction_*.parquet")))
    if not files:
        sys.exit(f"engines.py: {prof} has no Instruction table")
    return files


def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def load_sqlite(files):
    """Instruction's rows in an in-memory SQLite table (a subset of columns: the queries'
    and a few more, so the window query returns rows of realistic width)."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE Instruction ({', '.join(COLUMNS)})")
    for f in files:
        pf = pq.ParquetFile(f)
        for batch in pf.iter_batches(batch_size=1 << 20, columns=COLUMNS):
            cols = [batch.column(c).to_pylist() for c in COLUMNS]
            db.executemany(f"INSERT INTO Instruction VALUES ({', '.join('?' * len(COLUMNS))})", zip(*cols))
    db.execute("CREATE INDEX instruction_start ON Instruction(start_ts)")
    db.commit()
    return db


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    files = instruction_files(args.profile)
    src = "read_parquet([" + ", ".join(f"'{f}'" for f in files) + "])"
    con = duckdb.connect()
    n, lo_ts, hi_ts = con.execute(f"SELECT COUNT(*), MIN(start_ts), MAX(start_ts) FROM {src}").fetchone()
    lo = (lo_ts + hi_ts) // 2
    window = dict(lo=lo, hi=lo + 1_000_000)
    print(f"Instruction: {n} rows in {len(files)} file(s); window [{lo}, {lo + 1_000_000})")

    dd_group = median_ms(lambda: con.execute(GROUP_BY.format(t=src)).fetchall(), args.runs)
    dd_win_rows = len(con.execute(WINDOW.format(t=src, **window)).fetchall())
    dd_window = median_ms(lambda: con.execute(WINDOW.format(t=src, **window)).fetchall(), args.runs)

    t0 = time.perf_counter()
    db = load_sqlite(files)
    load_s = time.perf_counter() - t0
    sq_group = median_ms(lambda: db.execute(GROUP_BY.format(t="Instruction")).fetchall(), args.runs)
    sq_win_rows = len(db.execute(WINDOW.format(t="Instruction", **window)).fetchall())
    sq_window = median_ms(lambda: db.execute(WINDOW.format(t="Instruction", **window)).fetchall(), args.runs)
    if sq_win_rows != dd_win_rows:
        sys.exit(f"engines.py: the window returned {dd_win_rows} rows in DuckDB, {sq_win_rows} in SQLite")

    print(f"duckdb {duckdb.__version__}, sqlite {sqlite3.sqlite_version}; medians of {args.runs} runs")
    print(f"  (a) GROUP BY engine, opcode   duckdb {dd_group:9.1f} ms   sqlite {sq_group:9.1f} ms   "
          f"sqlite/duckdb {sq_group / dd_group:6.1f}x")
    print(f"  (b) 1 ms window ({dd_win_rows} rows) duckdb {dd_window:9.1f} ms   sqlite {sq_window:9.1f} ms   "
          f"sqlite/duckdb {sq_window / dd_window:6.2f}x")
    print(f"  sqlite's load of the rows into memory (not counted above): {load_s:.1f} s")


if __name__ == "__main__":
    main()
