// js.viewer_memory: the Device Trace Viewer's Memory view in Debian's chromium, driven by
// playwright-core, against the real `nxprof serve` on a device profile of a synthesized
// llama-layer capture as `process` writes it (SbufAllocation, PendingDma and CoreBarriers in
// the device profile, HbmUsageSummaryByType in the system profile). Every expected value
// comes from DuckDB over the profiles' Parquet files:
// - the Memory toggle opens the view, rectangles are painted at their owner's palette
//   colour (FNV-1a, docs/viewer.md "Colours", computed here);
// - hovering a rectangle shows its row's address range (hex) and owner;
// - the HBM panel lists DuckDB's categories, largest first; PendingDma is a lane; each
//   engine's CoreBarriers row right under its Instruction row;
// - zooming the timeline refetches the Memory view for the same window, and the wheel over
//   the Memory view zooms the timeline.
// NXPROF_SCREENSHOT=<file.png> saves a screenshot of the open view (docs/memory-view.png).
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, openPage, settle, viewState } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_memory: ${SKIP}`);

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#bcbd22', '#6b6ecf'];
function fnv(s) { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; } return h >>> 0; }
const rgbOf = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

// The Memory view answered for the window shown and painted.
async function memorySettled(page) {
  await settle(page);
  await page.waitForFunction(() => document.body.dataset.memory === 'done' && window.nxMemory.state.window ===
    `${window.nxViewer.state.start} ${window.nxViewer.state.end} ${window.nxViewer.state.width}`, null, { timeout: 30000 });
}

function memPixel(page, x, y) {
  return page.evaluate(([px, py]) => {
    const c = document.querySelector('#memory-canvas');
    const dpr = c.width / c.getBoundingClientRect().width;
    return [...c.getContext('2d').getImageData(Math.floor(px * dpr), Math.floor(py * dpr), 1, 1).data.slice(0, 3)];
  }, [x, y]);
}

test('Memory view in chromium against nxprof serve', { skip: SKIP, timeout: 280000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-mem-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', '20000', '--seed', '7', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'demo'], { stdio: 'ignore' });
  const DEV = 'demo-nd0-nc0';
  const dir = fs.realpathSync(path.join(data, 'profiles', 'global', `${DEV}@latest`));
  const { sql } = await openDuckDB();
  const sys = fs.realpathSync(path.join(data, 'profiles', 'global', 'demo@latest'));
  const SB = `read_parquet('${path.join(dir, 'SbufAllocation.parquet')}', file_row_number = true)`;
  const ownerSQL = "coalesce(nullif(tensor_name, ''), nullif(hlo_name, ''), nullif(opcode, ''), nullif(queue_name, ''), '')";

  const { url, page, pageErrors } = await openPage(t, BIN, data, { viewport: { width: 1500, height: 950 } });
  await page.goto(`${url}/view/${DEV}`);
  await settle(page);
  assert.equal(await page.locator('#memory-view').isHidden(), true, 'closed until asked for');
  await page.click('#memory-toggle');
  await memorySettled(page);

  await t.test('rectangles painted at their owner colour', async () => {
    const boxes = await page.evaluate(() => window.nxMemory.boxes());
    assert.ok(boxes.length > 10, `rectangles drawn: ${boxes.length}`);
    const wide = boxes.filter((b) => b.w >= 6 && b.h >= 4).slice(0, 6);
    assert.ok(wide.length > 0, 'some rectangles are wide enough to sample');
    for (const b of wide) {
      const [row] = await sql(`SELECT ${ownerSQL} AS owner FROM ${SB} WHERE file_row_number = ${b.ordinal}`);
      assert.equal(b.owner, row.owner);
      const px = await memPixel(page, b.x + 1, b.y + b.h - 1);
      assert.deepEqual(px, rgbOf(PALETTE[fnv(row.owner) % PALETTE.length]), `${row.owner} at its palette colour`);
    }
  });

  await t.test('hover: address range and owner of the row', async () => {
    const [b] = await page.evaluate(() => window.nxMemory.boxes().filter((x) => x.w >= 6 && x.h >= 4).slice(-1));
    const cb = await page.locator('#memory-canvas').boundingBox();
    await page.mouse.move(cb.x + b.x + 2, cb.y + b.y + b.h / 2);
    await page.waitForSelector('#memory-tip:not([hidden])');
    const text = await page.locator('#memory-tip').innerText();
    const [row] = await sql(`SELECT start_address AS a0, end_address AS a1, partition, ${ownerSQL} AS owner FROM ${SB} WHERE file_row_number = ${b.ordinal}`);
    const hex = (v) => `0x${BigInt(v).toString(16)}`;
    assert.ok(text.includes(`${hex(row.a0)}–${hex(row.a1)}`), `address range in "${text}"`);
    assert.ok(text.startsWith(row.owner), `owner ${row.owner} in "${text}"`);
    assert.ok(text.includes(`partitions ${b.partition_lo}`) && b.partition_lo === Number(row.partition));
  });

  await t.test('PendingDma as a lane of the timeline', async () => {
    const st = await viewState(page);
    const lanes = st.rows.filter((r) => r.kind === 'lane').map((r) => r.label);
    assert.ok(lanes.includes('Pending DMA'), `lanes: ${lanes}`);
    assert.equal(lanes.indexOf('Pending DMA'), lanes.indexOf('PSUM usage') + 1, 'after the other device lanes');
  });

  await t.test('CoreBarriers: each engine\'s barriers on the row under its instructions', async () => {
    const engines = (await sql(`SELECT DISTINCT engine_name AS e FROM read_parquet('${path.join(dir, 'CoreBarriers*.parquet')}')`)).map((r) => r.e);
    const instr = new Set((await sql(`SELECT DISTINCT engine AS e FROM read_parquet('${path.join(dir, 'Instruction*.parquet')}')`)).map((r) => r.e.toLowerCase()));
    assert.ok(engines.length > 0, 'the synthesized capture has core barriers');
    const rows = (await viewState(page)).rows.filter((r) => r.kind === 'track' && ['Instruction', 'CoreBarriers'].includes(r.table));
    for (const e of engines) {
      const at = rows.findIndex((r) => r.table === 'CoreBarriers' && r.track === e);
      assert.ok(at >= 0, `a barrier row for ${e}`);
      if (instr.has(e.toLowerCase())) assert.equal(rows[at - 1].track.toLowerCase(), e.toLowerCase(), `${e} under its instructions`);
    }
  });

  await t.test('HBM by category as DuckDB sums it', async () => {
    // The system profile's rows of this device profile's NeuronCore (its Metadata).
    const want = await sql(`SELECT usage_type, sum(usage_bytes)::BIGINT AS b
      FROM read_parquet('${path.join(sys, 'HbmUsageSummaryByType.parquet')}') h,
           read_parquet('${path.join(dir, 'Metadata.parquet')}') m
      WHERE usage_type IS NOT NULL AND h.neuron_device_idx = m.neuron_device_idx AND h.neuroncore_idx = m.neuroncore_idx
      GROUP BY usage_type ORDER BY b DESC, usage_type`);
    assert.ok(want.length > 0, 'the core has HBM rows');
    const names = await page.locator('#memory-hbm tbody td.k').allInnerTexts();
    assert.deepEqual(names, want.map((r) => r.usage_type));
  });

  await t.test('pan and zoom in sync with the timeline', async () => {
    const before = await viewState(page);
    await page.keyboard.press('w');
    await memorySettled(page);
    const zoomed = await viewState(page);
    assert.ok(BigInt(zoomed.end) - BigInt(zoomed.start) < BigInt(before.end) - BigInt(before.start), 'the timeline zoomed in');
    const cb = await page.locator('#memory-canvas').boundingBox();
    await page.mouse.move(cb.x + cb.width / 2, cb.y + cb.height / 2);
    await page.mouse.wheel(0, -400);
    await memorySettled(page);
    const again = await viewState(page);
    assert.ok(BigInt(again.end) - BigInt(again.start) < BigInt(zoomed.end) - BigInt(zoomed.start), 'the wheel over the Memory view zooms the timeline');
    if (process.env.NXPROF_SCREENSHOT) {
      const [x] = await sql(`SELECT min(start_ts)::VARCHAR AS a, max(end_ts)::VARCHAR AS b FROM ${SB}`);
      const pad = (BigInt(x.b) - BigInt(x.a)) / 20n;
      await page.goto(`${url}/view/${DEV}?start=${BigInt(x.a) - pad}&end=${BigInt(x.b) + pad}`);
      await settle(page);
      await page.click('#memory-toggle');
      await memorySettled(page);
      await page.mouse.move(1, 1);
      const b = (await page.evaluate(() => window.nxMemory.boxes().filter((x) => x.w >= 10 && x.h >= 20)))[3];
      if (b) { await page.mouse.move(cb.x + b.x + 4, cb.y + b.y + b.h / 2); await page.waitForSelector('#memory-tip:not([hidden])'); }
      await page.screenshot({ path: process.env.NXPROF_SCREENSHOT });
    }
  });

  assert.deepEqual(pageErrors, []);
});
