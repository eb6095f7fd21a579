// store.js: writes and the changes told to subscribers, the selection, and the URL round
// trip through a store (exact beyond 2^53).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStore, update, set, select, subscribe, V, fromURL, urlOf, absOf, relOf, windowAbs } from '../../web/js/store.js';

const told = [];
subscribe((v, changes) => told.push([v, [...changes]]));

test('update writes the fields and tells the subscribers the changes, once per call', () => {
  const v = createStore();
  told.length = 0;
  update(v, { viewS: 5, viewE: 9 });
  assert.deepEqual([v.viewS, v.viewE], [5, 9]);
  assert.equal(told.length, 0, 'no change named: nobody told');
  update(v, { mode: 'rank' }, 'layout', 'url', 'layout');
  assert.equal(v.mode, 'rank');
  assert.equal(told.length, 1);
  assert.equal(told[0][0], v);
  assert.deepEqual(told[0][1], ['layout', 'url']);
  set({ colourMode: 'opcode' }, 'colour');
  assert.equal(V.colourMode, 'opcode');
  assert.equal(told[1][0], V);
});

test('stores are apart: createStore gives fresh collections', () => {
  const a = createStore(), b = createStore();
  a.collapsed.add('x'); a.aggBy.set('T', 'f');
  assert.equal(b.collapsed.size, 0);
  assert.equal(b.aggBy.size, 0);
});

test('select keeps the reference, its window when known, and whether to reveal it', () => {
  told.length = 0;
  select({ table: 'Instruction', ordinal: '7', track: 'qE0', start: 10n, end: 20n }, true);
  assert.deepEqual(V.sel, { table: 'Instruction', ordinal: 7 });
  assert.deepEqual(V.selRef, { table: 'Instruction', ordinal: 7, track: 'qE0', start: 10n, end: 20n });
  assert.equal(V.reveal.track, 'qE0');
  assert.equal(V.flows, null);
  assert.deepEqual(told.at(-1)[1], ['select']);
  select({ table: 'DmaPacket', ordinal: 3 });
  assert.deepEqual([V.sel, V.selRef, V.reveal], [{ table: 'DmaPacket', ordinal: 3 }, null, null]);
  select(null);
  assert.equal(V.sel, null);
});

test('the URL round trips through a store, exact beyond 2^53', () => {
  const v = createStore();
  const t0 = 2n ** 60n + 3n;
  update(v, { origin: t0, span: 1e6, viewS: 0, viewE: 1e6, defaultColour: 'opcode', colourMode: 'opcode' });
  const got = fromURL(v, `?start=${t0 + 100n}&end=${t0 + 5000n}&event=Instruction:42&q=matmul&field=opcode&group=rank&colour=hlo_name`);
  assert.deepEqual(got, { sel: { table: 'Instruction', ordinal: 42 }, viewS: 100, viewE: 5000,
    search: { q: 'matmul', field: 'opcode' }, mode: 'rank', colourMode: 'hlo_name' });
  update(v, got);
  const url = urlOf(v, '/view/p');
  assert.equal(url, `/view/p?start=${t0 + 100n}&end=${t0 + 5000n}&event=Instruction:42&q=matmul&field=opcode&group=rank&colour=hlo_name`);
  const w = createStore();
  update(w, { origin: t0, defaultColour: 'opcode', colourMode: 'opcode' });
  update(w, fromURL(w, url.slice(url.indexOf('?'))));
  assert.equal(urlOf(w, '/view/p'), url);
  // defaults stay out of the URL; a reversed window is not taken
  update(w, { mode: 'default', colourMode: 'opcode', sel: null, search: { q: '', field: 'opcode' } });
  assert.equal(urlOf(w, '/view/p'), `/view/p?start=${t0 + 100n}&end=${t0 + 5000n}`);
  assert.equal(fromURL(w, `?start=${t0 + 9n}&end=${t0 + 2n}`).viewS, undefined);
});

test('times: absolute and relative to the store\'s origin', () => {
  const v = createStore();
  update(v, { origin: 2n ** 62n, viewS: 1.4, viewE: 99.2 });
  assert.equal(absOf(5, v), 2n ** 62n + 5n);
  assert.equal(relOf((2n ** 62n + 77n).toString(), v), 77);
  assert.deepEqual(windowAbs(v), { S: 2n ** 62n + 1n, E: 2n ** 62n + 100n });
});
