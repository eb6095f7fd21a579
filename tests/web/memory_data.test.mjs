// js.web_modules (memory_data): the Memory view's pure geometry (web/js/memory_data.js) on hand-made
// /memory answers: offsets from t0, boxes by partition band and time, the hit test
// (topmost wins, nothing in the gutter), the owner colour (the palette's FNV-1a rule of
// docs/viewer.md, computed here) and the address text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ingestMemory, rectBox, rectAt, partitionAt, addressText } from '../../web/js/memory_data.js';
import { fmtBytes } from '../../web/js/format.js';

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#bcbd22', '#6b6ecf'];
function fnv(s) { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; } return h >>> 0; }

const DOC = {
  partitions: 128,
  sbuf: { present: true, in_window: 3, rects: [
    { start: -50, end: 100, partition_lo: 0, partition_hi: 31, start_address: 0, end_address: 4096, owner: 'q_tile' },
    { start: 200, end: 400, partition_lo: 64, partition_hi: 64, start_address: 8192, end_address: 9216, owner: '' },
    { start: '300', end: '350', partition_lo: 0, partition_hi: 127, start_address: 0, end_address: 16, owner: 'k_tile' },
  ] },
  hbm: { present: true, total: 10, categories: [{ usage_type: 'Weights', bytes: 10 }] },
};
// 1000 ns over 500 px after a 100 px gutter: 2 ns per px; 128 partitions over 256 px.
const G = { gutter: 100, viewS: 1000, k: 2, top: 20, plotH: 256, partitions: 128 };

test('offsets, colours and boxes', () => {
  const m = ingestMemory(DOC, 1000);
  assert.deepEqual(m.rects.map((r) => [r.t0, r.t1]), [[950, 1100], [1200, 1400], [1300, 1350]]);
  assert.equal(m.rects[0].colour, PALETTE[fnv('q_tile') % 20]);
  assert.equal(m.rects[1].colour, '#4b5563', 'no owner: the neutral colour');
  assert.equal(m.partitions, 128);
  assert.equal(m.sbuf.in_window, 3);
  // starts 25 px before the plot: clipped at the gutter; ends at 100 + 50 px; bands of 2 px.
  assert.deepEqual(rectBox(m.rects[0], G), { x: 100, y: 20, w: 50, h: 64 });
  assert.deepEqual(rectBox(m.rects[1], G), { x: 200, y: 148, w: 100, h: 2 });
});

test('hit test: topmost first, bands, gutter', () => {
  const m = ingestMemory(DOC, 1000);
  assert.equal(rectAt(m.rects, 260, 149, G), 2, 'over partition 64 the full-height allocation, drawn last, wins');
  assert.equal(rectAt(m.rects, 120, 50, G), 0);
  assert.equal(rectAt(m.rects, 220, 148, G), 1);
  assert.equal(rectAt(m.rects, 220, 151, G), -1, 'partition 65 is free');
  assert.equal(rectAt(m.rects, 60, 50, G), -1, 'the gutter holds no allocation');
  assert.equal(partitionAt(20, G), 0);
  assert.equal(partitionAt(275, G), 127);
  assert.equal(partitionAt(276, G), -1);
});

test('address text', () => {
  assert.equal(addressText(8192, 12288, fmtBytes), '0x2000–0x3000 (4.0 KiB)');
  assert.equal(addressText(0, 16, fmtBytes), '0x0–0x10 (16 B)');
});
