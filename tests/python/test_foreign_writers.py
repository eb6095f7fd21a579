"""Profiles written by other Parquet writers, which nxprof's reader must take.

The llama-layer profile (and its split copy) is re-written table by table, file by file:
- by pyarrow with its defaults, and again with data page v2, without dictionaries, with
  each compression it offers (snappy, gzip, brotli, lz4, zstd) and with row groups of
  65,536 rows;
- by a Go program (tests/go, apache/arrow-go's pqarrow), with its defaults and with zstd
  and 65,536-row row groups.
Each copy holds only the Parquet files (no timeline index), so `nxprof index` builds one
first; then `top`, `summary`, `export-csv` (whole profile and a window, sampled and
complete) and `serve`'s profile entry, tracks, timelines, summary and events must answer
exactly as on nxprof's own files.
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
# The split profile is re-written by one writer of each kind: what is checked there is
# that T_0.parquet, T_1.parquet, ... from a foreign writer read as one table.
SPLIT_VARIANTS = ["pyarrow-default", "go-default"]


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
def copies(workdir, llama_profile, split_profile, nxgo):
    """{(original, variant): copy dir}, each already indexed."""
    out = {}
    for original, prof in (("llama", llama_profile), ("split", split_profile)):
        variants = ALL_VARIANTS if original == "llama" else SPLIT_VARIANTS
        for v in variants:
            dst = workdir / f"copy-{original}-{v}"
            rewrite(v, prof, dst, nxgo)
            out[(original, v)] = dst
    return out


@pytest.fixture(scope="module")
def originals(llama_profile, split_profile):
    return {"llama": llama_profile, "split": split_profile}


@pytest.fixture(scope="module")
def expected_cli(workdir, originals):
    return {k: answers.cli_answers(p, workdir / f"scratch-{k}", answers.span_of(p)) for k, p in originals.items()}


def test_copies_differ_from_ours_in_bytes(copies, originals):
    """The copies really are another writer's files (not byte copies of ours)."""
    for (original, v), copy in copies.items():
        ours = pq.ParquetFile(Path(originals[original]) / "SchemaFields.parquet").metadata.created_by
        theirs = pq.ParquetFile(copy / "SchemaFields.parquet").metadata.created_by
        assert ours.startswith("nxprof") and not theirs.startswith("nxprof"), (v, theirs)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_cli_answers_equal_on_foreign_copy(variant, copies, originals, expected_cli, workdir):
    for original in originals:
        if (original, variant) not in copies:
            continue
        copy = copies[(original, variant)]
        got = answers.cli_answers(copy, workdir / f"scratch-{original}-{variant}", answers.span_of(originals[original]))
        for key, want in expected_cli[original].items():
            assert got[key] == want, f"{original} rewritten by {variant}: `{key}` differs"


def test_server_answers_equal_on_foreign_copies(copies, originals, workdir):
    data = workdir / "serve-data"
    for name, prof in originals.items():
        answers.install(prof, data, name)
    for (original, v), copy in copies.items():
        answers.install(copy, data, f"{original}-{v}")
    with answers.Server(data) as server:
        want = {name: server.answers(name) for name in originals}
        for (original, v) in copies:
            got = server.answers(f"{original}-{v}")
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
