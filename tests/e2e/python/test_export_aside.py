"""export-csv writes each CSV aside and renames it into place (src/cli/cmd_export_csv.c,
docs/query.md): an export that fails for want of space (the file size limit RLIMIT_FSIZE,
with SIGXFSZ ignored so write fails with EFBIG, standing in for a full disk) exits 1 and
leaves no CSV (complete or partial) and no temporary file; over a previous export it leaves
the previous files byte-identical. The limit is set from the size of the same export made
without it in the same run, so the failure happens midway through the first file.
"""
import resource
import signal
import subprocess

import pytest

from conftest import BIN, nx


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    root = tmp_path_factory.mktemp("aside")
    cap = root / "cap"
    nx("synth", "--out", cap, "--preset", "tiny")
    prof = root / "prof"
    nx("process", cap, "--output-file", prof / "x")
    return prof / "x" / "devices" / "x-nd0-nc0"


def export(profile, out, limit=None):
    def cap_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    args = [str(BIN), "export-csv", str(profile), "--start", "0", "--end", str(2**62), "--no-sample",
            "--tables", "Instruction", "--out", str(out)]
    return subprocess.run(args, capture_output=True, text=True, preexec_fn=cap_size if limit else None)


def snapshot(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_a_failed_export_leaves_no_csv(tmp_path, profile):
    full = tmp_path / "full"
    r = export(profile, full)
    assert r.returncode == 0, r.stderr
    size = (full / "Instruction.csv").stat().st_size
    assert size > 8192, size
    limit = size // 2

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    r = export(profile, fresh, limit)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Instruction" in r.stderr, r.stderr
    assert list(fresh.iterdir()) == []

    before = snapshot(full)
    r = export(profile, full, limit)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert snapshot(full) == before
