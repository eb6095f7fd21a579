"""Every variant of the Chrome trace format real tools write is read, and no element of a
trace is dropped silently (docs/processing.md, "Framework traces: what becomes of each
element").

Each hand-made trace is processed alone in a capture; the expectation is worked out from
the raw JSON alone, by the documented rules, not by nxprof (tests/e2e/python/chrome_model.py):
  - an element is *skipped* (a Warning naming its index) when it is not an object, has no
    one-character "ph", or, other than M, no "ts" that is a number or a string holding
    one;
  - every other event is *kept* as a SystemProfileEvents row (X, B/E matched per pid/tid as
    a stack, async b/e per pid, cat and id, every other phase at its ts), except an X with
    a negative dur, an E (e) without an open B (b), a B (b) never closed and a pair whose
    end is earlier than its begin, which are *warned* about in per-file counts;
  - M events naming a process or thread (process_name, process_labels, thread_name, their
    sort indexes) are kept as names; any other M event is *not stored* (one "Not Stored"
    Warning per file with the count);
  - kept + not stored + warned = the number of elements, and `process` prints them, the
    kept ones by kind, in one line per trace on stderr;
  - names that are not UTF-8 keep every other byte, each bad byte becoming U+FFFD;
  - times are µs whatever "displayTimeUnit" says; a file without baseTimeNanoseconds whose
    times are all below 10^12 µs counts from its start (a "Relative Time" Warning, and
    SystemProfileMetadata's first_ts says so).
The real JAX trace of tests/data/real-gpu (whose last element is an empty {}) is checked
the same way.
"""
import codecs
import gzip
import json
import re
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from chrome_model import model
from conftest import TEST_DATA, nx, profile_files

UNIX_US = 1_700_000_000_000_000
LINE = re.compile(r": kept (\d+) events \(X: (\d+), B/E: (\d+), i: (\d+), C: (\d+), b/e: (\d+), n: (\d+), "
                  r"s/t/f: (\d+), other: (\d+), M names: (\d+)\)(?:, not stored yet (\d+) \(M: \d+\))?, "
                  r"warned (\d+)\n")
LINE_KINDS = ("X", "B/E", "i", "C", "b/e", "n", "s/t/f", "other")


def per_byte_replace(err):
    """Decoding error handler: one U+FFFD for the first bad byte, then read on from the next."""
    return "\ufffd", err.start + 1


codecs.register_error("per_byte", per_byte_replace)


def run(tmp_path, raw, name="trace.json"):
    """Processes raw (bytes) as a one-file capture: (profile dir, stderr)."""
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / name).write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    out = tmp_path / "out"
    r = nx("process", cap, "-o", out)
    return out, r.stderr


def table(out, name):
    files = profile_files(out).get(name, [])
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def elements_of(raw):
    text = raw.decode("utf-8", "per_byte").lstrip("\ufeff")
    doc = json.loads(text, parse_float=Decimal)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def check(tmp_path, raw, name="trace.json"):
    """Processes raw and checks rows, Warnings and the stderr line against chrome_model."""
    elements = elements_of(raw)
    m = model(elements)
    out, err = run(tmp_path, raw, name)
    got = sorted((r["name"], r["start_ts"], r["end_ts"], json.loads(r["extra_attributes_json"]).get("ph"))
                 for r in table(out, "SystemProfileEvents") if r["trace_event_source"] == "framework")
    assert got == sorted((r["name"], r["start"], r["end"], r["ph"]) for r in m.rows)
    warnings = table(out, "Warning")
    for i in m.skipped[:20]:
        assert any(f"event #{i}:" in w["message"] and w["category"] == "Invalid Data" for w in warnings), (i, warnings)
    said = [w["message"].split(": ", 1)[1] for w in warnings if w["category"] == "Not Stored"]
    assert said == ([f"{m.unnamed} metadata events (ph M) are not stored: they give no process or thread name, "
                     "labels or sort index"] if m.unnamed else [])
    line = LINE.search(err)
    assert line, err
    kept, *by_kind, names, later, warn_n = (int(g or 0) for g in line.groups())
    assert dict(zip(LINE_KINDS, by_kind)) == {k: m.kept[k] for k in LINE_KINDS}
    assert (kept, names, later, warn_n) == (sum(m.kept.values()) + m.names, m.names, m.unnamed,
                                            m.warned + len(m.skipped))
    assert kept + later + warn_n == len(elements)
    return out, warnings


