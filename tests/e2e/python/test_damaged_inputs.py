"""Damaged values in a device trace (docs/capture-format.md, "Errors"): a record whose
times do not fit, or a DMA packet lasting longer than any real one, is refused with
a message naming the file and the record's offset, exit 1, no profile published and no
temporary directory left. Each case patches a few bytes of a valid tiny capture; the
record layout (40-byte records after a header of header_size bytes, kind at byte 0, ts at 8,
end at 16; epoch_ns at header byte 40, ticks_per_ns num/den at 32/36) is decoded here from
the format document, not from nxprof.
"""
import json
import os
import shutil
import struct
import subprocess
import threading

import pytest

from conftest import BIN, nx

INSTRUCTION = 1
DMA_PACKET = 3
INTERVAL_KINDS = {1, 3, 5, 6, 7, 9}
INT64_MAX = (1 << 63) - 1


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    cap = tmp_path_factory.mktemp("cap") / "cap"
    nx("synth", "--preset", "tiny", "--cores", "1", "--no-system", "--seed", "3", "--out", str(cap))
    return cap


def trace_of(cap):
    (trace,) = list(cap.rglob("*.nxtrace"))
    return trace


def first_record(data, kind):
    header_size = struct.unpack_from("<I", data, 12)[0]
    for at in range(header_size, len(data), 40):
        if data[at] == kind:
            return at
    raise AssertionError(f"no record of kind {kind}")


HANG_GUARD_S = 120   # a run still going after this is hung: a guard, not a speed threshold


def run_process(cap, out):
    return subprocess.run([str(BIN), "process", str(cap), "--output-file", str(out)],
                          capture_output=True, text=True, timeout=HANG_GUARD_S)


def cpu_seconds_of_process(cap, out):
    """Runs process; (its exit code, stderr, the user + system CPU seconds it used). CPU time
    is the run's own work, whatever else the machine is doing."""
    with open(out.parent / f"{out.name}.stderr", "w+") as err:
        p = subprocess.Popen([str(BIN), "process", str(cap), "--output-file", str(out)],
                             stdout=subprocess.DEVNULL, stderr=err)
        guard = threading.Timer(HANG_GUARD_S, p.kill)
        guard.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            guard.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
        err.seek(0)
        return p.returncode, err.read(), usage.ru_utime + usage.ru_stime


def damaged_copy(capture, tmp_path, patch):
    cap = tmp_path / "cap"
    shutil.copytree(capture, cap)
    trace = trace_of(cap)
    data = bytearray(trace.read_bytes())
    at = patch(data)
    trace.write_bytes(bytes(data))
    return cap, trace, at


def assert_refused(r, out, trace, at, words):
    assert r.returncode == 1, r.stderr
    assert trace.name in r.stderr and f"record at {at}" in r.stderr, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    assert not out.exists(), "nothing is published"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")], "no temporary left"


def test_dma_packet_ending_at_int64_max_ticks(capture, tmp_path):
    def patch(data):
        at = first_record(data, DMA_PACKET)
        struct.pack_into("<Q", data, at + 16, INT64_MAX)
        return at
    cap, trace, at = damaged_copy(capture, tmp_path, patch)
    out = tmp_path / "out" / "p"
    out.parent.mkdir()
    r = run_process(cap, out)
    # INT64_MAX ticks may or may not fit once converted to ns: either message names the record.
    assert_refused(r, out, trace, at, [])
    assert "dma_packet lasts" in r.stderr or "not a Unix ns time a record may have" in r.stderr, r.stderr


