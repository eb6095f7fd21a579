"""What a run may delete (docs/architecture.md, "Output layout"; src/profile/profile_manifest.h).

  a. A capture inside the output directory (the capture moved into a profile it produced)
     or an output directory inside the capture is refused before any work, exit 1, with a
     message naming both; the capture's files are byte-identical afterwards and nothing new
     is created.
  b. A user's file (NOTES.md) or folder (notebooks/) inside a profile nxprof wrote, in the
     system profile or in a device profile, with --output-file and with --data-path, makes
     the run refuse with exit 1 naming that entry; every file of the set is untouched.
  c. A published profile's marker lists exactly the files and sub-profiles in it (checked
     against a walk of the directory), and re-processing over such a profile, over one with
     a timeline index its manifest does not list (added later by `nxprof index`), or over
     one whose marker is an older nxprof's line, replaces it.
  d. In a data path, a name of the set that is a link of the user's, or a set's `current`
     that is not a link to one of its generations, is refused naming it, nothing touched;
     with the set's own links back, the next run publishes.
"""
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from conftest import nx

MARKER = ".nxprof-profile"


def tree_hash(directory):
    """{relative path: sha256, 'dir' or the link's text} of everything under directory,
    hidden entries included (links are not followed)."""
    directory = Path(directory)
    out = {}
    for root, dirs, files in os.walk(directory):
        for name in files + dirs:
            p = Path(root) / name
            rel = str(p.relative_to(directory))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif name in files:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel + "/"] = "dir"
    return out


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    cap = tmp_path_factory.mktemp("own") / "cap"
    nx("synth", "--out", cap, "--preset", "tiny")
    return cap


def test_capture_inside_the_output_is_refused(tmp_path, capture):
    prof = tmp_path / "prof"
    nx("process", capture, "--output-file", prof)
    moved = prof / "cap"
    shutil.copytree(capture, moved)
    before = tree_hash(prof)
    r = nx("process", moved, "--output-file", prof, check=False)
    assert r.returncode == 1, r.stderr
    assert str(prof) in r.stderr and str(moved) in r.stderr and "inside" in r.stderr, r.stderr
    assert tree_hash(prof) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prof"]


def test_output_inside_the_capture_is_refused(tmp_path, capture):
    cap = tmp_path / "cap"
    shutil.copytree(capture, cap)
    before = tree_hash(cap)
    for out in (["--output-file", cap / "out"], ["--data-path", cap, "--display-name", "n"]):
        r = nx("process", cap, *out, check=False)
        assert r.returncode == 1, r.stderr
        assert str(cap) in r.stderr and "inside the capture" in r.stderr, r.stderr
        assert tree_hash(cap) == before


def layouts(tmp_path, capture):
    """(name, output args, system profile dir, a device profile dir) per layout, processed once."""
    out = tmp_path / "out" / "prof"
    dp = tmp_path / "dp"
    nx("process", capture, "--output-file", out)
    nx("process", capture, "--data-path", dp, "--display-name", "n")
    glob = dp / "profiles" / "global"
    return [("output-file", ["--output-file", out], out, out / "devices" / "prof-nd0-nc0", out.parent),
            ("data-path", ["--data-path", dp, "--display-name", "n"], glob / "n@latest",
             glob / "n-nd0-nc1@latest", dp)]


def test_user_files_in_a_profile_are_refused(tmp_path, capture):
    for name, args, system, device, root in layouts(tmp_path, capture):
        for where, entry in ((system, "NOTES.md"), (device, "notebooks")):
            path = where / entry
            if entry == "notebooks":
                path.mkdir()
                (path / "a.ipynb").write_text("{}\n")
            else:
                path.write_text("my notes\n")
            before = tree_hash(root)
            r = nx("process", capture, *args, check=False)
            assert r.returncode == 1, (name, entry, r.stderr)
            assert "refusing to replace" in r.stderr and entry in r.stderr, (name, entry, r.stderr)
            assert tree_hash(root) == before, (name, entry)
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def listed(profile):
    """The manifest's entries of a profile: {kind letter: set of relative paths}."""
    lines = (Path(profile) / MARKER).read_text().splitlines()
    assert lines[0] == "nxprof-profile manifest 1", lines[:1]
    out = {"f": set(), "d": set(), "p": set()}
    for line in lines[1:]:
        out[line[0]].add(line[2:])
    return out


def walked(profile):
    """What a profile holds, by a walk: files, plain folders and sub-profiles (folders with a
    marker, not descended into)."""
    out = {"f": set(), "d": set(), "p": set()}
    for root, dirs, files in os.walk(profile):
        rel = Path(root).relative_to(profile)
        for d in list(dirs):
            if (Path(root) / d / MARKER).exists():
                out["p"].add(str(rel / d))
                dirs.remove(d)
            else:
                out["d"].add(str(rel / d))
        out["f"] |= {str(rel / f) for f in files if not (rel == Path(".") and f == MARKER)}
    return out


def test_the_marker_lists_what_the_profile_holds_and_re_processing_replaces(tmp_path, capture):
    for name, args, system, device, root in layouts(tmp_path, capture):
        for profile in (system, device):
            want = walked(profile)
            assert want["f"], (name, profile)
            assert listed(profile) == want, (name, profile)
        nx("process", capture, *args)
        assert listed(system) == walked(system), name
        # A timeline index added after the profile was written (`nxprof index`) is not
        # in the manifest, and is nxprof's all the same.
        manifest = (device / MARKER).read_text().splitlines()
        (device / MARKER).write_text("\n".join(l for l in manifest if l != "f .Instruction.nxtl") + "\n")
        nx("process", capture, *args)
        assert listed(device) == walked(device), name
        # A marker of an older nxprof (one line, no manifest): the legacy rule replaces it.
        (system / MARKER).write_text("a profile written by nxprof: nxprof may replace this directory\n")
        nx("process", capture, *args)
        assert listed(system) == walked(system), name


def test_links_that_are_not_the_sets_are_refused(tmp_path, capture):
    dp = tmp_path / "dp"
    args = ["--data-path", dp, "--display-name", "n"]
    nx("process", capture, *args)
    glob = dp / "profiles" / "global"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine\n")
    # A name of the set that is a link of the user's; then the set's `current` replaced.
    link = glob / "n-nd0-nc1@latest"
    link.unlink()
    link.symlink_to(mine, target_is_directory=True)
    before = tree_hash(tmp_path)
    r = nx("process", capture, *args, check=False)
    assert r.returncode == 1 and str(link) in r.stderr and "symbolic link" in r.stderr, r.stderr
    assert tree_hash(tmp_path) == before
    link.unlink()
    current = glob / ".n.nxprof-set" / "current"
    target = os.readlink(current)
    current.unlink()
    current.symlink_to(mine, target_is_directory=True)
    before = tree_hash(tmp_path)
    r = nx("process", capture, *args, check=False)
    assert r.returncode == 1 and str(current) in r.stderr, r.stderr
    assert tree_hash(tmp_path) == before
    current.unlink()
    current.symlink_to(target)
    nx("process", capture, *args)
    assert names(glob) == ["n-nd0-nc0@latest", "n-nd0-nc1@latest", "n@latest"]


def names(glob):
    return sorted(p.name for p in glob.iterdir() if not p.name.startswith("."))
