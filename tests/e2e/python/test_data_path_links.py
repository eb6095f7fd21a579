"""Symbolic links in a data path (src/profile/data_path.h nx_dir_real_inside; docs/api.md,
docs/architecture.md "Output layout"): a profile or a device profile may be reached through
links only while its real path stays inside the data path's profiles/global.

  a. A profile `evil@latest` linking to a profile outside the data path is not listed by
     /api/profiles and answers 404; a system profile whose `devices/<name>` links outside
     lists that device profile as not existing, its /devices/<name> URL answers 404, and
     neither /api/profiles/<s>/summary nor `nxprof summary --format json` serve the outside
     profile's values (the outside one is a different capture, so its Summary values
     differ from those of the inside one it replaced).
  b. A profile whose public name links to a hidden folder inside profiles/global is listed
     and served, and the system profile's summary serves its values (the sibling lookup
     follows the link), equal to those read from its Summary.parquet with pyarrow.
"""
import json
import shutil

import pyarrow.parquet as pq
import pytest

from conftest import http_get_json as get, nx, serving


def total_time(profile):
    return pq.read_table(profile / "Summary.parquet").column("total_time").to_pylist()[0]


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    root = tmp_path_factory.mktemp("links")
    inside, outside = root / "cap-in", root / "cap-out"
    nx("synth", "--out", inside, "--preset", "tiny", "--seed", "1")
    nx("synth", "--out", outside, "--preset", "tiny", "--seed", "7")
    dp = root / "dp"
    glob = dp / "profiles" / "global"
    nx("process", inside, "--data-path", dp, "--display-name", "n")
    nx("process", inside, "--output-file", root / "s")   # a system profile with devices/s-nd*
    (root / "s").rename(glob / "s@latest")
    out = root / "outside" / "x"
    nx("process", outside, "--output-file", out)
    return dp, glob, out


def test_links_out_of_the_data_path_are_neither_listed_nor_read(layout):
    dp, glob, out = layout
    outside_dev = out / "devices" / "x-nd0-nc0"
    inside_dev = glob / "s@latest" / "devices" / "s-nd0-nc0"
    assert total_time(outside_dev) != total_time(inside_dev)
    (glob / "evil@latest").symlink_to(outside_dev, target_is_directory=True)
    shutil.rmtree(inside_dev)
    inside_dev.symlink_to(outside_dev, target_is_directory=True)
    with serving(dp) as (port, _):
        status, listing = get(port, "/api/profiles")
        assert status == 200, listing
        names = [p["name"] for p in listing["profiles"]]
        assert "evil" not in names and "s" in names, names
        s = next(p for p in listing["profiles"] if p["name"] == "s")
        dev = next(d for d in s["device_profiles"] if d["name"] == "s-nd0-nc0")
        assert dev["exists"] is False and dev["open"] is None, dev
        assert get(port, "/api/profiles/evil/summary")[0] == 404
        assert get(port, "/api/profiles/s/devices/s-nd0-nc0/summary")[0] == 404
        status, summary = get(port, "/api/profiles/s/summary")
        assert status == 200, summary
        dev = next(d for d in summary["device_profiles"] if d["name"] == "s-nd0-nc0")
        assert dev["total_time_s"] is None and dev["error"], dev
    r = nx("summary", glob / "s@latest", "--format", "json")
    dev = next(d for d in json.loads(r.stdout)["device_profiles"] if d["name"] == "s-nd0-nc0")
    assert dev["total_time_s"] is None and dev["error"], dev


def test_links_inside_the_data_path_are_followed(layout):
    dp, glob, _ = layout
    public, hidden = glob / "n-nd0-nc1@latest", glob / ".store" / "n-nd0-nc1@latest"
    shutil.copytree(public.resolve(), hidden)
    public.unlink() if public.is_symlink() else shutil.rmtree(public)
    public.symlink_to(".store/n-nd0-nc1@latest", target_is_directory=True)
    want = total_time(hidden)
    with serving(dp) as (port, _):
        status, listing = get(port, "/api/profiles")
        assert status == 200, listing
        assert "n-nd0-nc1" in [p["name"] for p in listing["profiles"]], listing
        assert get(port, "/api/profiles/n-nd0-nc1/summary")[0] == 200
        status, summary = get(port, "/api/profiles/n/summary")
        assert status == 200, summary
        dev = next(d for d in summary["device_profiles"] if d["name"] == "n-nd0-nc1")
        assert dev["error"] is None and dev["total_time_s"] == pytest.approx(want), (dev, want)
