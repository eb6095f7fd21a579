"""Profiles written by other Parquet writers, which nxprof's reader must take.

The llama-layer capture's profiles (its system profile and both device profiles, and the
device profiles of its split copy) are re-written table by table, file by file:
- by pyarrow with its defaults, and again with data page v2, without dictionaries, with
  each compression it offers (snappy, gzip, brotli, lz4, zstd) and with row groups of
  65,536 rows;
- by a Go program (tests/e2e/go, apache/arrow-go's pqarrow), with its defaults and with zstd
  and 65,536-row row groups.
Each copy holds only the Parquet files (no timeline index), so `nxprof index` builds one
first; then, on each device profile, `top`, `summary`, `export-csv` (whole profile and a
window, sampled and complete) and `serve`'s profile entry, tracks, timelines, summary and
events must answer exactly as on nxprof's own files, and on the system profile `serve`'s
profile entry and its CpuUsage, HostMemUsage and SystemProfileHbmUsage lanes.
"""
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import answers
from conftest import nxgo_path, nx, profile_files

PYARROW = {
    "pyarrow-default": {},
    "pyarrow-page-v2": {"data_page_version": "2.0"},
    "pyarrow-no-dictionary": {"use_dictionary": False},
    "pyarrow-snappy": {"compression": "snappy"},
    "pyarrow-gzip": {"compression": "gzip"},
    "pyarrow-brotli": {"compression": "brotli"},
    "pyarrow-lz4": {"compression": "lz4"},
    "pyarrow-zstd": {"compression": "zstd"},
    "pyarrow-row-groups-65536": {"row_group_size": 65536},
}
# Arrow's own spellings of the same values: large strings and lists, and the timestamps of
# every *_ts column as TIMESTAMP(NANOS) (Unix ns, the profile's time base).
ARROW_SPELLINGS = "pyarrow-large-types-timestamp-ns"


def arrow_spellings(t):
    fields = []
    for f in t.schema:
        typ = f.type
        if pa.types.is_string(typ):
            typ = pa.large_string()
        elif pa.types.is_list(typ):
            typ = pa.large_list(typ.value_type)
        elif f.name.endswith("_ts") and pa.types.is_int64(typ):
            typ = pa.timestamp("ns", tz="UTC")
        fields.append(pa.field(f.name, typ, f.nullable))
    return t.cast(pa.schema(fields))


GO = {
    "go-default": [],
    "go-zstd-row-groups-65536": ["-compression", "zstd", "-row-group", "65536"],
}
ALL_VARIANTS = list(PYARROW) + [ARROW_SPELLINGS] + list(GO)
# The split profiles are re-written by one writer of each kind: what is checked there is
# that T_0.parquet, T_1.parquet, ... from a foreign writer read as one table.
SPLIT_VARIANTS = ["pyarrow-default", "go-default"]
# The profiles re-written ("<set>:<profile>"): every profile of the llama set, the device
# profiles of the split set (its system profile is the llama set's: nothing splits there).
ORIGINALS = ["llama:system", "llama:nd0-nc0", "llama:nd0-nc1", "split:nd0-nc0", "split:nd0-nc1"]
DEVICE_ORIGINALS = [o for o in ORIGINALS if not o.endswith(":system")]


def variants_of(original):
    return ALL_VARIANTS if original.startswith("llama:") else SPLIT_VARIANTS


def served_name(original, variant=None):
    return original.replace(":", "-") + (f"-{variant}" if variant else "")


@pytest.fixture(scope="module")
def nxgo(workdir):
    return nxgo_path(workdir)  # NXGO


def rewrite(variant, src, dst, nxgo):
    if variant in GO:
        r = subprocess.run([str(nxgo), "rewrite", *GO[variant], str(src), str(dst)], capture_output=True, text=True)
        assert r.returncode == 0, f"nxgo rewrite {variant}: {r.stderr}"
    elif variant == ARROW_SPELLINGS:
        dst.mkdir()
        for f in sorted(Path(src).glob("*.parquet")):
            pq.write_table(arrow_spellings(pq.read_table(f)), dst / f.name)
    else:
        dst.mkdir()
        for f in sorted(Path(src).glob("*.parquet")):
            pq.write_table(pq.read_table(f), dst / f.name, **PYARROW[variant])
    assert profile_files(dst).keys() == profile_files(src).keys()
    nx("index", dst)


