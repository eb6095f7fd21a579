"""`nxprof diff A B` and GET /api/diff on real profiles, each expectation computed apart
from nxprof's query code: DuckDB's GROUP BY and FULL OUTER JOIN over the profiles'
Parquet tables, and the raw trace JSON read in Python.

  - gpt2_eager against itself: every group the same, zero deltas, the groups DuckDB finds;
  - the DDP run's rank 0 against rank 1, by name, and by kernel (DuckDB, and the raw
    JSON's kernel events counted per name);
  - --normalize step and wall: each side's steps (distinct ProfilerStep#<n>) and wall
    time from DuckDB, the per-step or per-wall figures and their order;
  - a hand-edited copy of gpt2_eager with every event of one kernel removed and one
    operator lengthened by 1 ms: that kernel removed, that operator's delta 1 ms,
    every other group's total unchanged;
  - two device profiles from `nxprof synth` (tiny, seeds 1 and 2; and tiny against
    llama-layer), by opcode and hlo_name (Instruction) and by framework_name (the
    FrameworkInstruction roll-up, each row's end_ts - start_ts) (DuckDB);
  - /api/diff answers what `--format json` prints, less the profile names.
"""
import gzip
import json
import shutil
from collections import Counter

import duckdb
import pytest

import gpu_oracle
from conftest import TEST_DATA, http_get_json, nx, serving

REAL = TEST_DATA / "real-gpu"
PROFILER = "(name LIKE 'ProfilerStep#%' OR regexp_matches(name, '^PyTorch Profiler \\(.*\\)$'))"


def process(workdir, name, trace_json=None, src=None):
    cap = workdir / f"cap-{name}"
    cap.mkdir()
    if src is not None:
        shutil.copy(src, cap / src.name)
    else:
        with gzip.open(cap / f"{name}.json.gz", "wt") as f:
            json.dump(trace_json, f)
    out = workdir / f"p-{name}"
    nx("process", cap, "--output-file", out)
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("diff")


@pytest.fixture(scope="module")
def gpt2(workdir):
    return process(workdir, "gpt2", src=REAL / "gpt2_eager.json.gz")


@pytest.fixture(scope="module")
def ddp(workdir):
    return [process(workdir, f"ddp{r}", src=REAL / f"ddp_rank{r}.json.gz") for r in (0, 1)]


def diff(a, b, *opts):
    return json.loads(nx("diff", a, b, "--format", "json", "--limit", "0", *opts).stdout)


def group_sql(profile, key, where):
    return (f"SELECT {key} AS k, count(*) AS c, coalesce(sum(duration_ns), 0) AS t "
            f"FROM read_parquet('{profile}/SystemProfileEvents*.parquet') WHERE {where} GROUP BY k")


def expected(a_sql, b_sql):
    """The rows DuckDB joins: (key, count_a, count_b, total_a, total_b), ordered as the
    diff orders them (|delta| descending, key ascending bytewise, null last)."""
    rows = duckdb.sql(
        f"SELECT coalesce(a.k, b.k) AS k, coalesce(a.c, 0), coalesce(b.c, 0), coalesce(a.t, 0), coalesce(b.t, 0) "
        f"FROM ({a_sql}) a FULL OUTER JOIN ({b_sql}) b ON a.k IS NOT DISTINCT FROM b.k").fetchall()
    return sorted(rows, key=lambda r: (-abs(r[4] - r[3]), r[0] is None, (r[0] or "").encode()))


def status(ca, cb, same):
    return "added" if ca == 0 else "removed" if cb == 0 else "same" if same else "changed"


def check(got, want):
    assert [(o["name"], o["count_a"], o["count_b"], o["total_ns_a"], o["total_ns_b"]) for o in got["ops"]] == \
        [tuple(r) for r in want]
    for o in got["ops"]:
        assert o["delta_ns"] == o["total_ns_b"] - o["total_ns_a"]
        a, b = o["total_ns_a"], o["total_ns_b"]
        assert o["ratio"] == (b / a if a and b else None)
        same = (o["count_a"], a, o["self_ns_a"]) == (o["count_b"], b, o["self_ns_b"])
        assert o["status"] == status(o["count_a"], o["count_b"], same)
    t = got["totals"]
    assert t["groups"] == got["groups"] == len(want)
    assert t["count_a"] == sum(r[1] for r in want) and t["count_b"] == sum(r[2] for r in want)
    assert t["total_ns_a"] == sum(r[3] for r in want) and t["total_ns_b"] == sum(r[4] for r in want)


