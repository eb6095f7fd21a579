// export_csv.test.mjs — `nxprof export-csv` against independent computations.
//
// A tiny synth capture (seed 5) is processed, into a system profile and one device profile
// per NeuronCore (docs/architecture.md, "Output layout"); then, on each device profile:
//  - unsampled: each of the five tables' CSV equals a DuckDB query over the same Parquet
//    (window rule, track rule, schema field order from src/schema/catalogue.tsv, values,
//    order by start then file row), with the CSV parsed by an RFC 4180 parser written here;
//  - sampled: the rows equal the per-(track, bucket) winners computed here with BigInt
//    from the complete export (bucket rule, longest / earliest start / earliest row);
//  - truncation (exit 3, row count == limit, stderr names the table and limit);
//  - hostile strings written into SemaphoreUpdate with DuckDB (quoting, formula guard);
//  - time units, header-only windows, split files;
//  - the reference layout: the profile re-written table by table by DuckDB and by Polars
//    gives byte-identical export-csv and `top` output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';
import { requireBin, tempDir, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DIR = tempDir('nxprof-export-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
const SPLIT = join(DIR, 'split');
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
execFileSync(BIN, ['process', CAP, '--output-file', PROF]);
execFileSync(BIN, ['process', CAP, '--output-file', SPLIT, '--max-rows-per-file', '7']);
const DEVICES = profileLayout(PROF, CAP).devices, SPLIT_DEVICES = profileLayout(SPLIT, CAP).devices;

const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
const q = (s) => `'${s.replaceAll("'", "''")}'`;

const TABLES = ['Instruction', 'DmaPacketAggregated', 'DmaPacket', 'CcInstruction', 'SemaphoreUpdate'];
const POINT = { SemaphoreUpdate: true };
const START = (t) => (POINT[t] ? 'timestamp' : 'start_ts');
const END = (t) => (POINT[t] ? 'timestamp' : 'end_ts');
// The track rule of docs/query.md, in SQL.
const TRACK = {
  Instruction: "coalesce(nullif(timeline_track, ''), engine, '')",
  DmaPacketAggregated: "coalesce(queue_name, 'queue' || queue_idx, '')",
  DmaPacket: "coalesce(queue_name, 'queue' || queue_idx, '')",
  CcInstruction: "coalesce('CC' || core_idx, '')",
  SemaphoreUpdate: "coalesce(id, '')",
};

// Schema field order, read from the catalogue source.
const FIELDS = {};
for (const line of readFileSync(join(SRC, 'src/schema/catalogue.tsv'), 'utf8').split('\n')) {
  const f = line.split('\t');
  if (f[0] === 'field') (FIELDS[f[1]] ??= []).push(f[2]);
}

// RFC 4180: returns rows of cells; an unquoted empty cell is null, a quoted one ''.
function parseCsv(text) {
  const rows = [];
  let row = [], cell = '', quoted = false, inq = false, any = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inq) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (ch === '"') inq = false;
      else cell += ch;
      continue;
    }
    if (ch === '"') { inq = true; quoted = true; any = true; }
    else if (ch === ',') { row.push(quoted || cell !== '' ? cell : null); cell = ''; quoted = false; any = true; }
    else if (ch === '\n') {
      row.push(quoted || cell !== '' ? cell : null);
      rows.push(row);
      row = []; cell = ''; quoted = false; any = false;
    } else { cell += ch; any = true; }
  }
  assert.ok(!inq, 'CSV ends inside a quoted field');
  assert.ok(!any, 'CSV ends without a final newline');
  return rows;
}

// The formula-injection policy of docs/query.md, written independently.
const guard = (s) =>
  /^[=+\-@\t\r]/.test(s) && !/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(s) ? `'${s}` : s;

function run(args) {
  const r = spawnSync(BIN, ['export-csv', ...args], { encoding: 'utf8' });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}
