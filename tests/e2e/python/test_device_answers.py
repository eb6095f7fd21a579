"""Devices and steps (docs/analyses.md) on the real GPU traces of tests/data/real-gpu:
gpt2_eager (Kineto, one GPU), the DDP pair (two ranks, both on GPU 0), and the JAX run as
Perfetto JSON and as its XSpace protobuf.

Independent of nxprof: every expectation is worked out here from the raw trace JSON (json
with exact decimals): times are the µs decimal text turned into ns exactly (halves away
from zero, chrome_model.us_to_ns) plus baseTimeNanoseconds, as docs/processing.md says the
processor does. A GPU is a process whose metadata labels it "GPU <n>" (process_labels) or
names it "/device:GPU:<n>" (process_name); its kernel, gpu_memcpy and gpu_memset slices
(JAX, without a cat: every slice of a "Stream #" thread, by name) are its activity, and
the union of their intervals is its busy time; the wall is the first start to the last end
over every row of the rank. Steps are the host ProfilerStep#N slices (cat user_annotation)
and the slices whose args hold step_num; their device time is the union clipped to the
step. Checked against `nxprof summary --format json`, the text summary, `top`'s default
operator list (the profiler's own rows left out) and GET /api/profiles/<name>/summary.
The XSpace file is the same run as the JSON, so its answers must equal the JSON's.
"""
import gzip
import json
import shutil
from collections import defaultdict
from decimal import Decimal

import pytest

from chrome_model import us_to_ns
from conftest import TEST_DATA, http_get_json, nx, serving

GPU = TEST_DATA / "real-gpu"
KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def load(path):
    return json.loads(gzip.open(path).read(), parse_float=Decimal)