def test_same_profile_is_all_same(gpt2):
    got = diff(gpt2, gpt2)
    sql = group_sql(gpt2, "name", f"NOT {PROFILER}")
    check(got, expected(sql, sql))
    assert got["groups"] > 100
    assert all(o["status"] == "same" and o["delta_ns"] == 0 for o in got["ops"])
    excluded = duckdb.sql(f"SELECT count(*) FROM read_parquet('{gpt2}/SystemProfileEvents*.parquet') "
                          f"WHERE {PROFILER}").fetchall()[0][0]
    assert excluded > 0 and got["excluded_a"] == got["excluded_b"] == excluded


def test_ddp_ranks_by_name(ddp):
    a, b = ddp
    got = diff(a, b)
    check(got, expected(group_sql(a, "name", f"NOT {PROFILER}"), group_sql(b, "name", f"NOT {PROFILER}")))
    assert {o["status"] for o in got["ops"]} >= {"changed"}
    everything = diff(a, b, "--all")
    check(everything, expected(group_sql(a, "name", "true"), group_sql(b, "name", "true")))


@pytest.mark.parametrize("how", ["step", "wall"])
def test_ddp_ranks_normalized(ddp, how):
    a, b = ddp
    got = diff(a, b, "--normalize", how)
    events = lambda p: f"read_parquet('{p}/SystemProfileEvents*.parquet')"
    steps = [duckdb.sql(f"SELECT count(DISTINCT name) FROM {events(p)} WHERE name LIKE 'ProfilerStep#%'").fetchall()[0][0]
             for p in (a, b)]
    walls = [duckdb.sql(f"SELECT max(end_ts) - min(start_ts) FROM {events(p)}").fetchall()[0][0] for p in (a, b)]
    assert [got["steps_a"], got["steps_b"]] == steps and steps[0] > 0
    assert [got["wall_ns_a"], got["wall_ns_b"]] == walls
    div = steps if how == "step" else walls
    assert got["normalize"] == how
    for o in got["ops"] + [got["totals"]]:
        na, nb = o["total_ns_a"] / div[0], o["total_ns_b"] / div[1]
        assert (o["norm_a"], o["norm_b"], o["norm_delta"]) == (na, nb, nb - na)
    assert [o["name"] for o in got["ops"]] == \
        [o["name"] for o in sorted(got["ops"], key=lambda o: (-abs(o["norm_delta"]), o["name"].encode()))]
    plain = diff(a, b)
    assert sorted((o["name"], o["delta_ns"]) for o in got["ops"]) == sorted((o["name"], o["delta_ns"]) for o in plain["ops"])


