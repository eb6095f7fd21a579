"""Several ranks' traces in one capture are one system profile in which ranks never merge
(docs/processing.md, "Ranks"), checked on the two ranks of a real DDP run
(tests/data/real-gpu/ddp_rank0.json.gz and ddp_rank1.json.gz: both on GPU 0 of one machine,
with the same correlation numbers) and on hand-made variants.

Independent of nxprof: each file's rank is read here from its raw JSON (distributedInfo.rank)
or its name (trace_ranks.py); rows, tracks and flow ids are counted with pyarrow from the
Parquet. The pair processed together must hold exactly what each rank processed alone holds:
rows, tracks (distinct (worker_gid, instance, pid, tid) of the framework rows, and the threads
nxprof's summary lists) and distinct flow ids add up, no flow id is shared by two ranks, and
every row's worker_gid is its file's rank.
"""
import gzip
import json
import os
import shutil
import subprocess
from collections import Counter

import pyarrow.parquet as pq
import pytest

from conftest import BIN, TEST_DATA, http_get_json, nx, profile_files, serving
from trace_ranks import scoped, trace_rank

DDP = [TEST_DATA / "real-gpu" / f"ddp_rank{r}.json.gz" for r in (0, 1)]


def load(path):
    return json.loads(gzip.open(path).read())


def process(cap, out, env=None):
    r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(out)], capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def rows(profile, columns=None):
    files = profile_files(profile)["SystemProfileEvents"]
    out = []
    for f in files:
        out += pq.read_table(f, columns=columns).to_pylist()
    return out


def warnings(profile):
    files = profile_files(profile).get("Warning", [])
    return [w for f in files for w in pq.read_table(f).to_pylist()]


def tracks(rs):
    return {(r["worker_gid"], r["instance_id"], r["process_id"], r["thread_id"])
            for r in rs if r["trace_event_source"] == "framework"}


def flow_ids(rs):
    return {f for r in rs for f in (r["flow_id"] or [])}


def summary_threads(profile, *extra):
    return json.loads(nx("summary", profile, "--format", "json", *extra).stdout)


@pytest.fixture(scope="module")
def ddp(tmp_path_factory):
    """{"pair": profile of both ranks, 0: rank 0 alone, 1: rank 1 alone}."""
    base = tmp_path_factory.mktemp("ddp")
    out = {}
    for key, files in (("pair", DDP), (0, DDP[:1]), (1, DDP[1:])):
        cap = base / f"cap-{key}"
        cap.mkdir()
        for f in files:
            shutil.copy(f, cap / f.name)
        out[key] = process(cap, base / f"prof-{key}")
    return out


def test_the_pair_is_the_sum_of_its_ranks(ddp):
    pair, alone = rows(ddp["pair"]), [rows(ddp[r]) for r in (0, 1)]
    assert len(pair) == len(alone[0]) + len(alone[1])
    assert len(tracks(pair)) == len(tracks(alone[0])) + len(tracks(alone[1]))
    assert len(flow_ids(pair)) == len(flow_ids(alone[0])) + len(flow_ids(alone[1]))
    assert flow_ids(alone[0]) and flow_ids(alone[1])   # Kineto's correlations are there
    key = ("worker_gid", "name", "start_ts", "end_ts", "process_id", "thread_id")
    assert Counter(tuple(r[k] for k in key) for r in pair) == \
        Counter(tuple(r[k] for k in key) for r in alone[0] + alone[1])


def test_no_flow_id_is_shared_by_two_ranks(ddp):
    by_rank = {}
    for r in rows(ddp["pair"]):
        for f in r["flow_id"] or []:
            by_rank.setdefault(f, set()).add(r["worker_gid"])
    assert by_rank and all(len(ranks) == 1 for ranks in by_rank.values())
    # Unscoped, the correlation numbers of the two ranks do meet: that is what scoping avoids.
    raw = [{str(e["args"]["correlation"]) for e in load(f)["traceEvents"]
            if isinstance(e.get("args"), dict) and "correlation" in e["args"]} for f in DDP]
    assert raw[0] & raw[1]


