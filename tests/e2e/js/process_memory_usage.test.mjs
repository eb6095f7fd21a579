// process_memory_usage.test.mjs — SbufUsage and PsumUsage of `nxprof process`, read back
// with DuckDB and checked against values computed here, independently of nxprof's C code,
// from the capture bytes: the program's HARDWARE and MEMORY_ALLOCATIONS sections are
// decoded below per docs/capture-format.md, the trace records with tests/e2e/js/lib/nxcapture.mjs,
// and the samples follow docs/processing.md, "SbufUsage, PsumUsage" (computed here the
// plain way: every interval of every allocation over every bucket, exact BigInt byte-ns).
// The run writes one device profile per trace (docs/architecture.md, "Output layout"); each
// is checked against its own trace alone.
// Also: a capture without the section (the spec's worked example, a 1.0 program, one trace
// and no system files: a lone device profile) writes neither table (nor SbufAllocation), a
// program whose allocations record no address (end_address 0, as before the field) gives
// the same SbufUsage and no SbufAllocation, and a bad or truncated section is a fatal error
// naming the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCapture, readTrace } from './lib/nxcapture.mjs';
import { requireBin, tempDir, openDuckDB, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const HERE = dirname(fileURLToPath(import.meta.url));
const DIR = tempDir('nxprof-mem-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
const { devices: DEVICES } = profileLayout(PROF, CAP);

const { sql } = await openDuckDB();

// ------------------------------------------------------------ program decoding (the spec)
// TOC entry: id u32 @0, record_size u32 @4, offset u64 @8, count u64 @16.
// HARDWARE: sbuf_partition_bytes u64 @64, psum_partition_bytes u64 @72,
//           sbuf_partitions u32 @104, psum_banks u32 @108.
// MEMORY_ALLOCATIONS (id 12, 32 bytes): name str @0, memory u8 @4, bank u8 @5,
//   first_partition u16 @6, partition_count u16 @8, live_engine u8 @10, free_engine u8 @11,
//   live_pc u32 @12, free_pc u32 @16, bytes_per_partition u64 @24.
function decodeProgram(path) {
  const b = readFileSync(path);
  const tocCount = b.readUInt32LE(16), tocOff = Number(b.readBigUInt64LE(24));
  const sec = new Map();
  for (let i = 0; i < tocCount; i++) {
    const at = tocOff + 32 * i;
    sec.set(b.readUInt32LE(at), { size: b.readUInt32LE(at + 4), off: Number(b.readBigUInt64LE(at + 8)),
      count: Number(b.readBigUInt64LE(at + 16)) });
  }
  const S = sec.get(1), H = sec.get(3).off;
  const str = (ref) => b.subarray(S.off + ref, b.indexOf(0, S.off + ref)).toString('utf8');
  const hw = { sbufPartBytes: b.readBigUInt64LE(H + 64), psumPartBytes: b.readBigUInt64LE(H + 72),
    partitions: BigInt(b.readUInt32LE(H + 104)), banks: BigInt(b.readUInt32LE(H + 108)) };
  const A = sec.get(12);
  const allocs = [];
  for (let i = 0; A && i < A.count; i++) {
    const at = A.off + i * A.size;
    allocs.push({ index: i, offset: at, name: str(b.readUInt32LE(at)), memory: b[at + 4], bank: b[at + 5],
      first: b.readUInt16LE(at + 6), count: b.readUInt16LE(at + 8), liveEngine: b[at + 10],
      freeEngine: b[at + 11], livePc: b.readUInt32LE(at + 12), freePc: b.readUInt32LE(at + 16),
      bytes: b.readBigUInt64LE(at + 24) });
  }
  return { version: [b.readUInt16LE(8), b.readUInt16LE(10)], hw, allocs, sec };
}

// Bytes per column while live: [whole memory, group 0/32/64/96 | bank 0..7].
function deltas(a) {
  const d = new Array(9).fill(0n);
  d[0] = a.bytes * BigInt(a.count);
  if (a.memory === 0) {
    for (let g = 0; g < 4; g++) {
      const lo = Math.max(a.first, 32 * g), hi = Math.min(a.first + a.count, 32 * g + 32);
      if (hi > lo) d[1 + g] = a.bytes * BigInt(hi - lo);
    }
  } else if (a.bank < 8) {
    d[1 + a.bank] = a.bytes * BigInt(a.count);
  }
  return d;
}

function capacities(hw) {
  const sb = [hw.partitions * hw.sbufPartBytes], ps = [hw.partitions * hw.psumPartBytes];
  for (let g = 0n; g < 4n; g++) {
    const n = hw.partitions > 32n * g ? (hw.partitions - 32n * g < 32n ? hw.partitions - 32n * g : 32n) : 0n;
    sb.push(n * hw.sbufPartBytes);
  }
  for (let k = 0n; k < 8n; k++) ps.push(k < hw.banks ? hw.partitions * (hw.psumPartBytes / hw.banks) : 0n);
  return [sb, ps];
}

// ------------------------------------------------------------ expected samples
const W = 10000n;
const cap = findCapture(CAP);
const progs = new Map([...cap.programs].map(([h, p]) => [h, decodeProgram(p)]));
const floorDiv = (a, b) => (a >= 0n ? a / b : -((-a + b - 1n) / b));

// The live intervals of one trace's allocations and the capacities of its memories.
function expectationsOf(path) {
  const intervals = [];            // { mem, pcore, start, end, d }
  const capOf = new Map();         // mem|pcore -> capacity per column (BigInt)
  const t = readTrace(path);
  const g = progs.get(t.header.programHash);
  if (g.allocs.length === 0) return { intervals, capOf };
  const caps = capacities(g.hw);
  for (let p = 0; p < t.header.pcoreCount; p++)
    for (const mem of [0, 1]) {
      const k = `${mem}|${p}`;
      const c = capOf.get(k) ?? new Array(9).fill(0n);
      caps[mem].forEach((v, i) => { c[i] += v; });
      capOf.set(k, c);
    }
  const byInstr = new Map();
  for (const a of g.allocs) {
    for (const [role, e, pc] of [['live', a.liveEngine, a.livePc], ['free', a.freeEngine, a.freePc]]) {
      const k = `${e}:${pc}`;
      if (!byInstr.has(k)) byInstr.set(k, { live: [], free: [] });
      byInstr.get(k)[role].push(a);
    }
  }
  const state = new Map();       // pcore|alloc -> { live, since, freeAt }
  const exec = new Map();        // pcore -> { start, end }
  const st = (p, a) => {
    const k = `${p}|${a.index}`;
    if (!state.has(k)) state.set(k, { live: false, a, pcore: p });
    return state.get(k);
  };
  const close = (s) => {
    intervals.push({ mem: s.a.memory, pcore: s.pcore, start: s.since, end: s.freeAt, d: deltas(s.a) });
    s.live = false;
  };
  // the pipeline's order within one trace: start time, then file order
  const recs = t.records.filter((r) => r.kind === 1 || r.kind === 9)
    .sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : x.seq - y.seq));
  for (const r of recs) {
    if (r.kind === 9) { exec.set(r.pcore, { start: r.start, end: r.end }); continue; }
    const e = byInstr.get(`${r.engine}:${r.pc}`);
    if (!e) continue;
    const now = r.start;
    for (const s of state.values()) if (s.live && s.freeAt <= now) close(s);
    for (const a of e.live) {
      const s = st(r.pcore, a);
      if (!s.live) Object.assign(s, { live: true, since: now });
      const x = exec.get(r.pcore);
      s.freeAt = x && x.start <= now && now <= x.end ? x.end : r.end;
    }
    for (const a of e.free) {
      const s = st(r.pcore, a);
      if (s.live) s.freeAt = r.end;
    }
  }
  for (const s of state.values()) if (s.live) close(s);
  return { intervals, capOf };
}