def x(name, ts, dur=1, **kw):
    return dict(ph="X", name=name, ts=ts, dur=dur, pid=1, tid=1, **kw)


def dumps(doc):
    return json.dumps(doc).encode()


def test_trailing_empty_object_as_jax_writes(tmp_path):
    check(tmp_path, dumps({"traceEvents": [x("a", UNIX_US), x("b", UNIX_US + 5), {}]}))


def test_elements_without_ph_or_not_objects_bare_array(tmp_path):
    check(tmp_path, dumps([x("a", UNIX_US), {"ts": UNIX_US, "name": "no ph"}, 7, [1, {}], {"ph": "XY", "ts": 1},
                           {"ph": 3, "ts": 1}, x("b", UNIX_US + 2)]))


def test_utf8_bom(tmp_path):
    check(tmp_path, b"\xef\xbb\xbf" + dumps({"traceEvents": [x("a", UNIX_US)]}))


def test_ts_as_string_null_and_many_decimals(tmp_path):
    raw = ('[{"ph":"X","name":"s","ts":"1700000000000000.5","dur":"2","pid":1,"tid":1},'
           '{"ph":"X","name":"n","ts":null,"dur":1,"pid":1,"tid":1},'
           '{"ph":"X","name":"w","ts":"soon","dur":1,"pid":1,"tid":1},'
           '{"ph":"X","name":"d","ts":1700000000000001.1234567891,"dur":0.0005,"pid":1,"tid":1}]').encode()
    check(tmp_path, raw)


def test_ids_and_counters_above_int64(tmp_path):
    raw = ('[{"ph":"X","name":"big","ts":1700000000000000,"dur":1,"pid":18446744073709551615,'
           '"tid":9223372036854775808,"id":18446744073709551616},'
           '{"ph":"C","name":"mem","ts":1700000000000000,"pid":1,"args":{"v":18446744073709551617}}]').encode()
    out, _ = check(tmp_path, raw)
    rows = {r["name"]: json.loads(r["extra_attributes_json"]) for r in table(out, "SystemProfileEvents")}
    assert rows["big"]["pid"] == "18446744073709551615" and rows["big"]["tid"] == "9223372036854775808"
    assert rows["mem"] == {"ph": "C", "args": {"v": 18446744073709551617}}


def test_invalid_utf8_in_names_kept_with_replacement(tmp_path):
    raw = (b'[{"ph":"X","name":"a\xffb","ts":1700000000000000,"dur":1,"pid":1,"tid":1},'
           b'{"ph":"X","name":"\xe2\x82z\xc3\xa9","ts":1700000000000001,"dur":1,"pid":1,"tid":1,'
           b'"args":{"k":"v\xc0"}}]')
    out, _ = check(tmp_path, raw)
    rows = sorted(table(out, "SystemProfileEvents"), key=lambda r: r["start_ts"])
    assert rows[1]["name"] == "\ufffd\ufffdz\u00e9"
    assert json.loads(rows[1]["extra_attributes_json"])["args"] == {"k": "v\ufffd"}


@pytest.mark.parametrize("unit", ["ns", "ms"])
def test_display_time_unit_does_not_change_ts(tmp_path, unit):
    _, warnings = check(tmp_path, dumps({"displayTimeUnit": unit, "traceEvents": [x("a", UNIX_US, 3)]}))
    noted = [w for w in warnings if w["category"] == "Trace Format"]
    assert len(noted) == (1 if unit == "ns" else 0)
    if noted:
        assert 'displayTimeUnit is "ns"' in noted[0]["message"]


