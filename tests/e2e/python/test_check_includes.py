"""tools/check_includes.py (the CTest test build.includes) on small trees written here: a
clean tree passes; a cycle between two modules, a three-module cycle through a sub-folder,
and a private header of another folder each fail, naming what is at fault; a module's own
.c, .h and _internal.h are one module, so they never form a cycle among themselves."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CHECK = ROOT / "tools" / "check_includes.py"


def write_tree(root, files):
    for name, includes in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(f'#include "{h}"\n' for h in includes))


def check(root):
    r = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)
    return r.returncode, r.stderr


CLEAN = {
    "util/a.h": [], "util/a.c": ["util/a.h"],
    "query/b.h": ["util/a.h"], "query/b.c": ["query/b.h", "query/b_internal.h"],
    "query/b_internal.h": ["query/b.h"],
    "query/engine/c.h": ["query/b.h"], "query/engine/c.c": ["c.h", "stdio_like_generated.h"],
}


def test_a_clean_tree_passes(tmp_path):
    write_tree(tmp_path, CLEAN)
    assert check(tmp_path) == (0, "")


def test_a_two_module_cycle_fails_naming_both(tmp_path):
    # a.c counts as module a: a.c including d.h while d.h includes a.h is a cycle
    write_tree(tmp_path, {**CLEAN, "util/a.c": ["util/a.h", "util/d.h"], "util/d.h": ["util/a.h"]})
    rc, err = check(tmp_path)
    assert rc == 1
    assert "include cycle between modules: util/a <-> util/d" in err


def test_a_cycle_through_a_sub_folder_fails(tmp_path):
    write_tree(tmp_path, {**CLEAN, "query/b.c": ["query/b.h", "query/engine/c.h"], "query/engine/c.h": ["query/x.h"],
                          "query/x.h": ["query/b.h"]})
    rc, err = check(tmp_path)
    assert rc == 1
    assert "query/b <-> query/engine/c <-> query/x" in err


def test_another_folders_private_header_fails(tmp_path):
    write_tree(tmp_path, {**CLEAN, "util/a.c": ["util/a.h", "query/b_internal.h"]})
    rc, err = check(tmp_path)
    assert rc == 1
    assert "util/a.c: includes query/b_internal.h, a private header of another folder" in err


def test_an_empty_tree_is_an_error(tmp_path):
    rc, err = check(tmp_path)
    assert rc == 1 and "no .c or .h files found" in err
