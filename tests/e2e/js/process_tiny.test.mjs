// process_tiny.test.mjs — `nxprof process` on a tiny synth capture (two NeuronCores), read
// back by an independent reader (DuckDB) and checked against the capture itself, decoded
// here straight from docs/capture-format.md (not through nxprof's readers). The run writes a
// system profile and one device profile per trace (docs/architecture.md, "Output layout");
// in each core's device profile: one Instruction row per instruction record of that core's
// .nxtrace and of no other, start times equal to epoch_ns + floor(ticks * den / num), rows
// sorted by start_ts, Metadata naming that core; and for every table of every profile: the
// reference schema's columns in order with the mapped Parquet types, no null in a required
// column, timeline tables sorted with time statistics; device tables only in device
// profiles, system tables only in the system profile, whose DeviceProfileList names the
// device profiles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-process-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
const { system: SYSTEM, devices: DEVICES } = profileLayout(PROF, CAP);

const reference = readFileSync(`${TEST_DATA}/reference/profile-schema-7.4.0.tsv`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));

// Unix-ns start times of every instruction record (kind 1) of one trace, per the spec:
// header u32 header_size @12, u32 record_size @16, u32 num @32, u32 den @36, i64 epoch @40,
// u32 neuron_device_idx @56, u32 neuroncore_idx @60; record: u8 kind @0, u64 start ticks @8.
function traceFacts(path) {
  const b = readFileSync(path);
  assert.equal(b.subarray(0, 8).toString('latin1'), 'NXTRACE\0');
  const headerSize = b.readUInt32LE(12), recordSize = b.readUInt32LE(16);
  const num = BigInt(b.readUInt32LE(32)), den = BigInt(b.readUInt32LE(36));
  const epoch = b.readBigInt64LE(40);
  const starts = [];
  for (let at = headerSize; at + recordSize <= b.length; at += recordSize) {
    if (b[at] === 1) starts.push(epoch + (b.readBigUInt64LE(at + 8) * den) / num);
  }
  return { device: b.readUInt32LE(56), core: b.readUInt32LE(60), starts };
}
for (const d of DEVICES) d.facts = traceFacts(d.trace);
const allStarts = DEVICES.flatMap((d) => d.facts.starts);

