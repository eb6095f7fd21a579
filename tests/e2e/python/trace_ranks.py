"""The rank of a framework trace file, worked out from its JSON and its name alone, as
docs/processing.md ("Ranks") states the rule: the top-level distributedInfo.rank when it is
a non-negative integer, else a base name holding "rank" (not after a letter), an optional
'-' or '_', then digits; else None. Used by the tests to expect SystemProfileEvents'
worker_gid and the "r<rank>:" prefix of flow ids without asking nxprof."""
import re
from pathlib import Path

_NAME = re.compile(r"(?<![A-Za-z])rank[-_]?(\d{1,18})")


def rank_from_name(path):
    m = _NAME.search(Path(path).name)
    return int(m.group(1)) if m else None


def trace_rank(path, doc):
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        return rank
    return rank_from_name(path)


def scoped(flow, rank):
    """A flow id as nxprof writes it for a file of that rank."""
    return flow if rank is None else f"r{rank}:{flow}"
