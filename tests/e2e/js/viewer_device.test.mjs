// js.viewer_device: the Device Trace Viewer's tools in Debian's chromium, driven by
// playwright-core, against the real `nxprof serve` on a device profile of a synthesized
// llama-layer capture. Every expected value comes from DuckDB over the profile's Parquet
// files (tests/e2e/js/lib/browser.mjs has the track rule as SQL), never from the viewer's code:
// - opcodes drawn inside wide instruction blocks; the colour legend: colour by opcode gives
//   every instruction the palette colour of its opcode (FNV-1a, docs/viewer.md), the mode
//   stays in the URL;
// - an instruction's dependencies (Flow: predecessors and successors, DMA blocks and
//   instructions) listed in Event Details, drawn, and "go to" selects one;
// - search by opcode with next/previous over every instruction, "k of N";
// - an area selection over some engines gives, per opcode, the count and the time clipped
//   to the area that DuckDB computes from every instruction of those engines; by track too;
//   Esc clears it;
// - the time axis stays on top while the tracks scroll; group headers collapse and expand;
// - the side panel never breaks a word (TENSOR_TENSOR stays whole);
// - Export is disabled with no table chosen and confirms the file it downloaded;
// - a copy of the profile with a damaged DmaPacket file draws every other table and shows
//   the error on the DmaPacket rows.
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, TRACK_SQL, GUTTER, openPage, settle, viewState, paintedRows, pixel } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_device: ${SKIP}`);

// FNV-1a 32-bit and the 20-colour palette of docs/viewer.md "Colours".
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#bcbd22', '#6b6ecf'];
function fnv(s) { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; } return h >>> 0; }
const rgbOf = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

test('Device Trace Viewer tools in chromium against nxprof serve', { skip: SKIP, timeout: 280000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-dev-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', '20000', '--seed', '7', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'demo'], { stdio: 'ignore' });
  const DEV = 'demo-nd0-nc0';
  const globalDir = path.join(data, 'profiles', 'global'), dir = path.join(globalDir, `${DEV}@latest`);
  const { sql } = await openDuckDB();
  const T = (table) => `read_parquet('${path.join(dir, `${table}.parquet`)}', file_row_number = true)`;
  assert.ok(fs.existsSync(path.join(dir, 'Instruction.parquet')), 'one Instruction file: ordinal = row number');

  const { url, page, pageErrors } = await openPage(t, BIN, data, { viewport: { width: 1500, height: 950 }, downloads: true });
  const box = () => page.locator('#timeline').boundingBox();
  const open = async (q = '') => { await page.goto(`${url}/view/${DEV}${q}`); await settle(page); };

  // An instruction with a predecessor and a successor among Flow's rows.
  const [pick] = await sql(`SELECT file_row_number AS o, id, start_ts::VARCHAR AS s, end_ts::VARCHAR AS e FROM ${T('Instruction')}
    WHERE id IN (SELECT out_id FROM ${T('Flow')} WHERE out_table = 'instruction') AND id IN (SELECT in_id FROM ${T('Flow')} WHERE in_table = 'instruction')
    ORDER BY duration_ns DESC LIMIT 1`);
  assert.ok(pick, 'the capture has instruction dependencies');

  await t.test('opcodes inside wide blocks; colour by opcode uses the palette colour of each opcode', async () => {
    const pad = 40000n;
    await open(`?start=${BigInt(pick.s) - pad}&end=${BigInt(pick.e) + pad}`);
    let st = await viewState(page);
    const opcodes = new Set((await sql(`SELECT DISTINCT opcode FROM ${T('Instruction')}`)).map((r) => r.opcode));
    const named = st.names.filter((n) => n.table === 'Instruction');
    assert.ok(named.length > 0 && named.every((n) => opcodes.has(n.name)), `opcodes written in blocks: ${named.map((n) => n.text)}`);
    await page.selectOption('#colour-mode', 'opcode');
    await settle(page);
    st = await viewState(page);
    assert.equal(new URL(page.url()).searchParams.get('colour'), 'opcode');
    const wide = await page.evaluate(() => window.nxViewer.events((e) => e.table === 'Instruction').filter((e) => e.w >= 12 && e.x > 200));
    assert.ok(wide.length > 0, 'wide instruction blocks');
    for (const ev of wide.slice(0, 5)) {
      const [{ opcode }] = await sql(`SELECT opcode FROM ${T('Instruction')} WHERE file_row_number = ${ev.ordinal}`);
      const px = await pixel(page, ev.x + ev.w - 3, ev.y + 2);
      assert.deepEqual(px, rgbOf(PALETTE[fnv(opcode) % PALETTE.length]), `${opcode} at its palette colour`);
      assert.ok((await page.locator('#legend').innerText()).includes(opcode), `the legend lists ${opcode}`);
    }
  });

  await t.test('dependencies from Flow: listed, drawn, go to', async () => {
    const ends = async (side, other) => sql(`SELECT CASE WHEN f.${other}_table = 'instruction' THEN 'Instruction' ELSE 'DmaPacketAggregated' END AS tb,
        coalesce(i.file_row_number, d.file_row_number) AS o FROM ${T('Flow')} f
        LEFT JOIN ${T('Instruction')} i ON f.${other}_table = 'instruction' AND i.id = f.${other}_id
        LEFT JOIN ${T('DmaPacketAggregated')} d ON f.${other}_table = 'dma_block' AND d.id = f.${other}_id
        WHERE f.${side}_table = 'instruction' AND f.${side}_id = ${pick.id} ORDER BY tb, o`);
    const preds = await ends('out', 'in'), succs = await ends('in', 'out');
    const pad = 20000n;
    await open(`?start=${BigInt(pick.s) - pad}&end=${BigInt(pick.e) + pad}&event=Instruction:${pick.o}`);
    await page.waitForFunction(() => window.nxViewer.state.flows, null, { timeout: 15000 });
    const fl = (await viewState(page)).flows;
    const norm = (l) => l.map((r) => `${r.table}:${r.ordinal}`).sort();
    assert.deepEqual(norm(fl.predecessors), norm(preds.map((r) => ({ table: r.tb, ordinal: Number(r.o) }))), 'predecessors');
    assert.deepEqual(norm(fl.successors), norm(succs.map((r) => ({ table: r.tb, ordinal: Number(r.o) }))), 'successors');
    await page.waitForFunction((n) => document.querySelectorAll('#details ul.flows a').length === n, preds.length + succs.length, { timeout: 10000 });
    // an arrow: the predecessors' colour (#7c3aed) somewhere on the canvas
    const purple = await page.evaluate(() => {
      const c = document.querySelector('#timeline'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 124) < 20 && Math.abs(d[i + 1] - 58) < 20 && Math.abs(d[i + 2] - 237) < 20) n++;
      return n;
    });
    assert.ok(purple > 10, `the dependency arrows are drawn (${purple} px)`);
    await page.locator('#details ul.flows.pred a').first().click();
    const first = fl.predecessors[0];
    await page.waitForFunction((o) => window.nxViewer.state.sel && window.nxViewer.state.sel.ordinal === o, first.ordinal, { timeout: 10000 });
    assert.equal(new URL(page.url()).searchParams.get('event'), `${first.table}:${first.ordinal}`);
  });

  await t.test('search by opcode: next and previous over every instruction', async () => {
    // Every timeline table with an opcode field is searched, in drawing order: Instruction, then SbufAllocation.
    const m = await sql(`SELECT o FROM (
        SELECT start_ts, 0 AS t, file_row_number AS o FROM ${T('Instruction')} WHERE contains(lower(opcode), 'matmul')
        UNION ALL SELECT start_ts, 1, file_row_number FROM ${T('SbufAllocation')} WHERE contains(lower(opcode), 'matmul'))
      ORDER BY start_ts, t, o`);
    await open();
    await page.selectOption('#search-field', 'opcode');
    await page.fill('#search-q', 'matmul');
    for (const [key, k] of [['Enter', 1], ['Enter', 2], ['Shift+Enter', 1]]) {
      await page.press('#search-q', key);
      await page.waitForFunction((w) => document.querySelector('#search-count').textContent === w, `${k} of ${m.length.toLocaleString('en-US')}`, { timeout: 15000 });
      assert.equal((await viewState(page)).sel.ordinal, Number(m[k - 1].o), `match ${k}`);
    }
  });

  await t.test('area aggregate over engines equals DuckDB; by track; Esc clears', async () => {
    await open();
    await page.keyboard.press('w'); await page.keyboard.press('w');
    await settle(page);
    const st = await viewState(page);
    const rows = st.rows.filter((r) => r.kind === 'track' && r.table === 'Instruction');
    const b = await box();
    await page.keyboard.down('Shift');
    await page.mouse.move(b.x + GUTTER + 150, b.y + rows[1].y + 3);
    await page.mouse.down();
    await page.mouse.move(b.x + GUTTER + 900, b.y + rows[rows.length - 1].y + 5, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction(() => window.nxViewer.state.aggregate, null, { timeout: 20000 });
    const { area, aggregate } = await viewState(page);
    const tracks = rows.slice(1).map((r) => r.track);
    assert.deepEqual(area.tracks, tracks.map((x) => `Instruction:${x}`));
    const where = `end_ts >= ${area.start} AND start_ts <= ${area.end} AND ${TRACK_SQL.Instruction} IN (${tracks.map((x) => `'${x}'`).join(',')})`;
    const clip = `sum(least(end_ts, ${area.end}) - greatest(start_ts, ${area.start}))::BIGINT`;
    const want = await sql(`SELECT opcode AS k, count(*) AS c, ${clip} AS tot FROM ${T('Instruction')} WHERE ${where} GROUP BY 1 ORDER BY tot DESC, c DESC, k ASC NULLS LAST`);
    const got = aggregate.tables.find((x) => x.table === 'Instruction');
    assert.equal(Number(got.events), want.reduce((a, r) => a + Number(r.c), 0));
    assert.deepEqual(got.groups.map((g) => [g.key, Number(g.count), Number(g.total_ns)]), want.slice(0, got.groups.length).map((w) => [w.k, Number(w.c), Number(w.tot)]),
      'per opcode: count and time clipped to the area, busiest first');
    await page.selectOption('#selection select[data-table=Instruction]', 'track');
    await page.waitForFunction(() => window.nxViewer.state.aggregate && window.nxViewer.state.aggregate.tables[0].by === 'track', null, { timeout: 20000 });
    const byTrack = await sql(`SELECT ${TRACK_SQL.Instruction} AS k, count(*) AS c, ${clip} AS tot FROM ${T('Instruction')} WHERE ${where} GROUP BY 1 ORDER BY tot DESC, c DESC, k ASC NULLS LAST`);
    const g2 = (await viewState(page)).aggregate.tables[0].groups;
    assert.deepEqual(g2.map((g) => [g.key, Number(g.total_ns)]), byTrack.map((w) => [w.k, Number(w.tot)]), 'per engine');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => window.nxViewer.state.area === null);
    assert.match(await page.locator('#selection').innerText(), /Shift-drag/);
  });

  await t.test('the axis stays on top while the tracks scroll; groups collapse', async () => {
    await open();
    const before = await viewState(page);
    const by = await page.evaluate(() => { const s = document.querySelector('#timeline-scroll'); s.scrollTop = 150; return s.scrollTop; });
    assert.ok(by > 20, `the tracks scroll (${by} px)`);
    await settle(page);
    const after = await viewState(page);
    assert.equal(after.rows[0].kind, 'axis');
    assert.equal(after.rows[0].y, 0, 'the axis is still at the top');
    const firstTrack = (s) => s.rows.find((r) => r.kind === 'track');
    assert.equal(firstTrack(after).y, firstTrack(before).y - by, 'the tracks moved up');
    assert.deepEqual(await pixel(page, 5, 10), [240, 242, 245], 'axis background at the top');
    await page.evaluate(() => { document.querySelector('#timeline-scroll').scrollTop = 0; });
    await settle(page);
    const g = (await viewState(page)).rows.find((r) => r.kind === 'group' && r.label === 'DMA queues');
    const b = await box();
    const n0 = (await viewState(page)).rows.filter((r) => r.kind === 'track').length;
    await page.mouse.click(b.x + 20, b.y + g.y + g.h / 2);
    await page.waitForFunction((n) => window.nxViewer.state.rows.filter((r) => r.kind === 'track').length < n, n0);
    const closed = await viewState(page);
    assert.ok(!closed.rows.some((r) => r.table === 'DmaPacket' || r.table === 'DmaPacketAggregated'), 'its tracks are hidden');
    assert.ok(closed.rows.find((r) => r.label === 'DMA queues').collapsed);
    await page.mouse.click(b.x + 20, b.y + g.y + g.h / 2);
    await page.waitForFunction((n) => window.nxViewer.state.rows.filter((r) => r.kind === 'track').length === n, n0);
  });

  await t.test('the side panel keeps words whole', async () => {
    const cells = await page.locator('#side td').evaluateAll((tds) => tds.filter((td) => /^[A-Z_]{10,}$/.test(td.innerText.trim()))
      .map((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        return { text: td.innerText.trim(), lines: tops.size, wb: getComputedStyle(td).wordBreak, ow: getComputedStyle(td).overflowWrap };
      }));
    assert.ok(cells.length > 0, 'long opcode names in the panel');
    for (const c of cells) {
      assert.equal(c.wb, 'keep-all', c.text);
      assert.equal(c.ow, 'normal', c.text);
      assert.ok(c.lines <= 1, `${c.text} on one line`);
    }
  });

  await t.test('Export: Export disabled with nothing chosen, a confirmation names the file', async () => {
    await open();
    await page.click('#export-open');
    await page.locator('#export-dialog').waitFor({ state: 'visible' });
    for (const cb of await page.locator('#export-dialog input[name=table]:checked').all()) await cb.click();
    assert.ok(await page.locator('#export-go').isDisabled(), 'nothing chosen: Export disabled');
    await page.locator('#export-dialog input[value=Instruction]').click();
    assert.ok(!(await page.locator('#export-go').isDisabled()));
    const dl = page.waitForEvent('download');
    await page.click('#export-go');
    const d = await dl;
    const note = page.locator('.notice.ok', { hasText: 'Downloaded' });
    await note.waitFor({ timeout: 15000 });
    const rows = (await sql(`SELECT count(*) AS n FROM ${T('Instruction')}`))[0].n;
    assert.ok((await note.innerText()).includes(d.suggestedFilename()), 'the confirmation names the file');
    assert.match(await note.innerText(), /\(\d[\d,]* rows\)/);
    assert.ok(Number(rows) > 0);
  });

  await t.test('a damaged table: its rows show the error, the others draw', async () => {
    const bad = path.join(globalDir, 'damaged@latest');
    fs.cpSync(dir, bad, { recursive: true, dereference: true });
    const f = path.join(bad, 'DmaPacket.parquet');
    fs.truncateSync(f, Math.floor(fs.statSync(f).size / 2));
    const tr = await (await fetch(`${url}/api/profiles/damaged/tracks`)).json();
    assert.deepEqual(tr.errors.map((e) => e.table), ['DmaPacket'], '/tracks lists the damaged table');
    assert.ok(tr.groups.find((g) => g.group === 'compute').tracks.length > 0, '... and answers the others');
    await page.goto(`${url}/view/damaged`);
    await settle(page);
    const st = await viewState(page);
    assert.match(st.errors.DmaPacket || '', /DmaPacket/, `the error names the table's file: ${JSON.stringify(st.errors)}`);
    const painted = await paintedRows(page);
    for (const r of painted.filter((x) => x.table === 'Instruction')) assert.ok(r.painted > 0, `Instruction ${r.track} still drawn`);
    const dmaRow = painted.find((x) => x.table === 'DmaPacket');
    assert.ok(dmaRow, 'the DmaPacket rows are laid out');
    const reds = [];
    for (let x = GUTTER + 6; x < GUTTER + 120; x++) reds.push(await pixel(page, x, dmaRow.y));
    assert.ok(reds.some(([r, g, b]) => r > 150 && g < 90 && b < 90), 'the error text on its row');
    assert.match(await page.locator('#selection').innerText(), /DmaPacket[\s\S]*⚠/);
  });

  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
