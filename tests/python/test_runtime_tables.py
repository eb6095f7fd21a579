"""The runtime tables a device profile derives from its records (docs/processing.md):
PendingDma, DmaUsageSummary and CoreBarriers, on synth captures (tiny, two cores; and a
llama-layer capture of 60,000 records), each checked against a computation written here
from the rows they derive from:

- PendingDma: the DMA transfers in flight per pcore, from DmaPacketAggregated read with
  pyarrow: +1 at each row's start_ts, -1 at its end_ts, netted per instant; one row per
  (time, pcore) whose count changes, in time then pcore order. Also: the count never
  goes below zero and ends at zero, and its peak equals the largest number of blocks
  whose [start_ts, end_ts) intervals overlap, found by DuckDB with a self-join.
- DmaUsageSummary: a DuckDB GROUP BY of DmaUsage into 1 ms buckets per pcore_idx.
- CoreBarriers: the Instruction rows whose compiler_opcode is PSEUDO_CORE_BARRIER, with
  id and semaphore taken from their compiler_operands by a DuckDB regular expression and
  the engine's display name from its lower-case Instruction name; both cores reach every
  barrier id the same number of times (the simulator puts one before each AllReduce).
"""
import collections

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import nx, profile_set

BUCKET_NS = 1_000_000


@pytest.fixture(scope="module", params=[("tiny", "3000"), ("llama-layer", "60000")], ids=["tiny", "llama"])
def devices(request, tmp_path_factory):
    preset, events = request.param
    d = tmp_path_factory.mktemp(f"runtime-{preset}")
    nx("synth", "--out", d / "cap", "--preset", preset, "--events", events, "--seed", "11", "--no-system")
    nx("process", d / "cap", "--output-file", d / "prof")
    out = [p for k, p in profile_set(d / "prof").items() if k != "system"]
    assert len(out) == 2, out
    return out


def _rows(path, columns):
    t = pq.read_table(path, columns=columns)
    return list(zip(*(t.column(c).to_pylist() for c in columns)))


def _pending_expected(blocks):
    changes = collections.defaultdict(int)
    for start, end, pcore in blocks:
        if end > start:
            changes[(start, pcore)] += 1
            changes[(end, pcore)] -= 1
    count, out = collections.Counter(), []
    for (t, pcore), net in sorted(changes.items()):
        if net:
            count[pcore] += net
            out.append((t, count[pcore], pcore))
    return out


def test_pending_dma_is_the_transfers_in_flight(devices):
    for d in devices:
        blocks = _rows(d / "DmaPacketAggregated.parquet", ["start_ts", "end_ts", "pcore_idx"])
        assert len(blocks) > 10, d
        got = _rows(d / "PendingDma.parquet", ["timestamp", "value", "pcore_idx"])
        want = _pending_expected(blocks)
        assert len(got) == len(want), f"{d}: {len(got)} PendingDma rows, {len(want)} change points"
        assert got == want, d
        last = {}
        for _, v, p in got:
            assert v >= 0, f"{d}: a negative pending count"
            last[p] = v
        assert set(last.values()) == {0}, f"{d}: the series do not end at zero: {last}"


def test_pending_dma_peak_is_the_largest_overlap(devices):
    for d in devices:
        agg = d / "DmaPacketAggregated.parquet"
        [(peak,)] = duckdb.sql(f"""
            SELECT max(n) FROM (SELECT a.start_ts, a.pcore_idx, count(*) AS n
              FROM '{agg}' a JOIN '{agg}' b ON a.pcore_idx = b.pcore_idx
               AND b.start_ts <= a.start_ts AND a.start_ts < b.end_ts
             WHERE a.end_ts > a.start_ts GROUP BY ALL)""").fetchall()
        [(got,)] = duckdb.sql(f"SELECT max(value) FROM '{d / 'PendingDma.parquet'}'").fetchall()
        assert got == peak, d


def test_dma_usage_summary_is_the_duckdb_aggregation_of_dma_usage(devices):
    for d in devices:
        want = duckdb.sql(f"""
            SELECT (timestamp // {BUCKET_NS}) * {BUCKET_NS} AS ts, pcore_idx,
                   sum(current_throughput) AS thr, sum(total_transfer_bytes)::BIGINT AS tot,
                   max(total_transfer_bytes) AS mx, count(*) AS n
              FROM '{d / 'DmaUsage.parquet'}' GROUP BY ALL ORDER BY ts, pcore_idx""").fetchall()
        got = _rows(d / "DmaUsageSummary.parquet",
                    ["timestamp", "pcore_idx", "sum_current_throughput", "sum_total_transfer_bytes",
                     "max_total_transfer_bytes", "count", "bucket_resolution_ns"])
        assert len(got) == len(want) > 0, d
        for g, w in zip(got, want):
            assert g[:2] == w[:2] and g[3:6] == w[3:6], (d, g, w)
            assert g[2] == pytest.approx(w[2], rel=1e-12), (d, g, w)
            assert g[6] == BUCKET_NS
        assert sum(g[5] for g in got) == pq.ParquetFile(d / "DmaUsage.parquet").metadata.num_rows


DISPLAY = {"tensor": "Tensor", "vector": "Vector", "scalar": "Scalar", "gpsimd": "GpSimd", "sync": "Sync"}


def test_core_barriers_are_the_barrier_instructions(devices):
    per_core = []
    for d in devices:
        want = duckdb.sql(f"""
            SELECT start_ts, end_ts, end_ts - start_ts, engine,
                   regexp_extract(compiler_operands, '(^| )id=([0-9]+)', 2)::BIGINT,
                   regexp_extract(compiler_operands, '(^| )semaphore=([0-9]+)', 2)::BIGINT,
                   compiler_pc, compiler_opcode, compiler_operands, pcore_idx
              FROM '{d / 'Instruction.parquet'}' WHERE compiler_opcode = 'PSEUDO_CORE_BARRIER'
             ORDER BY start_ts, file_row_number""").fetchall()
        want = [w[:3] + (DISPLAY[w[3]],) + w[4:] for w in want]
        got = _rows(d / "CoreBarriers.parquet",
                    ["start_ts", "end_ts", "duration_ns", "engine_name", "id", "semaphore", "compiler_pc",
                     "compiler_opcode", "compiler_operands", "pcore_idx"])
        assert len(got) == len(want) > 0, d
        assert sorted(got) == sorted(want), d
        assert [g[0] for g in got] == sorted(g[0] for g in got), f"{d}: CoreBarriers not sorted by start_ts"
        per_core.append(collections.Counter(g[4] for g in got))
    assert per_core[0] == per_core[1], "the cores reach different barriers"