function expectedRows(mem, { intervals, capOf }) {
  const rows = [];
  for (const [k, c] of capOf) {
    const [m, p] = k.split('|').map(Number);
    if (m !== mem) continue;
    const mine = intervals.filter((x) => x.mem === mem && x.pcore === p);
    if (mine.length === 0) continue;
    const first = mine.reduce((v, x) => (x.start < v ? x.start : v), mine[0].start);
    const last = mine.reduce((v, x) => (x.end > v ? x.end : v), mine[0].end);
    const b0 = floorDiv(first, W), bE = floorDiv(last + W - 1n, W);
    const vals = new Map();
    for (const x of mine) {
      for (let b = floorDiv(x.start, W); x.end > x.start && b <= floorDiv(x.end - 1n, W); b++) {
        const lo = x.start > b * W ? x.start : b * W, hi = x.end < (b + 1n) * W ? x.end : (b + 1n) * W;
        const v = vals.get(b) ?? new Array(9).fill(0n);
        x.d.forEach((d, i) => { v[i] += d * (hi - lo); });
        vals.set(b, v);
      }
    }
    const at = (b) => vals.get(b) ?? new Array(9).fill(0n);
    const eq = (u, v) => u.every((x, i) => x === v[i]);
    for (let b = b0; b <= bE; b++) {
      const v = at(b);
      if (b === b0 || b === bE || !eq(v, at(b - 1n)) || !eq(v, at(b + 1n)))
        rows.push({ timestamp: b * W, pcore: p, pct: v.map((x, i) => (c[i] ? (100 * Number(x)) / (1e4 * Number(c[i])) : null)) });
    }
  }
  return rows.sort((x, y) => (x.timestamp < y.timestamp ? -1 : x.timestamp > y.timestamp ? 1 : x.pcore - y.pcore));
}

