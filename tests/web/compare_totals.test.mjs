// js.web_modules: web/js/compare_totals.js — the Compare page's device and step totals
// side by side: the steps both profiles have, and the two tables' cells.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedSteps, totalsHTML } from '../../web/js/compare_totals.js';

const step = (name, a, b) => ({
  name, step: Number(name.split('#')[1]), rank_a: a ? 0 : null, rank_b: b ? 1 : null,
  start_ns_a: a ? a[0] : null, duration_ns_a: a ? a[1] : null, start_ns_b: b ? b[0] : null, duration_ns_b: b ? b[1] : null,
  delta_ns: a && b ? b[1] - a[1] : null, ratio: a && b ? b[1] / a[1] : null,
  gpu_busy_ns_a: a ? 5 : null, gpu_busy_ns_b: b ? 7 : null, gpu_busy_ns_delta: a && b ? 2 : null,
});

test('the steps both profiles have, each side as BigInt [start, end), the first of a name kept', () => {
  const answer = { steps: [step('ProfilerStep#1', [100, 300], [150, 400]), step('ProfilerStep#2', [400, 10], null),
    step('ProfilerStep#3', null, [900, 5]), step('ProfilerStep#1', [1000, 1], [2000, 2]),
    { ...step('ProfilerStep#4', [5, 5], [6, 6]), start_ns_a: '9007199254740993' }] };
  const got = sharedSteps(answer);
  assert.deepEqual([...got.keys()], ['ProfilerStep#1', 'ProfilerStep#4']);
  assert.deepEqual(got.get('ProfilerStep#1'), { a: { start: 100n, end: 400n }, b: { start: 150n, end: 550n } });
  assert.equal(got.get('ProfilerStep#4').a.start, 9007199254740993n, 'a start beyond 2^53 kept exact');
  assert.equal(sharedSteps({ ops: [] }).size, 0, 'device profiles: none');
});

test('the tables: a row per device and step, "–" for a side without it, exact ns on hover', () => {
  assert.equal(totalsHTML({ devices: [], steps: [] }), '', 'nothing to show: no tables');
  const html = totalsHTML({
    devices: [{ device: 'GPU 0', rank_a: 0, rank_b: 1, busy_ns_a: 2000, busy_ns_b: 1500, busy_ns_delta: -500, idle_ns_a: 8000,
      idle_ns_b: 8500, kernel_ns_a: 1000, kernel_ns_b: null, utilization_a: 0.2, utilization_b: null }],
    steps: [step('ProfilerStep#1', [100, 300], [150, 400]), step('ProfilerStep#2', [400, 10], null)],
  });
  assert.match(html, /<table id="compare-devices"/);
  assert.match(html, /<td>GPU 0<\/td><td>0 \/ 1<\/td><td class="num" title="2000 ns">/);
  assert.match(html, /title="-500 ns">-500 ns</);
  assert.match(html, /<td class="num">20.0 %<\/td><td class="num"><span class="muted">–<\/span><\/td><\/tr>/);
  assert.match(html, /<tr data-step="ProfilerStep#1"><td>ProfilerStep#1<\/td><td>0 \/ 1<\/td><td class="num" title="300 ns">/);
  assert.match(html, /title="100 ns">\+100 ns<\/td><td class="num">1.333×<\/td>/);
  assert.match(html, /<tr data-step="ProfilerStep#2"><td>ProfilerStep#2<\/td><td>0 \/ –<\/td>/);
});
