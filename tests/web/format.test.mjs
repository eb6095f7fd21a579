// js.web_modules: web/js/format.js — units, ellipsis, field values by catalogue unit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fmtNs, fmtTick, niceStep, fmtBytes, fmtPct, fmtCount, fmtUsage, ellipsize, middleCut, fmtField, prettyJSON, esc, cut } from '../../web/js/format.js';

test('fmtNs picks ns/us/ms/s by magnitude', () => {
  assert.equal(fmtNs(950), '950 ns');
  assert.equal(fmtNs(12500), '12.5 us');
  assert.equal(fmtNs(3.2e6), '3.2 ms');
  assert.equal(fmtNs(1.25e9), '1.25 s');
  assert.equal(fmtNs(-2000), '-2 us');
  assert.equal(fmtNs(0), '0 ns');
});

test('axis ticks: one unit per axis, decimals from the step', () => {
  assert.equal(niceStep(3), 5);
  assert.equal(niceStep(120), 200);
  assert.equal(niceStep(1000), 1000);
  assert.equal(fmtTick(8.8e6, 2e5, 9e6), '8.8 ms');
  assert.equal(fmtTick(0, 1e6, 9e6), '0 ms');
  assert.equal(fmtTick(1500, 500, 2000), '1.5 us');
});

test('bytes, percent, counts, usage values', () => {
  assert.equal(fmtBytes(512), '512 B');
  assert.equal(fmtBytes(1536), '1.5 KiB');
  assert.equal(fmtBytes(3 * 1024 ** 3), '3.0 GiB');
  assert.equal(fmtPct(0.9677), '0.97 %');
  assert.equal(fmtPct(42.54), '42.5 %');
  assert.equal(fmtPct(null), '');
  assert.equal(fmtCount(1234567), '1,234,567');
  assert.equal(fmtUsage(50, 'percent'), '50.0 %');
  assert.equal(fmtUsage(2048, 'bytes'), '2.0 KiB');
  assert.equal(fmtUsage(2048, 'bytes_per_second'), '2.0 KiB/s');
  assert.equal(fmtUsage(12345, ''), '12,345', 'a count (PendingDma)');
});

test('ellipsize keeps what fits, never cuts without the ellipsis', () => {
  const m = (s) => s.length * 6;   // 6 px per character
  assert.equal(ellipsize('MATMUL', 60, m), 'MATMUL');
  assert.equal(ellipsize('TENSOR_TENSOR', 48, m), 'TENSOR_…');
  assert.equal(m(ellipsize('aten::convolution_backward', 100, m)) <= 100, true);
  assert.equal(ellipsize('abc', 5, m), '');
});

test('middleCut keeps both ends', () => {
  assert.equal(middleCut('short', 10), 'short');
  const s = middleCut('NeuronLlamaDecoderLayer[0]/NeuronLlamaMLP/aten.mm', 20);
  assert.equal(s.length, 20);
  assert.ok(s.startsWith('NeuronLl') && s.endsWith('aten.mm') && s.includes('…'), s);
});

test('fmtField formats by catalogue unit', () => {
  assert.deepEqual(fmtField('duration_ns', 2500, 'nanoseconds'), { text: '2.5 us', raw: '2500' });
  assert.equal(fmtField('start_ts', 1766128391461196156n, 'nanoseconds', 1766128389960196156n).text, '1766128391461196156 (t0 + 1.501 s)');
  assert.equal(fmtField('start_ts', '1766128391461196156', 'nanoseconds', null).text, '1766128391461196156');
  assert.equal(fmtField('sbuf_read_bytes', 65536, 'bytes').text, '64.0 KiB');
  assert.equal(fmtField('total_time', 0.002984, 'seconds').text, '2.984 ms');
  assert.equal(fmtField('mfu', 0.97, 'percent').text, '0.97 %');
  assert.equal(fmtField('opcode', 'MATMUL', '').text, 'MATMUL');
  assert.equal(fmtField('flow_id', ['1', '2'], '').text, '["1","2"]');
  assert.equal(fmtField('x', null, 'bytes').text, '');
});

test('prettyJSON, esc, cut', () => {
  assert.equal(prettyJSON('{"a":1}'), '{\n  "a": 1\n}');
  assert.equal(prettyJSON('not json'), null);
  assert.equal(prettyJSON('{bad'), null);
  assert.equal(esc('<a href="x">&'), '&lt;a href=&quot;x&quot;&gt;&amp;');
  assert.equal(cut('a<b'), '<span class="cut " title="a&lt;b">a&lt;b</span>');
});
