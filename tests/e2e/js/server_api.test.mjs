// server_api.test.mjs — `nxprof serve` and its JSON API (docs/api.md) against independent
// computations.
//
// A tiny synth capture (seed 5, two NeuronCores) is processed twice into one data path
// (`tiny`, and `split` with 7 rows per file so ordinals span files): each run is a system
// profile (`tiny`) and a device profile per core (`tiny-nd0-nc0`, `tiny-nd0-nc1`); the
// device checks use `tiny-nd0-nc0`. The same capture goes once more with --output-file
// into `nested@latest` (device profiles in its devices/ folder); a symlinked profile
// pointing outside the data path is planted, and a copy of the system profile with a
// damaged DeviceProfileList. The server runs with --port 0 (the printed URL is parsed).
// Checks:
//  - listing: kinds, the system profile's device_profiles equal its DeviceProfileList
//    (DuckDB), each device profile names its system profile, nested device profiles open
//    by "<system>/devices/<name>", a damaged profile still listed with an error naming the
//    file;
//  - listing/profile/tracks/summary/event values equal DuckDB queries over the Parquet
//    files (track rule of docs/query.md in SQL, schema field order from catalogue.tsv);
//  - the system profile's summary: wall time, operators and the Device Profiles facts
//    (Summary, ExecutionInfo, Metadata of each device profile) from DuckDB;
//  - usage: every /usage table recomputed per bucket, with "before", from the Parquet rows
//    (DmaUsage ... PsumUsage on the device profile, CpuUsage, HostMemUsage and
//    SystemProfileHbmUsage on the system profile; also on a copy of the capture without
//    CpuUsage's "average" rows, processed as `noavg`);
//  - timeline: rows_in_window equals DuckDB's window count, at most one event per
//    (track, pixel bucket), every (track, start, ordinal) points at the right row, and the
//    kept events equal `nxprof export-csv --width W`'s rows; SystemProfileEvents: one event
//    per (track, depth, bucket), each depth equal to its encloser count in SQL; a damaged
//    table's entry is its error while the others answer as on the intact profile;
//    format=bin decoded by web/js/timeline_bin.js equals the JSON answer;
//  - search: total, position and the event found (next/prev from matches and from times)
//    equal the matches worked out from DuckDB rows, on the split device profile and on a
//    real PyTorch trace processed as `torch`; aggregate: count, time and self time inside
//    the range per group (self time by brute force from the nesting rule), top and other;
//    flows: Flow edges resolved by id, and PyTorch events linked by their correlation
//    number; their parameter errors;
//  - CSV export byte-identical to `nxprof export-csv` (sampled and unsampled), headers,
//    truncation header with a tiny max_rows;
//  - 400/404/405/413/414 codes, traversal attempts (../, %2e%2e, %2f, absolute paths, %00,
//    symlink escape), oversize requests; the server survives all of it and stops on SIGTERM
//    with exit 0.
// Requests go through node:http with raw paths (fetch would normalise "../" and "%2e%2e").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import net from 'node:net';
import { DuckDBInstance } from '@duckdb/node-api';
import { requireBin } from './lib/harness.mjs';
import { decodeTimeline } from '../../../web/js/timeline_bin.js';

const BIN = requireBin();
const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DIR = mkdtempSync(join(tmpdir(), 'nxprof-server-'));
const CAP = join(DIR, 'cap');
const DP = join(DIR, 'dp');
const GLOBAL = join(DP, 'profiles', 'global');
// The device profile of NeuronCore 0 and the system profile of each run.
const D = 'tiny-nd0-nc0', DS = 'split-nd0-nc0';
const PROF = join(GLOBAL, `${D}@latest`);
const SPLIT = join(GLOBAL, `${DS}@latest`);
const SYSP = join(GLOBAL, 'tiny@latest');
const SPLIT_SYS = join(GLOBAL, 'split@latest');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--data-path', DP, '--display-name', 'tiny']);
execFileSync(BIN, ['process', CAP, '--data-path', DP, '--display-name', 'split', '--max-rows-per-file', '7']);
// --output-file layout inside the data path: the device profiles lie in nested@latest/devices/.
const NESTED = join(GLOBAL, 'nested@latest');
execFileSync(BIN, ['process', CAP, '--output-file', NESTED]);
// A system profile whose DeviceProfileList is damaged: still listed, with the error.
const BROKEN = join(GLOBAL, 'broken@latest');
cpSync(SYSP, BROKEN, { recursive: true, dereference: true });
writeFileSync(join(BROKEN, 'DeviceProfileList.parquet'), 'PAR1 not a parquet file');
// The same capture without CpuUsage's "average" rows: /usage then serves one series per CPU.
const NOAVG_CAP = join(DIR, 'cap-noavg');
cpSync(CAP, NOAVG_CAP, { recursive: true });
for (const f of execFileSync('find', [NOAVG_CAP, '-name', 'cpu_usage.tsv'], { encoding: 'utf8' }).trim().split('\n')) {
  const kept = readFileSync(f, 'utf8').split('\n').filter((l) => l.split('\t')[1] !== 'average');
  writeFileSync(f, kept.join('\n'));
}
execFileSync(BIN, ['process', NOAVG_CAP, '--data-path', DP, '--display-name', 'noavg']);
const NOAVG = join(GLOBAL, 'noavg@latest');   // its system profile
// A profile outside the data path, reachable only through a symlink: must stay invisible.
const OUTSIDE = join(DIR, 'outside', 'secret@latest');
mkdirSync(dirname(OUTSIDE), { recursive: true });
cpSync(PROF, OUTSIDE, { recursive: true, dereference: true });
symlinkSync(OUTSIDE, join(GLOBAL, 'evil@latest'));

const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const q = (s) => `'${s.replaceAll("'", "''")}'`;
async function rows(sql) {
  const r = await duckdb.runAndReadAll(sql);
  return r.getRowObjects();
}
// The files of one table (exact names: "DmaPacket*" would also match DmaPacketAggregated).
const pq = (dir, t) => {
  const files = readdirSync(dir).filter((f) => f === `${t}.parquet` || new RegExp(`^${t}_\\d+\\.parquet$`).test(f));
  return `[${files.map((f) => q(join(dir, f))).join(',')}]`;
};
// RFC 4180 records of a CSV text (quoted fields may hold commas, quotes, newlines).
function parseCsv(text) {
  const out = [];
  let row = [], cell = '', inq = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inq) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (c === '"') inq = false;
      else cell += c;
    } else if (c === '"') inq = true;
    else if (c === ',') { row.push(cell); cell = ''; }
    else if (c === '\n') { row.push(cell); out.push(row); row = []; cell = ''; }
    else cell += c;
  }
  return out;
}
const csvRecords = (text) => parseCsv(text).length;

const FIELDS = {};
for (const line of readFileSync(join(SRC, 'src/schema/catalogue.tsv'), 'utf8').split('\n')) {
  const f = line.split('\t');
  if (f[0] === 'field') (FIELDS[f[1]] ??= []).push(f[2]);
}
const TRACK = {
  Instruction: "coalesce(nullif(timeline_track, ''), engine, '')",
  DmaPacketAggregated: "coalesce(queue_name, 'queue' || queue_idx, '')",
  DmaPacket: "coalesce(queue_name, 'queue' || queue_idx, '')",
  CcInstruction: "coalesce('CC' || core_idx, '')",
  SemaphoreUpdate: "coalesce(id, '')",
  CoreBarriers: "coalesce(engine_name, '')",
  SbufAllocation: "coalesce('partition' || partition, '')",
};
const START = (t) => (t === 'SemaphoreUpdate' ? 'timestamp' : 'start_ts');
const END = (t) => (t === 'SemaphoreUpdate' ? 'timestamp' : 'end_ts');
const big = (v) => (v === null || v === undefined ? v : BigInt(v));

let server, BASE_PORT, exitCode;
const exited = new Promise((res) => (exitCode = res));

before(async () => {
  server = spawn(BIN, ['serve', '--data-path', DP, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  server.on('exit', (code, sig) => exitCode({ code, sig }));
  let out = '';
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 10000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/at http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) {
        BASE_PORT = Number(m[1]);
        clearTimeout(t);
        resolve();
      }
    });
  });
});
after(async () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  rmSync(DIR, { recursive: true, force: true });
});

// A raw request: path sent exactly as given.
function req(path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port: BASE_PORT, path, method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => { const raw = Buffer.concat(chunks); resolve({ status: res.statusCode, headers: res.headers, raw, body: raw.toString('utf8') }); });
    });
    r.on('error', reject);
    if (body) r.write(body);
    r.end();
  });
}
async function json(path, status = 200) {
  const r = await req(path);
  assert.equal(r.status, status, `${path}: ${r.body}`);
  assert.match(r.headers['content-type'], /^application\/json/);
  return JSON.parse(r.body);
}

const meta = (await rows(`SELECT min(first_hw_timestamp) AS f, max(last_hw_timestamp) AS l FROM read_parquet(${pq(PROF, 'Metadata')})`))[0];
const S = BigInt(meta.f), E = BigInt(meta.l);

test('listing: names, kind, tables, sizes, Metadata span; the symlinked profile is not listed', async () => {
  const { profiles } = await json('/api/profiles');
  const dirs = readdirSync(GLOBAL).filter((n) => n.endsWith('@latest') && n !== 'evil@latest').map((n) => n.slice(0, -7)).sort();
  assert.deepEqual(profiles.map((p) => p.name), dirs);
  assert.ok(dirs.includes(D) && dirs.includes('tiny') && dirs.includes('nested'), `${dirs}`);
  const p = profiles.find((x) => x.name === D);
  assert.equal(p.kind, 'device');
  assert.equal(big(p.first_ts), S);
  assert.equal(big(p.last_ts), E);
  const files = execFileSync('ls', [PROF], { encoding: 'utf8' }).trim().split('\n');
  const tables = [...new Set(files.filter((f) => f.endsWith('.parquet')).map((f) => f.replace(/(_\d+)?\.parquet$/, '')))].sort();
  assert.deepEqual(p.tables, tables);
  const size = Number(execFileSync('du', ['-b', '-s', '-D', '--apparent-size', PROF], { encoding: 'utf8' }).split('\t')[0]);
  assert.ok(p.size_bytes > 0 && p.size_bytes <= size, `${p.size_bytes} vs du ${size}`);
  const sp = profiles.find((x) => x.name === DS);
  assert.ok(sp.tables.includes('Instruction') && !sp.tables.some((t) => /_\d+$/.test(t)), 'split names folded');
  const one = await json(`/api/profiles/${D}`);
  assert.equal(one.name, D);
  assert.deepEqual(Object.keys(one.metadata), FIELDS.Metadata);
  assert.equal((await req('/api/profiles/evil')).status, 404);
  assert.equal((await req('/api/profiles/evil/tracks')).status, 404);
  assert.equal((await req('/api/profiles/secret')).status, 404);
});

// DeviceProfileList rows of a system profile, in file order (DuckDB).
const deviceList = (dir) => rows(`SELECT device_profile_name AS name, nc_id FROM read_parquet(${pq(dir, 'DeviceProfileList')}, file_row_number=true)
                                  ORDER BY file_row_number`);

