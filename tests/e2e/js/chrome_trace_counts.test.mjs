// chrome_trace_counts.test.mjs — nxprof's streaming Chrome trace reader against an
// independent reading: every real trace in tests/data/chrome-traces is gunzipped
// and parsed whole with JSON.parse here, read with the C reader through the helper
// tests/e2e/tools/chrome_trace_dump, and the two are compared: event count, per-phase
// counts, top-level keys and values, and every event field by field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { TEST_DATA } from './lib/harness.mjs';

const DUMP = process.env.CHROME_TRACE_DUMP;
const DIR = join(TEST_DATA, 'chrome-traces');
const FIXTURES = readdirSync(DIR).filter((f) => /\.json(\.gz)?$/.test(f)).sort();

const dump = (...args) => {
  const out = execFileSync(DUMP, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  const lines = out.trimEnd().split('\n');
  return { summary: JSON.parse(lines.pop()), events: lines.map((l) => JSON.parse(l)) };
};
const parse = (file) => {
  const raw = readFileSync(file);
  return JSON.parse((file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8'));
};
const phaseCounts = (events) => {
  const counts = {};
  for (const e of events) counts[e.ph] = (counts[e.ph] ?? 0) + 1;
  return counts;
};
// JSON.parse rounds ts to a double (about 0.25 us of resolution at 1.7e15 us); the
// reader's exact nanoseconds must agree with it to within that rounding.
const closeUs = (ns, us, what) => {
  const got = Number(BigInt(ns)) / 1000;
  assert.ok(Math.abs(got - us) <= Math.max(1e-9, Math.abs(us) * 2 ** -50), `${what}: ${ns} ns vs ${us} us`);
};

function compareEvent(got, e, i) {
  const at = `event #${i}`;
  assert.equal(got.i, i, at);
  assert.equal(got.ph, e.ph, `${at} ph`);
  for (const k of ['name', 'cat', 'pid', 'tid', 'id', 'bind_id', 's', 'bp']) {
    assert.equal(got[k], e[k] ?? undefined, `${at} ${k}`);
  }
  if (e.ts === undefined) assert.equal(got.ts_ns, undefined, `${at} ts`);
  else closeUs(got.ts_ns, e.ts, `${at} ts`);
  if (e.dur === undefined) assert.equal(got.dur_ns, undefined, `${at} dur`);
  else closeUs(got.dur_ns, e.dur, `${at} dur`);
  assert.deepEqual(got.args, e.args, `${at} args`);
}

function compareAll(got, doc) {
  const events = Array.isArray(doc) ? doc : doc.traceEvents;
  assert.equal(got.summary.form, Array.isArray(doc) ? 'array' : 'object');
  assert.equal(got.summary.events, events.length);
  assert.deepEqual(got.summary.phases, phaseCounts(events));
  const top = Array.isArray(doc) ? [] : Object.entries(doc).filter(([k]) => k !== 'traceEvents');
  assert.deepEqual(got.summary.toplevel, top);
  assert.equal(got.events.length, events.length);
  events.forEach((e, i) => compareEvent(got.events[i], e, i));
}

test('there are real traces to read', () => {
  assert.ok(FIXTURES.length >= 5, `fixtures in ${DIR}`);
});

for (const f of FIXTURES) {
  test(`${f}: counts, phases, top-level values and every event agree with JSON.parse`, () => {
    const path = join(DIR, f);
    const doc = parse(path);
    const summary = dump(path).summary;
    const events = doc.traceEvents;
    assert.equal(summary.events, events.length, 'event count');
    assert.deepEqual(summary.phases, phaseCounts(events), 'per-phase counts');
    compareAll(dump('--events', path), doc);
  });
}

test('plain .json, the bare-array form and a bare array without its ] read the same events', () => {
  const smallest = FIXTURES.map((f) => join(DIR, f))
    .sort((a, b) => readFileSync(a).length - readFileSync(b).length)
    .find((p) => parse(p).traceEvents.length > 20);
  const doc = parse(smallest);
  const tmp = mkdtempSync(join(tmpdir(), 'nx-chrome-'));
  try {
    const plain = join(tmp, 'trace.json');
    writeFileSync(plain, JSON.stringify(doc));
    compareAll(dump('--events', '--chunk', '7', plain), doc);

    const bare = join(tmp, 'bare.json');
    writeFileSync(bare, JSON.stringify(doc.traceEvents));
    compareAll(dump('--events', bare), doc.traceEvents);

    // The format lets a bare array end without ']' (a writer that crashed), even after a comma.
    const open = join(tmp, 'open.json');
    const text = JSON.stringify(doc.traceEvents);
    writeFileSync(open, text.slice(0, -1) + ',\n');
    compareAll(dump('--events', open), doc.traceEvents);

    // ...but not in the middle of an event: the reader must say where it stopped.
    const cut = join(tmp, 'cut.json');
    writeFileSync(cut, text.slice(0, text.indexOf('"ph":', text.length >> 1) + 3));
    const r = spawnSync(DUMP, [cut], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`^${cut.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: byte \\d+: .*truncated`));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
