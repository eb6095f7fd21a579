// js.web_modules: web/js/data.js — /timeline and /usage responses into arrays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ingestTimeline, ingestUsage, seriesName } from '../../web/js/data.js';

const defs = new Map([
  ['SystemProfileEvents', { table: 'SystemProfileEvents', kind: 'interval', nested: true, group: 'system',
    labels: [{ name: 'name', type: 'string' }, { name: 'trace_event_source', type: 'string' }], colour_by: ['name'] }],
  ['DmaPacket', { table: 'DmaPacket', kind: 'interval', group: 'dma', labels: [{ name: 'transfer_bytes', type: 'integer' }], colour_by: ['track'] }],
  ['SemaphoreUpdate', { table: 'SemaphoreUpdate', kind: 'point', group: 'semaphore', labels: [{ name: 'value', type: 'integer' }], colour_by: [] }],
]);

test('timeline: offsets, labels by type, depth, names, per-table errors', () => {
  const tl = { strings: ['aten::mm', 'framework'], tables: [
    { table: 'SystemProfileEvents', rows_in_window: 3, sampled: 2, tracks: [{ track: 'i/1/1', start: [-5, 10], dur: [100, 20], ord: [0, 1], depth: [0, 1],
      labels: { name: [0, -1], trace_event_source: [1, 1] } }] },
    { table: 'DmaPacket', rows_in_window: 1, sampled: 1, tracks: [{ track: 'q1', start: [3], dur: [4], ord: [9], labels: { transfer_bytes: [512] } }] },
    { table: 'SemaphoreUpdate', error: 'SemaphoreUpdate.parquet: truncated' }] };
  const got = ingestTimeline(tl, 1000, defs, 'name');
  const s = got.tracks.get('SystemProfileEvents\0i/1/1');
  assert.deepEqual([...s.start], [995, 1010]);
  assert.deepEqual([...s.depth], [0, 1]);
  assert.deepEqual(s.labels.name, ['aten::mm', null]);
  assert.deepEqual(s.name, ['aten::mm', null]);
  assert.deepEqual(s.keys, ['aten::mm', 'system:i/1/1']);
  const q = got.tracks.get('DmaPacket\0q1');
  assert.equal(q.depth, null);
  assert.deepEqual(q.labels.transfer_bytes, [512]);
  assert.equal(q.name, null, 'a table coloured by track draws no names');
  assert.deepEqual(q.keys, ['dma:q1']);
  assert.equal(got.errors.get('SemaphoreUpdate'), 'SemaphoreUpdate.parquet: truncated');
  assert.deepEqual(got.tables.map((t) => [t.table, t.rows_in_window, t.error]), [['SystemProfileEvents', 3, null], ['DmaPacket', 1, null], ['SemaphoreUpdate', null, 'SemaphoreUpdate.parquet: truncated']]);
});

test('usage: before sample first, series names', () => {
  const lanes = new Map([['CpuUsage', { series_what: 'CPU' }], ['SbufUsage', { series_what: 'core' }], ['SystemProfileHbmUsage', { series_what: 'HBM' }]]);
  const u = ingestUsage({ series: [
    { table: 'CpuUsage', key: 'average', unit: 'percent', before: { t: -10, v: 5 }, t: [3], v: [7] },
    { table: 'SbufUsage', pcore_idx: 0, unit: 'percent', t: [1, 2], v: [1, 2] },
    { table: 'SystemProfileHbmUsage', key: 'device 0 hbm 1', unit: 'bytes', t: [], v: [] }] }, 100, lanes);
  assert.equal(u.n, 3);
  const cpu = u.byTable.get('CpuUsage');
  assert.equal(cpu.percent, true);
  assert.deepEqual([...cpu.series[0].t], [90, 103]);
  assert.deepEqual([...cpu.series[0].v], [5, 7]);
  assert.equal(cpu.series[0].name, 'CPU average');
  assert.equal(u.byTable.get('SbufUsage').series[0].name, 'core 0');
  assert.equal(u.byTable.get('SystemProfileHbmUsage').series[0].name, 'device 0 hbm 1');
  assert.equal(seriesName({ key: 'host' }, 'host'), 'host');
  assert.equal(seriesName({ pcore_idx: null }, undefined), 'core (none)');
});