const COLS = [
  ['avg_util_percent', 'partition_0_util_percent', 'partition_32_util_percent', 'partition_64_util_percent',
    'partition_96_util_percent'],
  ['avg_util_percent', ...Array.from({ length: 8 }, (_, k) => `bank_${k}_util_percent`)],
];

async function compare(mem, table, d) {
  const want = expectedRows(mem, d.exp);
  const got = await sql(`SELECT * FROM '${d.dir}/${table}.parquet'`);   // file order = written order
  assert.equal(got.length, want.length, `${table}: row count`);
  for (let i = 0; i < want.length; i++) {
    const g = got[i], w = want[i];
    assert.equal(g.timestamp, w.timestamp, `${table} row ${i}: timestamp`);
    assert.equal(Number(g.pcore_idx), w.pcore, `${table} row ${i}: pcore_idx`);
    COLS[mem].forEach((c, k) => {
      if (w.pct[k] === null) assert.equal(g[c], null, `${table} row ${i}: ${c} null`);
      else assert.ok(Math.abs(g[c] - w.pct[k]) <= 1e-5 * Math.max(1, w.pct[k]),
        `${table} row ${i} (${w.timestamp}): ${c} = ${g[c]}, expected ${w.pct[k]}`);
    });
  }
  return { want, got };
}

test('synth writes MEMORY_ALLOCATIONS: SBUF and PSUM, in a 1.2 program', () => {
  assert.equal(progs.size, 1);
  const g = [...progs.values()][0];
  assert.deepEqual(g.version, [1, 2]);
  assert.ok(g.allocs.some((a) => a.memory === 0 && a.count === 128), 'SBUF tiles over all partitions');
  assert.ok(g.allocs.some((a) => a.memory === 0 && a.first === 64 && a.count === 64), 'a partial SBUF range');
  assert.ok(g.allocs.some((a) => a.memory === 1 && a.bank === 2), 'PSUM banks beyond 0');
});

for (const d of DEVICES) d.exp = expectationsOf(d.trace);

