"""The Spark job of scale/nxprof_spark.py (docs/scaling.md) on local[2], one SparkSession for
the module, over:

  - 8 ranks generated from the two real DDP ranks by scale/make_ranks.py (rank r a copy of
    ddp_rank<r % 2> with its times moved and stretched; rank 5 the known straggler),
  - a hand-made rank 8 whose GPU intervals overlap across streams, nest, touch, repeat, last
    0 ns and start at a half ns, with steps (ProfilerStep#101/#102) that cut a kernel, a
    JAX-style step (args.step_num "103"), and a GPU-side ProfilerStep annotation and a
    non-integer step_num that are not steps,
  - a Neuron capture (`nxprof synth --preset tiny`, 2 NeuronCores, without its trace.json,
    whose ProfilerSteps would join the DDP ranks' steps; no rank: the job ranks it -1 - its
    position in the input list, -10),
  - a file that is not JSON, and a path that does not exist.

Every answer (devices, steps, skew, stragglers) equals the independent computation from the
raw JSON in tests/e2e/python/gpu_oracle.py, as returned and as written (Parquet read by pyarrow);
the two bad inputs are reported per trace and the job answers for the rest; a rerun skips
every profile that is up to date. `nxprof summary --format json` of each rank's profile has
the oracle's span as its wall time, and the same "devices" and "steps" members.

The 8 generated ranks are also processed together, as one capture (a folder of the 8
files): the job's skew and stragglers equal `nxprof ranks --format json` of that profile
(and summary's "rank_stats") field by field; they also equal it on three hand-made ranks
that hold every edge case of the definitions (edge_ranks). The job's collective rule is
checked against nxprof's by their outputs on a list of candidate names, so a word added on
one side only fails the test.
"""
import gzip
import json
import math
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import gpu_oracle
from conftest import BIN, ROOT, TEST_DATA, nx

sys.path.insert(0, str(ROOT / "scale"))
import make_ranks  # noqa: E402
import nxprof_spark  # noqa: E402

STRAGGLER = 5


