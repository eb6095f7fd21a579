// summary_cli.test.mjs — `nxprof summary` and `nxprof view --ingest-only` checked
// against DuckDB reading the same Summary.parquet / OpcodeSummary.parquet of a device
// profile: the JSON holds exactly the non-null Summary fields with their values (FLOAT
// columns compared as 32-bit floats), top_opcodes equals ORDER BY instruction_time_ns
// DESC, engine, opcode LIMIT 10; a device profile lacking those tables exits 1 naming
// them; the system profile's summary lists its DeviceProfileList; view --ingest-only
// writes the same tables as process and prints the same summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { requireBin, tempDir } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-summary-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
const has = (d, t) => readdirSync(d).includes(`${t}.parquet`);
// PROF is the capture's system profile; its device profiles lie under devices/.
const DEV = join(PROF, 'devices', readdirSync(join(PROF, 'devices')).sort()[0]);

const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const q = (s) => `'${s.replaceAll("'", "''")}'`;
const run = (args) => spawnSync(BIN, args, { encoding: 'utf8' });

test('summary --format json: every non-null Summary field, exact', async () => {
  const r = run(['summary', DEV, '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  const res = await duckdb.runAndReadAll(`SELECT * FROM read_parquet(${q(join(DEV, 'Summary.parquet'))})`);
  const names = res.columnNames(), types = res.columnTypes().map(String), row = res.getRows()[0];
  const want = {};
  names.forEach((n, i) => { if (row[i] !== null) want[n] = [types[i], row[i]]; });
  assert.deepEqual(Object.keys(j.summary), Object.keys(want));
  for (const [n, [ty, v]] of Object.entries(want)) {
    if (ty === 'FLOAT') assert.equal(Math.fround(j.summary[n]), v, n);
    else if (ty === 'BIGINT' || ty === 'INTEGER') assert.equal(String(j.summary[n]), String(v), n);
    else assert.equal(j.summary[n], v, n);
  }
});

test('summary top_opcodes: the 10 largest instruction_time_ns', async () => {
  const j = JSON.parse(run(['summary', DEV, '--format', 'json']).stdout);
  const want = (await duckdb.runAndReadAll(`SELECT engine, opcode, instruction_count, instruction_time_ns, active_time_ns
    FROM read_parquet(${q(join(DEV, 'OpcodeSummary.parquet'))})
    ORDER BY instruction_time_ns DESC, engine, opcode LIMIT 10`)).getRows().map((r) => r.map(String));
  assert.deepEqual(j.top_opcodes.map((r) => [r.engine, r.opcode, r.instruction_count, r.instruction_time_ns,
    r.active_time_ns].map(String)), want);
});

test('summary text: sections, units, top opcodes', () => {
  assert.ok(has(DEV, 'Summary') && has(DEV, 'OpcodeSummary'));
  const r = run(['summary', DEV]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Time and counts$/m);
  assert.match(r.stdout, /^Top \d+ opcodes by instruction time/m);
  assert.doesNotMatch(r.stdout, /null|NaN/);
});

test('a device profile without Summary/OpcodeSummary: exit 1, tables named', () => {
  const bare = join(DIR, 'bare');
  cpSync(DEV, bare, { recursive: true });
  rmSync(join(bare, 'Summary.parquet'), { force: true });
  rmSync(join(bare, 'OpcodeSummary.parquet'), { force: true });
  const r = run(['summary', bare]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no Summary table/);
  assert.match(r.stderr, /no OpcodeSummary table/);
  assert.equal(run(['summary', join(DIR, 'nope')]).status, 1);
});

test('summary of the system profile: its device profiles, as DeviceProfileList names them', async () => {
  const r = run(['summary', PROF, '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.kind, 'system');
  const want = (await duckdb.runAndReadAll(`SELECT device_profile_name, nc_id
    FROM read_parquet(${q(join(PROF, 'DeviceProfileList.parquet'))})`)).getRows().map((x) => x.map(String));
  assert.deepEqual(j.device_profiles.map((d) => [d.name, String(d.nc_id)]), want);
  for (const d of j.device_profiles) {
    assert.equal(d.error, null);
    assert.equal(d.dir, join(PROF, 'devices', d.name));
    assert.ok(d.executions > 0 && d.physical_cores > 0);
  }
});

test('view -d --ingest-only writes what process writes; summary-json equals summary', () => {
  const v = join(DIR, 'viewed');
  const r = run(['view', '-d', CAP, '--ingest-only', '--output-file', v, '--output-format', 'summary-json']);
  assert.deepEqual(readdirSync(v).sort(), readdirSync(PROF).sort());
  const s = run(['summary', v, '--format', 'json']);
  assert.equal(r.status, s.status, r.stderr);
  assert.equal(r.stdout, s.stdout);
  assert.match(r.stderr, /view: wrote /);
  const t = run(['view', '-d', CAP, '--ingest-only', '--output-file', join(DIR, 'v2')]);
  assert.equal(t.status, 0, t.stderr);
  assert.match(t.stdout, /view: wrote /);
});
