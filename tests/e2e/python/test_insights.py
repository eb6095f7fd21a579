"""`nxprof insights`, summary's insights member and GET /api/profiles/<name>/insights
(docs/analyses.md#performance-insights): each rule on a profile made to trigger it and on one that does
not. GPU rules on hand-written Kineto traces; NeuronCore rules on a synthetic device
profile of two cores (its Summary crosses no threshold) and on a copy whose Summary row is
rewritten with pyarrow to cross each one; throttling and collective outliers as its
ThrottleSummary and CcOp, read with pyarrow, say.

Independent of nxprof: the expected idle time is the span of the trace's events minus the
union of its GPU kernel intervals, worked out here from the JSON; the idle causes, launch
delays and communication overlap the breakdown rules read come from test_breakdown's model
of the raw JSON (`expected`); the NeuronCore ratios are computed from the Summary values
written here.
"""
import gzip
import json
import shutil

from decimal import Decimal

import pyarrow as pa
import pytest
import pyarrow.parquet as pq

from conftest import TEST_DATA, http_get_json, nx, serving
from test_breakdown import expected as breakdown_model

GPU_RULES = ["gpu_idle", "sync_memcpy", "launch_outliers", "low_overlap"]


def kineto(kernels, runtime, span_us, comm=()):
    """A one-rank Kineto trace: a host op over [0, span_us), GPU 0 kernels (and nccl
    kernels `comm` on a second stream), runtime calls."""
    ev = [{"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 0, "dur": span_us}]
    ev += [{"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": a, "dur": b - a}
           for a, b in kernels]
    ev += [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 8, "ts": a, "dur": b - a}
           for a, b in comm]
    ev += [{"ph": "X", "cat": "cuda_runtime", "name": n, "pid": 100, "tid": 100, "ts": a, "dur": d}
           for n, a, d in runtime]
    return {"schemaVersion": 1, "traceEvents": ev}


def union_us(iv):
    total, end = 0, None
    for a, b in sorted(iv):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def process_trace(tmp_path, name, doc):
    cap = tmp_path / f"cap_{name}"
    cap.mkdir()
    with gzip.open(cap / "trace.json.gz", "wt") as f:
        json.dump(doc, f)
    out = tmp_path / f"out_{name}"
    nx("process", cap, "--output-file", out)
    return out


def insights(profile):
    return json.loads(nx("insights", profile, "--format", "json").stdout)


def test_gpu_rules_fire(tmp_path):
    kernels = [(100, 200), (150, 300), (700, 750)]     # the second overlaps the first
    runtime = [("cudaMemcpy", 400, 20), ("cudaMemcpy2D", 450, 5), ("cudaMemcpyAsync", 500, 9)]
    out = process_trace(tmp_path, "loud", kineto(kernels, runtime, 1000))
    doc = insights(out)
    by = {i["rule"]: i for i in doc["insights"]}
    assert set(by) == {"gpu_idle", "sync_memcpy"}
    busy_ns = union_us(kernels) * 1000
    idle = by["gpu_idle"]["values"]
    assert (idle["wall_ns"], idle["busy_ns"], idle["idle_ns"]) == (1_000_000, busy_ns, 1_000_000 - busy_ns)
    assert idle["cause"] == "other" and idle["other_ns"] == idle["idle_ns"]   # no launch linked
    assert by["gpu_idle"]["score"] == (1_000_000 - busy_ns) / 1_000_000
    assert by["sync_memcpy"]["values"] == {"count": 2, "total_ns": 25_000, "span_ns": 1_000_000}
    assert [i["score"] for i in doc["insights"]] == sorted((i["score"] for i in doc["insights"]), reverse=True)
    text = nx("insights", out).stdout
    assert "rule gpu_idle: idle over 20% of the rank's span" in text
    summary = json.loads(nx("summary", out, "--format", "json").stdout)
    assert summary["insights"] == doc
    assert nx("summary", out).stdout.splitlines()[2].startswith("Insights (most severe first)")


def test_gpu_rules_quiet(tmp_path):
    kernels = [(0, 500), (500, 850)]                   # idle 15 %
    comm = [(100, 400)]                                # 30 % of the span, all under compute
    out = process_trace(tmp_path, "quiet", kineto(kernels, [("cudaMemcpyAsync", 500, 9)], 1000, comm))
    doc = insights(out)
    assert doc["insights"] == []
    assert [r["id"] for r in doc["rules"]] == GPU_RULES


def launched(kernels, span_us):
    """A one-rank Kineto trace over [0, span_us): per kernel (name, launch_us, start_us,
    dur_us) a cudaLaunchKernel and the kernel on GPU 0, linked by correlation id."""
    ev = [{"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 0, "dur": span_us}]
    for i, (name, launch, start, dur) in enumerate(kernels, 1):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
                   "ts": launch, "dur": 0.005, "args": {"correlation": i}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": start, "dur": dur,
                   "args": {"correlation": i, "stream": 7}})
    return {"schemaVersion": 1, "traceEvents": ev}


def expected_breakdown_rules(tmp_path, name, doc):
    """The breakdown rules' findings on GPU 0 of a one-rank trace (its JSON read with
    Decimal floats), from the model of the raw JSON: {rule: values}."""
    entries, _, _ = breakdown_model([tmp_path / name], [doc])
    e = entries[(-1, 0, None)]
    t, idle, launch = e["temporal"], e["idle"], e["launch"]
    out = {}
    if t["idle_ns"] / t["window_ns"] > 0.2:
        causes = [("host_wait", idle["host_wait_ns"]), ("kernel_wait", idle["kernel_wait_ns"]),
                  ("other", idle["other_ns"])]
        cause = max(causes, key=lambda c: c[1])[0]   # max keeps the first of equal ones
        out["gpu_idle"] = dict(device="GPU 0", rank=None, idle_ns=t["idle_ns"], wall_ns=t["window_ns"],
                               busy_ns=t["window_ns"] - t["idle_ns"], idle_fraction=t["idle_ns"] / t["window_ns"],
                               cause=cause, host_wait_ns=idle["host_wait_ns"], kernel_wait_ns=idle["kernel_wait_ns"],
                               other_ns=idle["other_ns"])
    if launch.get("outliers") and launch["max_ns"] >= 1_000_000:
        out["launch_outliers"] = dict(device="GPU 0", rank=None, **{k: launch[k] for k in (
            "outliers", "linked", "outlier_above_ns", "median_ns", "max_ns")})
    comm = e["comm_total"]
    if comm and comm / t["window_ns"] > 0.1:
        pct = 100 * t["overlapped_comm_ns"] / comm
        if pct < 50:
            out["low_overlap"] = dict(device="GPU 0", rank=None, communication_ns=comm,
                                      exposed_ns=t["communication_ns"], window_ns=t["window_ns"],
                                      communication_share=comm / t["window_ns"], overlap_pct=pct)
    return out


def same_values(got, want):
    """Equal keys; numbers equal up to rounding of the fractions, the rest exactly."""
    assert set(got) == set(want)
    for k, v in want.items():
        assert got[k] == (pytest.approx(v, rel=1e-12) if isinstance(v, float) else v), k


def check_breakdown_rules(tmp_path, name, doc):
    want = expected_breakdown_rules(tmp_path, name, json.loads(json.dumps(doc), parse_float=Decimal))
    got = {i["rule"]: i for i in insights(process_trace(tmp_path, name, doc))["insights"]}
    assert set(got) == set(want)
    for rule, values in want.items():
        same_values(got[rule]["values"], values)
    return got


def test_host_wait_and_launch_outliers(tmp_path):
    """20 kernels each launched just before it runs, 300 us apart (the host is late);
    one more launched while the 20th runs and run 2 ms later: an outlier."""
    kernels = [("sgemm", 400 * i, 400 * i + 0.02, 100) for i in range(1, 21)] + [("sgemm", 8050, 10050, 100)]
    got = check_breakdown_rules(tmp_path, "host", launched(kernels, 12000))
    assert set(got) == {"gpu_idle", "launch_outliers"}
    assert got["gpu_idle"]["values"]["cause"] == "host_wait"
    assert "CUDA graphs" in got["gpu_idle"]["evidence"]
    assert got["launch_outliers"]["values"]["outliers"] == 1


def test_kernel_wait_and_low_overlap(tmp_path):
    """50 kernels of 15 us every 20 us, all launched first, every other one an nccl
    all-reduce: short gaps with work queued, communication never under compute; the
    worst launch delay is under 1 ms."""
    kernels = [("ncclDevKernel_AllReduce" if k % 2 else "sgemm", 0.01 * (k + 1), 1 + 20 * k, 15) for k in range(50)]
    got = check_breakdown_rules(tmp_path, "kwait", launched(kernels, 1000))
    assert set(got) == {"gpu_idle", "low_overlap"}
    assert got["gpu_idle"]["values"]["cause"] == "kernel_wait" and "fuse" in got["gpu_idle"]["evidence"]


DEVICE_FIELDS = {
    # field: (value that fires, ...) per rule, against hardware_flops 1000 / hbm_read_bytes 1000
    "model_flops": 400, "hardware_flops": 1000, "transpose_flops": 150,
    "spill_save_bytes": 200, "spill_reload_bytes": 100, "hbm_read_bytes": 1000,
    "dma_transfer_count": 50, "dma_transfer_average_bytes": 512.0,
}


DEVICE_FIELDS_RULES = ("low_model_flops", "transpose_flops", "spill_reload", "small_dma")


def rewrite_summary(device_dir, values):
    t = pq.read_table(device_dir / "Summary.parquet")
    cols = {n: t.column(n) for n in t.column_names}
    for k, v in values.items():
        cols[k] = pa.array([v], type=t.schema.field(k).type)
    pq.write_table(pa.table(cols, schema=t.schema), device_dir / "Summary.parquet")


def expected_device(values, device_dir):
    """The rules that must fire: Summary ratios from values, throttling and collective
    outliers from the profile's ThrottleSummary and CcOp read with pyarrow."""
    hw, hbm = values["hardware_flops"], values["hbm_read_bytes"]
    fired = set()
    if values["model_flops"] / hw < 0.5:
        fired.add("low_model_flops")
    if values["transpose_flops"] / hw > 0.1:
        fired.add("transpose_flops")
    if (values["spill_save_bytes"] + values["spill_reload_bytes"]) / hbm > 0.25:
        fired.add("spill_reload")
    if values["dma_transfer_count"] > 0 and values["dma_transfer_average_bytes"] < 4096:
        fired.add("small_dma")
    throttle = device_dir / "ThrottleSummary.parquet"
    if throttle.exists() and any((r["throttle_active_time_ns"] or 0) > 0 for r in pq.read_table(throttle).to_pylist()):
        fired.add("throttle_active")
    cc = device_dir / "CcOp.parquet"
    groups = {}
    for r in pq.read_table(cc).to_pylist() if cc.exists() else []:
        groups.setdefault((r["operation"], r["input_size"]), []).append(r["duration_ns"])
    for d in groups.values():
        d.sort()
        if len(d) >= 3 and d[-1] > 2 * d[(len(d) - 1) // 2]:
            fired.add("cc_outliers")
    return fired


def test_device_rules(tmp_path):
    cap = tmp_path / "syn"
    nx("synth", "--out", cap, "--preset", "tiny", "--cores", "2")   # two cores: collectives (CcOp)
    data = tmp_path / "data"
    nx("process", cap, "--data-path", data, "--display-name", "syn")
    dev = next((data / "profiles" / "global").glob("syn-nd*@latest"))
    base = pq.read_table(dev / "Summary.parquet").to_pylist()[0]
    assert {i["rule"] for i in insights(dev)["insights"]} == expected_device(base, dev)
    assert not expected_device(base, dev) & set(DEVICE_FIELDS_RULES)   # its Summary crosses no threshold
    loud = dev.parent / "loud-nd0-nc0"
    shutil.copytree(dev.resolve(), loud)
    rewrite_summary(loud, DEVICE_FIELDS)
    cc = pq.read_table(loud / "CcOp.parquet")
    durations = cc.column("duration_ns").to_pylist()
    durations[0] = 3 * max(durations)   # one collective three times the longest: an outlier
    pq.write_table(cc.set_column(cc.column_names.index("duration_ns"), "duration_ns",
                                 pa.array(durations, type=cc.schema.field("duration_ns").type)), loud / "CcOp.parquet")
    doc = insights(loud)
    assert {i["rule"] for i in doc["insights"]} == expected_device(DEVICE_FIELDS, loud) >= {
        *DEVICE_FIELDS_RULES, "cc_outliers"}
    by = {i["rule"]: i["values"] for i in doc["insights"]}
    assert by["low_model_flops"]["ratio"] == 0.4 and by["spill_reload"]["ratio"] == 0.3
    assert [r["scope"] for r in doc["rules"]] == ["device"] * 6
    with serving(data) as (port, _):
        status, api = http_get_json(port, f"/api/profiles/{dev.name.removesuffix('@latest')}/insights")
        assert status == 200 and api["insights"] == insights(dev)["insights"] and len(api["rules"]) == 6
        status, api = http_get_json(port, "/api/profiles/syn/insights")
        assert status == 200 and [r["id"] for r in api["rules"]] == GPU_RULES


def test_gpu_idle_of_a_real_trace(tmp_path):
    """gpt2_eager.json.gz: GPU 0's idle time from the JSON (span of every event that is a
    row, i.e. all but metadata, less the union of kernel, gpu_memcpy and gpu_memset
    intervals, exact decimals plus baseTimeNanoseconds) is what gpu_idle reports."""
    src = TEST_DATA / "real-gpu" / "gpt2_eager.json.gz"
    doc = json.loads(gzip.open(src).read(), parse_float=Decimal)
    base = int(doc.get("baseTimeNanoseconds", 0))

    def ns(us):
        return int((Decimal(us) * 1000).to_integral_value()) + base

    spans, busy, sync = [], [], 0
    for e in doc["traceEvents"]:
        if not e or e.get("ph") == "M" or "ts" not in e:
            continue
        a = ns(e["ts"])
        b = ns(e["ts"] + e["dur"]) if e.get("ph") == "X" else a
        spans.append((a, b))
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            busy.append((a, b))
        name = e.get("name", "")
        sync += name.startswith("cudaMemcpy") and "Async" not in name
    wall = max(b for _, b in spans) - min(a for a, _ in spans)
    busy_ns = union_us(busy)
    cap = tmp_path / "cap"
    cap.mkdir()
    shutil.copy(src, cap / src.name)
    out = tmp_path / "out"
    nx("process", cap, "--output-file", out)
    doc = insights(out)
    by = {i["rule"]: i for i in doc["insights"]}
    values = by["gpu_idle"]["values"]
    assert {k: values[k] for k in ("device", "rank", "idle_ns", "wall_ns", "busy_ns", "idle_fraction")} == {
        "device": "GPU 0", "rank": None, "idle_ns": wall - busy_ns, "wall_ns": wall, "busy_ns": busy_ns,
        "idle_fraction": (wall - busy_ns) / wall}
    assert ("sync_memcpy" in by) == (sync > 0)
    # The idle causes and the other breakdown rules, from the model of the same JSON.
    want = expected_breakdown_rules(tmp_path, src.name, json.loads(gzip.open(src).read(), parse_float=Decimal))
    assert set(want) == {r for r in by if r != "sync_memcpy"}
    same_values(values, want["gpu_idle"])
    assert values["cause"] == "host_wait"
