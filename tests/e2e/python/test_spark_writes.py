"""Spark as a foreign writer: nxprof must take Parquet files Spark wrote and answer from them
exactly as from its own.

Each table of the system profile and of NeuronCore 0's device profile of llama_profiles,
and of NeuronCore 1's device profile of split_profiles keeping its split, is read by Spark
(PySpark, local[2], one SparkSession for the module) and written back with
`df.coalesce(1).write.parquet(dir)` and Spark's defaults (snappy, parquet-java's writer,
every column optional, lists in the 3-level form), one output file per input file; the
part-*.parquet file is renamed to the reference layout name (T.parquet, or T_0.parquet,
T_1.parquet, ... in the split copy) in a new profile directory.

  - every written file holds the input's rows in the input's order, column for column
    (pyarrow reads both; timeline tables must stay sorted by start_ts), snappy-compressed,
    every column optional (the case this module exists for: our schema requires some);
  - `nxprof index COPY` builds the timeline index of each copy (copies have none) for
    the timeline tables the original has indexed;
  - for each device profile, answers.cli_answers(copy) equals answers.cli_answers(original)
    exactly (top, summary, export-csv whole and windowed, sampled and complete), over the
    original's span (min start_ts, max end_ts of its Instruction table, computed with
    pyarrow);
  - one `nxprof serve` over a data path holding every original and every copy gives the
    same answers for each copy as for its original (answers.Server.answers for a device
    profile, .system_answers for the system profile).
"""
import difflib
import json
import shutil

import pyarrow.parquet as pq
import pytest

import answers
from conftest import nx, profile_files

# "<set>:<profile>": the system profile, one device profile whole and the other core's split
# (a Spark write per file: the two device profiles of a set hold the same tables, so each
# kind of file is written once whole and once split; the split set's system profile is the
# llama set's, nothing splits there).
COPIES = ["llama:system", "llama:nd0-nc0", "split:nd0-nc1"]
DEVICE_COPIES = [c for c in COPIES if not c.endswith(":system")]


def served_name(name):
    return name.replace(":", "-")


@pytest.fixture(scope="module")
def copies(spark, workdir, llama_profiles, split_profiles):
    """{name: (original, copy, {written file: input file})}, copies not yet indexed."""
    root = workdir / "spark-writes"
    root.mkdir()
    spark_out = root / "spark-out"
    sets = {"llama": llama_profiles, "split": split_profiles}
    out = {}
    for name in COPIES:
        original = sets[name.split(":")[0]][name.split(":")[1]]
        copy = root / served_name(name)
        copy.mkdir()
        pairs = {}
        for table, files in sorted(profile_files(original).items()):
            for i, f in enumerate(files):
                dest = copy / (f"{table}.parquet" if len(files) == 1 else f"{table}_{i}.parquet")
                tmp = spark_out / f"{served_name(name)}-{dest.stem}"
                spark.read.parquet(str(f)).coalesce(1).write.parquet(str(tmp))
                parts = sorted(tmp.glob("part-*.parquet"))
                assert len(parts) == 1, f"Spark wrote {parts} for {f}"
                shutil.move(parts[0], dest)
                pairs[dest] = f
        out[name] = (original, copy, pairs)
    return out


@pytest.fixture(scope="module")
def indexed(copies):
    for _, copy, _ in copies.values():
        assert not list(copy.glob(".*.nxtl"))
        nx("index", copy)
    return copies


def _first_difference(a, b):
    """The first lines where b differs from a (JSON values pretty-printed first)."""
    if isinstance(a, bytes) and isinstance(b, bytes):
        a, b = a.decode(errors="replace"), b.decode(errors="replace")
    if not (isinstance(a, str) and isinstance(b, str)):
        a, b = (json.dumps(v, indent=1, sort_keys=True, default=repr) for v in (a, b))
    diff = difflib.unified_diff(a.splitlines(), b.splitlines(), "original", "copy", n=1, lineterm="")
    return "\n".join(list(diff)[:12])


