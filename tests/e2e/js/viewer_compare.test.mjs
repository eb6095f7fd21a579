// js.viewer_compare: the Compare page in Debian's chromium, driven by playwright-core,
// against the real `nxprof serve`, on the two ranks of the real DDP run
// (tests/data/real-gpu/ddp_rank0.json.gz and ddp_rank1.json.gz, processed one profile each):
// - the profile list: checking two profiles enables "Compare", which opens
//   /compare?a=<first>&b=<second>;
// - the table's rows are the API's (/api/diff, every group), in its order, and their
//   counts and times are those DuckDB computes from each profile's SystemProfileEvents
//   (GROUP BY name less the profiler's rows, FULL OUTER JOIN); the totals row likewise;
// - added and removed groups are marked (row class and status);
// - a click on a column header sorts the rows by it, again the other way; the URL keeps it;
// - the device and step totals above the table: /api/diff's "devices" and "steps", the
//   steps' durations those of each profile's host ProfilerStep#N rows (DuckDB), GPU 0's
//   busy times the API's;
// - steps: the ProfilerStep#N both profiles have are offered (DuckDB: the host row, cat
//   user_annotation, of each name), the chosen step's links open each profile at a window of one width
//   starting at its step; choosing another step moves both (B's link with it); a click on
//   a group links both at one window around its first event from that step (DuckDB);
// - the two timelines stacked: aligned at ProfilerStep#2 (each profile's origin its host
//   step row's start, DuckDB), both loading one window relative to it; a wheel over A's
//   plot zooms both, a drag over B's pans both; a click on a group realigns both at its
//   first event from the step (DuckDB);
// - "Normalise per step" reloads the table in the API's normalised order with the
//   per-step columns;
// - the key box reloads the table by another key (kernel), as the API answers it.
// The page is screenshotted to NXPROF_SCREENSHOTS (docs/compare-viewer.png: the stacked
// timelines aligned at ProfilerStep#2).
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, openPage } from './lib/browser.mjs';
import { fmtNs } from '../../../web/js/format.js';

if (SKIP) console.log(`# SKIP js.viewer_compare: ${SKIP}`);
const PROFILER = "(name LIKE 'ProfilerStep#%' OR regexp_matches(name, '^PyTorch Profiler \\(.*\\)$'))";

