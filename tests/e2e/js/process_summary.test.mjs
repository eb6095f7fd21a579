// process_summary.test.mjs — ActiveTime, OpcodeSummary, Summary and the IR roll-ups
// (Bir/Penguin/Hlo/FrameworkInstruction, FrameworkNode) of `nxprof process` on a tiny synth
// capture, read back with DuckDB and compared with values recomputed here from the capture
// bytes (tests/e2e/js/lib/nxcapture.mjs plus the program's integer slots decoded below, all per
// docs/capture-format.md), following the rules in docs/processing.md ("Activity, summaries
// and roll-ups"): busy interval = [start, end] of the record, unions per (trace, pcore,
// engine) merging on overlap or touch, and so on. The run writes one device profile per
// trace (docs/architecture.md, "Output layout"); each is checked against its own trace
// alone, so a row of another core in it fails the counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { findCapture, readProgram, readTrace } from './lib/nxcapture.mjs';
import { requireBin, tempDir, openDuckDB, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-summary-');
const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
const { devices: DEVICES } = profileLayout(PROF, CAP);

// ---- the capture, decoded independently ------------------------------------------------
const cap = findCapture(CAP);
const ENGINES = ['tensor', 'vector', 'scalar', 'gpsimd', 'sync'];

// Extra program facts this test needs: HARDWARE (tensor clock @8, hbm bandwidth @48,
// tensor rows @80 / cols @84) and, per instruction record (288 bytes), the 25 i64 slots at
// 88 + 8k and the framework_name string (string slot 10, at 16 + 4*10).
function programExtras(path) {
  const b = readFileSync(path);
  const tocCount = b.readUInt32LE(16), tocEntry = b.readUInt32LE(20), tocOff = Number(b.readBigUInt64LE(24));
  const sec = new Map();
  for (let i = 0; i < tocCount; i++) {
    const at = tocOff + i * tocEntry;
    sec.set(b.readUInt32LE(at), { size: b.readUInt32LE(at + 4), off: Number(b.readBigUInt64LE(at + 8)),
      count: Number(b.readBigUInt64LE(at + 16)) });
  }
  const S = sec.get(1), H = sec.get(3), I = sec.get(4);
  const str = (ref) => b.subarray(S.off + ref, b.indexOf(0, S.off + ref)).toString('utf8');
  const hw = { tensorClock: Number(b.readBigUInt64LE(H.off + 8)), hbmBw: Number(b.readBigUInt64LE(H.off + 48)),
    rows: b.readUInt32LE(H.off + 80), cols: b.readUInt32LE(H.off + 84) };
  const SLOT = { penguin: 1, bir: 2, hlo: 3, framework: 4, hbmR: 6, hbmW: 7, sbufR: 8, weightQ: 17, elem: 18,
    flops: 19, telem: 21, flopsT: 22 };
  const byKey = new Map();
  for (let i = 0; i < I.count; i++) {
    const at = I.off + i * I.size;
    const x = { index: i, engine: b[at + 4], pc: b.readUInt32LE(at), fwName: str(b.readUInt32LE(at + 16 + 40)) };
    for (const [k, slot] of Object.entries(SLOT)) x[k] = Number(b.readBigInt64LE(at + 88 + 8 * slot));
    byKey.set(`${x.engine}:${x.pc}`, x);
  }
  return { hw, byKey };
}

assert.equal(cap.programs.size, 1, 'tiny has one program');
const progPath = [...cap.programs.values()][0];
const prog = readProgram(progPath);
const extra = programExtras(progPath);
assert.equal(DEVICES.length, 2, 'tiny has two cores, so two device profiles');

// Union of intervals [s, e] (BigInt) given in start order: merge on overlap or touch.
function union(list) {
  const out = [];
  for (const [s, e] of list) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) { if (e > last[1]) last[1] = e; } else out.push([s, e]);
  }
  return out;
}
const len = (ivs) => ivs.reduce((a, [s, e]) => a + (e - s), 0n);
const byStart = (a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0);

const { sql } = await openDuckDB();
const close = (got, want, what, rel = 1e-5) =>
  assert.ok(Math.abs(got - want) <= rel * Math.max(1, Math.abs(want)), `${what}: ${got} != ${want}`);

