// process_events.test.mjs — the event and lookup tables of `nxprof process`
// (SemaphoreUpdate, CcOp, CcInstruction, CcStream, Throttle, ThrottleSummary,
// Error, ExecutionInfo, DeviceProfileList, StackFrame*, Instruction.stack_frame_ids)
// on a tiny synth capture (seed 5, two cores, so it has collectives), read back
// with DuckDB and compared with values computed here straight from the
// .nxprog/.nxtrace bytes, decoded per docs/capture-format.md without nxprof's
// readers. Derivation rules checked are those of docs/processing.md ("Events"). The run
// writes a system profile (with DeviceProfileList) and one device profile per trace
// (docs/architecture.md, "Output layout"); each device profile is checked against its own
// trace alone, so a row of another core in it fails the counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-events-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5', '--cores', '2']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
const { system: SYSTEM, devices: DEVICES } = profileLayout(PROF, CAP);

const reference = readFileSync(`${TEST_DATA}/reference/profile-schema-7.4.0.tsv`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));

// ---------------------------------------------------------------- decoding --

const walk = (d) => readdirSync(d).flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? walk(p) : [p];
});
const files = walk(CAP);
// Capture order, as the processor uses it: sessions and programs sorted, traces by (device, core).
const traceFiles = files.filter((p) => /\/trace_[0-9a-f]{16}_nd\d+_nc\d+\.nxtrace$/.test(p)).sort((a, b) => {
  const k = (p) => p.match(/_nd(\d+)_nc(\d+)\.nxtrace$/).slice(1).map(Number);
  const [da, ca] = k(a), [db, cb] = k(b);
  return da - db || ca - cb;
});
const progFiles = files.filter((p) => /\/program_[0-9a-f]{16}\.nxprog$/.test(p)).sort();

function decodeProgram(path) {
  const b = readFileSync(path);
  assert.equal(b.subarray(0, 8).toString('latin1'), 'NXPROG\0\0');
  const tocN = b.readUInt32LE(16), tocSize = b.readUInt32LE(20), tocOff = Number(b.readBigUInt64LE(24));
  const sec = {};
  for (let i = 0; i < tocN; i++) {
    const at = tocOff + i * tocSize;
    sec[b.readUInt32LE(at)] = { size: b.readUInt32LE(at + 4), off: Number(b.readBigUInt64LE(at + 8)),
      count: Number(b.readBigUInt64LE(at + 16)) };
  }
  const str = (ref) => {
    const s = sec[1].off + ref;
    return b.subarray(s, b.indexOf(0, s)).toString('utf8');
  };
  const recs = (id, fn) => {
    const s = sec[id];
    if (!s) return [];
    return Array.from({ length: s.count }, (_, i) => fn(s.off + i * s.size));
  };
  const i64 = (at) => b.readBigInt64LE(at);
  const pr = sec[2].off;
  return {
    hash: basename(path).slice(8, 24),
    networkName: str(b.readUInt32LE(pr)),
    ccParticipants: i64(pr + 40),
    numSubgraphs: i64(pr + 72),
    ccCores: b.readUInt32LE(sec[3].off + 112),
    instrs: recs(4, (at) => ({ pc: b.readUInt32LE(at), engine: b[at + 4], frame: i64(at + 88 + 8 * 5) })),
    queues: recs(5, (at) => str(b.readUInt32LE(at))),
    semaphores: recs(8, (at) => str(b.readUInt32LE(at))),
    collectives: recs(9, (at) => ({
      operation: str(b.readUInt32LE(at)), algorithm: str(b.readUInt32LE(at + 4)), dtype: str(b.readUInt32LE(at + 8)),
      replicaGroup: str(b.readUInt32LE(at + 12)), opId: i64(at + 16), numElements: i64(at + 24),
      streamId: i64(at + 32), streamIndex: i64(at + 40), inputSize: i64(at + 48), outputSize: i64(at + 56),
      replicaGroupId: i64(at + 64), triggerEngine: b[at + 72],
    })),
    streams: recs(10, (at) => ({ id: i64(at), index: i64(at + 8), cores: str(b.readUInt32LE(at + 16)) })),
    frames: recs(11, (at) => ({ parent: i64(at), file: str(b.readUInt32LE(at + 8)),
      fn: str(b.readUInt32LE(at + 12)), line: b.readUInt32LE(at + 16) })),
    str,
  };
}

