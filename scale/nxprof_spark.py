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

# The communication ops a straggler is looked for in (NCCL kernels, gloo and c10d ops,
# their record_function annotations), matched case-insensitively in the event name.
COMM = r"(?i)(nccl|gloo|all_?reduce|all_?gather|reduce_?scatter|broadcast|all_?to_?all)"
STEP = r"^ProfilerStep#([0-9]+)$"
ANSWERS = ("devices", "steps", "skew", "stragglers")


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
    the table, with the fields the answers need pulled out of extra_attributes_json, and
    `rank`: worker_gid, else -1 - the trace's position in the input list (negative, so it
    is never a real rank). Returns how many profiles it reads (0: no view)."""
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
        SELECT CAST(COALESCE(e.worker_gid, -1 - t.trace_index) AS BIGINT) AS rank, e.name,
               e.start_ts, e.end_ts, e.process_id, e.trace_event_source AS source, e.nc_idx,
               get_json_object(e.extra_attributes_json, '$.ph') AS ph,
               get_json_object(e.extra_attributes_json, '$.cat') AS cat,
               get_json_object(e.extra_attributes_json, '$.args.device') AS arg_device,
               get_json_object(e.extra_attributes_json, '$.args') AS args
        FROM raw_events e JOIN traces t ON e.profile = t.name
    """).createOrReplaceTempView("events")
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
    # Steps: the host's ProfilerStep#N (cat user_annotation; Kineto's GPU-side copy is not
    # a step) or a slice with an integer args.step_num (JAX); GPU figures are the rank's
    # unions over all its devices clipped to the window, kernels counted by start.
    "step_windows": f"""
        SELECT rank, name, start_ns, end_ns,
               CAST(IF(is_profiler, regexp_extract(name, '{STEP}', 1), step_num) AS BIGINT) AS step
        FROM (SELECT rank, name, start_ts AS start_ns, end_ts AS end_ns,
                     name RLIKE '{STEP}' AND cat = 'user_annotation' AS is_profiler,
                     get_json_object(args, '$.step_num') AS step_num
              FROM events WHERE ph IS NULL)
        WHERE is_profiler OR step_num RLIKE '^[0-9]+$'""",
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
    # Skew per step over the ranks that have it; the slowest rank (ties: the lower rank).
    "skew": """
        SELECT step, COUNT(*) AS n_ranks, MIN(duration_ns) AS min_ns, MAX(duration_ns) AS max_ns,
               percentile(duration_ns, 0.5) AS median_ns, MAX(duration_ns) - MIN(duration_ns) AS skew_ns,
               MAX(duration_ns) / percentile(duration_ns, 0.5) AS max_over_median,
               MIN_BY(rank, named_struct('d', -duration_ns, 'r', rank)) AS slowest_rank
        FROM steps GROUP BY step ORDER BY step""",
    # Collective occurrences: a communication slice inside a step window of its rank,
    # numbered k per (rank, step, cat, name) by start; plus each step's own start.
    "starts": f"""
        SELECT w.step, 'step' AS cat, w.name, 0 AS k, w.rank, w.start_ns AS start_ns
        FROM step_windows w
        UNION ALL
        SELECT step, cat, name, ROW_NUMBER() OVER (PARTITION BY rank, step, cat, name
                                                   ORDER BY s, e) - 1 AS k, rank, s AS start_ns
        FROM (SELECT w.step, c.cat, c.name, c.rank, c.start_ts AS s, c.end_ts AS e
              FROM events c JOIN step_windows w
                ON c.rank = w.rank AND c.start_ts >= w.start_ns AND c.start_ts < w.end_ns
              WHERE c.ph IS NULL AND c.name RLIKE '{COMM}')""",
    "stragglers": """
        SELECT step, cat, name, k, COUNT(*) AS n_ranks,
               MIN_BY(rank, named_struct('s', -start_ns, 'r', rank)) AS straggler_rank,
               MIN_BY(rank, named_struct('s', start_ns, 'r', rank)) AS earliest_rank,
               MAX(start_ns) AS start_ns, MAX(start_ns) - MIN(start_ns) AS lateness_ns
        FROM starts GROUP BY step, cat, name, k ORDER BY step, cat, name, k""",
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
