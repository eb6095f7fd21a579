"""Spark reads nxprof's Parquet files (PySpark, local[2], one SparkSession for the module).

Profiles: llama_profile, split_profile (--max-rows-per-file 40000) and every framework
profile (each real PyTorch trace of tests/data/chrome-traces alone in a capture).

  a. `spark.read.parquet` of every file of every table: the rows Spark decodes (a count
     over a scan that decodes every column) equal the file's footer num_rows as pyarrow
     reads it.
  b. the schema Spark infers is the reference schema (tests/data/reference, through
     conftest.REFERENCE): the reference's fields, in its order, each with the Spark type
     its type/format gives (int64 LongType, int32 IntegerType, float FloatType, double
     DoubleType, string StringType, boolean BooleanType, array of integer
     ArrayType(LongType), array of string ArrayType(StringType)); and no column the
     reference marks Required=Yes holds a null (a Spark aggregate over the decoded rows:
     Spark reads every Parquet column as nullable, so its schema cannot tell).
  c. Spark SQL's engine/opcode grouping of Instruction (count, sum of duration_ns, largest
     sum first, ties by engine then opcode) equals `nxprof top PROFILE --format csv
     --limit 0` row for row, for the whole and the split profile.
  d. each table split_profile splits, read by Spark through the glob T_*.parquet, holds
     the same multiset of rows as llama_profile's T.parquet (exceptAll both ways, counts).
"""
import csv
import functools
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from conftest import CHROME_TRACES, REFERENCE, arrow_type, nx, profile_files

PROFILES = ["llama", "split", *(t.name for t in CHROME_TRACES)]

# The Spark type of each Arrow type the reference maps to (conftest.arrow_type).
_SPARK = {pa.int64(): T.LongType(), pa.int32(): T.IntegerType(), pa.float32(): T.FloatType(),
          pa.float64(): T.DoubleType(), pa.string(): T.StringType(), pa.bool_(): T.BooleanType()}


def spark_type(field):
    """The Spark type a reference field's type/format maps to (the brief's mapping)."""
    a = arrow_type(field)
    return T.ArrayType(_SPARK[a.value_type]) if pa.types.is_list(a) else _SPARK[a]


def same_type(got, want):
    """Spark types equal, ignoring ArrayType.containsNull (Spark makes file schemas
    nullable throughout, element nullability included)."""
    if isinstance(want, T.ArrayType):
        return isinstance(got, T.ArrayType) and same_type(got.elementType, want.elementType)
    return got == want


def quote(column):
    return "`" + column.replace("`", "``") + "`"


def sql_string(value):
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


@pytest.fixture(scope="module")
def profiles(request):
    """{PROFILES name: profile dir}, made on first use (session fixtures)."""
    def get(name):
        if name == "llama":
            return request.getfixturevalue("llama_profile")
        if name == "split":
            return request.getfixturevalue("split_profile")
        return request.getfixturevalue("framework_profiles")[name]
    return get


@pytest.fixture(scope="module")
def scans(spark, profiles):
    """scans(name) -> {file: (table, Spark schema, rows, {column: nulls})}: every file of
    the profile read by Spark on its own, all of them aggregated in one Spark job."""
    @functools.lru_cache(maxsize=None)
    def scan(name):
        parts, meta = [], {}
        for table, files in sorted(profile_files(profiles(name)).items()):
            for f in files:
                df = spark.read.parquet(str(f))
                meta[str(f)] = (table, df.schema, df.columns)
                # count(col) for every column makes Spark decode every column's values
                nulls = ", ".join(f"count(*) - count({quote(c)})" for c in df.columns)
                parts.append(df.selectExpr(f"{sql_string(f)} AS file", "count(*) AS rows",
                                           f"CAST(array({nulls}) AS array<bigint>) AS nulls"))
        assert parts, f"no Parquet files in profile {name}"
        rows = functools.reduce(DataFrame.unionAll, parts).collect()
        out = {}
        for r in rows:
            table, schema, cols = meta[r["file"]]
            out[r["file"]] = (table, schema, r["rows"], dict(zip(cols, r["nulls"])))
        assert set(out) == set(meta)
        return out
    return scan


