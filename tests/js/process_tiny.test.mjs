// process_tiny.test.mjs — `nxprof process` on a tiny synth capture, read back by an
// independent reader (DuckDB) and checked against the capture itself, decoded here
// straight from docs/capture-format.md (not through nxprof's readers): one
// Instruction row per instruction record of every .nxtrace, start times equal to
// epoch_ns + floor(ticks * den / num), rows sorted by start_ts, and no null in any
// column the reference schema marks required, in every table written.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const BIN = process.env.NXPROF_BIN;
if (!BIN) throw new Error('set NXPROF_BIN to the nxprof executable (ctest does)');
const SHARED = process.env.NXPROF_SHARED ?? '../shared';
const DIR = mkdtempSync(join(tmpdir(), 'nxprof-process-'));
after(() => rmSync(DIR, { recursive: true, force: true }));

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);

const reference = readFileSync(`${SHARED}/reference/profile-schema-7.4.0.tsv`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));

// Every trace_*.nxtrace under the capture, found by walking the directory tree.
const walk = (d) => readdirSync(d).flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? walk(p) : [p];
});
const traces = walk(CAP).filter((p) => /\/trace_[0-9a-f]{16}_nd\d+_nc\d+\.nxtrace$/.test(p));

// Unix-ns start times of every instruction record (kind 1), per the spec: header
// u32 header_size @12, u32 record_size @16, u32 num @32, u32 den @36, i64 epoch @40;
// record: u8 kind @0, u64 start ticks @8.
const starts = [];
for (const path of traces) {
  const b = readFileSync(path);
  assert.equal(b.subarray(0, 8).toString('latin1'), 'NXTRACE\0');
  const headerSize = b.readUInt32LE(12), recordSize = b.readUInt32LE(16);
  const num = BigInt(b.readUInt32LE(32)), den = BigInt(b.readUInt32LE(36));
  const epoch = b.readBigInt64LE(40);
  for (let at = headerSize; at + recordSize <= b.length; at += recordSize) {
    if (b[at] === 1) starts.push(epoch + (b.readBigUInt64LE(at + 8) * den) / num);
  }
}

const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const sql = async (q) => (await duckdb.runAndReadAll(q)).getRowObjectsJS();
const file = (t) => `read_parquet('${join(PROF, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;

test('the capture has device traces with instruction records', () => {
  assert.ok(traces.length >= 2, `traces found: ${traces.length}`);
  assert.ok(starts.length > 100, `instruction records: ${starts.length}`);
});

test('one Instruction row per instruction record, with the same start times', async () => {
  const rows = await sql(`SELECT start_ts FROM ${file('Instruction')} ORDER BY file_row_number`);
  assert.equal(rows.length, starts.length);
  const got = rows.map((r) => BigInt(r.start_ts));
  const want = [...starts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.deepEqual(got, want);
});

test('Instruction is sorted by start_ts in file order', async () => {
  const [{ n }] = await sql(`SELECT count(*) AS n FROM (SELECT start_ts,
      lag(start_ts) OVER (ORDER BY file_row_number) AS prev FROM ${file('Instruction')})
    WHERE prev > start_ts`);
  assert.equal(Number(n), 0);
});

test('duration_ns is end_ts - start_ts and never negative', async () => {
  const [{ n }] = await sql(`SELECT count(*) AS n FROM ${file('Instruction')}
    WHERE duration_ns <> end_ts - start_ts OR duration_ns < 0`);
  assert.equal(Number(n), 0);
});

for (const table of ['Instruction', 'NeffHeader', 'DmaQueuesInfo', 'Metadata']) {
  test(`${table}: every required column is present and never null`, async () => {
    const required = reference.filter(([t, , , , , req]) => t === table && req === 'Yes').map(([, f]) => f);
    const [counts] = await sql(`SELECT count(*) AS n, ${
      required.length ? required.map((f, i) => `count("${f}") AS c${i}`).join(', ') : '0 AS none'
    } FROM ${file(table)}`);
    assert.ok(Number(counts.n) > 0, `${table} has rows`);
    required.forEach((f, i) => assert.equal(Number(counts[`c${i}`]), Number(counts.n), `${table}.${f} has nulls`));
  });
}

test('Metadata carries the schema version, one row per trace', async () => {
  const rows = await sql(`SELECT profile_schema_version AS v FROM ${file('Metadata')}`);
  assert.equal(rows.length, traces.length);
  for (const r of rows) assert.equal(r.v, '7.4.0');
});
