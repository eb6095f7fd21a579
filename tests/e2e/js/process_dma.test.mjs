// process_dma.test.mjs — the DMA tables of `nxprof process` (DmaPacket,
// DmaPacketAggregated, DmaUsage, HbmUsage, TensorInfo, Flow) on a tiny synth capture,
// read back with DuckDB and checked against values computed here from the capture
// bytes (tests/e2e/js/lib/nxcapture.mjs decodes them per docs/capture-format.md), using
// the rules of docs/processing.md, "DMA tables". The run writes one device profile per
// trace (docs/architecture.md, "Output layout"); each is checked against its own trace
// alone, so a row of another core in it fails the counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findCapture, readProgram, readTrace } from './lib/nxcapture.mjs';
import { requireBin, TEST_DATA, tempDir, openDuckDB, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-dma-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
const { devices: DEVICES } = profileLayout(PROF, CAP);

const reference = readFileSync(`${TEST_DATA}/reference/profile-schema-7.4.0.tsv`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));

// ---------------------------------------------------------------- expectations from the bytes
const cap = findCapture(CAP);
const progs = new Map([...cap.programs].map(([h, p]) => [h, readProgram(p)]));
const W = 10000n;                                   // the documented bucket width (ns)
const key = (...a) => a.join('|');
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// The expectations for one trace (one device profile).
function expectationsOf(path) {
  let packetRecords = 0;
  const bytesPerQueue = new Map();                    // queue name -> [read, write]
  const blocks = [];                                  // blocks that received packets
  const triggerEdges = [];                            // [blockStart, queue, blockId, instrStart, gap]
  const semEdges = [];                                // [consumerStart, engine, pc, gap]
  const perPcoreBytes = new Map(), perPcoreHbm = new Map();
  const tensorLoads = new Map();                      // pcore|tensor -> [count, bytes]
  const allPackets = [];                             // {pcore, start, end, bytes, hbm}
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0n) + v);

  const t = readTrace(path);
  const g = progs.get(t.header.programHash);
  const open = new Map();                           // pcore|queue|blockId -> block
  const instrs = [];
  for (const r of t.records) {
    if (r.kind === 1) instrs.push(r);
    if (r.kind === 2) {
      open.set(key(r.pcore, r.queue, r.blockId), { rec: r, desc: g.descs[r.descriptor], packets: [] });
    } else if (r.kind === 3) {
      packetRecords++;
      const q = g.queues[r.queue].name;
      const s = bytesPerQueue.get(q) ?? [0n, 0n];
      bytesPerQueue.set(q, [s[0] + BigInt(r.readBytes), s[1] + BigInt(r.writeBytes)]);
      open.get(key(r.pcore, r.queue, r.blockId)).packets.push(r);
    }
  }
  const tblocks = [];
  for (const b of open.values()) {
    if (b.packets.length === 0) continue;
    const start = b.packets.reduce((m, p) => (p.start < m ? p.start : m), b.packets[0].start);
    const end = b.packets.reduce((m, p) => (p.end > m ? p.end : m), b.packets[0].end);
    const rd = b.packets.reduce((s, p) => s + BigInt(p.readBytes), 0n);
    const wr = b.packets.reduce((s, p) => s + BigInt(p.writeBytes), 0n);
    const x = { pcore: b.rec.pcore, queue: b.rec.queue, blockId: b.rec.blockId, start, end, rd, wr, desc: b.desc, rec: b.rec };
    blocks.push(x);
    tblocks.push(x);
    add(perPcoreBytes, b.rec.pcore, rd + wr);
    const hbm = b.desc.source.includes('HBM') || b.desc.dest.includes('HBM');
    for (const p of b.packets) allPackets.push({ pcore: p.pcore, start: p.start, end: p.end, bytes: p.readBytes + p.writeBytes, hbm });
    if (b.desc.source.includes('HBM') || b.desc.dest.includes('HBM')) add(perPcoreHbm, b.rec.pcore, rd + wr);
    if (b.desc.dest.includes('[SB]')) {
      const k = key(b.rec.pcore, b.desc.variable);
      const v = tensorLoads.get(k) ?? [0n, 0n];
      tensorLoads.set(k, [v[0] + 1n, v[1] + wr]);
    }
    // Trigger edge: the latest instruction record of (pcore, engine, pc) dispatched before
    // the dma_block record (start time, then file order).
    if (b.rec.triggerEngine !== 0xff) {
      let best = null;
      for (const i of instrs) {
        if (i.pcore !== b.rec.pcore || i.engine !== b.rec.triggerEngine || i.pc !== b.rec.triggerPc) continue;
        const before = i.start < b.rec.start || (i.start === b.rec.start && i.seq < b.rec.seq);
        if (before && (!best || i.start > best.start || (i.start === best.start && i.seq > best.seq))) best = i;
      }
      if (best) triggerEdges.push(key(start, b.rec.queue, b.rec.blockId, best.start, start - best.end));
    }
  }
  // Semaphore edges: producer with the latest end <= the consumer's start, same pcore.
  const producers = new Map();                      // pcore|sem -> [ends]
  for (const i of instrs) {
    const p = g.instrByKey.get(`${i.engine}:${i.pc}`);
    if (p.signal !== 0xffff) producers.set(key(i.pcore, p.signal), [...(producers.get(key(i.pcore, p.signal)) ?? []), i.end]);
  }
  for (const b of tblocks) {
    const s = b.desc.completionSem;
    if (s !== 0xffff) producers.set(key(b.pcore, s), [...(producers.get(key(b.pcore, s)) ?? []), b.end]);
  }
  for (const i of instrs) {
    const p = g.instrByKey.get(`${i.engine}:${i.pc}`);
    if (p.wait === 0xffff) continue;
    const ends = (producers.get(key(i.pcore, p.wait)) ?? []).filter((e) => e <= i.start);
    if (ends.length === 0) continue;
    const best = ends.reduce((m, e) => (e > m ? e : m));
    semEdges.push(key(i.start, i.engine, i.pc, i.start - best));
  }
  return { packetRecords, bytesPerQueue, blocks, triggerEdges, semEdges, perPcoreBytes, perPcoreHbm, tensorLoads,
    allPackets };
}