const { sql } = await openDuckDB();
const file = (dir, t) => `read_parquet('${join(dir, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;
const parquetTables = (dir) => readdirSync(dir).filter((n) => n.endsWith('.parquet')).map((n) => n.replace(/\.parquet$/, ''));

test('the capture has device traces with instruction records', () => {
  assert.ok(DEVICES.length >= 2, `traces found: ${DEVICES.length}`);
  assert.equal(SYSTEM, PROF, 'a capture with system data gives a system profile');
  for (const d of DEVICES) assert.ok(d.facts.starts.length > 50, `${basename(d.trace)}: ${d.facts.starts.length} instruction records`);
  assert.ok(allStarts.length > 100, `instruction records: ${allStarts.length}`);
});

test('the system profile holds a devices/ folder with exactly one device profile per trace', () => {
  assert.deepEqual(readdirSync(join(PROF, 'devices')).sort(), DEVICES.map((d) => d.name).sort());
});

test('DeviceProfileList: one row per device profile, named as its directory', async () => {
  const rows = await sql(`SELECT device_profile_name AS n, nc_id FROM ${file(SYSTEM, 'DeviceProfileList')} ORDER BY file_row_number`);
  assert.deepEqual(rows.map((r) => r.n).sort(), readdirSync(join(PROF, 'devices')).sort());
  for (const r of rows) {
    const d = DEVICES.find((x) => x.name === r.n);
    assert.ok(d, `no device profile directory for ${r.n}`);
    assert.equal(Number(r.nc_id), d.nc, `${r.n}: nc_id`);
  }
});

for (const d of DEVICES) {
  test(`${d.name}: one Instruction row per instruction record of its own trace, with the same start times`, async () => {
    const rows = await sql(`SELECT start_ts FROM ${file(d.dir, 'Instruction')} ORDER BY file_row_number`);
    assert.equal(rows.length, d.facts.starts.length, `${d.name}: rows = the instruction records of ${basename(d.trace)}`);
    const got = rows.map((r) => BigInt(r.start_ts));
    const want = [...d.facts.starts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.deepEqual(got, want);
  });

  test(`${d.name}: Instruction is sorted by start_ts in file order`, async () => {
    const [{ n }] = await sql(`SELECT count(*) AS n FROM (SELECT start_ts,
        lag(start_ts) OVER (ORDER BY file_row_number) AS prev FROM ${file(d.dir, 'Instruction')})
      WHERE prev > start_ts`);
    assert.equal(Number(n), 0);
  });

  test(`${d.name}: duration_ns is end_ts - start_ts and never negative`, async () => {
    const [{ n }] = await sql(`SELECT count(*) AS n FROM ${file(d.dir, 'Instruction')}
      WHERE duration_ns <> end_ts - start_ts OR duration_ns < 0`);
    assert.equal(Number(n), 0);
  });

  test(`${d.name}: Metadata has one row, the schema version, its core and its name`, async () => {
    const rows = await sql(`SELECT profile_schema_version AS v, neuroncore_idx AS nc, neuron_device_idx AS nd,
        profile_name FROM ${file(d.dir, 'Metadata')}`);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].v, '7.4.0');
    assert.equal(Number(rows[0].nc), d.facts.core);
    assert.equal(Number(rows[0].nc), d.nc, 'the header agrees with the file name');
    assert.equal(Number(rows[0].nd), d.facts.device);
    assert.equal(rows[0].profile_name, d.name);
  });
}

// Every table written: DuckDB sees exactly the reference schema's columns, in its
// order, with the Parquet types the design maps them to; required columns hold no
// null; timeline tables are sorted by their time column and carry its statistics.
const DUCK_TYPE = {
  'integer/int64': 'BIGINT', 'integer/int32': 'INTEGER', 'integer/': 'BIGINT', 'number/float': 'FLOAT',
  'number/double': 'DOUBLE', 'number/': 'DOUBLE', 'string/': 'VARCHAR', 'boolean/': 'BOOLEAN',
  'array of integer/int64': 'BIGINT[]', 'array of integer/': 'BIGINT[]', 'array of string/': 'VARCHAR[]',
};
const TIMELINE = ['Instruction', 'DmaPacket', 'DmaPacketAggregated', 'SemaphoreUpdate', 'CcOp', 'CcInstruction',
  'ActiveTime', 'Throttle', 'Error', 'SystemProfileEvents', 'CoreBarriers', 'SbufAllocation'];
const SYSTEM_TABLES = ['SystemProfileEvents', 'CpuUsage', 'HostMemUsage', 'SystemProfileHbmUsage', 'HbmUsageSummaryByType', 'SystemProfileMetadata',
  'DeviceProfileList', 'Metadata', 'SchemaFields'];
const DEVICE_TABLES = ['Instruction', 'DmaPacket', 'DmaPacketAggregated', 'SemaphoreUpdate', 'ActiveTime', 'OpcodeSummary',
  'Summary', 'Metadata', 'SchemaFields', 'Flow', 'ExecutionInfo'];
const profiles = [{ name: 'system profile', dir: SYSTEM }, ...DEVICES];

test('the system profile has the system tables and no device table', () => {
  const written = parquetTables(SYSTEM);
  for (const t of SYSTEM_TABLES) assert.ok(written.includes(t), `${t}.parquet written (have ${written.join(', ')})`);
  for (const t of written) assert.ok(SYSTEM_TABLES.includes(t) || t === 'Warning', `${t} does not belong in the system profile`);
});

for (const d of DEVICES) {
  test(`${d.name}: the tables its activity implies, and no system table`, () => {
    const written = parquetTables(d.dir);
    for (const t of DEVICE_TABLES) assert.ok(written.includes(t), `${t}.parquet written (have ${written.join(', ')})`);
    for (const t of SYSTEM_TABLES.filter((x) => x !== 'Metadata' && x !== 'SchemaFields'))
      assert.ok(!written.includes(t), `${d.name}: ${t} is a system table`);
  });
}

for (const { name, dir } of profiles) {
  const written = parquetTables(dir);
  for (const table of written) {
    test(`${name} ${table}: columns, types and required values follow the reference schema`, async () => {
      const fields = reference.filter(([t]) => t === table);
      assert.ok(fields.length > 0, `${table} is a reference table`);
      const cols = await sql(`DESCRIBE SELECT * FROM read_parquet('${join(dir, `${table}.parquet`)}')`);
      assert.deepEqual(cols.map((c) => c.column_name), fields.map(([, f]) => f));
      fields.forEach(([, f, type, format], i) => {
        const want = DUCK_TYPE[`${type}/${format}`] ?? DUCK_TYPE[`${type}/`];
        assert.equal(cols[i].column_type, want, `${table}.${f}: ${type}/${format}`);
      });
      const required = fields.filter(([, , , , , req]) => req === 'Yes').map(([, f]) => f);
      const [counts] = await sql(`SELECT count(*) AS n, ${
        required.length ? required.map((f, i) => `count("${f}") AS c${i}`).join(', ') : '0 AS none'
      } FROM ${file(dir, table)}`);
      assert.ok(Number(counts.n) > 0, `${table} has rows (empty tables are not written)`);
      required.forEach((f, i) => assert.equal(Number(counts[`c${i}`]), Number(counts.n), `${table}.${f} has nulls`));
    });
  }

  for (const table of written.filter((t) => TIMELINE.includes(t))) {
    test(`${name} ${table}: sorted by its time column, with statistics`, async () => {
      const names = reference.filter(([t]) => t === table).map(([, f]) => f);
      const tcol = names.includes('start_ts') ? 'start_ts' : 'timestamp';
      const [{ n }] = await sql(`SELECT count(*) AS n FROM (SELECT "${tcol}" AS t,
          lag("${tcol}") OVER (ORDER BY file_row_number) AS prev FROM ${file(dir, table)}) WHERE prev > t`);
      assert.equal(Number(n), 0, `${table} rows out of ${tcol} order`);
      const stats = await sql(`SELECT stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata('${join(dir, `${table}.parquet`)}')
        WHERE path_in_schema = '${tcol}'`);
      assert.ok(stats.length > 0 && stats.every((s) => s.lo !== null && s.hi !== null),
        `${table}.${tcol} has min/max statistics in every row group`);
    });
  }
}

test('the system profile\'s Metadata carries the schema version and its name, one row', async () => {
  const rows = await sql(`SELECT profile_schema_version AS v, profile_name FROM ${file(SYSTEM, 'Metadata')}`);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].v, '7.4.0');
  assert.equal(rows[0].profile_name, basename(PROF));
});
