"""pyarrow (Arrow C++) reads every file of every kind of profile nxprof writes: the set of
profiles of a llama-layer capture (2 NeuronCores: its system profile and both device
profiles), the same set split with --max-rows-per-file, and the framework-only (system)
profile of each real PyTorch trace.

- pq.read_table and pq.ParquetFile(...).metadata on every file; row counts agree.
- Each table's Arrow schema equals the reference schema (tests/data/reference): names,
  order, types (int64/int32/float/double/bool/string/list<int64>/list<string>); required
  fields never hold a null.
- Row-group statistics as pyarrow exposes them equal min, max and null_count computed by
  pyarrow from the data of that row group (lists: over their leaf values; null_count counts
  leaf slots without a value: null lists, empty lists and null elements).
- A start_ts filter pushed into pq.read_table gives exactly the rows `nxprof export-csv
  --no-sample` writes for the same window whose start is inside it, value for value, in
  each device profile.
- Every value pyarrow reads equals what DuckDB reads from the same file.
"""
import json
import math
import re

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import REFERENCE, SYSTEM_TABLES, arrow_type, nx, profile_files, written_tables


@pytest.fixture(scope="module")
def all_profiles(llama_profiles, split_profiles, framework_profiles):
    """{"<kind>:<profile>": dir}: kind llama, split or framework."""
    out = {f"llama:{k}": v for k, v in llama_profiles.items()}
    out.update({f"split:{k}": v for k, v in split_profiles.items()})
    out.update({f"framework:{k}": v for k, v in framework_profiles.items()})
    return out


def all_files(all_profiles):
    for kind, prof in all_profiles.items():
        for table, files in profile_files(prof).items():
            for f in files:
                yield kind, table, f


def test_every_file_reads_and_has_the_reference_schema(all_profiles):
    tables = written_tables()
    seen_kinds, seen_profiles = set(), set()
    for kind, table, f in all_files(all_profiles):
        seen_kinds.add(kind.split(":")[0])
        seen_profiles.add(kind)
        assert table in tables, f"{f}: {table} is not a table of the reference schema"
        system = kind.startswith("framework:") or kind.endswith(":system")
        assert (table in SYSTEM_TABLES) if system else (table not in SYSTEM_TABLES - {"Metadata", "SchemaFields", "Warning"}), \
            f"{f}: {table} in a {'system' if system else 'device'} profile"
        meta = pq.ParquetFile(f).metadata
        t = pq.read_table(f)
        assert t.num_rows == meta.num_rows == sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
        ref = REFERENCE[table]
        assert t.schema.names == [r["field"] for r in ref], f
        for r, field in zip(ref, t.schema):
            assert field.type == arrow_type(r), f"{f}: {r['field']} is {field.type}, reference {r['type']} {r['format']}"
            if r["required"] == "Yes":
                assert t.column(r["field"]).null_count == 0, f"{f}: required {r['field']} holds nulls"
    assert seen_kinds == {"llama", "split", "framework"}
    assert seen_profiles == set(all_profiles)


def _leaf_values(col):
    """(values without nulls, slots without a value) of a column chunk, lists flattened."""
    if pa.types.is_list(col.type):
        missing = 0
        for chunk in col.chunks:
            lengths = pc.list_value_length(chunk)
            missing += chunk.null_count + pc.sum(pc.equal(pc.fill_null(lengths, 1), 0)).as_py() if len(chunk) else 0
        flat = pc.list_flatten(col)
        return flat, missing + flat.null_count
    return col, col.null_count


def _same_bound(stat, value, typ):
    if pa.types.is_floating(typ):
        return float(stat) == float(value)  # -0.0 and +0.0 compare equal, as bounds may be either
    if pa.types.is_string(typ):
        return (stat.encode() if isinstance(stat, str) else stat) == value.encode()
    return stat == value


def test_row_group_statistics_match_the_data(all_profiles):
    checked = 0
    for _, _, f in all_files(all_profiles):
        pf = pq.ParquetFile(f)
        for g in range(pf.metadata.num_row_groups):
            rg = pf.read_row_group(g)
            for c in range(pf.metadata.num_columns):
                chunk = pf.metadata.row_group(g).column(c)
                name = chunk.path_in_schema.split(".")[0]
                values, missing = _leaf_values(rg.column(name))
                st = chunk.statistics
                assert st is not None, f"{f} row group {g} {chunk.path_in_schema}: no statistics"
                assert st.null_count == missing, f"{f} rg {g} {chunk.path_in_schema}: null_count"
                typ = values.type.value_type if pa.types.is_list(values.type) else values.type
                present = pc.drop_null(values)
                if pa.types.is_floating(typ):
                    present = present.filter(pc.invert(pc.is_nan(present)))
                if len(present) == 0:
                    assert not st.has_min_max or pa.types.is_floating(typ), f"{f} {chunk.path_in_schema}"
                    continue
                assert st.has_min_max, f"{f} rg {g} {chunk.path_in_schema}: no min/max"
                mm = pc.min_max(present)
                lo, hi = mm["min"].as_py(), mm["max"].as_py()
                assert _same_bound(st.min, lo, typ), f"{f} rg {g} {chunk.path_in_schema}: min {st.min} != {lo}"
                assert _same_bound(st.max, hi, typ), f"{f} rg {g} {chunk.path_in_schema}: max {st.max} != {hi}"
                checked += 1
    assert checked > 1000


