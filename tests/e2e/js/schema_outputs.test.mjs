// schema_outputs.test.mjs — `nxprof schema` in both formats, parsed by real parsers
// (JSON.parse, the `yaml` package) and compared with the reference schema TSV.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { TEST_DATA } from './lib/harness.mjs';

const BIN = process.env.NXPROF_BIN;
const run = (...args) => execFileSync(BIN, args, { encoding: 'utf8', maxBuffer: 64 << 20 });

const reference = readFileSync(`${TEST_DATA}/reference/profile-schema-7.4.0.tsv`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));
const referenceEnums = readFileSync(`${TEST_DATA}/reference/profile-schema-7.4.0-enums.tsv`, 'utf8')
  .split('\n').slice(1).filter(Boolean).map((l) => l.split('\t'));

test('JSON form agrees with the reference on every field and has no extras', () => {
  const doc = JSON.parse(run('schema', '--format', 'json'));
  assert.equal(doc.version, '7.4.0');
  assert.equal(doc.tables.length, 52);
  const flat = doc.tables.flatMap((t) => t.fields.map((f) => [t.name, f]));
  assert.equal(flat.length, reference.length);
  reference.forEach(([table, name, type, format, unit, required, en, example], i) => {
    const [t, f] = flat[i];
    assert.deepEqual(
      [t, f.name, f.type, f.format, f.unit, f.required, f.enum, f.example],
      [table, name, type, format, unit, required === 'Yes', en, example],
      `row ${i + 1}`);
    assert.ok(f.description.split(' ').length >= 4, `${t}.${f.name} has a description`);
  });
  for (const t of doc.tables) {
    assert.equal(typeof t.transient, 'boolean');
    assert.ok(t.kind && t.description, `${t.name} has kind and description`);
  }
});

test('YAML form is an OpenAPI 3 document with every table, property and required list', () => {
  const doc = YAML.parse(run('schema'));
  assert.match(doc.openapi, /^3\./);
  const schemas = doc.components.schemas;
  const byTable = new Map();
  for (const [table, name, type, format, unit, required, en] of reference) {
    if (!byTable.has(table)) byTable.set(table, []);
    byTable.get(table).push({ name, type, format, unit, required, en });
  }
  assert.equal(byTable.size, 52);
  for (const [table, fields] of byTable) {
    const s = schemas[table];
    assert.ok(s, `schema ${table}`);
    assert.equal(s.type, 'object');
    assert.ok(s.description.length > 10);
    assert.deepEqual(Object.keys(s.properties), fields.map((f) => f.name), `${table} properties in order`);
    assert.deepEqual(s.required ?? [], fields.filter((f) => f.required === 'Yes').map((f) => f.name));
    for (const f of fields) {
      const p = s.properties[f.name];
      assert.ok(p.description.length > 10, `${table}.${f.name} description`);
      if (f.unit) assert.equal(p['x-unit'], f.unit);
      if (f.type.startsWith('array of ')) {
        assert.equal(p.type, 'array');
      } else if (['integer', 'number', 'string', 'boolean'].includes(f.type)) {
        assert.equal(p.type, f.type);
        if (f.format) assert.equal(p.format, f.format);
      } else {
        assert.equal(p.type, 'string', `${table}.${f.name}: enum-typed field`);
      }
    }
  }
  // Enum values appear both as schemas and inline on the fields that use them.
  const enums = new Map();
  for (const [e, v] of referenceEnums) enums.set(e, [...(enums.get(e) ?? []), v]);
  for (const [e, values] of enums) assert.deepEqual(schemas[e].enum, values);
  assert.deepEqual(schemas.DmaPacket.properties.queue_type.enum, enums.get('DmaQueueType'));
  assert.deepEqual(schemas.MemoryBandwidthSeries.properties.direction.enum, enums.get('MemoryBandwidthDirection'));
});

test('view --show-profile-schema is the YAML form', () => {
  assert.equal(run('view', '--show-profile-schema'), run('schema', '--format', 'yaml'));
});