const progs = Object.fromEntries(progFiles.map((p) => { const g = decodeProgram(p); return [g.hash, g]; }));

const text = (b, at, n) => { const s = b.subarray(at, at + n); const z = s.indexOf(0); return (z < 0 ? s : s.subarray(0, z)).toString('latin1'); };
const NO_TICKS = 0xFFFFFFFFFFFFFFFFn;

function decodeTrace(path, index) {
  const b = readFileSync(path);
  assert.equal(b.subarray(0, 8).toString('latin1'), 'NXTRACE\0');
  const headerSize = b.readUInt32LE(12), recordSize = b.readUInt32LE(16);
  const num = BigInt(b.readUInt32LE(32)), den = BigInt(b.readUInt32LE(36));
  const epoch = b.readBigInt64LE(40);
  const ns = (ticks) => epoch + (ticks * den) / num;
  const t = {
    index, path, prog: progs[b.readBigUInt64LE(24).toString(16).padStart(16, '0')],
    pcores: b.readUInt32LE(20), device: b.readUInt32LE(56), nc: b.readUInt32LE(60), pid: b.readUInt32LE(64),
    session: b.readBigInt64LE(72), model: b.readBigInt64LE(80), instance: text(b, 88, 32), recs: [],
  };
  for (let at = headerSize; at + recordSize <= b.length; at += recordSize) {
    const kind = b[at];
    const r = { kind, pcore: b[at + 1], start: ns(b.readBigUInt64LE(at + 8)) };
    if ([1, 3, 5, 6, 7, 9].includes(kind)) r.end = ns(b.readBigUInt64LE(at + 16));
    switch (kind) {
      case 1: r.engine = b[at + 2]; r.pc = b.readUInt32LE(at + 4); break;
      case 4: Object.assign(r, { sem: b.readUInt16LE(at + 2), value: b.readInt32LE(at + 4), sourceKind: b[at + 16],
        op: b[at + 17], timing: b[at + 18], flags: b[at + 19], source: b.readUInt16LE(at + 20),
        mode: b.readInt32LE(at + 24) }); break;
      case 5: { const tr = b.readBigUInt64LE(at + 24);
        Object.assign(r, { coll: b.readUInt32LE(at + 4), trigger: tr === NO_TICKS ? null : ns(tr) }); break; }
      case 6: { const tr = b.readBigUInt64LE(at + 24);
        Object.assign(r, { core: b[at + 2], trigEngine: b[at + 3], desc: b.readUInt32LE(at + 4),
          trigger: tr === NO_TICKS ? null : ns(tr) }); break; }
      case 7: Object.assign(r, { mech: b[at + 2], k: b.readUInt16LE(at + 4), n: b.readUInt16LE(at + 6) }); break;
      case 8: Object.assign(r, { type: b[at + 2], typeId: b.readUInt32LE(at + 4), payload: b.readBigUInt64LE(at + 16),
        desc: b.readUInt32LE(at + 24), meta: b.readUInt32LE(at + 28) }); break;
      case 9: r.index = b.readUInt32LE(at + 4); break;
    }
    t.recs.push(r);
  }
  t.first = t.recs.reduce((m, r) => (m === null || r.start < m ? r.start : m), null);
  t.last = t.recs.reduce((m, r) => { const e = r.end ?? r.start; return m === null || e > m ? e : m; }, null);
  return t;
}
const traces = traceFiles.map(decodeTrace);
const recsIn = (ts, kind) => ts.flatMap((t) => t.recs.filter((r) => r.kind === kind).map((r) => ({ t, r })));

