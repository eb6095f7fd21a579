// timeline_index.test.mjs — the timeline index (src/profile/timeline_index.h) gives exactly
// what a scan of the Parquet files gives, and is never used when it does not match them.
//
// A llama-layer capture (200K records, two NeuronCores, several tracks per table) is
// processed whole and split into files of 40,000 rows, each into a system profile and one
// device profile per core (docs/architecture.md, "Output layout"); the timeline tables and
// their indexes are in the device profiles. For random windows and widths (1 to 100,000 buckets,
// windows inside, across and outside the profile), the sampled `export-csv` of the five
// exportable tables (and of the system profiles' SystemProfileEvents, sampled per track,
// depth and bucket; there also bench_query's checksum over the kept events and their
// depths) with the index must be byte-identical to the same export with
// NXPROF_NO_TIMELINE_INDEX=1 (the scan, itself checked against JS-computed winners by
// js.export_csv). bench_query reports which path answered, so the test also checks that
// the index is used where it should be and not used when it is stale (the table rewritten
// by DuckDB), truncated, or corrupted (a corrupted index must not crash anything), and that
// `nxprof index` builds one for a profile written by another tool (DuckDB, files of unequal
// size) that answers exactly as the scan does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tempDir, profileLayout } from './lib/harness.mjs';