def handmade_trace(path):
    """Rank 8: the union, clipping and rounding cases of the answers' SQL. As in Kineto, a
    GPU's events are on the pid its process_labels name "GPU <n>"; the host is pid 100."""
    def x(name, cat, ts, dur, pid=None, tid=7, device=0):
        return {"ph": "X", "cat": cat, "name": name, "pid": device if pid is None else pid,
                "tid": tid, "ts": ts, "dur": dur, "args": {"device": device, "stream": tid}}

    def label(pid, text):
        return {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": text}}
    events = [
        x("ProfilerStep#101", "user_annotation", 0, 52, pid=100, tid=1),
        x("ProfilerStep#102", "user_annotation", 52, 68, pid=100, tid=1),
        x("ProfilerStep#101", "gpu_user_annotation", 1, 300),     # not a step
        x("k1", "kernel", 10, 10), x("k2", "kernel", 15, 10, tid=8),   # overlap across streams
        x("k3", "kernel", 25, 5),                                        # touches k2
        x("ncclDevKernel_AllReduce_Sum_f32", "kernel", 30.5, 0.5, tid=9),
        x("k0", "kernel", 40, 0),                                         # 0 ns
        x("k4", "kernel", 50, 10), x("k5", "kernel", 52, 3, tid=8),       # nested, cut by #102
        x("k6", "kernel", 70, 10), x("k6", "kernel", 70, 10),             # repeated
        x("Memcpy HtoD", "gpu_memcpy", 78, 12, tid=8),
        x("Memset", "gpu_memset", 100, 1.5),
        x("k7", "kernel", 10.0005, 1.0004, device=1),                     # half ns, GPU 1
        {**x("train", "python_function", 100, 25, pid=100, tid=1), "args": {"step_num": "103"}},
        {**x("eval", "python_function", 101, 2, pid=100, tid=1), "args": {"step_num": "x"}},
        label(0, "GPU 0"), label(1, "GPU 1"), label(100, "CPU"),
        {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 130},
    ]
    doc = {"distributedInfo": {"rank": 8}, "baseTimeNanoseconds": 1_790_000_000_000_000_000,
           "traceEvents": events}
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


@pytest.fixture(scope="module")
def job(tmp_path_factory, spark):
    base = tmp_path_factory.mktemp("scale")
    traces = [str(p) for p in make_ranks.make(TEST_DATA / "real-gpu", base / "traces")]
    traces.append(str(handmade_trace(base / "traces" / "rank-8.json.gz")))
    capture = base / "neuron-capture"
    nx("synth", "--out", capture, "--preset", "tiny")
    for chrome in capture.glob("*/*/trace.json"):
        chrome.unlink()
    broken = base / "broken.json"
    broken.write_text("{not json")
    inputs = traces + [str(capture), str(broken), str(base / "missing.json")]
    together = base / "ranks-together"
    together.mkdir()
    for t in traces[:8]:
        shutil.copy(t, together)
    nx("process", together, "--output-file", base / "ranks-profile")
    ranks = json.loads(nx("ranks", base / "ranks-profile", "--format", "json").stdout)
    summary = json.loads(nx("summary", base / "ranks-profile", "--format", "json").stdout)
    result = nxprof_spark.run(spark, inputs, base / "out", str(BIN))
    neuron = gpu_oracle.Capture(capture)
    assert neuron.rank is None
    neuron.rank = -1 - len(traces)   # the job's rank of an input without one
    oracle = [gpu_oracle.Trace(t) for t in traces] + [neuron]
    return {"base": base, "inputs": inputs, "traces": traces, "result": result, "oracle": oracle,
            "spark": spark, "ranks": ranks, "summary": summary}


def keyed(rows, *key):
    return {tuple(r[k] for k in key): r for r in rows}


def same_row(got, want):
    """Equal, floats within 1e-12 relative (Spark's and Python's divisions)."""
    assert set(got) >= set(want), f"missing {set(want) - set(got)}"
    for k, v in want.items():
        if isinstance(v, float) or isinstance(got[k], float):
            assert got[k] is not None and math.isclose(got[k], v, rel_tol=1e-12), (k, got[k], v)
        else:
            assert got[k] == v, (k, got[k], v)


def test_each_trace_is_one_task_and_failures_are_reported(job):
    recs = job["result"]["traces"]
    assert [r["trace"] for r in recs] == job["inputs"]
    assert [r["status"] for r in recs] == ["processed"] * 10 + ["failed"] * 2
    assert "nxprof process exited 1" in recs[10]["error"] and "broken.json" in recs[10]["error"]
    assert "missing.json" in recs[11]["error"]
    for r in recs[:10]:
        assert (Path(r["profile"]) / "SystemProfileEvents.parquet").is_file()
    assert len(list((Path(recs[9]["profile"]) / "devices").iterdir())) == 2
    written = json.loads((job["base"] / "out" / "traces.json").read_text())
    assert written == recs


def test_devices_equal_the_oracle(job):
    want = [row for t in job["oracle"] for row in gpu_oracle.devices(t)]
    got = keyed(job["result"]["devices"], "rank", "device")
    assert set(got) == set(keyed(want, "rank", "device"))
    assert (8, "GPU 1") in got and (-10, "NeuronCore 1") in got
    for w in want:
        same_row(got[(w["rank"], w["device"])], w)


def test_steps_equal_the_oracle(job):
    want = [row for t in job["oracle"] for row in gpu_oracle.steps(t)]
    got = keyed(job["result"]["steps"], "rank", "step")
    assert set(got) == set(keyed(want, "rank", "step"))
    assert len(got) == 8 * 4 + 3
    for w in want:
        same_row(got[(w["rank"], w["step"])], w)


def test_skew_equals_the_oracle(job):
    want = gpu_oracle.skew(job["oracle"])
    got = keyed(job["result"]["skew"], "step")
    assert set(got) == {(n,) for n in want}
    for n, w in want.items():
        same_row(got[(n,)], w)
    for n in (1, 2, 3, 4):
        assert got[(n,)]["slowest_rank"] == STRAGGLER and len(got[(n,)]["durations_ns"]) == 8
        assert got[(n,)]["straggler_rank"] == STRAGGLER and got[(n,)]["max_lateness_ns"] > 0
    assert {n for (n,), row in got.items() if row["straggler_rank"] is None} == {101, 102, 103}


def test_stragglers_equal_the_oracle(job):
    want = gpu_oracle.stragglers(job["oracle"])
    got = job["result"]["stragglers"]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same_row(g, w)
    ddp = [g for g in got if 1 <= g["step"] <= 4]
    assert len(ddp) > 4 and all(g["straggler_rank"] == STRAGGLER and g["ranks"] == 8 for g in ddp)
    assert {g["name"] for g in ddp} == {"c10d::allreduce_", "gloo:all_reduce"}
    assert not [g for g in got if g["name"].startswith("ncclDevKernel")]   # rank 8's alone


def test_rank_answers_equal_nxprof_ranks(job):
    """The 8 ranks processed as one capture: `nxprof ranks` and summary's "rank_stats" are
    the job's skew and stragglers, field by field (the job also has the hand-made rank 8's
    steps, on that rank alone; the unranked Neuron capture takes no part)."""
    ranks = job["ranks"]
    assert job["summary"]["rank_stats"] == ranks
    assert ranks["ranks"] == list(range(8))
    assert job["result"]["stragglers"] == ranks["stragglers"]
    spark_steps = {row["step"]: row for row in job["result"]["skew"]}
    assert set(spark_steps) == {s["step"] for s in ranks["steps"]} | {101, 102, 103}
    for want in ranks["steps"]:
        assert as_ranks_step(spark_steps[want["step"]]) == want, want["step"]


def as_ranks_step(row):
    """A skew row as `nxprof ranks` writes a step: JSON keys its per-rank maps by strings."""
    return {**row, **{k: {str(r): v for r, v in row[k].items()} for k in ("durations_ns", "starts_ns")}}


def edge_ranks(folder):
    """Ranks 0, 1, 2 whose rank answers have every case of rank_stats.h's definitions: a
    rank's second row of a step number (not its duration), a step nested in another (its
    collectives are the inner step's), a step of 0 ns (median 0) that rank 2 lacks, tied
    durations and tied latest starts (the lower rank), two steps with instances of equal
    lateness (the first in the stragglers' order), collectives before any step (step -1), a
    collective instant, an NCCL kernel on the GPU, a GPU annotation copy of a collective and
    aten::broadcast_tensors (neither counts), an instance on 2 of the 3 ranks, one on a
    single rank (no straggler). Times in µs, host pid 100, GPU 0 pid 0."""
    def x(name, ts, dur, cat="cpu_op", pid=100, **more):
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": 7 if pid == 0 else 1,
                "ts": ts, "dur": dur, **more}
    paths = []
    for r in (0, 1, 2):
        events = [
            {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
            x("ProfilerStep#1", 1000, 100, "user_annotation"),
            x("ProfilerStep#2", 1100, 160 if r == 2 else 100, "user_annotation"),
            x("train", 1120, 30, "python_function", args={"step_num": 5}),      # nested in #2
            x("record_param_comms", 500 + 3 * r, 2),                             # step -1
            x("c10d::allreduce_", 1010 if r == 0 else 1014, 5),                  # tie: 1 and 2 last
            x("c10d::allreduce_", 1040 + r, 5),
            x("gloo:all_reduce", 1041 + r, 5, "gpu_user_annotation", pid=0),     # a copy: no
            x("aten::broadcast_tensors", 1050 + 9 * r, 1),                       # no collective
            x("ncclDevKernel_AllReduce_Sum_f32", 1060 + 2 * (2 - r), 4, "kernel", pid=0),
            x("c10d::allgather_", 1125 + r, 2),                                  # step 5
            x("c10d::broadcast_", 1130 + 2 * (r % 2), 2),                        # equal lateness
            x("c10d::alltoall_", 1200 + r, 2),
        ]
        if r < 2:
            events += [{"ph": "i", "s": "t", "name": "nccl:all_reduce", "pid": 100, "tid": 1,
                        "ts": 1170 + 5 * r},
                       x("ProfilerStep#3", 2000, 0, "user_annotation")]
        if r == 2:
            events += [x("ProfilerStep#1", 3000, 40, "user_annotation"), x("c10d::reduce_scatter_", 1220, 1)]
        doc = {"distributedInfo": {"rank": r, "world_size": 3}, "traceEvents": events}
        paths.append(folder / f"rank-{r}.json")
        paths[-1].write_text(json.dumps(doc))
    return paths


def test_rank_answers_equal_nxprof_ranks_on_edge_cases(tmp_path, spark):
    """The job over edge_ranks (one profile each) gives `nxprof ranks` of the three processed
    together, field by field."""
    (tmp_path / "capture").mkdir()
    paths = edge_ranks(tmp_path / "capture")
    nx("process", tmp_path / "capture", "--output-file", tmp_path / "together")
    want = json.loads(nx("ranks", tmp_path / "together", "--format", "json").stdout)
    spark.sparkContext.addPyFile(nxprof_spark.__file__)   # as run() does, for the executors
    records = nxprof_spark.process_all(spark, [str(p) for p in paths], tmp_path / "out", str(BIN))
    assert [r["status"] for r in records] == ["processed"] * 3
    got = {name: [row.asDict(recursive=True) for row in df.collect()]
           for name, df in nxprof_spark.answers(spark, records).items() if name in ("skew", "stragglers")}
    assert got["stragglers"] == want["stragglers"]
    assert [as_ranks_step(row) for row in got["skew"]] == want["steps"]
    # the cases are there: each is a figure that a wrong rule would change
    steps = {s["step"]: s for s in want["steps"]}
    assert set(steps) == {1, 2, 3, 5} and steps[1]["durations_ns"]["2"] == 100_000
    assert steps[3]["median_ns"] == 0 and steps[3]["max_over_median"] == 0
    assert len(steps[3]["durations_ns"]) == 2
    assert steps[2]["slowest_rank"] == 2 and steps[1]["slowest_rank"] == 0 == steps[1]["fastest_rank"]
    late = {(g["step"], g["name"], g["occurrence"]): g for g in want["stragglers"]}
    assert late[(-1, "record_param_comms", 0)]["straggler_rank"] == 2
    assert late[(1, "c10d::allreduce_", 0)]["straggler_rank"] == 1
    assert late[(1, "c10d::allreduce_", 1)]["lateness_ns"] == 2000
    assert late[(2, "nccl:all_reduce", 0)]["ranks"] == 2
    assert (5, "c10d::allgather_", 0) in late and (2, "c10d::allgather_", 0) not in late
    assert late[(5, "c10d::broadcast_", 0)]["lateness_ns"] == late[(5, "c10d::allgather_", 0)]["lateness_ns"]
    assert (steps[5]["straggler_rank"], steps[5]["max_lateness_ns"]) == (2, 2000)
    names = {n for _, n, _ in late}
    assert not names & {"aten::broadcast_tensors", "gloo:all_reduce", "c10d::reduce_scatter_"}
    assert late[(1, "ncclDevKernel_AllReduce_Sum_f32", 0)]["straggler_rank"] == 0


def test_collective_rule_equals_nxprof(tmp_path, spark):
    """Which names are collectives: nxprof (`nxprof ranks` of two ranks that run one host
    slice of each candidate name in one step: an instance on 2 ranks for each collective),
    the job's Python rule and its Spark SQL rule give the same set."""
    candidates = sorted({*nxprof_spark.COLLECTIVE_WORDS, *(w.upper() for w in nxprof_spark.COLLECTIVE_WORDS),
                         *COLLECTIVE_CANDIDATES})
    for rank in (0, 1):
        events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 1,
                   "ts": 0, "dur": 10 * len(candidates) + 10}]
        events += [{"ph": "X", "cat": "cpu_op", "name": n, "pid": 100, "tid": 1, "ts": 10 * i + 1 + rank,
                    "dur": 5} for i, n in enumerate(candidates)]
        doc = {"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": events}
        (tmp_path / "capture").mkdir(exist_ok=True)
        (tmp_path / "capture" / f"rank-{rank}.json").write_text(json.dumps(doc))
    nx("process", tmp_path / "capture", "--output-file", tmp_path / "profile")
    ranks = json.loads(nx("ranks", tmp_path / "profile", "--format", "json").stdout)
    by_nxprof = {g["name"] for g in ranks["stragglers"]}
    assert all(g["ranks"] == 2 and g["step"] == 1 for g in ranks["stragglers"])
    by_python = {n for n in candidates if nxprof_spark.is_collective(n)}
    spark.createDataFrame([(n,) for n in candidates], "name string").createOrReplaceTempView("candidates")
    by_sql = {r.name for r in spark.sql("SELECT name FROM candidates WHERE "
                                        + nxprof_spark.sql_is_collective("name")).collect()}
    assert by_python == by_nxprof, (by_python - by_nxprof, by_nxprof - by_python)
    assert by_sql == by_nxprof
    assert "aten::broadcast_tensors" not in by_nxprof
    assert "ncclDevKernel_AllReduce_Sum_f32_RING_LL" in by_nxprof