def union(intervals):
    """The union of [(start, end)] as sorted disjoint intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(u, lo=None, hi=None):
    """Length of the union u inside [lo, hi) (everything when lo is None)."""
    if lo is None:
        return sum(e - s for s, e in u)
    return sum(max(0, min(e, hi) - max(s, lo)) for s, e in u)


def expected(doc):
    """{"devices": [...], "steps": [...]} of one trace file, rank from distributedInfo."""
    events = doc["traceEvents"]
    base = int(doc.get("baseTimeNanoseconds", 0))
    rank = (doc.get("distributedInfo") or {}).get("rank")
    gpus, streams = {}, set()
    for e in events:
        if e.get("ph") != "M":
            continue
        v = str((e.get("args") or {}).get("labels" if e["name"] == "process_labels" else "name", ""))
        if e["name"] == "process_labels" and v.startswith("GPU ") and v[4:].isdigit():
            gpus[e["pid"]] = int(v[4:])
        if e["name"] == "process_name" and v.startswith("/device:GPU:") and v[12:].isdigit():
            gpus[e["pid"]] = int(v[12:])
        if e["name"] == "thread_name" and v.startswith("Stream #"):
            streams.add((e["pid"], e["tid"]))
    first = last = None
    acts = defaultdict(lambda: defaultdict(list))   # device -> kind -> [(s, e)]
    steps = []
    for e in events:
        if "ts" not in e or e.get("ph") == "M":
            continue
        s = us_to_ns(e["ts"]) + base
        t = s + us_to_ns(e.get("dur", 0)) if e.get("ph") == "X" else s
        first = s if first is None else min(first, s)
        last = t if last is None else max(last, t)
        if e.get("ph") != "X":
            continue
        name, cat = e.get("name", ""), e.get("cat")
        if e.get("pid") in gpus:
            if cat is not None:
                kind = KINDS.get(cat)
            elif (e["pid"], e["tid"]) in streams:
                kind = "memcpy" if name.lower().startswith("memcpy") else \
                       "memset" if name.lower().startswith("memset") else "kernel"
            else:
                kind = None
            if kind:
                acts[gpus[e["pid"]]][kind].append((s, t))
            continue
        if name.startswith("ProfilerStep#") and cat == "user_annotation":
            steps.append((name, int(name[13:]), s, t))
        elif str((e.get("args") or {}).get("step_num", "")).isdigit():
            steps.append((name, int(e["args"]["step_num"]), s, t))
    devices = []
    everything = []
    unions = defaultdict(list)
    for dev in sorted(acts):
        k = acts[dev]
        all_ = union(k["kernel"] + k["memcpy"] + k["memset"])
        everything += k["kernel"] + k["memcpy"] + k["memset"]
        for kind in ("kernel", "memcpy", "memset"):
            unions[kind] += k[kind]
        busy = length(all_)
        devices.append({"device": f"GPU {dev}", "rank": rank, "start_ns": first, "end_ns": last,
                        "wall_ns": last - first, "busy_ns": busy, "idle_ns": last - first - busy,
                        "kernel_ns": length(union(k["kernel"])), "kernel_count": len(k["kernel"]),
                        "memcpy_ns": length(union(k["memcpy"])), "memcpy_count": len(k["memcpy"]),
                        "memset_ns": length(union(k["memset"])), "memset_count": len(k["memset"])})
    all_u = union(everything)
    kind_u = {kind: union(v) for kind, v in unions.items()}
    starts = [s for dev in acts for s, _ in acts[dev]["kernel"]]
    out_steps = []
    for name, num, s, t in sorted(steps, key=lambda x: (x[2], x[1])):
        out_steps.append({"name": name, "step": num, "rank": rank, "start_ns": s, "end_ns": t,
                          "duration_ns": t - s, "gpu_busy_ns": length(all_u, s, t),
                          "kernel_ns": length(kind_u.get("kernel", []), s, t),
                          "kernel_count": sum(s <= x < t for x in starts),
                          "memcpy_ns": length(kind_u.get("memcpy", []), s, t),
                          "memset_ns": length(kind_u.get("memset", []), s, t)})
    return {"devices": devices, "steps": out_steps}


def without_utilization(devices):
    return [{k: v for k, v in d.items() if k != "utilization"} for d in devices]


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    """name -> (system profile dir, the trace files in it)."""
    root = tmp_path_factory.mktemp("devices")
    sets = {"gpt2": ["gpt2_eager.json.gz"], "ddp": ["ddp_rank0.json.gz", "ddp_rank1.json.gz"],
            "jax": ["jax_perfetto_trace.json.gz"], "jaxpb": ["jax.xplane.pb"]}
    out = {}
    for name, files in sets.items():
        cap = root / f"cap_{name}"
        cap.mkdir()
        for f in files:
            shutil.copy(GPU / f, cap / f)
        nx("process", cap, "--data-path", root / "data", "--display-name", name)
        out[name] = (root / "data" / "profiles" / "global" / f"{name}@latest", files)
    out["data"] = root / "data"
    return out


def summary(prof, *args):
    return json.loads(nx("summary", prof, "--format", "json", *args).stdout)


@pytest.mark.parametrize("name", ["gpt2", "ddp", "jax"])
def test_devices_and_steps_equal_the_json(profiles, name):
    prof, files = profiles[name]
    want = {"devices": [], "steps": []}
    for f in files:
        e = expected(load(GPU / f))
        want["devices"] += e["devices"]
        want["steps"] += e["steps"]
    rank_key = lambda r: -1 if r is None else r
    want["devices"].sort(key=lambda d: (rank_key(d["rank"]), d["device"]))
    want["steps"].sort(key=lambda s: (rank_key(s["rank"]), s["start_ns"], s["step"]))
    got = summary(prof)
    assert without_utilization(got["devices"]) == want["devices"]
    for d in got["devices"]:
        assert d["utilization"] == pytest.approx(d["busy_ns"] / d["wall_ns"], rel=1e-12)
    assert got["steps"] == want["steps"]
    assert len(got["steps"]) == {"gpt2": 3, "ddp": 8, "jax": 10}[name]   # every step, the last one too


def test_xplane_gives_the_json_answers(profiles):
    assert summary(profiles["jaxpb"][0])["devices"] == summary(profiles["jax"][0])["devices"]
    assert summary(profiles["jaxpb"][0])["steps"] == summary(profiles["jax"][0])["steps"]


def test_rank_filter(profiles):
    prof, _ = profiles["ddp"]
    for rank in (0, 1):
        e = expected(load(GPU / f"ddp_rank{rank}.json.gz"))
        got = summary(prof, "--rank", str(rank))
        assert without_utilization(got["devices"]) == e["devices"]
        assert got["steps"] == e["steps"]


def test_gpu_stream_busy_excludes_annotations(profiles):
    """gpt2 runs one stream: its busy time is the device's, not the ProfilerStep spans'."""
    prof, files = profiles["gpt2"]
    dev = expected(load(GPU / files[0]))["devices"][0]
    got = summary(prof)
    stream = next(t for t in got["threads"] if t["thread"] == "GPU 0 / stream 7")
    assert stream["busy_ns"] == dev["busy_ns"]
    assert stream["top_level_events"] == dev["kernel_count"] + dev["memcpy_count"] + dev["memset_count"]


def profiler_rows(doc):
    return sum(1 for e in doc["traceEvents"]
               if e.get("ph") == "X" and (e.get("name", "").startswith("ProfilerStep#") or
                                          (e.get("cat") == "Trace" and e.get("name", "").startswith("PyTorch Profiler"))))


def test_operator_lists_leave_the_profiler_out(profiles):
    prof, files = profiles["gpt2"]
    n = profiler_rows(load(GPU / files[0]))
    assert n == 7   # PyTorch Profiler (0), ProfilerStep#2..#4 on the CPU and on the GPU
    top = json.loads(nx("top", prof, "--format", "json", "--limit", "0").stdout)
    names = [g["name"] for g in top["top"]]
    assert not [x for x in names if x.startswith(("ProfilerStep#", "PyTorch Profiler"))]
    assert top["profiler_rows_left_out"] == n
    assert sum(g["count"] for g in top["top"]) == top["rows"] - n
    every = json.loads(nx("top", prof, "--format", "json", "--limit", "0", "--profiler-rows").stdout)
    assert every["rows"] == top["rows"] and every["profiler_rows_left_out"] == 0
    assert "PyTorch Profiler (0)" in [g["name"] for g in every["top"]]
    s = summary(prof)
    assert [o["name"] for o in s["top_operators"]] == names[:10]
    assert s["events"] == top["rows"]
    total = next(l for l in nx("top", prof).stdout.splitlines() if l.startswith("total"))
    assert total.rstrip().endswith(" -") and "%" not in total


def test_text_summary_shows_devices_and_steps_first(profiles):
    prof, _ = profiles["gpt2"]
    text = nx("summary", prof).stdout
    assert text.index("Devices") < text.index("Steps") < text.index("Busy time per thread")
    got = summary(prof)
    line = next(l for l in text.splitlines() if l.strip().startswith("GPU 0"))
    assert f"{got['devices'][0]['kernel_count']}" in line.split()
    assert f"{100 * got['devices'][0]['utilization']:.2f}" in line.split()
    assert "Device profiles" not in text    # no NeuronCore here
    jax = nx("summary", profiles["jax"][0]).stdout
    assert "train (step 9)" in jax


def test_the_api_answers_the_same(profiles):
    with serving(profiles["data"]) as (port, _):
        for name in ("gpt2", "ddp"):
            status, doc = http_get_json(port, f"/api/profiles/{name}/summary")
            assert status == 200
            cli = summary(profiles[name][0])

            def plain(rows):   # the API writes integers beyond 2^53 as strings
                return [{k: int(v) if isinstance(v, str) and k.endswith("_ns") else v for k, v in r.items()}
                        for r in rows]
            assert plain(doc["devices"]) == cli["devices"]
            assert plain(doc["steps"]) == cli["steps"]
        status, doc = http_get_json(port, "/api/profiles/ddp/summary?rank=1")
        assert status == 200
        assert {d["rank"] for d in doc["devices"]} == {1} and {s["rank"] for s in doc["steps"]} == {1}
        status, doc = http_get_json(port, "/api/profiles/gpt2/summary")
        assert [o["name"] for o in doc["top_operators"]] == [o["name"] for o in summary(profiles["gpt2"][0])["top_operators"]]
        status, doc = http_get_json(port, "/api/profiles/gpt2/summary?profiler_rows=1")
        assert status == 200
        assert [o["name"] for o in doc["top_operators"]] == \
            [o["name"] for o in summary(profiles["gpt2"][0], "--profiler-rows")["top_operators"]]
        assert "PyTorch Profiler (0)" in [o["name"] for o in doc["top_operators"]]
        assert http_get_json(port, "/api/profiles/gpt2/summary?profiler_rows=2")[0] == 400
