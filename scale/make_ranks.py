#!/usr/bin/env python3
"""Write an N-rank set of PyTorch traces from the two ranks of a real DDP run, for trying the
Spark job (nxprof_spark.py) and for its test: rank r is a copy of ddp_rank<r % 2>.json.gz
with distributedInfo.rank = r and world_size = N, and its times moved and stretched so that
the ranks differ in a known way:

    t' = (t - T0) * k_r + shift_r       (every ts; every dur is multiplied by k_r)
    k_r = 1 + 0.002 r, shift_r = 40 r µs; the straggler rank (default 5) gets
    k = 1.06 and 2500 µs more, so it starts every step and every collective last.

T0 is the first whole µs of the sources; it moves into baseTimeNanoseconds, so the ts written
are small and keep exactly three decimals (whole ns). The output is deterministic: the same
arguments give the same bytes.

    make_ranks.py --sources tests/data/real-gpu --out /tmp/ranks [--ranks 8] [--straggler 5]
"""
import argparse
import gzip
import json
import sys
from decimal import Decimal
from pathlib import Path

NS = Decimal("0.001")


def load(path):
    with gzip.open(path, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)


def factors(rank, straggler):
    """(stretch, shift in µs) of a rank."""
    if rank == straggler:
        return Decimal("1.06"), Decimal(40 * rank + 2500)
    return 1 + Decimal("0.002") * rank, Decimal(40 * rank)


def moved(doc, rank, ranks, t0, straggler):
    """A copy of doc as rank `rank` of `ranks`, its times moved (the rule above)."""
    k, shift = factors(rank, straggler)
    out = dict(doc)
    out["baseTimeNanoseconds"] = int(doc.get("baseTimeNanoseconds", 0)) + t0 * 1000
    info = dict(doc.get("distributedInfo") or {})
    info.update(rank=rank, world_size=ranks)
    out["distributedInfo"] = info
    events = []
    for e in doc["traceEvents"]:
        if isinstance(e, dict) and "ts" in e:
            e = dict(e)
            e["ts"] = float(((Decimal(e["ts"]) - t0) * k + shift).quantize(NS))
            if "dur" in e:
                e["dur"] = float((Decimal(e["dur"]) * k).quantize(NS))
        events.append(e)
    out["traceEvents"] = events
    return out


def plain(value):
    """JSON-ready: the Decimals json.loads made are numbers again."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def make(sources, out, ranks=8, straggler=5):
    """Write out/rank-<r>.json.gz for r in 0..ranks-1; return their paths."""
    docs = [load(Path(sources) / f"ddp_rank{i}.json.gz") for i in (0, 1)]
    t0 = int(min(Decimal(e["ts"]) for d in docs for e in d["traceEvents"]
                 if isinstance(e, dict) and "ts" in e))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(ranks):
        text = json.dumps(plain(moved(docs[r % 2], r, ranks, t0, straggler)), separators=(",", ":"))
        path = out / f"rank-{r}.json.gz"
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text.encode())
        paths.append(path)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", required=True, help="folder holding ddp_rank0/1.json.gz")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--straggler", type=int, default=5)
    a = ap.parse_args(argv)
    for p in make(a.sources, a.out, a.ranks, a.straggler):
        print(p)


if __name__ == "__main__":
    sys.exit(main())
