"""`nxprof breakdown` and GET /api/profiles/<name>/breakdown (docs/analyses.md#breakdowns-per-rank-and-per-step)
against a model worked out here from the raw trace JSON alone, on the real traces
(tests/data/real-gpu: gpt2_eager, the DDP pair, the JAX Perfetto trace) and on a generated
two-rank Kineto trace whose nccl kernels overlap compute, so communication and overlap are
non-zero.

Independent of nxprof: the rows come from chrome_model (the documented reading of a Chrome
trace: ts/dur µs as exact decimals, rounded to the ns, plus baseTimeNanoseconds); devices,
kinds, steps and launches are classified here from the raw names and args; the temporal
split is a sweep over every interval boundary that gives each elementary segment to the
first of compute > communication > memory > idle; idle gaps are the maximal idle runs of
that sweep, classified by the launch of the row that starts where they end; percentiles are
nearest-rank over the sorted delays. All in integer ns.
"""
import gzip
import json
import re
import shutil
import subprocess
from collections import defaultdict
from decimal import Decimal

import pytest

from chrome_model import model
from conftest import BIN, TEST_DATA, http_get_json, serving
from trace_ranks import trace_rank

REAL = TEST_DATA / "real-gpu"
# docs/analyses.md's list of collective names (substrings, any case).
COMM = ("nccl", "gloo", "c10d::", "record_param_comms", "allreduce", "all_reduce", "all-reduce", "allgather",
        "all_gather", "all-gather", "reducescatter", "reduce_scatter", "reduce-scatter", "alltoall", "all_to_all",
        "all-to-all", "collective-permute", "sendrecv")
KERNEL_WAIT_NS, SHORT_NS, QUEUED_NS = 10_000, 10_000, 100_000
XFER = (("HtoD", "H2D"), ("DtoH", "D2H"), ("DtoD", "D2D"), ("HtoH", "H2H"), ("PtoP", "P2P"))


# ------------------------------------------------------------------ the model --

def names_of(elements):
    """First-wins process labels/names per pid and thread names per (pid, tid)."""
    proc, thread = defaultdict(dict), {}
    for e in elements:
        if isinstance(e, dict) and e.get("ph") == "M" and isinstance(e.get("args"), dict):
            a = e["args"]
            if e.get("name") == "process_labels" and isinstance(a.get("labels"), str):
                proc[e.get("pid")].setdefault("labels", a["labels"])
            if e.get("name") == "process_name" and isinstance(a.get("name"), str):
                proc[e.get("pid")].setdefault("name", a["name"])
            if e.get("name") == "thread_name" and isinstance(a.get("name"), str):
                thread.setdefault((e.get("pid"), e.get("tid")), a["name"])
    return proc, thread


def device_of(names):
    m = re.fullmatch(r"GPU (\d+)", names.get("labels", "")) or re.fullmatch(r"/device:GPU:(\d+)", names.get("name", ""))
    return int(m.group(1)) if m else None


def int_arg(args, key):
    v = args.get(key) if isinstance(args, dict) else None
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def kind_of(e, thread_name):
    cat = e.get("cat")
    if cat is not None:
        return {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}.get(cat)
    if not (thread_name or "").startswith("Stream #"):
        return None
    name = e.get("name") or ""
    return "memcpy" if name[:6] in ("Memcpy", "memcpy") else "memset" if name[:6] in ("Memset", "memset") else "kernel"


def read_trace(path, doc=None):
    """(rank, rows, device rows, launches {(rank, id): start}, steps) of one trace."""
    doc = doc or json.loads(gzip.open(path).read(), parse_float=Decimal)
    rank = trace_rank(path, doc)
    rank = -1 if rank is None else rank
    elements = doc["traceEvents"]
    m = model(elements, int(doc.get("baseTimeNanoseconds", 0)))
    proc, thread = names_of(elements)
    dev, launches, steps = [], {}, []
    for r in m.rows:
        e = r["event"]
        args = e.get("args")
        if r["ph"] is not None:
            continue
        gpu = device_of(proc.get(e.get("pid"), {}))
        if gpu is not None:
            kind = kind_of(e, thread.get((e.get("pid"), e.get("tid"))))
            if kind:
                corr = int_arg(args, "correlation")
                corr = corr if corr is not None else int_arg(args, "correlation_id")
                dev.append(dict(rank=rank, device=gpu, kind=kind, name=r["name"], start=r["start"], end=r["end"],
                                corr=corr, bytes=int_arg(args, "bytes")))
            continue
        sm = re.fullmatch(r"ProfilerStep#(\d+)", r["name"])
        step = int(sm.group(1)) if sm and e.get("cat") == "user_annotation" else int_arg(args, "step_num")
        if step is not None:
            steps.append(dict(rank=rank, step=step, name=r["name"], start=r["start"], end=r["end"]))
            continue
        corr = int_arg(args, "correlation")
        corr = corr if corr is not None else int_arg(args, "correlation_id")
        if corr is not None and (launches.get((rank, corr)) is None or r["start"] < launches[(rank, corr)]):
            launches[(rank, corr)] = r["start"]
    return rank, m.rows, dev, launches, steps