def test_dma_packet_lasting_eleven_minutes(capture, tmp_path):
    def patch(data):
        num, den = struct.unpack_from("<II", data, 32)
        at = first_record(data, DMA_PACKET)
        ts = struct.unpack_from("<Q", data, at + 8)[0]
        struct.pack_into("<Q", data, at + 16, ts + 11 * 60 * 10**9 * num // den)
        return at
    cap, trace, at = damaged_copy(capture, tmp_path, patch)
    out = tmp_path / "out" / "p"
    out.parent.mkdir()
    r = run_process(cap, out)
    assert_refused(r, out, trace, at, ["dma_packet lasts", "more than the 1000000000 ns"])


def test_epoch_at_int64_max(capture, tmp_path):
    def patch(data):
        struct.pack_into("<q", data, 40, INT64_MAX)
        header_size = struct.unpack_from("<I", data, 12)[0]
        for at in range(header_size, len(data), 40):  # the first record with a time past tick 0
            ts, end = struct.unpack_from("<QQ", data, at + 8)
            if ts > 0 or (data[at] in INTERVAL_KINDS and end > 0):
                return at
        raise AssertionError("every record at tick 0")
    cap, trace, at = damaged_copy(capture, tmp_path, patch)
    out = tmp_path / "out" / "p"
    out.parent.mkdir()
    r = run_process(cap, out)
    assert_refused(r, out, trace, at, ["not a Unix ns time a record may have"])


def test_instruction_time_sum_past_int64(capture, tmp_path):
    """Every instruction ending just before 2^62 ns (the latest time a record may have):
    each record is valid, but a few of them make a table's total time exceed int64, which
    is refused naming the table, the sum and a record, never written wrapped."""
    found = {}

    def patch(data):
        num, den = struct.unpack_from("<II", data, 32)
        epoch = struct.unpack_from("<q", data, 40)[0]
        end_ticks = ((1 << 62) - 1 - epoch) * num // den - num
        header_size = struct.unpack_from("<I", data, 12)[0]
        ats = [at for at in range(header_size, len(data), 40) if data[at] == INSTRUCTION]
        assert len(ats) > 4
        for at in ats:
            struct.pack_into("<Q", data, at + 16, end_ticks)
        found["ats"] = ats
        return ats[0]
    cap, trace, _ = damaged_copy(capture, tmp_path, patch)
    out = tmp_path / "out" / "p"
    out.parent.mkdir()
    r = run_process(cap, out)
    assert r.returncode == 1, r.stderr
    assert "exceeds the int64 range" in r.stderr and trace.name in r.stderr, r.stderr
    at = int(r.stderr.split("(record at ")[1].split(")")[0])
    assert at in found["ats"][1:], "the record named is an instruction after the first"
    assert not out.exists(), "nothing is published"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")], "no temporary left"


def cpu_of_one_token(tmp_path, suffix, mib):
    """process of a trace whose one event has a string of `mib` MiB in its args: CPU seconds."""
    import gzip
    cap = tmp_path / f"cap{mib}"
    cap.mkdir()
    text = ('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"x":"'
            + "y" * (mib << 20) + '"}}]}').encode()
    path = cap / ("trace" + suffix)
    path.write_bytes(gzip.compress(text, 1) if suffix.endswith(".gz") else text)
    del text
    rc, err, cpu = cpu_seconds_of_process(cap, tmp_path / f"out{mib}")
    assert rc == 0, err
    assert "args larger than 64 KiB" in err, err
    return cpu


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_one_huge_json_token_is_read_in_linear_time(tmp_path, suffix):
    """A 128 MiB string in one event's args: its args are kept truncated (a Warning), and
    reading it costs about 8 times the CPU of a 16 MiB one (yajl re-lexes a token that
    spans chunks: fixed 64 KiB chunks made the cost grow with the square of the size,
    64 times for 8 times the bytes). Compared in one test, so a busy machine slows both."""
    small = cpu_of_one_token(tmp_path, suffix, 16)
    big = cpu_of_one_token(tmp_path, suffix, 128)
    assert big < 24 * max(small, 0.01), f"16 MiB: {small:.3f} s CPU, 128 MiB: {big:.3f} s CPU"


def test_symlinked_table_file_is_not_followed(capture, tmp_path):
    """Only regular files inside a profile directory are opened: a table file (or its
    timeline index) that is a symbolic link to a file elsewhere is refused, naming it."""
    prof = tmp_path / "p"
    nx("process", str(capture), "--output-file", str(prof))
    outside = tmp_path / "outside"
    outside.mkdir()
    table = prof / "Instruction.parquet"
    shutil.move(table, outside / "Instruction.parquet")
    table.symlink_to(outside / "Instruction.parquet")
    r = subprocess.run([str(BIN), "export-csv", str(prof), "--start", "+0", "--end", "+1s",
                        "--tables", "Instruction", "--out", str(tmp_path / "csv")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0, r.stdout
    assert "Instruction.parquet" in r.stderr and "symbolic link" in r.stderr, r.stderr
    # The index alone as a link: not used (the sampling pass scans the table: it reads
    # row groups, which answering from the index does not), the rows unchanged.
    table.unlink()
    shutil.move(outside / "Instruction.parquet", table)

    def export(out):
        r = subprocess.run([str(BIN), "export-csv", str(prof), "--start", "+0", "--end", "+1s",
                            "--tables", "Instruction", "--out", str(out), "--debug-pages"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stderr, (out / "Instruction.csv").read_bytes()
    log_index, rows_index = export(tmp_path / "a")
    assert "sampling pass): row groups read 0 of 0" in log_index, log_index
    index = prof / ".Instruction.nxtl"
    shutil.move(index, outside / "idx")
    index.symlink_to(outside / "idx")
    log_link, rows_link = export(tmp_path / "b")
    assert "sampling pass): row groups read 0 of 0" not in log_link, log_link
    assert rows_link == rows_index


def test_top_on_a_table_lacking_a_schema_column(capture, tmp_path):
    """`top --by` a column the schema's table has but the profile's file lacks (or holds
    as another type) is a data problem: exit 1 naming the file, not a usage error (2);
    a column the schema does not have stays a usage error."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    prof = tmp_path / "p"
    nx("process", str(capture), "--output-file", str(prof))
    path = prof / "Instruction.parquet"
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["opcode"]), path)

    def top(by):
        return subprocess.run([str(BIN), "top", str(prof), "--table", "Instruction", "--by", by],
                              capture_output=True, text=True, timeout=60)
    r = top("engine,opcode")
    assert r.returncode == 1, r.stderr
    assert "Instruction.parquet" in r.stderr and "no column 'opcode'" in r.stderr, r.stderr
    r = top("engine,no_such_column")
    assert r.returncode == 2, r.stderr
    i = table.schema.get_field_index("opcode")
    pq.write_table(table.set_column(i, "opcode", pa.array([1.5] * table.num_rows)), path)
    r = top("opcode")
    assert r.returncode == 1, r.stderr
    assert "Instruction.parquet" in r.stderr and "not the schema's type" in r.stderr, r.stderr


def test_index_on_a_read_only_file_system_says_why(capture, tmp_path):
    """`index` where the profile cannot be written names the table, the directory and
    the system's reason, exits 1. Needs a read-only bind mount (root)."""
    import os
    prof = tmp_path / "p"
    nx("process", str(capture), "--output-file", str(prof))
    for index in prof.glob(".*.nxtl"):
        index.unlink()
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "--bind", str(prof), str(ro)]).returncode != 0:
        pytest.skip("a bind mount needs root")
    try:
        assert subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)]).returncode == 0
        r = subprocess.run([str(BIN), "index", str(ro)], capture_output=True, text=True, timeout=60)
    finally:
        subprocess.run(["umount", str(ro)])
    assert r.returncode == 1, r.stderr
    assert "Instruction: cannot create its timeline index in" in r.stderr, r.stderr
    assert "Read-only file system" in r.stderr, r.stderr