# Names of collectives and of near misses from NCCL, gloo, c10d, XLA and Neuron profiles.
COLLECTIVE_CANDIDATES = (
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclKernel_Broadcast_RING_LL_Sum_int8_t",
    "ncclDevKernel_SendRecv", "ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_ReduceScatter_Sum_bf16",
    "gloo:all_reduce", "gloo:broadcast", "gloo:barrier", "c10d::allreduce_", "c10d::broadcast_",
    "c10d::allgather_", "c10d::_allgather_base_", "c10d::reduce_scatter_", "c10d::alltoall_base_",
    "c10d::send", "c10d::recv_", "c10d::barrier", "c10d::reduce_", "c10d::gather_", "c10d::scatter_",
    "record_param_comms", "nccl:all_reduce", "nccl:_all_gather_base", "nccl:send", "nccl:recv",
    "all-reduce.3", "all-gather-start", "all-gather-done", "reduce-scatter.1", "all-to-all.2",
    "collective-permute-start.1", "collective-permute-done", "send.1", "recv.2", "send-done",
    "recv-done", "broadcast", "Broadcast", "aten::broadcast_tensors", "AllReduce", "ALLGATHER",
    "ReduceScatter", "AllToAll", "AllToAllv", "SendRecv", "psum", "all_reduce_coalesced",
    "allreduce_coalesced", "barrier", "ncclCommInitRank", "cudaStreamSynchronize", "aten::mm",
    "nrt_cc_all_reduce", "cc_allreduce", "CollectivePermute", "permute", "reduce", "gather",
    "scatter", "send", "recv", "p2p", "\uff2e\uff23\uff23\uff2c", "N\u0130CCL_allreduce",
)


