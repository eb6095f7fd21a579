// js.viewer_breakdown: the "Breakdown" section of a system profile's page, in Debian's
// chromium driven by playwright-core against the real `nxprof serve`, on the real PyTorch
// trace tests/data/real-gpu/gpt2_eager.json.gz and on the DDP pair (two ranks). Every
// figure the section shows (the exact value each cell keeps in data-v) equals the one
// /api/profiles/<name>/breakdown answers, entry by entry; each stacked bar's four parts
// have the widths of compute, communication, memory and idle over the window (they fill
// it); the top kernels are the API's in its order, with the rank spread only for several
// ranks. With NXPROF_BREAKDOWN_PNG set, the gpt2_eager page's section is saved there
// (docs/breakdown.png). On a synthesized NeuronCore device profile, the device page's
// engine breakdown (window split, CcOp, DMA, each engine) equals the API's. Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, TEST_DATA, tempDir } from './lib/harness.mjs';
import { SKIP, openPage, settle } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_breakdown: ${SKIP}`);
const REAL = path.join(TEST_DATA, 'real-gpu');
const PROFILES = { gpt2: ['gpt2_eager.json.gz'], ddp: ['ddp_rank0.json.gz', 'ddp_rank1.json.gz'] };

// What the page shows: per table, per entry row, each data-k's data-v.
const shown = (page) => page.evaluate(() => {
  const out = {};
  for (const t of document.querySelectorAll('#system-breakdown table')) {
    out[t.id] = [...t.querySelectorAll('tr')].slice(1).map((tr) => ({
      entry: tr.dataset.entry === undefined ? null : Number(tr.dataset.entry),
      cells: Object.fromEntries([...tr.querySelectorAll('[data-k]')].map((c) => [c.dataset.k, c.dataset.v])),
      bar: [...tr.querySelectorAll('.bd-bar span')].map((s) => parseFloat(s.style.width)),
      name: tr.querySelector('td .cut')?.title ?? null,
    }));
  }
  return out;
});

const s = (v) => (v === null || v === undefined ? '' : String(v));

test('the Breakdown section shows the API\'s figures', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-breakdown-');
  const data = path.join(tmp, 'data');
  for (const [name, files] of Object.entries(PROFILES)) {
    const cap = path.join(tmp, `cap-${name}`);
    fs.mkdirSync(cap);
    for (const f of files) fs.copyFileSync(path.join(REAL, f), path.join(cap, f));
    execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', name], { stdio: 'ignore' });
  }
  const { url, page, pageErrors } = await openPage(t, BIN, data);

  for (const name of Object.keys(PROFILES)) {
    await t.test(name, async () => {
      const api = await (await fetch(`${url}/api/profiles/${name}/breakdown?top=10`)).json();
      assert.ok(api.entries.length > 0);
      await page.goto(`${url}/view/${name}`);
      await settle(page);
      await page.waitForSelector('#bd-kernels', { timeout: 60000 });
      const got = await shown(page);
      const rows = (id) => got[id].filter((r) => r.entry !== null);
      assert.equal(rows('bd-temporal').length, api.entries.length);
      for (const r of rows('bd-temporal')) {
        const tm = api.entries[r.entry].temporal;
        for (const k of ['window_ns', 'compute_ns', 'communication_ns', 'memory_ns', 'idle_ns']) assert.equal(r.cells[k], s(tm[k]), k);
        assert.equal(r.cells.overlap_pct, s(tm.overlap_pct));
        const parts = ['compute_ns', 'communication_ns', 'memory_ns', 'idle_ns'].map((k) => 100 * Number(tm[k]) / Number(tm.window_ns));
        r.bar.forEach((w, i) => assert.ok(Math.abs(w - parts[i]) < 0.01, `bar part ${i}`));
        assert.ok(Math.abs(r.bar.reduce((a, b) => a + b, 0) - 100) < 0.01);
      }
      for (const r of rows('bd-idle')) {
        const i = api.entries[r.entry].idle;
        for (const k of Object.keys(i)) assert.equal(r.cells[k], s(i[k]), k);
      }
      for (const r of rows('bd-launch')) {
        const e = api.entries[r.entry];
        for (const c of ['compute', 'communication', 'memory']) {
          assert.equal(r.cells[`${c}_count`], s(e.classes[c].count));
          assert.equal(r.cells[`${c}_total_ns`], s(e.classes[c].total_ns));
        }
        for (const k of ['median_ns', 'p95_ns', 'max_ns', 'outliers', 'short_kernels', 'verdict']) assert.equal(r.cells[k], s(e.launch[k]), k);
      }
      const xfers = api.entries.flatMap((e, n) => e.transfers.map((x) => ({ n, x })));
      assert.equal((got['bd-transfers'] || []).length, xfers.length);
      (got['bd-transfers'] || []).forEach((r, i) => {
        assert.equal(r.entry, xfers[i].n);
        for (const k of ['count', 'bytes', 'duration_ns', 'gbps']) assert.equal(r.cells[k], s(xfers[i].x[k]), k);
      });
      assert.deepEqual(got['bd-kernels'].map((r) => r.name), api.kernels.map((k) => k.name));
      got['bd-kernels'].forEach((r, i) => {
        for (const k of ['count', 'total_ns', 'mean_ns', 'min_ns', 'max_ns']) assert.equal(r.cells[k], s(api.kernels[i][k]), k);
        assert.equal('rank_min_ns' in r.cells, api.n_ranks > 1);
        if (api.n_ranks > 1) assert.equal(r.cells.rank_max_ns, s(api.kernels[i].rank_max_ns));
      });
      if (name === 'gpt2' && process.env.NXPROF_BREAKDOWN_PNG) {
        await page.locator('#system-breakdown').screenshot({ path: process.env.NXPROF_BREAKDOWN_PNG });
      }
    });
  }
  assert.deepEqual(pageErrors, []);
});

test('a NeuronCore\'s device page shows its engine breakdown', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-engines-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  execFileSync(BIN, ['synth', '--out', cap, '--preset', 'tiny', '--cores', '2'], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'syn'], { stdio: 'ignore' });
  const { url, page, pageErrors } = await openPage(t, BIN, data);
  const api = await (await fetch(`${url}/api/profiles/syn-nd0-nc0/breakdown`)).json();
  assert.equal(api.kind, 'device');
  await page.goto(`${url}/view/syn-nd0-nc0`);
  await settle(page);
  await page.waitForSelector('#bd-engines', { timeout: 60000 });
  const cells = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#bd-device [data-k], #bd-dma [data-k]')].map((c) => [c.dataset.k, c.dataset.v])));
  for (const k of ['window_ns', 'compute_ns', 'communication_ns', 'memory_ns', 'idle_ns', 'overlap_pct', 'cc_count', 'cc_ns', 'dma_count', 'dma_bytes', 'dma_busy_ns', 'dma_gbps']) {
    assert.equal(cells[k], s(api[k]), k);
  }
  const engines = await page.evaluate(() => [...document.querySelectorAll('#bd-engines tr')].slice(1).map((tr) => ({
    engine: tr.cells[0].textContent, ...Object.fromEntries([...tr.querySelectorAll('[data-k]')].map((c) => [c.dataset.k, c.dataset.v])) })));
  assert.deepEqual(engines, api.engines.map((e) => ({ engine: e.engine, count: s(e.count), busy_ns: s(e.busy_ns), idle_ns: s(e.idle_ns) })));
  if (process.env.NXPROF_BREAKDOWN_DEVICE_PNG) await page.locator('#device-breakdown').screenshot({ path: process.env.NXPROF_BREAKDOWN_DEVICE_PNG });
  assert.deepEqual(pageErrors, []);
});
