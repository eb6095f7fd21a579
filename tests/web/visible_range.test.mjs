// js.web_modules: web/js/hit.js visibleRange — the events a frame visits are every event
// whose box (eventBox) reaches the pixels asked for, checked against all boxes on random
// tracks (intervals, zero-duration marks, point events) at random windows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventBox, maxDurOf, visibleRange } from '../../web/js/hit.js';

function track(rand, n, point) {
  const start = new Float64Array(n), dur = new Float64Array(n);
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += Math.floor(rand() * 50);
    start[i] = t;
    dur[i] = point || rand() < 0.2 ? 0 : Math.floor(rand() ** 4 * 5000);
  }
  const d = { start, dur, point, depth: null };
  d.maxDur = maxDurOf(d);
  return d;
}

test('visibleRange holds every event whose box reaches [x0, x1], at any zoom', () => {
  let s = 3;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const r = { y: 0, h: 20, nested: false };
  for (let k = 0; k < 200; k++) {
    const d = track(rand, 300, k % 3 === 0);
    const g = { gutter: 180, viewS: rand() * 8000 - 500, k: 0.05 + rand() * 20, pad: 2, levelH: 16 };
    const x0 = 180 + Math.floor(rand() * 400), x1 = x0 + Math.floor(rand() * 1200);
    const [lo, hi] = visibleRange(d, g, x0, x1);
    for (let i = 0; i < d.start.length; i++) {
      const b = eventBox(d, i, r, g);
      if (b.x + b.w >= x0 && b.x <= x1) assert.ok(i >= lo && i < hi, `event ${i} at [${b.x}, ${b.x + b.w}] outside [${lo}, ${hi})`);
    }
    assert.ok(hi - lo <= d.start.length);
  }
  // Zoomed in: only the events near the pixels are visited.
  const d = { start: Float64Array.from({ length: 1000 }, (_, i) => 10 * i), dur: new Float64Array(1000).fill(5), point: false, depth: null };
  d.maxDur = maxDurOf(d);
  const [lo, hi] = visibleRange(d, { gutter: 100, viewS: 5000, k: 1 }, 100, 200);
  assert.ok(lo >= 490 && lo <= 499 && hi >= 510 && hi <= 512, `[${lo}, ${hi})`);
});

test('events out of start order are all visited', () => {
  const d = { start: [5, 1, 9], dur: [1, 1, 1], point: false, depth: null };
  d.maxDur = maxDurOf(d);
  assert.equal(d.maxDur, Infinity);
  assert.deepEqual(visibleRange(d, { gutter: 0, viewS: 100, k: 1 }, 0, 10), [0, 3]);
  const e = { start: [1, 2, 3], dur: [4, 9, 2], point: false, depth: null };
  assert.equal(maxDurOf(e), 9);
});
