// top.test.mjs — `nxprof top` against DuckDB running the same GROUP BY over the same
// Parquet files: a tiny synth capture is processed (once whole, once split into
// Instruction_0.parquet, Instruction_1.parquet, ... by --max-rows-per-file 7) and
// `nxprof top --format csv --limit 1000` must equal, line for line,
//   SELECT <by>, count(*), sum(duration_ns) ... GROUP BY ALL ORDER BY sum DESC, <by> ASC
// (the tie rule nxprof documents). Also: --by with one and three columns, the
// count-only fallback for a table without duration_ns, JSON output, text totals.
// Each run writes a system profile and one device profile per NeuronCore
// (docs/architecture.md, "Output layout"); `top` is checked on every device profile, whole
// and split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { requireBin, tempDir, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-top-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
const SPLIT = join(DIR, 'split');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
execFileSync(BIN, ['process', CAP, '--output-file', SPLIT, '--max-rows-per-file', '7']);
const WHOLE_DEVICES = profileLayout(PROF, CAP).devices, SPLIT_DEVICES = profileLayout(SPLIT, CAP).devices;

const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const sql = async (q) => (await duckdb.runAndReadAll(q)).getRows();
const q = (s) => `'${s.replaceAll("'", "''")}'`;

const top = (...args) => execFileSync(BIN, ['top', ...args], { encoding: 'utf8' });

// RFC 4180 lines -> arrays of fields (nxprof quotes only fields that need it).
function parseCsv(text) {
  const rows = [];
  for (const line of text.split('\n').filter((l) => l !== '')) {
    const out = [];
    let cur = '', inq = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (inq) {
        if (ch === '"' && line[i + 1] === '"') { cur += '"'; i++; }
        else if (ch === '"') inq = false;
        else cur += ch;
      } else if (ch === '"') inq = true;
      else if (ch === ',') { out.push(cur); cur = ''; }
      else cur += ch;
    }
    out.push(cur);
    rows.push(out);
  }
  return rows;
}

// DuckDB rows as the strings nxprof's CSV holds (null -> empty field).
const asText = (rows) => rows.map((r) => r.map((v) => (v === null ? '' : String(v))));

async function duckTop(source, by) {
  const cols = by.join(', ');
  const keys = by.map((_, i) => `${i + 1}`).join(', ');
  const n = by.length;
  return asText(await sql(`SELECT ${cols}, count(*), sum(duration_ns) FROM ${source}
    GROUP BY ALL ORDER BY ${n + 2} DESC NULLS LAST, ${keys}`));
}

test('one device profile per core, in both runs', () => {
  assert.equal(WHOLE_DEVICES.length, 2);
  for (const devs of [WHOLE_DEVICES, SPLIT_DEVICES])
    for (const d of devs) assert.ok(existsSync(d.dir), `${d.dir} written`);
});