let outSeq = 0;
function exportCsv(prof, args, expectCode = 0) {
  const out = join(DIR, `out${outSeq++}`);
  const r = run([prof, ...args, '--out', out]);
  assert.equal(r.code, expectCode, `export-csv ${args.join(' ')}: ${r.stderr}`);
  return { out, ...r };
}
const readCsv = (out, t) => parseCsv(readFileSync(join(out, `${t}.csv`), 'utf8'));

// A value from DuckDB as the CSV cell must hold it (floats are checked numerically).
function expectCell(v, type, got, where) {
  if (v === null) return assert.equal(got, null, `${where}: null`);
  if (type === 'FLOAT' || type === 'DOUBLE') {
    const fr = type === 'FLOAT' ? Math.fround : (x) => x;
    assert.ok(got !== null && fr(Number(got)) === v, `${where}: ${got} reads back as ${v}`);
    const digits = got.replace(/e.*$/i, '').replace(/[^0-9]/g, '').replace(/^0+/, '').length;
    for (let p = 1; p < digits; p++)
      assert.notEqual(fr(Number(v.toPrecision(p))), v, `${where}: ${got} is not the shortest (${v.toPrecision(p)})`);
    return;
  }
  if (type === 'BOOLEAN') return assert.equal(got, v ? 'true' : 'false', where);
  if (type === 'VARCHAR') return assert.equal(got, guard(v), where);
  return assert.equal(got, String(v), where);
}

async function duckRows(table, file, s, e) {
  const cols = FIELDS[table].join(', ');
  const where = POINT[table]
    ? `timestamp BETWEEN ${s} AND ${e}`
    : `end_ts >= ${s} AND start_ts <= ${e}`;
  const r = await duckdb.runAndReadAll(`SELECT ${TRACK[table]} AS timeline_track, ${cols}
    FROM read_parquet(${q(file)}, file_row_number = true) WHERE ${where}
    ORDER BY ${START(table)}, file_row_number`);
  return { rows: r.getRows(), types: r.columnTypes().map(String), names: r.columnNames() };
}

function compareTable(csvRows, want, table) {
  assert.deepEqual(csvRows[0], ['timeline_track', ...FIELDS[table]], `${table} header`);
  assert.equal(csvRows.length - 1, want.rows.length, `${table} row count`);
  for (let i = 0; i < want.rows.length; i++)
    for (let c = 0; c < want.names.length; c++)
      expectCell(want.rows[i][c], want.types[c], csvRows[i + 1][c], `${table} row ${i} ${want.names[c]}`);
}

// Each device profile's time span, read before any test is registered (node:test starts
// running tests, and may finish the file and remove DIR, while the module awaits).
const SPANS = [];
for (const d of DEVICES) {
  SPANS.push((await duckdb.runAndReadAll(`SELECT min(start_ts), max(end_ts)
    FROM read_parquet(${q(join(d.dir, 'Instruction.parquet'))})`)).getRows()[0]);
}

test('one device profile per core, in both runs', () => {
  assert.equal(DEVICES.length, 2);
  assert.equal(SPLIT_DEVICES.length, 2);
});