const BIN = process.env.NXPROF_BIN;
const BENCH = process.env.NXPROF_BENCH_QUERY;
if (!BIN || !BENCH) throw new Error('set NXPROF_BIN and NXPROF_BENCH_QUERY (ctest does)');
const DIR = tempDir('nxprof-tlx-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
const SPLIT = join(DIR, 'split');
execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', '200000', '--seed', '11', '--out', CAP]);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
execFileSync(BIN, ['process', CAP, '--output-file', SPLIT, '--max-rows-per-file', '40000']);
const DEVICES = profileLayout(PROF, CAP).devices, SPLIT_DEVICES = profileLayout(SPLIT, CAP).devices;

const TABLES = ['Instruction', 'DmaPacketAggregated', 'DmaPacket', 'CcInstruction', 'SemaphoreUpdate'];
const duck = await (await DuckDBInstance.create(':memory:')).connect();
// Each device profile's Instruction span, read before any test is registered.
for (const d of DEVICES) {
  [d.lo, d.hi] = (await duck.runAndReadAll(
    `SELECT min(start_ts)::VARCHAR, max(end_ts)::VARCHAR FROM read_parquet('${d.dir}/Instruction*.parquet')`))
    .getRows()[0].map(BigInt);
}

let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const randTs = (LO, HI) => LO - (HI - LO) / 20n + BigInt(Math.floor(rand() * 1e6)) * ((HI - LO) * 11n / 10n) / 1000000n;

function exportDir(prof, start, end, width, scan) {
  const out = join(DIR, `out-${scan ? 'scan' : 'index'}`);
  rmSync(out, { recursive: true, force: true });
  const r = spawnSync(BIN, ['export-csv', prof, '--start', String(start), '--end', String(end), '--width', String(width),
                            '--tables', TABLES.join(','), '--max-rows', '100000000', '--out', out],
                      { env: { ...process.env, NXPROF_NO_TIMELINE_INDEX: scan ? '1' : '0' }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Object.fromEntries(readdirSync(out).sort().map((f) => [f, readFileSync(join(out, f), 'utf8')]));
}

function benchPath(prof, table, start, end, width, scan = false) {
  const r = spawnSync(BENCH, [prof, table, String(start), String(end), String(width), '1'],
                      { env: { ...process.env, NXPROF_NO_TIMELINE_INDEX: scan ? '1' : '0' }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('one device profile per core in both runs; the system profiles index SystemProfileEvents only', () => {
  assert.equal(DEVICES.length, 2);
  assert.equal(SPLIT_DEVICES.length, 2);
  for (const sys of [PROF, SPLIT]) {
    const files = readdirSync(sys);
    assert.ok(files.includes('SystemProfileEvents.parquet'), `${sys} is the system profile`);
    assert.deepEqual(files.filter((f) => f.endsWith('.nxtl')), ['.SystemProfileEvents.nxtl'], `${sys}: its one index`);
  }
});

test('SystemProfileEvents: sampled exports and the sampled pass (per track, depth and bucket) from the index equal the scan', async () => {
  const [LO, HI] = (await duck.runAndReadAll(
    `SELECT min(start_ts)::VARCHAR, max(end_ts)::VARCHAR FROM read_parquet('${PROF}/SystemProfileEvents.parquet')`))
    .getRows()[0].map(BigInt);
  const windows = [[LO, HI], [LO - 1000n, HI + 1000n], [HI + 10n, HI + 1000n]];
  for (let i = 0; i < 6; i++) {
    const a = randTs(LO, HI), b = randTs(LO, HI);
    windows.push(a <= b ? [a, b] : [b, a]);
  }
  const exp = (start, end, width, scan) => {
    const out = join(DIR, `sys-${scan ? 'scan' : 'index'}`);
    rmSync(out, { recursive: true, force: true });
    const r = spawnSync(BIN, ['export-csv', PROF, '--start', String(start), '--end', String(end), '--width', String(width),
                              '--tables', 'SystemProfileEvents', '--out', out],
                        { env: { ...process.env, NXPROF_NO_TIMELINE_INDEX: scan ? '1' : '0' }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(join(out, 'SystemProfileEvents.csv'), 'utf8');
  };
  for (const [k, [s, e]] of windows.entries()) {
    const width = [1, 3, 640, 1920, 100000][k % 5];
    assert.ok(exp(s, e, width, false) === exp(s, e, width, true), `[${s}, ${e}] width ${width}: index and scan differ`);
    // The kept events with their depths (bench_query's checksum covers each event's depth).
    const x = benchPath(PROF, 'SystemProfileEvents', s, e, width), y = benchPath(PROF, 'SystemProfileEvents', s, e, width, true);
    assert.equal(x.index, true);
    assert.deepEqual([x.checksum, x.samples, x.rows_in_window, x.tracks], [y.checksum, y.samples, y.rows_in_window, y.tracks],
                     `[${s}, ${e}] width ${width}: depths from the index and the scan differ`);
  }
  const a = benchPath(PROF, 'SystemProfileEvents', LO, HI, 1920);
  const b = benchPath(PROF, 'SystemProfileEvents', LO, HI, 1920, true);
  assert.equal(a.index, true);
  assert.equal(a.checksum, b.checksum);
});

test('every timeline table gets a hidden index beside its Parquet files', () => {
  for (const prof of [...DEVICES, ...SPLIT_DEVICES].map((d) => d.dir)) {
    const files = readdirSync(prof);
    for (const t of TABLES.concat(['CcOp'])) {
      const hasTable = files.some((f) => f === `${t}.parquet` || f.startsWith(`${t}_`));
      assert.equal(files.includes(`.${t}.nxtl`), hasTable, `${prof}: .${t}.nxtl`);
    }
    assert.ok(!files.some((f) => f.endsWith('.nxtl') && !f.startsWith('.')), 'index files are hidden');
    assert.ok(!files.includes('.Warning.nxtl') && !files.includes('.Summary.nxtl'), 'only timeline tables');
  }
  for (const d of SPLIT_DEVICES)
    assert.ok(readdirSync(d.dir).includes('Instruction_1.parquet'), `${d.name}: the split profile has several files`);
});

test('sampled exports from the index equal the scan, window by window', () => {
  const widths = [1, 2, 7, 640, 1920, 100000];
  // Per core: its profile's edges and 7 random windows (14 random windows in all).
  const windows = [];
  DEVICES.forEach((d, n) => {
    const [LO, HI] = [d.lo, d.hi];
    const profs = [d.dir, SPLIT_DEVICES[n].dir];
    windows.push(...[[LO, HI], [LO - 1000n, HI + 1000n], [HI + 10n, HI + 1000n], [LO + (HI - LO) / 2n, LO + (HI - LO) / 2n]]
      .map((w) => [...w, profs]));
    for (let i = 0; i < 7; i++) {
      const a = randTs(LO, HI), b = randTs(LO, HI);
      windows.push([...(a <= b ? [a, b] : [b, a]), profs]);
    }
  });
  let k = 0;
  for (const [s, e, profs] of windows) {
    for (const prof of profs) {
      const width = widths[k++ % widths.length];
      const idx = exportDir(prof, s, e, width, false);
      const scan = exportDir(prof, s, e, width, true);
      assert.deepEqual(Object.keys(idx), Object.keys(scan));
      for (const f of Object.keys(scan))
        assert.ok(idx[f] === scan[f], `${prof} ${f} [${s}, ${e}] width ${width}: index and scan differ`);
    }
  }
});

test('the sampled pass reports the index path and the same checksum as the scan', () => {
  for (const [n, d] of DEVICES.entries()) {
    const [LO, HI] = [d.lo, d.hi];
    for (const prof of [d.dir, SPLIT_DEVICES[n].dir]) for (const t of TABLES) {
      const a = benchPath(prof, t, LO, HI, 1920);
      const b = benchPath(prof, t, LO, HI, 1920, true);
      assert.equal(a.index, true, `${prof} ${t}: index used`);
      assert.equal(b.index, false);
      assert.equal(a.checksum, b.checksum, `${t}: same samples`);
      assert.equal(a.rows_in_window, b.rows_in_window);
      assert.equal(a.tracks, b.tracks);
    }
  }
});

test('nxprof index indexes a profile written by another tool, split unevenly', async () => {
  const { dir: PROF, lo: LO, hi: HI } = DEVICES[0];
  // The reference layout written by DuckDB: Instruction in two files of unequal size (one
  // SNAPPY), no index files at all.
  const other = join(DIR, 'other');
  mkdirSync(other);
  await duck.run(`COPY (SELECT * FROM read_parquet('${PROF}/Instruction.parquet') LIMIT 12345) TO '${other}/Instruction_0.parquet' (FORMAT parquet)`);
  await duck.run(`COPY (SELECT * FROM read_parquet('${PROF}/Instruction.parquet') OFFSET 12345) TO '${other}/Instruction_1.parquet' (FORMAT parquet, COMPRESSION snappy)`);
  await duck.run(`COPY (SELECT * FROM read_parquet('${PROF}/SemaphoreUpdate.parquet')) TO '${other}/SemaphoreUpdate.parquet' (FORMAT parquet)`);
  const before = Object.fromEntries(['Instruction', 'SemaphoreUpdate'].map((t) => [t, benchPath(other, t, LO, HI, 640, true)]));
  assert.equal(benchPath(other, 'Instruction', LO, HI, 640).index, false, 'no index yet');
  const ix = spawnSync(BIN, ['index', other], { encoding: 'utf8' });
  assert.equal(ix.status, 0, ix.stderr);
  assert.deepEqual(ix.stdout.trim().split('\n').map((l) => l.split(/\s+/)[0]), ['Instruction', 'SemaphoreUpdate'],
                   'one line per table the profile has');
  for (const t of ['Instruction', 'SemaphoreUpdate']) {
    const a = benchPath(other, t, LO, HI, 640);
    assert.equal(a.index, true, `${t}: indexed`);
    assert.equal(a.checksum, before[t].checksum, `${t}: same events (ordinals across unequal files)`);
    assert.equal(a.rows_in_window, before[t].rows_in_window);
  }
  const idx = exportDir(other, LO, HI, 1920, false), scan = exportDir(other, LO, HI, 1920, true);
  for (const f of Object.keys(scan)) assert.ok(idx[f] === scan[f], `${f}: export with the built index equals the scan`);
  // Usage and input errors.
  assert.equal(spawnSync(BIN, ['index', other, '--tables', 'Summary']).status, 2);
  assert.equal(spawnSync(BIN, ['index', other, '--tables', 'Instruction,Instruction']).status, 2);
  assert.equal(spawnSync(BIN, ['index', join(DIR, 'nope')]).status, 1);
  assert.equal(spawnSync(BIN, ['index']).status, 2);
});

test('a stale, truncated or corrupted index is not trusted', async () => {
  const { dir: PROF, lo: LO, hi: HI } = DEVICES[1];
  const ref = benchPath(PROF, 'Instruction', LO, HI, 1920, true);
  // Stale: Instruction re-written by DuckDB (same rows, another writer).
  const stale = join(DIR, 'stale');
  cpSync(PROF, stale, { recursive: true });
  await duck.run(`COPY (SELECT * FROM read_parquet('${PROF}/Instruction.parquet')) TO '${stale}/Instruction.parquet' (FORMAT parquet)`);
  let r = benchPath(stale, 'Instruction', LO, HI, 1920);
  assert.equal(r.index, false, 'stale index not used');
  assert.equal(r.checksum, ref.checksum);
  // `nxprof index` rebuilds it from the rewritten files, and it answers as the scan does.
  let ix = spawnSync(BIN, ['index', stale, '--tables', 'Instruction'], { encoding: 'utf8' });
  assert.equal(ix.status, 0, ix.stderr);
  assert.match(ix.stdout, /^Instruction\s+\d+ rows\s+indexed$/m);
  r = benchPath(stale, 'Instruction', LO, HI, 1920);
  assert.equal(r.index, true, 'rebuilt index used');
  assert.equal(r.checksum, ref.checksum);
  // Truncated.
  const trunc = join(DIR, 'trunc');
  cpSync(PROF, trunc, { recursive: true });
  truncateSync(join(trunc, '.Instruction.nxtl'), Math.floor(statSync(join(trunc, '.Instruction.nxtl')).size / 2));
  r = benchPath(trunc, 'Instruction', LO, HI, 1920);
  assert.equal(r.index, false, 'truncated index not used');
  assert.equal(r.checksum, ref.checksum);
  // Bad magic.
  const bad = join(DIR, 'bad');
  cpSync(PROF, bad, { recursive: true });
  const buf = readFileSync(join(bad, '.Instruction.nxtl'));
  buf[0] ^= 0xff;
  writeFileSync(join(bad, '.Instruction.nxtl'), buf);
  r = benchPath(bad, 'Instruction', LO, HI, 1920);
  assert.equal(r.index, false, 'index with a bad magic not used');
  // Random damage inside the sections: never a crash (a damaged index may answer or fall back).
  buf[0] ^= 0xff;
  for (let i = 0; i < 20; i++) {
    const d = Buffer.from(buf);
    for (let j = 0; j < 64; j++) d[128 + Math.floor(rand() * (d.length - 128))] = Math.floor(rand() * 256);
    writeFileSync(join(bad, '.Instruction.nxtl'), d);
    const x = spawnSync(BENCH, [bad, 'Instruction', String(LO), String(HI), '640', '1'], { encoding: 'utf8' });
    assert.equal(x.signal, null, `damaged index ${i}: ${x.stderr}`);
    assert.equal(x.status, 0, x.stderr);
  }
  // The index never replaces a missing table.
  rmSync(join(bad, 'Instruction.parquet'));
  const x = spawnSync(BIN, ['export-csv', bad, '--start', String(LO), '--end', String(HI), '--tables', 'Instruction',
                            '--out', join(DIR, 'none')], { encoding: 'utf8' });
  assert.ok(existsSync(join(DIR, 'none')) || x.status !== 0);
  assert.ok(!existsSync(join(DIR, 'none', 'Instruction.csv')), 'no rows for a table that is gone');
});
