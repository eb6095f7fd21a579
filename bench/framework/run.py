#!/usr/bin/env python3
"""bench/framework/run.py — framework-trace throughput: `nxprof process` on a Kineto-shaped
trace.json next to Python's json.load, DuckDB's read_json and HTA's loader of the same file.

    python3 bench/framework/run.py [--sizes 100,2000] [--runs 3] [--bin build/nxprof]
                                   [--peers json,duckdb,hta] [--dir /tmp]
                                   [--peer-budget-s 900] [--seed 7]

For each size (MB of JSON text, 10^6 bytes) gen_kineto.py writes cap-SIZE/trace.json once, in
a folder of the run's own under --dir, so runs side by side never share files (seed 7, the
event mix of tests/data/real-gpu/gpt2_eager.json.gz). Then, --runs times each
(median reported):

- nxprof: `nxprof process CAP --output-file DIR/prof`, end to end (reading the JSON, building
  every table, Parquet and timeline indexes); wall and CPU seconds and peak RSS from
  the child's rusage (wait4). MB/s is the JSON text's size over the wall time.
- json: `json.load` in the repository's .venv Python; duckdb: read_json in the same .venv
  (duckdb package); hta: HolisticTraceAnalysis pinned in bench/framework/requirements.txt,
  installed in bench/framework/.venv (`python3 -m venv bench/framework/.venv &&
  bench/framework/.venv/bin/pip install -r bench/framework/requirements.txt`).
  bench/framework/peers.py says what each one does; its MB/s counts the read alone, after
  the imports (this favours the peers); peak RSS is the whole process's.

A peer is skipped at a size (shown as '-', the reason on stderr) when its figures at the
previous size, scaled by the size ratio, predict a peak RSS over 80% of MemAvailable or a
total time over --peer-budget-s; a peer's run that takes longer than --peer-budget-s (HTA's
grows faster than the file) is stopped and reported. Column nxprof/tool is nxprof's MB/s
over the tool's: how many times faster nxprof builds the whole profile than the tool only
reads the file.
The run's folder, with its generated files and profiles, is removed at the end.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHONS = {'json': os.path.join(REPO, '.venv/bin/python'),
           'duckdb': os.path.join(REPO, '.venv/bin/python'),
           'hta': os.path.join(HERE, '.venv/bin/python')}


def timed(cmd, limit_s=None):
    """Run cmd; (stdout, wall s, cpu s, peak RSS MiB) from its own rusage, or raise with its
    error. A run past limit_s seconds is killed and reported as such."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        timer = threading.Timer(limit_s, p.kill) if limit_s else None
        if timer:
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if timer:
            timer.cancel()
        if limit_s and wall >= limit_s:
            raise RuntimeError(f'{" ".join(cmd[:3])} stopped after {limit_s:g} s (--peer-budget-s)')
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors='replace'), err.read().decode(errors='replace')
    if p.returncode != 0:
        lines = [l for l in stderr.splitlines() if l.strip()]
        errors = [l for l in lines if 'Error' in l or 'Exception' in l]
        tail = (errors or lines or ['no message'])[-1].strip()
        raise RuntimeError(f'{" ".join(cmd[:3])} failed ({p.returncode}): {tail}')
    return stdout, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def run_nxprof(binary, cap, prof):
    shutil.rmtree(prof, ignore_errors=True)
    _, wall, cpu, rss = timed([binary, 'process', cap, '--output-file', prof])
    shutil.rmtree(prof, ignore_errors=True)
    return {'s': wall, 'cpu': cpu, 'rss': rss}


def run_peer(tool, trace, limit_s):
    out, wall, cpu, rss = timed([PYTHONS[tool], os.path.join(HERE, 'peers.py'), tool, trace], limit_s)
    got = json.loads(out.strip().splitlines()[-1])
    return {'s': got['s'], 'cpu': cpu, 'rss': rss, 'events': got['events']}


def mem_available_mib():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) / 1024
    return float('inf')


