// js.web_modules: web/js/counter_lanes.js — /counters answers into lanes, their readout
// under a pixel, the lane identity; format.js fmtCounter. Expected values are written out
// by hand from the answer below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ingestCounters, counterReadout, counterTooltip, laneKey, seriesColours } from '../../web/js/counter_lanes.js';
import { fmtCounter } from '../../web/js/format.js';

const doc = { start: '1700000000000001000', end: '1700000000000002000', width: 10, lanes: [
  { kind: 'memory', label: 'GPU 0 memory', worker_gid: null, device_type: 1, device_id: 0, unit: 'bytes', series: [
    { name: 'allocated', before: { t: -400, v: 2048 }, t: [100, 500], v: [4096, 1024] },
    { name: 'reserved', before: null, t: [100], v: [8192] }] },
  { kind: 'memory', label: 'rank 1 / GPU 0 memory', worker_gid: 1, device_type: 1, device_id: 0, unit: 'bytes', series: [
    { name: 'allocated', before: null, t: [], v: [] }, { name: 'reserved', before: null, t: [], v: [] }] },
  { kind: 'counter', label: 'queue (pid 7)', worker_gid: null, process_id: 7, name: 'queue', unit: null, series: [
    { name: 'depth', before: { t: '-9007199254740993', v: 1.5 }, t: [0], v: [2.25] }] }] };

test('ingest: offsets from t0, the before sample first, one lane per key', () => {
  const c = ingestCounters(doc, 1000);
  assert.equal(c.size, 3);
  const gpu = c.get(laneKey(doc.lanes[0]));
  assert.equal(gpu.label, 'GPU 0 memory');
  assert.equal(gpu.unit, 'bytes');
  assert.deepEqual([...gpu.series[0].t], [600, 1100, 1500]);
  assert.deepEqual([...gpu.series[0].v], [2048, 4096, 1024]);
  assert.deepEqual([...gpu.series[1].t], [1100]);
  assert.notEqual(laneKey(doc.lanes[0]), laneKey(doc.lanes[1]), 'the rank tells two GPU 0 lanes apart');
  const q = c.get(laneKey(doc.lanes[2]));
  assert.equal(q.series[0].t[0], 1000 - 9007199254740993);   // a decimal-string offset read as a number
  assert.equal(ingestCounters(null, 0).size, 0);
});

test('readout: the value held over the pixel, the largest inside it, none before the first sample', () => {
  const c = ingestCounters(doc, 1000);
  const r = { def: { key: laneKey(doc.lanes[0]) } };
  const g = { viewS: 0, k: 100 };
  // pixel 7: [700, 800): allocated holds 2048 (since 600), reserved has no sample yet
  assert.deepEqual(counterReadout(r, c, 7, g).values, [{ name: 'allocated', v: 2048 }, { name: 'reserved', v: null }]);
  // pixel 11: [1100, 1200): both samples at 1100
  assert.deepEqual(counterReadout(r, c, 11, g).values, [{ name: 'allocated', v: 4096 }, { name: 'reserved', v: 8192 }]);
  // pixel 30: long after the last samples, which hold (a gauge)
  assert.deepEqual(counterReadout(r, c, 30, g).values, [{ name: 'allocated', v: 1024 }, { name: 'reserved', v: 8192 }]);
  // a pixel 800 ns wide over both allocated samples keeps the larger
  assert.equal(counterReadout(r, c, 1, { viewS: 300, k: 800 }).values[0].v, 4096);
  const tip = counterTooltip(counterReadout(r, c, 11, g));
  assert.match(tip, /<b>GPU 0 memory<\/b> at 1.1 us/);
  assert.match(tip, /allocated: 4.0 KiB/);
  assert.match(tip, /reserved: 8.0 KiB/);
  assert.equal(counterReadout({ def: { key: 'nope' } }, c, 0, g), null);
});

test('colours: memory series have their own, counters a line each', () => {
  assert.notDeepEqual(seriesColours('memory', 'allocated', 0), seriesColours('memory', 'reserved', 1));
  assert.equal(seriesColours('counter', 'depth', 0)[0], null);
  assert.notEqual(seriesColours('counter', 'a', 0)[1], seriesColours('counter', 'b', 1)[1]);
});

test('fmtCounter: bytes by unit, other values as numbers', () => {
  assert.equal(fmtCounter(6898636800, 'bytes'), '6.4 GiB');
  assert.equal(fmtCounter(512, 'bytes'), '512 B');
  assert.equal(fmtCounter(1234567.891234, null), '1,234,567.891');
  assert.equal(fmtCounter(-2.5, null), '-2.5');
});