for (const d of DEVICES) {
  test(`${d.name}: allocations live on its core`, () => {
    assert.ok(d.exp.intervals.length > 0);
  });

  test(`${d.name}: SbufUsage matches the allocations and its trace's instruction records`, async () => {
    const { want } = await compare(0, 'SbufUsage', d);
    const avg = want.map((r) => r.pct[0]);
    assert.ok(Math.max(...avg) > 0.5, 'occupancy rises');
    assert.ok(avg.filter((v) => v === 0).length >= 2, 'and falls back to 0');
    assert.ok(want.some((r) => r.pct[1] !== r.pct[3]), 'partition groups differ (the rope table halves)');
  });

  test(`${d.name}: PsumUsage matches the allocations and its trace's instruction records`, async () => {
    const { want } = await compare(1, 'PsumUsage', d);
    assert.ok(want.some((r) => r.pct[3] > 0), 'bank 2 used');
    assert.ok(want.some((r) => r.pct[0] === 0));
  });

  test(`${d.name}: the sample timestamps line up with DmaUsage buckets`, async () => {
    const [r] = await sql(`SELECT count(*) AS n FROM '${d.dir}/SbufUsage.parquet' WHERE timestamp % 10000 <> 0`);
    assert.equal(Number(r.n), 0);
    const [u] = await sql(`SELECT count(*) AS n FROM '${d.dir}/DmaUsage.parquet' WHERE timestamp % 10000 <> 0`);
    assert.equal(Number(u.n), 0);
  });
}

// The worked example of docs/capture-format.md: a 1.0 program without MEMORY_ALLOCATIONS.
function hexBlock(doc, name) {
  const m = new RegExp('```hex ' + name + '\\n([\\s\\S]*?)```').exec(doc);
  const bytes = m[1].split('\n').flatMap((l) => l.split('#')[0].trim().split(/\s+/).filter(Boolean))
    .map((h) => parseInt(h, 16));
  return Buffer.from(bytes);
}

test('a capture without the section writes neither table', () => {
  const doc = readFileSync(join(HERE, '../../../docs/capture-format.md'), 'utf8');
  const sess = join(DIR, 'doc', 'i-0123456789abcdef0_pid_4242', '1766072156592459482');
  mkdirSync(sess, { recursive: true });
  writeFileSync(join(sess, 'program_fe4043b08800d829.nxprog'), hexBlock(doc, 'program'));
  writeFileSync(join(sess, 'trace_fe4043b08800d829_nd0_nc0.nxtrace'), hexBlock(doc, 'trace'));
  const out = join(DIR, 'doc-prof');
  execFileSync(BIN, ['process', join(DIR, 'doc'), '--output-file', out]);
  const files = readdirSync(out);
  assert.ok(files.includes('Instruction.parquet'), 'one trace and no system files: the device profile is out itself');
  assert.ok(!files.includes('devices') && !files.includes('DeviceProfileList.parquet'), files.join(' '));
  assert.ok(!files.some((f) => f.startsWith('SbufUsage') || f.startsWith('PsumUsage') || f.startsWith('SbufAllocation')),
    files.join(' '));
});

