// js.web_modules: web/js/state.js — the view URL and window arithmetic; web/js/markers.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseViewQuery, viewQuery, clampWindow, zoomWindow, windowOnEvent } from '../../web/js/state.js';
import { toggleMarker, markerDeltas } from '../../web/js/markers.js';

test('the view query round-trips, exactly beyond 2^53', () => {
  const v = { start: 1766128391461196156n, end: 1766128391464179925n, event: { table: 'Instruction', ordinal: 17 },
    q: 'a b&c', field: 'name', group: 'thread', colour: 'opcode' };
  const s = viewQuery(v);
  assert.equal(s, 'start=1766128391461196156&end=1766128391464179925&event=Instruction:17&q=a%20b%26c&field=name&group=thread&colour=opcode');
  assert.deepEqual(parseViewQuery(`?${s}`), v);
  assert.equal(viewQuery({ start: 1n, end: 2n, event: null, q: '', field: 'x', group: null, colour: null }), 'start=1&end=2');
});

test('malformed parameters are null', () => {
  const q = parseViewQuery('?start=12x&end=&event=Instruction:x&q=');
  assert.deepEqual(q, { start: null, end: null, event: null, q: null, field: null, group: null, colour: null });
  assert.deepEqual(parseViewQuery('?event=Instruction%3A5').event, { table: 'Instruction', ordinal: 5 });
});

test('clampWindow: 10 ns minimum, 1.5 x span maximum, a quarter past either end', () => {
  assert.deepEqual(clampWindow(100, 102, 1000), [100, 110]);
  const [s, e] = clampWindow(-10000, 10000, 1000);
  assert.equal(e - s, 1510);
  assert.ok(s >= -255 && e <= 1255);
  assert.deepEqual(clampWindow(-1000, -900, 1000), [-255, -155]);
});

test('zoomWindow keeps the pointer time; windowOnEvent moves only when needed', () => {
  assert.deepEqual(zoomWindow(0, 100, 25, 0.5), [12.5, 62.5]);
  assert.deepEqual(windowOnEvent(0, 100, 40, 50), [0, 100]);
  assert.deepEqual(windowOnEvent(0, 100, 200, 210), [155, 255]);
  assert.deepEqual(windowOnEvent(0, 100, 200, 400), [180, 420]);
});

test('markers: add sorted, remove the nearest within reach, deltas between neighbours', () => {
  let m = toggleMarker([], 50, 2);
  m = toggleMarker(m, 10, 2);
  m = toggleMarker(m, 90, 2);
  assert.deepEqual(m.map((x) => x.t), [10, 50, 90]);
  assert.deepEqual(m[0], { t: 10, label: '' }, 'a new marker has no label');
  assert.deepEqual(markerDeltas(m), [{ from: 10, to: 50, delta: 40 }, { from: 50, to: 90, delta: 40 }]);
  assert.deepEqual(toggleMarker(m, 51, 2).map((x) => x.t), [10, 90]);
  assert.deepEqual(markerDeltas([{ t: 5, label: '' }]), []);
});