// The documented sampling rule, computed directly: bytes spread over 10 us buckets in
// proportion to overlap; buckets with bytes written, and of each run of empty buckets
// the first and the last (after the series' last packet: only the first).
function expectedSamples(packets) {
  const series = new Map();                         // pcore -> Map(bucket -> bytes)
  for (const p of packets) {
    const m = series.get(p.pcore) ?? new Map();
    series.set(p.pcore, m);
    const dur = Number(p.end - p.start);
    if (dur === 0) { const b = p.start / W; m.set(b, (m.get(b) ?? 0) + p.bytes); continue; }
    for (let b = p.start / W; b * W < p.end; b++) {
      const lo = b * W > p.start ? b * W : p.start, hi = (b + 1n) * W < p.end ? (b + 1n) * W : p.end;
      if (hi > lo) m.set(b, (m.get(b) ?? 0) + (p.bytes * Number(hi - lo)) / dur);
    }
  }
  const rows = [];
  for (const [pcore, m] of series) {
    const active = [...m.keys()].filter((b) => m.get(b) > 1e-6).sort(cmp);
    let total = 0;
    for (let i = 0; i < active.length; i++) {
      const b = active[i];
      if (i > 0 && b - active[i - 1] > 1n) {       // a gap: its first and last bucket
        rows.push([pcore, active[i - 1] + 1n, 0, total]);
        if (b - active[i - 1] > 2n) rows.push([pcore, b - 1n, 0, total]);
      }
      total += m.get(b);
      rows.push([pcore, b, m.get(b), total]);
    }
    rows.push([pcore, active[active.length - 1] + 1n, 0, total]);
  }
  return rows.sort((a, b) => cmp(a[1], b[1]) || a[0] - b[0]);
}

