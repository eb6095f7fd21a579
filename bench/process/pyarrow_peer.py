# bench/process/pyarrow_peer.py — the CPU peer of bench/process/run.sh: the CPU time pyarrow
# spends merely WRITING an nxprof profile that is already in memory (every table, same rows,
# pq.write_table with compression='zstd', every other option at pyarrow's default).
#
#   .venv/bin/python bench/process/pyarrow_peer.py PROFILE_DIR [--runs K]
#
# Tables are found as bench/process/peers.mjs finds them: `T.parquet`, or the parts
# `T_0.parquet`, `T_1.parquet`, ... of a split table (concatenated in index order), in
# PROFILE_DIR and in each device profile under its devices/ folder; names starting with
# '.' are ignored. Loading is not timed. One run writes every table in name order into a
# temporary directory; its figure is the process CPU time (user+sys of every thread of
# this process, time.process_time) and the wall time around the writes only. The output
# files are deleted, untimed, before every run. There is no warm-up run, as for nxprof.
#
# stdout: one JSON line {"cpu_s", "wall_s", "rows", "tables"} with the medians over --runs
# (default 3); rows is the total row count written by one run. Per-table rows go to stderr.
import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

PART = re.compile(r'^(.+?)(?:_(\d+))?\.parquet$')


def list_tables(root, prefix='', tables=None):
    """name -> files in part order, as peers.mjs lists them."""
    tables = {} if tables is None else tables
    parts = {}
    for f in os.listdir(root):
        m = PART.match(f)
        if f.startswith('.') or not m:
            continue
        idx = -1 if m.group(2) is None else int(m.group(2))
        parts.setdefault(m.group(1), []).append((idx, os.path.join(root, f)))
    for name in sorted(parts):
        tables[prefix + name] = [p for _, p in sorted(parts[name])]
    devices = os.path.join(root, 'devices')
    if prefix == '' and os.path.isdir(devices):
        for d in sorted(os.listdir(devices)):
            list_tables(os.path.join(devices, d), f'devices/{d}/', tables)
    return tables


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('profile')
    ap.add_argument('--runs', type=int, default=3)
    a = ap.parse_args()
    if a.runs < 1:
        ap.error('--runs needs at least 1')
    tables = list_tables(a.profile)
    if not tables:
        sys.exit(f'pyarrow_peer: no .parquet tables in {a.profile}')
    loaded = {}
    for name, files in tables.items():
        try:
            loaded[name] = pa.concat_tables([pq.read_table(f) for f in files])
        except (OSError, pa.ArrowException) as e:
            sys.exit(f'pyarrow_peer: cannot read table {name} ({files[0]}): {e}')
    rows = sum(t.num_rows for t in loaded.values())
    for name, t in loaded.items():
        print(f'  pyarrow {name:<40} {t.num_rows:>11} rows', file=sys.stderr)
    tmp = tempfile.mkdtemp(prefix='nxprof-pyarrow-')
    cpus, walls = [], []
    try:
        for _ in range(a.runs):
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
            c0, w0 = time.process_time(), time.perf_counter()
            for name, t in loaded.items():
                pq.write_table(t, os.path.join(tmp, name.replace('/', '__') + '.parquet'), compression='zstd')
            cpus.append(time.process_time() - c0)
            walls.append(time.perf_counter() - w0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f'pyarrow: {len(loaded)} tables, {rows} rows, CPU s per run {[round(c, 3) for c in cpus]}', file=sys.stderr)
    print(json.dumps({'cpu_s': statistics.median_low(cpus), 'wall_s': statistics.median_low(walls),
                      'rows': rows, 'tables': len(loaded)}, separators=(',', ':')))


if __name__ == '__main__':
    main()