test('allocations without an address: the same SbufUsage, no SbufAllocation', async () => {
  const copy = join(DIR, 'no-address');
  cpSync(CAP, copy, { recursive: true });
  const prog = [...findCapture(copy).programs.values()][0];
  const b = readFileSync(prog);
  const g = decodeProgram(prog);
  assert.ok(g.allocs.some((a) => a.memory === 0 && b.readUInt32LE(a.offset + 20) > 0), 'synth records SBUF addresses');
  for (const a of g.allocs) b.writeUInt32LE(0, a.offset + 20);
  writeFileSync(prog, b);
  // The program's name and its traces' program_hash follow its bytes: nxprof's refusal says
  // the new XXH3-64 (Node has no XXH3); rename the files and patch the trace headers (offset 24).
  const out = join(DIR, 'no-address-prof');
  const r = spawnSync(BIN, ['process', copy, '--output-file', out], { encoding: 'utf8' });
  const m = /the content hashes to ([0-9a-f]{16})/.exec(r.stderr);
  assert.ok(r.status === 1 && m, r.stderr);
  const sess = dirname(prog), old = /program_([0-9a-f]{16})\.nxprog$/.exec(prog)[1];
  renameSync(prog, join(sess, `program_${m[1]}.nxprog`));
  for (const f of readdirSync(sess).filter((x) => x.startsWith(`trace_${old}_`))) {
    const t = readFileSync(join(sess, f));
    t.writeBigUInt64LE(BigInt(`0x${m[1]}`), 24);
    writeFileSync(join(sess, f.replace(old, m[1])), t);
    unlinkSync(join(sess, f));
  }
  execFileSync(BIN, ['process', copy, '--output-file', out]);
  const { devices } = profileLayout(out, copy);
  assert.equal(devices.length, DEVICES.length);
  for (const [i, d] of devices.entries()) {
    assert.ok(existsSync(join(DEVICES[i].dir, 'SbufAllocation.parquet')), `${DEVICES[i].name}: SbufAllocation with addresses`);
    assert.ok(!readdirSync(d.dir).some((f) => f.startsWith('SbufAllocation')), `${d.name}: no SbufAllocation`);
    const a = `'${d.dir}/SbufUsage.parquet'`, w = `'${DEVICES[i].dir}/SbufUsage.parquet'`;
    const [r] = await sql(`SELECT (SELECT count(*) FROM (SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${w})) AS x,
      (SELECT count(*) FROM (SELECT * FROM ${w} EXCEPT ALL SELECT * FROM ${a})) AS y, (SELECT count(*) FROM ${w}) AS n`);
    assert.ok(Number(r.n) > 0 && Number(r.x) === 0 && Number(r.y) === 0, `${d.name}: SbufUsage as with addresses`);
  }
});

// Patches the synth capture's program and expects exit 1 with a message naming the file.
function expectFatal(name, patch, needles) {
  const copy = join(DIR, name);
  cpSync(CAP, copy, { recursive: true });
  const prog = [...findCapture(copy).programs.values()][0];
  const b = readFileSync(prog);
  patch(b, decodeProgram(prog));
  writeFileSync(prog, b);
  const out = join(DIR, `${name}-prof`);
  const r = spawnSync(BIN, ['process', copy, '--output-file', out], { encoding: 'utf8' });
  assert.equal(r.status, 1, `${name}: exit status (stderr: ${r.stderr})`);
  assert.ok(r.stderr.includes(prog), `${name}: names ${prog}: ${r.stderr}`);
  for (const n of needles) assert.ok(r.stderr.includes(n), `${name}: '${n}' in ${r.stderr}`);
  assert.ok(!existsSync(out), `${name}: nothing written`);
}

test('a bad allocation record is a fatal error naming the file, record and field', () => {
  expectFatal('bad-partition', (b, g) => { b.writeUInt16LE(120, g.allocs[0].offset + 6); },
    ['MEMORY_ALLOCATIONS record 0', 'first_partition 120 + partition_count 128']);
  expectFatal('bad-bank', (b, g) => {
    const a = g.allocs.find((x) => x.memory === 1);
    b[a.offset + 5] = 8;
  }, ['MEMORY_ALLOCATIONS record', 'bank 8 out of range']);
  expectFatal('bad-pc', (b, g) => { b.writeUInt32LE(999999, g.allocs[1].offset + 16); },
    ['MEMORY_ALLOCATIONS record 1', 'free_pc 999999 is not an instruction']);
  expectFatal('bad-bytes', (b, g) => { b.writeBigUInt64LE(196609n, g.allocs[0].offset + 24); },
    ['MEMORY_ALLOCATIONS record 0', 'bytes_per_partition 196609 out of range']);
  expectFatal('bad-end-address', (b, g) => { b.writeUInt32LE(196609, g.allocs[0].offset + 20); },
    ['MEMORY_ALLOCATIONS record 0', 'end_address 196609 out of range']);
});

test('a truncated allocation section is a fatal error naming the file', () => {
  expectFatal('truncated', (b, g) => {
    const tocOff = Number(b.readBigUInt64LE(24));
    for (let i = 0; i < b.readUInt32LE(16); i++)
      if (b.readUInt32LE(tocOff + 32 * i) === 12) b.writeBigUInt64LE(BigInt(g.allocs.length + 1000), tocOff + 32 * i + 16);
  }, ['section 12', 'runs past the end of the file']);
});
