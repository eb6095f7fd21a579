"""SIGTERM and SIGINT stop `nxprof process` in every phase, and capture files that are not
regular files are refused without blocking.

Phases: `process` appends the name of each phase it enters to $NXPROF_TEST_PHASE_FILE,
and the phase named by $NXPROF_TEST_PHASE_WAIT waits at its start until a stop is
requested (docs/testing.md), so the signal lands in the chosen phase on any machine. The
run must then exit 1 saying it was interrupted, publish nothing, leave no temporary
directory, and not go on to the phases after the one it was stopped in (each phase checks
the stop request while it works, not only at its end).

The capture is the 1-core tiny synth capture with its system files and trace.json;
NXPROF_FRAMEWORK_SORT_BYTES of 4 KiB makes the framework events go through the external
merge sort. Every wait below is a hang guard (HANG_GUARD_S), never a speed threshold.
"""
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import BIN, nx

HANG_GUARD_S = 60

# phase -> phases that must not be entered once the run is stopped in it
PHASES = {
    "discover": {"program", "system", "device", "publish"},
    "program": {"system", "device", "publish"},
    "system": {"framework-sort", "publish"},
    "chrome": {"framework-sort", "system-events", "publish"},
    "framework-sort": {"system-events", "publish"},
    "system-events": {"publish"},
    "device": {"publish"},
    "device-tables": {"publish"},
    "publish": set(),
}


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    cap = tmp_path_factory.mktemp("cap") / "cap"
    nx("synth", "--preset", "tiny", "--cores", "1", "--seed", "5", "--out", str(cap))
    assert list(cap.rglob("trace.json")), "the tiny capture should hold a trace.json"
    return cap


def marks(path):
    return path.read_text().split() if path.exists() else []


def stop_in_phase(capture, tmp_path, phase, sig):
    """Runs process until it waits at `phase`, sends sig; (exit code, stderr, phases entered)."""
    out_parent = tmp_path / "out"
    out_parent.mkdir()
    phase_file = tmp_path / "phases"
    env = dict(os.environ, NXPROF_TEST_PHASE_FILE=str(phase_file), NXPROF_TEST_PHASE_WAIT=phase,
               NXPROF_FRAMEWORK_SORT_BYTES="4096")
    p = subprocess.Popen([str(BIN), "process", str(capture), "--output-file", str(out_parent / "prof")],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while phase not in marks(phase_file):
            assert p.poll() is None, f"process exited ({p.returncode}) before phase {phase}: {p.stderr.read()}"
            assert time.monotonic() < deadline, f"hang guard: phase {phase} never reached"
            time.sleep(0.01)
        p.send_signal(sig)
        _, err = p.communicate(timeout=HANG_GUARD_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert os.listdir(out_parent) == [], f"stopped in {phase}: left {os.listdir(out_parent)}"
    return p.returncode, err, marks(phase_file)


@pytest.mark.parametrize("phase", list(PHASES))
def test_sigterm_stops_every_phase(capture, tmp_path, phase):
    rc, err, entered = stop_in_phase(capture, tmp_path, phase, signal.SIGTERM)
    assert rc == 1, err
    assert f"interrupted by signal {int(signal.SIGTERM)}; nothing was published" in err
    after = PHASES[phase] & set(entered[entered.index(phase) + 1:])
    assert not after, f"stopped in {phase}, it still entered {sorted(after)} (phases: {entered})"


def test_sigint_stops_the_device_pipeline(capture, tmp_path):
    rc, err, entered = stop_in_phase(capture, tmp_path, "device", signal.SIGINT)
    assert rc == 1, err
    assert f"interrupted by signal {int(signal.SIGINT)}; nothing was published" in err
    assert "publish" not in entered


def test_a_run_not_stopped_publishes(capture, tmp_path):
    """The hook alone changes nothing: every phase is entered once and the profile is published."""
    phase_file = tmp_path / "phases"
    env = dict(os.environ, NXPROF_TEST_PHASE_FILE=str(phase_file), NXPROF_FRAMEWORK_SORT_BYTES="4096")
    r = subprocess.run([str(BIN), "process", str(capture), "--output-file", str(tmp_path / "prof")],
                       env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert r.returncode == 0, r.stderr
    assert sorted(marks(phase_file)) == sorted(PHASES)
    assert (tmp_path / "prof" / "SystemProfileEvents.parquet").is_file()


def make_fifo(path):
    os.mkfifo(path)


def make_dir(path):
    os.mkdir(path)


def make_socket(path):
    s = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(path.parent)   # bound by its relative name: the full path exceeds sun_path
    try:
        s.bind(path.name)
    finally:
        os.chdir(here)
    return s   # kept open by the caller until the run ends


@pytest.mark.parametrize("make,kind", [(make_fifo, "a FIFO"), (make_dir, "a directory"),
                                       (make_socket, "a socket")])
def test_trace_json_that_is_not_a_file_is_refused_at_once(tmp_path, make, kind):
    """A session's trace.json that is a FIFO (no writer: open() without O_NONBLOCK would wait
    forever), a directory or a socket: exit 1 naming the file, nothing written."""
    cap = tmp_path / "cap"
    nx("synth", "--preset", "tiny", "--cores", "1", "--seed", "5", "--out", str(cap))
    (trace,) = cap.rglob("trace.json")
    trace.unlink()
    keep = make(trace)
    try:
        r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(tmp_path / "prof")],
                           capture_output=True, text=True, timeout=HANG_GUARD_S)
    finally:
        if keep:
            keep.close()
    assert r.returncode == 1, r.stderr
    assert f"{trace}: not a regular file ({kind})" in r.stderr
    assert not (tmp_path / "prof").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["cap"]


def test_device_trace_that_is_a_fifo_is_refused(tmp_path):
    cap = tmp_path / "cap"
    nx("synth", "--preset", "tiny", "--cores", "1", "--no-system", "--seed", "5", "--out", str(cap))
    (trace,) = cap.rglob("*.nxtrace")
    trace.unlink()
    os.mkfifo(trace)
    r = subprocess.run([str(BIN), "process", str(cap), "--output-file", str(tmp_path / "prof")],
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert r.returncode == 1, r.stderr
    assert f"{trace}: not a regular file (a FIFO)" in r.stderr
