"""Spark reads nxprof's Parquet files (PySpark, local[2], one SparkSession for the module).

Profiles: the llama set (llama_profiles: the system profile and the device profile of each
of the two NeuronCores), the split set (split_profiles, --max-rows-per-file 40000) and every
framework profile (each real PyTorch trace of tests/data/chrome-traces alone in a capture:
a system profile). Each set is scanned as a whole: every file of every profile in it.

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
     --limit 0` row for row, for each device profile of the whole and the split set.
  d. each table a profile of split_profiles splits, read by Spark through the glob
     T_*.parquet, holds the same multiset of rows as the same profile's T.parquet in
     llama_profiles (exceptAll both ways, counts).
"""
import csv
import functools
import io
import urllib.parse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
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


@pytest.fixture(scope="module")
def profiles(request):
    """PROFILES name -> {profile key: profile dir} (the set), made on first use (session
    fixtures)."""
    def get(name):
        if name == "llama":
            return request.getfixturevalue("llama_profiles")
        if name == "split":
            return request.getfixturevalue("split_profiles")
        return {"system": request.getfixturevalue("framework_profiles")[name]}
    return get


@pytest.fixture(scope="module")
def scans(spark, profiles):
    """scans(name) -> {file: (table, Spark schema, rows, {column: nulls})}: every file of
    every profile of the set read by Spark on its own (the schema Spark infers for it), and
    decoded in one Spark job: the files of each table (of every profile of the set) read
    together with that schema, rows and nulls counted per input file."""
    @functools.lru_cache(maxsize=None)
    def scan(name):
        meta, by_table = {}, {}
        for prof in profiles(name).values():
            for table, files in sorted(profile_files(prof).items()):
                for f in files:
                    df = spark.read.parquet(str(f))
                    meta[str(f)] = (table, df.schema)
                    by_table.setdefault(table, []).append(str(f))
        assert meta, f"no Parquet files in profile {name}"
        parts, columns = [], {}
        for table, files in sorted(by_table.items()):
            df = spark.read.schema(meta[files[0]][1]).parquet(*files)
            columns[table] = df.columns
            # count(col) for every column makes Spark decode every column's values
            nulls = ", ".join(f"count(*) - count({quote(c)})" for c in df.columns)
            parts.append(df.groupBy(F.input_file_name().alias("file"))
                         .agg(F.expr("count(*) AS rows"), F.expr(f"CAST(array({nulls}) AS array<bigint>) AS nulls")))
        rows = functools.reduce(DataFrame.unionAll, parts).collect()
        out = {}
        for r in rows:
            path = urllib.parse.unquote(urllib.parse.urlparse(r["file"]).path)
            assert path in meta and path not in out, f"Spark read {r['file']}"
            table, schema = meta[path]
            out[path] = (table, schema, r["rows"], dict(zip(columns[table], r["nulls"])))
        assert set(out) == set(meta), f"files Spark decoded no row of: {sorted(set(meta) - set(out))}"
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


@pytest.mark.parametrize("core", ["nd0-nc0", "nd0-nc1"])
@pytest.mark.parametrize("name", ["llama", "split"])
def test_top_matches_spark_sql(spark, profiles, name, core):
    prof = profiles(name)[core]
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


@pytest.mark.parametrize("key", ["system", "nd0-nc0", "nd0-nc1"])
def test_split_tables_read_by_glob_equal_unsplit(spark, llama_profiles, split_profiles, key):
    llama_profile, split_profile = llama_profiles[key], split_profiles[key]
    whole, split = profile_files(llama_profile), profile_files(split_profile)
    assert whole.keys() == split.keys(), key
    split_tables = sorted(t for t, fs in split.items() if len(fs) > 1)
    if key != "system":
        assert "Instruction" in split_tables, f"split_profiles[{key}] splits only {split_tables}"
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
