// process_system.test.mjs — the system tables of `nxprof process`, read back with DuckDB
// and checked against the capture files decoded here independently:
//   - every real Chrome trace in NXPROF_TEST_DATA/chrome-traces, alone in a capture
//     directory (a framework-only profile), gives one SystemProfileEvents row per X event,
//     per matched B/E or async b/e pair and per other event with a ts but M (counted from
//     JSON.parse), with the same names and ns
//     times (ts/dur converted from their decimal text with BigInt, plus
//     baseTimeNanoseconds when present) for a sample of events; Metadata is written;
//   - a hand-written trace checks B/E pairing as a stack per thread, unmatched B/E
//     becoming Warning rows, string pids, args.stream, instants and counters as
//     zero-duration rows, and extra_attributes_json;
//   - a synth tiny capture: every runtime_events.tsv line is a row with the same fields,
//     CpuUsage/HostMemUsage equal cpu_usage.tsv/host_mem.tsv, SystemProfileMetadata spans
//     all of it, and SystemProfileEvents is sorted by start_ts with id = row position.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { basename, join } from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB, pq, exists, synthProcessed } from './lib/harness.mjs';

const BIN = requireBin();
const FIXTURES = join(TEST_DATA, 'chrome-traces');
const DIR = tempDir('nxprof-system-');

const { sql } = await openDuckDB();

// Decimal microseconds text -> BigInt ns, rounded to the nearest ns, halves away from zero.
function usToNs(text) {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`unexpected number form ${text}`);
  const frac = m[3] ?? '';
  let ns = BigInt(m[2]) * 1000n + BigInt((frac + '000').slice(0, 3));
  if (frac.length > 3 && frac[3] >= '5') ns += 1n;
  return m[1] ? -ns : ns;
}

// A Chrome trace's framework rows, derived from the JSON: X events, B/E paired per
// (pid, tid) as a stack, async b/e paired per (pid, cat, id) likewise, and every other
// event with a ts but M as a zero-duration row (a counter with an id named "<name> <id>").
// ts/dur are turned into strings before JSON.parse so that no digit is lost to doubles.
function expectedFramework(text) {
  const exact = text.replace(/"(ts|dur)"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/g, '"$1":"$2"');
  const doc = JSON.parse(exact);
  const events = Array.isArray(doc) ? doc : doc.traceEvents;
  const baseMatch = /"baseTimeNanoseconds"\s*:\s*(\d+)/.exec(text);
  const base = !Array.isArray(doc) && baseMatch ? BigInt(baseMatch[1]) : 0n;
  const rows = [], stacks = new Map();
  let unmatchedB = 0, unmatchedE = 0;
  const stackOf = (key) => stacks.get(key) ?? stacks.set(key, []).get(key);
  for (const e of events) {
    if (e.ph === 'M' || e.ts === undefined) continue;
    const async = e.ph === 'b' || e.ph === 'e';
    const key = JSON.stringify(async ? [e.pid ?? null, e.cat ?? '', String(e.id ?? '')] : [e.pid ?? null, e.tid ?? null]);
    if (e.ph === 'X') {
      const s = usToNs(e.ts) + base;
      rows.push({ name: e.name ?? '', start: s, end: s + (e.dur === undefined ? 0n : usToNs(e.dur)) });
    } else if (e.ph === 'B' || e.ph === 'b') {
      stackOf(key).push(e);
    } else if (e.ph === 'E' || e.ph === 'e') {
      const st = stackOf(key);
      if (st.length === 0) unmatchedE++;
      else {
        const b = st.pop();
        rows.push({ name: b.name ?? '', start: usToNs(b.ts) + base, end: usToNs(e.ts) + base });
      }
    } else {
      const s = usToNs(e.ts) + base;
      const name = (e.name ?? '') + (e.ph === 'C' && e.id !== undefined ? ` ${e.id}` : '');
      rows.push({ name, start: s, end: s });
    }
  }
  for (const st of stacks.values()) unmatchedB += st.length;
  return { rows, unmatchedB, unmatchedE };
}

