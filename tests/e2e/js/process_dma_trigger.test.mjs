// process_dma_trigger.test.mjs — Instruction.dma_trigger_start_ts, dma_trigger_end_ts and
// dma_wait_time_ns of `nxprof process` on a tiny synth capture, read back with DuckDB and
// checked row by row against values computed here from the capture bytes
// (tests/e2e/js/lib/nxcapture.mjs decodes them per docs/capture-format.md), by the rule of
// docs/processing.md ("Instruction"):
//   a dma_block record with a trigger (engine != 0xFF, pc != 0xFFFFFFFF) belongs to the
//   latest instruction record of the same trace, pcore, engine and pc dispatched before it
//   (order: start time, then file order), when the block's trigger_ts <= that instruction's
//   end; dma_trigger_start_ts / end_ts = earliest packet start / latest packet end over the
//   instruction's blocks; dma_wait_time_ns = start - earliest trigger_ts of its blocks that
//   got packets, at least 0; all three null otherwise.
// The same values also follow from Flow's DMA_TRIGGER edges and their DmaPacketAggregated rows.
// Also: the hold-back limit (NXPROF_INSTRUCTION_HOLDBACK) lowered to a few rows keeps the
// rows sorted and complete, only loses DMA information, and is reported as a warning.
// The run writes one device profile per trace (docs/architecture.md, "Output layout"); each
// is checked against its own trace alone, and carries its own hold-back warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { findCapture, readTrace } from './lib/nxcapture.mjs';
import { requireBin, tempDir, openDuckDB, profileLayout } from './lib/harness.mjs';

const BIN = requireBin();
const DIR = tempDir('nxprof-dmatrig-');

const CAP = join(DIR, 'cap');
const PROF = join(DIR, 'prof');
const PROF_CAPPED = join(DIR, 'prof-capped');
const LIMIT = 3;
execFileSync(BIN, ['synth', '--preset', 'tiny', '--out', CAP, '--seed', '5']);
const full = spawnSync(BIN, ['process', CAP, '--output-file', PROF], { encoding: 'utf8' });
assert.equal(full.status, 0, full.stderr);
const env = { ...process.env, NXPROF_INSTRUCTION_HOLDBACK: String(LIMIT) };
const capped = spawnSync(BIN, ['process', CAP, '--output-file', PROF_CAPPED], { encoding: 'utf8', env });
assert.equal(capped.status, 0, capped.stderr);
const DEVICES = profileLayout(PROF, CAP).devices, CAPPED_DEVICES = profileLayout(PROF_CAPPED, CAP).devices;

// ---------------------------------------------------------------- expectations from the bytes
const ENGINES = ['tensor', 'vector', 'scalar', 'gpsimd', 'sync'];
const NO_PC = 0xffffffff;
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const before = (a, b) => a.start < b.start || (a.start === b.start && a.seq < b.seq);

const expected = new Map();                         // trace path -> one tuple per instruction record
let triggered = 0, packetsOutsideExecutions = 0;
for (const path of findCapture(CAP).traces) {
  const { records } = readTrace(path);
  const mine = [];
  expected.set(path, mine);
  const instrs = records.filter((r) => r.kind === 1);
  const execs = records.filter((r) => r.kind === 9);
  const agg = new Map(instrs.map((i) => [i, { start: null, end: null, trig: null }]));
  // Blocks of this trace by (pcore, queue, block_id), each with its owner.
  const blocks = new Map();
  for (const b of records.filter((r) => r.kind === 2)) {
    let owner = null;
    if (b.triggerEngine !== 0xff && b.triggerPc !== NO_PC) {
      for (const i of instrs) {
        if (i.pcore !== b.pcore || i.engine !== b.triggerEngine || i.pc !== b.triggerPc || !before(i, b)) continue;
        if (!owner || before(owner, i)) owner = i;
      }
      if (owner && b.start > owner.end) owner = null;   // the latest one no longer runs at trigger_ts
    }
    if (owner) triggered++;
    blocks.set(`${b.pcore}|${b.queue}|${b.blockId}`, { owner, trig: b.start });
  }
  for (const p of records.filter((r) => r.kind === 3)) {
    // The completion rule's execution case (b) never cuts a block short when every packet
    // lies inside an execution record; checked here, as this test assumes it.
    if (!execs.some((x) => x.start <= p.start && p.end <= x.end)) packetsOutsideExecutions++;
    const b = blocks.get(`${p.pcore}|${p.queue}|${p.blockId}`);
    if (!b || !b.owner) continue;
    const a = agg.get(b.owner);
    if (a.start === null || p.start < a.start) a.start = p.start;
    if (a.end === null || p.end > a.end) a.end = p.end;
    if (a.trig === null || b.trig < a.trig) a.trig = b.trig;
  }
  for (const i of instrs) {
    const a = agg.get(i);
    const wait = a.start === null ? null : a.start > a.trig ? a.start - a.trig : 0n;
    mine.push([i.pcore, ENGINES[i.engine], i.pc, i.start, i.end, a.start, a.end, wait].map(String).join('|'));
  }
  mine.sort();
}