test('listing: a system profile lists its device profiles (DeviceProfileList), each device profile names it', async () => {
  const { profiles } = await json('/api/profiles');
  const byName = new Map(profiles.map((p) => [p.name, p]));
  for (const [sys, dir] of [['tiny', SYSP], ['split', SPLIT_SYS], ['noavg', NOAVG]]) {
    const p = byName.get(sys);
    assert.equal(p.kind, 'system', sys);
    assert.equal(p.error, undefined, `${sys}: ${p.error}`);
    assert.ok(p.tables.includes('DeviceProfileList') && !p.tables.includes('Instruction'), `${sys} tables`);
    const want = await deviceList(dir);
    assert.equal(want.length, 2, `${sys}: two NeuronCores`);
    assert.deepEqual(p.device_profiles, want.map((r) => ({ name: r.name, nc_id: Number(r.nc_id), exists: true, open: r.name })));
    for (const r of want) {
      const d = byName.get(r.name);
      assert.ok(d, `${r.name} is listed`);
      assert.equal(d.kind, 'device');
      assert.equal(d.system_profile, sys, `${r.name} belongs to ${sys}`);
      assert.equal('device_profiles' in d, false);
    }
    const one = await json(`/api/profiles/${sys}`);
    assert.deepEqual(one.device_profiles, p.device_profiles);
    assert.equal('system_profile' in (await json(`/api/profiles/${want[1].name}`)), false, 'a relation of the listing only');
  }
  assert.equal(byName.get(D).system_profile, 'tiny');
});

test('nested device profiles (--output-file layout) open as <system>/devices/<name>', async () => {
  const { profiles } = await json('/api/profiles');
  const p = profiles.find((x) => x.name === 'nested');
  assert.equal(p.kind, 'system');
  const want = await deviceList(NESTED);
  assert.deepEqual(p.device_profiles, want.map((r) => ({ name: r.name, nc_id: Number(r.nc_id), exists: true, open: `nested/devices/${r.name}` })));
  assert.ok(!profiles.some((x) => want.some((r) => r.name === x.name)), 'nested device profiles are not listed at the top');
  for (const r of want) {
    const dir = join(NESTED, 'devices', r.name);
    const enc = encodeURIComponent(r.name);
    const one = await json(`/api/profiles/nested/devices/${enc}`);
    assert.equal(one.kind, 'device');
    assert.equal(one.name, `nested/devices/${r.name}`);
    assert.deepEqual(await json(`/api/profiles/nested%2Fdevices%2F${enc}`), one, 'the name percent-encoded as one segment');
    const t = await json(`/api/profiles/nested/devices/${enc}/tracks`);
    const n = (await rows(`SELECT count(*)::BIGINT AS n FROM read_parquet(${pq(dir, 'Instruction')})`))[0].n;
    const got = t.groups.find((g) => g.group === 'compute').tracks.filter((x) => x.table === 'Instruction')
      .reduce((a, x) => a + BigInt(x.count), 0n);
    assert.equal(got, BigInt(n), `${r.name}: Instruction rows over its tracks`);
    const m = (await rows(`SELECT min(first_hw_timestamp) AS f, max(last_hw_timestamp) AS l FROM read_parquet(${pq(dir, 'Metadata')})`))[0];
    const ex = await req(`/api/profiles/nested/devices/${enc}/export/Instruction.csv?start=${m.f}&end=${m.l}&sampled=0`);
    assert.equal(ex.status, 200);
    assert.equal(ex.headers['content-disposition'], `attachment; filename="${r.name.replace('@', '_')}_Instruction_${m.f}_${m.l}.csv"`);
    assert.equal(csvRecords(ex.body) - 1, Number(n), 'every Instruction row exported');
  }
  // A symlink in devices/ leading out of the data path is not followed; no other way out either.
  symlinkSync(OUTSIDE, join(NESTED, 'devices', 'sneaky'));
  for (const bad of ['nested/devices/sneaky', 'nested/devices/..%2f..%2ftiny%40latest', 'nested/devices/%2e%2e', 'nested/devices/',
    'nested/devices/a/devices/b', 'nope/devices/tiny-nd0-nc0', `tiny/devices/${D}`, 'evil/devices/x'])
    assert.ok([400, 404].includes((await req(`/api/profiles/${bad}/tracks`)).status), bad);
});

test('a profile whose DeviceProfileList cannot be read is listed with an error naming the file', async () => {
  const { profiles } = await json('/api/profiles');
  const p = profiles.find((x) => x.name === 'broken');
  assert.ok(p, 'listed');
  assert.equal(p.kind, 'system');
  assert.deepEqual(p.device_profiles, []);
  assert.match(p.error, /DeviceProfileList\.parquet/);
  assert.match((await json('/api/profiles/broken')).error, /DeviceProfileList\.parquet/);
  // the device profiles of tiny still belong to tiny (the damaged copy names none)
  assert.equal(profiles.find((x) => x.name === D).system_profile, 'tiny');
});

test("a system profile's summary: wall time, operators, Device Profiles facts from each device profile's tables", async () => {
  const sm = await json('/api/profiles/tiny/summary');
  assert.equal(sm.kind, 'system');
  const ev = pq(SYSP, 'SystemProfileEvents');
  const w = (await rows(`SELECT count(*)::BIGINT AS n, min(start_ts) AS f, max(end_ts) AS l FROM read_parquet(${ev})`))[0];
  assert.equal(BigInt(sm.events), BigInt(w.n));
  assert.deepEqual(Object.keys(sm.wall), ['first_ts', 'last_ts', 'duration_ns']);
  assert.equal(big(sm.wall.first_ts), BigInt(w.f));
  assert.equal(big(sm.wall.last_ts), BigInt(w.l));
  assert.equal(BigInt(sm.wall.duration_ns), BigInt(w.l) - BigInt(w.f));
  assert.ok(sm.threads.length >= 2, 'busy tracks');
  for (let i = 0; i < sm.threads.length; i++) {
    const b = sm.threads[i];
    assert.ok(b.busy_ns > 0 && BigInt(b.busy_ns) <= BigInt(sm.wall.duration_ns) && b.top_level_events > 0, JSON.stringify(b));
    if (i) assert.ok(sm.threads[i - 1].busy_ns >= b.busy_ns, 'busiest first');
  }
  assert.ok(sm.top_operators.length > 0 && sm.top_operators.length <= 10);
  for (const o of sm.top_operators) {
    const x = (await rows(`SELECT count(*)::BIGINT AS n, sum(end_ts - start_ts)::BIGINT AS t FROM read_parquet(${ev}) WHERE name = ${q(o.name)}`))[0];
    assert.equal(BigInt(o.count), BigInt(x.n), o.name);
    assert.equal(BigInt(o.sum_duration_ns), BigInt(x.t), o.name);
    assert.ok(o.sum_self_ns >= 0 && o.sum_self_ns <= o.sum_duration_ns, o.name);
  }
  // The same answers as `nxprof summary --format json`, less its paths and percentages.
  const cli = JSON.parse(execFileSync(BIN, ['summary', SYSP, '--format', 'json'], { encoding: 'utf8' }));
  assert.deepEqual(sm.threads, cli.threads.map(({ percent_of_wall, ...t }) => t));
  assert.deepEqual(sm.top_operators, cli.top_operators);
  const exact = (d) => [d.name, d.nc_id, d.physical_cores, d.executions, d.error];
  assert.deepEqual(sm.device_profiles.map(exact), cli.device_profiles.map(exact));
  const want = await deviceList(SYSP);
  assert.deepEqual(sm.device_profiles.map((d) => [d.name, d.open, d.nc_id]), want.map((r) => [r.name, r.name, Number(r.nc_id)]));
  const near = (a, b, what) => assert.ok(Math.abs(a - b) <= Math.abs(b) * 1e-6, `${what}: ${a} vs ${b}`);
  for (const d of sm.device_profiles) {
    const dir = join(GLOBAL, `${d.name}@latest`);
    const s = (await rows(`SELECT * FROM read_parquet(${pq(dir, 'Summary')})`))[0];
    const m = (await rows(`SELECT num_physical_cores AS c FROM read_parquet(${pq(dir, 'Metadata')})`))[0];
    const x = (await rows(`SELECT count(*)::BIGINT AS n FROM read_parquet(${pq(dir, 'ExecutionInfo')})`))[0];
    assert.equal(d.error, null);
    assert.equal(d.physical_cores, Number(m.c));
    assert.equal(BigInt(d.executions), BigInt(x.n));
    near(d.total_time_s, s.total_time, 'total_time');
    near(d.mfu_estimated_percent, s.mfu_estimated_percent, 'mfu');
    near(d.hfu_estimated_percent, s.hfu_estimated_percent, 'hfu');
    near(d.mbu_estimated_percent, s.mbu_estimated_percent, 'mbu');
    near(d.cc_op_active_time_s, s.cc_op_active_time, 'cc_op_active_time');
  }
  const nested = await json('/api/profiles/nested/summary');
  assert.deepEqual(nested.device_profiles.map((d) => [d.open, d.error]),
    (await deviceList(NESTED)).map((r) => [`nested/devices/${r.name}`, null]));
});

test('tracks equal per-track counts and spans from DuckDB', async () => {
  const t = await json(`/api/profiles/${D}/tracks`);
  assert.deepEqual(t.groups.map((g) => g.group), ['compute', 'dma', 'semaphore', 'cc', 'memory', 'system']);
  assert.deepEqual(t.groups.find((g) => g.group === 'system').tracks, []);
  for (const g of t.groups) for (const x of g.tracks) assert.equal(x.max_depth, 0, `${x.table} ${x.track}`);
  const groupOf = { Instruction: 'compute', DmaPacketAggregated: 'dma', DmaPacket: 'dma', SemaphoreUpdate: 'semaphore', CcInstruction: 'cc', CcOp: 'cc',
    CoreBarriers: 'compute', SbufAllocation: 'memory' };
  for (const table of Object.keys(TRACK)) {
    const want = await rows(`SELECT ${TRACK[table]} AS track, count(*)::BIGINT AS n, min(${START(table)}) AS f, max(${END(table)}) AS l
                             FROM read_parquet(${pq(PROF, table)}) GROUP BY 1 ORDER BY 1`);
    const got = t.groups.find((g) => g.group === groupOf[table]).tracks.filter((x) => x.table === table);
    assert.equal(got.length, want.length, table);
    for (const w of want) {
      const g = got.find((x) => x.track === w.track);
      assert.ok(g, `${table} track ${w.track}`);
      assert.equal(BigInt(g.count), BigInt(w.n));
      assert.equal(big(g.first_ts), BigInt(w.f));
      assert.equal(big(g.last_ts), BigInt(w.l));
    }
  }
  // A second request (cached) is identical.
  assert.deepEqual(await json(`/api/profiles/${D}/tracks`), t);
});

