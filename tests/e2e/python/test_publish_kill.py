"""A run's set of profiles is published as a whole (docs/architecture.md, "Output layout";
src/profile/profile_set.h, profile_output.h). The test hook NXPROF_TEST_KILL_AT=<step>
raises SIGKILL at that step of the publish (profile_output.h nx_publish_step), so every
step is hit deterministically:

  - --data-path: steps built, linked, switched, migrated, pruned, unlinked; --output-file:
    built, swapped, pruned. The previous set is capture A (3 cores), the new one capture B
    (2 cores, so one device profile name leaves the set).
  - After the kill, the set as readers see it is exactly the complete previous set or the
    complete new one: every public name (a dangling link is no profile) and every file
    reached through it byte-identical (sha256), the rows pandas reads through the glob
    <root>/*@latest/Instruction.parquet, `nxprof summary --format json` of the system
    profile, `nxprof top --format csv` of each device profile, and `nxprof serve`'s listing. Expected views come from runs without a kill.
  - The next run (no kill) publishes the new set, and leaves nothing else: the data path
    holds the set's names and its one hidden set folder with `current` and one generation;
    --output-file's parent holds the profile alone.
  - Migration from one directory per name: a previous set in that layout, killed at each
    step, shows each name either at its previous profile or at its new one (each complete;
    the documented non-atomic first migration), and the next run completes it: every name
    of the new set is its new profile; a name only the previous set had stays untouched.
"""
import hashlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import BIN, free_port, nx

DATA_PATH_STEPS = ["built", "linked", "switched", "migrated", "pruned", "unlinked"]
OUTPUT_FILE_STEPS = ["built", "swapped", "pruned"]