def kernel_counts(trace):
    return Counter(e["name"] for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel")


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def test_ddp_ranks_by_kernel(ddp):
    a, b = ddp
    got = diff(a, b, "--by", "kernel")
    cat = "json_extract_string(extra_attributes_json, '$.cat') = 'kernel'"
    check(got, expected(group_sql(a, "name", cat), group_sql(b, "name", cat)))
    raw = [kernel_counts(load(REAL / f"ddp_rank{r}.json.gz")) for r in (0, 1)]
    assert {o["name"]: (o["count_a"], o["count_b"]) for o in got["ops"]} == \
        {k: (raw[0][k], raw[1][k]) for k in raw[0].keys() | raw[1].keys()}


def test_edited_copy(workdir, gpt2):
    trace = load(REAL / "gpt2_eager.json.gz")
    kernels = kernel_counts(trace)
    gone = min(kernels, key=lambda k: (kernels[k], k))        # a kernel that is not everywhere
    ops = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    names = Counter(e["name"] for e in ops)
    rare = min(names, key=lambda n: (names[n], n))
    longer = next(e for e in ops if e["name"] == rare)          # one run of a rare operator
    longer["dur"] += 1000                                       # 1 ms, in the trace's microseconds
    trace["traceEvents"] = [e for e in trace["traceEvents"]
                            if not (e.get("cat") == "kernel" and e.get("name") == gone)]
    edited = process(workdir, "gpt2-edited", trace_json=trace)
    got = diff(gpt2, edited)
    by = {o["name"]: o for o in got["ops"]}
    assert by[gone]["status"] == "removed" and by[gone]["count_a"] == kernels[gone] and by[gone]["count_b"] == 0
    assert by[longer["name"]]["delta_ns"] == 1_000_000
    assert by[longer["name"]]["count_a"] == by[longer["name"]]["count_b"] == names[rare]
    assert all(o["delta_ns"] == 0 for n, o in by.items() if n not in (gone, longer["name"]))
    check(got, expected(group_sql(gpt2, "name", f"NOT {PROFILER}"), group_sql(edited, "name", f"NOT {PROFILER}")))
    kern = diff(gpt2, edited, "--by", "kernel")
    assert [o["name"] for o in kern["ops"] if o["status"] != "same"] == [gone]


@pytest.fixture(scope="module")
def devices(workdir):
    out = {}
    for name, preset, seed in (("tiny1", "tiny", 1), ("tiny2", "tiny", 2), ("llama", "llama-layer", 1)):
        cap = workdir / f"syn-{name}"
        opts = ["--events", "4000"] if preset == "llama-layer" else []
        nx("synth", "--out", cap, "--preset", preset, "--seed", seed, "--cores", "1", "--no-system", *opts)
        out[name] = workdir / f"dev-{name}"
        nx("process", cap, "--output-file", out[name])
    return out


def instruction_sql(profile, key):
    if key == "framework_name":   # the IR roll-up: each row's span
        return (f"SELECT {key} AS k, count(*) AS c, coalesce(sum(end_ts - start_ts), 0) AS t "
                f"FROM read_parquet('{profile}/FrameworkInstruction*.parquet') GROUP BY k")
    return (f"SELECT {key} AS k, count(*) AS c, coalesce(sum(duration_ns), 0) AS t "
            f"FROM read_parquet('{profile}/Instruction*.parquet') GROUP BY k")


@pytest.mark.parametrize("pair", [("tiny1", "tiny2"), ("tiny1", "llama")])
@pytest.mark.parametrize("key", ["opcode", "hlo_name", "framework_name"])
def test_device_profiles(devices, pair, key):
    a, b = devices[pair[0]], devices[pair[1]]
    got = diff(a, b, "--by", key)
    assert got["table"] == ("FrameworkInstruction" if key == "framework_name" else "Instruction")
    assert got["has_self"] is False
    check(got, expected(instruction_sql(a, key), instruction_sql(b, key)))
    assert got["groups"] > 3 and any(o["delta_ns"] != 0 for o in got["ops"])


def test_kinds_refused(devices, gpt2):
    r = nx("diff", gpt2, devices["tiny1"], check=False)
    assert r.returncode == 1 and "system profile" in r.stderr and "device profile" in r.stderr


def test_api_answers_the_cli(workdir, ddp, devices):
    data = workdir / "data"
    for name, cap in (("r0", workdir / "cap-ddp0"), ("r1", workdir / "cap-ddp1")):
        nx("process", cap, "--data-path", data, "--display-name", name)
    with serving(data) as (port, _):
        status, body = http_get_json(port, "/api/diff?a=r0&b=r1&by=kernel&limit=5")
        assert status == 200
        cli = diff(ddp[0], ddp[1], "--by", "kernel")
        assert body["a"] == "r0" and body["b"] == "r1" and body["shown"] == 5
        assert body["ops"] == cli["ops"][:5] and body["totals"] == cli["totals"]
        status, body = http_get_json(port, "/api/diff?a=r0&b=r1&normalize=wall&limit=0")
        assert status == 200 and body["ops"] == diff(ddp[0], ddp[1], "--normalize", "wall")["ops"]
        assert http_get_json(port, "/api/diff?a=r0&b=r1&normalize=bogus")[0] == 400
        assert http_get_json(port, "/api/diff?a=r0&b=r1&by=no_such")[0] == 400
        assert http_get_json(port, "/api/diff?a=r0")[0] == 400
        assert http_get_json(port, "/api/diff?a=r0&b=absent")[0] == 404


def by_step(rows):
    return {r["step"]: r for r in rows}


def test_ddp_steps_side_by_side(ddp):
    """The steps of rank 0 and rank 1 (one rank each: joined on the step number) are the
    raw JSON's host ProfilerStep#N windows, and their GPU-busy time the raw kernels',
    memcpys' and memsets' union clipped to each (gpu_oracle, from the JSON alone)."""
    got = diff(ddp[0], ddp[1], "--limit", "1")
    want = [by_step(gpu_oracle.steps(gpu_oracle.Trace(REAL / f"ddp_rank{r}.json.gz"))) for r in (0, 1)]
    assert [s["step"] for s in got["steps"]] == sorted(want[0].keys() | want[1].keys())
    for s in got["steps"]:
        a, b = want[0][s["step"]], want[1][s["step"]]
        assert s["name"] == a["name"] and (s["rank_a"], s["rank_b"]) == (0, 1)
        assert (int(s["start_ns_a"]), s["duration_ns_a"], s["gpu_busy_ns_a"]) == \
            (a["start_ns"], a["duration_ns"], a["gpu_busy_ns"])
        assert (int(s["start_ns_b"]), s["duration_ns_b"], s["gpu_busy_ns_b"]) == \
            (b["start_ns"], b["duration_ns"], b["gpu_busy_ns"])
        assert s["delta_ns"] == b["duration_ns"] - a["duration_ns"]
        assert s["ratio"] == b["duration_ns"] / a["duration_ns"]
    devs = [gpu_oracle.devices(gpu_oracle.Trace(REAL / f"ddp_rank{r}.json.gz")) for r in (0, 1)]
    assert [d["device"] for d in got["devices"]] == [d["device"] for d in devs[0]] == ["GPU 0"]
    d = got["devices"][0]
    for k in ("wall_ns", "busy_ns", "idle_ns", "kernel_ns", "memcpy_ns", "memset_ns"):
        assert (d[f"{k}_a"], d[f"{k}_b"], d[f"{k}_delta"]) == \
            (devs[0][0][k], devs[1][0][k], devs[1][0][k] - devs[0][0][k]), k
    text = nx("diff", ddp[0], ddp[1], "--limit", "1").stdout
    assert text.index("busy_ns_delta") < text.index("duration_ns_a") < text.index("total_ns_a")


def isolated_kernel(trace, gap_ns):
    """A kernel on the GPU whose end is followed by at least gap_ns of no GPU activity
    (and not the trace's last event), from the raw JSON."""
    acts = [(s, e, ev) for s, e, ev in trace.slices if ev.get("cat") in gpu_oracle.GPU_CATS]
    segs = gpu_oracle.union(acts)
    for (s0, e0), (s1, _) in zip(segs, segs[1:]):
        if s1 - e0 > 2 * gap_ns:
            ends = [ev for s, e, ev in acts if e == e0 and ev.get("cat") == "kernel"]
            if ends:
                return ends[0]
    raise AssertionError("no kernel with room after it")


def test_lengthened_kernel_busy_delta(workdir, gpt2):
    """A copy of gpt2_eager with one kernel lengthened by 2 µs into idle GPU time: the
    device's busy and kernel time grow by exactly that, its idle time shrinks by it."""
    oracle = gpu_oracle.Trace(REAL / "gpt2_eager.json.gz")
    ev = isolated_kernel(oracle, 2000)
    # The JSON text edited in place, so no other number goes through a float.
    with gzip.open(REAL / "gpt2_eager.json.gz", "rt") as f:
        text = f.read()
    was = f'"ts": {ev["ts"]}, "dur": {ev["dur"]}'
    assert text.count(was) == 1
    src = workdir / "gpt2_longer.json.gz"
    with gzip.open(src, "wt") as f:
        f.write(text.replace(was, f'"ts": {ev["ts"]}, "dur": {ev["dur"] + 2}'))   # 2 µs longer
    edited = process(workdir, "gpt2-longer", src=src)
    got = diff(gpt2, edited, "--limit", "1")
    d = {x["device"]: x for x in got["devices"]}["GPU 0"]
    assert d["busy_ns_delta"] == d["kernel_ns_delta"] == 2000
    assert d["idle_ns_delta"] == -2000 and d["wall_ns_delta"] == 0
    assert all(s["duration_ns_a"] == s["duration_ns_b"] for s in got["steps"])
    assert sum(s["gpu_busy_ns_delta"] for s in got["steps"]) in (0, 2000)