test("a system profile's tracks: SystemProfileEvents per track from DuckDB, deepest depth by brute force", async () => {
  const t = await json('/api/profiles/tiny/tracks');
  const sys = t.groups.find((g) => g.group === 'system');
  assert.equal(sys.label, 'System events');
  for (const g of t.groups) if (g.group !== 'system') assert.deepEqual(g.tracks, [], g.group);
  const ev = pq(SYSP, 'SystemProfileEvents');
  const track = SYS_TRACK;
  // The parts a track's name is made of: a thread's instance, pid and tid; a NeuronCore's nc.
  const thread = `(trace_event_source = 'framework' OR nc_idx IS NULL)`;
  const want = await rows(`SELECT ${track} AS track, count(*)::BIGINT AS n, min(start_ts) AS f, max(end_ts) AS l,
      CASE WHEN bool_and(${thread}) THEN min(instance_id) END AS instance,
      CASE WHEN bool_and(${thread}) THEN min(process_id) END AS pid,
      CASE WHEN bool_and(${thread}) THEN min(thread_id) END AS tid,
      CASE WHEN bool_and(NOT ${thread}) THEN min(nc_idx) END AS nc
      FROM read_parquet(${ev}) GROUP BY 1`);
  assert.ok(want.length >= 3, 'threads and NeuronCores');
  assert.equal(sys.tracks.length, want.length);
  // Depth (docs/query.md): the events of the track that enclose the event (equal intervals: the earlier row).
  const all = await rows(`SELECT ${track} AS track, start_ts AS s, end_ts AS e, file_row_number AS r FROM read_parquet(${ev}, file_row_number=true)`);
  const deepest = new Map();
  for (const b of all) {
    let d = 0;
    for (const a of all)
      if (a !== b && a.track === b.track && a.s <= b.s && b.e <= a.e && !(a.s === b.s && a.e === b.e && a.r > b.r)) d++;
    deepest.set(b.track, Math.max(deepest.get(b.track) ?? 0, d));
  }
  assert.ok([...deepest.values()].some((d) => d > 0), 'some events nest');
  const num = (v) => (v === null ? null : BigInt(v));
  for (const w of want) {
    const g = sys.tracks.find((x) => x.track === w.track);
    assert.ok(g, `track ${w.track}`);
    assert.equal(g.table, 'SystemProfileEvents');
    assert.equal(BigInt(g.count), BigInt(w.n));
    assert.equal(big(g.first_ts), BigInt(w.f));
    assert.equal(big(g.last_ts), BigInt(w.l));
    assert.equal(g.max_depth, deepest.get(w.track), `max_depth of ${w.track}`);
    assert.equal(g.source, undefined);
    assert.equal(g.instance, w.instance);
    assert.deepEqual([g.pid, g.tid, g.nc].map(num), [w.pid, w.tid, w.nc].map(num), w.track);
  }
  // Order: the threads the trace named (process_name, process_labels, thread_name in
  // extra_attributes_json) first, by instance, process_sort_index (else pid), pid,
  // thread_sort_index (else tid), tid, with their names as labels; then natural order of the
  // track names ("nc2" before "nc10").
  const named = await rows(`SELECT ${track} AS track, min(instance_id) AS inst, min(process_id) AS pid, min(thread_id) AS tid,
      min(json_extract(extra_attributes_json, '$.process_sort_index')::BIGINT) AS ps,
      min(json_extract(extra_attributes_json, '$.thread_sort_index')::BIGINT) AS ts,
      min(trim(json_extract_string(extra_attributes_json, '$.thread_name'), ' ')) AS tn
      FROM read_parquet(${ev}) WHERE trace_event_source = 'framework' AND (
        json_extract(extra_attributes_json, '$.process_name') IS NOT NULL OR
        json_extract(extra_attributes_json, '$.process_labels') IS NOT NULL OR
        json_extract(extra_attributes_json, '$.thread_name') IS NOT NULL) GROUP BY 1`);
  const key = new Map(named.map((n) => [n.track, n]));
  for (const x of sys.tracks) {
    const n = key.get(x.track);
    assert.equal(typeof x.thread_label === 'string', !!n, `labelled: ${x.track}`);
    if (n && n.tn) assert.equal(x.thread_label, n.tn, x.track);
  }
  const nat = (a, b) => a.localeCompare(b, 'en', { numeric: true });
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const byKey = (a, b) => nat(a.inst, b.inst) || cmp(BigInt(a.ps ?? a.pid), BigInt(b.ps ?? b.pid)) ||
    cmp(BigInt(a.pid), BigInt(b.pid)) || cmp(BigInt(a.ts ?? a.tid), BigInt(b.ts ?? b.tid)) || cmp(BigInt(a.tid), BigInt(b.tid));
  const rest = sys.tracks.map((x) => x.track).filter((n) => !key.has(n));
  assert.deepEqual(sys.tracks.map((x) => x.track), [...[...named].sort(byKey).map((n) => n.track), ...[...rest].sort(nat)]);
  assert.equal(big(t.first_ts), sys.tracks.reduce((m, x) => (big(x.first_ts) < m ? big(x.first_ts) : m), big(sys.tracks[0].first_ts)));
});

test('timeline: window counts, one event per (track, bucket), ordinals point at their rows, equals export-csv', async () => {
  const W = 37n;
  const s = S + 100000n, e = E - 200000n;
  const tl = await json(`/api/profiles/${D}/timeline?tables=Instruction,DmaPacketAggregated,SemaphoreUpdate&start=${s}&end=${e}&width=${W}`);
  assert.equal(big(tl.start), s);
  assert.equal(tl.tables.length, 3);
  const L = e - s + 1n;
  for (const part of tl.tables) {
    const table = part.table;
    const inWin = table === 'SemaphoreUpdate' ? `timestamp BETWEEN ${s} AND ${e}` : `end_ts >= ${s} AND start_ts <= ${e}`;
    const all = await rows(`SELECT ${START(table)} AS st, ${END(table)} AS en, ${TRACK[table]} AS track, file_row_number AS fr
                            FROM read_parquet(${pq(PROF, table)}, file_row_number=true) WHERE ${inWin}`);
    assert.equal(part.rows_in_window, all.length, `${table} rows_in_window`);
    const byOrd = new Map(all.map((r) => [Number(r.fr), r]));
    let n = 0;
    const kept = new Set();
    for (const tr of part.tracks) {
      const buckets = new Set();
      assert.equal(tr.start.length, tr.dur.length);
      assert.equal(tr.start.length, tr.ord.length);
      for (const lf of part.label_fields) assert.equal(tr.labels[lf].length, tr.ord.length);
      assert.ok(tr.start.length <= Number(W), 'at most width events per track');
      for (let i = 0; i < tr.ord.length; i++) {
        const r = byOrd.get(tr.ord[i]);
        assert.ok(r, `${table} ordinal ${tr.ord[i]} is in the window`);
        assert.equal(r.track, tr.track);
        assert.equal(s + BigInt(tr.start[i]), BigInt(r.st));
        assert.equal(BigInt(tr.dur[i]), BigInt(r.en) - BigInt(r.st));
        const st = BigInt(r.st) < s ? s : BigInt(r.st);
        const b = ((st - s) * W) / L;
        assert.ok(!buckets.has(b), 'one event per bucket');
        buckets.add(b);
        kept.add(`${tr.track}|${r.st}`);
        n++;
      }
    }
    assert.equal(part.sampled, n);
    // Every occupied (track, bucket) has an event.
    const occupied = new Set(all.map((r) => `${r.track}|${((BigInt(r.st) < s ? s : BigInt(r.st)) - s) * W / L}`));
    assert.equal(n, occupied.size, `${table}: one event per occupied bucket`);
    // Same rows as export-csv --width W.
    const out = join(DIR, `tl-${table}`);
    execFileSync(BIN, ['export-csv', PROF, '--start', `${s}`, '--end', `${e}`, '--width', `${W}`, '--tables', table, '--out', out]);
    const recs = parseCsv(readFileSync(join(out, `${table}.csv`), 'utf8'));
    const ci = recs[0].indexOf(START(table));
    const exp = new Set(recs.slice(1).map((c) => `${c[0]}|${c[ci]}`));
    assert.deepEqual([...kept].sort(), [...exp].sort(), `${table}: timeline == export-csv sample`);
  }
  // Labels: opcode indices resolve to the rows' opcodes.
  const ins = tl.tables[0];
  assert.deepEqual(ins.label_fields, ['opcode', 'hlo_name', 'raw_framework_id', 'framework_name']);
  const ops = await rows(`SELECT file_row_number AS fr, opcode, raw_framework_id AS fid FROM read_parquet(${pq(PROF, 'Instruction')}, file_row_number=true)`);
  const opOf = new Map(ops.map((r) => [Number(r.fr), r]));
  const fw = await rows(`SELECT raw_framework_id AS fid, first(framework_name ORDER BY file_row_number) AS name
                         FROM read_parquet(${pq(PROF, 'FrameworkInstruction')}, file_row_number=true) GROUP BY 1`);
  const fwOf = new Map(fw.map((r) => [String(r.fid), r.name]));
  for (const tr of ins.tracks)
    for (let i = 0; i < tr.ord.length; i++) {
      const r = opOf.get(tr.ord[i]);
      assert.equal(tl.strings[tr.labels.opcode[i]], r.opcode);
      assert.equal(tr.labels.raw_framework_id[i] === null ? null : String(tr.labels.raw_framework_id[i]), r.fid === null ? null : String(r.fid));
      const name = r.fid === null ? undefined : fwOf.get(String(r.fid));
      assert.equal(tr.labels.framework_name[i] === -1 ? undefined : tl.strings[tr.labels.framework_name[i]], name ?? undefined);
    }
});

// SystemProfileEvents' track rule (docs/query.md) in SQL.
const SYS_TRACK = `CASE WHEN trace_event_source = 'framework' OR nc_idx IS NULL
  THEN coalesce('rank' || CAST(worker_gid AS VARCHAR) || '/', '') || coalesce(instance_id, '') || '/'
    || coalesce(CAST(process_id AS VARCHAR), '') || '/' || coalesce(CAST(thread_id AS VARCHAR), '')
  ELSE 'nc' || nc_idx END`;

