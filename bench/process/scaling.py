#!/usr/bin/env python3
"""bench/process/scaling.py — how `nxprof process` scales with cores.

Two steps, so the measurement can run on a machine with no build tools and no
network (Python 3 standard library only):

  python3 bench/process/scaling.py bundle [--bin build/nxprof] --out DIR
      copies the binary, the shared libraries it loads (all but the C library's
      own: libc, libm, libpthread, libdl, librt, the loader) and this script to
      DIR; copy DIR to the machine to measure.

  python3 DIR/scaling.py run [--bin DIR/nxprof] [--records 100000000]
      [--cores 16,1] [--jobs 1,2,4,8,16] [--runs 1] [--work /tmp/nxprof-scaling]
      [--project 16]
      synthesizes, per --cores value C, a llama-layer capture of --records device
      records over C NeuronCores (seed 7; C = 1 is a single trace), processes it
      with every --jobs value (--runs times; the median wall is shown) and prints
      one line per (capture, jobs):

        cores jobs wall_s cpu_s peak_RSS_MiB records/s busiest_thread busiest_cpu_s
        projected_wall_s projected_records/s

      cpu_s is user + system time of the process (getrusage); busiest_thread is
      the thread that used the most CPU (its name, bench/process/scaling.py reads
      /proc/<pid>/task/*/stat every 20 ms; a thread's last 20 ms before it ends
      may be missed). The wall on P = --project cores can be no lower than
      max(cpu_s / P, busiest_cpu_s): the work spread over P cores, or the one
      thread that cannot be split; projected_* are that bound. On a machine of P
      cores it is measured directly: compare wall_s with it.
      After each capture the per-thread CPU of its last run is printed, grouped
      by thread name (dev:D.C: a job's reader, decoder and merge, and the
      page encoders it started; sink:<name>: a sink and the table writers it
      started; system: the system profile).

The captures and profiles are removed at the end. LD_LIBRARY_PATH is set to the
binary's directory, so a bundle runs with its own libraries.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

SYSTEM_LIBS = re.compile(r"^(libc|libm|libpthread|libdl|librt|ld-linux[^.]*|libresolv)\.so")
TICK = os.sysconf("SC_CLK_TCK")


def bundle(args):
    out = subprocess.run(["ldd", args.bin], check=True, capture_output=True, text=True).stdout
    os.makedirs(args.out, exist_ok=True)
    shutil.copy2(args.bin, os.path.join(args.out, "nxprof"))
    shutil.copy2(os.path.abspath(__file__), os.path.join(args.out, "scaling.py"))
    copied = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if not m or SYSTEM_LIBS.match(m.group(1)):
            continue
        shutil.copy2(m.group(2), os.path.join(args.out, m.group(1)))
        copied.append(m.group(1))
    print(f"bundle: {args.out}: nxprof, scaling.py, {' '.join(copied) or 'no libraries'}")


def read_threads(pid, seen):
    """Updates seen[tid] = (name, cpu seconds) from /proc/pid/task."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue   # the thread ended between listdir and open
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        # fields[0] is field 3 (state): utime and stime are fields 14 and 15.
        seen[tid] = (name, (int(fields[11]) + int(fields[12])) / TICK)


