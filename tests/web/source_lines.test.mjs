// The Source table's pure rules (web/js/source_lines.js): the order under each column and
// direction (ties by file and line, nulls last), the line label and its search.
import test from 'node:test';
import assert from 'node:assert/strict';
import { sortLines, lineLabel, lineSearch, SOURCE_COLUMNS } from '../../web/js/source_lines.js';

const L = [
  { file: '/k/b.py', line: 5, count: 2, self_ns: 10, total_ns: 30, self_percent: 1 },
  { file: '/k/a.py', line: 9, count: 1, self_ns: 10, total_ns: 10, self_percent: 1 },
  { file: '/k/a.py', line: 3, count: 4, self_ns: 40, total_ns: 40, self_percent: 4 },
  { file: null, line: null, count: 0, self_ns: null, total_ns: 5, self_percent: null },
];
const labels = (ls) => ls.map(lineLabel);

test('self time descending, ties by file then line, nulls last', () => {
  assert.deepEqual(labels(sortLines(L, 'self_ns')), ['a.py:3', 'a.py:9', 'b.py:5', '?:?']);
  assert.deepEqual(labels(sortLines(L, 'self_ns', true)), ['a.py:9', 'b.py:5', 'a.py:3', '?:?']);
});

test('total time and count', () => {
  assert.deepEqual(labels(sortLines(L, 'total_ns')), ['a.py:3', 'b.py:5', 'a.py:9', '?:?']);
  assert.deepEqual(labels(sortLines(L, 'count', true)), ['?:?', 'a.py:9', 'b.py:5', 'a.py:3']);
});

test('by line: file then line number, numerically', () => {
  const more = [...L, { file: '/k/a.py', line: 10, self_ns: 1 }];
  assert.deepEqual(labels(sortLines(more, 'line', true)), ['a.py:3', 'a.py:9', 'a.py:10', 'b.py:5', '?:?']);
  assert.deepEqual(labels(sortLines(more, 'line')), ['?:?', 'b.py:5', 'a.py:10', 'a.py:9', 'a.py:3']);
});

test('the input is left as it was; the search of a line', () => {
  const before = JSON.stringify(L);
  sortLines(L, 'self_ns');
  assert.equal(JSON.stringify(L), before);
  assert.deepEqual(lineSearch(L[0]), { field: 'nki_source_location', q: 'b.py:5', match: 'exact' });
  assert.ok(SOURCE_COLUMNS.every((c) => typeof c.key === 'string' && c.label));
});
