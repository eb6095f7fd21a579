"""What nxprof answers about a profile, collected so that two copies of one profile (ours,
and the same tables re-written by another Parquet writer) can be compared exactly.

span_of(profile)                (first start, last end) of its Instruction table
cli_answers(profile, scratch, span)
                                top (several groupings, CSV and JSON), summary (text and
                                JSON), export-csv of the whole profile and of a window,
                                sampled and complete: {name: text or {file: bytes}}
Server(data_path)               `nxprof serve --port 0` on a data path, as a context manager;
                                .answers(name) gives a device profile's entry, tracks,
                                sampled timeline (whole and zoomed), summary and a few events;
                                .system_answers(name) a system profile's entry and its
                                usage lanes (CpuUsage, HostMemUsage, SystemProfileHbmUsage),
                                whole and zoomed
install(profile, data_path, name)
                                a profile's Parquet files and timeline indexes copied to
                                data_path's profiles/global/<name>@latest/ (what `serve` lists)
"""
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from conftest import BIN, nx, profile_files

TIMELINE_TABLES = "Instruction,DmaPacketAggregated,DmaPacket,CcInstruction,SemaphoreUpdate,CcOp"
SYSTEM_USAGE_TABLES = "CpuUsage,HostMemUsage,SystemProfileHbmUsage"


def span_of(profile):
    """(min start_ts, max end_ts) of a profile's Instruction table, read by pyarrow: the
    window every copy of the profile is asked about."""
    firsts, lasts = [], []
    for f in profile_files(profile)["Instruction"]:
        t = pq.read_table(f, columns=["start_ts", "end_ts"])
        firsts.append(pc.min(t["start_ts"]).as_py())
        lasts.append(pc.max(t["end_ts"]).as_py())
    return min(firsts), max(lasts)


def _exports(profile, scratch, label, window, extra):
    out = Path(scratch) / f"export-{label}"
    if out.exists():
        shutil.rmtree(out)
    nx("export-csv", profile, "--start", window[0], "--end", window[1], "--out", out, *extra)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def cli_answers(profile, scratch, span):
    """Every CLI answer, with the profile's own path replaced by a placeholder. span:
    (first, last) Unix ns of the original profile, so every copy is asked the same."""
    profile = str(profile)

    def run(*args):
        return nx(*args).stdout.replace(profile, "<PROFILE>")

    a = {
        "top": run("top", profile, "--format", "csv", "--limit", "0"),
        "top_text": run("top", profile),
        "top_hlo_json": run("top", profile, "--by", "hlo_name", "--limit", "0", "--format", "json"),
        "top_dma": run("top", profile, "--table", "DmaPacket", "--by", "queue_name,queue_type",
                       "--limit", "0", "--format", "csv"),
        "top_events": run("top", profile, "--table", "SemaphoreUpdate", "--by", "update_source,update_mode",
                          "--limit", "0", "--format", "csv"),
        "summary": run("summary", profile),
        "summary_json": run("summary", profile, "--format", "json"),
    }
    first, last = span
    whole = (str(first), str(last))
    window = (str(first + (last - first) // 5), str(first + (last - first) // 4))
    a["export_whole_all"] = _exports(profile, scratch, "whole-all", whole, ["--no-sample"])
    a["export_whole_sampled"] = _exports(profile, scratch, "whole-sampled", whole, ["--width", "700"])
    a["export_window_all"] = _exports(profile, scratch, "window-all", window, ["--no-sample"])
    a["export_window_sampled"] = _exports(profile, scratch, "window-sampled", window, [])
    return a


def install(profile, data_path, name):
    dest = Path(data_path) / "profiles" / "global" / f"{name}@latest"
    dest.mkdir(parents=True)
    for f in sorted([*Path(profile).glob("*.parquet"), *Path(profile).glob(".*.nxtl")]):
        shutil.copy(f, dest / f.name)
    return dest


class Server:
    def __init__(self, data_path):
        self.data_path = data_path

    def __enter__(self):
        self.proc = subprocess.Popen([str(BIN), "serve", "--data-path", str(self.data_path), "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 30   # hang guard: serve prints its URL at once
        self.base = None
        while time.time() < deadline and self.base is None:
            line = self.proc.stdout.readline()
            if not line:
                break
            if "http://" in line:
                self.base = line[line.index("http://"):].strip().rstrip("/")
        if self.base is None:
            self.proc.kill()
            raise AssertionError("nxprof serve did not print its URL")
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=30)

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=60) as r:
            return json.loads(r.read())

    def answers(self, name):
        entry = self.get(f"/api/profiles/{name}")
        entry.pop("size_bytes")  # file sizes differ from writer to writer
        entry.pop("name")
        first, last = int(entry["first_ts"]), int(entry["last_ts"])
        span = last - first
        a = {"entry": entry, "tracks": self.get(f"/api/profiles/{name}/tracks")}
        a["tracks"].pop("profile")
        a["timeline_whole"] = self.get(
            f"/api/profiles/{name}/timeline?tables={TIMELINE_TABLES}&start={first}&end={last}&width=1200")
        lo, hi = first + span // 3, first + span // 3 + span // 50
        a["timeline_zoom"] = self.get(
            f"/api/profiles/{name}/timeline?tables={TIMELINE_TABLES}&start={lo}&end={hi}&width=900")
        a["summary"] = self.get(f"/api/profiles/{name}/summary?top=20")
        a["summary"].pop("profile", None)
        for ordinal in (0, 1, 777, 5000):
            a[f"event_{ordinal}"] = self.get(f"/api/profiles/{name}/event?table=Instruction&ordinal={ordinal}")
        return a

    def system_answers(self, name):
        entry = self.get(f"/api/profiles/{name}")
        entry.pop("size_bytes")
        entry.pop("name")
        first, last = int(entry["first_ts"]), int(entry["last_ts"])
        span = last - first
        a = {"entry": entry}
        a["usage_whole"] = self.get(
            f"/api/profiles/{name}/usage?tables={SYSTEM_USAGE_TABLES}&start={first}&end={last}&width=800")
        lo, hi = first + span // 3, first + span // 3 + span // 20
        a["usage_zoom"] = self.get(
            f"/api/profiles/{name}/usage?tables={SYSTEM_USAGE_TABLES}&start={lo}&end={hi}&width=300")
        return a
