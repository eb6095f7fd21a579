-- SbufAllocation, HbmUsageSummaryByType and PendingDma for a device profile that lacks them, written
-- by DuckDB (not by nxprof) beside the profile's tables, for the Memory view's tests
-- (tests/python/test_memory.py, tests/js/viewer_memory.test.mjs). {SRC} is the profile
-- directory, {OUT} a scratch directory: the tests copy from it only the tables the profile
-- lacks. Catalogue types (src/schema/catalogue.tsv), rows sorted by start_ts.
--
-- The allocations span the profile's Instruction time: 64 consecutive slots, each
-- [t0 + s*d, t0 + s*d + 0.9 d) with d = span / 64, so slots never overlap in time; in a
-- slot four blocks b = 0..3 each take partitions inside [32 b, 32 b + 31] (8 to 16 of
-- them), so no two allocations share a partition at one instant. One row per partition.
CREATE OR REPLACE TEMP TABLE span AS
  SELECT min(start_ts) AS t0, greatest(max(end_ts) - min(start_ts), 64) AS len FROM read_parquet('{SRC}/Instruction*.parquet');
CREATE OR REPLACE TEMP TABLE alloc AS
  SELECT s, b,
         (t0 + s * len // 64)::BIGINT AS start_ts,
         (t0 + s * len // 64 + (len // 64) * 9 // 10)::BIGINT AS end_ts,
         (32 * b + (s * 7) % 16)::BIGINT AS p0,
         (8 + (s + b) % 9)::BIGINT AS np,
         (((s * 3 + b) % 8) * 8192)::BIGINT AS a0,
         (2048 * (1 + (s + b) % 4))::BIGINT AS bytes
  FROM span, range(64) r(s), range(4) q(b);
COPY (
  SELECT start_ts, end_ts, a0 AS start_address, a0 + bytes AS end_address, p0 + k AS partition,
         CASE WHEN (s + b) % 3 = 2 THEN 'dma' ELSE 'instruction' END AS op_source_type,
         ['MATMUL', 'ACTIVATE', NULL][1 + (s + b) % 3] AS opcode,
         CASE WHEN (s + b) % 3 = 2 THEN NULL ELSE 'src=0x' || printf('%x', a0) || ' rows=' || np END AS operands,
         CASE WHEN (s + b) % 3 = 2 THEN 'qSyncIO' || b ELSE NULL END AS queue_name,
         (s * 4 + b)::BIGINT AS block_id,
         ['q_tile', 'k_tile', 'v_tile', 'scores', 'out_acc'][1 + (s + b) % 5] AS tensor_name,
         'dot.' || ((s + b) % 7) AS hlo_name,
         0::BIGINT AS pcore_idx
  FROM alloc, range(16) z(k) WHERE k < np
  ORDER BY start_ts, partition
) TO '{OUT}/SbufAllocation.parquet' (FORMAT parquet);
COPY (
  SELECT 0::BIGINT AS neuron_device_idx, c::BIGINT AS neuroncore_idx, usage_type, (bytes * (c + 1))::BIGINT AS usage_bytes
  FROM (VALUES ('Weights', 805306368), ('Activations', 268435456), ('I/O tensors', 67108864),
               ('Scratch', 134217728), ('Runtime', 33554432)) v(usage_type, bytes), range(2) r(c)
) TO '{OUT}/HbmUsageSummaryByType.parquet' (FORMAT parquet);
-- PendingDma: the DMA packets in flight, +1 at each DmaPacket start and -1 at each end,
-- one row per distinct time with the count from then on.
COPY (
  SELECT ts AS timestamp, v::INTEGER AS value, 0::BIGINT AS pcore_idx FROM (
    SELECT ts, sum(sum(d)) OVER (ORDER BY ts) AS v FROM (
      SELECT start_ts AS ts, 1 AS d FROM read_parquet('{SRC}/DmaPacket*.parquet')
      UNION ALL SELECT end_ts, -1 FROM read_parquet('{SRC}/DmaPacket*.parquet')) GROUP BY ts)
  ORDER BY ts
) TO '{OUT}/PendingDma.parquet' (FORMAT parquet);
