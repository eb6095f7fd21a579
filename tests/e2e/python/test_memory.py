"""GET /api/profiles/<name>/memory and the PendingDma lane of /usage (docs/api.md) against
DuckDB over the Parquet files.

A synthesized llama-layer capture as `process` writes it (SbufAllocation and PendingDma in the
device profile, HbmUsageSummaryByType in the system profile). Every expectation is computed here from the files: the window's rows by the
overlap rule, the sampler's winner per partition and pixel bucket (the longest, ties by
start, then row), each allocation's kept partitions grouped into runs of adjacent
partitions, HBM bytes summed per category.
"""

import duckdb
import pytest

from conftest import http_get_json, nx, serving

DEV = "demo-nd0-nc0"
KEY = ("start_ts", "end_ts", "start_address", "end_address", "op_source_type", "opcode", "operands",
       "queue_name", "block_id", "tensor_name", "hlo_name", "pcore_idx")


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("memory")
    nx("synth", "--preset", "llama-layer", "--events", "20000", "--seed", "7", "--out", tmp / "cap")
    nx("process", tmp / "cap", "--data-path", tmp / "data", "--display-name", "demo")
    d = (tmp / "data" / "profiles" / "global" / f"{DEV}@latest").resolve()
    return tmp / "data", d


def sbuf(d):
    return f"read_parquet('{d}/SbufAllocation*.parquet')"


def get(data, qs):
    with serving(data) as (port, _):
        return http_get_json(port, f"/api/profiles/{DEV}/memory?{qs}")


def window_rows(d, s, e):
    cols = ", ".join(KEY)
    return duckdb.sql(f"""SELECT {cols}, partition FROM read_parquet('{d}/SbufAllocation.parquet', file_row_number = true)
        WHERE end_ts >= {s} AND start_ts <= {e} ORDER BY file_row_number""").fetchall()


def sampled(rows, s, e, w):
    """The sampler's rule: per (partition, bucket of the start clamped into the window) the
    longest row, ties by the earliest start, then the earliest row."""
    best = {}
    for i, r in enumerate(rows):
        start, end, part = r[0], r[1], r[-1]
        b = (min(max(start, s), e) - s) * w // (e - s + 1)
        rank = (-(end - start), start, i)
        if (part, b) not in best or rank < best[(part, b)][0]:
            best[(part, b)] = (rank, r)
    return [r for _, r in best.values()]


def merged(rows):
    """Each allocation's partitions as runs of adjacent partitions: {(key..., lo, hi)}."""
    by = {}
    for r in rows:
        by.setdefault(r[:-1], []).append(r[-1])
    out = set()
    for k, parts in by.items():
        parts.sort()
        lo = prev = parts[0]
        for p in parts[1:] + [None]:
            if p is None or p != prev + 1:
                out.add(k + (lo, prev))
                lo = p
            prev = p
    return out


def rect_key(r, s):
    return (s + int(r["start"]), s + int(r["end"]), r["start_address"], r["end_address"], r["op_source_type"],
            r["opcode"], r["operands"], r["queue_name"], r["block_id"], r["tensor_name"], r["hlo_name"],
            r["pcore_idx"], r["partition_lo"], r["partition_hi"])


def span(d):
    return duckdb.sql(f"SELECT min(start_ts), max(end_ts) FROM {sbuf(d)}").fetchall()[0]


def test_window_sampled_per_partition_and_merged(profile):
    data, d = profile
    t0, t1 = span(d)
    s, e = t0 + (t1 - t0) // 3, t0 + (t1 - t0) // 2
    rows = window_rows(d, s, e)
    for w in (10000, 300, 7):
        st, doc = get(data, f"start={s}&end={e}&width={w}")
        assert st == 200, doc
        assert doc["sbuf"]["present"] and doc["sbuf"]["in_window"] == len(rows) > 0
        kept = sampled(rows, s, e, w)
        assert doc["sbuf"]["kept"] == len(kept)
        got = {rect_key(r, s) for r in doc["sbuf"]["rects"]}
        assert got == merged(kept), w
    for r in doc["sbuf"]["rects"]:
        assert s + int(r["end"]) >= s and s + int(r["start"]) <= e, "within the window"
        owner = next((v for v in (r["tensor_name"], r["hlo_name"], r["opcode"], r["queue_name"]) if v), "")
        assert r["owner"] == owner
    top = duckdb.sql(f"SELECT max(partition) FROM {sbuf(d)} WHERE end_ts >= {s} AND start_ts <= {e}").fetchall()[0][0]
    assert doc["partitions"] == max(128, top + 1)