WHOLE_DEVICES.forEach((dev, k) => {
  const PROF = dev.dir, SPLIT = SPLIT_DEVICES[k].dir;
  const T = (name) => `${dev.name}: ${name}`;
  const whole = `read_parquet(${q(join(PROF, 'Instruction.parquet'))})`;
  const split = `read_parquet(${q(join(SPLIT, 'Instruction_*.parquet'))})`;

  test(T('default top (engine, opcode) equals DuckDB exactly'), async () => {
    const got = parseCsv(top(PROF, '--format', 'csv', '--limit', '1000'));
    assert.deepEqual(got[0], ['engine', 'opcode', 'count', 'sum_duration_ns']);
    const want = await duckTop(whole, ['engine', 'opcode']);
    assert.ok(want.length > 3, `groups: ${want.length}`);
    assert.deepEqual(got.slice(1), want);
  });

  test(T('--limit keeps the first N groups'), async () => {
    const got = parseCsv(top(PROF, '--format', 'csv', '--limit', '3'));
    const want = await duckTop(whole, ['engine', 'opcode']);
    assert.deepEqual(got.slice(1), want.slice(0, 3));
  });

  test(T('split table: Instruction_0.. files, no Instruction.parquet, all rows read'), async () => {
    const files = readdirSync(SPLIT).filter((f) => /^Instruction_\d+\.parquet$/.test(f));
    assert.ok(files.length > 2, `split files: ${files}`);
    assert.ok(existsSync(join(SPLIT, 'Instruction_0.parquet')));
    assert.ok(!existsSync(join(SPLIT, 'Instruction.parquet')));
    const [[a]] = await sql(`SELECT count(*) FROM ${whole}`);
    const [[b]] = await sql(`SELECT count(*) FROM ${split}`);
    assert.equal(b, a);
  });

  test(T('top over the split files equals top over the whole table and DuckDB over the split files'), async () => {
    const a = top(PROF, '--format', 'csv', '--limit', '1000');
    const b = top(SPLIT, '--format', 'csv', '--limit', '1000');
    assert.equal(b, a);
    assert.deepEqual(parseCsv(b).slice(1), await duckTop(split, ['engine', 'opcode']));
    const c = top(SPLIT, '--format', 'csv', '--limit', '0', '--by', 'engine,opcode,pcore_idx');
    assert.deepEqual(parseCsv(c).slice(1), await duckTop(split, ['engine', 'opcode', 'pcore_idx']));
  });

  test(T('--by with one column'), async () => {
    const got = parseCsv(top(PROF, '--format', 'csv', '--by', 'engine', '--limit', '1000'));
    assert.deepEqual(got[0], ['engine', 'count', 'sum_duration_ns']);
    assert.deepEqual(got.slice(1), await duckTop(whole, ['engine']));
  });

  test(T('--by with three columns (string, string, nullable integer)'), async () => {
    const by = ['opcode', 'timeline_track', 'pcore_idx'];
    const got = parseCsv(top(PROF, '--format', 'csv', '--by', by.join(','), '--limit', '0'));
    assert.deepEqual(got[0], [...by, 'count', 'sum_duration_ns']);
    assert.deepEqual(got.slice(1), await duckTop(whole, by));
  });

  test(T('a table without duration_ns: counts only, ordered by count then key'), async () => {
    const got = parseCsv(top(PROF, '--table', 'DmaQueuesInfo', '--by', 'type', '--format', 'csv'));
    assert.deepEqual(got[0], ['type', 'count']);
    const want = asText(await sql(`SELECT type, count(*) FROM read_parquet(${q(join(PROF, 'DmaQueuesInfo.parquet'))})
      GROUP BY ALL ORDER BY 2 DESC, 1`));
    assert.deepEqual(got.slice(1), want.slice(0, 10));
  });

  test(T('json output parses and holds exact totals and the same groups'), async () => {
    const j = JSON.parse(top(PROF, '--format', 'json', '--limit', '5'));
    const [[n, s, g]] = await sql(`SELECT count(*), sum(duration_ns), count(DISTINCT (engine, opcode)) FROM ${whole}`);
    assert.equal(j.table, 'Instruction');
    assert.deepEqual(j.by, ['engine', 'opcode']);
    assert.equal(BigInt(j.rows), BigInt(n));
    assert.equal(BigInt(j.sum_duration_ns), BigInt(s));
    assert.equal(BigInt(j.groups), BigInt(g));
    assert.equal(j.top.length, 5);
    const want = (await duckTop(whole, ['engine', 'opcode'])).slice(0, 5);
    assert.deepEqual(j.top.map((r) => [r.engine, r.opcode, String(r.count), String(r.sum_duration_ns)]), want);
    const pct = j.top.reduce((a, r) => a + r.percent, 0);
    assert.ok(pct > 0 && pct <= 100.0001);
  });

  test(T('text output: header, percent column and a total line with the row count'), async () => {
    const t = top(PROF);
    const [[n, s]] = await sql(`SELECT count(*), sum(duration_ns) FROM ${whole}`);
    const lines = t.split('\n');
    assert.ok(lines.some((l) => /^engine\s+opcode\s+count\s+sum_duration_ns\s+percent$/.test(l)), t);
    const total = lines.find((l) => l.startsWith('total'));
    assert.match(total, new RegExp(`^total\\s+${n}\\s+${s}\\s+100\\.00%$`));
    assert.ok(lines.some((l) => /^\(\d+ other groups\)/.test(l)), 'default limit 10 folds the rest');
  });
});