def plain(value):
    """A map column as sorted (key, value) pairs: Spark returns a dict, pyarrow a list."""
    if isinstance(value, dict):
        return sorted(value.items())
    return sorted(value) if isinstance(value, list) else value


def test_written_parquet_equals_the_answers(job):
    for name in nxprof_spark.ANSWERS:
        files = sorted((job["base"] / "out" / "answers" / name).glob("*.parquet"))
        rows = [r for f in files for r in pq.read_table(f).to_pylist()]
        key = sorted(job["result"][name][0])
        assert sorted(str(tuple(plain(r[k]) for k in key)) for r in rows) == \
            sorted(str(tuple(plain(r[k]) for k in key)) for r in job["result"][name])
    written = json.loads((job["base"] / "out" / "answers.json").read_text())
    assert written["skew"] == json.loads(json.dumps(job["result"]["skew"]))


def test_a_rerun_skips_what_is_up_to_date(job):
    out = job["base"] / "out"
    profile = out / "profiles" / "rank-3" / "SystemProfileEvents.parquet"
    before = profile.stat().st_mtime_ns
    recs = nxprof_spark.process_all(job["spark"], job["inputs"], out, str(BIN))
    assert [r["status"] for r in recs] == ["skipped"] * 10 + ["failed"] * 2
    assert profile.stat().st_mtime_ns == before
    forced = nxprof_spark.process_all(job["spark"], job["inputs"][3:4], out, str(BIN), force=True)
    assert [r["status"] for r in forced] == ["processed"]


