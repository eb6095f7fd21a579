"""The soak and load script (bench/soak/soak.py) in a short run: 20 s of mixed random
requests on a 300k-record profile while it is re-processed under the server. Every
request gets its expected status, every baseline answer stays the same, each
re-processing run succeeds and the server stays up (the script's own checks, read back
from its JSON report here). The 10-minute run on 10M records is a benchmark
(docs/benchmarks.md "serve under load"), not a test; RSS is only sampled here (20 s is
too short to judge levelling off).
"""
import json
import subprocess
import sys

from conftest import BIN, ROOT


def test_short_soak(tmp_path):
    report = tmp_path / "soak.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "soak" / "soak.py"), "--bin", str(BIN),
                        "--events", "300k", "--seconds", "20", "--rss-every", "2", "--clients", "3",
                        "--rss-slack", "100", "--work", str(tmp_path / "work"), "--json", str(report)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    got = json.loads(report.read_text())
    assert got["errors"] == [], got["errors"][:10]
    assert got["requests"] > 500, got["requests"]
    assert len(got["reprocess_runs"]) >= 2, "the profile was re-processed under the server"
    kinds = got["per_kind"]
    for k in ("timeline", "event", "baseline", "malformed", "export_sampled", "usage"):
        assert kinds.get(k, {}).get("requests", 0) > 0, f"no {k} request was sent"
    assert len(got["rss"]) >= 5