const ENGINE_DISPLAY = ['Tensor', 'Vector', 'Scalar', 'GpSimd', 'Sync'];
const ENGINE_HW = ['PE', 'DVE', 'ACT', 'Pool', 'SP'];
const SEM_OPS = ['sem_set', 'sem_inc', 'sem_dec'];
const TIMINGS = [null, 'start', 'complete'];
const ERROR_TYPES = ['Custom Notification', 'Errors', 'Warnings'];
const absent = (v) => (v === -1n ? null : v);

// ---------------------------------------------------------------- reading --

const { sql } = await openDuckDB();
const fileIn = (dir, t) => `read_parquet('${join(dir, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;
// Order-independent comparison: both sides as sorted JSON lines, every integer
// (JS number or bigint: DuckDB gives INT64 as bigint, INT32 as number) as text.
const canon = (rows) => rows.map((r) => JSON.stringify(r, (_, v) =>
  (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)) ? String(v) : v))).sort();
const big = (v) => (v === null || v === undefined ? null : BigInt(v));
const assertSorted = (rows, key, what) => {
  for (let i = 1; i < rows.length; i++)
    assert.ok(BigInt(rows[i - 1][key]) <= BigInt(rows[i][key]), `${what} not sorted by ${key} at row ${i}`);
};
const close = (got, want, what) => {
  if (want === null) return assert.equal(got, null, what);
  assert.ok(got !== null && Math.abs(got - want) <= 1e-6 * Math.abs(want) + 1e-9, `${what}: got ${got}, want ${want}`);
};

// ---------------------------------------------------------------- tests --

test('the capture has every kind of event this test needs', () => {
  assert.equal(traces.length, 2);
  for (const t of traces) {
    const first = t.recs.find((r) => r.kind === 9);
    const inFirst = (k) => t.recs.some((r) => r.kind === k && r.start >= first.start && r.start <= first.end);
    assert.ok(inFirst(7), 'throttle in the first execution');
    assert.ok(t.recs.some((r) => r.kind === 8 && r.type === 2 && r.start <= first.end), 'error in the first execution');
    assert.ok(t.recs.some((r) => r.kind === 8 && r.type === 0 && r.start <= first.end), 'custom notification');
  }
  for (const k of [4, 5, 6]) for (const t of traces) assert.ok(recsIn([t], k).length > 0, `records of kind ${k}`);
  assert.ok(Object.values(progs)[0].frames.length > 0, 'stack frames');
  assert.equal(DEVICES.length, 2, 'one device profile per trace');
});

test('DeviceProfileList: one row per device profile, named as its directory, from the header', async () => {
  const rows = await sql(`SELECT device_profile_name, instance_id, process_id, nc_id, session_id, model_id
    FROM ${fileIn(SYSTEM, 'DeviceProfileList')} ORDER BY file_row_number`);
  const session = basename(dirname(dirname(traces[0].path)));
  assert.deepEqual(readdirSync(join(PROF, 'devices')).sort(), DEVICES.map((d) => d.name).sort(),
    'one directory under devices/ per trace');
  assert.deepEqual(rows.map((r) => r.device_profile_name).sort(), readdirSync(join(PROF, 'devices')).sort());
  assert.deepEqual(rows.map((r) => [r.device_profile_name, r.instance_id, BigInt(r.process_id), BigInt(r.nc_id),
    big(r.session_id), big(r.model_id)]),
  traces.map((t) => [DEVICES.find((d) => d.trace === t.path).name, t.instance, BigInt(t.pid), BigInt(t.nc),
    absent(t.session), absent(t.model)]));
  assert.equal(`${rows[0].instance_id}_pid_${rows[0].process_id}`, session, 'header agrees with the directory name');
});

test('system profile DeviceProfileList: every required column is present and never null', async () => {
  const required = reference.filter(([t, , , , , req]) => t === 'DeviceProfileList' && req === 'Yes').map(([, f]) => f);
  const [counts] = await sql(`SELECT count(*) AS n, ${
    required.length ? required.map((f, i) => `count("${f}") AS c${i}`).join(', ') : '0 AS none'
  } FROM ${fileIn(SYSTEM, 'DeviceProfileList')}`);
  assert.ok(Number(counts.n) > 0, 'DeviceProfileList has rows');
  required.forEach((f, i) => assert.equal(Number(counts[`c${i}`]), Number(counts.n), `DeviceProfileList.${f} has nulls`));
});

// Dedupe rules (stack_frames.h), recomputed here.
function frameTree(programs) {
  const files = [], fns = [], locs = [], frames = [], idOf = [];
  const intern = (arr, key) => { let i = arr.indexOf(key); if (i < 0) { arr.push(key); i = arr.length - 1; } return i; };
  for (const g of [...programs].sort((a, b) => (a.hash < b.hash ? -1 : 1))) {
    const ids = [];
    for (const f of g.frames) {
      const loc = intern(locs, `${intern(files, f.file)}|${intern(fns, f.fn)}|${f.line}`);
      ids.push(intern(frames, `${loc}|${f.parent < 0n ? -1 : ids[Number(f.parent)]}`));
    }
    idOf.push([g, ids]);
  }
  return { files, fns, locs, frames, idOf: new Map(idOf) };
}

// Each device profile against its own trace (traces, recsOf: that trace alone).
for (const D of DEVICES) D.t = traces.find((t) => t.path === D.trace);
for (const D of DEVICES) {
  const own = D.t;
  const traces = [own];
  const recsOf = (kind) => recsIn(traces, kind);
  const file = (t) => fileIn(D.dir, t);
  const rowsOf = (t, cols) => sql(`SELECT ${cols} FROM ${file(t)} ORDER BY file_row_number`);
  const T = (name) => `${D.name}: ${name}`;

  test(T('Metadata: one row naming its core'), async () => {
    const rows = await rowsOf('Metadata', 'neuroncore_idx, neuron_device_idx, profile_name');
    assert.deepEqual(rows.map((r) => [big(r.neuroncore_idx), big(r.neuron_device_idx), r.profile_name]),
      [[BigInt(own.nc), BigInt(own.device), D.name]]);
  });

  test(T('SemaphoreUpdate: one row per semaphore record, values from record and program, sorted'), async () => {
    const rows = await rowsOf('SemaphoreUpdate', 'timestamp, id, value, update_source, double_set_or_clear, update_mode, update_operation_type, update_trigger_timing, pcore_idx');
    const want = recsOf(4).map(({ t, r }) => ({
      timestamp: r.start, id: t.prog.semaphores[r.sem], value: r.value,
      update_source: r.sourceKind === 0 ? ENGINE_DISPLAY[r.source] : r.sourceKind === 1 ? t.prog.queues[r.source] : `CC${r.source}`,
      double_set_or_clear: (r.flags & 1) === 1, update_mode: r.mode, update_operation_type: SEM_OPS[r.op],
      update_trigger_timing: TIMINGS[r.timing], pcore_idx: BigInt(r.pcore),
    }));
    assert.equal(rows.length, want.length);
    assert.deepEqual(canon(rows.map((r) => ({ ...r, timestamp: big(r.timestamp), pcore_idx: big(r.pcore_idx) }))), canon(want));
    assertSorted(rows, 'timestamp', 'SemaphoreUpdate');
    // Both engine and DMA-queue sources occur, with their names.
    const sources = new Set(rows.map((r) => r.update_source));
    assert.ok([...sources].some((x) => ENGINE_DISPLAY.includes(x)), 'an engine source');
    assert.ok([...sources].some((x) => traces[0].prog.queues.includes(x)), 'a queue source');
  });

  // n = ranks in the first inner list of replica_group, else cc_participant_count.
  const ranks = (group, fallback) => {
    const m = group.match(/^\s*\[\s*\[?([^\]]*)\]/);
    const n = m ? m[1].split(',').filter((s) => s.trim() !== '').length : 0;
    return n > 0 ? n : Number(fallback);
  };
  const busFactor = (op, n) => ({ AllReduce: (2 * (n - 1)) / n, AllGather: (n - 1) / n, ReduceScatter: (n - 1) / n }[op] ?? null);

  test(T('CcOp: one row per cc_op record, collective fields, trigger delay, bandwidths'), async () => {
    const rows = await rowsOf('CcOp', '*');
    const recs = recsOf(5);
    assert.equal(rows.length, recs.length);
    assertSorted(rows, 'start_ts', 'CcOp');
    const want = recs.map(({ t, r }) => {
      const c = t.prog.collectives[r.coll];
      return { start_ts: r.start, end_ts: r.end, duration_ns: r.end - r.start, operation: c.operation, algorithm: c.algorithm,
        num_elements: c.numElements, dtype: c.dtype, op_id: c.opId, stream_id: c.streamId, stream_index: c.streamIndex,
        trigger_engine: ENGINE_HW[c.triggerEngine], input_size: absent(c.inputSize), output_size: absent(c.outputSize),
        trigger_start_ts: r.trigger, cc_trigger_start_delay: r.trigger === null ? null : r.start - r.trigger,
        replica_group_id: absent(c.replicaGroupId), replica_group: c.replicaGroup || null };
    });
    const { file_row_number: _f, algorithm_bandwidth: _a, bus_bandwidth: _b, ...first } = rows[0];
    assert.deepEqual(Object.keys(first).sort(), Object.keys(want[0]).sort(), 'CcOp columns');
    assert.deepEqual(canon(rows.map(({ file_row_number: _x, algorithm_bandwidth: _y, bus_bandwidth: _z, ...r }) => r)), canon(want));
    for (const r of rows) {
      const dur = Number(r.duration_ns);
      const bytes = Math.max(Number(r.input_size ?? -1), Number(r.output_size ?? -1));
      const alg = bytes * 1e9 / dur;
      close(r.algorithm_bandwidth, alg, 'algorithm_bandwidth');
      const c = traces[0].prog.collectives.find((x) => x.opId === BigInt(r.op_id));
      const n = ranks(c.replicaGroup, traces[0].prog.ccParticipants);
      assert.equal(n, 2, 'two ranks in the tiny capture');
      // AllReduce over two ranks: busbw = algbw x 2(n-1)/n = algbw.
      close(r.bus_bandwidth, alg * busFactor(r.operation, n), 'bus_bandwidth');
    }
  });

  test(T('CcInstruction: one row per cc_instr record; CcStream from the program'), async () => {
    const rows = await rowsOf('CcInstruction', 'start_ts, end_ts, duration_ns, core_idx, description, trigger_engine, trigger_start_ts');
    const want = recsOf(6).map(({ t, r }) => ({ start_ts: r.start, end_ts: r.end, duration_ns: r.end - r.start,
      core_idx: BigInt(r.core), description: t.prog.str(r.desc), trigger_engine: ENGINE_HW[r.trigEngine] ?? null,
      trigger_start_ts: r.trigger }));
    assert.equal(rows.length, want.length);
    assertSorted(rows, 'start_ts', 'CcInstruction');
    assert.deepEqual(canon(rows.map((r) => ({ ...r, start_ts: big(r.start_ts), end_ts: big(r.end_ts), duration_ns: big(r.duration_ns),
      core_idx: big(r.core_idx), trigger_start_ts: big(r.trigger_start_ts) }))), canon(want));
    const streams = await rowsOf('CcStream', 'stream_id, stream_index, cc_core_ids');
    const prog = traces[0].prog;
    assert.deepEqual(streams.map((s) => [BigInt(s.stream_id), BigInt(s.stream_index), s.cc_core_ids]),
      prog.streams.map((s) => [s.id, s.index, s.cores]));
  });

  test(T('Throttle: one row per throttle record'), async () => {
    const rows = await rowsOf('Throttle', 'duration, k, n, timestamp, type, pcore_idx');
    const want = recsOf(7).map(({ r }) => ({ duration: r.end - r.start, k: r.k, n: r.n, timestamp: r.start,
      type: `activity_${r.mech}`, pcore_idx: BigInt(r.pcore) }));
    assert.equal(rows.length, want.length);
    assertSorted(rows, 'timestamp', 'Throttle');
    assert.deepEqual(canon(rows.map((r) => ({ ...r, duration: big(r.duration), timestamp: big(r.timestamp), pcore_idx: big(r.pcore_idx) }))), canon(want));
  });

  test(T('ThrottleSummary: per trace and type, union time, percent of span, max achievable util'), async () => {
    const rows = await rowsOf('ThrottleSummary', 'nc_idx, throttle_type, throttle_active_time_ns, throttle_active_time_percent, max_achievable_util_with_throttling_percent');
    const want = [];
    for (const t of traces) {
      const byType = new Map();
      for (const r of t.recs.filter((x) => x.kind === 7)) {
        const k = `activity_${r.mech}`;
        if (!byType.has(k)) byType.set(k, []);
        byType.get(k).push(r);
      }
      for (const [type, rs] of [...byType].sort((a, b) => Number(a[0].slice(9)) - Number(b[0].slice(9)))) {
        // Union of [start, end] intervals.
        const iv = rs.map((r) => [r.start, r.end]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        let active = 0n, [cs, ce] = iv[0];
        for (const [s, e] of iv.slice(1)) {
          if (s > ce) { active += ce - cs; cs = s; ce = e; } else if (e > ce) ce = e;
        }
        active += ce - cs;
        const span = Number(t.last - t.first);
        const lost = rs.reduce((a, r) => a + (1 - r.k / r.n) * Number(r.end - r.start), 0);
        want.push({ nc_idx: t.nc, type, active, pct: (100 * Number(active)) / span,
          util: Math.min(100, Math.max(0, 100 * (1 - lost / (span * t.pcores)))) });
      }
    }
    assert.equal(rows.length, want.length);
    rows.forEach((r, i) => {
      const w = want[i];
      assert.equal(r.nc_idx, w.nc_idx);
      assert.equal(r.throttle_type, w.type);
      assert.equal(BigInt(r.throttle_active_time_ns), w.active);
      close(r.throttle_active_time_percent, w.pct, 'percent');
      close(r.max_achievable_util_with_throttling_percent, w.util, 'util');
      assert.ok(w.util < 100, 'throttling lowers the achievable utilisation');
    });
  });

  test(T('Error: one row per error record, payload as lowercase hex'), async () => {
    const rows = await rowsOf('Error', 'description, error_type_id, metadata, metadata_hex, pcore_idx, timestamp, type');
    const want = recsOf(8).map(({ t, r }) => ({ description: t.prog.str(r.desc), error_type_id: r.typeId,
      metadata: r.meta ? t.prog.str(r.meta) : null, metadata_hex: r.payload.toString(16), pcore_idx: BigInt(r.pcore),
      timestamp: r.start, type: ERROR_TYPES[r.type] }));
    assert.equal(rows.length, want.length);
    assertSorted(rows, 'timestamp', 'Error');
    assert.deepEqual(canon(rows.map((r) => ({ ...r, pcore_idx: big(r.pcore_idx), timestamp: big(r.timestamp) }))), canon(want));
    assert.ok(rows.some((r) => r.type === 'Custom Notification') && rows.some((r) => r.type === 'Warnings'));
  });

  test(T('ExecutionInfo: one row per execution record; row_count = instructions starting in its span'), async () => {
    const rows = await rowsOf('ExecutionInfo', 'execution_index, neff_name, execution_start_ts, execution_end_ts, num_subgraphs, row_count');
    const want = recsOf(9).map(({ t, r }) => ({ execution_index: r.index, neff_name: t.prog.networkName || null,
      execution_start_ts: r.start, execution_end_ts: r.end, num_subgraphs: t.prog.numSubgraphs === -1n ? null : Number(t.prog.numSubgraphs),
      row_count: BigInt(t.recs.filter((x) => x.kind === 1 && x.start >= r.start && x.start <= r.end).length) }));
    assert.equal(rows.length, want.length);
    assertSorted(rows, 'execution_start_ts', 'ExecutionInfo');
    assert.deepEqual(canon(rows.map((r) => ({ ...r, execution_start_ts: big(r.execution_start_ts), execution_end_ts: big(r.execution_end_ts),
      row_count: big(r.row_count) }))), canon(want));
    const total = rows.reduce((a, r) => a + Number(r.row_count), 0);
    assert.equal(total, recsOf(1).length, 'every instruction of synth lies in one execution');
  });

  test(T('StackFrame tables: deduplicated names, locations and frames'), async () => {
    const tree = frameTree(traces.map((t) => t.prog));
    const fileRows = await rowsOf('StackFrameFileName', 'id, name');
    assert.deepEqual(fileRows.map((r) => [r.id, r.name]), tree.files.map((n, i) => [String(i), n]));
    const fnRows = await rowsOf('StackFrameFunctionName', 'id, name');
    assert.deepEqual(fnRows.map((r) => [r.id, r.name]), tree.fns.map((n, i) => [String(i), n]));
    assert.ok(new Set(fnRows.map((r) => r.name)).size === fnRows.length, 'function names are distinct');
    const locRows = await rowsOf('StackFrameFileLocation', 'id, file_name_id, function_name_id, line_number');
    assert.deepEqual(locRows.map((r) => [r.id, `${r.file_name_id}|${r.function_name_id}|${r.line_number}`]),
      tree.locs.map((l, i) => [String(i), l]));
    const frameRows = await rowsOf('StackFrame', 'id, file_location_id, parent_frame_id');
    assert.deepEqual(frameRows.map((r) => [r.id, `${r.file_location_id}|${r.parent_frame_id}`]),
      tree.frames.map((f, i) => [String(i), f]));
    assert.equal(frameRows.filter((r) => r.parent_frame_id === '-1').length >= 1, true);
  });

  test(T('Instruction.stack_frame_ids: the frame chain, outermost first'), async () => {
    const tree = frameTree(traces.map((t) => t.prog));
    const rows = await sql(`SELECT start_ts, engine, pc, stack_frame_ids FROM ${file('Instruction')}`);
    const ENGINES = ['tensor', 'vector', 'scalar', 'gpsimd', 'sync'];
    const want = recsOf(1).map(({ t, r }) => {
      const ins = t.prog.instrs.find((x) => x.engine === r.engine && x.pc === r.pc);
      let path = null;
      if (ins.frame >= 0n) {
        const ids = tree.idOf.get(t.prog), chain = [];
        for (let f = Number(ins.frame); f >= 0; f = Number(t.prog.frames[f].parent)) chain.unshift(ids[f]);
        path = `[${chain.join(', ')}]`;
      }
      return { start_ts: r.start, engine: ENGINES[r.engine], pc: BigInt(r.pc), stack_frame_ids: path };
    });
    assert.equal(rows.length, want.length);
    assert.deepEqual(canon(rows.map((r) => ({ ...r, start_ts: big(r.start_ts), pc: big(r.pc) }))), canon(want));
    assert.ok(want.some((w) => w.stack_frame_ids && w.stack_frame_ids.split(',').length >= 3), 'chains of depth 3');
  });

  for (const table of ['SemaphoreUpdate', 'CcOp', 'CcInstruction', 'CcStream', 'Throttle', 'ThrottleSummary', 'Error',
    'ExecutionInfo', 'StackFrame', 'StackFrameFileLocation', 'StackFrameFileName', 'StackFrameFunctionName']) {
    test(T(`${table}: every required column is present and never null`), async () => {
      const required = reference.filter(([t, , , , , req]) => t === table && req === 'Yes').map(([, f]) => f);
      const [counts] = await sql(`SELECT count(*) AS n, ${
        required.length ? required.map((f, i) => `count("${f}") AS c${i}`).join(', ') : '0 AS none'
      } FROM ${file(table)}`);
      assert.ok(Number(counts.n) > 0, `${table} has rows`);
      required.forEach((f, i) => assert.equal(Number(counts[`c${i}`]), Number(counts.n), `${table}.${f} has nulls`));
    });
  }
}