test('timeline: SystemProfileEvents keeps one event per (track, depth, bucket), depths equal the encloser count (DuckDB)', async () => {
  // Depth by the rule of docs/query.md: the events of the track enclosing this one (of equal intervals, the earlier rows).
  const all = await rows(`WITH e AS (SELECT start_ts AS st, end_ts AS en, ${SYS_TRACK} AS track, file_row_number AS fr
                                     FROM read_parquet(${pq(SYSP, 'SystemProfileEvents')}, file_row_number=true))
    SELECT a.st, a.en, a.track, a.fr,
           (SELECT count(*) FROM e b WHERE b.track = a.track AND b.fr <> a.fr AND b.st <= a.st AND a.en <= b.en
                                       AND NOT (b.st = a.st AND b.en = a.en AND b.fr > a.fr))::BIGINT AS depth
    FROM e a ORDER BY a.fr`);
  assert.ok(all.some((r) => Number(r.depth) >= 2), 'the capture has nested events');
  const byFr = new Map(all.map((r) => [Number(r.fr), r]));
  const lo = all.reduce((m, r) => (BigInt(r.st) < m ? BigInt(r.st) : m), BigInt(all[0].st));
  const hi = all.reduce((m, r) => (BigInt(r.en) > m ? BigInt(r.en) : m), BigInt(all[0].en));
  for (const [s, e, W] of [[lo, hi, 1n], [lo, hi, 37n], [lo + (hi - lo) / 3n, lo + (hi - lo) / 2n, 200n]]) {
    const tl = await json(`/api/profiles/tiny/timeline?tables=SystemProfileEvents&start=${s}&end=${e}&width=${W}`);
    const part = tl.tables[0];
    const inWin = all.filter((r) => BigInt(r.en) >= s && BigInt(r.st) <= e);
    assert.equal(part.rows_in_window, inWin.length);
    assert.deepEqual(part.label_types, ['string', 'string']);
    const L = e - s + 1n;
    const best = new Map();   // (track, depth, bucket) -> the longest, earliest start, earliest row
    for (const r of inWin) {
      const st = BigInt(r.st), d = BigInt(r.en) - st, fr = Number(r.fr);
      const key = `${r.track}|${r.depth}|${((st < s ? s : st) - s) * W / L}`;
      const c = best.get(key);
      if (!c || d > c.d || (d === c.d && (st < c.st || (st === c.st && fr < c.fr)))) best.set(key, { d, st, fr });
    }
    const order = [];
    for (const r of inWin) if (!order.includes(r.track)) order.push(r.track);
    assert.deepEqual(part.tracks.map((t) => t.track), order, 'tracks in order of first appearance');
    const kept = [];
    for (const tr of part.tracks) {
      assert.equal(tr.depth.length, tr.start.length);
      for (let i = 0; i < tr.ord.length; i++) {
        const r = byFr.get(tr.ord[i]);
        assert.equal(r.track, tr.track);
        assert.equal(BigInt(tr.depth[i]), BigInt(r.depth), `row ${tr.ord[i]}: depth`);
        assert.equal(s + BigInt(tr.start[i]), BigInt(r.st));
        if (i) assert.ok(tr.ord[i - 1] < tr.ord[i], 'ordinal order');
        kept.push(tr.ord[i]);
      }
    }
    assert.deepEqual(kept.sort((x, y) => x - y), [...best.values()].map((x) => x.fr).sort((x, y) => x - y), `[${s}, ${e}] width ${W}`);
    assert.equal(part.sampled, kept.length);
  }
  // Other tables have no depth.
  const dev = await json(`/api/profiles/${D}/timeline?tables=Instruction&start=${S}&end=${E}&width=50`);
  assert.ok(dev.tables[0].tracks.length > 0 && dev.tables[0].tracks.every((t) => !('depth' in t)));
});

test('timeline: a table that cannot be read gets its error, the others answer as usual', async () => {
  const dmg = join(GLOBAL, 'damaged@latest');
  cpSync(PROF, dmg, { recursive: true, dereference: true });
  writeFileSync(join(dmg, 'DmaPacket.parquet'), 'PAR1 not a parquet file');
  rmSync(join(dmg, '.DmaPacket.nxtl'), { force: true });
  try {
    const w = `start=${S}&end=${E}&width=64`;
    const bad = await json(`/api/profiles/damaged/timeline?tables=Instruction,DmaPacket,SemaphoreUpdate&${w}`);
    const good = await json(`/api/profiles/${D}/timeline?tables=Instruction,SemaphoreUpdate&${w}`);
    assert.deepEqual(Object.keys(bad.tables[1]), ['table', 'error']);
    assert.equal(bad.tables[1].table, 'DmaPacket');
    assert.match(bad.tables[1].error, /DmaPacket\.parquet/);
    assert.deepEqual([bad.tables[0], bad.tables[2]], good.tables);
    assert.deepEqual(bad.strings, good.strings);
    // Not cached: mended, the table answers.
    cpSync(join(PROF, 'DmaPacket.parquet'), join(dmg, 'DmaPacket.parquet'));
    const mended = await json(`/api/profiles/damaged/timeline?tables=Instruction,DmaPacket,SemaphoreUpdate&${w}`);
    assert.ok(Array.isArray(mended.tables[1].tracks) && mended.tables[1].tracks.length > 0);
  } finally {
    rmSync(dmg, { recursive: true, force: true });
  }
});

// The binary answer read by the viewer's decoder, its typed arrays as plain arrays.
async function binTimeline(path) {
  const r = await req(path);
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  assert.equal(r.headers['content-type'], 'application/octet-stream');
  const got = decodeTimeline(r.raw.buffer.slice(r.raw.byteOffset, r.raw.byteOffset + r.raw.length));
  for (const t of got.tables) {
    for (const tr of t.tracks || []) {
      for (const k of ['start', 'dur', 'ord', 'depth']) if (tr[k]) tr[k] = Array.from(tr[k]);
      for (const f of Object.keys(tr.labels)) tr.labels[f] = Array.from(tr.labels[f]);
    }
  }
  return got;
}

test('timeline: format=bin is the JSON answer as arrays (device and nested tables, twice for the cache); other formats 400', async () => {
  const span = E - S, sys = (await json('/api/profiles')).profiles.find((p) => p.name === 'tiny');
  for (const [name, tables, s, e, W] of [[D, 'Instruction,DmaPacketAggregated,SemaphoreUpdate,CcOp', S, E, 97],
    [D, 'Instruction,DmaPacket', S + span / 3n, S + span / 2n, 1600], [DS, 'Instruction', S, E, 5],
    ['tiny', 'SystemProfileEvents', big(sys.first_ts), big(sys.last_ts), 64]]) {
    const q = `/api/profiles/${name}/timeline?tables=${tables}&start=${s}&end=${e}&width=${W}`;
    const want = await json(q);
    assert.ok(want.tables.some((t) => t.tracks && t.tracks.length > 0), q);
    for (let i = 0; i < 2; i++) assert.deepEqual(await binTimeline(`${q}&format=bin`), want, q);
    assert.deepEqual(await json(`${q}&format=json`), want);
  }
  const bad = await json(`/api/profiles/${D}/timeline?start=${S}&end=${E}&width=5&format=xml`, 400);
  assert.match(bad.error, /format/);
});

test('event: every field in schema order equals the row, across split files', async () => {
  for (const [name, dir] of [[D, PROF], [DS, SPLIT]]) {
    const files = execFileSync('ls', [dir], { encoding: 'utf8' }).trim().split('\n').filter((f) => /^Instruction(_\d+)?\.parquet$/.test(f));
    const pick = name === DS ? ['Instruction_3.parquet', 'Instruction_0.parquet'] : ['Instruction.parquet'];
    for (const f of pick) {
      assert.ok(files.includes(f), f);
      const fileIdx = f === 'Instruction.parquet' ? 0 : Number(f.match(/_(\d+)/)[1]);
      for (const row of [0, 5]) {
        const want = (await rows(`SELECT * FROM read_parquet(${q(join(dir, f))}, file_row_number=true) WHERE file_row_number = ${row}`))[0];
        const ord = fileIdx * 2 ** 40 + row;
        const ev = await json(`/api/profiles/${name}/event?table=Instruction&ordinal=${ord}`);
        assert.deepEqual(ev.fields.map((x) => x.name), FIELDS.Instruction);
        for (const fld of ev.fields) {
          const w = want[fld.name];
          if (w === null || w === undefined) assert.equal(fld.value, null, fld.name);
          else if (typeof w === 'bigint' || typeof w === 'number') assert.equal(String(fld.value), String(w), fld.name);
          else assert.equal(fld.value, w, fld.name);
        }
        const track = want.timeline_track || want.engine;
        assert.equal(ev.track, track);
        // The start hint finds the same row.
        const hinted = await json(`/api/profiles/${name}/event?table=Instruction&ordinal=${ord}&start=${want.start_ts}`);
        assert.deepEqual(hinted, ev);
      }
    }
  }
  assert.equal((await req(`/api/profiles/${D}/event?table=Instruction&ordinal=999999`)).status, 404);
  assert.equal((await req(`/api/profiles/${D}/event?table=Instruction&ordinal=${2 ** 40}`)).status, 404);
  assert.equal((await req(`/api/profiles/${D}/event?table=Nope&ordinal=0`)).status, 400);
});

// --- search, aggregate, flows --------------------------------------------------------------

// The files of a table in split order, and its rows with their ordinals ((file << 40) | row).
const tableFiles = (dir, t) => readdirSync(dir)
  .map((f) => [f, f === `${t}.parquet` ? 0 : (f.match(new RegExp(`^${t}_(\\d+)\\.parquet$`)) || [])[1]])
  .filter(([, i]) => i !== undefined).sort((a, b) => Number(a[1]) - Number(b[1])).map(([f]) => join(dir, f));
async function tableRows(dir, t, cols) {
  const out = [];
  for (const [i, f] of tableFiles(dir, t).entries()) {
    for (const r of await rows(`SELECT ${cols}, file_row_number AS r FROM read_parquet(${q(f)}, file_row_number=true) ORDER BY r`)) {
      r.ord = (BigInt(i) << 40n) | BigInt(r.r);
      out.push(r);
    }
  }
  return out;
}
const trackOf = (t) => (t === 'SystemProfileEvents' ? SYS_TRACK : TRACK[t]);
// The events of a timeline table (non-null timing) with start, end, track and one field as `v`.
const timelineRows = (dir, t, field) => tableRows(dir, t,
  `${START(t)} AS s, ${END(t)} AS e, ${trackOf(t)} AS track, ${field} AS v`).then((rs) => rs.filter((r) => r.s !== null && r.e !== null));
const asciiLower = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
// A real PyTorch trace processed alone: system profile `torch` (framework events only).
const TORCH_CAP = join(DIR, 'cap-torch');
mkdirSync(TORCH_CAP);
cpSync(join(SRC, 'tests/data/chrome-traces/benchmark_result_2869224_1695835535_trace.json.gz'), join(TORCH_CAP, 'trace.json.gz'));
execFileSync(BIN, ['process', TORCH_CAP, '--data-path', DP, '--display-name', 'torch']);
const TORCH = join(GLOBAL, 'torch@latest');