def test_relative_times_are_said_not_dated_1970(tmp_path):
    out, warnings = check(tmp_path, dumps({"traceEvents": [x("a", 50.234, 2), x("b", 26287.152, 1)]}))
    assert [w["category"] for w in warnings] == ["Relative Time"]
    (meta,) = table(out, "SystemProfileMetadata")
    assert meta["first_ts"] == "50234 ns after the trace start (relative time)"
    assert meta["last_ts"] == "26288152 ns after the trace start (relative time)"


def test_absolute_times_are_dates(tmp_path):
    out, warnings = check(tmp_path, dumps({"traceEvents": [x("a", UNIX_US)]}))
    assert warnings == []
    (meta,) = table(out, "SystemProfileMetadata")
    assert meta["first_ts"].startswith("2023-11-14 22:13:20 +0000 UTC")


def test_unbalanced_begin_end_and_negative_dur(tmp_path):
    t = UNIX_US
    check(tmp_path, dumps([
        dict(ph="B", name="outer", ts=t, pid=1, tid=1), dict(ph="B", name="inner", ts=t + 1, pid=1, tid=1),
        dict(ph="E", ts=t + 2, pid=1, tid=1), dict(ph="E", ts=t + 9, pid=2, tid=2),
        dict(ph="B", name="back", ts=t + 5, pid=3, tid=3), dict(ph="E", ts=t + 4, pid=3, tid=3),
        x("neg", t, -5), x("ok", t, 0),
    ]))


def test_every_phase_is_kept_and_counted_by_kind(tmp_path):
    t = UNIX_US
    phases = ["i", "I", "C", "b", "e", "n", "s", "t", "f", "M", "P", "O", "Z"]
    check(tmp_path, dumps([dict(ph=p, name=p, ts=t, pid=1, tid=1) for p in phases] + [x("kept", t)]))


def test_many_skipped_elements_are_counted_past_twenty(tmp_path):
    out, warnings = check(tmp_path, dumps([{}] * 25 + [x("a", UNIX_US)]))
    assert any(w["message"].endswith("5 more elements of traceEvents could not be used as events; skipped")
               for w in warnings)


def test_real_jax_perfetto_trace(tmp_path):
    raw = gzip.open(TEST_DATA / "real-gpu" / "jax_perfetto_trace.json.gz").read()
    elements = elements_of(raw)
    assert elements[-1] == {}
    out, warnings = check(tmp_path, raw, "jax_perfetto_trace.json")
    assert any(w["category"] == "Relative Time" for w in warnings)


def test_one_trace_file_is_a_capture(tmp_path):
    """`process trace.json.gz` reads that file alone, as a directory holding only it would be
    read; the profile's default name is the file's, without the trace writer's suffixes."""
    src = TEST_DATA / "real-gpu" / "ddp_rank0.json.gz"
    named = tmp_path / "host_1234.1733000000.pt.trace.json.gz"
    named.write_bytes(src.read_bytes())
    nx("process", named, "--data-path", tmp_path / "dp")
    profile = tmp_path / "dp" / "profiles" / "global" / "host_1234.1733000000@latest"
    elements = elements_of(gzip.decompress(src.read_bytes()))
    rows = table(profile, "SystemProfileEvents")
    m = model(elements)
    assert len([r for r in rows if r["trace_event_source"] == "framework"]) == len(m.rows)
    assert named.read_bytes() == src.read_bytes()          # the user's file is left alone
    other = tmp_path / "notes.txt"
    other.write_text("not a trace")
    r = nx("process", other, "-o", tmp_path / "o2", check=False)
    assert r.returncode == 1 and str(other) in r.stderr and "framework trace" in r.stderr
    assert not (tmp_path / "o2").exists()