def test_rank_span_is_the_summary_wall(job):
    """The oracle's span (the devices' start_ns/end_ns) is nxprof's own wall time of the
    rank's profile: the same ns from the same µs text."""
    for rec, trace in zip(job["result"]["traces"], job["oracle"]):
        wall = json.loads(nx("summary", rec["profile"], "--format", "json").stdout)["wall"]
        assert (wall["first_ts"], wall["last_ts"]) == trace.span(), rec["profile"]


def test_summary_contract_matches_the_oracle(job):
    """`nxprof summary --format json` of each rank's profile: its "devices" and "steps"
    members (the contract in docs/scaling.md) equal the oracle's (a rank null where the
    profile has no worker_gid: the Neuron capture)."""
    for rec, trace in zip(job["result"]["traces"], job["oracle"]):
        summary = json.loads(nx("summary", rec["profile"], "--format", "json").stdout)
        unranked = isinstance(trace, gpu_oracle.Capture)
        for member, want in (("devices", gpu_oracle.devices(trace)), ("steps", gpu_oracle.steps(trace))):
            assert member in summary, f"{rec['profile']}: summary has no {member!r} member"
            got = summary[member]
            assert len(got) == len(want), (rec["profile"], member)
            for g, w in zip(got, want):
                same_row(g, {**w, "rank": None} if unranked else w)


def test_inputs_and_profile_names(tmp_path):
    """Globs expand in order, a glob that matches nothing stays (so its failure is reported),
    a manifest adds its lines (blanks and # comments skipped), repeats count once; profile
    names are file names without .json[.gz]/.pb, other characters as '_', clashes numbered."""
    for n in ("b.json", "a.json.gz"):
        (tmp_path / n).write_text("{}")
    manifest = tmp_path / "list"
    manifest.write_text(f"# traces\n\n{tmp_path / 'x y.pb'}\n  {tmp_path / 'a.json.gz'}\n")
    got = nxprof_spark.expand([str(tmp_path / "*.json*"), str(tmp_path / "none*.json")], manifest)
    assert got == [str(tmp_path / "a.json.gz"), str(tmp_path / "b.json"), str(tmp_path / "none*.json"),
                   str(tmp_path / "x y.pb")]
    assert nxprof_spark.profile_names(["/p/rank-0.json.gz", "/q/rank-0.json", "/r/x y.xplane.pb", "/s/t.json"]) \
        == ["rank-0-0", "rank-0-1", "x_y", "t"]