# --- export-csv against a pushed-down filter --------------------------------------------

def parse_csv(text):
    """RFC 4180 records -> lists of (text, quoted), keeping "" (empty) apart from null."""
    rows, row, i, n = [], [], 0, len(text)
    while i < n:
        if text[i] == '"':
            j, buf = i + 1, []
            while True:
                k = text.index('"', j)
                buf.append(text[j:k])
                if k + 1 < n and text[k + 1] == '"':
                    buf.append('"')
                    j = k + 2
                else:
                    i = k + 1
                    break
            row.append(("".join(buf), True))
        else:
            j = i
            while j < n and text[j] not in ",\n":
                j += 1
            row.append((text[i:j], False))
            i = j
        if i >= n or text[i] == "\n":
            rows.append(row)
            row = []
        i += 1
    return rows


_GUARDED = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def cell_matches(cell, value, typ):
    text, quoted = cell
    if value is None:
        return text == "" and not quoted
    if pa.types.is_list(typ):
        return json.loads(text) == value
    if pa.types.is_boolean(typ):
        return text == ("true" if value else "false")
    if pa.types.is_integer(typ):
        return int(text) == value
    if pa.types.is_float32(typ):
        return np.float32(text) == np.float32(value) or (math.isnan(value) and text.lower() == "nan")
    if pa.types.is_floating(typ):
        return float(text) == value or (math.isnan(value) and text.lower() == "nan")
    if _GUARDED.match(value) and not _NUMBER.match(value):
        return text == "'" + value
    return text == value and (quoted or value != "")


EXPORT_TABLES = {"Instruction": "start_ts", "DmaPacket": "start_ts", "DmaPacketAggregated": "start_ts",
                 "CcInstruction": "start_ts", "SemaphoreUpdate": "timestamp"}


@pytest.mark.parametrize("core", ["nd0-nc0", "nd0-nc1"])
@pytest.mark.parametrize("table", sorted(EXPORT_TABLES))
def test_filter_pushdown_equals_export_csv(llama_profiles, workdir, table, core):
    llama_profile = llama_profiles[core]
    path = llama_profile / f"{table}.parquet"
    ts = EXPORT_TABLES[table]
    whole = pq.read_table(path, columns=[ts])
    first, last = pc.min_max(whole.column(ts)).values()
    s = first.as_py() + (last.as_py() - first.as_py()) * 2 // 5
    e = s + (last.as_py() - first.as_py()) // 7
    filtered = pq.read_table(path, filters=[(ts, ">=", s), (ts, "<=", e)])
    assert 0 < filtered.num_rows < whole.num_rows
    out = workdir / f"export-{core}-{table}"
    nx("export-csv", llama_profile, "--start", s, "--end", e, "--no-sample", "--tables", table, "--out", out)
    rows = parse_csv((out / f"{table}.csv").read_text())
    header = [c for c, _ in rows[0]]
    assert header == ["timeline_track"] + filtered.schema.names
    col = header.index(ts)
    inside = [r for r in rows[1:] if s <= int(r[col][0]) <= e]  # overlapping events start earlier
    assert len(inside) == filtered.num_rows
    types = [f.type for f in filtered.schema]
    for r, row in zip(inside, filtered.to_pylist()):
        for cell, name, typ in zip(r[1:], filtered.schema.names, types):
            assert cell_matches(cell, row[name], typ), f"{table} {name}: csv {cell!r} vs parquet {row[name]!r}"


# --- DuckDB agrees with pyarrow ----------------------------------------------------------

def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_every_value_equals_duckdb(all_profiles):
    con = duckdb.connect()
    for _, table, f in all_files(all_profiles):
        t = pq.read_table(f)
        cols = ", ".join(f'"{n}"' for n in t.schema.names)
        duck = con.execute(f"SELECT {cols} FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number",
                           [str(f)]).fetchall()
        ours = t.to_pylist()
        assert len(duck) == len(ours), f
        for i, (d, o) in enumerate(zip(duck, ours)):
            for name, dv in zip(t.schema.names, d):
                assert _same(dv, o[name]), f"{f} row {i} {name}: duckdb {dv!r} pyarrow {o[name]!r}"
