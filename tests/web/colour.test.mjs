// js.web_modules: web/js/colour.js — colour keys by colour_by and mode, stable colours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fnv1a32, colourOf, colourFields, colourKey, colourModes, heatColour, PALETTE, NEUTRAL } from '../../web/js/colour.js';

const INSTR = { table: 'Instruction', group: 'compute', colour_by: ['framework_name', 'raw_framework_id', 'hlo_name', 'opcode'] };
const types = { framework_name: 'string', raw_framework_id: 'integer', hlo_name: 'string', opcode: 'string' };

test('fnv1a32 matches the reference values and picks a palette colour', () => {
  assert.equal(fnv1a32(''), 0x811c9dc5);
  assert.equal(fnv1a32('a'), 0xe40c292c);
  assert.equal(colourOf('MATMUL'), PALETTE[fnv1a32('MATMUL') % PALETTE.length]);
  assert.equal(colourOf('x'), colourOf('x'));
});

test('the mode picks where the colour_by list starts; other tables keep their own', () => {
  assert.deepEqual(colourFields(INSTR, 'framework_name'), INSTR.colour_by);
  assert.deepEqual(colourFields(INSTR, 'opcode'), ['opcode']);
  assert.deepEqual(colourFields({ colour_by: ['name'] }, 'opcode'), ['name']);
  assert.deepEqual(colourFields({}, 'opcode'), []);
});

test('keys: first non-null field; integers named; the track when all are null', () => {
  const labels = { framework_name: ['op.a', null, null], raw_framework_id: [7, 43, null], hlo_name: [null, 'dot', null], opcode: ['MATMUL', 'ADD', null] };
  const f = colourFields(INSTR, 'framework_name');
  assert.equal(colourKey(f, labels, types, 0, 'compute', 'qPE0'), 'op.a');
  assert.equal(colourKey(f, labels, types, 1, 'compute', 'qPE0'), 'raw_framework_id 43');
  assert.equal(colourKey(f, labels, types, 2, 'compute', 'qPE0'), 'compute:qPE0');
  assert.equal(colourKey(colourFields(INSTR, 'opcode'), labels, types, 1, 'compute', 'q'), 'ADD');
  assert.equal(colourKey([], {}, {}, 0, 'semaphore', 'S[1]'), null, 'an empty list: one colour');
  assert.equal(colourOf(null), NEUTRAL);
  assert.equal(colourKey(['track'], {}, {}, 0, 'dma', 'q3'), 'dma:q3');
});

test('modes: every colour_by field once, in order', () => {
  assert.deepEqual(colourModes([INSTR, { colour_by: [] }, { colour_by: ['description', 'opcode'] }]),
    ['framework_name', 'raw_framework_id', 'hlo_name', 'opcode', 'description']);
});

test('heatColour: white-ish at the median, red above, blue below, full at 20 % off', () => {
  assert.equal(heatColour(100, 100), 'hsl(0 75% 96%)');
  assert.equal(heatColour(110, 100), 'hsl(0 75% 73%)');      // half way: 96 - 23
  assert.equal(heatColour(120, 100), 'hsl(0 75% 50%)');
  assert.equal(heatColour(500, 100), 'hsl(0 75% 50%)');      // capped
  assert.equal(heatColour(80, 100), 'hsl(215 75% 50%)');
  assert.equal(heatColour(5, 0), 'hsl(0 75% 96%)');          // no median: neutral
});