// Checks /search against the matches of `tables` worked out from DuckDB rows: the total,
// the first and last match, and next/prev from a sample of matches and of times.
async function checkSearch(name, dir, tables, field, qtext, match) {
  const all = [];
  for (const [ti, t] of tables.entries()) {
    if (field !== 'track' && !FIELDS[t].includes(field)) continue;   // skipped by the search
    for (const r of await timelineRows(dir, t, field === 'track' ? trackOf(t) : field)) {
      if (r.v === null) continue;
      const v = typeof r.v === 'string' ? r.v : String(r.v);
      const hit = typeof r.v !== 'string' ? v === qtext : match === 'exact' ? v === qtext : asciiLower(v).includes(asciiLower(qtext));
      if (hit) all.push({ t, ti, s: BigInt(r.s), e: BigInt(r.e), ord: r.ord, track: r.track, v: r.v });
    }
  }
  all.sort((a, b) => (a.s !== b.s ? (a.s < b.s ? -1 : 1) : a.ti !== b.ti ? a.ti - b.ti : a.ord < b.ord ? -1 : a.ord > b.ord ? 1 : 0));
  const base = `/api/profiles/${name}/search?tables=${tables.join(',')}&field=${encodeURIComponent(field)}&q=${encodeURIComponent(qtext)}&match=${match}`;
  const same = (r, k, what) => {
    assert.equal(BigInt(r.total), BigInt(all.length), `${what}: total`);
    if (k < 0 || k >= all.length) {
      assert.equal(r.event, null, `${what}: no event`);
      assert.equal(r.position, null);
      return;
    }
    const w = all[k];
    assert.ok(r.event, `${what}: an event`);
    assert.deepEqual([r.event.table, big(r.event.ordinal), big(r.event.start), big(r.event.end), r.event.track],
      [w.t, w.ord, w.s, w.e, w.track], what);
    assert.equal(String(r.event.label), String(w.v));
    assert.equal(r.position, k + 1, `${what}: position`);
  };
  same(await json(base), 0, 'first');
  same(await json(`${base}&dir=prev`), all.length - 1, 'last');
  const picks = new Set([0, 1, all.length - 2, all.length - 1]);
  for (let i = 0; i < 12; i++) picks.add(Math.floor((i * 7919) % Math.max(all.length, 1)));
  for (const k of picks) {
    if (k < 0 || k >= all.length) continue;
    const w = all[k];
    const at = `&from=${w.s}&from_table=${w.t}&from_ord=${w.ord}`;
    same(await json(`${base}${at}&dir=next`), k + 1, `next after ${k}`);
    same(await json(`${base}${at}&dir=prev`), k - 1, `prev before ${k}`);
    // A time alone: next = first starting at or after it, prev = last starting before it.
    same(await json(`${base}&from=${w.s}`), all.findIndex((x) => x.s >= w.s), `next from ${w.s}`);
    same(await json(`${base}&from=${w.s}&dir=prev`), all.findLastIndex((x) => x.s < w.s), `prev from ${w.s}`);
  }
  return all.length;
}

test('search: total, position and the event equal the matches worked out from DuckDB rows', async () => {
  assert.ok(await checkSearch(DS, SPLIT, ['Instruction', 'SemaphoreUpdate'], 'track', 'e', 'contains') > 20);
  assert.ok(await checkSearch(DS, SPLIT, ['SemaphoreUpdate', 'Instruction'], 'opcode', 'matmul', 'contains') > 5);
  await checkSearch(DS, SPLIT, ['Instruction'], 'opcode', 'MATMUL', 'exact');
  await checkSearch(D, PROF, ['DmaPacketAggregated', 'DmaPacket'], 'transfer_bytes', '2048', 'exact');
  const r = await json(`/api/profiles/${DS}/search?tables=SemaphoreUpdate,Instruction&field=opcode&q=x`);
  assert.deepEqual(r.skipped, ['SemaphoreUpdate']);
  assert.ok(await checkSearch('torch', TORCH, ['SystemProfileEvents'], 'name', 'aten::', 'contains') > 50);
  await checkSearch('torch', TORCH, ['SystemProfileEvents'], 'track', '/', 'contains');
});

// Brute-force self time inside [s, e] (docs/query.md): each event's clipped duration less its
// children's (parent = the innermost encloser: the last in (start asc, end desc, row asc)).
function clippedSelf(evs, s, e) {
  const clip = (x) => { const a = x.s > s ? x.s : s, b = x.e < e ? x.e : e; return b > a ? b - a : 0n; };
  const self = evs.map(clip);
  for (const [bi, b] of evs.entries()) {
    let p = -1;
    for (const [ai, a] of evs.entries()) {
      if (ai === bi || a.track !== b.track || a.s > b.s || b.e > a.e || (a.s === b.s && a.e === b.e && ai > bi)) continue;
      const q2 = evs[p];
      if (p < 0 || a.s > q2.s || (a.s === q2.s && (a.e < q2.e || (a.e === q2.e && ai > p)))) p = ai;
    }
    if (p >= 0) self[p] -= clip(b);
  }
  return self.map((x) => (x > 0n ? x : 0n));
}

// Checks one /aggregate table entry against groups worked out from DuckDB rows.
async function checkAggregate(name, dir, table, s, e, { by, tracks, top = 50 } = {}) {
  const key = by ?? { Instruction: 'opcode', SystemProfileEvents: 'name' }[table] ?? 'track';
  const evs = (await timelineRows(dir, table, key === 'track' ? trackOf(table) : key))
    .map((r) => ({ ...r, s: BigInt(r.s), e: BigInt(r.e) }))
    .filter((r) => r.e >= s && r.s <= e && (!tracks || tracks.includes(r.track)));
  const selfs = table === 'SystemProfileEvents' ? clippedSelf(evs, s, e) : null;
  const groups = new Map();
  for (const [i, r] of evs.entries()) {
    const k = r.v === null ? null : typeof r.v === 'string' ? r.v : BigInt(r.v);
    const g = groups.get(k) ?? { key: k, count: 0n, total: 0n, self: 0n };
    const a = r.s > s ? r.s : s, b = r.e < e ? r.e : e;
    g.count++;
    g.total += b > a ? b - a : 0n;
    if (selfs) g.self += selfs[i];
    groups.set(k, g);
  }
  const order = [...groups.values()].sort((x, y) => (x.total !== y.total ? (x.total > y.total ? -1 : 1)
    : x.count !== y.count ? (x.count > y.count ? -1 : 1) : x.key === null ? 1 : y.key === null ? -1
      : typeof x.key === 'bigint' ? (x.key < y.key ? -1 : 1) : Buffer.compare(Buffer.from(x.key), Buffer.from(y.key))));
  let url = `/api/profiles/${name}/aggregate?tables=${table}&start=${s}&end=${e}&top=${top}`;
  if (by) url += `&by=${encodeURIComponent(by)}`;
  if (tracks) url += `&tracks=${tracks.map((t) => encodeURIComponent(`${table}:${t}`)).join(',')}`;
  const a = await json(url);
  assert.equal(big(a.start), s);
  const [t] = a.tables;
  assert.equal(t.by, key);
  assert.equal(BigInt(t.events), BigInt(evs.length), `${table} events`);
  const shown = order.slice(0, top), rest = order.slice(top);
  assert.deepEqual(t.groups.map((g) => [g.key === null ? null : String(g.key), BigInt(g.count), BigInt(g.total_ns), g.self_ns === null ? null : BigInt(g.self_ns)]),
    shown.map((g) => [g.key === null ? null : String(g.key), g.count, g.total, selfs ? g.self : null]), `${table} by ${key}`);
  const sum = (f) => rest.reduce((n, g) => n + g[f], 0n);
  assert.deepEqual([t.other.groups, BigInt(t.other.count), BigInt(t.other.total_ns)], [rest.length, sum('count'), sum('total')]);
  if (selfs) assert.equal(BigInt(t.other.self_ns), sum('self'));
  return { events: evs.length, groups: order.length };
}

test('aggregate: count, time and self time inside the range per group equal DuckDB rows', async () => {
  const s = S + (E - S) / 4n, e = S + (3n * (E - S)) / 4n;
  assert.ok((await checkAggregate(DS, SPLIT, 'Instruction', s, e)).events > 50);
  await checkAggregate(DS, SPLIT, 'Instruction', s, e, { by: 'track', top: 2 });
  await checkAggregate(DS, SPLIT, 'Instruction', s, e, { by: 'hlo_name', top: 3 });
  await checkAggregate(D, PROF, 'DmaPacket', s, e);
  await checkAggregate(D, PROF, 'SemaphoreUpdate', S, E, { by: 'value' });
  const engines = (await rows(`SELECT DISTINCT ${TRACK.Instruction} AS t FROM read_parquet(${pq(PROF, 'Instruction')}) ORDER BY 1`)).map((r) => r.t);
  await checkAggregate(D, PROF, 'Instruction', s, e, { tracks: engines.slice(0, 2) });
  // The PyTorch trace: whole span, and a window that cuts through nested operators.
  const span = (await rows(`SELECT min(start_ts) AS f, max(end_ts) AS l FROM read_parquet(${pq(TORCH, 'SystemProfileEvents')})`))[0];
  const f = BigInt(span.f), l = BigInt(span.l);
  const whole = await checkAggregate('torch', TORCH, 'SystemProfileEvents', f, l, { top: 8 });
  assert.ok(whole.groups > 8, 'an "other" remainder');
  await checkAggregate('torch', TORCH, 'SystemProfileEvents', f + (l - f) / 3n, f + (l - f) / 2n);
  await checkAggregate('torch', TORCH, 'SystemProfileEvents', f + (l - f) / 5n, f + (l - f) / 4n, { by: 'track' });
  // Tracks named for another listed table only: this one has none selected.
  const two = await json(`/api/profiles/${D}/aggregate?tables=Instruction,DmaPacket&start=${s}&end=${e}&tracks=Instruction:${engines[0]}`);
  assert.equal(two.tables[1].events, 0);
});