test('errors: unknown table, end before start, missing profile, bad time', () => {
  const PROF = DEVICES[0].dir;
  let r = run([PROF, '--start', '0', '--end', '1', '--out', join(DIR, 'e1'), '--tables', 'Instruction,Nope']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown table 'Nope'/);
  r = run([PROF, '--start', '10', '--end', '9', '--out', join(DIR, 'e2')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /before/);
  r = run([join(DIR, 'no-such-profile'), '--start', '0', '--end', '1', '--out', join(DIR, 'e3')]);
  assert.equal(r.code, 1);
  r = run([CAP, '--start', '0', '--end', '1', '--out', join(DIR, 'e4')]);
  assert.equal(r.code, 1, 'a directory that is not a profile');
  r = run([PROF, '--start', '1.5ns', '--end', '9', '--out', join(DIR, 'e5')]);
  assert.equal(r.code, 2, 'fractional ns');
});

// Every check on each core's device profile (and its split twin).
for (const [k, dev] of DEVICES.entries()) {
  const PROF = dev.dir, SPLIT = SPLIT_DEVICES[k].dir;
  const T = (name) => `${dev.name}: ${name}`;

  // The profile's time span and a window in its middle.
  const [P0, P1] = SPANS[k];
  const W0 = P0 + ((P1 - P0) * 3n) / 10n;
  const W1 = P0 + ((P1 - P0) * 6n) / 10n;

  test(T('unsampled export equals DuckDB over the same Parquet, all five tables'), async () => {
    const { out } = exportCsv(PROF, ['--start', `${W0}`, '--end', `${W1}`, '--no-sample']);
    for (const t of TABLES) {
      const want = await duckRows(t, join(PROF, `${t}.parquet`), W0, W1);
      assert.ok(want.rows.length > 3, `${t}: window holds ${want.rows.length} rows`);
      compareTable(readCsv(out, t), want, t);
    }
  });

  test(T('whole-profile unsampled export equals DuckDB; split files give identical bytes'), async () => {
    const args = ['--start', '0', '--end', `${P1 + 10n ** 9n}`, '--no-sample'];
    const a = exportCsv(PROF, args).out, b = exportCsv(SPLIT, args).out;
    for (const t of TABLES) {
      compareTable(readCsv(a, t), await duckRows(t, join(PROF, `${t}.parquet`), 0n, P1 + 10n ** 9n), t);
      assert.equal(readFileSync(join(b, `${t}.csv`), 'utf8'), readFileSync(join(a, `${t}.csv`), 'utf8'), `${t} split`);
    }
  });

  // Winners per (track, bucket) computed from the complete export's rows.
  function expectedSample(rows, table, s, e, width) {
    const hdr = rows[0], si = hdr.indexOf(START(table)), ei = hdr.lastIndexOf(END(table));
    const L = e - s + 1n, W = BigInt(width);
    const best = new Map();
    rows.slice(1).forEach((r, idx) => {
      const st = BigInt(r[si]), en = BigInt(r[ei]);
      const c = st < s ? s : st > e ? e : st;
      const key = `${r[0]}\u0000${((c - s) * W) / L}`;
      const d = en - st, cur = best.get(key);
      if (!cur || d > cur.d || (d === cur.d && st < cur.st)) best.set(key, { d, st, idx });
    });
    const keep = [...best.values()].map((b) => b.idx).sort((x, y) => x - y);
    return { rows: keep.map((i) => rows[i + 1]), occupied: best.size };
  }

  test(T('sampled export: one row per occupied (track, bucket), the longest, in start order'), () => {
    for (const width of [1, 7, 40, 1920]) {
      const all = exportCsv(PROF, ['--start', `${W0}`, '--end', `${W1}`, '--no-sample']).out;
      const smp = exportCsv(PROF, ['--start', `${W0}`, '--end', `${W1}`, '--width', `${width}`]).out;
      for (const t of TABLES) {
        const full = readCsv(all, t), got = readCsv(smp, t);
        const want = expectedSample(full, t, W0, W1, width);
        assert.deepEqual(got[0], full[0], `${t} header`);
        assert.equal(got.length - 1, want.occupied, `${t} width ${width}: one row per occupied bucket`);
        assert.deepEqual(got.slice(1), want.rows, `${t} width ${width}: the winners`);
        if (width === 1) assert.equal(new Set(full.slice(1).map((r) => r[0])).size, got.length - 1, 'one per track');
      }
    }
  });

  test(T('default width is 1920'), () => {
    const a = exportCsv(PROF, ['--start', `${W0}`, '--end', `${W1}`]).out;
    const b = exportCsv(PROF, ['--start', `${W0}`, '--end', `${W1}`, '--width', '1920']).out;
    for (const t of TABLES)
      assert.equal(readFileSync(join(a, `${t}.csv`), 'utf8'), readFileSync(join(b, `${t}.csv`), 'utf8'));
  });

  test(T('--max-rows truncates: exit 3, N rows kept, stderr names table and limit'), () => {
    const r = exportCsv(PROF, ['--start', '0', '--end', `${P1}`, '--no-sample', '--max-rows', '10',
      '--tables', 'Instruction,CcInstruction'], 3);
    assert.equal(readCsv(r.out, 'Instruction').length - 1, 10);
    assert.equal(readCsv(r.out, 'CcInstruction').length - 1, 10);
    assert.match(r.stderr, /Instruction.*10/);
    const all = readCsv(exportCsv(PROF, ['--start', '0', '--end', `${P1}`, '--no-sample', '--tables', 'Instruction']).out,
      'Instruction');
    const exact = exportCsv(PROF, ['--start', '0', '--end', `${P1}`, '--no-sample', '--tables', 'Instruction',
      '--max-rows', `${all.length - 1}`], 0);
    assert.equal(readCsv(exact.out, 'Instruction').length, all.length, 'a limit equal to the count is no truncation');
    assert.deepEqual(readCsv(r.out, 'Instruction'), all.slice(0, 11), 'the first N rows');
  });

  test(T('window outside the profile: header-only files, exit 0'), () => {
    for (const [s, e] of [['0', '10'], [`${P1 + 1000n}`, `${P1 + 2000n}`]]) {
      const { out } = exportCsv(PROF, ['--start', s, '--end', e]);
      for (const t of TABLES) assert.deepEqual(readCsv(out, t), [['timeline_track', ...FIELDS[t]]]);
    }
  });

  test(T('time units: ns, us, ms and s give the same window'), () => {
    const s = (W0 / 1000000n) * 1000000n, e = (W1 / 1000000n) * 1000000n;
    const base = exportCsv(PROF, ['--start', `${s}`, '--end', `${e}`, '--no-sample', '--tables', 'Instruction']).out;
    const ms = (v) => `${v / 1000000n}ms`, us = (v) => `${v / 1000n}us`;
    const sec = (v) => `${v / 10n ** 9n}.${String(v % 10n ** 9n).padStart(9, '0')}s`;
    for (const [a, b] of [[ms(s), us(e)], [sec(s), `${e}ns`]]) {
      const o = exportCsv(PROF, ['--start', a, '--end', b, '--no-sample', '--tables', 'Instruction']).out;
      assert.equal(readFileSync(join(o, 'Instruction.csv'), 'utf8'), readFileSync(join(base, 'Instruction.csv'), 'utf8'), `${a} ${b}`);
    }
  });

  test(T('+T times count from the profile start (the smallest Metadata.first_hw_timestamp)'), async () => {
    const [[M0]] = (await duckdb.runAndReadAll(`SELECT min(first_hw_timestamp)
      FROM read_parquet(${q(join(PROF, 'Metadata.parquet'))})`)).getRows();
    const base = exportCsv(PROF, ['--start', `${W0}`, '--end', `${W1}`, '--no-sample', '--tables', 'Instruction']).out;
    const rel = exportCsv(PROF, ['--start', `+${W0 - M0}`, '--end', `+${W1 - M0}ns`, '--no-sample',
      '--tables', 'Instruction']).out;
    const mixed = exportCsv(PROF, ['--start', `${W0}`, '--end', `+${W1 - M0}`, '--no-sample', '--tables', 'Instruction']).out;
    const want = readFileSync(join(base, 'Instruction.csv'), 'utf8');
    assert.ok(want.split('\n').length > 3, 'the window holds rows');
    assert.equal(readFileSync(join(rel, 'Instruction.csv'), 'utf8'), want);
    assert.equal(readFileSync(join(mixed, 'Instruction.csv'), 'utf8'), want);
  });

  const HOSTILE = ['a,b', 'say "hi"', 'line1\nline2', 'cr\rlf', '=1+2', '+cmd', '@SUM(A1)', '-2+3', '-42',
    '+1.5e3', '\tTAB', '', 'plain', 'ü→ok', "'quoted"];

  test(T('hostile strings: RFC 4180 quoting and the formula guard'), async () => {
    const HOST = join(DIR, `${dev.name}-hostile`);
    cpSync(PROF, HOST, { recursive: true });
    const list = `[${HOSTILE.map(q).join(', ')}]`;
    const f = join(HOST, 'SemaphoreUpdate.parquet');
    await duckdb.run(`COPY (SELECT * EXCLUDE (rn) REPLACE (
        CASE WHEN rn % 17 = 16 THEN NULL ELSE ${list}[rn % ${HOSTILE.length} + 1] END AS update_source,
        ${list}[(rn + 3) % ${HOSTILE.length} + 1] AS id)
      FROM (SELECT *, row_number() OVER () - 1 AS rn FROM read_parquet(${q(join(PROF, 'SemaphoreUpdate.parquet'))})))
      TO ${q(f + '.tmp')} (FORMAT parquet)`);
    rmSync(f);
    cpSync(f + '.tmp', f);
    rmSync(f + '.tmp');
    const { out } = exportCsv(HOST, ['--start', '0', '--end', `${P1}`, '--no-sample', '--tables', 'SemaphoreUpdate']);
    const rows = readCsv(out, 'SemaphoreUpdate');
    compareTable(rows, await duckRows('SemaphoreUpdate', f, 0n, P1), 'SemaphoreUpdate');
    const ui = rows[0].indexOf('update_source');
    const seen = new Set(rows.slice(1).map((r) => r[ui]));
    for (const [raw, cell] of [['=1+2', "'=1+2"], ['+cmd', "'+cmd"], ['@SUM(A1)', "'@SUM(A1)"], ['-2+3', "'-2+3"],
      ['\tTAB', "'\tTAB"], ['-42', '-42'], ['+1.5e3', '+1.5e3'], ['', ''], ['line1\nline2', 'line1\nline2'],
      ["'quoted", "'quoted"]])
      assert.ok(seen.has(cell), `${JSON.stringify(raw)} written as ${JSON.stringify(cell)}`);
    assert.ok(seen.has(null), 'null stays an empty field');
    const text = readFileSync(join(out, 'SemaphoreUpdate.csv'), 'utf8');
    assert.ok(text.includes('"say ""hi"""'), 'inner quotes doubled');
    assert.ok(text.includes(',"a,b",'), 'comma quoted');
    assert.ok(text.includes(',"",'), 'empty string quoted');
    // Numeric columns are never touched: negative numbers would stay numbers.
    const vi = rows[0].indexOf('value');
    assert.ok(rows.slice(1).every((r) => /^-?\d+$/.test(r[vi])));
  });

  // The reference layout checks other writers' files, not a core's rows: one device profile
  // is enough (and keeps the file's runtime).
  if (k === 0) test(T('reference layout: DuckDB- and Polars-written copies give identical export-csv and top output'), async () => {
    const DUCK = join(DIR, `${dev.name}-ref-duck`), POL = join(DIR, `${dev.name}-ref-polars`);
    mkdirSync(DUCK);
    mkdirSync(POL);
    for (const f of readdirSync(PROF).filter((x) => x.endsWith('.parquet'))) {
      await duckdb.run(`COPY (SELECT * FROM read_parquet(${q(join(PROF, f))})) TO ${q(join(DUCK, f))} (FORMAT parquet)`);
      pl.readParquet(join(PROF, f)).writeParquet(join(POL, f));
    }
    const outputs = (prof) => {
      const res = [];
      for (const args of [['--no-sample', '--start', '0', '--end', `${P1}`], ['--start', `${W0}`, '--end', `${W1}`],
        ['--start', `${W0}`, '--end', `${W1}`, '--width', '13', '--tables', 'CcOp,Instruction']]) {
        const { out } = exportCsv(prof, args);
        for (const f of readdirSync(out).sort()) res.push(f, readFileSync(join(out, f), 'utf8'));
      }
      res.push(execFileSync(BIN, ['top', prof, '--format', 'csv', '--limit', '0'], { encoding: 'utf8' }));
      res.push(execFileSync(BIN, ['top', prof, '--table', 'DmaPacket', '--by', 'queue_name', '--format', 'csv'],
        { encoding: 'utf8' }));
      return res;
    };
    const ours = outputs(PROF);
    assert.deepEqual(outputs(DUCK), ours, 'DuckDB copy');
    assert.deepEqual(outputs(POL), ours, 'Polars copy');
  });
}