test('Compare page in chromium against nxprof serve', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-cmp-');
  const data = path.join(tmp, 'data');
  for (const r of [0, 1]) {
    const cap = path.join(tmp, `cap${r}`);
    fs.mkdirSync(cap);
    fs.copyFileSync(path.join(TEST_DATA, 'real-gpu', `ddp_rank${r}.json.gz`), path.join(cap, `ddp_rank${r}.json.gz`));
    execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', `rank${r}`], { stdio: 'ignore' });
  }
  const events = (p) => `read_parquet('${path.join(data, 'profiles', 'global', `${p}@latest`, 'SystemProfileEvents*.parquet')}')`;
  const { sql } = await openDuckDB();
  const side = (p) => `SELECT name AS k, count(*) AS c, coalesce(sum(duration_ns), 0) AS t FROM ${events(p)} WHERE NOT ${PROFILER} GROUP BY k`;
  const want = new Map((await sql(`SELECT coalesce(a.k, b.k) AS k, coalesce(a.c, 0)::VARCHAR AS ca, coalesce(b.c, 0)::VARCHAR AS cb,
      coalesce(a.t, 0)::VARCHAR AS ta, coalesce(b.t, 0)::VARCHAR AS tb
      FROM (${side('rank0')}) a FULL OUTER JOIN (${side('rank1')}) b ON a.k = b.k`))
    .map((r) => [r.k, [Number(r.ca), Number(r.cb), Number(r.ta), Number(r.tb)]]));

  const { url, page, pageErrors } = await openPage(t, BIN, data);
  const apiDiff = async (q) => (await fetch(`${url}/api/diff?${q}`)).json();
  const tableRows = () => page.locator('#compare-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    cls: tr.className, cells: [...tr.children].map((td) => td.innerText.trim()), titles: [...tr.children].map((td) => td.title) })));

  await t.test('two checked profiles open the Compare page', async () => {
    await page.goto(`${url}/`);
    await page.locator('#profiles input.pick').first().waitFor({ timeout: 10000 });
    assert.equal(await page.locator('#compare-go').isDisabled(), true, 'nothing checked: no compare');
    await page.locator('#profiles input.pick[value="rank0"]').check();
    assert.equal(await page.locator('#compare-go').isDisabled(), true, 'one checked: no compare');
    await page.locator('#profiles input.pick[value="rank1"]').check();
    await page.locator('#compare-go').click();
    await page.waitForURL(/\/compare\?a=rank0&b=rank1/);
    await page.locator('#compare-table tbody tr').first().waitFor({ timeout: 15000 });
  });

  await t.test('the rows are the API answer and DuckDB\'s figures, added and removed marked', async () => {
    const api = await apiDiff('a=rank0&b=rank1&limit=0');
    const rows = await tableRows();
    assert.equal(rows.length, api.groups, 'a row per group');
    assert.equal(api.groups, want.size, 'the groups DuckDB finds');
    rows.forEach((r, i) => {
      const o = api.ops[i];
      assert.equal(r.cells[0], o.name, 'the API\'s order');
      assert.equal(r.cells[1], o.status);
      assert.equal(r.cls, `row-${o.status}`);
      assert.deepEqual([o.count_a, o.count_b, o.total_ns_a, o.total_ns_b], want.get(o.name), `${o.name}: DuckDB's figures`);
      assert.equal(r.cells[2], o.count_a.toLocaleString('en-US'));
      assert.equal(r.titles[4], `${o.total_ns_a} ns`, 'exact time on hover');
      assert.equal(r.titles[6], `${o.delta_ns} ns`);
      assert.equal(r.cells[7], o.ratio === null ? '–' : `${o.ratio.toFixed(3)}×`);
    });
    assert.ok(rows.some((r) => r.cls === 'row-added'), 'rank 1 has a group rank 0 lacks, marked');
    const foot = await page.locator('#compare-table tfoot td').evaluateAll((tds) => tds.map((td) => td.title));
    const sum = (j) => [...want.values()].reduce((a, v) => a + v[j], 0);
    assert.equal(foot[4], `${sum(2)} ns`, 'total A');
    assert.equal(foot[5], `${sum(3)} ns`, 'total B');
    const shots = process.env.NXPROF_SCREENSHOTS || tmp;
    await page.screenshot({ path: path.join(shots, 'compare-viewer-table.png') });
  });

  await t.test('device and step totals side by side above the table', async () => {
    const api = await apiDiff('a=rank0&b=rank1&limit=1');
    const cells = (id) => page.locator(`#${id} tbody tr`).evaluateAll((trs) => trs.map((tr) =>
      [...tr.children].map((td) => ({ text: td.innerText.trim(), title: td.title }))));
    const devs = await cells('compare-devices');
    assert.deepEqual(devs.map((r) => r[0].text), api.devices.map((d) => d.device), 'a row per device');
    assert.deepEqual(devs.map((r) => [r[2].title, r[3].title, r[4].title]),
      api.devices.map((d) => [`${d.busy_ns_a} ns`, `${d.busy_ns_b} ns`, `${d.busy_ns_delta} ns`]), 'busy A, B and delta');
    const host = async (p) => new Map((await sql(`SELECT name, duration_ns::VARCHAR AS d FROM ${events(p)}
        WHERE name LIKE 'ProfilerStep#%' AND json_extract_string(extra_attributes_json, '$.cat') = 'user_annotation'`))
      .map((r) => [r.name, r.d]));
    const [ha, hb] = [await host('rank0'), await host('rank1')];
    const steps = await cells('compare-steps');
    assert.deepEqual(steps.map((r) => r[0].text), [...ha.keys()].sort(), 'every step of both, by number');
    for (const r of steps) {
      assert.equal(r[2].title, `${ha.get(r[0].text)} ns`, `${r[0].text}: A's duration (DuckDB)`);
      assert.equal(r[3].title, `${hb.get(r[0].text)} ns`, `${r[0].text}: B's duration (DuckDB)`);
      assert.equal(r[4].title, `${BigInt(hb.get(r[0].text)) - BigInt(ha.get(r[0].text))} ns`, 'the difference');
    }
    const box = await page.locator('#compare-totals').boundingBox();
    const table = await page.locator('#compare-table').boundingBox();
    assert.ok(box.y + box.height <= table.y, 'the totals are above the groups');
  });

  await t.test('a header click sorts by that column, a second the other way', async () => {
    await page.locator('#compare-table th[data-col="count_a"]').click();
    let counts = (await tableRows()).map((r) => Number(r.cells[2].replaceAll(',', '')));
    assert.deepEqual(counts, [...counts].sort((x, y) => y - x), 'count A descending');
    assert.match(page.url(), /sort=count_a(&|$)/);
    await page.locator('#compare-table th[data-col="count_a"]').click();
    counts = (await tableRows()).map((r) => Number(r.cells[2].replaceAll(',', '')));
    assert.deepEqual(counts, [...counts].sort((x, y) => x - y), 'count A ascending');
    assert.equal(new URL(page.url()).searchParams.get('sort'), 'count_a:asc');
  });

  await t.test('steps: both profiles linked at one window from the chosen step', async () => {
    const stepSql = (p) => `SELECT name, start_ts::VARCHAR AS s, end_ts::VARCHAR AS e FROM (SELECT *, row_number() OVER
        (PARTITION BY name ORDER BY start_ts, file_row_number) AS rn FROM read_parquet('${path.join(data, 'profiles', 'global', `${p}@latest`, 'SystemProfileEvents*.parquet')}', file_row_number = true)
        WHERE name LIKE 'ProfilerStep#%' AND json_extract_string(extra_attributes_json, '$.cat') = 'user_annotation') WHERE rn = 1 ORDER BY start_ts`;
    const [sa, sb] = [await sql(stepSql('rank0')), await sql(stepSql('rank1'))];
    const inB = new Map(sb.map((r) => [r.name, r]));
    const both = sa.filter((r) => inB.has(r.name));
    assert.ok(both.length >= 2, 'the DDP ranks share their steps');
    await page.goto(`${url}/compare?a=rank0&b=rank1`);
    await page.locator('#compare-align:not([hidden])').waitFor({ timeout: 15000 });
    assert.deepEqual(await page.locator('#compare-step option').allInnerTexts(), both.map((r) => r.name));
    const expectLinks = async (step) => {
      const a = both.find((r) => r.name === step), b = inB.get(step);
      const da = BigInt(a.e) - BigInt(a.s), db = BigInt(b.e) - BigInt(b.s);
      const w = da > db ? da : db;
      assert.equal(await page.locator('#compare-open-a').getAttribute('href'), `/view/rank0?start=${a.s}&end=${BigInt(a.s) + w}`);
      assert.equal(await page.locator('#compare-open-b').getAttribute('href'), `/view/rank1?start=${b.s}&end=${BigInt(b.s) + w}`);
    };
    await expectLinks(both[0].name);
    const before = await page.locator('#compare-open-b').getAttribute('href');
    await page.locator('#compare-step').selectOption(both[1].name);
    await expectLinks(both[1].name);
    assert.notEqual(await page.locator('#compare-open-b').getAttribute('href'), before, 'another step moves B');
    assert.equal(new URL(page.url()).searchParams.get('step'), both[1].name);

    // A click on a group: both profiles at one window around its first event from the step.
    const firstAfter = async (p, from) => (await sql(`SELECT start_ts::VARCHAR AS s, end_ts::VARCHAR AS e FROM read_parquet('${path.join(data, 'profiles', 'global', `${p}@latest`, 'SystemProfileEvents*.parquet')}', file_row_number = true)
        WHERE name = 'aten::mm' AND start_ts >= ${from} ORDER BY start_ts, file_row_number LIMIT 1`))[0];
    const [ma, mb] = [await firstAfter('rank0', both[1].s), await firstAfter('rank1', inB.get(both[1].name).s)];
    await page.locator('#compare-table tr[data-key="aten::mm"]').click();
    await page.locator('#compare-at-a').waitFor({ timeout: 15000 });
    const da = BigInt(ma.e) - BigInt(ma.s), db = BigInt(mb.e) - BigInt(mb.s);
    let w = da > db ? da : db;
    if (w < 1000n) w = 1000n;
    assert.equal(await page.locator('#compare-at-a').getAttribute('href'), `/view/rank0?start=${BigInt(ma.s) - w}&end=${BigInt(ma.s) + 2n * w}`);
    assert.equal(await page.locator('#compare-at-b').getAttribute('href'), `/view/rank1?start=${BigInt(mb.s) - w}&end=${BigInt(mb.s) + 2n * w}`);
    await page.screenshot({ path: path.join(process.env.NXPROF_SCREENSHOTS || tmp, 'compare-viewer-at.png'), clip: { x: 0, y: 0, width: 1500, height: 300 } });
  });

  await t.test('two timelines stacked on one axis, aligned at a step or an event', async () => {
    const hostStep = async (p, name) => (await sql(`SELECT start_ts::VARCHAR AS s FROM ${events(p)} WHERE name = '${name}'
        AND json_extract_string(extra_attributes_json, '$.cat') = 'user_annotation'`))[0].s;
    const [a2, b2] = [await hostStep('rank0', 'ProfilerStep#2'), await hostStep('rank1', 'ProfilerStep#2')];
    await page.goto(`${url}/compare?a=rank0&b=rank1&step=${encodeURIComponent('ProfilerStep#2')}`);
    const settled = () => page.waitForFunction(() => {
      const st = window.nxCompare && window.nxCompare.stacked;
      return st && st.views.length === 2 && st.views.every((v) => v.loaded && !v.fetching && v.error === null &&
        BigInt(v.loaded.start) - BigInt(v.origin) === BigInt(Math.floor(st.start)) &&
        BigInt(v.loaded.end) - BigInt(v.origin) === BigInt(Math.ceil(st.end)));
    }, null, { timeout: 20000 });
    await settled();
    let st = await page.evaluate(() => window.nxCompare.stacked);
    assert.deepEqual(st.at, { a: a2, b: b2, label: 'ProfilerStep#2' }, 'aligned at each host step row (DuckDB)');
    assert.deepEqual(st.views.map((v) => [v.profile, v.origin]), [['rank0', a2], ['rank1', b2]]);
    assert.ok(st.views.every((v) => v.rows > 0), 'both draw their tracks');
    assert.ok(st.start < 0 && st.end > 0, 'the step start is in view');
    await page.screenshot({ path: path.join(process.env.NXPROF_SCREENSHOTS || tmp, 'compare-viewer.png') });
    // Hovering the middle of the step on A's host thread names the step and its duration.
    const durA = (await sql(`SELECT duration_ns::VARCHAR AS d FROM ${events('rank0')} WHERE start_ts = ${a2}
        AND name = 'ProfilerStep#2'`))[0].d;
    const thread = st.views[0].tracks.find((r) => r.label.startsWith('thread '));
    const boxA = await page.locator('#cmp-timeline-a canvas').boundingBox();
    const xMid = 180 + ((Number(durA) / 2 - st.start) / (st.end - st.start)) * (boxA.width - 180);
    await page.mouse.move(boxA.x + xMid, boxA.y + thread.y + 2 + 8);
    assert.equal(await page.locator('#cmp-timeline-a canvas').getAttribute('title'),
      `ProfilerStep#2 — ${fmtNs(Number(durA))}`);

    const box = await page.locator('#cmp-timeline-a canvas').boundingBox();
    await page.mouse.move(box.x + box.width * 0.6, box.y + 100);
    await page.mouse.wheel(0, -600);   // × exp(-0.9): both windows 0.41 as wide
    await settled();
    const zoomed = await page.evaluate(() => window.nxCompare.stacked);
    assert.ok(zoomed.end - zoomed.start < (st.end - st.start) / 2, 'the wheel zoomed in');
    const boxB = await page.locator('#cmp-timeline-b canvas').boundingBox();
    await page.mouse.move(boxB.x + boxB.width * 0.5, boxB.y + 100);
    await page.mouse.down();
    await page.mouse.move(boxB.x + boxB.width * 0.3, boxB.y + 100, { steps: 4 });
    await page.mouse.up();
    await settled();
    st = await page.evaluate(() => window.nxCompare.stacked);
    assert.ok(st.start > zoomed.start, 'dragging left moved both later');
    assert.ok(Math.abs((st.end - st.start) - (zoomed.end - zoomed.start)) < 1, 'a pan keeps the width');

    const first = async (p, from) => (await sql(`SELECT start_ts::VARCHAR AS s FROM ${events(p)}
        WHERE name = 'aten::mm' AND start_ts >= ${from} ORDER BY start_ts LIMIT 1`))[0].s;
    await page.locator('#compare-table tr[data-key="aten::mm"]').click();
    await page.waitForFunction(() => window.nxCompare.stacked.at.label.startsWith('first aten::mm'), null, { timeout: 15000 });
    await settled();
    st = await page.evaluate(() => window.nxCompare.stacked);
    assert.deepEqual([st.at.a, st.at.b], [await first('rank0', a2), await first('rank1', b2)], 'both at its first event from the step');
    assert.deepEqual(pageErrors, []);
  });

  await t.test('normalised per step', async () => {
    await page.goto(`${url}/compare?a=rank0&b=rank1`);
    await page.locator('#compare-table tbody tr').first().waitFor({ timeout: 15000 });
    await page.locator('#compare-norm').selectOption('step');
    await page.waitForURL(/normalize=step/);
    await page.locator('#compare-table th[data-col="norm_delta"]').waitFor({ timeout: 15000 });
    const api = await apiDiff('a=rank0&b=rank1&limit=0&normalize=step');
    const steps = async (p) => Number((await sql(`SELECT count(DISTINCT name) AS n FROM ${events(p)} WHERE name LIKE 'ProfilerStep#%'`))[0].n);
    const [na, nb] = [await steps('rank0'), await steps('rank1')];
    assert.deepEqual([api.steps_a, api.steps_b], [na, nb], 'DuckDB\'s steps');
    const rows = await tableRows();
    assert.deepEqual(rows.map((r) => r.cells[0]), api.ops.map((o) => o.name), 'the API\'s normalised order');
    const heads = await page.locator('#compare-table th').allInnerTexts();
    assert.deepEqual(heads.slice(-3).map((h) => h.trim()), ['Norm. A', 'Norm. B', 'Norm. Δ']);
    assert.ok((await page.locator('#compare-facts').innerText()).includes(`per step: ${na} steps in A, ${nb} in B`));
    await page.screenshot({ path: path.join(process.env.NXPROF_SCREENSHOTS || tmp, 'compare-viewer-per-step.png') });
  });

  await t.test('another key reloads the table', async () => {
    await page.locator('#compare-table th[data-col="count_a"]').click();   // back to descending
    await page.goto(`${url}/compare?a=rank0&b=rank1`);
    await page.locator('#compare-table tbody tr').first().waitFor({ timeout: 15000 });
    await page.locator('#compare-by').fill('kernel');
    await page.locator('#compare-by').dispatchEvent('change');
    await page.waitForURL(/by=kernel/);
    const api = await apiDiff('a=rank0&b=rank1&by=kernel&limit=0');
    await page.waitForFunction((n) => document.querySelectorAll('#compare-table tbody tr').length === n, api.groups);
    assert.deepEqual((await tableRows()).map((r) => r.cells[0]), api.ops.map((o) => o.name));
    assert.deepEqual(pageErrors, []);
  });
});