def test_worker_gid_is_the_files_distributed_rank(ddp):
    for r, path in enumerate(DDP):
        rank = load(path)["distributedInfo"]["rank"]
        assert rank == r
        alone = rows(ddp[r])
        assert {x["worker_gid"] for x in alone} == {rank}
        assert all(f.startswith(f"r{rank}:") for f in flow_ids(alone))
    pair = rows(ddp["pair"])
    assert Counter(x["worker_gid"] for x in pair) == Counter({0: len(rows(ddp[0])), 1: len(rows(ddp[1]))})


def test_tracks_and_summary_per_rank(ddp):
    pair = rows(ddp["pair"])
    s = summary_threads(ddp["pair"])
    assert len(s["threads"]) == len(tracks(pair))   # nxprof's tracks are the stored ones
    labels = {t["thread"] for t in s["threads"]}
    assert {"rank 0 / GPU 0 / stream 7", "rank 1 / GPU 0 / stream 7"} <= labels
    assert all(t.startswith(("rank 0 / ", "rank 1 / ")) for t in labels)
    per_rank = {x["rank"]: x for x in s["ranks"]}
    assert sorted(per_rank) == [0, 1]
    for rank in (0, 1):
        mine = [x for x in pair if x["worker_gid"] == rank]
        assert per_rank[rank]["events"] == len(mine)
        assert per_rank[rank]["first_ts"] == min(x["start_ts"] for x in mine)
        assert per_rank[rank]["last_ts"] == max(x["end_ts"] for x in mine)
        one = summary_threads(ddp["pair"], "--rank", str(rank))
        assert one["rank"] == rank and one["events"] == len(mine)
        assert all(t["thread"].startswith(f"rank {rank} / ") for t in one["threads"])
        assert per_rank[rank]["busy_ns"] == sum(t["busy_ns"] for t in one["threads"])
        top = json.loads(nx("top", ddp["pair"], "--rank", str(rank), "--by", "worker_gid", "--format", "json",
                            "--profiler-rows").stdout)
        assert [g["worker_gid"] for g in top["top"]] == [rank]
        assert top["top"][0]["count"] == len(mine)


def test_the_api_answers_per_rank(tmp_path):
    """/tracks gives each thread its rank; /summary lists the ranks and takes rank=."""
    cap = tmp_path / "cap"
    cap.mkdir()
    for f in DDP:
        shutil.copy(f, cap / f.name)
    data = tmp_path / "data"
    nx("process", cap, "--data-path", data, "--display-name", "ddp")
    pair = rows(data / "profiles" / "global" / "ddp@latest")
    with serving(data) as (port, _):
        status, doc = http_get_json(port, "/api/profiles/ddp/tracks")
        assert status == 200
        system = next(g for g in doc["groups"] if g["group"] == "system")["tracks"]
        assert len(system) == len(tracks(pair))
        assert all(t["track"].startswith(f"rank{t['rank']}/") for t in system)
        assert [t["rank"] for t in system] == sorted(t["rank"] for t in system)   # by rank
        assert all(t["process_label"].startswith(f"rank {t['rank']} / ") for t in system)
        status, whole = http_get_json(port, "/api/profiles/ddp/summary")
        assert status == 200 and whole["rank"] is None
        assert [(x["rank"], x["events"]) for x in whole["ranks"]] == \
            [(r, sum(1 for x in pair if x["worker_gid"] == r)) for r in (0, 1)]
        status, one = http_get_json(port, "/api/profiles/ddp/summary?rank=1")
        assert status == 200 and one["rank"] == 1
        assert one["events"] == whole["ranks"][1]["events"]
        assert all(t["thread"].startswith("rank 1 / ") for t in one["threads"])
        assert http_get_json(port, "/api/profiles/ddp/summary?rank=-1")[0] == 400


# ----------------------------------------------------------------- hand-made variants --

