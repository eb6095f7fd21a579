#!/usr/bin/env python3
"""nxprof past one machine: a PySpark job that processes many rank traces (or Neuron
captures) with `nxprof process`, one Spark task per trace on the executors, and computes the
cross-rank answers with Spark SQL over the Parquet the tasks wrote (docs/scaling.md).

    spark-submit --py-files scale/nxprof_spark.py scale/nxprof_spark.py \
        --nxprof /opt/nxprof/bin/nxprof --out /shared/run42 '/shared/traces/rank-*.json.gz'

Inputs: paths or globs (expanded on the driver, so they must be visible there), and/or
`--manifest FILE` (one path a line, `#` comments): every path must be readable by the
executors and the output folder writable by them, i.e. on shared storage (NFS, or a FUSE
mount of HDFS/S3) when the job runs on a cluster. Output:

    OUT/profiles/<name>/      one nxprof system profile per trace (its device profiles under it)
    OUT/profiles/<name>.done  the source's size and mtime the profile was made from: a rerun
                              skips a trace whose stamp still matches (--force redoes it)
    OUT/traces.json           per trace: its profile, status (processed, skipped, failed) and
                              the error (nxprof's exit status and stderr) of a failed one
    OUT/answers/<answer>/     each answer as Parquet, and all of them in OUT/answers.json

A trace that fails is reported in traces.json and left out of the answers; the job goes on.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# A collective's name holds one of these words, in any ASCII case: the list of
# COLLECTIVE_WORDS in src/query/device_activity.c (nx_activity_is_collective), which
# `nxprof ranks` uses; tests/e2e/python/test_scale_spark.py fails when the two differ.
COLLECTIVE_WORDS = (
    "nccl", "gloo", "c10d::", "record_param_comms", "allreduce", "all_reduce", "all-reduce",
    "allgather", "all_gather", "all-gather", "reducescatter", "reduce_scatter", "reduce-scatter",
    "alltoall", "all_to_all", "all-to-all", "collective-permute", "sendrecv",
)
# nxprof reads at most 18 digits as a number (a step, a GPU's; device_activity.c).
STEP_DIGITS = "[0-9]{1,18}"
ANSWERS = ("devices", "steps", "skew", "stragglers")


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def is_collective(name):
    """nx_activity_is_collective: a COLLECTIVE_WORDS word in name, ASCII letters in any case."""
    low = name.translate(ASCII_LOWER)
    return any(w in low for w in COLLECTIVE_WORDS)


def sql_is_collective(column):
    """SQL true when the string column is a collective's name (is_collective): only ASCII
    letters are lowered, as nxprof does (Spark's lower() would map Unicode letters too)."""
    assert all(re.fullmatch(r"[a-z0-9_:-]+", w) for w in COLLECTIVE_WORDS)
    words = ", ".join(f"'{w}'" for w in COLLECTIVE_WORDS)
    low = f"translate({column}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    return f"exists(array({words}), w -> instr({low}, w) > 0)"


def _lower_median(column):
    """SQL aggregate: the lower middle of the group's sorted values (one of them)."""
    return f"element_at(array_sort(collect_list({column})), CAST((COUNT(*) - 1) DIV 2 + 1 AS INT))"


def profile_names(traces):
    """Each trace's profile folder name: its file name without .json[.gz]/.pb, characters
    other than letters, digits, '.', '_' and '-' as '_' (so a name reads the same in a
    path and in the URI Spark gives a file), '-<position>' added when two would clash."""
    stems = [re.sub(r"[^A-Za-z0-9._-]", "_",
                    re.sub(r"(\.xplane\.pb|\.json\.gz|\.json|\.pb)$", "", Path(t).name)) or "trace"
             for t in traces]
    return [f"{s}-{i}" if stems.count(s) > 1 else s for i, s in enumerate(stems)]


def stamp(trace):
    st = os.stat(trace)
    return {"source": str(trace), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def nxprof_process(nxprof, trace, prof):
    """`nxprof process` of a capture folder or of one trace file."""
    return subprocess.run([nxprof, "process", trace, "--output-file", str(prof)],
                          capture_output=True, text=True)


def process_one(item):
    """Run on an executor: `nxprof process` of one trace into its profile folder, unless the
    folder's stamp shows it was made from this very file. Never raises: a failure is the
    returned record's error, so one bad trace does not fail the job."""
    index, trace, name, out, nxprof, force = item
    prof = Path(out) / "profiles" / name
    done = prof.with_name(prof.name + ".done")
    record = {"index": index, "trace": trace, "name": name, "profile": str(prof)}
    try:
        want = stamp(trace)
        if not force and prof.is_dir() and done.is_file() and json.loads(done.read_text()) == want:
            return {**record, "status": "skipped"}
        done.unlink(missing_ok=True)
        prof.parent.mkdir(parents=True, exist_ok=True)
        r = nxprof_process(nxprof, trace, prof)
        if r.returncode != 0:
            return {**record, "status": "failed",
                    "error": f"nxprof process exited {r.returncode}: {r.stderr.strip()}"}
        done.write_text(json.dumps(want))
        return {**record, "status": "processed"}
    except (OSError, ValueError) as e:   # unreadable trace, missing binary, damaged stamp
        return {**record, "status": "failed", "error": f"{trace}: {e}"}


def expand(inputs, manifest=None):
    """The traces, in order, without repeats: each input as a glob (kept as is when it
    matches nothing, so its failure is reported), then the manifest's lines."""
    paths = []
    for i in inputs:
        paths += sorted(glob.glob(i)) or [i]
    if manifest:
        lines = Path(manifest).read_text().splitlines()
        paths += [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return list(dict.fromkeys(paths))


def process_all(spark, traces, out, nxprof, force=False):
    """One Spark task per trace; the per-trace records, in input order."""
    items = [(i, t, name, str(out), nxprof, force)
             for i, (t, name) in enumerate(zip(traces, profile_names(traces)))]
    rdd = spark.sparkContext.parallelize(items, numSlices=max(1, len(items)))
    return sorted(rdd.map(process_one).collect(), key=lambda r: r["index"])


def event_files(profile):
    """The SystemProfileEvents files of a profile: T.parquet, or T_<n>.parquet when split."""
    return glob.glob(f"{glob.escape(profile)}/SystemProfileEvents.parquet") + \
        glob.glob(f"{glob.escape(profile)}/SystemProfileEvents_[0-9]*.parquet")


def load_events(spark, records):
    """The `events` view: the SystemProfileEvents rows of every processed profile that has
    the table, with the fields the answers need pulled out of extra_attributes_json;
    `rank`: worker_gid, else -1 - the trace's position in the input list (negative, so it
    is never a real rank); `ranked`: worker_gid >= 0 (only those rows take part in skew and
    stragglers, as in `nxprof ranks`); `on_gpu`: a framework row of a process labelled
    "GPU n" (Kineto) or named "/device:GPU:n" (JAX), device_activity.c's rule. Returns how
    many profiles it reads (0: no view)."""
    from pyspark.sql import functions as F

    ok = [r for r in records if r["status"] != "failed" and event_files(r["profile"])]
    if not ok:
        return 0
    spark.createDataFrame([(r["name"], r["index"]) for r in ok],
                          "name string, trace_index long").createOrReplaceTempView("traces")
    paths = [f for r in ok for f in event_files(r["profile"])]
    df = spark.read.parquet(*paths).withColumn(
        "profile", F.regexp_extract(F.input_file_name(), r"/([^/]+)/SystemProfileEvents[^/]*$", 1))
    df.createOrReplaceTempView("raw_events")
    spark.sql("""
        SELECT *, source = 'framework' AND ph IS NULL
                  AND (COALESCE(labels RLIKE '^GPU {STEP_DIGITS}$', false)
                       OR COALESCE(process RLIKE '^/device:GPU:{STEP_DIGITS}$', false)) AS on_gpu
        FROM (SELECT CAST(COALESCE(e.worker_gid, -1 - t.trace_index) AS BIGINT) AS rank,
                     COALESCE(e.worker_gid >= 0, false) AS ranked, e.name,
                     e.start_ts, e.end_ts, e.process_id, e.trace_event_source AS source, e.nc_idx,
                     get_json_object(e.extra_attributes_json, '$.ph') AS ph,
                     get_json_object(e.extra_attributes_json, '$.cat') AS cat,
                     get_json_object(e.extra_attributes_json, '$.process_labels') AS labels,
                     get_json_object(e.extra_attributes_json, '$.process_name') AS process,
                     get_json_object(e.extra_attributes_json, '$.thread_name') AS thread,
                     get_json_object(e.extra_attributes_json, '$.args.device') AS arg_device,
                     get_json_object(e.extra_attributes_json, '$.args') AS args
              FROM raw_events e JOIN traces t ON e.profile = t.name)
    """.replace("{STEP_DIGITS}", STEP_DIGITS)).createOrReplaceTempView("events")
    return len(ok)


# The SQL of the answers, in order: each statement makes the view its name says.
VIEWS = {
    # Device activity: Kineto's kernel, memcpy and memset slices (annotations excluded), and
    # a Neuron capture's neuron_hw rows (a NeuronCore's own activity, kernels).
    "gpu": """
        SELECT rank, CONCAT('GPU ', COALESCE(arg_device, CAST(process_id AS STRING))) AS device,
               CASE cat WHEN 'kernel' THEN 'kernel' WHEN 'gpu_memcpy' THEN 'memcpy'
                        ELSE 'memset' END AS kind, start_ts AS s, end_ts AS e
        FROM events WHERE source = 'framework' AND ph IS NULL
                      AND cat IN ('kernel', 'gpu_memcpy', 'gpu_memset')
        UNION ALL
        SELECT rank, CONCAT('NeuronCore ', nc_idx), 'kernel', start_ts, end_ts
        FROM events WHERE source = 'neuron_hw' AND nc_idx IS NOT NULL""",
    # Each activity row in four sets: its device and kind, its device (any kind), its
    # kind on any device of the rank ('*'), and any activity of the rank.
    "gpu_sets": """
        SELECT rank, device, kind, s, e FROM gpu UNION ALL
        SELECT rank, device, '*', s, e FROM gpu UNION ALL
        SELECT rank, '*', kind, s, e FROM gpu UNION ALL
        SELECT rank, '*', '*', s, e FROM gpu""",
    # Interval union per (rank, device, kind) set: ordered by start, the running max of the
    # ends before a row; a row starting after it opens a new segment; a running count
    # numbers them.
    "gpu_prev": """
        SELECT rank, device, kind, s, e,
               MAX(e) OVER (PARTITION BY rank, device, kind ORDER BY s, e
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
        FROM gpu_sets""",
    "gpu_seg_id": """
        SELECT rank, device, kind, s, e,
               SUM(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END)
                 OVER (PARTITION BY rank, device, kind ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS seg
        FROM gpu_prev""",
    "segments": """
        SELECT rank, device, kind, MIN(s) AS s, MAX(e) AS e FROM gpu_seg_id
        GROUP BY rank, device, kind, seg""",
    "spans": """
        SELECT rank, MIN(start_ts) AS start_ns, MAX(end_ts) AS end_ns FROM events GROUP BY rank""",
    "devices": """
        WITH u AS (SELECT rank, device,
                     SUM(IF(kind = '*', e - s, 0)) AS busy_ns,
                     SUM(IF(kind = 'kernel', e - s, 0)) AS kernel_ns,
                     SUM(IF(kind = 'memcpy', e - s, 0)) AS memcpy_ns,
                     SUM(IF(kind = 'memset', e - s, 0)) AS memset_ns
                   FROM segments WHERE device <> '*' GROUP BY rank, device),
             n AS (SELECT rank, device, COUNT_IF(kind = 'kernel') AS kernel_count,
                     COUNT_IF(kind = 'memcpy') AS memcpy_count, COUNT_IF(kind = 'memset') AS memset_count
                   FROM gpu GROUP BY rank, device)
        SELECT u.device, u.rank, p.start_ns, p.end_ns, p.end_ns - p.start_ns AS wall_ns,
               u.busy_ns, p.end_ns - p.start_ns - u.busy_ns AS idle_ns,
               IF(p.end_ns > p.start_ns, u.busy_ns / (p.end_ns - p.start_ns), 0D) AS utilization,
               u.kernel_ns, n.kernel_count, u.memcpy_ns, n.memcpy_count, u.memset_ns, n.memset_count
        FROM u JOIN spans p USING (rank) JOIN n USING (rank, device)
        ORDER BY rank, device LIKE 'NeuronCore %',
                 CAST(regexp_extract(device, '([0-9]+)$', 1) AS BIGINT)""",
    # Steps (device_activity.c's rule): a host framework slice named ProfilerStep#N of cat
    # user_annotation (Kineto's GPU-side copy is not a step), else one whose args hold an
    # integer step_num (JAX). GPU figures are the rank's unions over all its devices
    # clipped to the window, kernels counted by start.
    "step_windows": """
        SELECT rank, ranked, name, start_ns, end_ns, CAST(step AS BIGINT) AS step
        FROM (SELECT rank, ranked, name, start_ts AS start_ns, end_ts AS end_ns,
                     IF(name LIKE 'ProfilerStep#%' AND cat = 'user_annotation',
                        regexp_extract(name, '^ProfilerStep#({STEP_DIGITS})$', 1),
                        regexp_extract(get_json_object(args, '$.step_num'), '^({STEP_DIGITS})$', 1))
                       AS step
              FROM events WHERE source = 'framework' AND ph IS NULL AND NOT on_gpu)
        WHERE step <> ''""".replace("{STEP_DIGITS}", STEP_DIGITS),
    "steps": """
        WITH clipped AS (
               SELECT w.rank, w.step, w.start_ns, g.kind,
                      SUM(LEAST(g.e, w.end_ns) - GREATEST(g.s, w.start_ns)) AS ns
               FROM step_windows w JOIN segments g
                 ON g.rank = w.rank AND g.device = '*' AND g.s < w.end_ns AND g.e > w.start_ns
               GROUP BY w.rank, w.step, w.start_ns, g.kind),
             kinds AS (
               SELECT rank, step, start_ns, SUM(IF(kind = '*', ns, 0)) AS gpu_busy_ns,
                      SUM(IF(kind = 'kernel', ns, 0)) AS kernel_ns,
                      SUM(IF(kind = 'memcpy', ns, 0)) AS memcpy_ns,
                      SUM(IF(kind = 'memset', ns, 0)) AS memset_ns
               FROM clipped GROUP BY rank, step, start_ns),
             counts AS (
               SELECT w.rank, w.step, w.start_ns, COUNT(*) AS kernel_count
               FROM step_windows w JOIN gpu g
                 ON g.rank = w.rank AND g.kind = 'kernel' AND g.s >= w.start_ns AND g.s < w.end_ns
               GROUP BY w.rank, w.step, w.start_ns)
        SELECT w.name, w.step, w.rank, w.start_ns, w.end_ns, w.end_ns - w.start_ns AS duration_ns,
               COALESCE(k.gpu_busy_ns, 0) AS gpu_busy_ns, COALESCE(k.kernel_ns, 0) AS kernel_ns,
               COALESCE(c.kernel_count, 0) AS kernel_count, COALESCE(k.memcpy_ns, 0) AS memcpy_ns,
               COALESCE(k.memset_ns, 0) AS memset_ns
        FROM step_windows w LEFT JOIN kinds k USING (rank, step, start_ns)
             LEFT JOIN counts c USING (rank, step, start_ns)
        ORDER BY rank, start_ns, step""",
    # The answers of `nxprof ranks` (src/query/rank_stats.h, docs/analyses.md "Ranks"), over
    # the ranked rows only. A rank's duration of a step is its first row of that number.
    "rank_steps": """
        SELECT rank, step, start_ns, end_ns - start_ns AS duration_ns
        FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY rank, step ORDER BY start_ns, end_ns) AS n
              FROM step_windows WHERE ranked)
        WHERE n = 1""",
    # Collectives: a collective's name, not the profiler's own row, on the host or a device
    # kernel (a GPU annotation copies a host range: it would count the range twice). Each
    # gets an id, so that equal rows stay apart in the step join below.
    "collectives": f"""
        SELECT monotonically_increasing_id() AS id, rank, name, start_ts AS start_ns
        FROM events
        WHERE ranked AND {sql_is_collective("name")}
          AND NOT (source = 'framework' AND ph IS NULL AND (name LIKE 'ProfilerStep#%'
                   OR (cat = 'Trace' AND name LIKE 'PyTorch Profiler%')))
          AND (NOT on_gpu OR IF(COALESCE(cat, '') <> '', cat = 'kernel',
                                thread LIKE 'Stream #%' AND NOT (name LIKE 'Memcpy%'
                                OR name LIKE 'memcpy%' OR name LIKE 'Memset%' OR name LIKE 'memset%')))""",
    # Its step: the rank's step row whose [start, end) holds its start, the latest-starting
    # one when steps nest (-1: none). Its occurrence: its place among the rank's
    # collectives of that step and name, by start; (step, name, occurrence) is one
    # instance, matched across ranks.
    "occurrences": """
        SELECT rank, step, name, start_ns,
               ROW_NUMBER() OVER (PARTITION BY rank, step, name ORDER BY start_ns) - 1 AS occurrence
        FROM (SELECT c.rank, c.name, c.start_ns, COALESCE(MAX_BY(w.step, w.start_ns), -1) AS step
              FROM collectives c LEFT JOIN step_windows w
                ON w.ranked AND w.rank = c.rank AND w.start_ns <= c.start_ns AND c.start_ns < w.end_ns
              GROUP BY c.id, c.rank, c.name, c.start_ns)""",
    # Per instance on 2 ranks or more: the first rank, the last (the straggler; ties: the
    # lower rank), its lateness after the first start and after the median start (the
    # lower middle of the sorted starts, so one of them).
    "stragglers": f"""
        SELECT step, name, occurrence, COUNT(*) AS ranks,
               MIN_BY(rank, named_struct('s', start_ns, 'r', rank)) AS first_rank,
               MIN(start_ns) AS first_start_ns,
               MIN_BY(rank, named_struct('s', -start_ns, 'r', rank)) AS straggler_rank,
               MAX(start_ns) AS start_ns, MAX(start_ns) - MIN(start_ns) AS lateness_ns,
               MAX(start_ns) - {_lower_median("start_ns")} AS lateness_vs_median_ns
        FROM occurrences GROUP BY step, name, occurrence HAVING COUNT(*) >= 2
        ORDER BY step, first_start_ns, name, occurrence""",
    # Skew per step over the ranks that have it (ties: the lower rank); the step's
    # straggler is that of its instance with the greatest lateness (the first of equals in
    # the stragglers' order), none when it has no instance.
    "skew": f"""
        WITH d AS (
               SELECT step,
                      map_from_entries(array_sort(collect_list(struct(rank, duration_ns)))) AS durations_ns,
                      map_from_entries(array_sort(collect_list(struct(rank, start_ns)))) AS starts_ns,
                      MIN(duration_ns) AS min_ns, MAX(duration_ns) AS max_ns,
                      {_lower_median("duration_ns")} AS median_ns,
                      MIN_BY(rank, named_struct('d', -duration_ns, 'r', rank)) AS slowest_rank,
                      MIN_BY(rank, named_struct('d', duration_ns, 'r', rank)) AS fastest_rank
               FROM rank_steps GROUP BY step),
             late AS (
               SELECT step, MAX(lateness_ns) AS max_lateness_ns,
                      MIN_BY(straggler_rank, named_struct('l', -lateness_ns, 's', first_start_ns,
                                                          'n', name, 'o', occurrence)) AS straggler_rank
               FROM stragglers GROUP BY step)
        SELECT d.step, durations_ns, starts_ns, min_ns, max_ns, median_ns, max_ns - min_ns AS skew_ns,
               IF(median_ns = 0, 0D, CAST(max_ns AS DOUBLE) / median_ns) AS max_over_median,
               slowest_rank, fastest_rank, l.straggler_rank, COALESCE(l.max_lateness_ns, 0) AS max_lateness_ns
        FROM d LEFT JOIN late l USING (step) ORDER BY step""",
}


def answers(spark, records):
    """The cross-rank answers as Spark DataFrames, {name: DataFrame} for ANSWERS; {} when
    no profile has SystemProfileEvents."""
    if not load_events(spark, records):
        return {}
    spark.table("events").cache().createOrReplaceTempView("events")
    for name, sql in VIEWS.items():
        # cached: every view feeds several later ones, each answer is written and collected
        spark.sql(sql).cache().createOrReplaceTempView(name)
    return {name: spark.table(name) for name in ANSWERS}


def run(spark, traces, out, nxprof, force=False):
    """The whole job: process every trace, write traces.json, compute and write the answers.
    Returns {"traces": records, name: [rows as dicts] for each answer}."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spark.sparkContext.addPyFile(__file__)
    records = process_all(spark, traces, out, nxprof, force)
    (out / "traces.json").write_text(json.dumps(records, indent=1) + "\n")
    result = {"traces": records}
    for name, df in answers(spark, records).items():
        df.write.mode("overwrite").parquet(str(out / "answers" / name))
        result[name] = [row.asDict(recursive=True) for row in df.collect()]
    (out / "answers.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def main(argv=None):
    from pyspark.sql import SparkSession

    ap = argparse.ArgumentParser(description="nxprof process on Spark executors, one task per "
                                 "trace, and the cross-rank answers in Spark SQL")
    ap.add_argument("inputs", nargs="*", help="trace or capture paths, or globs")
    ap.add_argument("--manifest", help="a file listing traces, one a line")
    ap.add_argument("--out", required=True, help="output folder on storage every executor shares")
    ap.add_argument("--nxprof", default=os.environ.get("NXPROF_BIN", "nxprof"),
                    help="the nxprof binary on the executors (default: $NXPROF_BIN, else PATH)")
    ap.add_argument("--force", action="store_true", help="process traces whose profile is up to date")
    ap.add_argument("--master", help="Spark master when not given by spark-submit, e.g. local[2]")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting when not given by spark-submit, e.g. "
                    "spark.sql.shuffle.partitions=4 (repeatable)")
    a = ap.parse_args(argv)
    traces = expand(a.inputs, a.manifest)
    if not traces:
        ap.error("no trace given")
    builder = SparkSession.builder.appName("nxprof-scale")
    if a.master:
        builder = builder.master(a.master)
    for kv in a.conf:
        key, sep, value = kv.partition("=")
        if not sep:
            ap.error(f"--conf {kv}: KEY=VALUE expected")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        result = run(spark, traces, a.out, a.nxprof, a.force)
    finally:
        spark.stop()
    failed = [r for r in result["traces"] if r["status"] == "failed"]
    for r in failed:
        print(f"nxprof_spark: {r['trace']}: {r['error']}", file=sys.stderr)
    print(f"nxprof_spark: {len(traces) - len(failed)} of {len(traces)} traces processed; "
          f"answers in {Path(a.out) / 'answers.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
