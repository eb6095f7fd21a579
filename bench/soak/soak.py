#!/usr/bin/env python3
"""Soak and load test of `nxprof serve`: mixed random requests against a large profile
while the same capture is processed again and again under the server.

    python3 bench/soak/soak.py [--events 10M] [--seconds 600] [--clients 4] ...

What it does (127.0.0.1 only; bounded by --seconds and --max-requests; stops by itself):
  1. `nxprof synth` a capture of one NeuronCore with --events device records (and its
     system data), `nxprof process` it into a fresh data path as `soak` (the system
     profile) and `soak-nd0-nc0` (the device profile).
  2. `nxprof serve` on a free port; asks for a fixed set of requests once (the baseline).
  3. For --seconds: --clients threads send random requests over keep-alive connections
     (timeline windows of every size and table, events, flows, search, aggregates, usage,
     summaries, tracks, listings, CSV exports sampled and complete, the baseline requests
     again, and malformed ones); one thread runs `nxprof process` on the same capture
     into the same names over and over (each run publishes new directories under the
     server); one thread samples the server's RSS every --rss-every seconds.
  4. Prints requests/s, p50/p99/max latency overall and per kind, the errors, the
     re-processing runs and the RSS samples, and whether RSS levelled off.

An error is: a connection failure or timeout, a status other than the one the request
expects (200 for valid requests, 400/404 for the malformed ones; any 5xx), a baseline
request whose answer differs from the baseline (re-processing the same capture gives the
same profile, so every answer must stay the same), a re-processing run that fails, or the
server exiting. RSS levels off when the largest sample of the last third of the run is at
most --rss-slack (default 10%) above the largest sample before it.

Exit status: 0 when there was no error and RSS levelled off, 1 otherwise, 2 usage error.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICE_TABLES = ["Instruction", "DmaPacketAggregated", "DmaPacket", "SemaphoreUpdate", "CcOp", "CcInstruction"]
USAGE_TABLES = ["DmaUsage", "HbmUsage", "SbufUsage", "PsumUsage"]
SYSTEM_USAGE = ["CpuUsage", "HostMemUsage", "SystemProfileHbmUsage"]


def count(text):
    """'10M' -> 10000000, '500k' -> 500000."""
    mult = {"k": 10**3, "K": 10**3, "m": 10**6, "M": 10**6}.get(text[-1:], 1)
    return int(text[:-1] if mult > 1 else text) * mult


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_int(v):
    return int(v) if v is not None else None


def rss_kib(pid):
    """(VmRSS, RssAnon, RssFile) of pid in KiB, or None once it is gone."""
    try:
        fields = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "RssFile"):
                    fields[k] = int(v.split()[0])
        return fields.get("VmRSS", 0), fields.get("RssAnon", 0), fields.get("RssFile", 0)
    except OSError:
        return None


class Client:
    """One keep-alive connection, reopened after any failure."""

    def __init__(self, port, timeout):
        self.port, self.timeout, self.conn = port, timeout, None

    def get(self, url):
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                self.conn.request("GET", url)
                r = self.conn.getresponse()
                body = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.status, body
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A keep-alive connection the server closed between two requests: retry once
                # on a new one (a request that fails again is an error).
                self.close()
                if attempt:
                    raise e
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Profile:
    """What the requests are built from: names, spans, row counts, opcodes."""

    def __init__(self, client):
        st, body = client.get("/api/profiles")
        assert st == 200, body
        listing = json.loads(body)
        entries = listing if isinstance(listing, list) else listing.get("profiles", [])
        names = {e["name"]: e for e in entries}
        assert "soak" in names and "soak-nd0-nc0" in names, sorted(names)
        self.system, self.device = "soak", "soak-nd0-nc0"
        st, body = client.get(f"/api/profiles/{self.device}/tracks")
        assert st == 200, body
        tracks = json.loads(body)
        self.first, self.last = as_int(tracks["first_ts"]), as_int(tracks["last_ts"])
        self.rows = {}
        for g in tracks["groups"]:
            for t in g["tracks"]:
                self.rows[t["table"]] = self.rows.get(t["table"], 0) + as_int(t["count"])
        self.tables = [t for t in DEVICE_TABLES if self.rows.get(t)]
        st, body = client.get(f"/api/profiles/{self.system}/tracks")
        assert st == 200, body
        stracks = json.loads(body)
        self.sfirst, self.slast = as_int(stracks["first_ts"]), as_int(stracks["last_ts"])
        st, body = client.get(f"/api/profiles/{self.device}/summary?top=50")
        assert st == 200, body
        ops = json.loads(body)["opcode_summary"]
        at = ops["columns"].index("opcode")
        self.opcodes = sorted({r[at] for r in ops["rows"] if r[at]}) or ["MATMUL"]


def window(rng, first, last):
    """A random [start, end] inside [first, last]: the whole span, or 1e-6 to 1 of it."""
    span = last - first
    if rng.random() < 0.1:
        return first, last
    length = max(1, int(span * 10 ** rng.uniform(-6, 0)))
    start = first + rng.randrange(max(1, span - length + 1))
    return start, min(last, start + length)


def random_request(rng, p, baseline_urls):
    """(kind, url, expected statuses)."""
    dev, sysp = f"/api/profiles/{p.device}", f"/api/profiles/{p.system}"
    k = rng.choices(
        ["timeline", "system_timeline", "event", "flows", "search", "aggregate", "usage", "system_usage",
         "summary", "tracks", "listing", "export_sampled", "export_full", "baseline", "malformed"],
        weights=[30, 8, 10, 4, 6, 4, 8, 3, 3, 3, 3, 3, 2, 8, 5])[0]
    ok = {200}
    if k == "timeline":
        s, e = window(rng, p.first, p.last)
        tabs = ",".join(rng.sample(p.tables, rng.randint(1, len(p.tables))))
        return k, f"{dev}/timeline?tables={tabs}&start={s}&end={e}&width={rng.randint(100, 4000)}", ok
    if k == "system_timeline":
        s, e = window(rng, p.sfirst, p.slast)
        return k, f"{sysp}/timeline?tables=SystemProfileEvents&start={s}&end={e}&width={rng.randint(100, 4000)}", ok
    if k in ("event", "flows"):
        table = rng.choice(p.tables if k == "event" else ["Instruction"])
        return k, f"{dev}/{k}?table={table}&ordinal={rng.randrange(p.rows[table])}", ok
    if k == "search":
        s, _ = window(rng, p.first, p.last)
        q = rng.choice(p.opcodes)
        q = q[: rng.randint(1, len(q))]
        return k, (f"{dev}/search?tables=Instruction&field=opcode&q={q}&from={s}"
                   f"&dir={rng.choice(['next', 'prev'])}"), ok
    if k == "aggregate":
        s, e = window(rng, p.first, p.first + (p.last - p.first) // 20)
        return k, f"{dev}/aggregate?tables=Instruction&start={s}&end={e}&top={rng.randint(1, 20)}", ok
    if k == "usage":
        s, e = window(rng, p.first, p.last)
        return k, f"{dev}/usage?tables={','.join(USAGE_TABLES)}&start={s}&end={e}&width={rng.randint(100, 4000)}", ok
    if k == "system_usage":
        s, e = window(rng, p.sfirst, p.slast)
        return k, f"{sysp}/usage?tables={','.join(SYSTEM_USAGE)}&start={s}&end={e}&width={rng.randint(100, 4000)}", ok
    if k == "summary":
        return k, rng.choice([f"{dev}/summary?top=10", f"{sysp}/summary"]), ok
    if k == "tracks":
        return k, rng.choice([f"{dev}/tracks", f"{sysp}/tracks"]), ok
    if k == "listing":
        return k, rng.choice(["/api/health", "/api/profiles", dev, sysp, "/api/schema"]), ok
    if k == "export_sampled":
        s, e = window(rng, p.first, p.last)
        table = rng.choice(p.tables)
        return k, f"{dev}/export/{table}.csv?start={s}&end={e}&width={rng.randint(100, 2000)}&max_rows=50000", ok
    if k == "export_full":
        s, e = window(rng, p.first, p.first + (p.last - p.first) // 100)
        return k, f"{dev}/export/Instruction.csv?start={s}&end={e}&sampled=0&max_rows=20000", ok
    if k == "baseline":
        return k, rng.choice(baseline_urls), ok
    bad = rng.choice([
        (f"{dev}/timeline?start={p.last}&end={p.first}&width=100", {400}),
        (f"{dev}/timeline?start={p.first}&end={p.last}&width=0", {400}),
        (f"{dev}/timeline?tables=Nope&start={p.first}&end={p.last}&width=10", {400}),
        (f"{dev}/event?table=Instruction&ordinal={p.rows['Instruction'] + 5}", {404}),
        ("/api/profiles/no-such-profile/tracks", {404}),
        ("/api/profiles/%2e%2e%2fetc/tracks", {400, 404}),
        (f"{dev}/timeline?start=1x&end=2&width=10", {400}),
        ("/api/nothing-here", {404}),
    ])
    return k, bad[0], bad[1]


def baseline_urls(p):
    """Requests whose answers must not change while the same capture is re-processed."""
    rng = random.Random(1)
    urls = [f"/api/profiles/{p.device}/tracks", f"/api/profiles/{p.device}/summary?top=10",
            f"/api/profiles/{p.system}/summary",
            f"/api/profiles/{p.device}/timeline?tables={','.join(p.tables)}&start={p.first}&end={p.last}&width=1600"]
    for _ in range(8):
        s, e = window(rng, p.first, p.last)
        urls.append(f"/api/profiles/{p.device}/timeline?tables=Instruction,DmaPacket&start={s}&end={e}&width=900")
        urls.append(f"/api/profiles/{p.device}/event?table=Instruction&ordinal={rng.randrange(p.rows['Instruction'])}")
        urls.append(f"/api/profiles/{p.device}/usage?tables=DmaUsage,SbufUsage&start={s}&end={e}&width=700")
    return urls


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "nxprof"))
    ap.add_argument("--events", default="10M", help="device records of the capture (default 10M)")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--max-requests", type=int, default=5_000_000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--server-threads", type=int, default=4)
    ap.add_argument("--rss-every", type=float, default=10)
    ap.add_argument("--rss-slack", type=float, default=0.10)
    ap.add_argument("--timeout", type=float, default=60, help="seconds a request may take")
    ap.add_argument("--no-reprocess", action="store_true")
    ap.add_argument("--work", help="working directory (default: a temporary one, removed)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the results here as JSON too")
    a = ap.parse_args()
    try:
        events = count(a.events)
    except ValueError:
        ap.error(f"--events: not a count: {a.events}")
    if a.seconds <= 0 or a.clients < 1 or a.rss_every <= 0:
        ap.error("--seconds, --clients and --rss-every must be positive")

    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="nxprof-soak."))
    work.mkdir(parents=True, exist_ok=True)
    cap, data = work / "cap", work / "data"
    server = None
    try:
        shutil.rmtree(cap, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)
        t0 = time.monotonic()
        subprocess.run([a.bin, "synth", "--out", str(cap), "--events", str(events), "--cores", "1",
                        "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
        process_cmd = [a.bin, "process", str(cap), "--data-path", str(data), "--display-name", "soak"]
        subprocess.run(process_cmd, check=True, stdout=subprocess.DEVNULL)
        print(f"soak: {events:,} device records synthesized and processed in {time.monotonic() - t0:.1f} s",
              flush=True)

        port = free_port()
        server = subprocess.Popen([a.bin, "serve", "--data-path", str(data), "--port", str(port),
                                   "--threads", str(a.server_threads)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        c = Client(port, a.timeout)
        prof = Profile(c)
        urls = baseline_urls(prof)
        base = {}
        for u in urls:
            st, body = c.get(u)
            if st != 200:
                raise SystemExit(f"soak: baseline request {u} answered {st}: {body[:300]!r}")
            base[u] = hashlib.sha256(body).hexdigest()
        c.close()
        print(f"soak: serving on 127.0.0.1:{port}; {prof.rows.get('Instruction', 0):,} instructions, "
              f"tables {', '.join(prof.tables)}; {len(urls)} baseline requests", flush=True)

        stop = threading.Event()
        lock = threading.Lock()
        results = []            # (kind, seconds, ok)
        errors = []             # text
        reprocess = []          # seconds per successful run
        rss = []                # (t, VmRSS, RssAnon, RssFile)
        t_start = time.monotonic()
        total = [0]

        def client_loop(i):
            rng = random.Random(a.seed * 1000 + i)
            cl = Client(port, a.timeout)
            while not stop.is_set():
                with lock:
                    if total[0] >= a.max_requests:
                        stop.set()
                        break
                    total[0] += 1
                kind, url, want = random_request(rng, prof, urls)
                t = time.monotonic()
                try:
                    st, body = cl.get(url)
                    ok = st in want
                    why = None if ok else f"{kind}: {url} -> {st} {body[:200]!r}"
                    if ok and kind == "baseline" and hashlib.sha256(body).hexdigest() != base[url]:
                        ok, why = False, f"baseline answer changed: {url}"
                except (OSError, http.client.HTTPException) as e:
                    ok, why = False, f"{kind}: {url} -> {type(e).__name__}: {e}"
                    cl.close()
                dt = time.monotonic() - t
                with lock:
                    results.append((kind, dt, ok))
                    if why:
                        errors.append(why)
            cl.close()

        def reprocess_loop():
            while not stop.is_set():
                t = time.monotonic()
                r = subprocess.run(process_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                with lock:
                    if r.returncode == 0:
                        reprocess.append(time.monotonic() - t)
                    else:
                        errors.append(f"re-processing exited {r.returncode}: {r.stderr.strip()[:300]}")

        def rss_loop():
            while True:
                s = rss_kib(server.pid)
                if s is None or server.poll() is not None:
                    with lock:
                        errors.append(f"the server exited ({server.poll()})")
                    stop.set()
                    return
                rss.append((time.monotonic() - t_start,) + s)
                if stop.wait(a.rss_every):
                    s = rss_kib(server.pid)
                    if s:
                        rss.append((time.monotonic() - t_start,) + s)
                    return

        threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(a.clients)]
        threads.append(threading.Thread(target=rss_loop))
        if not a.no_reprocess:
            threads.append(threading.Thread(target=reprocess_loop))
        for t in threads:
            t.start()
        stop.wait(a.seconds)
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t_start
        alive = server.poll() is None
        if not alive:
            errors.append(f"the server exited ({server.returncode}): {server.stderr.read()[-500:]!r}")
    finally:
        if server is not None and server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)

    # ---- report ----
    lat = [d for _, d, _ in results]
    kinds = sorted({k for k, _, _ in results})
    print(f"\nsoak: {len(results):,} requests in {elapsed:.0f} s = {len(results) / elapsed:,.0f} requests/s "
          f"({a.clients} clients, {a.server_threads} server threads); "
          f"{len(reprocess)} re-processing runs (median {statistics.median(reprocess) if reprocess else 0:.1f} s)")
    print(f"latency: p50 {pct(lat, 0.5) * 1e3:.1f} ms, p99 {pct(lat, 0.99) * 1e3:.1f} ms, "
          f"max {max(lat, default=0) * 1e3:.0f} ms; errors: {len(errors)}")
    print("\n| kind | requests | p50 ms | p99 ms | max ms | errors |\n| --- | --- | --- | --- | --- | --- |")
    per_kind = {}
    for k in kinds:
        d = [x for kk, x, _ in results if kk == k]
        e = sum(1 for kk, _, ok in results if kk == k and not ok)
        per_kind[k] = {"requests": len(d), "p50_ms": pct(d, 0.5) * 1e3, "p99_ms": pct(d, 0.99) * 1e3,
                       "max_ms": max(d) * 1e3, "errors": e}
        print(f"| {k} | {len(d):,} | {pct(d, 0.5) * 1e3:.1f} | {pct(d, 0.99) * 1e3:.1f} | {max(d) * 1e3:.0f} | {e} |")
    print("\nserver RSS (MiB), every", a.rss_every, "s: t, total (anonymous + file-backed)")
    print(", ".join(f"{t:.0f}s {v / 1024:.0f} ({an / 1024:.0f}+{fi / 1024:.0f})" for t, v, an, fi in rss))
    third = max(1, len(rss) // 3)
    before, last = [v for _, v, _, _ in rss[:-third]], [v for _, v, _, _ in rss[-third:]]
    level = bool(before) and max(last) <= max(before) * (1 + a.rss_slack)
    if before:
        print(f"RSS {'levelled off' if level else 'DID NOT level off'}: the last third's peak "
              f"{max(last) / 1024:.0f} MiB against {max(before) / 1024:.0f} MiB before it "
              f"(slack {a.rss_slack:.0%})")
    else:
        print("RSS: too few samples to judge (run longer than 2 x --rss-every)")
    for e in errors[:20]:
        print("error:", e)
    if a.json:
        Path(a.json).write_text(json.dumps({
            "requests": len(results), "seconds": elapsed, "errors": errors, "per_kind": per_kind,
            "p50_ms": pct(lat, 0.5) * 1e3, "p99_ms": pct(lat, 0.99) * 1e3, "reprocess_runs": reprocess,
            "rss": rss, "rss_levelled_off": level, "events": events}, indent=1))
    return 0 if not errors and level else 1


if __name__ == "__main__":
    sys.exit(main())