const readText = (p) => (p.endsWith('.gz') ? gunzipSync(readFileSync(p)) : readFileSync(p)).toString('utf8');

const fixtures = readdirSync(FIXTURES).filter((n) => /\.json(\.gz)?$/.test(n)).sort();

test('the Chrome trace fixtures are there', () => {
  assert.ok(fixtures.length >= 3, `fixtures found: ${fixtures.length}`);
});

for (const name of fixtures) {
  test(`framework-only capture: ${name}`, async () => {
    const cap = join(DIR, `fw-${name}`), prof = join(DIR, `fwp-${name}`);
    mkdirSync(cap);
    copyFileSync(join(FIXTURES, name), join(cap, name));
    execFileSync(BIN, ['process', cap, '--output-file', prof], { stdio: 'pipe' });
    const want = expectedFramework(readText(join(FIXTURES, name)));
    assert.ok(want.rows.length > 0);

    const rows = await sql(`SELECT name, start_ts, end_ts, duration_ns, id, trace_event_source, instance_id
      FROM ${pq(prof, 'SystemProfileEvents')} ORDER BY file_row_number`);
    assert.equal(rows.length, want.rows.length, 'one row per event with a ts, B/E and b/e pairs as one');
    const got = new Set(rows.map((r) => `${r.name}\0${r.start_ts}\0${r.end_ts}`));
    const step = Math.max(1, Math.floor(want.rows.length / 500));
    for (let i = 0; i < want.rows.length; i += step) {
      const w = want.rows[i];
      assert.ok(got.has(`${w.name}\0${w.start}\0${w.end}`), `event ${i} ${w.name} ${w.start}..${w.end} is a row`);
    }
    let prev = -(2n ** 63n);
    rows.forEach((r, i) => {
      const s = BigInt(r.start_ts);
      assert.ok(s >= prev, `row ${i} sorted by start_ts`);
      prev = s;
      assert.equal(BigInt(r.id), BigInt(i));
      assert.equal(BigInt(r.duration_ns), BigInt(r.end_ts) - s);
      assert.equal(r.trace_event_source, 'framework');
      assert.equal(r.instance_id, 'unknown');
    });
    const all = want.rows.flatMap((r) => [r.start, r.end]);
    const [meta] = await sql(`SELECT * FROM ${pq(prof, 'SystemProfileMetadata')}`);
    assert.equal(BigInt(meta.first_ts_ns), all.reduce((a, b) => (b < a ? b : a)));
    assert.equal(BigInt(meta.last_ts_ns), all.reduce((a, b) => (b > a ? b : a)));
    const md = await sql(`SELECT profile_schema_version, num_physical_cores, first_hw_timestamp FROM ${pq(prof, 'Metadata')}`);
    assert.equal(md.length, 1);
    assert.equal(md[0].profile_schema_version, '7.4.0');
    assert.equal(BigInt(md[0].first_hw_timestamp), BigInt(meta.first_ts_ns));
    assert.ok(exists(join(prof, 'SchemaFields.parquet')));
    assert.ok(!exists(join(prof, 'Instruction.parquet')));
  });
}