def process_once(binary, cap, prof, jobs, env):
    shutil.rmtree(prof, ignore_errors=True)
    seen = {}
    t0 = time.monotonic()
    log = open(prof + ".log", "w+")
    p = subprocess.Popen([binary, "process", cap, "--output-file", prof, "--jobs", str(jobs)],
                         stdout=subprocess.DEVNULL, stderr=log, env=env)
    while True:
        read_threads(p.pid, seen)
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.02)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    log.seek(0)
    messages = log.read()
    log.close()
    if p.returncode != 0:
        sys.exit(f"scaling: nxprof process {cap} --jobs {jobs} failed ({p.returncode}):\n{messages}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, seen


def synth(binary, cap, records, cores, env):
    shutil.rmtree(cap, ignore_errors=True)
    out = subprocess.run([binary, "synth", "--preset", "llama-layer", "--events", str(records), "--seed", "7",
                          "--cores", str(cores), "--out", cap], check=True, capture_output=True, text=True,
                         env=env).stdout
    m = re.search(r"^\s*(\d+) device records", out, re.M)
    if not m:
        sys.exit(f"scaling: cannot read the record count from synth's output:\n{out}")
    return int(m.group(1))


def thread_report(cores, jobs, cpu, seen):
    groups = {}
    for name, s in seen.values():
        g = groups.setdefault(name, [0, 0.0, 0.0])
        g[0] += 1
        g[1] += s
        g[2] = max(g[2], s)
    covered = sum(g[1] for g in groups.values())
    print(f"\n  threads of the last run (cores {cores}, jobs {jobs}): {cpu:.2f} CPU-s in all, "
          f"{covered:.2f} seen per thread")
    print(f"  {'thread':<16} {'threads':>7} {'cpu_s':>8} {'share':>6} {'busiest_cpu_s':>13}")
    for name, (n, s, top) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        if s >= 0.005 * cpu:
            print(f"  {name:<16} {n:>7} {s:>8.2f} {s / cpu:>6.1%} {top:>13.2f}")
    print()


def run(args):
    binary = os.path.abspath(args.bin)
    env = dict(os.environ)
    libdir = os.path.dirname(binary)
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    os.makedirs(args.work, exist_ok=True)
    print(f"scaling: {os.cpu_count()} CPUs online, {args.records} records, projection to {args.project} cores")
    print(f"{'cores':>5} {'jobs':>4} {'wall_s':>8} {'cpu_s':>8} {'peak_RSS_MiB':>12} {'records/s':>10} "
          f"{'busiest_thread':>16} {'busiest_cpu_s':>13} {'projected_wall_s':>16} {'projected_records/s':>19}")
    try:
        for cores in args.cores:
            cap = os.path.join(args.work, f"cap-{cores}")
            prof = os.path.join(args.work, "prof")
            records = synth(binary, cap, args.records, cores, env)
            for jobs in args.jobs:
                runs = [process_once(binary, cap, prof, jobs, env) for _ in range(args.runs)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                seen = runs[-1][3]
                name, busiest = max(seen.values(), key=lambda v: v[1], default=("-", 0.0))
                proj = max(cpu / args.project, busiest)
                print(f"{cores:>5} {jobs:>4} {wall:>8.2f} {cpu:>8.2f} {rss:>12.0f} {records / wall / 1e6:>9.2f}M "
                      f"{name:>16} {busiest:>13.2f} {proj:>16.2f} {records / proj / 1e6:>18.2f}M", flush=True)
            thread_report(cores, args.jobs[-1], cpu, seen)
            shutil.rmtree(cap, ignore_errors=True)
            shutil.rmtree(prof, ignore_errors=True)
    finally:
        shutil.rmtree(args.work, ignore_errors=True)


def int_list(s):
    return [int(x) for x in s.split(",")]


def main():
    ap = argparse.ArgumentParser(description="nxprof process: scaling with cores (see the file's docstring)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bundle")
    b.add_argument("--bin", default="build/nxprof")
    b.add_argument("--out", required=True)
    r = sub.add_parser("run")
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "nxprof")
    r.add_argument("--bin", default=bundled if os.path.exists(bundled) else "build/nxprof")
    r.add_argument("--records", type=int, default=100000000)
    r.add_argument("--cores", type=int_list, default=[16, 1])
    r.add_argument("--jobs", type=int_list, default=[1, 2, 4, 8, 16])
    r.add_argument("--runs", type=int, default=1)
    r.add_argument("--work", default="/tmp/nxprof-scaling")
    r.add_argument("--project", type=int, default=16)
    args = ap.parse_args()
    if args.cmd == "bundle":
        bundle(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