UNIX_NS_MAX = (1 << 62) - 1   # the latest time a row may hold (docs/processing.md)


def chrome_text(events, tail=""):
    """A trace.json text of the given event texts; (text, byte offset of each event's '{')."""
    head = '{"traceEvents":[\n'
    offsets, at = [], len(head)
    for e in events:
        offsets.append(at)
        at += len(e) + 2
    return head + ",\n".join(events) + "\n]" + tail + "}\n", offsets


@pytest.mark.parametrize("sort_bytes", [None, "2048"], ids=["in-memory", "spilled"])
def test_framework_times_out_of_range_are_dropped_with_a_warning_each(tmp_path, sort_bytes):
    """Framework times outside 0..2^62-1 Unix ns (the device records' bound) never reach a
    row: a B/E pair from -9e15 to +9e15 us (its duration would wrap int64), an X whose dur
    is 1e300 us, an X at exactly 2^62 ns, and an X that a file's baseTimeNanoseconds pushes
    past 2^62-1 are each a Warning naming the file and the event's byte offset; the events
    at 2^62-1 ns and in 2023 are kept, and summary's answers are never negative. With
    NXPROF_FRAMEWORK_SORT_BYTES of 2 KiB the events go through the external sort's runs,
    where baseTimeNanoseconds is added at the merge."""
    import pyarrow.parquet as pq
    cap = tmp_path / "cap"
    cap.mkdir()
    pad = ',"args":{"pad":"' + "p" * 600 + '"}'   # a few events fill a 2 KiB sort budget
    events = [
        '{"ph":"B","name":"wide","pid":1,"tid":1,"ts":-9000000000000000' + pad + '}',
        '{"ph":"E","pid":1,"tid":1,"ts":9000000000000000}',
        '{"ph":"X","name":"forever","pid":1,"tid":2,"ts":1000,"dur":1e300}',
        '{"ph":"X","name":"at_2_62","pid":1,"tid":3,"ts":4611686018427387.904,"dur":0' + pad + '}',
        '{"ph":"X","name":"last_ns","pid":1,"tid":3,"ts":4611686018427387.903,"dur":0}',
        '{"ph":"X","name":"ok","pid":1,"tid":4,"ts":1700000000000000,"dur":5' + pad + '}',
    ]
    text, at = chrome_text(events)
    (cap / "a.json").write_text(text)
    shifted_text, shifted_at = chrome_text(['{"ph":"X","name":"shifted","pid":2,"tid":1,"ts":1,"dur":1}'],
                                           ',"baseTimeNanoseconds":4611686018427387000')
    (cap / "b.json").write_text(shifted_text)
    env = dict(os.environ)
    if sort_bytes:
        env["NXPROF_FRAMEWORK_SORT_BYTES"] = sort_bytes
    out = tmp_path / "out"
    r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(out)], capture_output=True,
                       text=True, env=env, timeout=HANG_GUARD_S)
    assert r.returncode == 0, r.stderr
    warnings = [w["message"] for w in pq.read_table(out / "Warning.parquet").to_pylist()]
    expect = {  # (file, offset, what the message names)
        "wide": (cap / "a.json", at[0], '"wide"'),
        "forever": (cap / "a.json", at[2], "event #2"),
        "at_2_62": (cap / "a.json", at[3], '"at_2_62"'),
        "shifted": (cap / "b.json", shifted_at[0], '"shifted"'),
    }
    for name, (path, offset, names) in expect.items():
        hits = [w for w in warnings if w.startswith(f"{path} (at {offset}):") and names in w]
        assert len(hits) == 1, (name, warnings)
    assert len(warnings) == len(expect), warnings
    rows = pq.read_table(out / "SystemProfileEvents.parquet").to_pylist()
    assert sorted(row["name"] for row in rows) == ["last_ns", "ok"]
    for row in rows:
        assert 0 <= row["start_ts"] <= row["end_ts"] <= UNIX_NS_MAX, row
        assert row["duration_ns"] == row["end_ts"] - row["start_ts"], row
    s = json.loads(nx("summary", str(out), "--format", "json").stdout)
    assert s["wall"]["duration_ns"] == UNIX_NS_MAX - 1_700_000_000_000_000_000, s["wall"]
    assert all(t["busy_ns"] >= 0 for t in s["threads"]), s["threads"]
    assert all(o["sum_duration_ns"] >= 0 and o["sum_self_ns"] >= 0 for o in s["top_operators"]), s