def skip_reason(prev, size_mb, runs, budget_s):
    """Why a peer measured at prev = (size_mb, median) should not run at size_mb, or None."""
    if prev is None:
        return None
    scale = size_mb / prev[0]
    rss, secs = prev[1]['rss'] * scale, prev[1]['s'] * scale * runs
    if rss > 0.8 * mem_available_mib():
        return f'predicted peak RSS {rss:.0f} MiB > 80% of MemAvailable {mem_available_mib():.0f} MiB'
    if secs > budget_s:
        return f'predicted {secs:.0f} s for {runs} run(s) > --peer-budget-s {budget_s}'
    return None


def median_of(results):
    return {k: statistics.median(r[k] for r in results) for k in ('s', 'cpu', 'rss')}


def measure(tool, runs, once):
    results = []
    for _ in range(runs):
        results.append(once())
    return median_of(results)


def print_row(tool, mb, m, base):
    if m is None:
        print(f'{tool:<8} {mb:>8.1f} {"-":>9} {"-":>9} {"-":>8} {"-":>12} {"-":>13}')
        return
    mbps = mb / m['s']
    ratio = f'{base / mbps:.2f}' if base else '-'
    print(f'{tool:<8} {mb:>8.1f} {mbps:>9.1f} {m["s"]:>9.2f} {m["cpu"]:>8.2f} {ratio:>12} {m["rss"]:>13.0f}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', default='100,2000')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--bin', default=os.path.join(REPO, 'build/nxprof'))
    ap.add_argument('--peers', default='json,duckdb,hta')
    ap.add_argument('--dir', default=tempfile.gettempdir(), help='where the run makes its own folder')
    ap.add_argument('--peer-budget-s', type=float, default=900)
    ap.add_argument('--seed', type=int, default=7)
    a = ap.parse_args()
    sizes = [float(s) for s in a.sizes.split(',')]
    peers = [p for p in a.peers.split(',') if p and p != 'none']
    for p in peers:
        if p not in PYTHONS:
            ap.error(f'unknown peer {p} (json, duckdb, hta or none)')
        if not os.access(PYTHONS[p], os.X_OK):
            sys.exit(f'bench/framework: peer {p} needs {PYTHONS[p]} (see the header of this file)')
    if not os.access(a.bin, os.X_OK):
        sys.exit(f'bench/framework: {a.bin} is not built (run make build)')
    if a.runs < 1 or any(s <= 0 for s in sizes):
        ap.error('--runs and every size must be positive')
    os.makedirs(a.dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix='nxprof-bench-framework-', dir=a.dir)
    prev = {}
    try:
        print(f'{"tool":<8} {"MB":>8} {"MB/s":>9} {"s":>9} {"cpu_s":>8} {"nxprof/tool":>12} {"peak_RSS_MiB":>13}')
        for size in sizes:
            size_mb = f'{size:g}'
            cap = os.path.join(work, f'cap-{size_mb}')
            os.makedirs(cap)
            trace = os.path.join(cap, 'trace.json')
            subprocess.run([sys.executable, os.path.join(HERE, 'gen_kineto.py'), '--size-mb', size_mb,
                            '--out', trace, '--seed', str(a.seed)], check=True, capture_output=True)
            real_mb = os.path.getsize(trace) / 1e6
            nx = measure('nxprof', a.runs, lambda: run_nxprof(a.bin, cap, os.path.join(work, 'prof')))
            base = real_mb / nx['s']
            print_row('nxprof', real_mb, nx, None)
            for p in peers:
                why = skip_reason(prev.get(p), size, a.runs, a.peer_budget_s)
                m = None
                if why:
                    print(f'bench/framework: {p} at {size_mb} MB skipped: {why}', file=sys.stderr)
                else:
                    try:
                        m = measure(p, a.runs, lambda: run_peer(p, trace, a.peer_budget_s))
                        prev[p] = (size, m)
                    except RuntimeError as e:
                        print(f'bench/framework: {p} at {size_mb} MB: {e}', file=sys.stderr)
                print_row(p, real_mb, m, base)
            sys.stdout.flush()
            shutil.rmtree(cap)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
