"""pandas (on pyarrow) reads nxprof profiles the way the reference tool's users do.

- The README's snippet, verbatim, on each device profile of a processed llama-layer
  capture (one per NeuronCore): read Instruction, group by engine and opcode, count and
  sum duration_ns, largest ten: equal to `nxprof top --format csv` row for row.
- The glob-and-concatenate idiom over a table split with --max-rows-per-file: every row of
  the unsplit table exactly once, in the same order, for every split table of every
  profile of the set (system profile and device profiles).
- SchemaFields read with pandas, in the system profile and in each device profile: one row
  per reference field, in reference order, with the reference's type, format, unit,
  required flag, example and enum values.
"""
import csv
import glob
import io
import json
import os

import pandas as pd
import pytest

from conftest import REFERENCE, TEST_DATA, nx, profile_files


@pytest.mark.parametrize("core", ["nd0-nc0", "nd0-nc1"])
def test_readme_groupby_equals_nxprof_top(llama_profiles, core):
    llama_profile = llama_profiles[core]
    df = pd.read_parquet(os.path.join(llama_profile, "Instruction.parquet"))
    top10 = df.groupby(["engine", "opcode"])["duration_ns"].agg(["count", "sum"]).sort_values(
        "sum", ascending=False).head(10)
    rows = list(csv.reader(io.StringIO(nx("top", llama_profile, "--format", "csv").stdout)))
    assert rows[0] == ["engine", "opcode", "count", "sum_duration_ns"]
    ours = [(r[0], r[1], int(r[2]), int(r[3])) for r in rows[1:]]
    theirs = [(e, o, int(c), int(s)) for (e, o), (c, s) in top10.iterrows()]
    assert len(ours) == 10
    assert ours == theirs


def test_split_tables_glob_concat_every_row_once(llama_profiles, split_profiles):
    assert list(split_profiles) == list(llama_profiles)
    for key, split_profile in split_profiles.items():
        llama_profile = llama_profiles[key]
        assert profile_files(split_profile).keys() == profile_files(llama_profile).keys(), key
        split = {t: f for t, f in profile_files(split_profile).items() if len(f) > 1}
        if key != "system":
            assert "Instruction" in split and len(split["Instruction"]) >= 3, (key, sorted(split))
        for table, files in split.items():
            parts = sorted(glob.glob(os.path.join(split_profile, f"{table}_*.parquet")),
                           key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
            assert [os.path.basename(p) for p in parts] == [f.name for f in files]
            whole = pd.read_parquet(os.path.join(llama_profile, f"{table}.parquet"))
            joined = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
            assert len(joined) == len(whole), (key, table)
            pd.testing.assert_frame_equal(joined, whole, check_exact=True, obj=f"{key} {table}")


def _reference_enums():
    enums = {}
    lines = (TEST_DATA / "reference" / "profile-schema-7.4.0-enums.tsv").read_text().splitlines()
    for line in lines[1:]:
        name, value = line.split("\t")
        enums.setdefault(name, []).append(value)
    return enums


@pytest.mark.parametrize("key", ["system", "nd0-nc0", "nd0-nc1"])
def test_schema_fields_equal_the_reference(llama_profiles, key):
    df = pd.read_parquet(os.path.join(llama_profiles[key], "SchemaFields.parquet"))
    enums = _reference_enums()
    expected = []
    for table, fields in REFERENCE.items():
        for f in fields:
            enum = next((n for n in (f["enum"], f["type"]) if n in enums), "")
            expected.append((table, f["field"], f["type"], f["format"], f["unit"], f["required"] == "Yes",
                             f["example"], enums[enum] if enum else None))
    nz = lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else v
    got = [(r.table_name, r.field_name, r.field_type, nz(r.field_format), nz(r.field_unit),
            bool(r.field_required), nz(r.field_example),
            None if nz(r.field_enum_values) == "" else json.loads(r.field_enum_values))
           for r in df.itertuples()]
    assert len(got) == len(expected) == 656
    for g, e in zip(got, expected):
        assert g == e
    assert df["table_description"].notna().all() and df["field_description"].notna().all()
    assert df["field_minimum"].isna().all() and df["field_maximum"].isna().all()


@pytest.mark.parametrize("core", ["nd0-nc0", "nd0-nc1"])
@pytest.mark.parametrize("column", ["hlo_name", "engine"])
def test_pandas_filter_matches_top_by_other_columns(llama_profiles, core, column):
    llama_profile = llama_profiles[core]
    df = pd.read_parquet(os.path.join(llama_profile, "Instruction.parquet"), columns=[column, "duration_ns"])
    g = df.groupby(column, dropna=False)["duration_ns"].agg(["count", "sum"]).reset_index()
    g = g.sort_values(["sum", column], ascending=[False, True], na_position="first")
    rows = list(csv.reader(io.StringIO(
        nx("top", llama_profile, "--by", column, "--limit", "0", "--format", "csv").stdout)))[1:]
    ours = [(r[0], int(r[1]), int(r[2])) for r in rows]
    theirs = [("" if pd.isna(k) else k, int(c), int(s)) for k, c, s in g.itertuples(index=False)]
    assert sorted(ours) == sorted(theirs)
    assert [r[2] for r in ours] == sorted((r[2] for r in ours), reverse=True)
