// js.web_modules: web/js/layout.js (track tree, grouping modes, rows) and web/js/hit.js
// (event boxes, hit testing, area bands).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTree, layoutRows, pathTo, hasGroupings, trackHeight, GROUP_H, TRACK_H, LEVEL_H, TRACK_PAD } from '../../web/js/layout.js';
import { rowAt, eventBox, eventAt, rowsInBand } from '../../web/js/hit.js';

const defs = new Map([
  ['Instruction', { table: 'Instruction', nested: false, track_suffix: '' }],
  ['DmaPacket', { table: 'DmaPacket', nested: false, track_suffix: ' · packets' }],
  ['SystemProfileEvents', { table: 'SystemProfileEvents', nested: true, track_suffix: '' }],
]);
const sysT = (track, count, o) => ({ table: 'SystemProfileEvents', track, count, max_depth: 0, source: 'framework', instance: 'i-1', pid: null, tid: null, nc: null, ...o });
const DOC = { groups: [
  { group: 'compute', label: 'Compute engines', tracks: [{ table: 'Instruction', track: 'qPE0', count: 5 }, { table: 'Instruction', track: 'qAct', count: 3 }] },
  { group: 'dma', label: 'DMA queues', tracks: [{ table: 'DmaPacket', track: 'q1', count: 2 }] },
  { group: 'cc', label: 'Collectives (CC)', tracks: [] },
  { group: 'system', label: 'System', tracks: [
    sysT('i-1/10/10', 4, { pid: 10, tid: 10, max_depth: 3 }), sysT('i-1/10/11', 1, { pid: 10, tid: 11 }),
    sysT('i-2/20/20', 2, { instance: 'i-2', pid: 20, tid: 20 }),
    sysT('nc1', 6, { source: 'neuron_rt', nc: 1, pid: 10, tid: 12 }), sysT('nc0', 7, { source: 'neuron_rt', nc: 0, pid: 10, tid: 12 })] },
] };
const shape = (nodes) => nodes.map((n) => (n.children ? [n.label, n.count, shape(n.children)] : n.label));

test('device groups: one level, empty groups skipped, suffixes, counts', () => {
  const t = buildTree({ groups: DOC.groups.slice(0, 3) }, defs);
  assert.deepEqual(shape(t), [['Compute engines', 8, ['qPE0', 'qAct']], ['DMA queues', 2, ['q1 · packets']]]);
  assert.equal(hasGroupings({ groups: DOC.groups.slice(0, 3) }), false);
  assert.equal(hasGroupings(DOC), true);
});

test('compute: an engine\'s barrier row under its instruction row, unmatched ones last', () => {
  const d = new Map([...defs, ['CoreBarriers', { table: 'CoreBarriers', nested: false, track_suffix: ' · barriers' }]]);
  const I = (track) => ({ table: 'Instruction', track, count: 1 }), B = (track) => ({ table: 'CoreBarriers', track, count: 1 });
  const doc = { groups: [{ group: 'compute', label: 'Compute engines',
    tracks: [I('gpsimd'), I('scalar'), I('tensor'), B('Tensor'), B('Sync'), B('GpSimd')] }] };
  assert.deepEqual(shape(buildTree(doc, d))[0][2],
    ['gpsimd', 'GpSimd · barriers', 'scalar', 'tensor', 'Tensor · barriers', 'Sync · barriers']);
  // Other groups keep /tracks' order.
  const dma = { groups: [{ group: 'dma', label: 'DMA queues', tracks: [{ table: 'DmaPacketAggregated', track: 'q1', count: 1 },
    { table: 'DmaPacketAggregated', track: 'q2', count: 1 }, { table: 'DmaPacket', track: 'q1', count: 1 }] }] };
  assert.deepEqual(shape(buildTree(dma, defs))[0][2], ['q1', 'q2', 'q1 · packets']);
});

test('a table /tracks could not read gets one row in its group', () => {
  const doc = { groups: [{ group: 'dma', label: 'DMA queues', tracks: [{ table: 'DmaPacket', track: 'q1', count: 2 }] },
    { group: 'compute', label: 'Compute engines', tracks: [] }],
  errors: [{ table: 'Instruction', error: 'Instruction.parquet: truncated' }] };
  const d = new Map([...defs, ['Instruction', { table: 'Instruction', group: 'compute' }], ['DmaPacket', { table: 'DmaPacket', group: 'dma', track_suffix: ' · packets' }]]);
  const t = buildTree(doc, d);
  assert.deepEqual(shape(t), [['DMA queues', 2, ['q1 · packets']], ['Compute engines', 0, ['Instruction']]]);
  assert.equal(t[1].children[0].id, 'Instruction\0');
});