// Each device profile against the trace of its core alone.
for (const D of DEVICES) {
  const traces = [readTrace(D.trace)];
  const PROF_D = D.dir;
  const T = (name) => `${D.name}: ${name}`;

  // Instruction records of the trace, with their program instruction.
  const instrs = [];
  traces.forEach((t, ti) => {
    for (const r of t.records) {
      if (r.kind !== 1) continue;
      const p = prog.instrByKey.get(`${r.engine}:${r.pc}`);
      const x = extra.byKey.get(`${r.engine}:${r.pc}`);
      instrs.push({ trace: ti, pcore: r.pcore, engine: r.engine, start: r.start, end: r.end, opcode: p.opcode, x });
    }
  });
  instrs.sort(byStart);

  // ---- the profile -----------------------------------------------------------------------
  const file = (t) => `read_parquet('${join(PROF_D, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;

  // Expected ActiveTime: per (trace, pcore, engine).
  const lanes = new Map();
  for (const i of instrs) {
    const k = `${i.trace}/${i.pcore}/${i.engine}`;
    if (!lanes.has(k)) lanes.set(k, []);
    lanes.get(k).push([i.start, i.end]);
  }
  const expectedActive = [];
  for (const [k, list] of lanes) {
    const [trace, pcore, engine] = k.split('/').map(Number);
    for (const [s, e] of union(list)) expectedActive.push({ trace, pcore, engine: ENGINES[engine], start: s, end: e });
  }
  const engineActive = new Map(ENGINES.map((e) => [e, 0n]));
  for (const a of expectedActive) engineActive.set(a.engine, engineActive.get(a.engine) + a.end - a.start);

  test(T('ActiveTime: the merged busy intervals of each (trace, pcore, engine)'), async () => {
    const rows = await sql(`SELECT * FROM ${file('ActiveTime')} ORDER BY file_row_number`);
    assert.equal(rows.length, expectedActive.length);
    const key = (r) => `${r.engine}/${r.pcore_idx ?? r.pcore}/${r.start_ts ?? r.start}/${r.end_ts ?? r.end}`;
    const want = new Map();
    for (const a of expectedActive) want.set(key(a), (want.get(key(a)) ?? 0) + 1);
    for (const r of rows) {
      assert.equal(r.duration_ns, r.end_ts - r.start_ts);
      const k = key(r);
      assert.ok(want.get(k) > 0, `unexpected ActiveTime row ${k}`);
      want.set(k, want.get(k) - 1);
    }
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].start_ts <= rows[i].start_ts, `row ${i} not sorted`);
  });

  test(T('ActiveTime: rows of one trace, pcore and engine never overlap or touch'), async () => {
    // The table has no trace column: each row is tied to its trace through the expected
    // interval with the same (engine, pcore, start, end), then checked in table order.
    const traceOf = new Map(expectedActive.map((a) => [`${a.engine}/${a.pcore}/${a.start}/${a.end}`, a.trace]));
    const rows = await sql(`SELECT * FROM ${file('ActiveTime')} ORDER BY file_row_number`);
    const lastEnd = new Map();
    for (const r of rows) {
      const k = `${traceOf.get(`${r.engine}/${r.pcore_idx}/${r.start_ts}/${r.end_ts}`)}/${r.pcore_idx}/${r.engine}`;
      if (lastEnd.has(k)) assert.ok(r.start_ts > lastEnd.get(k), `${k} overlaps at ${r.start_ts}`);
      lastEnd.set(k, r.end_ts);
    }
  });

  test(T('ActiveTime: total per engine equals the Instruction table durations'), async () => {
    // synth never overlaps two instructions of one engine of one core, so the union keeps
    // every nanosecond of the Instruction rows.
    const rows = await sql(`SELECT engine, sum(duration_ns) AS d FROM ${file('ActiveTime')} GROUP BY engine`);
    const ins = await sql(`SELECT engine, sum(duration_ns) AS d FROM ${file('Instruction')} GROUP BY engine`);
    const m = new Map(ins.map((r) => [r.engine, r.d]));
    assert.equal(rows.length, m.size);
    for (const r of rows) {
      assert.equal(r.d, engineActive.get(r.engine));
      assert.equal(r.d, m.get(r.engine));
    }
  });

  test(T('OpcodeSummary: count, time, union and percent per (engine, opcode)'), async () => {
    const want = new Map();
    const opLanes = new Map();
    for (const i of instrs) {
      const k = `${ENGINES[i.engine]}/${i.opcode}`;
      const w = want.get(k) ?? { count: 0, time: 0n, active: 0n };
      w.count++;
      w.time += i.end - i.start;
      want.set(k, w);
      const lk = `${k}/${i.trace}/${i.pcore}`;
      if (!opLanes.has(lk)) opLanes.set(lk, []);
      opLanes.get(lk).push([i.start, i.end]);
    }
    for (const [lk, list] of opLanes) {
      const k = lk.split('/').slice(0, 2).join('/');
      want.get(k).active += len(union(list));
    }
    const rows = await sql(`SELECT * FROM ${file('OpcodeSummary')} ORDER BY file_row_number`);
    assert.equal(rows.length, want.size);
    for (const r of rows) {
      const w = want.get(`${r.engine}/${r.opcode}`);
      assert.ok(w, `unexpected row ${r.engine}/${r.opcode}`);
      assert.equal(r.instruction_count, BigInt(w.count));
      assert.equal(r.instruction_time_ns, w.time);
      assert.equal(r.active_time_ns, w.active);
      close(r.active_time_percent, (100 * Number(w.active)) / Number(engineActive.get(r.engine)), 'percent', 1e-6);
    }
    // rows ordered by engine number, then opcode
    const order = rows.map((r) => [ENGINES.indexOf(r.engine), r.opcode]);
    for (let i = 1; i < order.length; i++)
      assert.ok(order[i - 1][0] < order[i][0] || (order[i - 1][0] === order[i][0] && order[i - 1][1] < order[i][1]));
  });

  test(T('Summary: times, counts, flops, DMA and utilisation recomputed from the capture'), async () => {
    const [s] = await sql(`SELECT * FROM ${file('Summary')}`);
    assert.ok(s, 'Summary has one row');
    let first = null, last = null, traceNs = 0n, laneNs = 0n, events = 0;
    for (const t of traces) {
      let f = null, l = null;
      for (const r of t.records) {
        const e = r.end ?? r.start;
        if (f === null || r.start < f) f = r.start;
        if (l === null || e > l) l = e;
      }
      events += t.records.length;
      if (f === null) continue;
      if (first === null || f < first) first = f;
      if (last === null || l > last) last = l;
      traceNs += l - f;
      laneNs += (l - f) * BigInt(t.header.pcoreCount);
    }
    close(s.total_time, Number(last - first) / 1e9, 'total_time');
    assert.equal(s.trace_count, BigInt(traces.length));
    assert.equal(s.event_count, BigInt(events));

    for (const [e, name] of ENGINES.entries()) {
      const mine = instrs.filter((i) => i.engine === e);
      assert.equal(s[`${name}_engine_instruction_count`], BigInt(mine.length), name);
      close(s[`${name}_engine_instruction_time`], Number(mine.reduce((a, i) => a + i.end - i.start, 0n)) / 1e9, name);
      close(s[`${name}_engine_active_time`], Number(engineActive.get(name)) / 1e9, `${name} active`);
      close(s[`${name}_engine_active_time_percent`], (100 * Number(engineActive.get(name))) / Number(laneNs),
        `${name} percent`);
    }
    assert.equal(s.matmul_instruction_count, BigInt(instrs.filter((i) => i.engine === 0 && i.opcode === 'MATMUL').length));
    assert.equal(s.activate_instruction_count, BigInt(instrs.filter((i) => i.opcode === 'ACTIVATE').length));

    const sum = (f) => instrs.reduce((a, i) => a + Math.max(0, i.x[f]), 0);
    const model = sum('flops'), transpose = sum('flopsT');
    assert.equal(s.model_flops, BigInt(model));
    assert.equal(s.transpose_flops, BigInt(transpose));
    assert.equal(s.hardware_flops, BigInt(model + transpose));
    assert.equal(s.hbm_read_bytes, BigInt(sum('hbmR')));
    assert.equal(s.hbm_write_bytes, BigInt(sum('hbmW')));
    const { hw } = extra;
    const peak = 2 * hw.rows * hw.cols * hw.tensorClock;
    close(s.mfu_estimated_percent, (100 * model) / (peak * (Number(laneNs) / 1e9)), 'mfu', 1e-5);
    close(s.hfu_estimated_percent, (100 * (model + transpose)) / (peak * (Number(laneNs) / 1e9)), 'hfu', 1e-5);
    close(s.mbu_estimated_percent, (100 * (sum('hbmR') + sum('hbmW'))) / (hw.hbmBw * (Number(traceNs) / 1e9)), 'mbu');

    // DMA: transfers are blocks, bytes are packet read + write, static = not *_dynamic queues.
    let blocks = 0, bytes = 0, staticBytes = 0, staticPackets = 0, packets = 0;
    for (const t of traces) for (const r of t.records) {
      if (r.kind === 2) blocks++;
      if (r.kind !== 3) continue;
      packets++;
      bytes += r.readBytes + r.writeBytes;
      if (!/dynamic/.test(prog.queues[r.queue].type)) { staticBytes += r.readBytes + r.writeBytes; staticPackets++; }
    }
    assert.equal(s.dma_transfer_count, BigInt(blocks));
    assert.equal(s.dma_transfer_total_bytes, BigInt(bytes));
    assert.equal(s.static_dma_size, BigInt(staticBytes));
    assert.equal(s.static_dma_packet_count, BigInt(staticPackets));
    close(s.static_dma_packet_percent, (100 * staticPackets) / packets, 'static packet percent');

    // Executions and collectives.
    const execs = traces.flatMap((t) => t.records.filter((r) => r.kind === 9));
    close(s.total_exec_time, Number(execs.reduce((a, r) => a + r.end - r.start, 0n)) / 1e9, 'total_exec_time');
    assert.equal(s.cc_op_count, BigInt(traces.reduce((a, t) => a + t.records.filter((r) => r.kind === 5).length, 0)));
    let totalActive = 0n;
    traces.forEach((t, ti) => { totalActive += len(union(instrs.filter((i) => i.trace === ti).map((i) => [i.start, i.end]))); });
    close(s.total_active_time, Number(totalActive) / 1e9, 'total_active_time');

    // The same counts from the Instruction table, through SQL.
    const [q] = await sql(`SELECT count(*) FILTER (engine = 'tensor') AS t, sum(raw_flops) AS f FROM ${file('Instruction')}`);
    assert.equal(s.tensor_engine_instruction_count, q.t);
    assert.equal(s.model_flops, q.f);

    // total_row_count: the rows of every file of the profile, counted by DuckDB.
    const files = readdirSync(PROF_D).filter((f) => f.endsWith('.parquet'));
    assert.ok(files.includes('SchemaFields.parquet') && files.length > 20, files.join(' '));
    let rows = 0n;
    for (const f of files) {
      const [c] = await sql(`SELECT count(*) AS n FROM read_parquet('${join(PROF_D, f).replaceAll("'", "''")}')`);
      rows += c.n;
    }
    assert.equal(s.total_row_count, rows);
  });

  // Expected rows of an IR level: key -> { start, end, intervals, hbmR, counts... }.
  function rollup(keyOf) {
    const m = new Map();
    for (const i of instrs) {
      const k = keyOf(i);
      if (k === null) continue;
      const w = m.get(k) ?? { start: i.start, end: i.end, list: [], hbmR: 0, elem: [], counts: [0, 0, 0, 0, 0], rep: i.x };
      if (i.start < w.start) w.start = i.start;
      if (i.end > w.end) w.end = i.end;
      if (i.x.index < w.rep.index) w.rep = i.x;
      w.list.push([i.start, i.end, i.x]);
      w.hbmR += Math.max(0, i.x.hbmR);
      w.counts[i.engine]++;
      m.set(k, w);
    }
    for (const w of m.values()) {
      const ivs = [];
      for (const [s, e, x] of w.list) {
        const lastIv = ivs[ivs.length - 1];
        if (lastIv && s <= lastIv.e) { if (e > lastIv.e) lastIv.e = e; lastIv.elem += Math.max(0, x.elem); }
        else ivs.push({ s, e, elem: Math.max(0, x.elem) });
      }
      w.text = `[${ivs.map((v) => `[${v.s}, ${v.e}]`).join(', ')}]`;
      w.elem = ivs.map((v) => BigInt(v.elem));
    }
    return m;
  }

  test(T('BirInstruction: one row per (raw_bir_id, pcore) with merged intervals and sums'), async () => {
    const want = rollup((i) => (i.x.bir < 0 ? null : `${i.x.bir}/${i.pcore}`));
    const rows = await sql(`SELECT * FROM ${file('BirInstruction')} ORDER BY file_row_number`);
    assert.equal(rows.length, want.size);
    rows.forEach((r, n) => {
      assert.equal(r.id, BigInt(n));
      const w = want.get(`${r.raw_bir_id}/${r.pcore_idx}`);
      assert.ok(w, `unexpected bir ${r.raw_bir_id}`);
      assert.equal(r.start_ts, w.start);
      assert.equal(r.end_ts, w.end);
      assert.equal(r.time_intervals, w.text);
      assert.deepEqual(r.element_count_per_interval, w.elem);
      assert.equal(r.hbm_read_bytes, BigInt(w.hbmR));
      assert.equal(r.raw_hlo_id, BigInt(w.rep.hlo));
      if (n > 0) assert.ok(rows[n - 1].start_ts <= r.start_ts, 'sorted by start_ts');
    });
  });

  test(T('Penguin, Hlo and FrameworkInstruction: one row per raw id with start, end and counts'), async () => {
    for (const [table, slot, col] of [['PenguinInstruction', 'penguin', 'raw_penguin_id'],
      ['HloInstruction', 'hlo', 'raw_hlo_id'], ['FrameworkInstruction', 'framework', 'raw_framework_id']]) {
      const want = rollup((i) => (i.x[slot] < 0 ? null : String(i.x[slot])));
      const rows = await sql(`SELECT * FROM ${file(table)} ORDER BY file_row_number`);
      assert.equal(rows.length, want.size, table);
      for (const r of rows) {
        const w = want.get(String(r[col]));
        assert.ok(w, `${table}: unexpected id ${r[col]}`);
        assert.equal(r.start_ts, w.start, table);
        assert.equal(r.end_ts, w.end, table);
        assert.equal(r.time_intervals, w.text, table);
        assert.equal(r.hbm_read_bytes, BigInt(w.hbmR), table);
        if (table === 'FrameworkInstruction') {
          ENGINES.forEach((e, k) => assert.equal(r[`${e}_engine_instruction_count`], BigInt(w.counts[k])));
          assert.equal(r.framework_name, w.rep.fwName);
        }
      }
    }
  });

  test(T('FrameworkNode: one row per framework_name prefix, linked to parent and children'), async () => {
    const want = new Map();
    for (const i of instrs) {
      if (!i.x.fwName) continue;
      const parts = i.x.fwName.split('/').filter(Boolean);
      for (let d = 1; d <= parts.length; d++) {
        const path = parts.slice(0, d).join('/');
        const w = want.get(path) ?? { parent: d > 1 ? parts.slice(0, d - 1).join('/') : '', start: i.start, end: i.end,
          tensor: 0 };
        if (i.start < w.start) w.start = i.start;
        if (i.end > w.end) w.end = i.end;
        if (i.engine === 0) w.tensor++;
        want.set(path, w);
      }
    }
    const rows = await sql(`SELECT * FROM ${file('FrameworkNode')} ORDER BY file_row_number`);
    assert.equal(rows.length, want.size);
    const names = rows.map((r) => r.node_name);
    for (const [n, r] of rows.entries()) {
      const w = want.get(r.node_name);
      assert.ok(w, `unexpected node ${r.node_name}`);
      assert.equal(r.parent_name, w.parent);
      assert.equal(r.start_ts, w.start);
      assert.equal(r.end_ts, w.end);
      assert.equal(r.tensor_engine_instruction_count, BigInt(w.tensor));
      const kids = [...want.entries()].filter(([, v]) => v.parent === r.node_name).map(([k]) => k).sort();
      const ids = kids.map((k) => names.indexOf(k)).sort((a, b) => a - b);
      assert.equal(r.children_ids, `[${ids.join(', ')}]`, `children_ids of ${r.node_name}`);
      assert.equal(r.children_names, `[${ids.map((k) => names[k]).join(', ')}]`);
      if (n > 0) assert.ok(Buffer.compare(Buffer.from(names[n - 1]), Buffer.from(r.node_name)) < 0, 'sorted by name');
    }
  });

}