def test_nan_time_is_invalid_json_naming_its_place(tmp_path):
    """NaN is not JSON (RFC 8259 has no NaN or Infinity): such a trace is refused whole, exit 1,
    naming the file and the byte offset, nothing published."""
    cap = tmp_path / "cap"
    cap.mkdir()
    text, at = chrome_text(['{"ph":"X","name":"ok","pid":1,"tid":1,"ts":1,"dur":1}',
                            '{"ph":"X","name":"nan","pid":1,"tid":1,"ts":NaN,"dur":1}'])
    (cap / "trace.json").write_text(text)
    out = tmp_path / "out" / "p"
    out.parent.mkdir()
    r = run_process(cap, out)
    assert r.returncode == 1, r.stderr
    assert f"{cap / 'trace.json'}: byte " in r.stderr and "invalid JSON" in r.stderr, r.stderr
    assert not out.exists() and list(out.parent.iterdir()) == []


INT64_MIN = -(1 << 63)

HOSTILE_EVENTS = {   # name -> rows (name, tid, start_ts, end_ts, duration_ns), what the error says
    "wall_past_int64": ([("a", 1, INT64_MIN + 1, INT64_MIN + 11, 10), ("b", 2, INT64_MAX - 11, INT64_MAX - 1, 10)],
                        "exceeds the int64 range"),
    "negative_duration": ([("a", 1, 100, 200, 100), ("b", 2, 300, 350, -50)], "is negative"),
    "sum_past_int64": ([("a", 1, 0, INT64_MAX - 1, INT64_MAX - 1), ("a", 2, 0, INT64_MAX - 1, INT64_MAX - 1)],
                       "overflows"),
}


