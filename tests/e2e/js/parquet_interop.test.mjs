// parquet_interop.test.mjs — nxprof's Parquet codec against independent readers and writers.
//
// Forward: `pq_suite write DIR NAME` (tests/e2e/interop/pq_suite.c) writes one file of the suite
// with nxprof's writer plus NAME.parquet.json holding the exact values and what the writer
// options imply. For every file we
//   1. read it with DuckDB and with Polars and compare every value (type-aware: float32 via
//      Math.fround, NaN, -0 via Object.is, int64 as decimal strings, never via a double);
//   2. check DuckDB's parquet_file_metadata / parquet_schema / parquet_kv_metadata /
//      parquet_metadata: physical types, repetition, LIST/UTF8 annotations, codec, encodings,
//      statistics (min/max/null_count), num_values, created_by, row group count;
//   3. decode the footer ourselves (a small thrift-compact decoder below, written from
//      parquet.thrift, independent of src/parquet/thrift.c) and check the page index:
//      every chunk has an OffsetIndex and (unless a page is NaN-only) a ColumnIndex; page
//      locations are contiguous, inside the chunk, and point at real page headers; first
//      row indexes start at 0 and increase; each page's min/max/null_count equal what the
//      rows of that page imply; data-page encodings are what the options promise;
//   4. cross-check the statistics semantically: DuckDB prunes row groups with them, so
//      filtered counts must equal the counts computed from the data.
// Reverse: DuckDB (every codec, v2 encodings, small row groups) and Polars (every codec it
// has, small row groups and pages) write files; `pq_suite dump` reads them with nxprof's
// reader and must print what DuckDB reads back. Skipped, loudly, until the reader exists.
//
// Env: NXPQ_SUITE = path of the pq_suite executable (CTest sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, openSync, readSync, fstatSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { tempDir, openDuckDB } from './lib/harness.mjs';

const SUITE = process.env.NXPQ_SUITE;
if (!SUITE) throw new Error('set NXPQ_SUITE to the pq_suite executable (ctest -R interop does)');
const DIR = tempDir('nxpq-interop-');

const { con: duckdb, sql } = await openDuckDB();
const lit = (s) => `'${s.replaceAll("'", "''")}'`;

function runSuite(args) {
  const r = spawnSync(SUITE, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) {
    assert.fail(`pq_suite ${args.join(' ')} failed: status ${r.status} signal ${r.signal}\n${r.stderr}`);
  }
  return r.stdout;
}