test('interval cap: FrameworkInstruction and BirInstruction rows of a long capture follow the rule member by member', async () => {
  // The tiny program (970 instructions) run for 1M records executes each instruction
  // hundreds of times, so FrameworkInstruction and BirInstruction rows need more than 64
  // intervals and the halving rule (docs/processing.md) runs. Its ~314K instruction records
  // are also more than the Bir members the roll-up collects before adding them row by row
  // (2^16, rollup_tables.c), so that happens mid-run, several times, as well as at the end.
  const cap2 = join(DIR, 'cap2'), prof2 = join(DIR, 'prof2');
  execFileSync(BIN, ['synth', '--preset', 'tiny', '--events', '1000000', '--out', cap2, '--seed', '3']);
  execFileSync(BIN, ['process', cap2, '--output-file', prof2]);
  const devices2 = profileLayout(prof2, cap2).devices;
  assert.equal(devices2.length, 2);
  let f;
  // Each row recomputed from its members, the Instruction rows with its key, one by one in
  // the table's order (the pipeline's): a member starting after the row's last interval ends
  // opens a new one, else that one grows; when a 65th is needed, adjacent pairs merge
  // ([first start, later end], values summed) before it is added. Values: tensor_elements
  // and hbm_read_bytes + hbm_write_bytes, absent or negative counting 0.
  const pos = (v) => (v === null || v < 0n ? 0n : v);
  const check = async (table, cols) => {
    const key = `[${cols.join(', ')}]`;
    const want = new Map();
    let members = 0;
    for (const m of await sql(`SELECT ${key} AS k, start_ts AS a, end_ts AS b, tensor_elements AS el,
                                      hbm_read_bytes AS hr, hbm_write_bytes AS hw
                               FROM ${f('Instruction')} WHERE ${cols[0]} IS NOT NULL ORDER BY file_row_number`)) {
      const k = `${m.k}`;
      let w = want.get(k);
      if (!w) want.set(k, (w = { start: m.a, end: m.b, iv: [], uncapped: 0 }));
      if (m.a < w.start) w.start = m.a;
      if (m.b > w.end) w.end = m.b;
      let last = w.iv[w.iv.length - 1];
      if (!last || m.a > last[1]) {
        w.uncapped++;
        if (w.iv.length === 64) {
          const h = [];
          for (let i = 0; i < 64; i += 2) {
            const [x, y] = [w.iv[i], w.iv[i + 1]];
            h.push([x[0], y[1] > x[1] ? y[1] : x[1], x[2] + y[2], x[3] + y[3]]);
          }
          w.iv = h;
        }
        w.iv.push((last = [m.a, m.b, 0n, 0n]));
      } else if (m.b > last[1]) {
        last[1] = m.b;
      }
      last[2] += pos(m.el);
      last[3] += pos(m.hr) + pos(m.hw);
      members++;
    }
    const rows = await sql(`SELECT ${key} AS k, start_ts, end_ts, time_intervals, element_count_per_interval AS el,
                                   hbm_transfer_size_per_interval AS hbm FROM ${f(table)}`);
    let halved = false;
    for (const r of rows) {
      const w = want.get(`${r.k}`);
      assert.ok(w, `${table}: unexpected row ${r.k}`);
      assert.equal(r.start_ts, w.start, `${table} ${r.k}: start_ts`);
      assert.equal(r.end_ts, w.end, `${table} ${r.k}: end_ts`);
      assert.equal(r.time_intervals, `[${w.iv.map((v) => `[${v[0]}, ${v[1]}]`).join(', ')}]`, `${table} ${r.k}`);
      assert.deepEqual(r.el, w.iv.map((v) => v[2]), `${table} ${r.k}: element_count_per_interval`);
      assert.deepEqual(r.hbm, w.iv.map((v) => v[3]), `${table} ${r.k}: hbm_transfer_size_per_interval`);
      if (w.uncapped > 64) halved = true;
    }
    assert.equal(rows.length, want.size, `${table}: one row per key`);
    assert.ok(halved, `${table}: some row needed more than 64 intervals, so the cap was exercised`);
    return members;
  };
  // Each core's device profile on its own: its roll-ups from its own Instruction rows.
  for (const d of devices2) {
    f = (t) => `read_parquet('${join(d.dir, `${t}.parquet`).replaceAll("'", "''")}')`;
    await check('FrameworkInstruction', ['raw_framework_id']);
    assert.ok((await check('BirInstruction', ['raw_bir_id', 'pcore_idx'])) > 2 ** 16, `${d.name}: Bir members`);
  }
});