@pytest.fixture(scope="module")
def framework_profile(tmp_path_factory):
    """A system profile of two framework events on two threads, processed by nxprof."""
    work = tmp_path_factory.mktemp("fw")
    (work / "cap").mkdir()
    text, _ = chrome_text(['{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}',
                           '{"ph":"X","name":"b","pid":1,"tid":2,"ts":2,"dur":1}'])
    (work / "cap" / "trace.json").write_text(text)
    nx("process", str(work / "cap"), "--data-path", str(work / "data"), "--display-name", "fw")
    return work / "data"


@pytest.mark.parametrize("case", list(HOSTILE_EVENTS))
def test_summary_of_hostile_times_is_an_error_not_a_wrapped_answer(framework_profile, tmp_path, case):
    """SystemProfileEvents re-written by pyarrow (another tool: no timeline index) with times
    no nxprof profile holds: a wall time past int64, a negative duration, durations whose sum
    passes int64. `summary` and `top` exit 1 naming the problem, and the server's /summary
    answers an error; no answer is ever a wrapped (negative) number."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    data = tmp_path / "data"
    shutil.copytree(framework_profile, data)
    prof = data / "profiles" / "global" / "fw@latest"
    (prof / ".SystemProfileEvents.nxtl").unlink(missing_ok=True)
    path = prof / "SystemProfileEvents.parquet"
    table = pq.read_table(path)
    rows, words = HOSTILE_EVENTS[case]
    base = table.slice(0, 1).to_pylist()[0]
    new = [dict(base, id=i, name=n, thread_id=tid, start_ts=s, end_ts=e, duration_ns=d)
           for i, (n, tid, s, e, d) in enumerate(rows)]
    pq.write_table(pa.Table.from_pylist(new, schema=table.schema), path)
    for args in (["summary", str(prof), "--format", "json"], ["top", str(prof), "--format", "json"]):
        r = nx(*args, check=False)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert "SystemProfileEvents" in r.stderr and words in r.stderr, (args, r.stderr)
    from answers import Server
    import urllib.error
    with Server(data) as s:
        with pytest.raises(urllib.error.HTTPError) as e:
            s.get("/api/profiles/fw/summary")
        assert e.value.code >= 400
        body = json.loads(e.value.read())
        assert "SystemProfileEvents" in body["error"] and words in body["error"], body
