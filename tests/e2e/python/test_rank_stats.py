"""`nxprof ranks`, summary's rank_stats member and GET /api/profiles/<name>/ranks
(docs/analyses.md#ranks-step-durations-skew-and-stragglers) on the two ranks of the real DDP run processed as one capture and
on an 8-rank capture made from them: rank r is ddp_rank<r % 2> with every timestamp shifted
by r * 7 us and, for rank 5, its collectives by 3 ms more, so rank 5 straggles.

Independent of nxprof: steps (host ProfilerStep#N, cat user_annotation) and collectives
(host events, cat cpu_op or user_annotation, named like a collective) are read from the raw
JSON with exact decimal arithmetic (ts and dur are microseconds with three decimals, plus
baseTimeNanoseconds); a collective's step is the rank's step holding its start, its
occurrence its position among the same name in that step; lateness is computed here.
"""
import copy
import gzip
import json
import re
import shutil
from collections import defaultdict
from decimal import Decimal

from conftest import TEST_DATA, http_get_json, nx, serving

DDP = [TEST_DATA / "real-gpu" / f"ddp_rank{r}.json.gz" for r in (0, 1)]
COLLECTIVE = re.compile(r"nccl|gloo|c10d::|record_param_comms|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all",
                        re.I)
STRAGGLER, SHIFT_US, LATE_US = 5, 7, 3000


def load(path):
    return json.loads(gzip.open(path).read(), parse_float=Decimal)


def ns(doc, us):
    return int((Decimal(us) * 1000).to_integral_value()) + int(doc.get("baseTimeNanoseconds", 0))


def expected(docs):
    """{step: {rank: duration}}, and {(step, name, occurrence): {rank: start}} from raw traces."""
    durations, windows, colls = defaultdict(dict), defaultdict(list), defaultdict(list)
    for doc in docs:
        rank = doc["distributedInfo"]["rank"]
        for e in doc["traceEvents"]:
            if e.get("ph") != "X":
                continue
            start, end = ns(doc, e["ts"]), ns(doc, e["ts"] + e["dur"])
            name = e.get("name", "")
            if e.get("cat") == "user_annotation" and name.startswith("ProfilerStep#"):
                step = int(name.split("#")[1])
                durations[step].setdefault(rank, end - start)
                windows[rank].append((start, end, step))
            elif e.get("cat") in ("cpu_op", "user_annotation") and COLLECTIVE.search(name):
                colls[rank].append((start, name))
    instances = defaultdict(dict)
    for rank, rows in colls.items():
        seen = defaultdict(int)
        for start, name in sorted(rows):
            step = next((s for a, b, s in windows[rank] if a <= start < b), -1)
            instances[(step, name, seen[(step, name)])][rank] = start
            seen[(step, name)] += 1
    return durations, {k: v for k, v in instances.items() if len(v) >= 2}




def write(cap, docs):
    """The traces as files, numbers written as their exact decimal text."""
    cap.mkdir()
    for doc in docs:
        r = doc["distributedInfo"]["rank"]
        text = json.dumps(doc, default=lambda d: f"@@{d}@@")
        text = re.sub(r'"@@([-0-9.E+]+)@@"', r"\1", text)
        with gzip.open(cap / f"trace_rank{r}.json.gz", "wt") as f:
            f.write(text)


