"""Process and thread names from the metadata (M) events of the real GPU traces of
tests/data/real-gpu (Kineto: gpt2_eager, with process_labels "GPU 0" and threads named
twice; JAX: jax_perfetto_trace, "/device:GPU:0", "Stream #14(Compute)"), checked against
what Python reads from the raw JSON (docs/processing.md "Process and thread names"):

  - every framework row of a process or thread the trace named carries the names in its
    extra_attributes_json (process_name, process_labels, process_sort_index, thread_name,
    thread_sort_index): the first value of each key for that pid, or (pid, tid), wins;
  - `top --by thread` groups by the thread label read like Perfetto's UI ("<process> /
    <thread>"; rule in src/profile/thread_label.h), with the row counts Python counts per
    label; `summary` names the busy threads by the same labels.
"""
import gzip
import json
from collections import Counter
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from conftest import TEST_DATA, nx

TRACES = ["gpt2_eager.json.gz", "jax_perfetto_trace.json.gz"]
PROCESS_KEYS = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index"}
THREAD_KEYS = {"thread_name": "name", "thread_sort_index": "sort_index"}


def names_from_json(events):
    """{("p", pid) or ("t", pid, tid): {key: value}} from the M events, first value wins."""
    out = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "M":
            continue
        key, args = e.get("name"), e.get("args") or {}
        if key in PROCESS_KEYS:
            slot, member = ("p", e.get("pid")), PROCESS_KEYS[key]
        elif key in THREAD_KEYS:
            slot, member = ("t", e.get("pid"), e.get("tid")), THREAD_KEYS[key]
        else:
            continue
        v = args.get(member)
        if isinstance(v, str) if member != "sort_index" else isinstance(v, (int, Decimal)):
            out.setdefault(slot, {}).setdefault(key, v)
    return out


def label(names, pid, tid, pid_text, tid_text, scope=None):
    """The documented thread label, or None when nothing names the thread. An instant of
    global scope (scope "g") with nothing else naming it is on "Global / instant events"."""
    def text(v):
        return v.strip(" \t") or None if isinstance(v, str) else None
    labels, name = text(names.get("process_labels")), text(names.get("process_name"))
    glob = scope == "g"
    if labels and labels != "CPU":
        proc = labels
    elif name:
        proc = f"{name} ({pid})"
    else:
        proc = text(pid_text) or ("Global" if glob else None)
    thread = text(names.get("thread_name")) or text(tid_text) or ("instant events" if glob else None)
    if proc is None and thread is None:
        return None
    return f"{proc or f'process {pid}'} / {thread or f'thread {tid}'}"


@pytest.fixture(scope="module", params=TRACES)
def processed(request, tmp_path_factory):
    raw = gzip.open(TEST_DATA / "real-gpu" / request.param).read()
    events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    cap = tmp_path_factory.mktemp("cap")
    (cap / request.param).write_bytes(gzip.compress(raw))
    out = tmp_path_factory.mktemp("out") / "p"
    nx("process", cap, "-o", out)
    rows = pq.read_table(out / "SystemProfileEvents.parquet").to_pylist()
    return out, names_from_json(events), rows


def expected_names(table, row):
    extra = json.loads(row["extra_attributes_json"], parse_float=Decimal)
    # A string pid/tid ("Spans") is kept as written in extra_attributes_json; M events name it so.
    pid, tid = extra.get("pid", row["process_id"]), extra.get("tid", row["thread_id"])
    return {**table.get(("p", pid), {}), **table.get(("t", pid, tid), {})}


def test_rows_carry_their_threads_names(processed):
    _, table, rows = processed
    assert table, "the trace has metadata names"
    named = 0
    for row in rows:
        extra = json.loads(row["extra_attributes_json"], parse_float=Decimal)
        got = {k: extra[k] for k in (*PROCESS_KEYS, *THREAD_KEYS) if k in extra}
        want = expected_names(table, row)
        assert got == want, row
        named += bool(want)
    assert named > 0


def labels_of(table, rows):
    """Counter of the label (or track name) of every row, as `top --by thread` groups them."""
    c = Counter()
    for row in rows:
        extra = json.loads(row["extra_attributes_json"], parse_float=Decimal)
        pid, tid = row["process_id"], row["thread_id"]
        lab = label(expected_names(table, row), pid, tid, extra.get("pid"), extra.get("tid"), extra.get("s"))
        c[lab or f"{row['instance_id']}/{pid}/{tid}"] += 1
    return c


def test_top_by_thread_uses_the_labels(processed):
    out, table, rows = processed
    got = json.loads(nx("top", out, "--by", "thread", "--format", "json", "--limit", "0", "--profiler-rows").stdout)
    assert {g["thread"]: g["count"] for g in got["top"]} == dict(labels_of(table, rows))


def test_summary_names_threads_by_label(processed):
    out, table, rows = processed
    got = json.loads(nx("summary", out, "--format", "json").stdout)
    assert {t["thread"] for t in got["threads"]} <= set(labels_of(table, rows))


def test_perfetto_style_labels_of_the_issue():
    """The labels the issue names, read from the real traces."""
    seen = set()
    for name in TRACES:
        events = json.loads(gzip.open(TEST_DATA / "real-gpu" / name).read(), parse_float=Decimal)["traceEvents"]
        table = names_from_json(events)
        for e in events:
            if e.get("ph") == "X" and isinstance(e.get("pid"), int):
                names = {**table.get(("p", e["pid"]), {}), **table.get(("t", e["pid"], e.get("tid")), {})}
                seen.add(label(names, e["pid"], e.get("tid"), None, None))
    assert {"python3 (469) / thread 520 (pt_autograd_0)", "GPU 0 / stream 7",
            "/device:GPU:0 (1) / Stream #14(Compute)"} <= seen


def test_global_instants_have_their_own_label(tmp_path):
    """Kineto's "Record Window End" is an instant of global scope with a blank pid and tid:
    its track reads "Global / instant events", not a hashed process number."""
    raw = gzip.open(TEST_DATA / "real-gpu" / "gpt2_eager.json.gz").read()
    events = json.loads(raw)["traceEvents"]
    glob = [e for e in events if e.get("ph") == "i" and e.get("s") == "g" and e.get("pid") == ""]
    assert glob, "the trace has a global instant without a pid"
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "gpt2_eager.json.gz").write_bytes(gzip.compress(raw))
    nx("process", cap, "-o", tmp_path / "p")
    got = json.loads(nx("top", tmp_path / "p", "--by", "thread", "--format", "json", "--limit", "0").stdout)
    assert {g["thread"]: g["count"] for g in got["top"]}.get("Global / instant events") == len(glob)