@pytest.fixture(scope="module")
def originals(llama_profiles, split_profiles):
    """{ORIGINALS name: profile dir}."""
    sets = {"llama": llama_profiles, "split": split_profiles}
    return {o: sets[o.split(":")[0]][o.split(":")[1]] for o in ORIGINALS}


@pytest.fixture(scope="module")
def copies(workdir, originals, nxgo):
    """{(original, variant): copy dir}, each already indexed."""
    out = {}
    for original, prof in originals.items():
        for v in variants_of(original):
            dst = workdir / f"copy-{served_name(original, v)}"
            rewrite(v, prof, dst, nxgo)
            out[(original, v)] = dst
    return out


@pytest.fixture(scope="module")
def expected_cli(workdir, originals):
    return {k: answers.cli_answers(originals[k], workdir / f"scratch-{served_name(k)}", answers.span_of(originals[k]))
            for k in DEVICE_ORIGINALS}


def test_copies_differ_from_ours_in_bytes(copies, originals):
    """The copies really are another writer's files (not byte copies of ours)."""
    for (original, v), copy in copies.items():
        for f in sorted(Path(copy).glob("*.parquet")):
            ours = pq.ParquetFile(Path(originals[original]) / f.name).metadata.created_by
            theirs = pq.ParquetFile(f).metadata.created_by
            assert ours.startswith("nxprof") and not theirs.startswith("nxprof"), (original, v, f.name, theirs)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_cli_answers_equal_on_foreign_copy(variant, copies, originals, expected_cli, workdir):
    checked = 0
    for original in DEVICE_ORIGINALS:
        if (original, variant) not in copies:
            continue
        copy = copies[(original, variant)]
        got = answers.cli_answers(copy, workdir / f"scratch-{served_name(original, variant)}",
                                  answers.span_of(originals[original]))
        for key, want in expected_cli[original].items():
            assert got[key] == want, f"{original} rewritten by {variant}: `{key}` differs"
        checked += 1
    assert checked >= 2, f"{variant}: no device profile re-written"


def test_server_answers_equal_on_foreign_copies(copies, originals, workdir):
    data = workdir / "serve-data"
    for original, prof in originals.items():
        answers.install(prof, data, served_name(original))
    for (original, v), copy in copies.items():
        answers.install(copy, data, served_name(original, v))
    with answers.Server(data) as server:
        def ask(original, variant=None):
            name = served_name(original, variant)
            return server.system_answers(name) if original.endswith(":system") else server.answers(name)
        want = {original: ask(original) for original in originals}
        assert want["llama:system"]["usage_whole"]["series"], "the server gives no usage lane of the system profile"
        for (original, v) in copies:
            got = ask(original, v)
            for key in want[original]:
                assert got[key] == want[original][key], f"{original} rewritten by {v}: server `{key}` differs"


@pytest.mark.parametrize("spelling, feature", [
    ({"type": pa.timestamp("us")}, "TIMESTAMP(MICROS)"),
    ({"type": pa.timestamp("ms")}, "TIMESTAMP(MILLIS)"),
    ({"type": pa.timestamp("ns"), "int96": True}, "INT96"),
])
def test_other_time_units_are_refused_by_name(llama_profile, workdir, spelling, feature):
    """start_ts in another unit would read as wrong numbers: refused, naming the column."""
    t = pq.read_table(Path(llama_profile) / "Instruction.parquet")
    i = t.schema.get_field_index("start_ts")
    ns = t.column("start_ts")
    unit = spelling["type"].unit
    scaled = pc.divide(ns, {"ns": 1, "us": 1000, "ms": 1000000}[unit]).cast(pa.int64()).cast(spelling["type"])
    dst = workdir / f"refused-{feature}"
    dst.mkdir()
    pq.write_table(t.set_column(i, pa.field("start_ts", spelling["type"], False), scaled),
                   dst / "Instruction.parquet", use_deprecated_int96_timestamps=spelling.get("int96", False))
    first = ns[0].as_py()
    for args in (["index", dst],
                 ["export-csv", dst, "--start", first, "--end", first + 10**6, "--out", workdir / f"x-{feature}"]):
        r = nx(*args, check=False)
        assert r.returncode == 1, (args, r.stderr)
        assert "start_ts" in r.stderr and feature in r.stderr, r.stderr
    assert not list(dst.glob(".*.nxtl")), "no index may be built from a refused column"