def tree_hash(directory):
    out = {}
    for root, dirs, files in os.walk(directory):
        for f in files:
            p = Path(root) / f
            out[str(p.relative_to(directory))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def names_of(glob):
    """The public profile names a reader sees: entries that lead to a directory."""
    return sorted(n for n in os.listdir(glob) if not n.startswith(".") and (glob / n).is_dir())


def served(data_path):
    """`nxprof serve`'s listing: sorted (name, kind)."""
    port = free_port()
    p = subprocess.Popen([str(BIN), "serve", "--data-path", str(data_path), "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                c.request("GET", "/api/profiles")
                body = json.loads(c.getresponse().read())
                c.close()
                return sorted((x["name"], x["kind"]) for x in body["profiles"])
            except OSError:
                time.sleep(0.05)
        pytest.fail("the server did not answer")
    finally:
        p.terminate()
        p.wait(timeout=10)


def summary(system_dir):
    s = json.loads(nx("summary", system_dir, "--format", "json").stdout)
    s.pop("profile", None)
    for d in s.get("device_profiles") or []:
        d.pop("dir", None)
    return s


def data_path_view(dp):
    glob = dp / "profiles" / "global"
    names = names_of(glob)
    files = sorted(glob.glob("*@latest/Instruction.parquet"))
    rows = sum(len(pd.read_parquet(f)) for f in files)
    return {"names": names, "trees": {n: tree_hash(glob / n) for n in names},
            "pandas": ([f.parent.name for f in files], rows),
            "summary": summary(glob / "n@latest") if "n@latest" in names else None,
            "top": {n: nx("top", glob / n, "--format", "csv").stdout for n in names if n != "n@latest"},
            "served": served(dp)}


def output_view(out):
    return {"tree": tree_hash(out), "summary": summary(out)}


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill")
    a, b = root / "cap-a", root / "cap-b"
    nx("synth", "--out", a, "--preset", "tiny", "--cores", "3", "--seed", "1")
    nx("synth", "--out", b, "--preset", "tiny", "--cores", "2", "--seed", "2")
    return root, a, b


def killed(capture, args, step):
    env = dict(os.environ, NXPROF_TEST_KILL_AT=step)
    r = subprocess.run([str(BIN), "process", str(capture), *map(str, args)], env=env, capture_output=True, text=True)
    assert r.returncode == -signal.SIGKILL, (step, r.returncode, r.stderr)


@pytest.fixture(scope="module")
def data_path_views(captures):
    root, a, b = captures
    views = {}
    for which, cap in (("previous", a), ("new", b)):
        dp = root / f"view-{which}"
        nx("process", cap, "--data-path", dp, "--display-name", "n")
        views[which] = data_path_view(dp)
    assert views["previous"]["names"] != views["new"]["names"]
    return views


def test_data_path_kill_at_every_step(captures, data_path_views, tmp_path):
    _, a, b = captures
    for step in DATA_PATH_STEPS:
        dp = tmp_path / step
        args = ["--data-path", dp, "--display-name", "n"]
        nx("process", a, *args)
        killed(b, args, step)
        got = data_path_view(dp)
        assert got in (data_path_views["previous"], data_path_views["new"]), step
        nx("process", b, *args)
        assert data_path_view(dp) == data_path_views["new"], step
        glob = dp / "profiles" / "global"
        assert sorted(os.listdir(glob)) == sorted([*data_path_views["new"]["names"], ".n.nxprof-set"]), step
        left = sorted(os.listdir(glob / ".n.nxprof-set"))
        assert len(left) == 2 and left[0] == "current" and left[1].startswith("g-"), (step, left)


def test_output_file_kill_at_every_step(captures, tmp_path):
    root, a, b = captures
    views = {}
    for which, cap in (("previous", a), ("new", b)):
        nx("process", cap, "--output-file", root / f"out-{which}" / "prof")
        views[which] = output_view(root / f"out-{which}" / "prof")
    for step in OUTPUT_FILE_STEPS:
        out = tmp_path / step / "prof"
        nx("process", a, "--output-file", out)
        killed(b, ["--output-file", out], step)
        assert output_view(out) in (views["previous"], views["new"]), step
        nx("process", b, "--output-file", out)
        assert output_view(out) == views["new"], step
        assert os.listdir(out.parent) == ["prof"], (step, os.listdir(out.parent))


def to_one_directory_per_name(dp):
    """Turns a data path's set into the layout of one directory per name (what an older
    nxprof wrote): each name a real directory with the older one-line marker."""
    glob = dp / "profiles" / "global"
    for name in names_of(glob):
        real = (glob / name).resolve()
        (glob / name).unlink()
        shutil.move(real, glob / name)
        (glob / name / ".nxprof-profile").write_text("a profile written by nxprof: nxprof may replace this directory\n")
        for sub in (glob / name).iterdir():
            if sub.name == "devices":
                pytest.fail("a data path's profile has no devices/ folder")
    shutil.rmtree(glob / ".n.nxprof-set")


def test_migration_kill_at_every_step(captures, data_path_views, tmp_path):
    _, a, b = captures
    prev, new = data_path_views["previous"], data_path_views["new"]
    for step in DATA_PATH_STEPS:
        dp = tmp_path / step
        args = ["--data-path", dp, "--display-name", "n"]
        nx("process", a, *args)
        to_one_directory_per_name(dp)
        killed(b, args, step)
        glob = dp / "profiles" / "global"
        for name in names_of(glob):
            tree = tree_hash(glob / name)
            tree.pop(".nxprof-profile", None)
            want = [{k: v for k, v in view["trees"][name].items() if k != ".nxprof-profile"}
                    for view in (prev, new) if name in view["trees"]]
            assert tree in want, (step, name)
        nx("process", b, *args)
        # The new set is complete; a name only the previous set had is not known to be
        # the set's (no link records it) and stays as it was.
        dropped = sorted(set(prev["names"]) - set(new["names"]))
        assert dropped and sorted(os.listdir(glob)) == sorted([*new["names"], *dropped, ".n.nxprof-set"]), step
        for name in new["names"]:
            assert tree_hash(glob / name) == new["trees"][name], (step, name)
        for name in dropped:
            tree = tree_hash(glob / name)
            tree.pop(".nxprof-profile")
            assert tree == {k: v for k, v in prev["trees"][name].items() if k != ".nxprof-profile"}, (step, name)
