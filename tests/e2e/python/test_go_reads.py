"""A Go Parquet library (apache/arrow-go's pqarrow, in tests/e2e/go) reads every file of every
kind of profile nxprof writes, as the reference tool (a Go program) would: the system
profile and both device profiles of the llama-layer capture, the same set split with
--max-rows-per-file, and the framework-only (system) profile of each real PyTorch trace.

For each file, `nxgo dump` prints what arrow-go reads: the Arrow schema, each column
chunk's statistics, every row. Checked against the reference schema (names, order, Arrow
types, required fields not nullable) and against pyarrow reading the same file: same row
count, same statistics as pyarrow exposes, the same value in every cell.
"""
import json
import math
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import nxgo_path, REFERENCE, arrow_type, profile_files

GO_TYPE = {pa.int64(): "int64", pa.int32(): "int32", pa.float32(): "float32", pa.float64(): "float64",
           pa.string(): "utf8", pa.bool_(): "bool"}


@pytest.fixture(scope="module")
def nxgo(workdir):
    return nxgo_path(workdir)  # NXGO


def go_type(t):
    if pa.types.is_list(t):
        return ("list", GO_TYPE[t.value_type])
    return GO_TYPE[t]


def parse_go_type(s):
    if s.startswith("list<"):
        inner = s[len("list<"):].split(":", 1)[1].split(",")[0].strip()
        return ("list", inner)
    return s


def same_value(go, py, typ):
    if py is None or go is None:
        return go is None and py is None
    if pa.types.is_list(typ):
        return len(go) == len(py) and all(same_value(g, p, typ.value_type) for g, p in zip(go, py))
    if pa.types.is_floating(typ):
        if isinstance(go, str):
            return (go == "NaN" and math.isnan(py)) or (go in ("Inf", "+Inf") and py == math.inf) \
                or (go == "-Inf" and py == -math.inf)
        if pa.types.is_float32(typ):
            return np.float32(go) == np.float32(py)
        return float(go) == py
    return go == py


@pytest.fixture(scope="module")
def all_files(llama_profiles, split_profiles, framework_profiles):
    out = []
    profiles = [*llama_profiles.values(), *split_profiles.values(), *framework_profiles.values()]
    for prof in profiles:
        files = profile_files(prof)
        assert files, f"no Parquet files in {prof}"
        for table, fs in files.items():
            out += [(table, f) for f in fs]
    return out


def test_arrow_go_reads_every_file_like_pyarrow(nxgo, all_files):
    checked_cells = 0
    for table, f in all_files:
        r = subprocess.run([str(nxgo), "dump", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"arrow-go cannot read {f}: {r.stderr}"
        go = json.loads(r.stdout)
        ref = REFERENCE[table]
        assert [c["name"] for c in go["schema"]] == [x["field"] for x in ref], f
        for c, x in zip(go["schema"], ref):
            assert parse_go_type(c["type"]) == go_type(arrow_type(x)), f"{f}: {x['field']} is {c['type']} in arrow-go"
            if x["required"] == "Yes":
                assert c["nullable"] is False, f"{f}: required {x['field']} read as nullable"
        t = pq.read_table(f)
        assert go["num_rows"] == t.num_rows, f
        meta = pq.ParquetFile(f).metadata
        assert len(go["row_groups"]) == meta.num_row_groups
        for g, grp in enumerate(go["row_groups"]):
            assert grp["num_rows"] == meta.row_group(g).num_rows
            for c, gc in enumerate(grp["columns"]):
                chunk = meta.row_group(g).column(c)
                st = chunk.statistics
                assert gc["null_count"] == st.null_count, f"{f} rg {g} {gc['path']}"
                assert gc["has_min_max"] == st.has_min_max, f"{f} rg {g} {gc['path']}"
                if st.has_min_max:
                    for key, theirs in (("min", st.min), ("max", st.max)):
                        if chunk.physical_type == "FLOAT":  # arrow-go prints float32's shortest text
                            assert np.float32(gc[key]) == np.float32(theirs), f"{f} rg {g} {gc['path']} {key}"
                        elif isinstance(theirs, float):
                            assert float(gc[key]) == theirs, f"{f} rg {g} {gc['path']} {key}"
                        else:
                            assert gc[key] == theirs, f"{f} rg {g} {gc['path']} {key}"
        types = [fld.type for fld in t.schema]
        for i, (grow, prow) in enumerate(zip(go["rows"], t.to_pylist())):
            for v, (name, pv), typ in zip(grow, prow.items(), types):
                assert same_value(v, pv, typ), f"{f} row {i} {name}: arrow-go {v!r}, pyarrow {pv!r}"
                checked_cells += 1
        assert len(go["rows"]) == t.num_rows
    assert checked_cells > 1_000_000
