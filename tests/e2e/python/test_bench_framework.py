"""The framework-trace benchmark (bench/framework, docs/benchmarks.md "Framework traces") on a
small file: the generator is deterministic and its event mix is gpt2_eager.json.gz's (the
shares counted here with json, not with the generator's own --mix), nxprof and the runner
read what it writes, and the JSON layers of the microbenchmark agree on every event. No
timing is asserted; the figures are the benchmark's.
"""
import collections
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, ROOT

GEN = ROOT / "bench" / "framework" / "gen_kineto.py"
REAL = ROOT / "tests" / "data" / "real-gpu" / "gpt2_eager.json.gz"


def generate(path, mb, seed=7):
    subprocess.run([sys.executable, str(GEN), "--size-mb", str(mb), "--out", str(path), "--seed", str(seed)],
                   check=True, capture_output=True, timeout=300)
    return path


def shares(events):
    kinds = collections.Counter(
        (e.get("ph"), "[memory]" if e.get("name") == "[memory]" else e.get("cat", "")) for e in events)
    return {k: n / len(events) for k, n in kinds.items()}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("gen") / "trace.json", 3)


def test_deterministic_and_sized(trace, tmp_path):
    assert generate(tmp_path / "again.json", 3).read_bytes() == trace.read_bytes()
    assert generate(tmp_path / "seed8.json", 3, seed=8).read_bytes() != trace.read_bytes()
    assert 3_000_000 <= trace.stat().st_size <= 3_000_000 * 1.01


def test_mix_follows_the_real_trace(trace):
    with gzip.open(REAL) as f:
        real_raw = f.read()
    real = json.loads(real_raw)["traceEvents"]
    gen_raw = trace.read_bytes()
    gen = json.loads(gen_raw)["traceEvents"]
    want, got = shares(real), shares(gen)
    for kind, share in want.items():
        if share >= 0.005:
            assert abs(got.get(kind, 0) - share) < 0.02, (kind, share, got.get(kind))
    assert set(got) <= set(want), set(got) - set(want)
    real_bpe, gen_bpe = len(real_raw) / len(real), len(gen_raw) / len(gen)
    assert abs(gen_bpe / real_bpe - 1) < 0.15, (real_bpe, gen_bpe)
    # Every kernel and memset has its runtime call: one correlation id, an ac2g pair.
    runtime = {e["args"]["correlation"] for e in gen if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    device = [e["args"]["correlation"] for e in gen if e.get("cat") in ("kernel", "gpu_memset")]
    assert device and set(device) <= runtime
    starts = {e["id"] for e in gen if e.get("cat") == "ac2g" and e["ph"] == "s"}
    assert starts == set(device)
    assert max(len(e["name"]) for e in gen if e.get("cat") == "kernel") > 200


def test_nxprof_and_runner_read_it(trace, tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "trace.json").symlink_to(trace)
    r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(tmp_path / "prof")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "framework" / "run.py"), "--sizes", "1",
                        "--runs", "1", "--peers", "json", "--bin", str(BIN), "--dir", str(tmp_path / "bench")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
    assert set(rows) == {"nxprof", "json"}, r.stdout
    assert all(re.fullmatch(r"[0-9.]+", v) for v in rows["json"][1:]), r.stdout
    assert list((tmp_path / "bench").iterdir()) == [], "the runner removes its folder"


def test_json_layers_agree(trace):
    if not Path("/usr/include/simdjson.h").exists():
        pytest.skip("libsimdjson-dev is not installed (bench only)")
    r = subprocess.run(["bash", str(ROOT / "bench" / "framework" / "json_layers.sh"), str(trace), "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    events = json.loads(trace.read_bytes())["traceEvents"]
    ts_sum = sum(e.get("ts", 0) + e.get("dur", 0) for e in events)
    layers = {f[0]: f for f in (line.split() for line in r.stdout.splitlines()[1:])}
    assert set(layers) == {"yajl", "simdjson", "json_scan", "scan"}, r.stdout
    for name, f in layers.items():
        assert int(f[2]) == len(events), (name, f)
        assert float(f[5]) == pytest.approx(ts_sum, rel=1e-9), (name, f)
