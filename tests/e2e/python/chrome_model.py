"""What a Chrome trace's elements become, worked out from the raw JSON by the documented
rules (docs/processing.md, "SystemProfileEvents" and "Framework traces: what becomes of
each element"), independently of nxprof, for the tests that compare its rows with them.

model(elements, base) reads the elements of traceEvents (parsed with parse_float=Decimal)
and gives a Model:
  rows      one dict per SystemProfileEvents row: pos (the element's index; a pair's, its
            begin's), ph (None for a slice: X or a B/E pair), name, start, end (ns, base
            added), thread (the track: (pid, tid) as nxprof keys them, or ("async", pid,
            cat, name) for an async track), thread_name (an async row's track name),
            flow (the flow_id list, or None), event (the raw element; a pair's begin);
  kept      Counter by kind as `process` prints it: X, B/E and b/e (two events per pair),
            i, C, n, s/t/f, other;
  names     M events kept as names;  unnamed  M events that give none (Not Stored);
  skipped   indexes of elements that are not events;  warned  events dropped with a Warning.
Rules: an element is skipped when it is not an object, has no one-character "ph" or, other
than M, no "ts" that is a number or a string holding one. B/E pair per (pid, tid) as a
stack, async b/e per (pid, cat, id), each E (e) closing the latest open B (b); an E (e)
without one, a B (b) never closed, and a pair whose end is earlier than its begin are
warned about, as is an X with a negative dur. An n joins the track of its id's open b, else
its own name's. A counter with an id is named "<name> <id>".
"""
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?\Z")
_INT64 = re.compile(r"[-+]?\d{1,19}\Z")
# Metadata events kept as names: event name -> (args member, its JSON type).
NAMES = {"process_name": ("name", str), "process_labels": ("labels", str), "thread_name": ("name", str),
         "process_sort_index": ("sort_index", (int, Decimal)), "thread_sort_index": ("sort_index", (int, Decimal))}
KIND = {"X": "X", "B": "B/E", "b": "b/e", "i": "i", "I": "i", "C": "C", "n": "n", "s": "s/t/f", "t": "s/t/f",
        "f": "s/t/f"}


def us_to_ns(v):
    """Microseconds (an exact Decimal or int) to ns, halves away from zero."""
    d = Decimal(v) * 1000
    return int(d.copy_abs().quantize(Decimal(1), rounding=ROUND_HALF_UP)) * (-1 if d < 0 else 1)


def time_of(v):
    """A ts/dur as µs: a number, or a string holding a JSON number; else None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, Decimal)):
        return Decimal(v)
    if isinstance(v, str) and NUMBER.match(v):
        return Decimal(v)
    return None


def thread_id(v):
    """A pid/tid as nxprof keys it: a number, a decimal string as that number, any other
    string by itself (nxprof hashes it; equal strings give equal ids), absent: 0."""
    if v is None:
        return 0
    if isinstance(v, str):
        return int(v) if _INT64.match(v) and -2**63 < int(v) < 2**63 - 1 else ("str", v)
    return int(v)


def id_text(v):
    """An id or bind_id as text: a number's digits, a string as written; None when absent."""
    return None if v is None else v if isinstance(v, str) else str(v)


def arg_text(args, key):
    """The text nxprof takes for args[key]: a string's content, a number's or boolean's
    JSON text; None when absent, null, an object or an array."""
    v = args.get(key) if isinstance(args, dict) else None
    if v is None or isinstance(v, (dict, list)):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def flow_of(e, ph):
    """A row's flow_id list: a slice's [args.flow_id or args.correlation] then
    "<cat>:<bind_id>"; a flow event's ["<cat>:<id>"]; else None."""
    cat = e.get("cat") or ""
    if ph in "sft":
        i = id_text(e.get("id"))
        return None if i is None else [f"{cat}:{i}"]
    if ph not in "XB":
        return None
    args = e.get("args")
    v = arg_text(args, "flow_id")
    v = v if v is not None else arg_text(args, "correlation")
    keys = [] if v is None else [v]
    if e.get("bind_id") is not None:
        keys.append(f"{cat}:{id_text(e['bind_id'])}")
    return keys or None


@dataclass
class Model:
    rows: list = field(default_factory=list)
    kept: Counter = field(default_factory=Counter)
    names: int = 0
    unnamed: int = 0
    skipped: list = field(default_factory=list)
    warned: int = 0


def _is_name(e):
    if e.get("name") not in NAMES:
        return False
    member, kind = NAMES[e["name"]]
    v = (e.get("args") or {}).get(member)
    return isinstance(v, kind) and not isinstance(v, bool)


def _close(m, stack, ts):
    """An E or e closing the latest open begin of its stack."""
    if not stack:
        m.warned += 1
        return
    row = stack.pop()
    if ts < row["start"]:
        m.warned += 2
        row["dropped"] = True
    else:
        row["end"] = ts


def model(elements, base=0):
    m = Model()
    stacks, astacks = defaultdict(list), defaultdict(list)
    for i, e in enumerate(elements):
        ph = e.get("ph") if isinstance(e, dict) else None
        if not isinstance(ph, str) or len(ph) != 1 or (ph != "M" and time_of(e.get("ts")) is None):
            m.skipped.append(i)
            continue
        if ph == "M":
            m.names += _is_name(e)
            m.unnamed += not _is_name(e)
            continue
        ts = us_to_ns(time_of(e["ts"])) + base
        pid, tid = thread_id(e.get("pid")), thread_id(e.get("tid"))
        cat, name = e.get("cat") or "", e.get("name") or ""
        akey = (pid, cat, id_text(e.get("id")) or "")
        if ph in "Ee":
            _close(m, stacks[(pid, tid)] if ph == "E" else astacks[akey], ts)
            continue
        end = ts
        if ph == "X":
            dur = us_to_ns(time_of(e.get("dur", 0)))
            if dur < 0:
                m.warned += 1
                continue
            end = ts + dur
        row = dict(pos=i, ph=None if ph in "XB" else ph, name=name, start=ts, end=end, thread=(pid, tid),
                   thread_name=None, flow=flow_of(e, ph), event=e, kind=KIND.get(ph, "other"))
        if ph == "C" and e.get("id") is not None:
            row["name"] = f"{name} {id_text(e['id'])}"
        if ph in "bn":
            row["thread"], row["thread_name"] = ("async", pid, cat, name), name
            if ph == "n" and astacks[akey]:
                row["thread"], row["thread_name"] = astacks[akey][-1]["thread"], astacks[akey][-1]["name"]
        if ph == "B":
            stacks[(pid, tid)].append(row)
        if ph == "b":
            astacks[akey].append(row)
        m.rows.append(row)
    open_rows = {id(r) for s in list(stacks.values()) + list(astacks.values()) for r in s}
    m.warned += len(open_rows)
    m.rows = [r for r in m.rows if id(r) not in open_rows and not r.get("dropped")]
    for r in m.rows:
        m.kept[r["kind"]] += 2 if r["kind"] in ("B/E", "b/e") else 1
    return m