def write_trace(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def without_rank(doc):
    d = dict(doc)
    d.pop("distributedInfo", None)
    return d


@pytest.mark.parametrize("name,rank", [("trace_rank-3.json", 3), ("worker0.rank1.pt.trace.json", 1),
                                       ("rank_12.json", 12), ("rank7.json", 7), ("frank5.json", None),
                                       ("trace.json", None)])
def test_rank_from_the_file_name(tmp_path, name, rank):
    cap = tmp_path / "cap"
    cap.mkdir()
    doc = without_rank(load(DDP[1]))
    write_trace(cap / name, doc)
    assert trace_rank(cap / name, doc) == rank
    rs = rows(process(cap, tmp_path / "prof"), ["worker_gid", "flow_id"])
    assert {r["worker_gid"] for r in rs} == {rank}
    raw = {str(e["args"]["correlation"]) for e in doc["traceEvents"]
           if e.get("ph") == "X" and isinstance(e.get("args"), dict) and "correlation" in e["args"]}
    raw |= {f"{e.get('cat', '')}:{e['id']}" for e in doc["traceEvents"] if e.get("ph") in ("s", "t", "f") and "id" in e}
    assert flow_ids(rs) == {scoped(f, rank) for f in raw}


def test_distributed_info_wins_over_the_name_with_a_warning(tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    write_trace(cap / "rank-5.json", load(DDP[0]))   # distributedInfo.rank 0
    prof = process(cap, tmp_path / "prof")
    assert {r["worker_gid"] for r in rows(prof, ["worker_gid"])} == {0}
    conflict = [w for w in warnings(prof) if w["category"] == "Conflicting Rank"]
    assert len(conflict) == 1
    text = json.dumps(conflict[0])
    assert "rank-5.json" in text and "5" in text and "0" in text


def test_an_unusable_distributed_rank_is_warned_and_the_name_used(tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    doc = load(DDP[0])
    doc["distributedInfo"] = {**doc["distributedInfo"], "rank": "first"}
    write_trace(cap / "rank-4.json", doc)
    prof = process(cap, tmp_path / "prof")
    assert {r["worker_gid"] for r in rows(prof, ["worker_gid"])} == {4}
    assert any("distributedInfo.rank" in json.dumps(w) for w in warnings(prof))


def test_a_rank_per_host_when_nothing_else_names_one(tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    doc = without_rank(load(DDP[0]))
    # Names without a rank; hosts in the opposite order of the names.
    write_trace(cap / "a.json", {"hostname": "node-b", **doc})
    write_trace(cap / "b.json", {"hostname": "node-a", **doc})
    write_trace(cap / "c.json", {"hostname": "node-b", **doc})
    prof = process(cap, tmp_path / "prof")
    n = sum(1 for e in doc["traceEvents"] if e.get("ph") not in ("M", None))   # a row per event (no b/e here)
    assert Counter(r["worker_gid"] for r in rows(prof, ["worker_gid"])) == Counter({1: 2 * n, 0: n})
    # One host only: no ranks.
    one = tmp_path / "one"
    one.mkdir()
    write_trace(one / "a.json", {"hostname": "node-a", **doc})
    write_trace(one / "b.json", {"hostname": "node-a", **doc})
    assert {r["worker_gid"] for r in rows(process(one, tmp_path / "prof1"), ["worker_gid"])} == {None}


def test_many_ranks_in_a_tiny_sort_budget_equal_the_in_memory_answer(tmp_path):
    """Every file's events share one sort budget; spilled runs keep their file, so the rank
    (resolved when rows are written) is the same as with everything in memory."""
    cap = tmp_path / "cap"
    cap.mkdir()
    base = load(DDP[0])
    for r in range(8):
        write_trace(cap / f"trace_{r}.json", {**base, "distributedInfo": {**base["distributedInfo"], "rank": r}})
    tiny = rows(process(cap, tmp_path / "tiny", {"NXPROF_FRAMEWORK_SORT_BYTES": "65536"}))
    big = rows(process(cap, tmp_path / "big", {"NXPROF_FRAMEWORK_SORT_BYTES": str(1 << 30)}))
    assert tiny == big
    n = sum(1 for e in base["traceEvents"] if e.get("ph") not in ("M", None))   # a row per event (no b/e here)
    assert Counter(r["worker_gid"] for r in tiny) == Counter({r: n for r in range(8)})
    assert len(flow_ids(tiny)) == 8 * len(flow_ids([x for x in tiny if x["worker_gid"] == 0]))