// ---------------------------------------------------------------- the profile
const { sql } = await openDuckDB();

for (const D of DEVICES) {
  const { packetRecords, bytesPerQueue, blocks, triggerEdges, semEdges, perPcoreBytes, perPcoreHbm, tensorLoads,
    allPackets } = expectationsOf(D.trace);
  const file = (t) => `read_parquet('${join(D.dir, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;
  const T = (name) => `${D.name}: ${name}`;

  test(T('the capture has DMA blocks, packets, triggers and semaphore waits'), () => {
    assert.ok(packetRecords > 100, `packets: ${packetRecords}`);
    assert.ok(blocks.length > 10, `blocks: ${blocks.length}`);
    assert.ok(triggerEdges.length > 0 && semEdges.length > 0);
  });

  test(T('DmaPacket: one row per dma_packet record, byte sums per queue'), async () => {
    const [{ n }] = await sql(`SELECT count(*) AS n FROM ${file('DmaPacket')}`);
    assert.equal(Number(n), packetRecords);
    const rows = await sql(`SELECT queue_name AS q, sum(read_bytes) AS r, sum(write_bytes) AS w,
        sum(transfer_bytes) AS t FROM ${file('DmaPacket')} GROUP BY queue_name`);
    assert.equal(rows.length, bytesPerQueue.size);
    for (const row of rows) {
      const [r, w] = bytesPerQueue.get(row.q);
      assert.equal(BigInt(row.r), r, row.q);
      assert.equal(BigInt(row.w), w, row.q);
      assert.equal(BigInt(row.t), r + w, row.q);
    }
  });

  test(T('DmaPacket: every packet points at its block, same queue and pcore, inside its interval'), async () => {
    const [{ n, bad }] = await sql(`SELECT count(*) AS n, count(*) FILTER (WHERE a.id IS NULL
        OR a.queue_idx <> p.queue_idx OR a.pcore_idx <> p.pcore_idx OR p.start_ts < a.start_ts
        OR p.end_ts > a.end_ts OR p.variable <> a.variable) AS bad
      FROM ${file('DmaPacket')} p LEFT JOIN ${file('DmaPacketAggregated')} a ON a.id = p.packet_aggregation_id`);
    assert.equal(Number(n), packetRecords);
    assert.equal(Number(bad), 0);
  });

  test(T('DmaPacketAggregated: one row per block with packets; start, end and bytes per block'), async () => {
    const rows = await sql(`SELECT pcore_idx, queue_idx, block_id, start_ts, end_ts, read_bytes, write_bytes,
        transfer_bytes, duration_ns, variable, source, dest, semaphore_id FROM ${file('DmaPacketAggregated')}`);
    assert.equal(rows.length, blocks.length);
    const got = rows.map((r) => key(r.pcore_idx, r.queue_idx, r.block_id, r.start_ts, r.end_ts, r.read_bytes,
      r.write_bytes, r.variable, r.source, r.dest, r.semaphore_id)).sort();
    const want = blocks.map((b) => key(b.pcore, b.queue, b.blockId, b.start, b.end, b.rd, b.wr, b.desc.variable,
      b.desc.source, b.desc.dest, b.desc.semaphoreLabel)).sort();
    assert.deepEqual(got, want);
    for (const r of rows) {
      assert.equal(BigInt(r.transfer_bytes), BigInt(r.read_bytes) + BigInt(r.write_bytes));
      assert.equal(BigInt(r.duration_ns), BigInt(r.end_ts) - BigInt(r.start_ts));
    }
  });

  for (const [table, col] of [['DmaPacket', 'start_ts'], ['DmaPacketAggregated', 'start_ts'],
    ['DmaUsage', 'timestamp'], ['HbmUsage', 'timestamp']]) {
    test(T(`${table} is sorted by ${col} in file order`), async () => {
      const [{ n }] = await sql(`SELECT count(*) AS n FROM (SELECT ${col} AS t,
          lag(${col}) OVER (ORDER BY file_row_number) AS prev FROM ${file(table)}) WHERE prev > t`);
      assert.equal(Number(n), 0);
    });
  }

  for (const table of ['DmaPacket', 'DmaPacketAggregated', 'DmaUsage', 'HbmUsage', 'TensorInfo', 'Flow']) {
    test(T(`${table}: every required column is present and never null`), async () => {
      const required = reference.filter(([t, , , , , req]) => t === table && req === 'Yes').map(([, f]) => f);
      const [counts] = await sql(`SELECT count(*) AS n, ${
        required.length ? required.map((f, i) => `count("${f}") AS c${i}`).join(', ') : '0 AS none'
      } FROM ${file(table)}`);
      assert.ok(Number(counts.n) > 0, `${table} has rows`);
      required.forEach((f, i) => assert.equal(Number(counts[`c${i}`]), Number(counts.n), `${table}.${f} has nulls`));
    });
  }

  test(T('packet and block throughput is transfer_bytes per second of duration'), async () => {
    for (const t of ['DmaPacket', 'DmaPacketAggregated']) {
      const [{ bad }] = await sql(`SELECT count(*) FILTER (WHERE abs(throughput -
          transfer_bytes * 1e9 / greatest(duration_ns, 1)) > 1e-6 * throughput + 1) AS bad FROM ${file(t)}`);
      assert.equal(Number(bad), 0, t);
    }
  });

  for (const [table, want] of [['DmaUsage', perPcoreBytes], ['HbmUsage', perPcoreHbm]]) {
    test(T(`${table}: 10 us buckets whose bytes add up to the packets' bytes per pcore`), async () => {
      const rows = await sql(`SELECT pcore_idx AS p, max(total_transfer_bytes) AS total,
          sum(current_throughput * 10000 / 1e9) AS integrated, count(*) AS n,
          count(*) FILTER (WHERE timestamp % 10000 <> 0) AS unaligned,
          count(DISTINCT timestamp) AS distinct_ts FROM ${file(table)} GROUP BY pcore_idx`);
      assert.equal(rows.length, want.size);
      for (const r of rows) {
        const total = want.get(Number(r.p));
        assert.equal(BigInt(r.total), total, `pcore ${r.p}`);
        assert.ok(Math.abs(Number(r.integrated) - Number(total)) <= Number(total) * 1e-5, `${r.integrated} vs ${total}`);
        assert.equal(Number(r.unaligned), 0);
        assert.equal(Number(r.distinct_ts), Number(r.n));
      }
      // total_transfer_bytes never decreases along a series
      const [{ n }] = await sql(`SELECT count(*) AS n FROM (SELECT total_transfer_bytes AS t,
          lag(total_transfer_bytes) OVER (PARTITION BY pcore_idx ORDER BY timestamp) AS prev FROM ${file(table)})
        WHERE prev > t`);
      assert.equal(Number(n), 0);
    });
  }

  test(T('DmaUsage: the first sample is the bucket of the first packet'), async () => {
    const first = blocks.reduce((m, b) => (b.start < m ? b.start : m), blocks[0].start);
    const [{ t }] = await sql(`SELECT min(timestamp) AS t FROM ${file('DmaUsage')}`);
    assert.equal(BigInt(t), (first / W) * W);
  });

  test(T('TensorInfo: one row per tensor and pcore, SBUF loads counted from the blocks'), async () => {
    const g = [...progs.values()][0];
    const rows = await sql(`SELECT * FROM ${file('TensorInfo')}`);
    const pcores = new Set(rows.map((r) => Number(r.pcore_idx)));
    assert.equal(rows.length, g.tensors.length * pcores.size);
    let loaded = 0;
    for (const r of rows) {
      const tensor = g.tensors.find((x) => x.name === r.variable_name);
      assert.ok(tensor, r.variable_name);
      assert.equal(BigInt(r.size), tensor.size);
      const [count, bytes] = tensorLoads.get(key(r.pcore_idx, r.variable_name)) ?? [0n, 0n];
      assert.equal(BigInt(r.load_to_sbuf_dma_count), count, r.variable_name);
      assert.equal(BigInt(r.load_to_sbuf_total_size_bytes), bytes, r.variable_name);
      if (count > 0n) {
        loaded++;
        assert.equal(BigInt(r.load_to_sbuf_avg_size_bytes), bytes / count);
        assert.ok(Math.abs(r.load_to_sbuf_repeat_factor - Number(bytes) / Number(tensor.size)) < 1e-4);
      }
    }
    assert.ok(loaded > 0);
  });

  test(T('Flow: instruction -> dma_block trigger edges, one per triggered block, with the gap'), async () => {
    const rows = await sql(`SELECT a.start_ts AS s, a.queue_idx AS q, a.block_id AS b, i.start_ts AS i,
        f.gap_time AS gap, i.engine AS engine FROM ${file('Flow')} f
      JOIN ${file('DmaPacketAggregated')} a ON a.id = f.out_id
      JOIN ${file('Instruction')} i ON i.id = f.in_id
      WHERE f.dependency_type = 'DMA_TRIGGER' AND f.in_table = 'instruction' AND f.out_table = 'dma_block'`);
    const [{ n }] = await sql(`SELECT count(*) AS n FROM ${file('Flow')} WHERE dependency_type = 'DMA_TRIGGER'`);
    assert.equal(Number(n), triggerEdges.length);
    assert.deepEqual(rows.map((r) => key(r.s, r.q, r.b, r.i, r.gap)).sort(), [...triggerEdges].sort());
  });

  test(T('Flow: semaphore producer -> waiting instruction edges with the gap'), async () => {
    const rows = await sql(`SELECT i.start_ts AS s, i.engine AS e, i.pc AS pc, f.gap_time AS gap, f.in_table AS t
      FROM ${file('Flow')} f JOIN ${file('Instruction')} i ON i.id = f.out_id
      WHERE f.dependency_type = 'FLOW_DEPENDENCE' AND f.out_table = 'instruction'`);
    const ENGINES = ['tensor', 'vector', 'scalar', 'gpsimd', 'sync'];
    assert.deepEqual(rows.map((r) => key(r.s, ENGINES.indexOf(r.e), r.pc, r.gap)).sort(), [...semEdges].sort());
    assert.ok(rows.some((r) => r.t === 'dma_block') && rows.some((r) => r.t === 'instruction'));
    const [{ bad }] = await sql(`SELECT count(*) FILTER (WHERE gap_time < 0) AS bad FROM ${file('Flow')}
      WHERE dependency_type = 'FLOW_DEPENDENCE'`);
    assert.equal(Number(bad), 0);
  });

  for (const [table, hbmOnly] of [['DmaUsage', false], ['HbmUsage', true]]) {
    test(T(`${table}: every sample as the documented bucket rule gives it`), async () => {
      const want = expectedSamples(allPackets.filter((p) => !hbmOnly || p.hbm));
      const got = await sql(`SELECT pcore_idx AS p, timestamp AS t, current_throughput AS thr,
          total_transfer_bytes AS total FROM ${file(table)} ORDER BY file_row_number`);
      assert.equal(got.length, want.length);
      got.forEach((r, i) => {
        const [pcore, b, bytes, total] = want[i];
        assert.equal(Number(r.p), pcore, `row ${i}`);
        assert.equal(BigInt(r.t), b * W, `row ${i}`);
        const thr = (bytes * 1e9) / Number(W);
        assert.ok(Math.abs(r.thr - thr) <= thr * 1e-6 + 1e-3, `row ${i}: ${r.thr} vs ${thr}`);
        assert.ok(Math.abs(Number(r.total) - total) <= 1, `row ${i}: ${r.total} vs ${total}`);
      });
    });
  }
}