// ---------------------------------------------------------------- the profiles
const { sql } = await openDuckDB();
const file = (dir, t) => `read_parquet('${join(dir, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;
const tuples = async (dir) => (await sql(`SELECT pcore_idx, engine, pc, start_ts, end_ts, dma_trigger_start_ts,
    dma_trigger_end_ts, dma_wait_time_ns FROM ${file(dir, 'Instruction')}`))
  .map((r) => [r.pcore_idx, r.engine, r.pc, r.start_ts, r.end_ts, r.dma_trigger_start_ts, r.dma_trigger_end_ts,
    r.dma_wait_time_ns].map(String).join('|'));

test('the capture has triggered DMA blocks whose packets lie inside executions', () => {
  assert.ok(triggered > 20, `triggered blocks: ${triggered}`);
  assert.equal(packetsOutsideExecutions, 0);
});

test('one device profile per trace, in both runs', () => {
  assert.equal(DEVICES.length, 2);
  assert.equal(CAPPED_DEVICES.length, 2);
  assert.deepEqual(DEVICES.map((d) => d.trace).sort(), [...expected.keys()].sort());
});

for (const D of DEVICES) {
  const PROF = D.dir;
  const T = (name) => `${D.name}: ${name}`;

  test(T('every Instruction row has the DMA columns computed from its own trace\'s bytes'), async () => {
    const want = expected.get(D.trace);
    const got = (await tuples(PROF)).sort();
    assert.equal(got.length, want.length);
    for (let k = 0; k < got.length; k++) assert.equal(got[k], want[k], `row ${k} (sorted)`);
  });

  test(T('the DMA columns are filled for some rows, null together, and the wait is >= 0'), async () => {
    const [r] = await sql(`SELECT count(dma_trigger_start_ts) AS filled,
        count(*) FILTER (WHERE (dma_trigger_start_ts IS NULL) <> (dma_trigger_end_ts IS NULL)
                            OR (dma_trigger_start_ts IS NULL) <> (dma_wait_time_ns IS NULL)) AS mixed,
        count(*) FILTER (WHERE dma_wait_time_ns < 0 OR dma_trigger_end_ts < dma_trigger_start_ts) AS bad,
        count(*) FILTER (WHERE dma_wait_time_ns > 0) AS waited
      FROM ${file(PROF, 'Instruction')}`);
    assert.ok(Number(r.filled) > 10, `filled rows: ${r.filled}`);
    assert.ok(Number(r.waited) > 0);
    assert.equal(Number(r.mixed), 0);
    assert.equal(Number(r.bad), 0);
  });

  test(T('the DMA columns agree with Flow DMA_TRIGGER edges and their DmaPacketAggregated rows'), async () => {
    const [r] = await sql(`WITH e AS (SELECT f.in_id, min(a.start_ts) AS s, max(a.end_ts) AS en
          FROM ${file(PROF, 'Flow')} f JOIN ${file(PROF, 'DmaPacketAggregated')} a ON a.id = f.out_id
          WHERE f.dependency_type = 'DMA_TRIGGER' GROUP BY f.in_id)
      SELECT count(*) FILTER (WHERE e.in_id IS NOT NULL) AS edges,
        count(*) FILTER (WHERE i.dma_trigger_start_ts IS DISTINCT FROM e.s
                            OR i.dma_trigger_end_ts IS DISTINCT FROM e.en) AS differ
      FROM ${file(PROF, 'Instruction')} i LEFT JOIN e ON e.in_id = i.id`);
    assert.ok(Number(r.edges) > 10);
    assert.equal(Number(r.differ), 0);
  });
}

const unsorted = async (dir) => Number((await sql(`SELECT count(*) AS n FROM (SELECT start_ts,
    lag(start_ts) OVER (ORDER BY file_row_number) AS prev FROM ${file(dir, 'Instruction')}) WHERE prev > start_ts`))[0].n);

test('Instruction stays sorted by start_ts, with and without the hold-back limit', async () => {
  for (const d of [...DEVICES, ...CAPPED_DEVICES]) assert.equal(await unsorted(d.dir), 0, d.dir);
});

test('no hold-back warning at the default limit', () => {
  assert.doesNotMatch(full.stderr, /hold-back limit/);
});

test(`a hold-back limit of ${LIMIT} rows: same rows, partial DMA columns, one warning per device profile`, async () => {
  const lines = capped.stderr.split('\n').filter((l) => l.includes('hold-back limit'));
  assert.equal(lines.length, DEVICES.length, `one line per device profile: ${capped.stderr}`);
  for (const [k, D] of DEVICES.entries()) {
    const PROF = D.dir, PROF_CAPPED = CAPPED_DEVICES[k].dir;
    // Same rows (ids, times) in both profiles.
    const ids = async (dir) => (await sql(`SELECT id, start_ts, end_ts, pc FROM ${file(dir, 'Instruction')}
        ORDER BY file_row_number`)).map((r) => `${r.id}|${r.start_ts}|${r.end_ts}|${r.pc}`);
    assert.deepEqual(await ids(PROF_CAPPED), await ids(PROF), D.name);
    // A row written early saw a subset of its packets: null, or inside the full interval.
    const [d] = await sql(`SELECT
        count(*) FILTER (WHERE c.dma_trigger_start_ts IS DISTINCT FROM f.dma_trigger_start_ts
                            OR c.dma_trigger_end_ts IS DISTINCT FROM f.dma_trigger_end_ts) AS changed,
        count(*) FILTER (WHERE c.dma_trigger_start_ts IS NOT NULL AND (f.dma_trigger_start_ts IS NULL
                            OR c.dma_trigger_start_ts < f.dma_trigger_start_ts
                            OR c.dma_trigger_end_ts > f.dma_trigger_end_ts)) AS outside
      FROM ${file(PROF_CAPPED, 'Instruction')} c JOIN ${file(PROF, 'Instruction')} f USING (id)`);
    assert.ok(Number(d.changed) > 0, `${D.name}: the limit changed no row: it was not exercised`);
    assert.equal(Number(d.outside), 0);
    // Reported once per device profile, as a Warning row there and on stderr, with the number
    // of rows written early.
    const w = await sql(`SELECT message, category FROM ${file(PROF_CAPPED, 'Warning')}
        WHERE message LIKE '%hold-back limit%'`);
    assert.equal(w.length, 1, D.name);
    assert.equal(w[0].category, 'Missing Data');
    assert.match(w[0].message, new RegExp(`hold-back limit ${LIMIT} rows`));
    const early = Number(/(\d+) rows were written before/.exec(w[0].message)?.[1]);
    assert.ok(early >= Number(d.changed), `${D.name}: ${early} early rows, ${d.changed} changed`);
    assert.ok(lines.some((l) => l.endsWith(w[0].message)), `${D.name}: its warning is on stderr`);
  }
});
