// process_device_mem.test.mjs — SystemProfileHbmUsage from the system capture's
// device_mem.tsv (docs/capture-format.md, "System capture"), read back with DuckDB and
// checked against the file parsed here independently:
//   - a synth tiny capture: the file's version and header lines are the documented ones
//     (the categories are the reference schema's *_bytes fields but total_bytes, in order);
//     every line is a row, in file order, with every column equal, total_bytes = the BigInt
//     sum of the 22 categories and instance_id = the session directory's instance id, in the
//     system profile (none in a device profile); the table's columns and DuckDB types follow
//     the reference schema;
//   - hand-written captures: two sessions give one system profile each (--data-path; with
//     --output-file, which takes one session, exit 1 and nothing written), each with its own
//     session's lines in file order, sums up to exactly INT64_MAX; no table for a header-only
//     file or for a capture without the file;
//   - bad files (wrong version line, wrong header, a negative or non-integer field, unsorted
//     timestamps, a sum beyond int64, a truncated line) make `nxprof process` exit 1 with a
//     message naming the file and the line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB, pq, exists, synthProcessed } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-devmem-');

const { sql } = await openDuckDB();

// The reference schema's SystemProfileHbmUsage fields, in order.
const reference = readFileSync(join(TEST_DATA, 'reference', 'profile-schema-7.4.0.tsv'), 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')).filter(([t]) => t === 'SystemProfileHbmUsage');
const CATEGORIES = reference.map(([, f]) => f).filter((f) => f.endsWith('_bytes') && f !== 'total_bytes');
const HEADER = ['timestamp_ns', 'device_idx', 'hbm_idx', ...CATEGORIES];
const VERSION = '#nxprof device-memory 1';
const INT64_MAX = 2n ** 63n - 1n;

// device_mem.tsv per docs/capture-format.md: version line, header line, then lines of 25
// non-negative int64 decimals sorted by timestamp_ns. Returns [{ts, device, hbm, cats, total}].
function parseDeviceMem(text) {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  assert.equal(lines[0], VERSION);
  assert.equal(lines[1], HEADER.join('\t'));
  let prev = -1n;
  return lines.slice(2).map((l, i) => {
    const f = l.split('\t');
    assert.equal(f.length, HEADER.length, `line ${i + 3} has ${HEADER.length} fields`);
    const v = f.map((x) => {
      assert.match(x, /^\d{1,19}$/);
      const n = BigInt(x);
      assert.ok(n <= INT64_MAX);
      return n;
    });
    assert.ok(v[0] >= prev, `line ${i + 3} sorted`);
    prev = v[0];
    const cats = v.slice(3);
    return { ts: v[0], device: v[1], hbm: v[2], cats, total: cats.reduce((a, b) => a + b, 0n) };
  });
}

const process_ = (cap, prof) => spawnSync(BIN, ['process', cap, '--output-file', prof], { encoding: 'utf8' });

async function hbmRows(prof) {
  return sql(`SELECT * FROM ${pq(prof, 'SystemProfileHbmUsage')} ORDER BY file_row_number`);
}

// One row against one parsed line.
function checkRow(r, want, instance, where) {
  assert.equal(BigInt(r.timestamp), want.ts, `${where} timestamp`);
  assert.equal(BigInt(r.device_idx), want.device, `${where} device_idx`);
  assert.equal(BigInt(r.hbm_idx), want.hbm, `${where} hbm_idx`);
  CATEGORIES.forEach((c, k) => assert.equal(BigInt(r[c]), want.cats[k], `${where} ${c}`));
  assert.equal(BigInt(r.total_bytes), want.total, `${where} total_bytes = sum of the categories`);
  assert.equal(r.instance_id, instance, `${where} instance_id`);
}

// --- synth tiny ------------------------------------------------------------------------------

const { prof: PROF, system: SYSTEM, devices: DEVICES, instance, sessionPath } = synthProcessed(BIN, DIR);

test('the reference schema gives 22 categories', () => {
  assert.equal(CATEGORIES.length, 22);
  assert.equal(CATEGORIES[0], 'generic_bytes');
  assert.equal(CATEGORIES.at(-1), 'unknown_bytes');
});

test('synth: every device_mem.tsv line is a SystemProfileHbmUsage row of the system profile with every column equal', async () => {
  const want = parseDeviceMem(readFileSync(join(sessionPath, 'device_mem.tsv'), 'utf8'));
  assert.ok(want.length >= 100, `lines: ${want.length}`);
  assert.equal(SYSTEM, PROF);
  assert.equal(DEVICES.length, 2);
  for (const d of DEVICES) assert.ok(!exists(join(d.dir, 'SystemProfileHbmUsage.parquet')), `${d.name}: a system table`);
  const rows = await hbmRows(PROF);
  assert.equal(rows.length, want.length);
  want.forEach((w, i) => checkRow(rows[i], w, instance, `row ${i}`));
  // synth's structure: HBM 0 and 1 of device 0 (2 cores) at each 10 ms sample
  assert.deepEqual([...new Set(want.map((w) => `${w.device}/${w.hbm}`))].sort(), ['0/0', '0/1']);
  const host = readFileSync(join(sessionPath, 'host_mem.tsv'), 'utf8').split('\n').slice(2).filter(Boolean);
  assert.equal(want.length, 2 * host.length, 'two HBM snapshots per host-memory sample');
  // the categories are not all constant: weights appear with the load, tensors vary
  const weights = new Set(want.map((w) => w.cats[CATEGORIES.indexOf('weights_bytes')]));
  const tensors = new Set(want.map((w) => w.cats[CATEGORIES.indexOf('tensors_bytes')]));
  assert.ok(weights.has(0n) && weights.size >= 2);
  assert.ok(tensors.size >= 3);
  assert.ok(want.at(-1).total > 0n);
});

test('synth: SystemProfileHbmUsage columns and types follow the reference schema', async () => {
  const cols = await sql(`DESCRIBE SELECT * FROM read_parquet('${join(PROF, 'SystemProfileHbmUsage.parquet')}')`);
  assert.deepEqual(cols.map((c) => c.column_name), reference.map(([, f]) => f));
  reference.forEach(([, f, type, format], i) => {
    const want = type === 'string' ? 'VARCHAR' : format === 'int64' || format === '' ? 'BIGINT' : '?';
    assert.equal(cols[i].column_type, want, `${f}: ${type}/${format}`);
  });
  const [c] = await sql(`SELECT count(*) AS n, ${reference.map(([, f], i) => `count("${f}") AS c${i}`).join(', ')}
    FROM ${pq(PROF, 'SystemProfileHbmUsage')}`);
  reference.forEach(([, f, , , , req], i) => {
    if (req === 'Yes') assert.equal(Number(c[`c${i}`]), Number(c.n), `${f} has no null`);
  });
});

test('synth: SystemProfileMetadata still spans the samples', async () => {
  const want = parseDeviceMem(readFileSync(join(sessionPath, 'device_mem.tsv'), 'utf8'));
  const [m] = await sql(`SELECT first_ts_ns, last_ts_ns FROM ${pq(PROF, 'SystemProfileMetadata')}`);
  assert.ok(BigInt(m.first_ts_ns) <= want[0].ts && BigInt(m.last_ts_ns) >= want.at(-1).ts);
});

// --- hand-written captures ---------------------------------------------------------------

const line = (ts, device, hbm, cats) => [ts, device, hbm, ...cats].map(String).join('\t');
const cats = (f) => CATEGORIES.map((_, k) => f(k));
let nCap = 0;
function capture(sessions) {
  const cap = join(DIR, `hand${nCap++}`);
  for (const [name, files] of Object.entries(sessions)) {
    const dir = join(cap, name, '1766000000000000000');
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  }
  return cap;
}
const devFile = (lines) => [VERSION, HEADER.join('\t'), ...lines].join('\n') + '\n';

test('two sessions: one system profile each, own lines in file order; sums up to INT64_MAX', async () => {
  const big = cats((k) => (k === 0 ? INT64_MAX - 21n : 1n));   // 21 ones + (MAX - 21) = MAX
  const a = [line(100, 0, 0, cats((k) => k)), line(300, 0, 1, big), line(300, 0, 0, cats(() => 7))];
  const b = [line(100, 1, 0, cats((k) => 1000 * k)), line(200, 1, 1, cats(() => 0))];
  const cap = capture({ 'i-0aaa_pid_1': { 'device_mem.tsv': devFile(a) },
    'i-0bbb_pid_2': { 'device_mem.tsv': devFile(b).replace(/\n$/, '') } });   // no final LF
  // --output-file takes one session: refused before any work, nothing written.
  const prof = join(DIR, 'hand-prof-two');
  const refused = process_(cap, prof);
  assert.equal(refused.status, 1, refused.stderr);
  assert.match(refused.stderr, /2 capture sessions/);
  assert.ok(!exists(prof));
  // --data-path: N-s<k> for the k-th session in the order of their directory paths.
  const dp = join(DIR, 'hand-dp-two');
  const res = spawnSync(BIN, ['process', cap, '--data-path', dp, '--display-name', 'two'], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const pa = parseDeviceMem(devFile(a)), pb = parseDeviceMem(devFile(b));
  for (const [name, want, inst] of [['two-s1', pa, 'i-0aaa'], ['two-s2', pb, 'i-0bbb']]) {
    const rows = await hbmRows(join(dp, 'profiles', 'global', `${name}@latest`));
    assert.equal(rows.length, want.length, name);
    want.forEach((w, i) => checkRow(rows[i], w, inst, `${name} row ${i}`));
  }
  const [s1] = await sql(`SELECT total_bytes FROM ${pq(join(dp, 'profiles', 'global', 'two-s1@latest'), 'SystemProfileHbmUsage')}
    WHERE file_row_number = 1`);
  assert.equal(BigInt(s1.total_bytes), INT64_MAX);
});

test('no table for a header-only device_mem.tsv or a capture without it', async () => {
  const host = '#nxprof host-memory 1\ntimestamp_ns\tused_bytes\ttotal_bytes\n5\t1\t2\n';
  for (const files of [{ 'device_mem.tsv': devFile([]), 'host_mem.tsv': host }, { 'host_mem.tsv': host }]) {
    const cap = capture({ 'i-0ccc_pid_3': files }), prof = join(DIR, `hand-prof-${nCap}`);
    const res = process_(cap, prof);
    assert.equal(res.status, 0, res.stderr);
    assert.ok(exists(join(prof, 'HostMemUsage.parquet')));
    assert.ok(!exists(join(prof, 'SystemProfileHbmUsage.parquet')), Object.keys(files).join(','));
  }
});

const good = line(10, 0, 0, cats((k) => k));
const BAD = [
  ['wrong version line', ['#nxprof device-memory 2', HEADER.join('\t'), good], 1],
  ['other kind in the version line', ['#nxprof host-memory 1', HEADER.join('\t'), good], 1],
  ['wrong header (total_bytes as a column)', [VERSION, [...HEADER.slice(0, 3), 'total_bytes', ...CATEGORIES].join('\t'), good], 2],
  ['wrong header (categories without _bytes)', [VERSION, HEADER.map((h) => h.replace(/_bytes$/, '')).join('\t'), good], 2],
  ['negative field', [VERSION, HEADER.join('\t'), good, line(11, 0, 0, cats((k) => (k === 5 ? -3 : k)))], 4],
  ['non-integer field', [VERSION, HEADER.join('\t'), line(10, 0, 0, cats((k) => (k === 9 ? '1.5' : k)))], 3],
  ['non-integer index', [VERSION, HEADER.join('\t'), line(10, 'x', 0, cats((k) => k))], 3],
  ['unsorted timestamps', [VERSION, HEADER.join('\t'), good, line(20, 0, 0, cats(() => 1)), line(19, 0, 1, cats(() => 1))], 5],
  ['sum beyond int64', [VERSION, HEADER.join('\t'), good, line(11, 0, 0, cats((k) => (k < 2 ? 2n ** 62n : 0n)))], 4],
  ['field beyond int64', [VERSION, HEADER.join('\t'), line(10, 0, 0, cats((k) => (k ? 0n : 2n ** 63n)))], 3],
  ['truncated line', [VERSION, HEADER.join('\t'), good, good.split('\t').slice(0, 12).join('\t')], 4],
];

for (const [what, lines, at] of BAD) {
  test(`bad device_mem.tsv (${what}): exit 1 naming the file and line ${at}`, () => {
    const cap = capture({ 'i-0ddd_pid_4': { 'device_mem.tsv': lines.join('\n') + '\n' } });
    const res = process_(cap, join(DIR, `bad-prof-${nCap}`));
    assert.equal(res.status, 1, `${what}: status ${res.status}, stderr ${res.stderr}`);
    assert.match(res.stderr, /device_mem\.tsv/, res.stderr);
    assert.match(res.stderr, new RegExp(`line ${at}\\b`), res.stderr);
  });
}