test('B/E pairing, unmatched events, string pids, stream and attributes', async () => {
  const cap = join(DIR, 'be'), prof = join(DIR, 'bep');
  mkdirSync(cap);
  const trace = [
    { ph: 'B', name: 'outer', pid: 1, tid: 1, ts: 10, cat: 'c1', args: { a: 1 } },
    { ph: 'B', name: 'inner', pid: 1, tid: 1, ts: 11.5 },
    { ph: 'B', name: 'other-thread', pid: 1, tid: 2, ts: 12 },
    { ph: 'E', pid: 1, tid: 1, ts: 13.25 },
    { ph: 'E', pid: 1, tid: 1, ts: 20, args: { z: 'end' } },
    { ph: 'E', pid: 1, tid: 1, ts: 21 },
    { ph: 'X', name: 'kernel', pid: 'Spans', tid: '7', ts: 5, dur: 2.0005, args: { stream: 7, k: [1, 2] } },
    { ph: 'i', name: 'instant', pid: 1, tid: 1, ts: 6, s: 't' },
    { ph: 'C', name: 'counter', pid: 1, tid: 1, ts: 6, args: { v: 3 } },
  ];
  writeFileSync(join(cap, 'trace.json'), JSON.stringify({ traceEvents: trace }));
  execFileSync(BIN, ['process', cap, '--output-file', prof], { stdio: 'pipe' });
  const rows = await sql(`SELECT name, start_ts, end_ts, process_id, thread_id, framework_stream_id,
      extra_attributes_json FROM ${pq(prof, 'SystemProfileEvents')} ORDER BY file_row_number`);
  assert.deepEqual(rows.map((r) => [r.name, String(r.start_ts), String(r.end_ts)]), [
    ['kernel', '5000', '7001'],        // 2.0005 µs = 2000.5 ns, half rounded away from zero
    ['instant', '6000', '6000'],       // every other phase: a zero-duration row, ties in file order
    ['counter', '6000', '6000'],
    ['outer', '10000', '20000'],
    ['inner', '11500', '13250'],
  ]);
  const kernel = rows[0];
  assert.ok(BigInt(kernel.process_id) < 0n, 'a non-numeric string pid maps to a negative id');
  assert.equal(BigInt(kernel.thread_id), 7n, 'a numeric string tid maps to its number');
  assert.equal(kernel.framework_stream_id, '7');
  assert.deepEqual(JSON.parse(kernel.extra_attributes_json), { pid: 'Spans', tid: '7', args: { stream: 7, k: [1, 2] } });
  assert.deepEqual(JSON.parse(rows[1].extra_attributes_json), { ph: 'i', s: 't' });
  assert.deepEqual(JSON.parse(rows[2].extra_attributes_json), { ph: 'C', args: { v: 3 } });
  assert.deepEqual(JSON.parse(rows[3].extra_attributes_json), { cat: 'c1', args: { a: 1 }, end_args: { z: 'end' } });
  assert.equal(rows[3].framework_stream_id, null);
  const warns = await sql(`SELECT message, category FROM ${pq(prof, 'Warning')}`);
  assert.ok(warns.some((w) => /1 B \(begin\) events without a matching E/.test(w.message)), JSON.stringify(warns));
  assert.ok(warns.some((w) => /1 E \(end\) events without an open B/.test(w.message)), JSON.stringify(warns));
});

// --- a synth capture: runtime events and samples ------------------------------------------

const { prof: PROF, instance, sessionPath } = synthProcessed(BIN, DIR);
const tsv = (file) => readFileSync(join(sessionPath, file), 'utf8').split('\n').slice(2).filter(Boolean)
  .map((l) => l.split('\t'));

test('every runtime_events.tsv line is a SystemProfileEvents row with the same fields', async () => {
  const lines = tsv('runtime_events.tsv');
  assert.ok(lines.length > 10);
  const rows = await sql(`SELECT * FROM ${pq(PROF, 'SystemProfileEvents')}
    WHERE trace_event_source <> 'framework' ORDER BY file_row_number`);
  assert.equal(rows.length, lines.length);
  lines.forEach((f, i) => {
    const r = rows[i];
    const [start, end, source, name, pid, tid, nc, worker, flows, attrs] = f;
    assert.equal(String(r.start_ts), start);
    assert.equal(String(r.end_ts), end);
    assert.equal(BigInt(r.duration_ns), BigInt(end) - BigInt(start));
    assert.equal(r.trace_event_source, source);
    assert.equal(r.name, name);
    assert.equal(String(r.process_id), pid);
    assert.equal(String(r.thread_id), tid);
    assert.equal(r.nc_idx === null ? '' : String(r.nc_idx), nc);
    assert.equal(r.worker_gid === null ? '' : String(r.worker_gid), worker);
    assert.deepEqual(r.flow_id ?? [], flows ? flows.split(',') : []);
    assert.deepEqual(JSON.parse(r.extra_attributes_json),
      Object.fromEntries(attrs ? attrs.split(';').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]) : []));
    assert.equal(r.instance_id, instance);
  });
});