def test_no_two_allocations_overlap_in_a_partition(profile):
    data, d = profile
    clash = duckdb.sql(f"""SELECT count(*) FROM {sbuf(d)} a JOIN {sbuf(d)} b
        ON a.partition = b.partition AND a.start_ts < b.end_ts AND b.start_ts < a.end_ts
        AND a.start_address < b.end_address AND b.start_address < a.end_address
        AND (a.start_ts, a.start_address, a.block_id) <> (b.start_ts, b.start_address, b.block_id)""").fetchall()[0][0]
    assert clash == 0
    t0, t1 = span(d)
    st, doc = get(data, f"start={t0}&end={t1}&width=700")
    assert st == 200
    rects = doc["sbuf"]["rects"]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            shared = a["partition_lo"] <= b["partition_hi"] and b["partition_lo"] <= a["partition_hi"]
            at_once = int(a["start"]) < int(b["end"]) and int(b["start"]) < int(a["end"])
            if shared and at_once:
                assert a["end_address"] <= b["start_address"] or b["end_address"] <= a["start_address"], (a, b)


def test_one_bucket_keeps_the_longest_per_partition(profile):
    data, d = profile
    t0, t1 = span(d)
    st, doc = get(data, f"start={t0}&end={t1}&width=1")
    assert st == 200
    want = duckdb.sql(f"""SELECT partition, start_ts, end_ts, start_address, end_address FROM (
        SELECT *, row_number() OVER (PARTITION BY partition ORDER BY end_ts - start_ts DESC, start_ts, file_row_number) AS k
        FROM read_parquet('{d}/SbufAllocation.parquet', file_row_number = true)) WHERE k = 1""").fetchall()
    assert doc["sbuf"]["kept"] == len(want)
    assert len(doc["sbuf"]["rects"]) <= len(want)
    for p, s, e, a0, a1 in want:
        r = [r for r in doc["sbuf"]["rects"] if r["partition_lo"] <= p <= r["partition_hi"]]
        assert len(r) == 1, p
        assert (t0 + int(r[0]["start"]), t0 + int(r[0]["end"]), r[0]["start_address"], r[0]["end_address"]) == (s, e, a0, a1)


def test_hbm_by_category_equals_duckdb(profile):
    data, d = profile
    st, doc = get(data, "start=0&end=1&width=1")
    assert st == 200
    system = d.parent / "demo@latest"
    assert list(system.glob("HbmUsageSummaryByType*.parquet")), "process writes it in the system profile"
    want = duckdb.sql(f"""SELECT usage_type, sum(usage_bytes)::BIGINT AS b
        FROM read_parquet('{system}/HbmUsageSummaryByType*.parquet') h,
             (SELECT neuron_device_idx AS dv, neuroncore_idx AS nc FROM read_parquet('{d}/Metadata.parquet')) m
        WHERE usage_type IS NOT NULL AND usage_bytes IS NOT NULL AND h.neuron_device_idx = m.dv
          AND h.neuroncore_idx = m.nc
        GROUP BY usage_type ORDER BY b DESC, usage_type""").fetchall()
    assert want, "the core has HBM rows"
    assert [(c["usage_type"], int(c["bytes"])) for c in doc["hbm"]["categories"]] == [(u, int(b)) for u, b in want]
    assert int(doc["hbm"]["total"]) == sum(int(b) for _, b in want)


def test_bad_requests(profile):
    data, _ = profile
    with serving(data) as (port, _):
        st, doc = http_get_json(port, f"/api/profiles/{DEV}/memory?start=5&end=9")
        assert st == 400 and "width" in doc["error"]
        st, doc = http_get_json(port, f"/api/profiles/{DEV}/memory?start=9&end=5&width=3")
        assert st == 400
        st, _ = http_get_json(port, "/api/profiles/nope/memory?start=0&end=9&width=3")
        assert st == 404


def test_pending_dma_lane(profile):
    """PendingDma as a /usage lane: per pixel bucket the largest count (ties: the earliest
    row), `before` the last change point before the window, integers."""
    data, d = profile
    rows = duckdb.sql(f"""SELECT timestamp, value FROM read_parquet('{d}/PendingDma.parquet', file_row_number = true)
        ORDER BY file_row_number""").fetchall()
    t0, t1 = rows[0][0], rows[-1][0]
    s, e, w = t0 + (t1 - t0) // 3, t0 + 2 * (t1 - t0) // 3, 50
    want = {}
    for t, v in rows:
        if s <= t <= e:
            b = (t - s) * w // (e - s + 1)
            if b not in want or v > want[b][1]:
                want[b] = (t - s, v)
    before = [(t, v) for t, v in rows if t < s][-1]
    with serving(data) as (port, _):
        st, doc = http_get_json(port, f"/api/profiles/{DEV}/usage?tables=PendingDma&start={s}&end={e}&width={w}")
        assert st == 200, doc
        (sr,) = doc["series"]
        assert (sr["table"], sr["value"], sr["unit"], sr["pcore_idx"]) == ("PendingDma", "value", "", 0)
        assert list(zip(sr["t"], sr["v"])) == [want[b] for b in sorted(want)]
        assert (sr["before"]["t"], sr["before"]["v"]) == (before[0] - s, before[1])
        st, schema = http_get_json(port, "/api/schema")
        assert {"table": "PendingDma", "lane": "pending", "label": "Pending DMA", "unit": "", "gauge": True,
                "series_what": "core"} in schema["viewer"]["usage"]
