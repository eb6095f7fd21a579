// js.viewer_ranks_heatmap: the Ranks section and the Insights panel of a system profile's
// page, on the two ranks of a real DDP run (tests/data/real-gpu/ddp_rank0.json.gz and
// ddp_rank1.json.gz) processed together, in Debian's chromium driven by playwright-core
// against the real `nxprof serve`. Expected values:
// - each heat map cell (rank x step) holds the duration of that rank's ProfilerStep#N as the
//   raw JSON gives it (dur in µs, three decimals: exact ns) and equals /ranks' durations_ns;
//   one cell per rank and step of the JSON;
// - a cell's colour is red when the rank is slower than the step's median, blue when faster;
// - clicking a cell zooms the timeline to exactly that rank's step: the view starts at its
//   start and ends at its end (/ranks' starts_ns, and start + duration);
// - the Insights panel lists /insights' findings in order (the rule ids).
// NXPROF_SCREENSHOT=<file.png> also saves the page's Ranks section. Skipped (with a
// message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { requireBin, TEST_DATA, tempDir } from './lib/harness.mjs';
import { SKIP, openPage, settle, viewState } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_ranks_heatmap: ${SKIP}`);
const TRACES = [0, 1].map((r) => path.join(TEST_DATA, 'real-gpu', `ddp_rank${r}.json.gz`));

// The exact ns of a µs decimal text with at most three decimals.
const usText = (text) => { const [i, f = ''] = text.split('.'); return BigInt(i) * 1000n + BigInt((f + '000').slice(0, 3)); };

// {rank: {step: duration ns}} from the raw JSON text (the numbers' own digits, not floats).
function stepsFromJSON(file) {
  const text = gunzipSync(fs.readFileSync(file)).toString();
  const rank = JSON.parse(text).distributedInfo.rank;
  const out = {};
  // An event's text up to its args: "cat", "name", ..., "ts", "dur" (Kineto's order).
  const re = /"cat":\s*"user_annotation",\s*"name":\s*"ProfilerStep#(\d+)"[^{}]*?"dur":\s*([0-9.]+)/g;
  for (const m of text.matchAll(re)) out[m[1]] = usText(m[2]);
  return [rank, out];
}

test('Ranks heat map and Insights of the DDP pair', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-heat-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  fs.mkdirSync(cap);
  for (const f of TRACES) fs.copyFileSync(f, path.join(cap, path.basename(f)));
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'ddp'], { stdio: 'ignore' });
  const raw = Object.fromEntries(TRACES.map(stepsFromJSON));

  const { url, page, pageErrors } = await openPage(t, BIN, data);
  const ranks = await (await fetch(`${url}/api/profiles/ddp/ranks`)).json();
  const insights = await (await fetch(`${url}/api/profiles/ddp/insights`)).json();

  await page.goto(`${url}/view/ddp`);
  await settle(page);
  await page.waitForSelector('#system-ranks:not([hidden]) td.heat');
  await page.waitForSelector('#system-insights:not([hidden]) .content > *');

  await t.test('cells equal the raw JSON and /ranks', async () => {
    const cells = await page.$$eval('td.heat', (tds) => tds.map((td) => ({ rank: td.dataset.rank, step: td.dataset.step,
      ns: td.dataset.ns, bg: getComputedStyle(td).backgroundColor })));
    const want = Object.entries(raw).flatMap(([r, steps]) => Object.keys(steps).map((s) => `${r}/${s}`)).sort();
    assert.deepEqual(cells.map((c) => `${c.rank}/${c.step}`).sort(), want);
    for (const c of cells) {
      assert.equal(BigInt(c.ns), raw[c.rank][c.step], `rank ${c.rank} step ${c.step}`);
      const s = ranks.steps.find((x) => String(x.step) === c.step);
      assert.equal(String(s.durations_ns[c.rank]), c.ns);
      const [r, , b] = c.bg.match(/\d+/g).map(Number);
      const ratio = Number(c.ns) / Number(s.median_ns);
      if (ratio > 1.001) assert.ok(r > b, `slower than the median is red: ${c.bg}`);
      if (ratio < 0.999) assert.ok(b > r, `faster than the median is blue: ${c.bg}`);
    }
  });

  await t.test('a click zooms the timeline to that rank\'s step', async () => {
    const cell = page.locator('td.heat[data-rank="1"][data-step="3"]');
    await cell.click();
    await settle(page);
    const st = await viewState(page);
    const s = ranks.steps.find((x) => x.step === 3);
    const start = BigInt(s.starts_ns['1']);
    assert.equal(st.start, String(start));
    assert.equal(st.end, String(start + BigInt(s.durations_ns['1'])));
  });

  await t.test('the Insights panel lists /insights in order', async () => {
    const shown = await page.$$eval('#system-insights li.insight', (li) => li.map((x) => x.dataset.rule));
    assert.deepEqual(shown, insights.insights.map((x) => x.rule));
    assert.ok(shown.length > 0);
  });

  if (process.env.NXPROF_SCREENSHOT) {
    await page.locator('#system-ranks').scrollIntoViewIfNeeded();
    await page.locator('#system-ranks').screenshot({ path: process.env.NXPROF_SCREENSHOT });
  }
  assert.deepEqual(pageErrors, []);
});