test('system grouping modes', () => {
  const sys = (mode) => shape(buildTree({ groups: [DOC.groups[3]] }, defs, mode))[0][2];
  assert.deepEqual(sys('default'), [
    ['instance i-1', 18, [['process 10', 5, ['thread 10', 'thread 11']], 'NeuronCore 0', 'NeuronCore 1']],
    ['instance i-2', 2, [['process 20', 2, ['thread 20']]]]]);
  assert.deepEqual(sys('process'), [['process 10', 5, ['thread 10', 'thread 11']], ['process 20', 2, ['thread 20']], ['NeuronCores', 13, ['NeuronCore 0', 'NeuronCore 1']]]);
  assert.deepEqual(sys('thread'), [['Threads', 7, ['10/10', '10/11', '20/20']], ['NeuronCores', 13, ['NeuronCore 0', 'NeuronCore 1']]]);
  assert.deepEqual(sys('neuroncore'), [['NeuronCores', 13, ['NeuronCore 0', 'NeuronCore 1']], ['Threads', 7, ['10/10', '10/11', '20/20']]]);
  assert.deepEqual(sys('instance'), [['instance i-1', 18, ['10/10', '10/11', 'NeuronCore 0', 'NeuronCore 1']], ['instance i-2', 2, ['20/20']]]);
});

test('a thread without pid or tid is named by its track', () => {
  const doc = { groups: [{ group: 'system', label: 'System', tracks: [sysT('u/-13/-43', 1, { instance: 'u' })] }] };
  assert.deepEqual(shape(buildTree(doc, defs, 'default'))[0][2], [['instance u', 1, [['process (unknown)', 1, ['u/-13/-43']]]]]);
  assert.deepEqual(shape(buildTree(doc, defs, 'thread'))[0][2], [['Threads', 1, ['u/-13/-43']]]);
});

test('threads the trace named show its names (/tracks process_label, thread_label)', () => {
  const named = (track, pid, tid, p, th) => sysT(track, 1, { instance: 'u', pid, tid, process_label: p, thread_label: th });
  const doc = { groups: [{ group: 'system', label: 'System', tracks: [
    named('u/469/469', 469, 469, 'python3 (469)', 'thread 469 (python3)'),
    named('u/469/520', 469, 520, 'python3 (469)', 'thread 520 (pt_autograd_0)'),
    named('u/0/7', 0, 7, 'GPU 0', 'stream 7'), sysT('u/5/6', 1, { instance: 'u', pid: 5, tid: 6 })] }] };
  assert.deepEqual(shape(buildTree(doc, defs, 'default'))[0][2], [['instance u', 4, [
    ['python3 (469)', 2, ['thread 469 (python3)', 'thread 520 (pt_autograd_0)']], ['GPU 0', 1, ['stream 7']],
    ['process 5', 1, ['thread 6']]]]]);
  assert.deepEqual(shape(buildTree(doc, defs, 'thread'))[0][2], [['Threads', 4, [
    'python3 (469) / thread 469 (python3)', 'python3 (469) / thread 520 (pt_autograd_0)', 'GPU 0 / stream 7', '5/6']]]);
});

test('ranked tracks: a group per rank, in /tracks order, above its processes in every mode', () => {
  const r = (rank, pid, tid, p, th) => sysT(`rank${rank}/unknown/${pid}/${tid}`, 1, { instance: 'unknown', pid, tid, rank,
    process_label: `rank ${rank} / ${p}`, thread_label: th });
  const doc = { groups: [{ group: 'system', label: 'System', tracks: [
    sysT('u/5/6', 1, { instance: 'u', pid: 5, tid: 6, rank: null }),
    r(0, 731, 731, 'python3 (731)', 'thread 731 (python3)'), r(0, 0, 7, 'GPU 0', 'stream 7'),
    r(1, 732, 732, 'python3 (732)', 'thread 732 (python3)'), r(1, 0, 7, 'GPU 0', 'stream 7')] }] };
  assert.deepEqual(shape(buildTree(doc, defs, 'default'))[0][2], [
    ['instance u', 1, [['process 5', 1, ['thread 6']]]],
    ['rank 0 (pid 731)', 2, [['instance unknown', 2, [['python3 (731)', 1, ['thread 731 (python3)']], ['GPU 0', 1, ['stream 7']]]]]],
    ['rank 1 (pid 732)', 2, [['instance unknown', 2, [['python3 (732)', 1, ['thread 732 (python3)']], ['GPU 0', 1, ['stream 7']]]]]]]);
  assert.deepEqual(shape(buildTree(doc, defs, 'thread'))[0][2], [['Threads', 1, ['5/6']],
    ['rank 0 (pid 731)', 2, [['Threads', 2, ['python3 (731) / thread 731 (python3)', 'GPU 0 / stream 7']]]],
    ['rank 1 (pid 732)', 2, [['Threads', 2, ['python3 (732) / thread 732 (python3)', 'GPU 0 / stream 7']]]]]);
  const t = buildTree(doc, defs, 'process');
  const ids = t[0].children.map((n) => n.id);
  assert.equal(new Set(ids).size, ids.length);   // each rank's group collapses on its own
  const host = { groups: [{ group: 'system', label: 'System', tracks: [sysT('rank3/i-9/40/40', 2, { instance: 'i-9', pid: 40, tid: 40, rank: 3 })] }] };
  assert.equal(buildTree(host, defs, 'default')[0].children[0].label, 'rank 3 (i-9, pid 40)');
});