def klass(row):
    if row["kind"] != "kernel":
        return "memory"
    return "communication" if any(p in row["name"].lower() for p in COMM) else "compute"


def sweep(rows, lo, hi):
    """Time of [lo, hi) per winner: each elementary segment between two interval boundaries
    goes to the first of compute, communication, memory that covers it, else idle."""
    events = sorted((x, d, klass(r)) for r in rows for x, d in ((r["start"], 1), (r["end"], -1)))
    active, out, prev = defaultdict(int), defaultdict(int), None
    for x, d, c in events:
        if prev is not None and x > prev:
            a, b = max(prev, lo), min(x, hi)
            if b > a:
                out[next((k for k in ("compute", "communication", "memory") if active[k]), "idle")] += b - a
        active[c] += d
        prev = x
    covered = sum(out.values())
    out["idle"] += (hi - lo) - covered   # before the first and after the last boundary
    return out


def gaps(rows, span):
    """Whole idle gaps over the rank span: (g0, g1, has_next), zero-length rows splitting."""
    iv = sorted((r["start"], r["end"]) for r in rows)
    merged = []
    for s, e in iv:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, prev = [], span[0]
    for i, (s, e) in enumerate(merged):
        out.append((prev, s, True, i > 0))
        prev = e
    out.append((prev, span[1], False, bool(merged)))
    return out


def cause(rows, launches, g0, g1, has_next, after_busy):
    if not has_next:
        return "other"
    ls = [launches.get((r["rank"], r["corr"])) for r in rows if r["start"] == g1 and r["corr"] is not None]
    ls = [x for x in ls if x is not None]
    if not ls:
        return "other"
    if min(ls) >= g0:
        return "host"
    return "kernel" if after_busy and g1 - g0 < KERNEL_WAIT_NS else "other"