// ------------------------------------------------------------------ value forms
// The JSON forms of pq_suite (see pq_suite.c) decoded to JS values:
// INT64 stays a decimal string, FLOAT goes through Math.fround, specials are strings.
const SPECIAL = new Map([['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity], ['-0', -0]]);
function decodeFloat(v, f32) {
  if (typeof v === 'string') {
    assert.ok(SPECIAL.has(v), `bad float form ${v}`);
    return SPECIAL.get(v);
  }
  return f32 ? Math.fround(v) : v;
}
const ELEMENT = { LIST_INT64: 'INT64', LIST_STRING: 'STRING' };
const isList = (t) => t in ELEMENT;

function decodeScalar(type, v) {
  if (v === null) return null;
  if (type === 'FLOAT') return decodeFloat(v, true);
  if (type === 'DOUBLE') return decodeFloat(v, false);
  return v;
}
function decodeValue(type, v) {
  if (v === null || !isList(type)) return decodeScalar(type, v);
  return v.map((e) => decodeScalar(ELEMENT[type], e));
}

// Whether a reader's value `act` equals the decoded expectation `exp`.
function same(type, exp, act) {
  if (exp === null) return act === null || act === undefined;
  if (act === null || act === undefined) return false;
  switch (type) {
    case 'FLOAT':
    case 'DOUBLE': return typeof act === 'number' && Object.is(exp, act);
    case 'INT64': return (typeof act === 'bigint' || typeof act === 'string') && String(act) === exp;
    case 'INT32': return act === exp;
    case 'BOOLEAN': return act === exp;
    case 'STRING': return act === exp;
    default:
      return Array.isArray(act) && act.length === exp.length &&
        exp.every((e, i) => same(ELEMENT[type], e, act[i]));
  }
}

const show = (v) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` :
  typeof x === 'number' && !Number.isFinite(x) ? String(x) : Object.is(x, -0) ? '-0' : x));

// Compares a whole column; fails with the first few mismatching rows.
function compareColumn(who, col, expected, actual) {
  assert.equal(actual.length, expected.length, `${who}: column ${col.name}: row count`);
  const bad = [];
  let n = 0;
  for (let i = 0; i < expected.length; i++) {
    if (!same(col.type, expected[i], actual[i])) {
      n++;
      if (bad.length < 5) bad.push(`row ${i}: expected ${show(expected[i])} got ${show(actual[i])}`);
    }
  }
  if (n) assert.fail(`${who}: column ${col.name} (${col.type}): ${n} mismatching rows\n  ${bad.join('\n  ')}`);
}

// Runs independent checks (one per column chunk), keeps going after a failure, and fails
// once at the end with every distinct failure, so one defect does not hide another.
function collector() {
  const failures = [];
  return {
    soft(fn, onFail) {
      try { fn(); } catch (e) { failures.push(e.message.replace(/\s*\n\s*/g, ' ')); onFail?.(); }
    },
    failed: () => failures.length > 0,
    report() {
      if (!failures.length) return;
      const shown = failures.slice(0, 25);
      assert.fail(`${failures.length} failing checks:\n  ${shown.join('\n  ')}${failures.length > shown.length ? '\n  ...' : ''}`);
    },
  };
}

// ------------------------------------------------------------------ statistics from the data
const utf8 = (s) => Buffer.from(s, 'utf8');
// Strings order by their UTF-8 bytes (= code points), not by JS's UTF-16 code units: at the
// first difference, surrogates (U+D800..DFFF, i.e. code points >= U+10000) sort after U+E000..FFFF.
function utf8cmp(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  const fix = (c) => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c);
  return fix(a.charCodeAt(i)) - fix(b.charCodeAt(i));
}
function cmp(type, a, b) {
  switch (type) {
    case 'INT64': { const x = BigInt(a), y = BigInt(b); return x < y ? -1 : x > y ? 1 : 0; }
    case 'STRING': return utf8cmp(a, b);
    case 'BOOLEAN': return Number(a) - Number(b);
    default: return a < b ? -1 : a > b ? 1 : 0;
  }
}

// What a set of rows implies for statistics. `nulls` follows parquet-java, arrow and DuckDB
// (PARQUET-2067): for a LIST leaf every level below the maximum definition level is a null,
// i.e. null lists, empty lists and null elements all count.
function summarize(type, rows) {
  const leaf = ELEMENT[type] ?? type;
  const s = { nulls: 0, nans: 0, values: 0, levels: 0, min: undefined, max: undefined };
  const visit = (v) => {
    s.levels++;
    if (v === null) { s.nulls++; return; }
    s.values++;
    if (typeof v === 'number' && Number.isNaN(v)) { s.nans++; return; }
    if (s.min === undefined || cmp(leaf, v, s.min) < 0) s.min = v;
    if (s.max === undefined || cmp(leaf, v, s.max) > 0) s.max = v;
  };
  for (const r of rows) {
    if (!isList(type) || r === null) visit(r);
    else if (r.length === 0) { s.levels++; s.nulls++; }
    else r.forEach(visit);
  }
  // Floating-point bounds at zero: min is written as -0.0 and max as +0.0 (parquet.thrift).
  if (s.min === 0) s.min = -0;
  if (s.max === 0) s.max = 0;
  return s;
}

// Decodes a PLAIN-encoded statistics bound of a leaf type.
function decodeBound(leaf, bytes) {
  const b = Buffer.from(bytes);
  switch (leaf) {
    case 'BOOLEAN': assert.equal(b.length, 1); return b[0] === 1;
    case 'INT32': assert.equal(b.length, 4); return b.readInt32LE(0);
    case 'INT64': assert.equal(b.length, 8); return String(b.readBigInt64LE(0));
    case 'FLOAT': assert.equal(b.length, 4); return b.readFloatLE(0);
    case 'DOUBLE': assert.equal(b.length, 8); return b.readDoubleLE(0);
    default: return b.toString('utf8');
  }
}
function sameBound(leaf, exp, bytes) {
  if (leaf === 'STRING') return Buffer.compare(utf8(exp), Buffer.from(bytes)) === 0;
  return Object.is(decodeBound(leaf, bytes), exp);
}

// ------------------------------------------------------------------ thrift compact protocol
// A generic decoder of the Thrift compact protocol (the encoding of every Parquet footer
// structure): a struct becomes a Map from field id to value, so only the field ids of
// parquet.thrift that we look at need to be known (they are named where used).
class Compact {
  constructor(buf, pos = 0) { this.b = buf; this.p = pos; }
  byte() {
    if (this.p >= this.b.length) throw new Error(`thrift: read past the end at ${this.p}`);
    return this.b[this.p++];
  }
  uvarint() { // unsigned LEB128, as BigInt
    let v = 0n, shift = 0n;
    for (;;) {
      const c = this.byte();
      v |= BigInt(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
      shift += 7n;
      if (shift > 70n) throw new Error('thrift: varint too long');
    }
  }
  zigzag() { const u = this.uvarint(); return (u >> 1n) ^ -(u & 1n); }
  value(type) {
    switch (type) {
      case 1: return true;                      // BOOLEAN_TRUE (struct field form)
      case 2: return false;                     // BOOLEAN_FALSE
      case 3: return (this.byte() << 24) >> 24; // BYTE
      case 4: case 5: return Number(this.zigzag()); // I16, I32
      case 6: return this.zigzag();             // I64 (BigInt)
      case 7: { const d = this.b.readDoubleLE(this.p); this.p += 8; return d; }
      case 8: { // BINARY: varint length, bytes
        const n = Number(this.uvarint());
        if (this.p + n > this.b.length) throw new Error('thrift: binary past the end');
        const v = this.b.subarray(this.p, this.p + n); this.p += n; return v;
      }
      case 9: case 10: { // LIST, SET: size (4 bits, 15 = varint follows) and element type
        const h = this.byte();
        const n = (h >> 4) === 15 ? Number(this.uvarint()) : h >> 4;
        const et = h & 0x0f;
        const out = [];
        for (let i = 0; i < n; i++) out.push(et === 1 || et === 2 ? this.byte() === 1 : this.value(et));
        return out;
      }
      case 11: { // MAP
        const n = Number(this.uvarint());
        const out = new Map();
        if (n) { const kv = this.byte(); for (let i = 0; i < n; i++) out.set(this.value(kv >> 4), this.value(kv & 15)); }
        return out;
      }
      case 12: return this.struct();
      default: throw new Error(`thrift: unknown type ${type} at ${this.p}`);
    }
  }
  struct() {
    const m = new Map();
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return m; // STOP
      const delta = h >> 4;
      const id = delta ? last + delta : Number(this.zigzag());
      m.set(id, this.value(h & 0x0f));
      last = id;
    }
  }
}

const ENCODINGS = ['PLAIN', 'GROUP_VAR_INT', 'PLAIN_DICTIONARY', 'RLE', 'BIT_PACKED', 'DELTA_BINARY_PACKED',
  'DELTA_LENGTH_BYTE_ARRAY', 'DELTA_BYTE_ARRAY', 'RLE_DICTIONARY', 'BYTE_STREAM_SPLIT'];
const PHYSICAL = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];
const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];
const PHYSICAL_OF = { BOOLEAN: 'BOOLEAN', INT32: 'INT32', INT64: 'INT64', FLOAT: 'FLOAT', DOUBLE: 'DOUBLE',
  STRING: 'BYTE_ARRAY', LIST_INT64: 'INT64', LIST_STRING: 'BYTE_ARRAY' };
const PAGE = { DATA: 0, INDEX: 1, DICTIONARY: 2, DATA_V2: 3 };
const BOUNDARY = ['UNORDERED', 'ASCENDING', 'DESCENDING'];

function readRange(fd, pos, len) {
  const b = Buffer.alloc(len);
  assert.equal(readSync(fd, b, 0, len, pos), len, `short read at ${pos}`);
  return b;
}

// FileMetaData (footer): 1 version, 2 schema, 3 num_rows, 4 row_groups, 5 key_value_metadata,
// 6 created_by, 7 column_orders.
function readFooter(fd) {
  const size = fstatSync(fd).size;
  const tail = readRange(fd, size - 8, 8);
  assert.equal(tail.toString('latin1', 4), 'PAR1', 'file ends with PAR1');
  assert.equal(readRange(fd, 0, 4).toString('latin1'), 'PAR1', 'file starts with PAR1');
  const len = tail.readUInt32LE(0);
  const meta = new Compact(readRange(fd, size - 8 - len, len)).struct();
  return { size, meta };
}

// ------------------------------------------------------------------ forward: our files
const NAMES = runSuite(['list']).split('\n').filter(Boolean);
assert.ok(NAMES.length >= 15, 'pq_suite list names the suite');

// Reads one column with DuckDB, in file order.
async function duckdbColumn(path, col) {
  const q = `SELECT "${col.name}", file_row_number FROM read_parquet(${lit(path)}, file_row_number = true) ORDER BY file_row_number`;
  const cols = (await duckdb.runAndReadAll(q)).getColumnsJS();
  if (!cols.length) return [];                 // no rows: getColumnsJS() has no columns either
  cols[1].forEach((r, i) => assert.equal(r, BigInt(i), 'file_row_number'));
  return cols[0];
}

function polarsColumn(path, col) {
  return polarsSeries(pl.readParquet(path, { columns: [col.name] }).getColumn(col.name), col);
}
function polarsSeries(s, col) {
  // Never through a double: int64 travels as decimal text.
  if (col.type === 'INT64') s = s.cast(pl.Utf8);
  if (col.type === 'LIST_INT64') s = s.cast(pl.List(pl.Utf8));
  return s.toArray();
}

// Reads all columns at once (`readAll`, fast) and compares; if that read fails, reads every
// column on its own so one unreadable column does not hide the others. Fails with every
// column that could not be read or did not match.
async function compareAllColumns(who, expect, values, readAll, readOne) {
  let all = null;
  try {
    all = await readAll();
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    /* the reader failed: attribute the failure column by column below */
  }
  const failures = [];
  for (const [i, c] of expect.columns.entries()) {
    try {
      compareColumn(who, c, values[i], all ? all[i] : await readOne(c));
    } catch (e) {
      failures.push(e instanceof assert.AssertionError ? e.message : `${who}: column ${c.name}: ${e.message}`);
    }
  }
  if (failures.length) assert.fail(failures.join('\n'));
}

async function duckdbAllColumns(path, expect) {
  const q = `SELECT * FROM read_parquet(${lit(path)}, file_row_number = true) ORDER BY file_row_number`;
  const reader = await duckdb.runAndReadAll(q);
  assert.deepEqual(reader.columnNames(), [...expect.columns.map((c) => c.name), 'file_row_number'], 'DuckDB sees the columns');
  const cols = reader.getColumnsJS();
  if (!cols.length) return expect.columns.map(() => []);
  cols.at(-1).forEach((r, i) => assert.equal(r, BigInt(i), 'file_row_number'));
  return cols;
}

function polarsAllColumns(path, expect) {
  const df = pl.readParquet(path);
  assert.deepEqual(df.columns, expect.columns.map((c) => c.name), 'Polars sees the columns');
  return expect.columns.map((c) => polarsSeries(df.getColumn(c.name), c));
}

// Row ranges [start, end) of each row group, from the footer.
function rowGroupRanges(meta) {
  let at = 0;
  return (meta.get(4) ?? []).map((rg) => { const n = Number(rg.get(3)); const r = [at, at + n]; at += n; return r; });
}

function checkSchema(meta, expect) {
  // SchemaElement: 1 type, 3 repetition_type, 4 name, 5 num_children, 6 converted_type, 10 logicalType.
  const s = meta.get(2);
  assert.equal(s[0].get(5), expect.columns.length, 'root num_children');
  let k = 1;
  for (const c of expect.columns) {
    const rep = c.nullable ? 1 : 0;
    if (isList(c.type)) {
      const [g, r, e] = [s[k], s[k + 1], s[k + 2]];
      k += 3;
      assert.equal(g.get(4).toString(), c.name);
      assert.equal(g.get(3), rep, `${c.name}: list group repetition`);
      assert.equal(g.get(6), 3, `${c.name}: converted type LIST`);
      assert.ok(g.get(10)?.has(3), `${c.name}: logical type LIST`);
      assert.equal(r.get(3), 2, `${c.name}: middle level REPEATED`);
      assert.equal(r.get(5), 1);
      assert.equal(e.get(3), 1, `${c.name}: element OPTIONAL`);
      assert.equal(PHYSICAL[e.get(1)], PHYSICAL_OF[c.type]);
      if (c.type === 'LIST_STRING') assert.ok(e.get(6) === 0 && e.get(10)?.has(1), `${c.name}: element UTF8/STRING`);
    } else {
      const e = s[k++];
      assert.equal(e.get(4).toString(), c.name);
      assert.equal(e.get(3), rep, `${c.name}: repetition`);
      assert.equal(PHYSICAL[e.get(1)], PHYSICAL_OF[c.type], `${c.name}: physical type`);
      if (c.type === 'STRING') assert.ok(e.get(6) === 0 && e.get(10)?.has(1), `${c.name}: UTF8/STRING annotation`);
    }
  }
  assert.equal(k, s.length, 'no extra schema elements');
}

// Number of levels (Parquet "values") of a run of rows.
const levelsOf = (type, rows) => rows.reduce((n, r) => n + (isList(type) && r !== null && r.length ? r.length : 1), 0);

// Checks one column chunk against the data: chunk metadata, page headers, page index.
// `soft` records a failure and carries on (null counts: one defect shows in every list chunk).
function checkChunk(fd, file, expect, col, values, rg, rgIndex, [r0, r1], seenEncodings, soft) {
  const where = `${file} row group ${rgIndex} column ${col.name}`;
  const cc = rg.get(1)[expect.columns.indexOf(col)];
  const md = cc.get(3); // ColumnMetaData
  const leaf = ELEMENT[col.type] ?? col.type;
  const rows = values.slice(r0, r1);
  const sum = summarize(col.type, rows);
  const opts = expect.options;

  // ColumnMetaData: 1 type, 2 encodings, 3 path_in_schema, 4 codec, 5 num_values,
  // 7 total_compressed_size, 9 data_page_offset, 11 dictionary_page_offset, 12 statistics.
  assert.equal(PHYSICAL[md.get(1)], PHYSICAL_OF[col.type], `${where}: physical type`);
  assert.deepEqual(md.get(3).map(String), isList(col.type) ? [col.name, 'list', 'element'] : [col.name]);
  assert.equal(CODECS[md.get(4)], opts.codec, `${where}: codec`);
  assert.equal(Number(md.get(5)), sum.levels, `${where}: num_values (levels)`);
  const chunkEnc = new Set(md.get(2).map((e) => ENCODINGS[e]));

  // Statistics: 3 null_count, 5 max_value, 6 min_value (9 nan_count, newer spec).
  const st = md.get(12);
  if (!opts.write_statistics) {
    assert.equal(st, undefined, `${where}: no statistics when disabled`);
  } else {
    assert.ok(st, `${where}: has statistics`);
    soft(() => assert.equal(Number(st.get(3)), sum.nulls, `${where}: null_count`));
    if (st.has(9)) assert.equal(Number(st.get(9)), sum.nans, `${where}: nan_count`);
    if (sum.min === undefined) {
      assert.ok(!st.has(5) && !st.has(6), `${where}: no min/max without non-null, non-NaN values`);
    } else {
      assert.ok(sameBound(leaf, sum.min, st.get(6)), `${where}: min_value ${show(decodeBound(leaf, st.get(6)))} != ${show(sum.min)}`);
      assert.ok(sameBound(leaf, sum.max, st.get(5)), `${where}: max_value ${show(decodeBound(leaf, st.get(5)))} != ${show(sum.max)}`);
    }
  }

  // The pages: the dictionary page (if any), then data pages back to back.
  const dictOff = md.has(11) ? Number(md.get(11)) : null;
  const dataOff = Number(md.get(9));
  const start = dictOff ?? dataOff;
  const end = start + Number(md.get(7));
  let dictEntries = 0;
  if (dictOff !== null) {
    const h = new Compact(readRange(fd, dictOff, Math.min(256, dataOff - dictOff))).struct();
    assert.equal(h.get(1), PAGE.DICTIONARY, `${where}: dictionary_page_offset points at a dictionary page`);
    // DictionaryPageHeader (7): 1 num_values, 2 encoding
    dictEntries = h.get(7).get(1);
    assert.equal(ENCODINGS[h.get(7).get(2)], 'PLAIN', `${where}: dictionary page is PLAIN`);
    assert.ok(dictEntries > 0, `${where}: dictionary has entries`);
  }
  const hasValues = sum.values > 0;
  if (col.dictionary_page === true && hasValues) assert.ok(dictOff !== null, `${where}: has a dictionary page`);
  if (col.dictionary_page === false) assert.equal(dictOff, null, `${where}: has no dictionary page`);

  // Walk the data pages by their headers (a second, index-free path to every page).
  const pages = [];
  let rowAt = 0; // rows of each page, found by walking levels (no index needed)
  for (let at = dataOff; at < end;) {
    const buf = readRange(fd, at, Math.min(4096, end - at));
    const c = new Compact(buf);
    const h = c.struct();
    const size = c.p + h.get(3); // header + compressed_page_size
    // PageHeader: 1 type, 3 compressed_page_size, 5 data_page_header (1 num_values, 2 encoding, 5 statistics)
    assert.equal(h.get(1), PAGE.DATA, `${where}: page at ${at} is a data page (v1)`);
    const dp = h.get(5);
    pages.push({ offset: at, size, numValues: dp.get(1), encoding: ENCODINGS[dp.get(2)], stats: dp.get(5) });
    const pr = [];
    for (let lv = 0; lv < dp.get(1) && rowAt < rows.length;) { const r = rows[rowAt++]; pr.push(r); lv += levelsOf(col.type, [r]); }
    pages.at(-1).values = summarize(col.type, pr).values;
    // A page without values is PLAIN: a dictionary page has nothing to look up (its
    // chunk may have no dictionary page at all, and readers then refuse it), and
    // fastparquet crashes on a DELTA_BINARY_PACKED page of no values (docs/parquet.md).
    if (pages.at(-1).values === 0) assert.equal(pages.at(-1).encoding, 'PLAIN', `${where}: a page without values is PLAIN`);
    else seenEncodings.add(pages.at(-1).encoding);
    if (opts.codec === 'UNCOMPRESSED' && col.type === 'INT32' && pages.at(-1).encoding === 'DELTA_BINARY_PACKED') {
      checkDeltaInt32(readRange(fd, at + c.p, h.get(3)), col.nullable, `${where}: DELTA page at ${at}`);
    }
    at += size;
    assert.ok(at <= end, `${where}: page at ${pages.at(-1).offset} runs past the chunk end`);
  }
  assert.ok(pages.length >= 1, `${where}: has data pages`);
  const pageEnc = new Set(pages.filter((p) => p.values > 0).map((p) => p.encoding));
  if (pageEnc.has('RLE_DICTIONARY')) {
    assert.ok(dictOff !== null, `${where}: data pages are RLE_DICTIONARY but the chunk has no dictionary page`);
  }
  if (col.page_encodings && hasValues) {
    for (const e of pageEnc) assert.ok(col.page_encodings.includes(e), `${where}: data page encoding ${e} not in ${col.page_encodings}`);
    if (col.page_encodings.length === 1) assert.deepEqual([...pageEnc], col.page_encodings, `${where}: data page encodings`);
  }
  // The chunk's encodings list covers what its pages use (levels are RLE).
  const implied = new Set(pages.map((p) => p.encoding));
  if (dictOff !== null) implied.add('PLAIN');
  if (col.nullable || isList(col.type)) implied.add('RLE');
  assert.deepEqual([...chunkEnc].sort(), [...implied].sort(), `${where}: ColumnMetaData.encodings`);
  assert.equal(pages.reduce((n, p) => n + p.numValues, 0), sum.levels, `${where}: page num_values add up`);

  // OffsetIndex (ColumnChunk 4/5): 1 page_locations: 1 offset, 2 compressed_page_size, 3 first_row_index.
  if (!opts.write_page_index) {
    assert.ok(!cc.has(4) && !cc.has(6), `${where}: no page index when disabled`);
  } else {
    assert.ok(cc.has(4) && cc.has(5), `${where}: has an OffsetIndex`);
    const oi = new Compact(readRange(fd, Number(cc.get(4)), cc.get(5))).struct();
    const locs = oi.get(1).map((l) => ({ offset: Number(l.get(1)), size: l.get(2), first: Number(l.get(3)) }));
    assert.equal(locs.length, pages.length, `${where}: one page location per data page`);
    locs.forEach((l, i) => {
      assert.equal(l.offset, pages[i].offset, `${where}: page ${i} location offset points at a page header`);
      assert.equal(l.size, pages[i].size, `${where}: page ${i} compressed_page_size (header included)`);
      assert.ok(l.offset >= start && l.offset + l.size <= end, `${where}: page ${i} inside the chunk`);
    });
    assert.equal(locs[0].first, 0, `${where}: first_row_index starts at 0`);
    for (let i = 1; i < locs.length; i++) {
      assert.ok(locs[i].offset > locs[i - 1].offset, `${where}: page offsets increase`);
      assert.ok(locs[i].first > locs[i - 1].first, `${where}: first_row_index increases`);
    }
    assert.ok(locs.at(-1).first < r1 - r0, `${where}: last page starts inside the row group`);
    // Each page holds the rows up to the next page's first row; their levels are its num_values.
    const pageRows = locs.map((l, i) => rows.slice(l.first, i + 1 < locs.length ? locs[i + 1].first : rows.length));
    pageRows.forEach((pr, i) => {
      assert.equal(pages[i].numValues, levelsOf(col.type, pr), `${where}: page ${i} num_values matches its rows`);
      assert.ok(pr.length <= opts.page_rows, `${where}: page ${i} has ${pr.length} rows > page_rows`);
    });

    // ColumnIndex (ColumnChunk 6/7): 1 null_pages, 2 min_values, 3 max_values, 4 boundary_order,
    // 5 null_counts (8 nan_counts, newer spec).
    if (!col.column_index) {
      assert.ok(!cc.has(6), `${where}: no ColumnIndex (a page holds only NaN: no valid bounds)`);
    } else {
      assert.ok(cc.has(6) && cc.has(7), `${where}: has a ColumnIndex`);
      const ci = new Compact(readRange(fd, Number(cc.get(6)), cc.get(7))).struct();
      const [nullPages, mins, maxs, order, nullCounts] = [1, 2, 3, 4, 5].map((k) => ci.get(k));
      assert.equal(nullPages.length, locs.length, `${where}: ColumnIndex has one entry per page`);
      let asc = true, desc = true, prev = null;
      pageRows.forEach((pr, i) => {
        const s = summarize(col.type, pr);
        const pw = `${where}: page ${i} (rows ${r0 + locs[i].first}..)`;
        assert.equal(nullPages[i], s.values === 0, `${pw}: null_pages`);
        soft(() => assert.equal(Number(nullCounts[i]), s.nulls, `${pw}: null_counts`));
        if (s.values === 0) {
          assert.equal(mins[i].length + maxs[i].length, 0, `${pw}: a null page has empty bounds`);
          return;
        }
        assert.ok(sameBound(leaf, s.min, mins[i]), `${pw}: min ${show(decodeBound(leaf, mins[i]))} != ${show(s.min)}`);
        assert.ok(sameBound(leaf, s.max, maxs[i]), `${pw}: max ${show(decodeBound(leaf, maxs[i]))} != ${show(s.max)}`);
        if (ci.has(8)) assert.equal(Number(ci.get(8)[i]), s.nans, `${pw}: nan_counts`);
        if (prev) {
          const a = cmp(leaf, prev.min, s.min), b = cmp(leaf, prev.max, s.max);
          if (a > 0 || b > 0) asc = false;
          if (a < 0 || b < 0) desc = false;
        }
        prev = s;
      });
      assert.equal(BOUNDARY[order], asc ? 'ASCENDING' : desc ? 'DESCENDING' : 'UNORDERED', `${where}: boundary_order`);
    }
  }
  // Without a page index, per-page statistics travel in the data page headers.
  if (opts.write_statistics && !opts.write_page_index) {
    let at = 0;
    for (const p of pages) {
      // rows of this page: walk levels (no offset index to tell us)
      const pr = [];
      let lv = 0;
      while (lv < p.numValues) { const r = rows[at++]; pr.push(r); lv += levelsOf(col.type, [r]); }
      const s = summarize(col.type, pr);
      assert.ok(p.stats, `${where}: page at ${p.offset} has statistics in its header`);
      soft(() => assert.equal(Number(p.stats.get(3)), s.nulls, `${where}: page at ${p.offset}: null_count`));
      if (s.min !== undefined) {
        assert.ok(sameBound(leaf, s.min, p.stats.get(6)), `${where}: page at ${p.offset}: min`);
        assert.ok(sameBound(leaf, s.max, p.stats.get(5)), `${where}: page at ${p.offset}: max`);
      }
    }
  } else {
    for (const p of pages) assert.equal(p.stats, undefined, `${where}: no statistics in page headers`);
  }
}

// DELTA_BINARY_PACKED on an INT32 column (Encodings.md; PARQUET-2435): deltas wrap at 32
// bits, so min_delta fits an int32 and no miniblock is wider than 32 bits. parquet-cpp
// (pyarrow, pandas) and arrow-rs reject pages that break this, though DuckDB and Polars
// read them. Reads an uncompressed v1 page body: [def levels: u32 length + RLE], values.
function checkDeltaInt32(body, nullable, where) {
  const c = new Compact(body);
  if (nullable) c.p += 4 + body.readUInt32LE(0);
  const blockSize = Number(c.uvarint()), miniblocks = Number(c.uvarint());
  let remaining = Number(c.uvarint()) - 1; // deltas after the first value
  c.zigzag();                              // first value
  const perMini = blockSize / miniblocks;
  while (remaining > 0) {
    const minDelta = c.zigzag();
    assert.ok(minDelta >= -(2n ** 31n) && minDelta < 2n ** 31n, `${where}: min_delta ${minDelta} does not fit INT32`);
    const widths = [...c.b.subarray(c.p, c.p + miniblocks)];
    c.p += miniblocks;
    const used = Math.ceil(Math.min(remaining, blockSize) / perMini);
    widths.slice(0, used).forEach((w) => {
      assert.ok(w <= 32, `${where}: miniblock bit width ${w} > 32 on an INT32 column`);
      c.p += (w * perMini) / 8;
    });
    remaining -= Math.min(remaining, blockSize);
  }
  assert.equal(c.p, body.length, `${where}: the DELTA stream ends where the page does`);
}

async function checkDuckdbMetadata(path, expect, values) {
  const [fm] = await sql(`SELECT * FROM parquet_file_metadata(${lit(path)})`);
  const o = expect.options;
  if (o.created_by) assert.equal(fm.created_by, o.created_by);
  else assert.match(fm.created_by, /^nxprof version \d+\.\d+\.\d+/);
  assert.equal(fm.num_rows, BigInt(expect.rows));
  const defaultBytes = o.row_group_bytes === 134217728;
  if (defaultBytes) assert.equal(fm.num_row_groups, BigInt(Math.ceil(expect.rows / o.row_group_rows)), 'row group count');

  const kv = await sql(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${lit(path)})`);
  assert.deepEqual(Object.fromEntries(kv.map((r) => [r.k, r.v])), expect.metadata, 'key/value metadata');

  const schema = await sql(`SELECT name, type, repetition_type, converted_type, logical_type FROM parquet_schema(${lit(path)})`);
  const want = [{ name: 'schema', type: null, repetition_type: null, converted_type: null, logical_type: null }];
  for (const c of expect.columns) {
    const rep = c.nullable ? 'OPTIONAL' : 'REQUIRED';
    const str = (t) => (t === 'BYTE_ARRAY' ? ['UTF8', 'StringType()'] : [null, null]);
    if (isList(c.type)) {
      want.push({ name: c.name, type: null, repetition_type: rep, converted_type: 'LIST', logical_type: 'ListType()' });
      want.push({ name: 'list', type: null, repetition_type: 'REPEATED', converted_type: null, logical_type: null });
      const [ct, lt] = str(PHYSICAL_OF[c.type]);
      want.push({ name: 'element', type: PHYSICAL_OF[c.type], repetition_type: 'OPTIONAL', converted_type: ct, logical_type: lt });
    } else {
      const [ct, lt] = str(PHYSICAL_OF[c.type]);
      want.push({ name: c.name, type: PHYSICAL_OF[c.type], repetition_type: rep, converted_type: ct, logical_type: lt });
    }
  }
  assert.deepEqual(schema, want, 'parquet_schema');

  const chunks = await sql(`SELECT row_group_id, row_group_num_rows, column_id, path_in_schema, type, compression,
      encodings, num_values, stats_min_value, stats_max_value, stats_null_count
    FROM parquet_metadata(${lit(path)}) ORDER BY row_group_id, column_id`);
  let r0 = 0;
  const { soft, report } = collector();
  for (const ch of chunks) soft(() => {
    const col = expect.columns[Number(ch.column_id)];
    const rgRows = Number(ch.row_group_num_rows);
    const where = `DuckDB parquet_metadata: row group ${ch.row_group_id} column ${col.name}`;
    assert.equal(ch.path_in_schema, isList(col.type) ? `${col.name}, list, element` : col.name, where);
    assert.equal(ch.type, PHYSICAL_OF[col.type], `${where}: type`);
    assert.equal(ch.compression, expect.options.codec, `${where}: compression`);
    const s = summarize(col.type, values[Number(ch.column_id)].slice(r0, r0 + rgRows));
    assert.equal(Number(ch.num_values), s.levels, `${where}: num_values`);
    // Encodings: exact where the options fix them (a fallback chunk may or may not have fallen back).
    if (col.page_encodings?.length === 1 && s.values > 0) {
      const want = new Set(col.page_encodings);
      if (col.dictionary_page) want.add('PLAIN');
      if (col.nullable || isList(col.type)) want.add('RLE');
      // A page of only nulls is PLAIN; which pages those are, the raw page check above
      // settles page by page, so here a chunk holding nulls may list PLAIN too.
      const got = ch.encodings.split(', ').sort();
      const withNullPage = [...new Set([...want, 'PLAIN'])].sort();
      const nullPage = s.nulls > 0 && JSON.stringify(got) === JSON.stringify(withNullPage);
      if (!nullPage) assert.deepEqual(got, [...want].sort(), `${where}: encodings`);
    }
    if (!expect.options.write_statistics) {
      assert.equal(ch.stats_null_count, null, `${where}: no statistics`);
    } else {
      soft(() => assert.equal(Number(ch.stats_null_count), s.nulls, `${where}: stats_null_count`));
      // DuckDB renders bounds as text; it leaves FLOAT/DOUBLE bounds out (it does not trust
      // them from other writers), so those are checked from the raw footer in checkChunk.
      const leaf = ELEMENT[col.type] ?? col.type;
      if (leaf !== 'FLOAT' && leaf !== 'DOUBLE') {
        assert.equal(ch.stats_min_value, s.min === undefined ? null : String(s.min), `${where}: stats_min_value`);
        assert.equal(ch.stats_max_value, s.max === undefined ? null : String(s.max), `${where}: stats_max_value`);
      }
    }
    if (Number(ch.column_id) === expect.columns.length - 1) r0 += rgRows;
  }, () => { if (Number(ch.column_id) === expect.columns.length - 1) r0 += Number(ch.row_group_num_rows); });
  report();
  assert.equal(r0, expect.rows, 'row groups cover every row');
  if (defaultBytes && expect.rows) {
    const sizes = [...new Set(chunks.map((c) => `${c.row_group_id}:${c.row_group_num_rows}`))].map((x) => Number(x.split(':')[1]));
    sizes.slice(0, -1).forEach((n) => assert.equal(n, o.row_group_rows, 'full row groups have row_group_rows rows'));
  }
}

// DuckDB prunes row groups by their statistics: filtered counts over int and string
// columns must still equal the counts computed from the data.
async function checkPruning(path, expect, values) {
  const pick = (arr, k) => arr[k % arr.length];
  for (const [ci, col] of expect.columns.entries()) {
    if (!['INT32', 'INT64', 'STRING'].includes(col.type)) continue;
    const vals = values[ci].filter((v) => v !== null);
    if (!vals.length) continue;
    const sorted = [...vals].sort((a, b) => cmp(col.type, a, b));
    const probes = [[pick(sorted, 7), pick(sorted, 7)], [sorted[Math.floor(sorted.length / 3)], sorted[Math.floor(sorted.length / 2)]],
      [sorted[0], sorted[0]], [sorted.at(-1), sorted.at(-1)]];
    for (const [lo, hi] of probes) {
      const want = vals.filter((v) => cmp(col.type, v, lo) >= 0 && cmp(col.type, v, hi) <= 0).length;
      const L = col.type === 'STRING' ? lit(lo) : lo, H = col.type === 'STRING' ? lit(hi) : hi;
      const [{ n }] = await sql(`SELECT count(*) AS n FROM read_parquet(${lit(path)}) WHERE "${col.name}" BETWEEN ${L} AND ${H}`);
      assert.equal(Number(n), want, `DuckDB count of ${col.name} BETWEEN ${show(lo)} AND ${show(hi)}`);
    }
    const [{ n }] = await sql(`SELECT count(*) AS n FROM read_parquet(${lit(path)}) WHERE "${col.name}" IS NULL`);
    assert.equal(Number(n), values[ci].length - vals.length, `DuckDB count of ${col.name} IS NULL`);
  }
}

for (const name of NAMES) {
  test(`nxprof writes ${name}.parquet; DuckDB and Polars read it back exactly`, async (t) => {
    runSuite(['write', DIR, name]);
    const path = join(DIR, `${name}.parquet`);
    const expect = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
    const values = expect.columns.map((c) => c.values.map((v) => decodeValue(c.type, v)));
    for (const [i, c] of expect.columns.entries()) assert.equal(values[i].length, expect.rows, `${c.name} row count in JSON`);

    await t.test('DuckDB values', async () => {
      const [{ n }] = await sql(`SELECT count(*) AS n FROM read_parquet(${lit(path)})`);
      assert.equal(n, BigInt(expect.rows), 'DuckDB row count');
      await compareAllColumns(`DuckDB ${name}`, expect, values, () => duckdbAllColumns(path, expect), (c) => duckdbColumn(path, c));
    });

    await t.test('Polars values', async () => {
      await compareAllColumns(`Polars ${name}`, expect, values, () => polarsAllColumns(path, expect), (c) => polarsColumn(path, c));
    });

    await t.test('nxprof reader (pq_suite dump) values', () => {
      const d = dump(path);
      assert.equal(d.rows, expect.rows);
      assert.deepEqual(d.columns.map((c) => [c.name, c.type, c.nullable]), expect.columns.map((c) => [c.name, c.type, c.nullable]));
      let next = 0;
      for (const [first, n] of d.batches) { assert.equal(first, next, 'batches in order, no gaps'); next += n; }
      assert.equal(next, expect.rows, 'batches cover every row');
      const failures = [];
      d.columns.forEach((c, i) => {
        try {
          compareColumn(`nxprof reader ${name}`, c, values[i], c.values.map((v) => decodeValue(c.type, v)));
        } catch (e) { failures.push(e.message); }
      });
      if (failures.length) assert.fail(failures.join('\n'));
      // Pruning by an int range keeps every matching row and returns rows as they are.
      const ci = expect.columns.findIndex((c) => c.type === 'INT64' || c.type === 'INT32');
      if (ci < 0 || expect.rows === 0) return;
      const col = expect.columns[ci];
      const present = values[ci].filter((v) => v !== null).map(BigInt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (!present.length) return;
      const lo = present[Math.floor(present.length / 3)], hi = present[Math.floor(present.length / 3) + Math.min(50, present.length - 1 - Math.floor(present.length / 3))];
      const r = dump(path, ['--range', col.name, String(lo), String(hi), '--batch', '333']);
      checkRangeScan(`nxprof reader ${name} --range ${col.name} ${lo} ${hi}`, r, (row) => values.map((v) => v[row]),
        expect.columns, (row) => { const v = values[ci][row]; return v !== null && BigInt(v) >= lo && BigInt(v) <= hi; });
      if (col.name === 'start_ts') {
        // sorted timestamps: the page index must let the reader skip pages
        assert.ok(r.stats.pages_read < r.stats.pages_total, `page index skips pages: ${JSON.stringify(r.stats)}`);
      }
    });

    await t.test('DuckDB metadata, schema, key/value, statistics', () => checkDuckdbMetadata(path, expect, values));

    await t.test('footer, page headers and page index decoded independently', () => {
      const fd = openSync(path, 'r');
      const { soft, report, failed } = collector();
      try {
        const { meta } = readFooter(fd);
        assert.equal(Number(meta.get(3)), expect.rows, 'num_rows');
        checkSchema(meta, expect);
        const ranges = rowGroupRanges(meta);
        const seen = expect.columns.map(() => new Set());
        assert.equal(ranges.at(-1)?.[1] ?? 0, expect.rows, 'row groups add up to num_rows');
        // ColumnOrder per leaf when statistics are written (TypeDefinedOrder)
        if (expect.options.write_statistics) assert.equal(meta.get(7)?.length, expect.columns.length, 'column_orders');
        meta.get(4).forEach((rg, g) => {
          // RowGroup: 3 num_rows, 4 sorting_columns (1 column_idx, 2 descending, 3 nulls_first)
          const sc = expect.options.sorting_column;
          if (sc >= 0) {
            const s = rg.get(4);
            assert.equal(s?.length, 1, 'one sorting column');
            assert.deepEqual([s[0].get(1), s[0].get(2), s[0].get(3)], [sc, false, false], 'sorting_columns');
            const v = values[sc].slice(...ranges[g]);
            v.slice(1).forEach((x, i) => assert.ok(cmp(expect.columns[sc].type, v[i], x) <= 0, 'sorted data'));
          } else {
            assert.equal(rg.get(4), undefined, 'no sorting_columns');
          }
          expect.columns.forEach((col, i) => soft(() => checkChunk(fd, name, expect, col, values[i], rg, g, ranges[g], seen[i], soft)));
        });
        // Every promised data-page encoding shows up somewhere (a fallback column uses both
        // RLE_DICTIONARY, until the dictionary is full, and PLAIN, after).
        if (!failed()) expect.columns.forEach((col, i) => {
          if (col.page_encodings && expect.rows) assert.deepEqual([...seen[i]].sort(), [...col.page_encodings].sort(), `${col.name}: data page encodings in the file`);
        });
      } finally {
        closeSync(fd);
      }
      report();
    });

    await t.test('DuckDB filters pruned by our statistics give exact counts', () => checkPruning(path, expect, values));
  });
}

// ------------------------------------------------------------------ reverse: their files, our reader
// A table with every type nxprof reads, nulls, specials, empty lists and null elements.
// Created on first use, inside a test: a top-level await between test registrations would
// let node:test finish (and run `after`) before the later tests exist.
const SOURCE_ROWS = 6000;
let sourceReady = null;
const source = () => (sourceReady ??= duckdb.run(`CREATE TABLE src AS SELECT
    i::BIGINT AS id,
    CASE WHEN i % 7 = 3 THEN NULL ELSE (hash(i) % 4294967296)::BIGINT - 2147483648 END::INTEGER AS i32,
    CASE WHEN i % 11 = 5 THEN NULL WHEN i % 13 = 0 THEN -9223372036854775808 WHEN i % 13 = 1 THEN 9223372036854775807
         WHEN i % 13 = 2 THEN 9007199254740993 ELSE ((hash(i * 3) >> 1)::BIGINT - 4611686018427387904) END::BIGINT AS i64,
    CASE i % 17 WHEN 0 THEN 'nan'::FLOAT WHEN 1 THEN 'inf'::FLOAT WHEN 2 THEN '-inf'::FLOAT WHEN 3 THEN '-0.0'::FLOAT
         WHEN 4 THEN NULL ELSE ((hash(i) % 2000001)::DOUBLE / 7.0 - 100000)::FLOAT END AS f32,
    CASE i % 19 WHEN 0 THEN 'nan'::DOUBLE WHEN 1 THEN 'inf'::DOUBLE WHEN 2 THEN '-0.0'::DOUBLE WHEN 3 THEN NULL
         WHEN 4 THEN 1.7976931348623157e308 WHEN 5 THEN 5e-324 ELSE (hash(i * 5) % 1000000007)::DOUBLE / 3.0 - 1e8 END AS f64,
    CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
    CASE WHEN i % 9 = 0 THEN NULL WHEN i % 9 = 1 THEN '' WHEN i % 9 = 2 THEN 'ünïcödé 中文 😀 "q" \\ tab	'
         ELSE repeat(chr((65 + i % 26)::INTEGER), (i % 40)::INTEGER) || i::VARCHAR END AS s,
    'engine-' || (i % 5)::VARCHAR AS s_low,
    CASE WHEN i % 10 = 0 THEN NULL WHEN i % 10 = 1 THEN []::BIGINT[]
         WHEN i % 10 = 2 THEN [i, -9223372036854775808, 9223372036854775807]
         ELSE list_transform(range((i % 7)::BIGINT), x -> x * i - 1000) END AS li,
    CASE WHEN i % 8 = 0 THEN NULL WHEN i % 8 = 1 THEN []::VARCHAR[]
         ELSE (['a' || i::VARCHAR, NULL, '', 'é中😀', repeat('x', (i % 300)::INTEGER)])[1:(i % 5 + 1)::INTEGER] END AS ls
  FROM range(${SOURCE_ROWS}) t(i)`));
const SOURCE_TYPES = { id: 'INT64', i32: 'INT32', i64: 'INT64', f32: 'FLOAT', f64: 'DOUBLE', b: 'BOOLEAN', s: 'STRING',
  s_low: 'STRING', li: 'LIST_INT64', ls: 'LIST_STRING' };

// What DuckDB reads from a file, as columns (DuckDB is the reference reader here).
async function duckdbRead(path) {
  const r = await duckdb.runAndReadAll(`SELECT * FROM read_parquet(${lit(path)}, file_row_number = true) ORDER BY file_row_number`);
  const names = r.columnNames().slice(0, -1);
  const cols = r.getColumnsJS();
  return { names, cols: cols.slice(0, -1) };
}

function dump(path, extra = []) {
  return JSON.parse(runSuite(['dump', path, ...extra]));
}

// A range scan's dump: batches name the file rows they hold; every row matching the
// predicate must be there (pruning is by pages, so more may come), and every row returned
// must equal the reference row at its index. `native`: reference values are a reader's
// native values, else decoded JSON forms.
function checkRangeScan(label, r, refRow, cols, matches, native = false) {
  const rowsOut = [];
  for (const [first, n] of r.batches) for (let j = 0; j < n; j++) rowsOut.push(first + j);
  rowsOut.forEach((row, i) => assert.ok(i === 0 || row > rowsOut[i - 1], `${label}: rows increase`));
  const kept = new Set(rowsOut);
  const total = r.rows;
  for (let row = 0; row < total; row++) if (matches(row)) assert.ok(kept.has(row), `${label}: keeps matching row ${row}`);
  rowsOut.forEach((row, at) => {
    const want = refRow(row);
    r.columns.forEach((c, i) => {
      const mine = decodeValue(c.type, c.values[at]);
      const ok = native ? same(c.type, mine, want[i]) : same(c.type, want[i], mine);
      if (!ok) assert.fail(`${label}: row ${row} column ${cols[i].name}: ${show(c.values[at])} vs ${show(want[i])}`);
    });
  });
}

// Our reader's dump against DuckDB's reading of the same file.
async function compareDump(t, path, label) {
  const d = dump(path);
  const ref = await duckdbRead(path);
  assert.equal(d.rows, SOURCE_ROWS, `${label}: rows`);
  assert.deepEqual(d.unsupported, [], `${label}: every column supported`);
  assert.deepEqual(d.columns.map((c) => c.name), ref.names, `${label}: columns`);
  // Batches without a range filter cover the file in order.
  let next = 0;
  for (const [first, n] of d.batches) { assert.equal(first, next, `${label}: batches in order`); next += n; }
  assert.equal(next, SOURCE_ROWS, `${label}: batches cover every row`);
  d.columns.forEach((c, i) => {
    assert.equal(c.type, SOURCE_TYPES[c.name], `${label}: ${c.name} read as ${c.type}`);
    // our dump is in pq_suite's JSON form; DuckDB's values are native: compare like the forward tests
    const mine = c.values.map((v) => decodeValue(c.type, v));
    compareColumn(`nxprof reader on ${label}`, c, mine, ref.cols[i]);
  });
  // A range filter on the sorted id column: every row of the range comes back, and every row
  // returned is the row at its file index.
  const lo = 1234, hi = 2345;
  const r = dump(path, ['--range', 'id', String(lo), String(hi)]);
  checkRangeScan(`${label} --range id ${lo} ${hi}`, r, (row) => ref.cols.map((c) => c[row]),
    d.columns, (row) => row >= lo && row <= hi, true);
  if (r.stats.row_groups_total > 1) assert.ok(r.stats.row_groups_read < r.stats.row_groups_total || r.stats.pages_read < r.stats.pages_total,
    `${label}: the range filter skipped something (${JSON.stringify(r.stats)})`);
}

// Type of the first data page of the first column chunk (PageHeader field 1).
function firstPageType(path) {
  const fd = openSync(path, 'r');
  try {
    const md = readFooter(fd).meta.get(4)[0].get(1)[0].get(3);
    return new Compact(readRange(fd, Number(md.get(9)), 256)).struct().get(1);
  } finally {
    closeSync(fd);
  }
}

const DUCKDB_VARIANTS = [
  ['zstd', "COMPRESSION zstd"],
  ['snappy', "COMPRESSION snappy"],
  ['gzip', "COMPRESSION gzip"],
  ['lz4_raw', "COMPRESSION lz4_raw"],
  ['uncompressed', "COMPRESSION uncompressed"],
  ['v2_zstd', "COMPRESSION zstd, PARQUET_VERSION v2"],
  ['v2_snappy_small_groups', "COMPRESSION snappy, PARQUET_VERSION v2, ROW_GROUP_SIZE 1000"],
  ['v1_small_groups', "COMPRESSION uncompressed, ROW_GROUP_SIZE 700"],
];
for (const [label, opts] of DUCKDB_VARIANTS) {
  test(`DuckDB writes (${opts}); nxprof's reader reads what DuckDB reads`, async (t) => {
    const path = join(DIR, `duckdb_${label}.parquet`);
    await source();
    await duckdb.run(`COPY (SELECT * FROM src ORDER BY id) TO ${lit(path)} (FORMAT parquet, ${opts})`);
    const meta = await sql(`SELECT DISTINCT encodings, compression FROM parquet_metadata(${lit(path)})`);
    const codec = opts.match(/COMPRESSION (\w+)/)[1].toUpperCase();
    assert.ok(meta.every((m) => m.compression === codec), `${label}: DuckDB used ${codec}`);
    if (opts.includes('v2')) {
      // v2 must really exercise the DELTA encodings, else the variant is void. Note: DuckDB
      // 1.5 writes v2 *encodings* in v1 data pages (no DataPageHeaderV2), and Polars 0.25
      // writes v1 pages too, so no writer here produces data page v2: our reader's v2 page
      // path is not covered by this suite (the check below says so if that ever changes).
      assert.ok(meta.some((m) => /DELTA_/.test(m.encodings)), `${label}: DuckDB wrote DELTA encodings: ${meta.map((m) => m.encodings)}`);
      assert.equal(firstPageType(path), PAGE.DATA, `${label}: DuckDB now writes data page v2: update the comment above`);
    }
    await compareDump(t, path, `duckdb_${label}`);
  });
}

// Polars: DataFrame.writeParquet takes only a codec; LazyFrame.sinkParquet also takes row
// group and page sizes. Polars' "lz4" is LZ4_RAW. brotli/lzo are not codecs nxprof reads.
const POLARS_VARIANTS = [
  ['uncompressed', 'UNCOMPRESSED', (df, p) => df.writeParquet(p, { compression: 'uncompressed' })],
  ['snappy', 'SNAPPY', (df, p) => df.writeParquet(p, { compression: 'snappy' })],
  ['gzip', 'GZIP', (df, p) => df.writeParquet(p, { compression: 'gzip' })],
  ['lz4', 'LZ4_RAW', (df, p) => df.writeParquet(p, { compression: 'lz4' })],
  ['zstd', 'ZSTD', (df, p) => df.writeParquet(p, { compression: 'zstd' })],
  ['zstd_small_groups_pages', 'ZSTD',
    (df, p) => df.lazy().sinkParquet(p, { compression: 'zstd', rowGroupSize: 900, dataPagesizeLimit: 2048 }).collectSync()],
];
const sourceFile = join(DIR, 'source_for_polars.parquet');
for (const [label, codec, write] of POLARS_VARIANTS) {
  test(`Polars writes (${label}); nxprof's reader reads what DuckDB reads`, async (t) => {
    await source();
    await duckdb.run(`COPY (SELECT * FROM src ORDER BY id) TO ${lit(sourceFile)} (FORMAT parquet, COMPRESSION uncompressed)`);
    const df = pl.readParquet(sourceFile);
    const path = join(DIR, `polars_${label}.parquet`);
    write(df, path);
    assert.equal(pl.readParquet(path).height, SOURCE_ROWS);
    const [fm] = await sql(`SELECT created_by, num_row_groups FROM parquet_file_metadata(${lit(path)})`);
    assert.match(fm.created_by ?? '', /polars/i, `${label}: written by Polars`);
    const codecs = await sql(`SELECT DISTINCT compression FROM parquet_metadata(${lit(path)})`);
    assert.deepEqual(codecs.map((c) => c.compression), [codec], `${label}: Polars used ${codec}`);
    if (label.includes('small_groups')) assert.ok(fm.num_row_groups > 1n, `${label}: several row groups`);
    await compareDump(t, path, `polars_${label}`);
  });
}
