"""Framework events are sorted with an external merge (src/process/system/event_runs.h): with a
sort budget of a few KiB (NXPROF_FRAMEWORK_SORT_BYTES) every Chrome file is spilled in many
runs, mid-file and with B (and async b) events still open across a spill, and SystemProfileEvents must
equal, cell by cell, what the in-memory sort gives -- on the real PyTorch fixtures and on
generated traces with nested B/E pairs, X events, equal start times, several threads, several
files and a baseTimeNanoseconds written after traceEvents (so spilled runs get their base
later). The order itself is checked independently: start_ts never decreases.
"""
import gzip
import json
import os
import random
import shutil
import subprocess

from collections import Counter

import pyarrow.parquet as pq
import pytest

from chrome_model import model
from conftest import BIN, ROOT

FIXTURES = sorted((ROOT / "tests" / "data" / "chrome-traces").glob("*.json.gz"))


def process(cap, out, budget=None):
    env = dict(os.environ)
    if budget:
        env["NXPROF_FRAMEWORK_SORT_BYTES"] = str(budget)
    r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(out)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return pq.read_table(out / "SystemProfileEvents.parquet")


def async_events(rng, t, s, ts):
    """A request of thread t's step s as async events: a b, a b nested in it with the same
    id, an n between, then their e's, spread over the step."""
    key = {"cat": "req", "id": f"{t}-{s}", "pid": 1, "tid": t}
    return [dict(ph="b", name=f"req{rng.randrange(3)}", ts=ts, args={"step": s}, **key),
            dict(ph="b", name="inner", ts=ts + 1, **key), dict(ph="n", name="mark", ts=ts + 2, **key),
            dict(ph="e", ts=ts + 3, **key), dict(ph="e", ts=ts + 4 + rng.randrange(20), args={"ok": 1}, **key)]


def generated_trace(seed, n_threads=4, depth=5, steps=300, base=None, asyncs=False):
    rng = random.Random(seed)
    events = []
    for t in range(n_threads):
        ts = 1000 + rng.randrange(50)
        for s in range(steps):
            stack = []
            for d in range(rng.randrange(1, depth + 1)):
                events.append({"ph": "B", "name": f"op{d}_{rng.randrange(7)}", "pid": 1, "tid": t, "ts": ts,
                               "args": {"step": s}})
                stack.append(ts)
                ts += rng.randrange(0, 3)
            if rng.random() < 0.5:
                events.append({"ph": "X", "name": "leaf", "pid": 1, "tid": t, "ts": ts, "dur": rng.randrange(5)})
            if asyncs:
                events += async_events(rng, t, s, ts)
            for _ in stack:
                ts += rng.randrange(1, 4)
                events.append({"ph": "E", "pid": 1, "tid": t, "ts": ts})
            ts += rng.randrange(0, 5)
    rng.shuffle(events)  # Chrome traces are not in time order
    doc = {"traceEvents": events}
    if base is not None:
        doc["baseTimeNanoseconds"] = base  # after traceEvents, as Kineto writes it
    return json.dumps(doc)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name.split(".")[0] for f in FIXTURES])
def test_spilled_sort_equals_in_memory_on_real_traces(tmp_path, fixture):
    cap = tmp_path / "cap"
    cap.mkdir()
    shutil.copy(fixture, cap / fixture.name)
    whole = process(cap, tmp_path / "a")
    spilled = process(cap, tmp_path / "b", budget=8192)
    assert spilled.equals(whole)


def test_spilled_sort_equals_in_memory_on_nested_pairs(tmp_path):
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "a.json").write_text(generated_trace(1, base=1_700_000_000_000_000_000))
    with gzip.open(cap / "b.json.gz", "wt") as f:
        f.write(generated_trace(2, n_threads=3))
    (cap / "c.json").write_text(generated_trace(3, n_threads=2, base=5))
    whole = process(cap, tmp_path / "a")
    for budget in (4096, 65536):
        spilled = process(cap, tmp_path / f"b{budget}", budget=budget)
        assert spilled.equals(whole), budget
    starts = whole.column("start_ts").to_pylist()
    assert starts == sorted(starts)
    assert whole.num_rows > 5000


def test_spilled_sort_keeps_async_pairs_open_across_spills(tmp_path):
    """Async b events wait for their e across spills as B events do: the rows equal the
    in-memory sort's, and their count by phase is chrome_model's."""
    cap = tmp_path / "cap"
    cap.mkdir()
    text = generated_trace(4, n_threads=3, steps=200, base=1_700_000_000_000_000_000, asyncs=True)
    (cap / "a.json").write_text(text)
    whole = process(cap, tmp_path / "a")
    spilled = process(cap, tmp_path / "b", budget=4096)
    assert spilled.equals(whole)
    phases = Counter(json.loads(j).get("ph") for j in whole.column("extra_attributes_json").to_pylist())
    want = Counter(r["ph"] for r in model(json.loads(text)["traceEvents"]).rows)
    assert phases == want and want["b"] > 300 and want["n"] == 3 * 200   # shuffled: some e come first