def differences(a, b):
    """{answer name (/file): where the copy's answer first differs from the original's}."""
    out = {}
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            out[key] = "only in the " + ("original" if key in a else "copy")
        elif a[key] != b[key]:
            if isinstance(a[key], dict) and isinstance(b[key], dict):
                for sub in sorted(set(a[key]) | set(b[key])):
                    x, y = a[key].get(sub), b[key].get(sub)
                    if x != y:
                        out[f"{key}/{sub}"] = (_first_difference(x, y) if x is not None and y is not None
                                               else "only in the " + ("original" if x is not None else "copy"))
            else:
                out[key] = _first_difference(a[key], b[key])
    return out


@pytest.mark.parametrize("name", COPIES)
def test_spark_wrote_the_rows_in_order(copies, name):
    original, copy, pairs = copies[name]
    assert sorted(p.name for p in copy.glob("*.parquet")) == sorted(p.name for p in original.glob("*.parquet"))
    problems = []
    for written, source in sorted(pairs.items()):
        meta = pq.ParquetFile(written).metadata
        codecs = {meta.row_group(g).column(c).compression
                  for g in range(meta.num_row_groups) for c in range(meta.num_columns)}
        if meta.num_row_groups and codecs != {"SNAPPY"}:
            problems.append(f"{written.name}: compression {codecs}, not Spark's default SNAPPY")
        w, s = pq.read_table(written), pq.read_table(source)
        if not all(f.nullable for f in w.schema):
            problems.append(f"{written.name}: Spark wrote required columns "
                            f"{[f.name for f in w.schema if not f.nullable]}")
        if w.column_names != s.column_names or w.num_rows != s.num_rows:
            problems.append(f"{written.name}: {w.num_rows} rows of {w.column_names}, "
                            f"input {s.num_rows} rows of {s.column_names}")
            continue
        for col in s.column_names:
            if not w[col].cast(s[col].type).equals(s[col]):
                problems.append(f"{written.name}: column {col} differs from {source} (values or order)")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", COPIES)
def test_index_builds_the_timeline_index_of_the_copy(indexed, name):
    original, copy, _ = indexed[name]
    want = sorted(p.name for p in original.glob(".*.nxtl"))
    if not name.endswith(":system"):   # a system profile has no timeline table that is indexed
        assert want, f"the original {original} has no timeline index"
    assert sorted(p.name for p in copy.glob(".*.nxtl")) == want


@pytest.mark.parametrize("name", DEVICE_COPIES)
def test_cli_answers_equal(indexed, workdir, name):
    original, copy, _ = indexed[name]
    span = answers.span_of(original)
    scratch = workdir / "spark-writes" / "scratch"
    for d in ("original", "copy"):
        (scratch / f"{served_name(name)}-{d}").mkdir(parents=True)
    want = answers.cli_answers(original, scratch / f"{served_name(name)}-original", span)
    got = answers.cli_answers(copy, scratch / f"{served_name(name)}-copy", span)
    assert want["top"].count("\n") > 1 and want["export_whole_all"], "the original answers nothing"
    assert differences(want, got) == {}


def test_server_answers_equal(indexed, workdir):
    data = workdir / "spark-writes" / "data"
    for name, (original, copy, _) in indexed.items():
        answers.install(original, data, served_name(name))
        answers.install(copy, data, f"{served_name(name)}-spark")
    diffs = {}
    with answers.Server(data) as server:
        for name in indexed:
            if name.endswith(":system"):
                want, got = (server.system_answers(n) for n in (served_name(name), f"{served_name(name)}-spark"))
                assert want["usage_whole"]["series"], f"the server gives no usage lane for {name}"
            else:
                want, got = (server.answers(n) for n in (served_name(name), f"{served_name(name)}-spark"))
                assert want["tracks"] and want["timeline_whole"], f"the server answers nothing for {name}"
            diffs.update({f"{name}: {k}": v for k, v in differences(want, got).items()})
    assert diffs == {}