test('flows: Flow edges of instructions and DMA blocks, shared flow ids of PyTorch events, from DuckDB', async () => {
  const ins = await tableRows(SPLIT, 'Instruction', `id, start_ts AS s, end_ts AS e, ${TRACK.Instruction} AS track`);
  const dma = await tableRows(SPLIT, 'DmaPacketAggregated', `id, start_ts AS s, end_ts AS e, ${TRACK.DmaPacketAggregated} AS track`);
  const byId = { instruction: new Map(ins.map((r) => [BigInt(r.id), ['Instruction', r]])), dma_block: new Map(dma.map((r) => [BigInt(r.id), ['DmaPacketAggregated', r]])) };
  const flow = await rows(`SELECT in_id, out_id, in_table, out_table, dependency_type, gap_time FROM read_parquet(${pq(SPLIT, 'Flow')}, file_row_number=true) ORDER BY file_row_number`);
  assert.ok(flow.length > 10);
  const refs = (list) => list.map((x) => [x.table, big(x.ordinal), big(x.start), big(x.end), x.track, x.dependency_type, big(x.gap_time)]);
  const want = (edges, end) => edges.map((f) => {
    const [table, r] = byId[f[`${end}_table`]].get(BigInt(f[`${end}_id`]));
    return [table, r.ord, BigInt(r.s), BigInt(r.e), r.track, f.dependency_type, big(f.gap_time)];
  }).sort((a, b) => (a[2] !== b[2] ? (a[2] < b[2] ? -1 : 1) : a[1] !== b[1] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const linked = [...new Set(flow.flatMap((f) => [`${f.in_table}:${f.in_id}`, `${f.out_table}:${f.out_id}`]))].slice(0, 25);
  for (const id of linked) {
    const [ft, x] = id.split(':');
    const [table, r] = byId[ft].get(BigInt(x));
    const got = await json(`/api/profiles/${DS}/flows?table=${table}&ordinal=${r.ord}${Number(r.r) % 2 ? `&start=${r.s}` : ''}`);
    assert.equal(got.table, table);
    const mine = (end) => flow.filter((f) => f[`${end}_table`] === ft && BigInt(f[`${end}_id`]) === BigInt(x));
    assert.deepEqual(refs(got.predecessors), want(mine('out'), 'in'), `${id} predecessors`);
    assert.deepEqual(refs(got.successors), want(mine('in'), 'out'), `${id} successors`);
    assert.equal(got.unresolved, 0);
  }
  // PyTorch: a launch and the kernel it started share their correlation number as flow_id.
  const sys = await tableRows(TORCH, 'SystemProfileEvents', `start_ts AS s, end_ts AS e, ${SYS_TRACK} AS track, flow_id, name`);
  const withFlow = sys.filter((r) => r.flow_id && r.flow_id.items.length);
  let pairs = 0;
  for (const x of withFlow.slice(0, 40)) {
    const mineIds = x.flow_id.items;
    const others = sys.filter((y) => y !== x && y.flow_id && y.flow_id.items.some((v) => mineIds.includes(v)));
    const got = await json(`/api/profiles/torch/flows?table=SystemProfileEvents&ordinal=${x.ord}`);
    const key = (y) => [big(y.ordinal ?? y.ord), big(y.start ?? y.s)];
    const before = (y) => BigInt(y.s) < BigInt(x.s) || (BigInt(y.s) === BigInt(x.s) && y.ord < x.ord);
    assert.deepEqual(got.predecessors.map(key), others.filter(before).map(key), `${x.name} predecessors`);
    assert.deepEqual(got.successors.map(key), others.filter((y) => !before(y)).map(key), `${x.name} successors`);
    for (const y of [...got.predecessors, ...got.successors]) assert.ok(mineIds.includes(y.flow_id));
    pairs += others.length;
  }
  assert.ok(pairs > 10, 'correlation numbers link launches and kernels');
});

test('search, aggregate, flows: parameter errors are 400 naming the parameter, a missing event 404', async () => {
  const SE = `/api/profiles/${D}/search?tables=Instruction`;
  const AG = `/api/profiles/${D}/aggregate?tables=Instruction`;
  const bad = [
    [`${SE}&q=x`, 'field'], [`${SE}&field=opcode`, 'q'], [`${SE}&field=opcode&q=`, 'q'],
    [`${SE}&field=nope&q=x`, 'field'], [`${SE}&field=opcode&q=x&match=like`, 'match'],
    [`${SE}&field=opcode&q=x&dir=up`, 'dir'], [`${SE}&field=opcode&q=x&from=5&from_ord=1`, 'from_ord'],
    [`${SE}&field=opcode&q=x&from=5&from_ord=1&from_table=CcOp`, 'from_table'],
    [`${SE}&field=opcode&q=x&from=5x`, 'from'], [`/api/profiles/${D}/search?tables=Nope&field=opcode&q=x`, 'tables'],
    [`${AG}&start=5`, 'end'], [`${AG}&start=9&end=5`, 'end'], [`${AG}&start=0&end=9&top=0`, 'top'],
    [`${AG}&start=0&end=9&by=nope`, 'by'], [`${AG}&start=0&end=9&tracks=CcOp:x`, 'tracks'],
    [`/api/profiles/${D}/flows?ordinal=0`, 'table'], [`/api/profiles/${D}/flows?table=Metadata&ordinal=0`, 'table'],
    [`/api/profiles/${D}/flows?table=Instruction&ordinal=-1`, 'ordinal'],
  ];
  for (const [p, param] of bad) {
    const r = await req(p);
    assert.equal(r.status, 400, `${p}: ${r.status} ${r.body}`);
    assert.match(JSON.parse(r.body).error, new RegExp(param), p);
  }
  assert.equal((await req(`/api/profiles/${D}/flows?table=Instruction&ordinal=999999`)).status, 404);
  assert.equal((await req(`/api/profiles/${D}/flows?table=SystemProfileEvents&ordinal=0`)).status, 404);
  assert.equal((await req(`/api/profiles/nope/search?field=opcode&q=x`)).status, 404);
});

test('summary and OpcodeSummary equal DuckDB', async () => {
  const sm = await json(`/api/profiles/${D}/summary?top=4`);
  const want = (await rows(`SELECT * FROM read_parquet(${pq(PROF, 'Summary')})`))[0];
  assert.deepEqual(Object.keys(sm.summary), FIELDS.Summary);
  for (const k of FIELDS.Summary) {
    const w = want[k];
    if (w === null || w === undefined) assert.equal(sm.summary[k], null, k);
    else if (typeof w === 'number') assert.ok(Math.abs(Number(sm.summary[k]) - w) <= Math.abs(w) * 1e-6, k);
    else assert.equal(String(sm.summary[k]), String(w), k);
  }
  const ops = await rows(`SELECT engine, opcode, instruction_time_ns AS t FROM read_parquet(${pq(PROF, 'OpcodeSummary')})
                          ORDER BY t DESC NULLS LAST, engine, opcode`);
  assert.equal(sm.opcode_summary.total_rows, ops.length);
  assert.deepEqual(sm.opcode_summary.columns, FIELDS.OpcodeSummary);
  assert.equal(sm.opcode_summary.rows.length, Math.min(4, ops.length));
  const ie = FIELDS.OpcodeSummary.indexOf('engine'), io = FIELDS.OpcodeSummary.indexOf('opcode');
  sm.opcode_summary.rows.forEach((r, i) => assert.deepEqual([r[ie], r[io]], [ops[i].engine, ops[i].opcode]));
});

test('schema equals `nxprof schema --format json` plus the viewer member', async () => {
  const want = JSON.parse(execFileSync(BIN, ['schema', '--format', 'json'], { encoding: 'utf8' }));
  const got = await json('/api/schema');
  const { viewer } = got;
  delete got.viewer;
  assert.deepEqual(got, want);
  // The server's own limits (width=10001 is a 400 below) and name grammar, which the viewer
  // reads instead of copying.
  assert.deepEqual(viewer.limits, { max_width: 10000 });
  assert.deepEqual(viewer.names, { devices_dir: 'devices' });
  assert.deepEqual(viewer.groups, [{ id: 'compute', label: 'Compute engines' }, { id: 'dma', label: 'DMA queues' },
    { id: 'semaphore', label: 'Semaphores' }, { id: 'cc', label: 'Collectives (CC)' }, { id: 'memory', label: 'SBUF memory' },
    { id: 'system', label: 'System events' }]);
  // Drawing order, groups, kinds, suffixes and export labels as the viewer and its export dialog show them.
  const T = (table, group, kind, suffix, exportLabel, colour, search, aggregate) => ({ table, group, kind, suffix, exportLabel, colour, search, aggregate });
  const tables = [
    T('Instruction', 'compute', 'interval', '', 'Instructions', ['framework_name', 'raw_framework_id', 'hlo_name', 'opcode'], 'opcode', 'opcode'),
    T('CoreBarriers', 'compute', 'interval', ' · barriers', 'Core barriers', ['id'], 'compiler_operands', 'id'),
    T('DmaPacketAggregated', 'dma', 'interval', '', 'DMA transfers (aggregated by queue)', ['track'], 'variable', 'track'),
    T('DmaPacket', 'dma', 'interval', ' · packets', 'DMA packets (individual)', ['track'], 'variable', 'track'),
    T('SemaphoreUpdate', 'semaphore', 'point', '', 'Semaphore updates', [], 'id', 'track'),
    T('CcInstruction', 'cc', 'interval', '', 'Collective (CC) ops', ['description'], 'description', 'description'),
    T('CcOp', 'cc', 'interval', ' · ops', null, ['operation'], 'operation', 'operation'),
    T('SbufAllocation', 'memory', 'interval', '', 'SBUF allocations', ['tensor_name'], 'tensor_name', 'tensor_name'),
    T('SystemProfileEvents', 'system', 'interval', '', 'System and framework events', ['name'], 'name', 'name'),
  ];
  assert.deepEqual(viewer.timelines.map((x) => x.table), tables.map((x) => x.table));
  const types = {};
  for (const line of readFileSync(join(SRC, 'src/schema/catalogue.tsv'), 'utf8').split('\n')) {
    const f = line.split('\t');
    if (f[0] === 'field') types[`${f[1]}.${f[2]}`] = f[3];
  }
  for (const [i, w] of tables.entries()) {
    const x = viewer.timelines[i];
    assert.equal(x.group, w.group, w.table);
    assert.equal(x.kind, w.kind, w.table);
    assert.equal(x.nested, w.table === 'SystemProfileEvents');
    assert.equal(x.start, w.kind === 'point' ? 'timestamp' : 'start_ts');
    assert.equal(x.end, w.kind === 'point' ? null : 'end_ts');
    assert.equal(x.track_suffix, w.suffix);
    assert.equal(x.export, w.exportLabel !== null);
    assert.equal(x.export_label, w.exportLabel);
    assert.deepEqual(x.colour_by, w.colour);
    // The label fields are the timeline's (its label_fields), typed from the catalogue.
    const tl = await json(`/api/profiles/${w.table === 'SystemProfileEvents' ? 'tiny' : D}/timeline?tables=${w.table}&start=0&end=1&width=1`);
    assert.deepEqual(x.labels.map((l) => l.name), tl.tables[0].label_fields, w.table);
    for (const l of x.labels)
      assert.equal(l.type, l.name === 'framework_name' || types[`${w.table}.${l.name}`] === 'string' ? 'string' : 'integer', `${w.table}.${l.name}`);
    // Search: the default, every other string or integer column in catalogue order, then "track".
    const cols = FIELDS[w.table].filter((f) => ['string', 'integer'].includes(types[`${w.table}.${f}`]) && f !== w.search);
    assert.deepEqual(x.search_fields, [w.search, ...cols, 'track'], w.table);
    assert.equal(x.aggregate_by[0], w.aggregate);
    assert.ok(x.aggregate_by.includes('track'));
  }
  assert.deepEqual(viewer.usage, [
    { table: 'DmaUsage', lane: 'dma', label: 'DMA throughput', unit: 'bytes_per_second', gauge: false, series_what: 'core' },
    { table: 'HbmUsage', lane: 'hbm', label: 'HBM usage', unit: 'bytes_per_second', gauge: false, series_what: 'core' },
    { table: 'SbufUsage', lane: 'sbuf', label: 'SBUF usage', unit: 'percent', gauge: false, series_what: 'core' },
    { table: 'PsumUsage', lane: 'psum', label: 'PSUM usage', unit: 'percent', gauge: false, series_what: 'core' },
    { table: 'PendingDma', lane: 'pending', label: 'Pending DMA', unit: '', gauge: true, series_what: 'core' },
    { table: 'CpuUsage', lane: 'cpu', label: 'CPU (host)', unit: 'percent', gauge: true, series_what: 'CPU' },
    { table: 'HostMemUsage', lane: 'hostmem', label: 'Host memory', unit: 'percent', gauge: true, series_what: 'host' },
    { table: 'SystemProfileHbmUsage', lane: 'devhbm', label: 'Device HBM', unit: 'bytes', gauge: true, series_what: 'HBM' },
  ]);
});

test('usage lanes: at most width points per series, max per bucket', async () => {
  const W = 10n;
  const u = await json(`/api/profiles/${D}/usage?start=${S}&end=${E}&width=${W}`);
  assert.ok(u.series.length >= 1);
  for (const sr of u.series) {
    const all = await rows(`SELECT timestamp AS t, current_throughput AS v FROM read_parquet(${pq(PROF, sr.table)})
                            WHERE timestamp BETWEEN ${S} AND ${E} AND pcore_idx = ${sr.pcore_idx}`);
    const best = new Map();
    for (const r of all) {
      const b = ((BigInt(r.t) - S) * W) / (E - S + 1n);
      if (!best.has(b) || r.v > best.get(b).v) best.set(b, r);
    }
    assert.equal(sr.t.length, best.size);
    const ts = [...best.keys()].sort((a, b) => (a < b ? -1 : 1)).map((b) => Number(BigInt(best.get(b).t) - S));
    assert.deepEqual(sr.t, ts);
  }
});

// SbufUsage/PsumUsage (docs/api.md): value avg_util_percent, unit percent; per (table,
// pcore_idx) series the max per bucket (ties: earliest in file order) over rows in [s, e],
// and "before" = the latest row before s (ties: the last in file order). Computed here from
// DuckDB rows in file order (file index from the name, then file_row_number), on the
// unsplit and on the split profile (7 rows per file), for the whole span, an inner window
// and a window that holds no sample of some series (inside a steady stretch).
test('usage lanes: SbufUsage and PsumUsage percent series with the same bucket rule and a before sample', async () => {
  const fileIdx = (f) => { const m = String(f).match(/_(\d+)\.parquet$/); return m ? Number(m[1]) : 0; };
  const W = 10n;
  let sawEmptyWithBefore = false;
  for (const [name, dir] of [[D, PROF], [DS, SPLIT]]) {
    const byTable = {};
    for (const table of ['SbufUsage', 'PsumUsage']) {
      const all = await rows(`SELECT timestamp AS t, avg_util_percent AS v, pcore_idx AS c, filename AS f, file_row_number AS fr
                              FROM read_parquet(${pq(dir, table)}, filename=true, file_row_number=true)
                              WHERE timestamp IS NOT NULL AND avg_util_percent IS NOT NULL`);
      all.sort((a, b) => fileIdx(a.f) - fileIdx(b.f) || Number(a.fr) - Number(b.fr));
      assert.ok(all.length > 2, `${name} ${table} has rows`);
      byTable[table] = all.map((r) => ({ t: BigInt(r.t), v: r.v, c: r.c === null ? null : Number(r.c) }));
    }
    // A window strictly between two consecutive PsumUsage rows of core 0 more than a bucket apart.
    const p0 = byTable.PsumUsage.filter((r) => r.c === 0);
    const gap = p0.findIndex((r, i) => i + 1 < p0.length && p0[i + 1].t - r.t > 20000n);
    assert.ok(gap >= 0, 'a steady PsumUsage stretch exists');
    const windows = [[S, E], [S + 200000n, E - 300000n], [p0[gap].t + 1n, p0[gap + 1].t - 1n]];
    for (const [s, e] of windows) {
      const u = await json(`/api/profiles/${name}/usage?tables=PsumUsage,SbufUsage,DmaUsage&start=${s}&end=${e}&width=${W}`);
      assert.equal(big(u.start), s);
      // fixed table order, whatever the order asked
      const order = [...new Set(u.series.map((x) => x.table))];
      assert.deepEqual(order, ['DmaUsage', 'SbufUsage', 'PsumUsage'].filter((t) => order.includes(t)));
      for (const sr of u.series.filter((x) => x.table === 'DmaUsage')) {
        assert.equal(sr.unit, 'bytes_per_second');
        assert.equal(sr.value, 'current_throughput');
        assert.equal('before' in sr, false, 'throughput series have no before sample');
      }
      for (const table of ['SbufUsage', 'PsumUsage']) {
        const L = e - s + 1n;
        const want = new Map();   // core -> {first, best: Map(bucket -> row), before}
        for (const r of byTable[table]) {
          if (r.t > e) continue;
          if (!want.has(r.c)) want.set(r.c, { best: new Map(), before: null, n: want.size });
          const w = want.get(r.c);
          if (r.t < s) {
            if (!w.before || r.t >= w.before.t) w.before = r;
            continue;
          }
          const b = ((r.t - s) * W) / L;
          if (!w.best.has(b) || r.v > w.best.get(b).v) w.best.set(b, r);
        }
        const got = u.series.filter((x) => x.table === table);
        assert.deepEqual(got.map((x) => x.pcore_idx), [...want.keys()], `${name} ${table} [${s}, ${e}] series`);
        for (const sr of got) {
          const w = want.get(sr.pcore_idx);
          assert.equal(sr.unit, 'percent');
          assert.equal(sr.value, 'avg_util_percent');
          const keys = [...w.best.keys()].sort((a, b) => (a < b ? -1 : 1));
          assert.deepEqual(sr.t.map((x) => BigInt(x)), keys.map((k) => w.best.get(k).t - s), `${name} ${table} t`);
          assert.deepEqual(sr.v, keys.map((k) => w.best.get(k).v), `${name} ${table} v`);
          assert.ok(sr.t.length <= Number(W));
          if (w.before) assert.deepEqual([BigInt(sr.before.t), sr.before.v], [w.before.t - s, w.before.v], `${name} ${table} before`);
          else assert.equal(sr.before, null);
          if (!sr.t.length && sr.before) sawEmptyWithBefore = true;
        }
      }
    }
  }
  assert.ok(sawEmptyWithBefore, 'a window inside a steady stretch reports the series with its before sample');
  // unknown tables still 400; the memory tables are accepted alone
  assert.equal((await req(`/api/profiles/${D}/usage?tables=SbufUsage,Bogus&start=${S}&end=${E}&width=5`)).status, 400);
  assert.equal((await req(`/api/profiles/${D}/usage?tables=PsumUsage,PsumUsage&start=${S}&end=${E}&width=5`)).status, 400);
  const only = await json(`/api/profiles/${D}/usage?tables=SbufUsage&start=${S}&end=${E}&width=5`);
  assert.ok(only.series.length >= 1 && only.series.every((x) => x.table === 'SbufUsage'));
});

// CpuUsage, HostMemUsage, SystemProfileHbmUsage (docs/api.md, api_usage.c): values
// util_percent / used_percent (percent) / total_bytes (bytes, integers); series per cpu_id
// (only "average" when any row up to the window's end has it), one for HostMemUsage, per
// (device_idx, hbm_idx) for SystemProfileHbmUsage; the max per bucket (ties: earliest in file
// order) over rows in [s, e] and "before" = the latest row before s (ties: the last in file
// order); series in order of first appearance among the rows used. Recomputed from DuckDB
// rows in file order on the unsplit, split (7 rows per file) and no-"average" system profiles,
// for the device span (narrower than the 10 ms sampling period: only "before"), the system span,
// an inner window, a window between two samples and one before every sample.
test('usage lanes: CpuUsage, HostMemUsage, SystemProfileHbmUsage recomputed from the Parquet files', async () => {
  const fileIdx = (f) => { const m = String(f).match(/_(\d+)\.parquet$/); return m ? Number(m[1]) : 0; };
  const SYS = {
    CpuUsage: { value: 'util_percent', unit: 'percent', cols: 'cpu_id AS k0',
      fields: (r) => ({ cpu_id: r.k0, key: r.k0 }) },
    HostMemUsage: { value: 'used_percent', unit: 'percent', cols: 'NULL AS k0', fields: () => ({ key: 'host' }) },
    SystemProfileHbmUsage: { value: 'total_bytes', unit: 'bytes', cols: 'device_idx AS k0, hbm_idx AS k1',
      fields: (r) => ({ device_idx: Number(r.k0), hbm_idx: Number(r.k1), key: `device ${r.k0} hbm ${r.k1}` }) },
  };
  const order = Object.keys(SYS);
  let sawBeforeOnly = false, sawPerCpu = false, sawAverage = false, sawCollision = false;
  for (const [name, dir] of [['tiny', SYSP], ['split', SPLIT_SYS], ['noavg', NOAVG]]) {
    const byTable = {};
    for (const table of order) {
      const all = await rows(`SELECT timestamp AS t, ${SYS[table].value} AS v, ${SYS[table].cols}, filename AS f, file_row_number AS fr
                              FROM read_parquet(${pq(dir, table)}, filename=true, file_row_number=true)
                              WHERE timestamp IS NOT NULL AND ${SYS[table].value} IS NOT NULL`);
      all.sort((a, b) => fileIdx(a.f) - fileIdx(b.f) || Number(a.fr) - Number(b.fr));
      assert.ok(all.length > 10, `${name} ${table} has rows`);
      byTable[table] = all.map((r) => ({ t: BigInt(r.t), v: r.v, fields: SYS[table].fields(r) }));
    }
    const hm = byTable.HostMemUsage.map((r) => r.t);
    const f = hm[0], l = hm[hm.length - 1];
    const windows = [[S, E, 10n], [f, l, 10n], [f + 123457n, l - 234567n, 7n], [hm[3] + 1n, hm[4] - 1n, 5n], [f - 1000n, f - 1n, 4n]];
    for (const [s, e, W] of windows) {
      const u = await json(`/api/profiles/${name}/usage?tables=SystemProfileHbmUsage,HostMemUsage,CpuUsage,DmaUsage&start=${s}&end=${e}&width=${W}`);
      const tablesGot = [...new Set(u.series.map((x) => x.table))];
      assert.deepEqual(tablesGot, ['DmaUsage', ...order].filter((t) => tablesGot.includes(t)), 'fixed table order');
      const L = e - s + 1n;
      for (const table of order) {
        let used = byTable[table].filter((r) => r.t <= e);
        if (table === 'CpuUsage' && used.some((r) => r.fields.cpu_id === 'average')) {
          used = used.filter((r) => r.fields.cpu_id === 'average');
          sawAverage = true;
        }
        const want = new Map();   // key -> {fields, best: Map(bucket -> row), before}
        for (const r of used) {
          if (!want.has(r.fields.key)) want.set(r.fields.key, { fields: r.fields, best: new Map(), before: null });
          const w = want.get(r.fields.key);
          if (r.t < s) {
            if (!w.before || r.t >= w.before.t) w.before = r;
            continue;
          }
          const b = ((r.t - s) * W) / L;
          if (w.best.has(b)) sawCollision = true;
          if (!w.best.has(b) || r.v > w.best.get(b).v) w.best.set(b, r);
        }
        const got = u.series.filter((x) => x.table === table);
        const what = `${name} ${table} [${s}, ${e}]`;
        assert.deepEqual(got.map((x) => x.key), [...want.keys()], `${what} series`);
        if (table === 'CpuUsage' && got.length > 1) sawPerCpu = true;
        for (const sr of got) {
          const w = want.get(sr.key);
          const { t, v, before, table: tb, value, unit, ...ident } = sr;
          assert.deepEqual(ident, w.fields, `${what} key fields`);
          assert.deepEqual([tb, value, unit], [table, SYS[table].value, SYS[table].unit]);
          const keys = [...w.best.keys()].sort((a, b) => (a < b ? -1 : 1));
          assert.deepEqual(t.map((x) => BigInt(x)), keys.map((k) => w.best.get(k).t - s), `${what} t`);
          const num = (x) => (table === 'SystemProfileHbmUsage' ? BigInt(x) : x);
          if (table === 'SystemProfileHbmUsage') assert.ok(v.every((x) => Number.isInteger(x)), `${what}: integer bytes`);
          assert.deepEqual(v.map(num), keys.map((k) => num(w.best.get(k).v)), `${what} v`);
          assert.ok(t.length <= Number(W));
          if (w.before) assert.deepEqual([BigInt(before.t), num(before.v)], [w.before.t - s, num(w.before.v)], `${what} before`);
          else assert.equal(before, null);
          if (!t.length && before) sawBeforeOnly = true;
        }
      }
    }
  }
  assert.ok(sawBeforeOnly && sawPerCpu && sawAverage && sawCollision, 'cases covered');
  // The seven tables in any order come back in the fixed order (the device profile has
  // the first four, the system profile the other three); bad names still 400.
  const seven = 'SystemProfileHbmUsage,HostMemUsage,CpuUsage,PsumUsage,SbufUsage,HbmUsage,DmaUsage';
  const all7 = await json(`/api/profiles/${D}/usage?tables=${seven}&start=${S}&end=${E}&width=5`);
  assert.deepEqual([...new Set(all7.series.map((x) => x.table))], ['DmaUsage', 'HbmUsage', 'SbufUsage', 'PsumUsage']);
  for (const x of all7.series)
    assert.equal('key' in x, false, 'device-table series are as before (pcore_idx, no key)');
  const sys7 = await json(`/api/profiles/tiny/usage?tables=${seven}&start=${S}&end=${E}&width=5`);
  assert.deepEqual([...new Set(sys7.series.map((x) => x.table))], ['CpuUsage', 'HostMemUsage', 'SystemProfileHbmUsage']);
  for (const bad of ['CpuUsage,Bogus', 'cpuusage', 'HostMemUsage,HostMemUsage', 'SystemProfileHbmUsage,', 'SystemProfileEvents'])
    assert.equal((await req(`/api/profiles/${D}/usage?tables=${bad}&start=${S}&end=${E}&width=5`)).status, 400, bad);
});

test('CSV export equals `nxprof export-csv` (sampled and complete), truncation header', async () => {
  const s = S + 50000n, e = E - 50000n;
  for (const table of ['Instruction', 'DmaPacketAggregated', 'DmaPacket', 'SemaphoreUpdate', 'CcInstruction']) {
    for (const mode of [['--width', '53'], ['--no-sample']]) {
      const out = join(DIR, `csv-${table}-${mode[0]}`);
      execFileSync(BIN, ['export-csv', PROF, '--start', `${s}`, '--end', `${e}`, '--tables', table, '--out', out, ...mode]);
      const want = readFileSync(join(out, `${table}.csv`), 'utf8');
      const qs = mode[0] === '--width' ? `sampled=1&width=53` : 'sampled=0';
      const r = await req(`/api/profiles/${D}/export/${table}.csv?start=${s}&end=${e}&${qs}`);
      assert.equal(r.status, 200, r.body);
      assert.equal(r.body, want, `${table} ${mode[0]}`);
      assert.match(r.headers['content-type'], /^text\/csv/);
      assert.equal(r.headers['content-disposition'], `attachment; filename="${D}_${table}_${s}_${e}.csv"`);
      assert.equal(r.headers['x-nxprof-truncated'], undefined);
      assert.equal(Number(r.headers['x-nxprof-rows']), csvRecords(want) - 1, `${table} rows header`);
    }
  }
  // Truncated: header line + max_rows rows, same as export-csv --max-rows.
  for (const qs of ['sampled=0', 'sampled=1&width=1920']) {
    const r = await req(`/api/profiles/${D}/export/Instruction.csv?start=${S}&end=${E}&${qs}&max_rows=3`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-nxprof-truncated'], 'true');
    assert.equal(r.headers['x-nxprof-rows'], '3');
    const out = join(DIR, `trunc-${qs.length}`);
    const mode = qs === 'sampled=0' ? ['--no-sample'] : ['--width', '1920'];
    try {
      execFileSync(BIN, ['export-csv', PROF, '--start', `${S}`, '--end', `${E}`, '--tables', 'Instruction', '--out', out, '--max-rows', '3', ...mode], { stdio: 'pipe' });
      assert.fail('export-csv should exit 3');
    } catch (err) {
      assert.equal(err.status, 3);
    }
    assert.equal(r.body, readFileSync(join(out, 'Instruction.csv'), 'utf8'));
  }
  // HEAD: headers, no body.
  const h = await req(`/api/profiles/${D}/export/Instruction.csv?start=${S}&end=${E}&sampled=0&max_rows=3`, { method: 'HEAD' });
  assert.equal(h.status, 200);
  assert.equal(h.headers['x-nxprof-truncated'], 'true');
  assert.equal(h.body, '');
  // An empty window: header only.
  const em = await req(`/api/profiles/${D}/export/Instruction.csv?start=0&end=5`);
  assert.equal(em.body.split('\n').filter(Boolean).length, 1);
  assert.equal((await req(`/api/profiles/${D}/export/Summary.csv?start=0&end=5`)).status, 400);
  assert.equal((await req(`/api/profiles/${D}/export/CcOp.csv?start=0&end=5`)).status, 200);
  assert.equal((await req(`/api/profiles/${D}/export/Instruction.txt?start=0&end=5`)).status, 404);
  assert.equal((await req(`/api/profiles/${D}/export/Instruction.csv?start=0&end=5&sampled=0&width=5`)).status, 400);
});

test('parameter validation: 400 with a JSON error', async () => {
  const TL = `/api/profiles/${D}/timeline?tables=Instruction`;
  const bad = [
    `${TL}&start=1e3&end=5&width=5`, `${TL}&start=+5&end=9&width=5`, `${TL}&start=007&end=9&width=5`,
    `${TL}&start=%205&end=9&width=5`, `${TL}&start=-0&end=9&width=5`, `${TL}&start=5&end=4&width=5`,
    `${TL}&start=0&end=9&width=0`, `${TL}&start=0&end=9&width=10001`, `${TL}&start=0&end=9&width=abc`,
    `${TL}&start=0&end=99999999999999999999&width=5`, `${TL}&end=9&width=5`, `${TL}&start=0&end=9`,
    `/api/profiles/${D}/timeline?tables=Instruction,Instruction&start=0&end=9&width=5`,
    `/api/profiles/${D}/timeline?tables=Nope&start=0&end=9&width=5`,
    `/api/profiles/${D}/timeline?tables=&start=0&end=9&width=5`,
    `/api/profiles/${D}/export/Instruction.csv?start=0&end=9&sampled=2`,
    `/api/profiles/${D}/export/Instruction.csv?start=0&end=9&max_rows=0`,
    `/api/profiles/${D}/summary?top=0`, `/api/profiles/${D}/event?table=Instruction&ordinal=-1`,
    `/api/profiles/${D}/event?table=Instruction&ordinal=1%00`, `/api/profiles/${D}/usage?tables=Instruction&start=0&end=9&width=5`,
  ];
  for (const p of bad) {
    const r = await req(p);
    assert.equal(r.status, 400, `${p}: ${r.status} ${r.body}`);
    assert.equal(typeof JSON.parse(r.body).error, 'string');
  }
  assert.equal((await req(`${TL}&start=-9223372036854775808&end=9223372036854775807&width=5`)).status, 400);
  assert.equal((await req(`${TL}&start=-9223372036854775808&end=0&width=5`)).status, 200);
});

test('404, 405, traversal attempts and oversize requests', async () => {
  for (const p of ['/api/profiles/nope', '/api/profiles/nope/tracks', '/api/nope', `/api/profiles/${D}/nope`,
    '/nope.html', '/static/nope.js'])
    assert.equal((await req(p)).status, 404, p);
  for (const m of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const r = await req('/api/profiles', { method: m, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 405, m);
    assert.equal(r.headers.allow, 'GET, HEAD');
  }
  assert.equal((await req('/api/profiles', { method: 'POST' })).status, 415, 'a POST that is not JSON');
  const traversal = [
    '/api/profiles/../../../../etc/passwd', '/api/profiles/..', '/api/profiles/../tracks',
    '/api/profiles/%2e%2e/tracks', '/api/profiles/%2E%2E%2F%2E%2E%2Fetc/tracks', '/api/profiles/..%2f..%2fetc%2fpasswd',
    '/api/profiles/%2fetc%2fpasswd/tracks', '/api/profiles//etc/passwd', `/api/profiles/${D}%00/tracks`,
    `/api/profiles/${D}%00evil`, `/api/profiles/${D}@latest/tracks`, '/api/profiles/evil/summary',
    '/api/profiles/%2e%2e%2foutside%2fsecret/tracks', '/static/../../../etc/passwd', '/static/%2e%2e/%2e%2e/etc/passwd',
    '/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/static/%2fetc%2fpasswd', '/index.html%00.js',
    `/api/profiles/${'a'.repeat(300)}/tracks`,
    `/api/profiles/${D}/event?table=../../etc/passwd&ordinal=0`,
    `/api/profiles/${D}/export/..%2f..%2fInstruction.csv?start=0&end=1`,
  ];
  for (const p of traversal) {
    const r = await req(p);
    assert.ok(r.status >= 400 && r.status < 500, `${p}: ${r.status}`);
    assert.doesNotMatch(r.body, /root:|secret/, p);
    assert.equal(typeof JSON.parse(r.body).error, 'string', p);
  }
  // Oversize: URL, parameter count, header block, request body.
  assert.equal((await req(`/api/profiles/${'x'.repeat(9000)}`)).status, 414);
  assert.equal((await req(`/api/health?q=${'x'.repeat(9000)}`)).status, 414); // the query counts too
  assert.equal((await req(`/api/profiles?${Array.from({ length: 40 }, (_, i) => `p${i}=1`).join('&')}`)).status, 414);
  const huge = await req('/api/profiles', { headers: { 'X-Big': 'y'.repeat(100000) } }).catch(() => ({ status: 'closed' }));
  assert.ok(huge.status === 'closed' || huge.status >= 400, `huge header: ${huge.status}`);
  const withBody = await req('/api/profiles', { headers: { 'Content-Length': '5' }, body: 'hello' });
  assert.equal(withBody.status, 413);
  // Garbage on a raw socket does not hurt the server.
  await new Promise((resolve) => {
    const s = net.connect(BASE_PORT, '127.0.0.1', () => s.end('\x00\xff GARBAGE\r\n\r\n'));
    s.on('close', resolve);
    s.on('error', resolve);
    s.resume();
  });
  const h = await json('/api/health');
  assert.equal(h.ok, true);
});

test('static files: index at / and client routes, assets under / and /static/', async () => {
  const root = await req('/');
  assert.equal(root.status, 200);
  assert.match(root.headers['content-type'], /^text\/html/);
  assert.equal((await req('/profile/tiny')).body, root.body);
  assert.equal((await req('/view/nested/devices/nested%40latest-nd0-nc0')).body, root.body);
  const idx = readFileSync(join(SRC, 'web', 'index.html'), 'utf8');
  assert.equal(root.body, idx);
  for (const f of ['app.js', 'style.css']) {
    let want;
    try { want = readFileSync(join(SRC, 'web', f), 'utf8'); } catch { continue; }
    assert.equal((await req(`/${f}`)).body, want);
    assert.equal((await req(`/static/${f}`)).body, want);
  }
});

test('SIGTERM stops the server with exit 0', async () => {
  server.kill('SIGTERM');
  const r = await exited;
  assert.equal(r.code, 0);
});