test('synth trace.json becomes framework rows; the table is sorted with id = position', async () => {
  const want = expectedFramework(readFileSync(join(sessionPath, 'trace.json'), 'utf8'));
  const rows = await sql(`SELECT id, name, start_ts, end_ts, trace_event_source FROM ${pq(PROF, 'SystemProfileEvents')}
    ORDER BY file_row_number`);
  const fw = rows.filter((r) => r.trace_event_source === 'framework');
  assert.equal(fw.length, want.rows.length);
  const got = new Set(fw.map((r) => `${r.name}\0${r.start_ts}\0${r.end_ts}`));
  for (const w of want.rows) assert.ok(got.has(`${w.name}\0${w.start}\0${w.end}`), `${w.name} ${w.start}`);
  assert.equal(rows.length, fw.length + tsv('runtime_events.tsv').length);
  rows.forEach((r, i) => {
    assert.equal(BigInt(r.id), BigInt(i));
    if (i) assert.ok(BigInt(r.start_ts) >= BigInt(rows[i - 1].start_ts), `row ${i} sorted`);
  });
});

test('CpuUsage and HostMemUsage equal the sample files', async () => {
  const cpu = tsv('cpu_usage.tsv');
  const crow = await sql(`SELECT * FROM ${pq(PROF, 'CpuUsage')} ORDER BY file_row_number`);
  assert.equal(crow.length, cpu.length);
  cpu.forEach(([ts, id, util], i) => {
    assert.equal(String(crow[i].timestamp), ts);
    assert.equal(crow[i].cpu_id, id);
    assert.equal(crow[i].util_percent, Math.fround(Number(util)));
    assert.equal(crow[i].instance_id, instance);
  });
  assert.ok(cpu.some(([, id]) => id === 'average'));
  const mem = tsv('host_mem.tsv');
  const mrow = await sql(`SELECT * FROM ${pq(PROF, 'HostMemUsage')} ORDER BY file_row_number`);
  assert.equal(mrow.length, mem.length);
  mem.forEach(([ts, used, total], i) => {
    assert.equal(String(mrow[i].timestamp), ts);
    assert.equal(String(mrow[i].used_bytes), used);
    assert.equal(mrow[i].used_percent, Math.fround((100 * Number(used)) / Number(total)));
    assert.equal(mrow[i].instance_id, instance);
  });
});

test('SystemProfileMetadata spans every system row', async () => {
  const times = [
    ...tsv('runtime_events.tsv').flatMap((f) => [BigInt(f[0]), BigInt(f[1])]),
    ...tsv('cpu_usage.tsv').map((f) => BigInt(f[0])),
    ...tsv('host_mem.tsv').map((f) => BigInt(f[0])),
    ...expectedFramework(readFileSync(join(sessionPath, 'trace.json'), 'utf8')).rows.flatMap((r) => [r.start, r.end]),
  ];
  const min = times.reduce((a, b) => (b < a ? b : a)), max = times.reduce((a, b) => (b > a ? b : a));
  const m = await sql(`SELECT * FROM ${pq(PROF, 'SystemProfileMetadata')}`);
  assert.equal(m.length, 1);
  assert.equal(m[0].first_ts_ns, String(min));
  assert.equal(m[0].last_ts_ns, String(max));
  // Go's time.String() form, UTC: date, time, fraction without trailing zeros.
  const d = new Date(Number(min / 1000000n));
  const frac = (min % 1000000000n).toString().padStart(9, '0').replace(/0+$/, '');
  assert.equal(m[0].first_ts, `${d.toISOString().slice(0, 19).replace('T', ' ')}${frac ? `.${frac}` : ''} +0000 UTC`);
  assert.ok(BigInt(m[0].hbm_capacity_bytes) > 0n, 'HBM capacity from the program HARDWARE section');
  assert.equal(Number(m[0].ntff_version), 1);
  assert.ok(basename(sessionPath).length > 0);
});
