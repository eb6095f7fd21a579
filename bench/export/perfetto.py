#!/usr/bin/env python3
"""bench/export/perfetto.py — the speed of `nxprof export-perfetto` (docs/benchmarks.md
"Perfetto export"), against writing the same rows as a Chrome JSON trace with Python's json
module, in the same run.

    .venv/bin/python bench/export/perfetto.py [--events N] [--runs R] [--bin build/nxprof]

Makes a capture with `nxprof synth --preset llama-layer --events N --cores 1`, processes it,
then per run (R runs, alternating): `nxprof export-perfetto` of its device profile (wall
time and the child's peak RSS, from wait4), and the JSON baseline: the same tables' rows
(read with pyarrow beforehand, not timed) as Chrome "X"/"i" events with every field in
"args", written with json.dump (timed; the whole list is built in memory, which is how
that module writes). Prints the medians, rows per second and their ratio, and the sizes.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["Instruction", "DmaPacketAggregated", "DmaPacket", "SemaphoreUpdate", "CcInstruction", "CcOp"]


def run_child(args, tmp):
    """Wall seconds and peak RSS (MiB) of one child process. The RSS comes from
    /usr/bin/time (GNU time), whose own child starts from its small image: a child
    forked from this process (which holds the baseline's rows) would inherit its
    high-water mark."""
    out = tmp / "rss"
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(out), *args], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{args[1]} failed: {r.stderr}")
    return wall, int(out.read_text().split()[-1]) / 1024


def table_rows(profile):
    out = []
    for t in TABLES:
        files = sorted(profile.glob(f"{t}.parquet")) or sorted(profile.glob(f"{t}_[0-9]*.parquet"))
        for f in files:
            out.append((t, pq.read_table(f).to_pylist()))
    return out


def chrome_json(tables, path):
    events = []
    for t, rows in tables:
        for r in rows:
            args = {k: v for k, v in r.items() if v is not None}
            if t == "SemaphoreUpdate":
                events.append({"name": str(r["id"]), "cat": t, "ph": "i", "ts": r["timestamp"] / 1000, "pid": 0,
                               "tid": str(r["id"]), "args": args})
            else:
                events.append({"name": t, "cat": t, "ph": "X", "ts": r["start_ts"] / 1000,
                               "dur": (r["end_ts"] - r["start_ts"]) / 1000, "pid": 0, "tid": t, "args": args})
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=300000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=str(ROOT / "build" / "nxprof"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nxprof-bench-perfetto-") as tmp:
        tmp = Path(tmp)
        subprocess.run([a.bin, "synth", "--out", tmp / "cap", "--preset", "llama-layer", "--events", str(a.events),
                        "--cores", "1", "--no-system"], check=True, capture_output=True)
        subprocess.run([a.bin, "process", tmp / "cap", "--output-file", tmp / "prof"], check=True,
                       capture_output=True)
        prof = tmp / "prof"
        if (prof / "devices").is_dir():
            prof = next((prof / "devices").iterdir())
        tables = table_rows(prof)
        n = sum(len(r) for _, r in tables)
        ours, theirs, rss = [], [], []
        for _ in range(a.runs):
            wall, peak = run_child([a.bin, "export-perfetto", str(prof), "--out", str(tmp / "t.pftrace"),
                                    "--tables", ",".join(TABLES)], tmp)
            ours.append(wall)
            rss.append(peak)
            t0 = time.perf_counter()
            chrome_json(tables, tmp / "t.json")
            theirs.append(time.perf_counter() - t0)
        mo, mt = statistics.median(ours), statistics.median(theirs)
        print(f"rows: {n} ({', '.join(f'{t} {len(r)}' for t, r in tables)})")
        print(f"export-perfetto: median {mo:.3f} s = {n / mo:,.0f} rows/s, peak RSS {max(rss):.0f} MiB, "
              f"{(tmp / 't.pftrace').stat().st_size / 2**20:.1f} MiB")
        print(f"python json.dump (Chrome JSON): median {mt:.3f} s = {n / mt:,.0f} rows/s, "
              f"{(tmp / 't.json').stat().st_size / 2**20:.1f} MiB")
        print(f"ratio: export-perfetto is {mt / mo:.1f}x the rows/s of json.dump")


if __name__ == "__main__":
    main()