def nearest(d, q):
    return d[-(-len(d) * q // 100) - 1]


def entry(rows, launches, span, lo, hi):
    t = sweep(rows, lo, hi)
    comm_total = sweep([r for r in rows if klass(r) == "communication"], lo, hi)["communication"]
    idle = defaultdict(int)
    count = defaultdict(int)
    for g0, g1, has_next, after in gaps(rows, span):
        c0, c1 = max(g0, lo), min(g1, hi)
        if c1 > c0:
            c = cause(rows, launches, g0, g1, has_next, after)
            idle[c] += c1 - c0
            count[c] += 1
    inside = [r for r in rows if lo <= r["start"] < hi]
    kernels = [r for r in inside if r["kind"] == "kernel"]
    delays = sorted(r["start"] - launches[(r["rank"], r["corr"])] for r in kernels
                    if r["corr"] is not None and (r["rank"], r["corr"]) in launches)
    classes = {c: {"count": sum(klass(r) == c for r in inside),
                   "total_ns": sum(r["end"] - r["start"] for r in inside if klass(r) == c)}
               for c in ("compute", "communication", "memory")}
    xfer = defaultdict(lambda: dict(count=0, with_bytes=0, bytes=0, duration_ns=0))
    for r in inside:
        if r["kind"] == "kernel":
            continue
        k = "memset" if r["kind"] == "memset" else next(
            (a for a, b in XFER if a in r["name"] or b in r["name"]), "other")
        x = xfer[k]
        x["count"] += 1
        if r["bytes"] is not None:
            x["with_bytes"] += 1
            x["bytes"] += r["bytes"]
            x["duration_ns"] += r["end"] - r["start"]
    launch = dict(kernels=len(kernels), linked=len(delays),
                  short_kernels=sum(r["end"] - r["start"] < SHORT_NS for r in kernels))
    if delays:
        med, p95 = nearest(delays, 50), nearest(delays, 95)
        above = p95 + 3 * (p95 - med) // 2
        launch.update(median_ns=med, p95_ns=p95, max_ns=delays[-1], outlier_above_ns=above,
                      outliers=sum(d > above for d in delays))
    busy = (hi - lo) - t["idle"]
    if not delays:
        verdict = "unknown"
    elif idle["host"] > idle["kernel"] and idle["host"] > idle["other"] and t["idle"] > busy:
        verdict = "cpu-bound"
    elif launch["median_ns"] >= QUEUED_NS:
        verdict = "gpu-bound"
    else:
        verdict = "balanced"
    launch["verdict"] = verdict
    return dict(temporal=dict(window_ns=hi - lo, compute_ns=t["compute"], communication_ns=t["communication"],
                              overlapped_comm_ns=comm_total - t["communication"], memory_ns=t["memory"],
                              idle_ns=t["idle"]),
                idle=dict(host_wait_ns=idle["host"], kernel_wait_ns=idle["kernel"], other_ns=idle["other"],
                          host_wait_count=count["host"], kernel_wait_count=count["kernel"],
                          other_count=count["other"]),
                classes=classes, transfers=dict(xfer), launch=launch, comm_total=comm_total)


def expected(paths, docs=None):
    """Every entry and the kernels, keyed as nxprof lists them."""
    dev, launches, steps, spans = [], {}, [], {}
    for i, p in enumerate(paths):
        rank, rows, d, la, st = read_trace(p, docs[i] if docs else None)
        dev += d
        launches.update(la)
        steps += st
        lo, hi = min(r["start"] for r in rows), max(r["end"] for r in rows)
        old = spans.get(rank, (lo, hi))
        spans[rank] = (min(lo, old[0]), max(hi, old[1]))
    ranks = sorted({r["rank"] for r in dev})
    out = {}
    for rank in ranks:
        span = spans[rank]
        for device in sorted({r["device"] for r in dev if r["rank"] == rank}):
            drows = [r for r in dev if r["rank"] == rank and r["device"] == device]
            out[(rank, device, None)] = entry(drows, launches, span, *span)
            for s in (s for s in steps if s["rank"] == rank):
                out[(rank, device, s["step"], s["start"])] = entry(drows, launches, span, s["start"], s["end"])
    totals = defaultdict(lambda: defaultdict(int))
    for r in dev:
        if r["kind"] == "kernel":
            totals[r["name"]][r["rank"]] += r["end"] - r["start"]
    return out, totals, len(ranks)


# -------------------------------------------------------------------- checks --

def breakdown(profile, *extra):
    r = subprocess.run([str(BIN), "breakdown", str(profile), "--format", "json", *extra], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def check(profile, paths, docs=None):
    want, totals, n_ranks = expected(paths, docs)
    got = breakdown(profile, "--top", "1000")
    assert got["n_ranks"] == n_ranks
    assert len(got["entries"]) == len(want)
    for e in got["entries"]:
        rank = -1 if e["rank"] is None else e["rank"]
        device = int(e["device"].split()[-1])
        key = (rank, device, None) if e["step"] is None else (rank, device, e["step"], e["start_ns"])
        w = want[key]
        t = e["temporal"]
        assert {k: t[k] for k in w["temporal"]} == w["temporal"], key
        assert sum(t[k] for k in ("compute_ns", "communication_ns", "memory_ns", "idle_ns")) == t["window_ns"]
        if w["comm_total"]:
            assert t["overlap_pct"] == pytest.approx(100 * t["overlapped_comm_ns"] / w["comm_total"], rel=1e-5)
        else:
            assert t["overlap_pct"] is None
        assert e["idle"] == w["idle"], key
        assert e["classes"] == w["classes"], key
        launch = {k: v for k, v in e["launch"].items() if k in w["launch"]}
        assert launch == w["launch"], key
        xfer = {x["kind"]: {k: x[k] for k in ("count", "with_bytes", "bytes", "duration_ns")} for x in e["transfers"]}
        assert xfer == w["transfers"], key
        for x in e["transfers"]:
            assert x["gbps"] == pytest.approx(x["bytes"] / x["duration_ns"] if x["duration_ns"] else 0, rel=1e-5)
    order = sorted(totals, key=lambda n: (-sum(totals[n].values()), n))
    assert [k["name"] for k in got["kernels"]] == order
    for k in got["kernels"]:
        per_rank = [totals[k["name"]].get(r, 0) for r in sorted({r for t in totals.values() for r in t})]
        assert k["total_ns"] == sum(per_rank)
        assert (k["rank_min_ns"], k["rank_max_ns"]) == (min(per_rank), max(per_rank))
    return got


def process(tmp_path, files, name="prof"):
    cap = tmp_path / f"cap-{name}"
    cap.mkdir()
    for f in files:
        shutil.copy(f, cap / f.name)
    out = tmp_path / name
    r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def test_gpt2_eager(tmp_path):
    got = check(process(tmp_path, [REAL / "gpt2_eager.json.gz"]), [REAL / "gpt2_eager.json.gz"])
    whole = got["entries"][0]
    assert whole["step"] is None and whole["launch"]["linked"] == whole["launch"]["kernels"] > 0
    assert [e["step"] for e in got["entries"][1:]] == [2, 3, 4]
    assert whole["temporal"]["communication_ns"] == 0 and whole["classes"]["communication"]["count"] == 0


def test_ddp_pair(tmp_path):
    paths = [REAL / f"ddp_rank{r}.json.gz" for r in (0, 1)]
    got = check(process(tmp_path, paths), paths)
    assert {e["rank"] for e in got["entries"]} == {0, 1}
    # gloo runs its collectives on the CPU: the GPU has no communication kernel.
    assert all(e["classes"]["communication"]["count"] == 0 for e in got["entries"])


def test_jax(tmp_path):
    got = check(process(tmp_path, [REAL / "jax_perfetto_trace.json.gz"]), [REAL / "jax_perfetto_trace.json.gz"])
    assert len(got["entries"]) > 1 and got["entries"][0]["launch"]["linked"] > 0


def kineto(rank, base):
    """A generated Kineto trace of one rank: per layer a gemm, an nccl all-reduce launched
    right after it on a second stream (overlapping the gemm's end), a memcpy under the
    all-reduce, µs with three decimals."""
    ev = [{"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
          {"ph": "M", "name": "process_labels", "pid": 10, "args": {"labels": "CPU"}},
          {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "pid": 10, "tid": 10,
           "ts": Decimal("0.5"), "dur": Decimal("400.25")}]
    corr, t = 1, Decimal("1.001")
    for layer in range(6):
        gap = Decimal(5 + 7 * rank + layer) + Decimal("0.0005")
        for name, cat, dur, stream, extra in (
                ("gemm_bf16", "kernel", Decimal("20.123"), 7, {}),
                ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "kernel", Decimal("30.5"), 8, {}),
                ("Memcpy DtoD (Device -> Device)", "gpu_memcpy", Decimal("4.25"), 9, {"bytes": 4096 * (layer + 1)})):
            launch = t
            ev.append({"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "pid": 10, "tid": 10,
                       "ts": launch, "dur": Decimal("2.5"), "args": {"correlation": corr}})
            start = launch + Decimal(3 + rank) + (Decimal("12.5") if stream == 8 else 0) + (
                Decimal(20) if stream == 9 else 0)
            ev.append({"ph": "X", "name": name, "cat": cat, "pid": 0, "tid": stream, "ts": start, "dur": dur,
                       "args": {"correlation": corr, "stream": stream, **extra}})
            corr += 1
            t += Decimal("1.25")
        t += Decimal(60) + gap
    return {"distributedInfo": {"rank": rank, "world_size": 2}, "baseTimeNanoseconds": base, "traceEvents": ev}


def test_generated_two_ranks_with_nccl(tmp_path):
    docs, paths = [], []
    for rank in (0, 1):
        doc = kineto(rank, 1_700_000_000_000_000_000)
        p = tmp_path / f"rank{rank}.json"
        p.write_text(json.dumps(doc, default=str))
        docs.append(json.loads(p.read_text(), parse_float=Decimal))
        paths.append(p)
    prof = process(tmp_path, paths, "gen")
    got = check(prof, paths, docs)
    for e in got["entries"]:
        assert e["temporal"]["communication_ns"] > 0 and e["temporal"]["overlapped_comm_ns"] > 0
        assert e["classes"]["communication"]["count"] == 6 or e["step"] is not None
    nccl = next(k for k in got["kernels"] if k["name"].startswith("nccl"))
    assert nccl["class"] == "communication" and nccl["count"] == 12
    # --rank and --step keep the matching entries only.
    one = breakdown(prof, "--rank", "1", "--step", "1")
    assert [(e["rank"], e["step"]) for e in one["entries"]] == [(1, 1)]
    assert one["entries"][0] == next(e for e in got["entries"] if e["rank"] == 1 and e["step"] == 1)


def test_api_equals_cli(tmp_path):
    data = tmp_path / "data"
    cap = tmp_path / "cap"
    cap.mkdir()
    shutil.copy(REAL / "gpt2_eager.json.gz", cap)
    r = subprocess.run([str(BIN), "process", str(cap), "--data-path", str(data), "--display-name", "gpt2"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cli = breakdown(data / "profiles" / "global" / "gpt2@latest", "--top", "3", "--step", "3")
    with serving(data) as (port, _):
        status, body = http_get_json(port, "/api/profiles/gpt2/breakdown?top=3&step=3")
        assert status == 200
        for e in body["entries"]:   # Unix ns beyond 2^53 come as strings (docs/api.md)
            assert isinstance(e["start_ns"], str) and isinstance(e["end_ns"], str)
            e["start_ns"], e["end_ns"] = int(e["start_ns"]), int(e["end_ns"])
        assert body == cli
        status, body = http_get_json(port, "/api/profiles/gpt2/breakdown?top=0")
        assert status == 400


def union_len(iv):
    """Length of the union of [s, e) intervals, by a sweep of +1/-1 boundaries."""
    total, depth, prev = 0, 0, None
    for x, d in sorted(p for s, e in iv if e > s for p in ((s, 1), (e, -1))):
        if depth > 0:
            total += x - prev
        depth += d
        prev = x
    return total


def test_neuron_device_profile(tmp_path):
    """On a synthesized capture's device profiles (two cores, so AllReduces), the engine
    breakdown equals unions worked out here with pyarrow."""
    import pyarrow.parquet as pq
    cap, prof = tmp_path / "syn", tmp_path / "synp"
    for args in (["synth", "--out", cap, "--preset", "tiny", "--cores", "2"], ["process", cap, "--output-file", prof]):
        r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    devices = sorted((prof / "devices").iterdir())
    assert len(devices) == 2
    for d in devices:
        def table(name, cols):
            return [x for x in pq.read_table(d / f"{name}.parquet", columns=cols).to_pylist()
                    if x["start_ts"] is not None and x["end_ts"] is not None]
        ins = table("Instruction", ["start_ts", "end_ts", "engine"])
        cc = table("CcOp", ["start_ts", "end_ts"])
        dma = table("DmaPacket", ["start_ts", "end_ts", "transfer_bytes"])
        iv = lambda rows: [(x["start_ts"], x["end_ts"]) for x in rows]
        lo = min(x["start_ts"] for x in ins + cc + dma)
        hi = max(x["end_ts"] for x in ins + cc + dma)
        compute, cc_c, every = union_len(iv(ins)), union_len(iv(ins + cc)), union_len(iv(ins + cc + dma))
        got = breakdown(d)
        assert got["kind"] == "device" and cc
        assert (got["start_ns"], got["end_ns"], got["window_ns"]) == (lo, hi, hi - lo)
        assert got["compute_ns"] == compute
        assert got["communication_ns"] == cc_c - compute
        assert got["overlapped_cc_ns"] == union_len(iv(cc)) - (cc_c - compute)
        assert got["memory_ns"] == every - cc_c
        assert got["idle_ns"] == hi - lo - every
        assert (got["cc_count"], got["cc_ns"]) == (len(cc), union_len(iv(cc)))
        assert got["dma_count"] == len(dma)
        assert got["dma_bytes"] == sum(x["transfer_bytes"] or 0 for x in dma)
        assert got["dma_busy_ns"] == union_len(iv(dma))
        assert got["dma_gbps"] == pytest.approx(got["dma_bytes"] / got["dma_busy_ns"], rel=1e-5)
        engines = sorted({x["engine"] for x in ins})
        assert [e["engine"] for e in got["engines"]] == engines
        for e in got["engines"]:
            rows = [x for x in ins if x["engine"] == e["engine"]]
            assert (e["count"], e["busy_ns"]) == (len(rows), union_len(iv(rows)))
            assert e["idle_ns"] == hi - lo - e["busy_ns"]


def test_usage_errors(tmp_path):
    """Bad options exit 2 naming them; --rank on a device profile and a directory with
    neither table are refused."""
    for args, code, text in ((["--rank", "x"], 2, "--rank 'x'"), (["--top", "-1"], 2, "--top '-1'"),
                             (["--format", "csv"], 2, "unknown format 'csv'"), ([], 1, "neither SystemProfileEvents")):
        empty = tmp_path / "empty"
        empty.mkdir(exist_ok=True)
        r = subprocess.run([str(BIN), "breakdown", str(empty), *args], capture_output=True, text=True)
        assert r.returncode == code and text in r.stderr, (args, r.returncode, r.stderr)
    cap, prof = tmp_path / "syn", tmp_path / "synp"
    for a in (["synth", "--out", cap, "--preset", "tiny", "--cores", "1", "--no-system"], ["process", cap, "--output-file", prof]):
        assert subprocess.run([str(BIN), *map(str, a)], capture_output=True).returncode == 0
    r = subprocess.run([str(BIN), "breakdown", str(prof), "--rank", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "not a system profile" in r.stderr
