"""fastparquet (pandas' other Parquet engine) reads every file of every kind of profile
nxprof writes, and its values equal pyarrow's.

Profiles: the llama-layer capture's set (system profile and two device profiles) and its
split copy (--max-rows-per-file), a tiny synthesized capture's set, the framework-only
profile of each real PyTorch trace in tests/data/chrome-traces, and the real GPU fixtures
of tests/data/real-gpu (GPT-2, the two DDP ranks as one capture, JAX as Perfetto JSON and
as XSpace protobuf).

Each file is read in a process of its own (fastparquet_read.py), so a reader that crashes
fails the test naming the file. Each is read with fastparquet's defaults (pandas' Arrow
strings), list<string> columns left out (fastparquet then reads their PLAIN pages without
repetition levels, whoever wrote them); the files holding such a column are read again
with object strings, every column compared.

Also checked from pyarrow's view of the footer: no column chunk that holds only nulls is
DELTA_BINARY_PACKED (fastparquet 2026.9 crashes on a DELTA page of no values).
"""
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import TEST_DATA, nx, profile_set

READER = Path(__file__).with_name("fastparquet_read.py")
REAL_GPU = {"gpt2": ["gpt2_eager.json.gz"], "ddp": ["ddp_rank0.json.gz", "ddp_rank1.json.gz"],
            "jax-json": ["jax_perfetto_trace.json.gz"], "jax-xplane": ["jax.xplane.pb"]}
HANG_GUARD_S = 300   # per file; guards against a hang, times nothing


@pytest.fixture(scope="module")
def tiny_profiles(workdir):
    cap = workdir / "fp-tiny-cap"
    nx("synth", "--out", cap, "--preset", "tiny", "--seed", "3")
    nx("process", cap, "--output-file", workdir / "fp-tiny")
    return profile_set(workdir / "fp-tiny")


@pytest.fixture(scope="module")
def real_gpu_profiles(workdir):
    out = {}
    for name, files in REAL_GPU.items():
        cap = workdir / f"fp-gpu-cap-{name}"
        cap.mkdir()
        for f in files:
            shutil.copy(TEST_DATA / "real-gpu" / f, cap / f)
        nx("process", cap, "--output-file", workdir / f"fp-gpu-{name}")
        out[name] = workdir / f"fp-gpu-{name}"
    return out


@pytest.fixture(scope="module")
def every_file(llama_profiles, split_profiles, framework_profiles, tiny_profiles, real_gpu_profiles):
    """{kind: [Parquet files]} over every profile of every kind."""
    kinds = {"llama": llama_profiles.values(), "split": split_profiles.values(),
             "tiny": tiny_profiles.values(), "framework": framework_profiles.values(),
             "real-gpu": real_gpu_profiles.values()}
    out = {k: sorted(f for d in dirs for f in Path(d).glob("*.parquet")) for k, dirs in kinds.items()}
    for k, files in out.items():
        assert files, f"no Parquet files in the {k} profiles"
    return out


def _read(path, *flags):
    """fastparquet_read.py on one file in its own process: None when it read it with
    pyarrow's values, else what went wrong (a signal included)."""
    r = subprocess.run([sys.executable, str(READER), *flags, str(path)], capture_output=True, text=True,
                       timeout=HANG_GUARD_S)
    if r.returncode == 0 and f"ok {path} " in r.stdout:
        return None
    fail = [line for line in r.stdout.splitlines() if line.startswith("FAIL ")]
    how = f"killed by signal {-r.returncode}" if r.returncode < 0 else f"exit {r.returncode}"
    return f"{path}: {how}: {fail[0] if fail else r.stderr.strip()[-500:]}"


def _has_string_lists(path):
    return any(t == pa.list_(pa.string()) for t in pq.read_schema(path).types)


def _read_all(files, *flags):
    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [x for x in pool.map(lambda f: _read(f, *flags), files) if x]
    assert not failures, f"{len(failures)} of {len(files)} files:\n" + "\n".join(failures)


def test_fastparquet_reads_every_file_as_pyarrow_does(every_file):
    _read_all([f for fs in every_file.values() for f in fs])


def test_string_lists_with_object_strings(every_file):
    files = [f for fs in every_file.values() for f in fs if _has_string_lists(f)]
    assert files, "no list<string> column in any profile: the check is void"
    _read_all(files, "--object-strings")


def test_no_all_null_chunk_is_delta(every_file):
    seen_all_null = 0
    for f in (f for fs in every_file.values() for f in fs):
        md = pq.ParquetFile(f).metadata
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            for i in range(md.num_columns):
                c = rg.column(i)
                if c.statistics is None or c.statistics.null_count != c.num_values:
                    continue
                seen_all_null += 1
                assert "DELTA_BINARY_PACKED" not in c.encodings, \
                    f"{f}: row group {g} column {c.path_in_schema} holds only nulls and is {c.encodings}"
    assert seen_all_null > 0, "no all-null column chunk in any profile: the check is void"