def check(answer, docs):
    durations, instances = expected(docs)
    assert answer["ranks"] == sorted(d["distributedInfo"]["rank"] for d in docs)
    assert [s["step"] for s in answer["steps"]] == sorted(durations)
    for s in answer["steps"]:
        want = durations[s["step"]]
        assert s["durations_ns"] == {str(r): d for r, d in want.items()}
        vals = sorted(want.values())
        assert (s["min_ns"], s["max_ns"], s["median_ns"]) == (vals[0], vals[-1], vals[(len(vals) - 1) // 2])
        assert s["skew_ns"] == vals[-1] - vals[0]
        assert s["slowest_rank"] == min(r for r, d in want.items() if d == vals[-1])
        assert s["fastest_rank"] == min(r for r, d in want.items() if d == vals[0])
    got = {(g["step"], g["name"], g["occurrence"]): g for g in answer["stragglers"]}
    assert set(got) == set(instances)
    for key, starts in instances.items():
        g, first, last = got[key], min(starts.values()), max(starts.values())
        ordered = sorted(starts.values())
        assert g["ranks"] == len(starts)
        assert g["straggler_rank"] == min(r for r, t in starts.items() if t == last)
        assert g["first_rank"] == min(r for r, t in starts.items() if t == first)
        assert g["lateness_ns"] == last - first
        assert g["lateness_vs_median_ns"] == last - ordered[(len(ordered) - 1) // 2]
    for s in answer["steps"]:
        mine = [g for k, g in got.items() if k[0] == s["step"]]
        assert s["max_lateness_ns"] == max(g["lateness_ns"] for g in mine)
    return got


def as_numbers(x):
    """The API's answer with its integers beyond 2^53 (sent as strings) back as numbers."""
    if isinstance(x, dict):
        return {k: as_numbers(v) for k, v in x.items()}
    if isinstance(x, list):
        return [as_numbers(v) for v in x]
    if isinstance(x, str) and re.fullmatch(r"-?\d+", x):
        assert abs(int(x)) > 2**53
        return int(x)
    return x


def ranks_json(profile):
    return json.loads(nx("ranks", profile, "--format", "json").stdout)


def test_ddp_pair(tmp_path):
    docs = [load(p) for p in DDP]
    cap = tmp_path / "cap"
    write(cap, docs)
    out = tmp_path / "out"
    nx("process", cap, "--output-file", out)
    answer = ranks_json(out)
    got = check(answer, docs)
    assert len(got) == 40   # 10 c10d::allreduce_ and 10 gloo:all_reduce per step, 4 steps
    summary = json.loads(nx("summary", out, "--format", "json").stdout)
    assert summary["rank_stats"] == answer
    text = nx("ranks", out).stdout
    assert "Step durations per rank" in text and "Latest collectives (10 of 40" in text


def shifted(doc, rank):
    d = copy.deepcopy(doc)
    d["distributedInfo"]["rank"] = rank
    for e in d["traceEvents"]:
        if "ts" in e and e.get("ph") != "M":
            e["ts"] += rank * SHIFT_US
            if rank == STRAGGLER and COLLECTIVE.search(e.get("name", "")):
                e["ts"] += LATE_US
    return d


def test_eight_ranks_with_a_straggler(tmp_path):
    base = [load(p) for p in DDP]
    docs = [shifted(base[r % 2], r) for r in range(8)]
    cap = tmp_path / "cap"
    write(cap, docs)
    data = tmp_path / "data"
    nx("process", cap, "--data-path", data, "--display-name", "eight")
    answer = ranks_json(data / "profiles" / "global" / "eight@latest")
    got = check(answer, docs)
    assert answer["ranks"] == list(range(8))
    assert all(g["straggler_rank"] == STRAGGLER for g in got.values() if g["step"] >= 0)
    assert all(s["straggler_rank"] == STRAGGLER for s in answer["steps"])
    with serving(data) as (port, _):
        status, doc = http_get_json(port, "/api/profiles/eight/ranks")
        assert status == 200 and as_numbers(doc) == answer
        status, _ = http_get_json(port, "/api/profiles/nonesuch/ranks")
        assert status == 404


def test_one_rank_has_no_member(tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    shutil.copy(DDP[0], cap / DDP[0].name)
    out = tmp_path / "out"
    nx("process", cap, "--output-file", out)
    assert "rank_stats" not in json.loads(nx("summary", out, "--format", "json").stdout)
    assert ranks_json(out)["stragglers"] == []