test('rows: heights by depth, collapse hides children, pathTo finds the groups', () => {
  const tree = buildTree(DOC, defs, 'default');
  const { rows, height } = layoutRows(tree, defs, new Set(), 100);
  assert.equal(rows[0].y, 100);
  assert.equal(height, rows.reduce((a, r) => a + r.h, 0));
  const deep = rows.find((r) => r.track === 'i-1/10/10');
  assert.equal(deep.h, 4 * LEVEL_H + 2 * TRACK_PAD);
  assert.equal(deep.levels, 4);
  assert.equal(deep.nested, true);
  assert.equal(rows.find((r) => r.track === 'qPE0').h, TRACK_H);
  assert.equal(trackHeight({ max_depth: 0 }, defs.get('SystemProfileEvents')), LEVEL_H + 2 * TRACK_PAD);
  const above = pathTo(tree, 'SystemProfileEvents\0i-1/10/11');
  assert.deepEqual(above, ['g:system', 'g:system:default/i:i-1', 'g:system:default/i:i-1/p:10']);
  const closed = layoutRows(tree, defs, new Set([above[1]]), 0).rows;
  assert.ok(!closed.some((r) => r.track === 'i-1/10/11'));
  assert.ok(closed.some((r) => r.kind === 'group' && r.id === above[1] && r.collapsed && r.h === GROUP_H));
  assert.equal(pathTo(tree, 'nope'), null);
});

const g = { gutter: 100, viewS: 0, k: 10, pad: 2, levelH: 16 };
test('event boxes and hits: depth bands, 1 px minimum, the shortest under the point', () => {
  const r = { kind: 'track', y: 50, h: 3 * 16 + 4, nested: true };
  const d = { start: Float64Array.from([0, 100, 120, 900]), dur: Float64Array.from([1000, 500, 5, 1]), depth: Int32Array.from([0, 1, 2, 1]), point: false };
  assert.deepEqual(eventBox(d, 1, r, g), { x: 110, w: 50, y: 50 + 2 + 16, h: 15 });
  assert.equal(eventBox(d, 3, r, g).w, 1);
  assert.equal(eventAt(d, r, 120, 50 + 2 + 16 + 5, g), 1);      // level 1
  assert.equal(eventAt(d, r, 120, 50 + 2 + 5, g), 0);           // level 0
  assert.equal(eventAt(d, r, 112.2, 50 + 2 + 32 + 5, g), 2);    // level 2, 0.5 px wide
  assert.equal(eventAt(d, r, 300, 50 + 2 + 16 + 5, g), -1);      // nothing on level 1 there
  const flat = { kind: 'track', y: 0, h: 18, nested: false };
  const p = { start: Float64Array.from([100]), dur: Float64Array.from([0]), depth: null, point: true };
  assert.deepEqual(eventBox(p, 0, flat, g), { x: 109, w: 2, y: 2, h: 14 });
  assert.equal(eventAt(p, flat, 112.5, 9, g), 0);
  assert.equal(eventAt(p, flat, 115, 9, g), -1);
});

test('zero-duration events of an interval table: a 5 px marker centred on the time, hit before the slice around it', () => {
  const r = { kind: 'track', y: 0, h: 2 * 16 + 4, nested: true };
  // a slice of 2 us at level 0 holding an instant at 1 us on the same level, and one on level 1
  const d = { start: Float64Array.from([0, 1000, 400]), dur: Float64Array.from([2000, 0, 0]), depth: Int32Array.from([0, 0, 1]), point: false };
  assert.deepEqual(eventBox(d, 1, r, g), { x: 197.5, w: 5, y: 2, h: 15 });
  assert.deepEqual(eventBox(d, 2, r, g), { x: 137.5, w: 5, y: 18, h: 15 });
  assert.equal(eventAt(d, r, 199, 8, g), 1, 'the instant, not the slice it lies in');
  assert.equal(eventAt(d, r, 230, 8, g), 0);
  assert.equal(eventAt(d, r, 136, 20, g), 2);
  assert.equal(eventAt(d, r, 145, 20, g), 2, 'within 3 px of the marker');
  assert.equal(eventAt(d, r, 146, 20, g), -1);
});

test('rowAt and rowsInBand', () => {
  const rows = [{ kind: 'group', y: 0, h: 20 }, { kind: 'track', id: 'a', y: 20, h: 18 }, { kind: 'track', id: 'b', y: 38, h: 18 }];
  assert.equal(rowAt(rows, 25).id, 'a');
  assert.equal(rowAt(rows, 100), undefined);
  assert.deepEqual(rowsInBand(rows, 50, 10).map((r) => r.id), ['a', 'b']);
  assert.deepEqual(rowsInBand(rows, 21, 22).map((r) => r.id), ['a']);
});
