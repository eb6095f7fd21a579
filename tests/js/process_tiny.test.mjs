// process_tiny.test.mjs — `nxprof process` on a tiny synth capture, read back by an
// independent reader (DuckDB) and checked against the capture itself, decoded here
// straight from docs/capture-format.md (not through nxprof's readers): one
// Instruction row per instruction record of every .nxtrace, start times equal to
// epoch_ns + floor(ticks * den / num), rows sorted by start_ts; and for every table
// written: the reference schema's columns in order with the mapped Parquet types, no
// null in a required column, timeline tables sorted with time statistics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-process-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);

const reference = readFileSync(`${TEST_DATA}/reference/profile-schema-7.4.0.tsv`, 'utf8')
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

const { sql } = await openDuckDB();
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

// Every table written: DuckDB sees exactly the reference schema's columns, in its
// order, with the Parquet types the design maps them to; required columns hold no
// null; timeline tables are sorted by their time column and carry its statistics.
const DUCK_TYPE = {
  'integer/int64': 'BIGINT', 'integer/int32': 'INTEGER', 'integer/': 'BIGINT', 'number/float': 'FLOAT',
  'number/double': 'DOUBLE', 'number/': 'DOUBLE', 'string/': 'VARCHAR', 'boolean/': 'BOOLEAN',
  'array of integer/int64': 'BIGINT[]', 'array of integer/': 'BIGINT[]', 'array of string/': 'VARCHAR[]',
};
const written = readdirSync(PROF).filter((n) => n.endsWith('.parquet')).map((n) => n.replace(/\.parquet$/, ''));
const TIMELINE = ['Instruction', 'DmaPacket', 'DmaPacketAggregated', 'SemaphoreUpdate', 'CcOp', 'CcInstruction',
  'ActiveTime', 'Throttle', 'Error', 'SystemProfileEvents'];

test('the tiny profile has the tables its activity implies', () => {
  for (const t of ['Instruction', 'DmaPacket', 'DmaPacketAggregated', 'SemaphoreUpdate', 'ActiveTime', 'OpcodeSummary',
    'Summary', 'Metadata', 'SchemaFields', 'SystemProfileEvents', 'CpuUsage', 'HostMemUsage', 'Flow']) {
    assert.ok(written.includes(t), `${t}.parquet written (have ${written.join(', ')})`);
  }
});

for (const table of written) {
  test(`${table}: columns, types and required values follow the reference schema`, async () => {
    const fields = reference.filter(([t]) => t === table);
    assert.ok(fields.length > 0, `${table} is a reference table`);
    const cols = await sql(`DESCRIBE SELECT * FROM read_parquet('${join(PROF, `${table}.parquet`)}')`);
    assert.deepEqual(cols.map((c) => c.column_name), fields.map(([, f]) => f));
    fields.forEach(([, f, type, format], i) => {
      const want = DUCK_TYPE[`${type}/${format}`] ?? DUCK_TYPE[`${type}/`];
      assert.equal(cols[i].column_type, want, `${table}.${f}: ${type}/${format}`);
    });
    const required = fields.filter(([, , , , , req]) => req === 'Yes').map(([, f]) => f);
    const [counts] = await sql(`SELECT count(*) AS n, ${
      required.length ? required.map((f, i) => `count("${f}") AS c${i}`).join(', ') : '0 AS none'
    } FROM ${file(table)}`);
    assert.ok(Number(counts.n) > 0, `${table} has rows (empty tables are not written)`);
    required.forEach((f, i) => assert.equal(Number(counts[`c${i}`]), Number(counts.n), `${table}.${f} has nulls`));
  });
}

for (const table of written.filter((t) => TIMELINE.includes(t))) {
  test(`${table}: sorted by its time column, with statistics`, async () => {
    const names = reference.filter(([t]) => t === table).map(([, f]) => f);
    const tcol = names.includes('start_ts') ? 'start_ts' : 'timestamp';
    const [{ n }] = await sql(`SELECT count(*) AS n FROM (SELECT "${tcol}" AS t,
        lag("${tcol}") OVER (ORDER BY file_row_number) AS prev FROM ${file(table)}) WHERE prev > t`);
    assert.equal(Number(n), 0, `${table} rows out of ${tcol} order`);
    const stats = await sql(`SELECT stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata('${join(PROF, `${table}.parquet`)}')
      WHERE path_in_schema = '${tcol}'`);
    assert.ok(stats.length > 0 && stats.every((s) => s.lo !== null && s.hi !== null),
      `${table}.${tcol} has min/max statistics in every row group`);
  });
}

test('Metadata carries the schema version, one row per trace', async () => {
  const rows = await sql(`SELECT profile_schema_version AS v FROM ${file('Metadata')}`);
  assert.equal(rows.length, traces.length);
  for (const r of rows) assert.equal(r.v, '7.4.0');
});
