// js.web_modules: web/js/timeline_bin.js — a binary /timeline answer, laid out here byte
// by byte with a DataView (docs/api.md "Binary timeline"), read back into the JSON
// answer's shape; damaged answers throw naming the offset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeTimeline } from '../../web/js/timeline_bin.js';

const header = {
  start: 1000, end: 2000, width: 10, strings: ['aten::mm', 'cpu'],
  tables: [
    { table: 'SystemProfileEvents', rows_in_window: 4, sampled: 3, label_fields: ['name', 'pid'],
      label_types: ['string', 'integer'], nested: true, tracks: [{ track: 'a', n: 2 }, { track: 'b', n: 1 }] },
    { table: 'DmaPacket', error: 'DmaPacket.parquet: truncated' },
  ],
};

// The answer for `header` (less its last `cut` bytes) with the arrays at the offsets the layout gives (the header is
// padded with spaces to a multiple of 8 so the offsets below are fixed).
function answer(hdr, cut = 0) {
  let text = JSON.stringify(hdr);
  while ((8 + text.length) % 8) text += ' ';
  const h = text.length, base = 8 + h, size = base + 3 * 24 + 16 + 16 + 24;
  const dv = new DataView(new ArrayBuffer(size));
  const put = (f, off, v) => dv[f](off, v, true);
  put('setUint32', 0, 0x4254584e);
  put('setUint32', 4, h);
  new Uint8Array(dv.buffer, 8, h).set(new TextEncoder().encode(text));
  [-5, 10, 500].forEach((v, i) => put('setFloat64', base + 8 * i, v));
  [100, 20, 0].forEach((v, i) => put('setFloat64', base + 24 + 8 * i, v));
  [0, 1, 7].forEach((v, i) => put('setFloat64', base + 48 + 8 * i, v));
  [0, 1, 0].forEach((v, i) => put('setUint32', base + 72 + 4 * i, v));
  [0, -1, 1].forEach((v, i) => put('setInt32', base + 88 + 4 * i, v));
  [5, NaN, 2 ** 53].forEach((v, i) => put('setFloat64', base + 104 + 8 * i, v));
  return dv.buffer.slice(0, size - cut);
}

test('decode: per track views of the columns, nulls as in the JSON answer, errors kept', () => {
  const got = decodeTimeline(answer(header));
  assert.deepEqual(got.strings, ['aten::mm', 'cpu']);
  const [sys, dma] = got.tables;
  assert.equal(sys.nested, undefined);
  assert.deepEqual(dma, { table: 'DmaPacket', error: 'DmaPacket.parquet: truncated' });
  const [a, b] = sys.tracks;
  assert.equal(a.track, 'a');
  assert.deepEqual([...a.start], [-5, 10]);
  assert.deepEqual([...b.start], [500]);
  assert.deepEqual([...a.dur], [100, 20]);
  assert.deepEqual([...b.ord], [7]);
  assert.deepEqual([...a.depth], [0, 1]);
  assert.deepEqual([...a.labels.name], [0, -1]);
  assert.deepEqual([...b.labels.name], [1]);
  assert.deepEqual(a.labels.pid, [5, null]);
  assert.deepEqual(b.labels.pid, [2 ** 53]);
  assert.equal(a.n, undefined);
});

test('decode: a table without depth has none; damaged answers name the offset', () => {
  const flat = { ...header, tables: [{ ...header.tables[0], nested: false, label_fields: [], label_types: [] }] };
  const got = decodeTimeline(answer(flat));
  assert.equal(got.tables[0].tracks[0].depth, undefined);
  assert.throws(() => decodeTimeline(new ArrayBuffer(8)), /offset 0/);
  assert.throws(() => decodeTimeline(answer(header, 20)), /SystemProfileEvents pid past the end \(offset \d+\)/);
  const short = answer(header).slice(0, 12);
  assert.throws(() => decodeTimeline(short), /header of \d+ bytes past the end \(offset 4\)/);
});
