// schema_fields.test.mjs — SchemaFields.parquet as written by the processor's table
// writer (through tests/e2e/tools/schema_fields_write), read by an independent reader,
// DuckDB, and checked against the reference schema TSV: one row per table×field in
// reference order, the catalogue's column names, types and nullability, and nulls
// exactly where the reference gives no format, unit or example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';

const WRITE = process.env.SCHEMA_FIELDS_WRITE;
if (!WRITE) throw new Error('set SCHEMA_FIELDS_WRITE to the schema_fields_write executable (ctest does)');
const DIR = tempDir('nxprof-schema-fields-');

const tsv = (name) => readFileSync(`${TEST_DATA}/reference/${name}`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));
const reference = tsv('profile-schema-7.4.0.tsv');
const enumNames = new Set(tsv('profile-schema-7.4.0-enums.tsv').map(([e]) => e));

execFileSync(WRITE, [DIR]);
const FILE = join(DIR, 'SchemaFields.parquet');
const { sql } = await openDuckDB();
const src = `read_parquet('${FILE.replaceAll("'", "''")}', file_row_number = true)`;

// DuckDB's name for each reference (type, format) that SchemaFields uses.
const duckType = { 'string/': 'VARCHAR', 'boolean/': 'BOOLEAN', 'number/float': 'FLOAT', 'integer/int64': 'BIGINT' };

test('one row per table and field of the reference schema', async () => {
  const [{ n }] = await sql(`SELECT count(*) AS n FROM ${src}`);
  assert.equal(Number(n), 656);
  assert.equal(reference.length, 656);
});

test('columns, types and nullability follow the SchemaFields rows of the schema', async () => {
  const own = reference.filter(([t]) => t === 'SchemaFields');
  const described = await sql(`DESCRIBE SELECT * EXCLUDE (file_row_number) FROM ${src}`);
  assert.deepEqual(described.map((c) => c.column_name), own.map(([, name]) => name));
  own.forEach(([, name, type, format], i) => {
    assert.equal(described[i].column_type, duckType[`${type}/${format}`], `${name} type`);
  });
  const schema = await sql(`SELECT name, repetition_type FROM parquet_schema('${FILE}') WHERE name <> 'schema'`);
  own.forEach(([, name, , , , required], i) => {
    assert.equal(schema[i].name, name);
    assert.equal(schema[i].repetition_type, required === 'Yes' ? 'REQUIRED' : 'OPTIONAL', `${name} repetition`);
  });
  const kv = await sql(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${FILE}')`);
  assert.ok(kv.some(({ k, v }) => k === 'profile_schema_version' && v === '7.4.0'), 'profile_schema_version');
});

test('every row matches the reference, with nulls where it gives nothing', async () => {
  const rows = await sql(`SELECT * FROM ${src} ORDER BY file_row_number`);
  const orNull = (s) => (s === '' ? null : s);
  reference.forEach(([table, name, type, format, unit, required, en, example], i) => {
    const r = rows[i];
    const at = `row ${i + 1} (${table}.${name})`;
    assert.deepEqual(
      [r.table_name, r.field_name, r.field_type, r.field_required, r.field_format, r.field_unit, r.field_example],
      [table, name, type, required === 'Yes', orNull(format), orNull(unit), orNull(example)], at);
    assert.equal(r.field_minimum, null, `${at} minimum`);
    assert.equal(r.field_maximum, null, `${at} maximum`);
    assert.ok(r.table_description.length > 10 && r.field_description.length > 10, `${at} descriptions`);
    if (enumNames.has(en)) {
      const values = JSON.parse(r.field_enum_values);
      assert.ok(Array.isArray(values) && values.length > 0, `${at} enum values`);
    } else {
      assert.equal(r.field_enum_values, null, `${at} not an enum`);
    }
  });
});
