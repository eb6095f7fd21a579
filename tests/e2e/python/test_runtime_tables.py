"""The runtime tables a device profile derives from its records (docs/processing.md):
PendingDma, DmaUsageSummary, CoreBarriers and SbufAllocation, on synth captures (tiny, two cores; and a
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
- SbufAllocation: against the program file's MEMORY_ALLOCATIONS and HARDWARE records, read
  here with struct per the byte layouts of docs/capture-format.md (not nxprof's reader):
  every row's block_id names an SBUF record with an end_address, whose name, address range
  and partitions it carries (one row per partition of each live range); the ranges lie
  inside the partitions and their capacity; every allocation with an address appears;
  each range starts when an Instruction row of its live instruction starts; and no two
  ranges share a byte of a partition at one instant (half-open intervals, DuckDB self-join).
"""
import collections
import struct

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import nx, profile_set

BUCKET_NS = 1_000_000


@pytest.fixture(scope="module", params=[("tiny", "3000"), ("llama-layer", "60000")], ids=["tiny", "llama"])
def capture(request, tmp_path_factory):
    preset, events = request.param
    d = tmp_path_factory.mktemp(f"runtime-{preset}")
    nx("synth", "--out", d / "cap", "--preset", preset, "--events", events, "--seed", "11", "--no-system")
    nx("process", d / "cap", "--output-file", d / "prof")
    out = [p for k, p in profile_set(d / "prof").items() if k != "system"]
    assert len(out) == 2, out
    (prog,) = (d / "cap").rglob("program_*.nxprog")
    return out, prog


@pytest.fixture(scope="module")
def devices(capture):
    return capture[0]


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


def read_memory_allocations(path):
    """(HARDWARE sbuf_partitions, sbuf_partition_bytes, [MEMORY_ALLOCATIONS records as dicts])."""
    b = path.read_bytes()
    assert b[:8] == b"NXPROG\0\0"
    toc_count, toc_entry, toc_offset = struct.unpack_from("<IIQ", b, 16)
    sec = {}
    for i in range(toc_count):
        sid, size, off, count = struct.unpack_from("<IIQQ", b, toc_offset + i * toc_entry)
        sec[sid] = (size, off, count)
    _, soff, ssize = sec[1]
    strings = b[soff:soff + ssize]
    text = lambda ref: strings[ref:strings.index(b"\0", ref)].decode()
    _, hoff, _ = sec[3]
    (partition_bytes,) = struct.unpack_from("<Q", b, hoff + 64)
    (partitions,) = struct.unpack_from("<I", b, hoff + 104)
    size, aoff, count = sec[12]
    out = []
    for i in range(count):
        r = aoff + i * size
        name, memory, bank, first, n, live_e, free_e, live_pc, free_pc, end, nbytes = \
            struct.unpack_from("<IBBHHBBIIIQ", b, r)
        out.append(dict(name=text(name), memory=memory, first=first, count=n, live_engine=live_e,
                        live_pc=live_pc, end=end, bytes=nbytes))
    return partitions, partition_bytes, out


ENGINES = ["tensor", "vector", "scalar", "gpsimd", "sync"]


def test_sbuf_allocation_against_the_program_file(capture):
    devices, prog = capture
    partitions, capacity, allocs = read_memory_allocations(prog)
    addressed = {i for i, a in enumerate(allocs) if a["memory"] == 0 and a["end"]}
    assert addressed, "the simulator gives its SBUF allocations addresses"
    for d in devices:
        f = d / "SbufAllocation.parquet"
        rows = _rows(f, ["start_ts", "end_ts", "start_address", "end_address", "partition", "block_id",
                         "tensor_name", "op_source_type", "pcore_idx"])
        assert rows, d
        per_range = collections.Counter()
        for st, en, sa, ea, part, block, name, src, pcore in rows:
            a = allocs[block]
            assert block in addressed, (d, block)
            assert (name, ea, sa, src) == (a["name"], a["end"], a["end"] - a["bytes"], "instruction")
            assert a["first"] <= part < a["first"] + a["count"] and part < partitions
            assert 0 <= sa < ea <= capacity and st <= en
            per_range[(block, st, pcore)] += 1
        assert all(n == allocs[b]["count"] for (b, _, _), n in per_range.items()), d
        assert {b for b, _, _ in per_range} == addressed, f"{d}: an allocation with an address never went live"
        starts = collections.defaultdict(set)
        for eng, pc, st in _rows(d / "Instruction.parquet", ["engine", "pc", "start_ts"]):
            starts[(eng, pc)].add(st)
        for block, st, _ in per_range:
            a = allocs[block]
            assert st in starts[(ENGINES[a["live_engine"]], a["live_pc"])], (d, a["name"], st)
        [(overlaps,)] = duckdb.sql(f"""
            SELECT count(*) FROM '{f}' a JOIN '{f}' b
              ON a.partition = b.partition AND a.pcore_idx = b.pcore_idx
             AND a.start_ts < b.end_ts AND b.start_ts < a.end_ts
             AND a.start_address < b.end_address AND b.start_address < a.end_address
             AND (a.block_id, a.start_ts) <> (b.block_id, b.start_ts)""").fetchall()
        assert overlaps == 0, f"{d}: {overlaps} pairs of SBUF ranges overlap"


def test_hbm_usage_summary_is_the_peak_snapshot_of_each_hbm(tmp_path):
    """HbmUsageSummaryByType of a system profile against its SystemProfileHbmUsage (the
    memory lanes): per (device_idx, hbm_idx), the snapshot with the largest total_bytes
    (first in file order), one row per category with bytes, adding up to that total;
    with --ignore-system-profile, no table anywhere."""
    nx("synth", "--out", tmp_path / "cap", "--preset", "tiny", "--seed", "4", "--cores", "3")
    nx("process", tmp_path / "cap", "--output-file", tmp_path / "prof")
    system = tmp_path / "prof"
    hbm = system / "SystemProfileHbmUsage.parquet"
    categories = [c for c in pq.read_schema(hbm).names if c.endswith("_bytes") and c != "total_bytes"]
    peaks = duckdb.sql(f"""
        SELECT device_idx, hbm_idx, {', '.join(categories)}, total_bytes
          FROM (SELECT *, row_number() OVER (PARTITION BY device_idx, hbm_idx
                                             ORDER BY total_bytes DESC, file_row_number) AS k
                  FROM read_parquet('{hbm}', file_row_number = true))
         WHERE k = 1 ORDER BY device_idx, hbm_idx""").fetchall()
    assert len(peaks) == 4, peaks   # 3 cores: devices 0 and 1, HBM 0 and 1 each
    want = [(p[0], p[1], c.removesuffix("_bytes"), v) for p in peaks for c, v in zip(categories, p[2:-1]) if v]
    got = _rows(system / "HbmUsageSummaryByType.parquet",
                ["neuron_device_idx", "neuroncore_idx", "usage_type", "usage_bytes"])
    assert got == want
    for p in peaks:
        assert sum(g[3] for g in got if g[:2] == p[:2]) == p[-1]
    nx("process", tmp_path / "cap", "--output-file", tmp_path / "prof2", "--ignore-system-profile")
    assert not list((tmp_path / "prof2").rglob("HbmUsageSummaryByType*.parquet"))
