// annotations.test.mjs — web/js/annotations.js: the store's markers and regions to the
// saved document and back (absolute times exact beyond 2^53, as decimal strings; optional
// members kept, empty ones left out), sorting, merging an import, the import's shape
// checks and the default region names. Expectations are written out by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toDocument, fromDocument, mergeDocuments, parseImport, regionOf, nextRegionName } from '../../web/js/annotations.js';

const ORIGIN = 1700000000000000000n;
const absOf = (t) => ORIGIN + BigInt(Math.round(t));
const relOf = (abs) => Number(BigInt(abs) - ORIGIN);

test('the store to the document: absolute decimal strings, optional members only when set', () => {
  const doc = toDocument([{ t: 5, label: 'a', colour: '#abc' }, { t: 7, label: '', track: 'T:1' }],
    [{ t0: 10, t1: 20, name: 'r', note: '' }], absOf);
  assert.deepEqual(doc, {
    version: 1,
    markers: [{ time_ns: '1700000000000000005', label: 'a', colour: '#abc' }, { time_ns: '1700000000000000007', label: '', track: 'T:1' }],
    regions: [{ start_ns: '1700000000000000010', end_ns: '1700000000000000020', name: 'r' }],
  });
});

test('the document to the store: offsets, sorted, numbers and strings alike', () => {
  const got = fromDocument({
    version: 1,
    markers: [{ time_ns: '1700000000000000090', label: 'late' }, { time_ns: 1700000000000000000n + 3n, label: 'early', colour: '#fff' }],
    regions: [{ start_ns: '1700000000000000050', end_ns: '1700000000000000060', name: 'b' },
      { start_ns: '1700000000000000010', end_ns: '1700000000000000099', name: 'a', note: 'n' }],
  }, relOf);
  assert.deepEqual(got.markers.map((m) => [m.t, m.label, m.colour]), [[3, 'early', '#fff'], [90, 'late', undefined]]);
  assert.deepEqual(got.regions.map((r) => [r.t0, r.t1, r.name, r.note]), [[10, 99, 'a', 'n'], [50, 60, 'b', undefined]]);
  assert.deepEqual(fromDocument({ version: 1 }, relOf), { markers: [], regions: [] });
});

test('a round trip keeps every member', () => {
  const doc = { version: 1, markers: [{ time_ns: '1700000000000000001', label: 'x', colour: '#123456', track: 'Instruction:pe' }],
    regions: [{ start_ns: '1700000000000000002', end_ns: '1700000000000000003', name: 'y', colour: '#000', note: 'z' }] };
  const { markers, regions } = fromDocument(doc, relOf);
  assert.deepEqual(toDocument(markers, regions, absOf), doc);
});

test('an import is added after what is there, or replaces it', () => {
  const a = { version: 1, markers: [{ time_ns: '1', label: 'a' }], regions: [] };
  const b = { version: 1, markers: [{ time_ns: '2', label: 'b' }], regions: [{ start_ns: '1', end_ns: '2', name: 'r' }] };
  assert.deepEqual(mergeDocuments(a, b, false).markers.map((m) => m.label), ['a', 'b']);
  assert.equal(mergeDocuments(a, b, false).regions.length, 1);
  assert.deepEqual(mergeDocuments(a, b, true).markers.map((m) => m.label), ['b']);
});

test('parseImport refuses what is not a document of this version', () => {
  assert.throws(() => parseImport('{'), /not JSON/);
  assert.throws(() => parseImport('[]'), /not a JSON object/);
  assert.throws(() => parseImport('{"version":2}'), /version 2 is not 1/);
  assert.throws(() => parseImport('{"version":1,"markers":{}}'), /"markers" is not an array/);
  assert.deepEqual(parseImport('{"version":1,"regions":[]}'), { version: 1, regions: [] });
});

test('regions: ordered ends, and the next default name', () => {
  assert.deepEqual(regionOf(9, 3, 'n'), { t0: 3, t1: 9, name: 'n' });
  assert.equal(nextRegionName([]), 'Region 1');
  assert.equal(nextRegionName([{ name: 'Region 4' }, { name: 'warm-up' }]), 'Region 5');
  assert.equal(nextRegionName([{ name: 'a' }, { name: 'b' }]), 'Region 3');
});