@pytest.mark.parametrize("name", PROFILES)
def test_row_counts(scans, name):
    got = {f: v[2] for f, v in scans(name).items()}
    want = {f: pq.ParquetFile(f).metadata.num_rows for f in got}
    assert got == want


@pytest.mark.parametrize("name", PROFILES)
def test_schema_is_reference(scans, name):
    problems = []
    for f, (table, schema, _, _) in sorted(scans(name).items()):
        assert table in REFERENCE, f"{f}: table {table} is not in the reference schema"
        ref = REFERENCE[table]
        names = [s.name for s in schema.fields]
        if names != [r["field"] for r in ref]:
            problems.append(f"{f}: fields {names} != reference {[r['field'] for r in ref]}")
            continue
        for s, r in zip(schema.fields, ref):
            want = spark_type(r)
            if not same_type(s.dataType, want):
                problems.append(f"{f}: {r['field']} is {s.dataType}, reference "
                                f"{r['type']}/{r['format']} wants {want}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", PROFILES)
def test_required_fields_have_no_nulls(scans, name):
    nulls = {}
    for f, (table, _, _, per_column) in sorted(scans(name).items()):
        for r in REFERENCE[table]:
            if r["required"] == "Yes":
                assert r["field"] in per_column, f"{f}: no column {r['field']}"
                if per_column[r["field"]]:
                    nulls[f"{f}:{r['field']}"] = per_column[r["field"]]
    assert nulls == {}, "required columns with nulls (file:column -> nulls)"


TOP_SQL = """SELECT engine, opcode, count(*) AS count, sum(duration_ns) AS sum
             FROM Instruction GROUP BY engine, opcode ORDER BY sum DESC, engine, opcode"""


@pytest.mark.parametrize("name", ["llama", "split"])
def test_top_matches_spark_sql(spark, profiles, name):
    prof = profiles(name)
    files = profile_files(prof)["Instruction"]
    spark.read.parquet(*map(str, files)).createOrReplaceTempView("Instruction")
    want = [(r["engine"], r["opcode"], r["count"], r["sum"]) for r in spark.sql(TOP_SQL).collect()]
    spark.catalog.dropTempView("Instruction")
    assert want, "Spark found no Instruction groups"
    assert sum(w[2] for w in want) == sum(pq.ParquetFile(f).metadata.num_rows for f in files)

    reader = csv.reader(io.StringIO(nx("top", prof, "--format", "csv", "--limit", "0").stdout))
    header = next(reader)
    assert header == ["engine", "opcode", "count", "sum_duration_ns"]
    got = [(e, o, int(c), int(s)) for e, o, c, s in reader]
    assert got == want


def test_split_tables_read_by_glob_equal_unsplit(spark, llama_profile, split_profile):
    whole, split = profile_files(llama_profile), profile_files(split_profile)
    split_tables = sorted(t for t, fs in split.items() if len(fs) > 1)
    assert "Instruction" in split_tables, f"split_profile splits only {split_tables}"
    for table in split_tables:
        assert len(whole[table]) == 1, f"llama_profile splits {table}: {whole[table]}"
        a = spark.read.parquet(str(split_profile / f"{table}_*.parquet"))
        b = spark.read.parquet(str(whole[table][0]))
        read = sorted(p.rsplit("/", 1)[-1] for p in a.inputFiles())
        assert read == sorted(f.name for f in split[table]), f"{table}: the glob read {read}"
        assert a.columns == b.columns, table
        n = b.count()
        assert n == pq.ParquetFile(whole[table][0]).metadata.num_rows, table
        assert a.count() == n, table
        assert a.exceptAll(b).count() == 0, f"{table}: rows of the split files not in the whole"
        assert b.exceptAll(a).count() == 0, f"{table}: rows of the whole not in the split files"
