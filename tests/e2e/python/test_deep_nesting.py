"""Memory stays bounded however deep events nest (docs/query.md "Sampling"): 300,000 Chrome
"X" events nested one inside the next on one thread, and 300,000 starting at the same time,
are processed under 512 MiB of peak RSS (the process's own ru_maxrss, from wait4), with one
Warning row saying that the timeline samples their deepest levels together, and one
/timeline request on either (width 100 and 10000) raises the server's VmHWM by less than
256 MiB. The depths the server returns, below the fold of the sampling levels included, and
the deepest depth /tracks reports are checked against a computation of the nesting rule in
Python; the scan (NXPROF_NO_TIMELINE_INDEX=1) gives the same answer as the index. A request
over the query memory budget (NXPROF_QUERY_MEMORY_MIB) is a 503 with an error saying so,
and the server keeps answering.
"""
import gzip
import os
import subprocess

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import BIN, http_get_json as get, serving

N = 300_000
MIB = 1 << 20


def write_trace(path, same_start):
    """N X events on one thread, event i enclosing every later one: ts i us (or 0), dur 2 (N - i) us."""
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write('{"traceEvents":[')
        f.write(",".join('{"ph":"X","name":"f%d","pid":1,"tid":1,"ts":%d,"dur":%d}'
                         % (i % 7, 0 if same_start else i, 2 * (N - i)) for i in range(N)))
        f.write("]}")


def process_peak_rss(cap, data, name):
    """`nxprof process` of cap into data as profile `name`: its peak RSS in bytes."""
    p = subprocess.Popen([str(BIN), "process", str(cap), "--data-path", str(data), "--display-name", name],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, p.stderr.read()
    p.stderr.close()
    return usage.ru_maxrss * 1024


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    """Both traces processed into one data path: (data path, {name: peak RSS})."""
    root = tmp_path_factory.mktemp("deep")
    peaks = {}
    for name, same in (("nested", False), ("same-start", True)):
        cap = root / f"cap-{name}"
        cap.mkdir()
        write_trace(cap / "trace.json.gz", same)
        peaks[name] = process_peak_rss(cap, root / "data", name)
    return root / "data", peaks


def profile_dir(data, name):
    return data / "profiles" / "global" / f"{name}@latest"


def vm_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def timeline(port, name, start, end, width):
    return get(port, f"/api/profiles/{name}/timeline?tables=SystemProfileEvents&start={start}&end={end}"
                     f"&width={width}")


def expected_depth(starts, ends, ordinal):
    """The nesting rule (docs/query.md "Depth and self time") read directly: how many other
    events of the track (one thread here; no two intervals are equal) enclose this one."""
    s, e = starts[ordinal], ends[ordinal]
    enclosing = pc.and_(pc.less_equal(starts, s), pc.greater_equal(ends, e))
    return pc.sum(enclosing).as_py() - 1


def kept_depths(body):
    (table,) = body["tables"]
    assert "error" not in table, table
    return [(o, d) for t in table["tracks"] for o, d in zip(t["ord"], t["depth"])]


@pytest.mark.parametrize("name", ["nested", "same-start"])
def test_processing_memory_does_not_grow_with_depth(profiles, name):
    _, peaks = profiles
    assert peaks[name] < 512 * MIB, f"{name}: peak RSS {peaks[name] / MIB:.0f} MiB"


@pytest.mark.parametrize("name", ["nested", "same-start"])
def test_the_fold_is_said_in_a_warning(profiles, name):
    data, _ = profiles
    rows = pq.read_table(profile_dir(data, name) / "Warning.parquet").to_pylist()
    # The trace's ts count from 0 with no base time: the relative-time notice comes too.
    assert [r["category"] for r in rows] == ["Relative Time", "Deep Nesting"], rows
    rows = rows[1:]
    assert f"1 track(s) hold events deeper than depth 63 (the deepest at depth {N - 1})" in rows[0]["message"]


@pytest.mark.parametrize("name", ["nested", "same-start"])
def test_timeline_memory_and_depths(profiles, name):
    data, _ = profiles
    t = pq.read_table(profile_dir(data, name) / "SystemProfileEvents.parquet", columns=["start_ts", "end_ts"])
    starts, ends = t.column("start_ts").combine_chunks(), t.column("end_ts").combine_chunks()
    assert len(starts) == N
    lo, hi = pc.min(starts).as_py(), pc.max(ends).as_py()
    mid = starts[N // 2].as_py()
    windows = [(lo, hi, 100), (lo, hi, 10000), (mid, mid + 5000, 100)]
    with serving(data) as (port, pid):
        base = vm_hwm(pid)
        answers = []
        for start, end, width in windows:
            status, body = timeline(port, name, start, end, width)
            assert status == 200, body
            answers.append(body)
        raised = vm_hwm(pid) - base
        assert raised < 256 * MIB, f"{name}: the server's VmHWM rose by {raised / MIB:.0f} MiB"
        status, tracks = get(port, f"/api/profiles/{name}/tracks?tables=SystemProfileEvents")
        assert status == 200, tracks
        assert [tr["max_depth"] for g in tracks["groups"] for tr in g["tracks"]] == [N - 1]
    kept = [kd for body in answers for kd in kept_depths(body)]
    deep = [kd for kd in kept if kd[1] >= 64]
    # Events starting together share a bucket: below the fold only the longest is kept.
    assert deep if name == "nested" else sorted(d for _, d in kept) == sorted(list(range(64)) * len(windows)), kept[:99]
    sample = sorted(set(kept))[:: max(1, len(set(kept)) // 60)] + deep[:20]
    for ordinal, depth in sample:
        assert depth == expected_depth(starts, ends, ordinal), (ordinal, depth)
    # The scan folds the levels as the index does: the same answer.
    with serving(data, env={"NXPROF_NO_TIMELINE_INDEX": "1"}) as (port, _):
        for (start, end, width), body in zip(windows, answers):
            status, scanned = timeline(port, name, start, end, width)
            assert status == 200 and scanned == body, (start, end, width)


def test_over_budget_request_is_a_clear_error_and_the_server_lives(profiles):
    data, _ = profiles
    lo, hi = 0, 2 * N * 1000
    with serving(data, env={"NXPROF_QUERY_MEMORY_MIB": "1"}) as (port, _):
        status, body = timeline(port, "nested", lo, hi, 10000)
        assert status == 503, body
        assert "memory budget of 1 MiB" in body["error"] and "SystemProfileEvents" in body["error"], body
        status, body = timeline(port, "nested", lo, hi, 100)   # 64 levels x 100 buckets fit
        assert status == 200, body
        assert get(port, "/api/health")[0] == 200
