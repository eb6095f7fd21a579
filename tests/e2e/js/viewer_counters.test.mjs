// js.viewer_counters: the System Trace Viewer's memory lanes and zero-duration events on a
// real PyTorch trace (tests/data/real-gpu/gpt2_eager.json.gz, whose 8,072 `[memory]`
// instants give GPU 0's and the CPU's allocated and reserved bytes, and whose `fwdbwd`
// flows link forward to backward operators), in Debian's chromium driven by playwright-core
// against the real `nxprof serve`, on the profile `nxprof process` writes of it.
//
// Expected values come from the raw JSON and DuckDB, never from the viewer's code:
// - a lane per device, labelled "GPU 0 memory" and "CPU memory", painted (its path covers
//   plot pixels, and the canvas under it is not background);
// - hovering GPU 0's lane inside the widest gap between two of its samples shows the
//   allocated and reserved bytes of the sample before the gap, as the JSON gives them;
// - a `[memory]` row is drawn as a marker at least 5 px wide, and a click on it selects it
//   (Event Details name it);
// - search for "[memory]" finds every row DuckDB finds by the same rule (name contains it);
// - a click on a flow start (`s`) marker gives its flow end (`f` of the same id, as the JSON
//   pairs them) as its successor.
// NXPROF_SCREENSHOT=<file.png> also saves the page with the lanes. Skipped (with a message)
// only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { requireBin, TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, GUTTER, openPage, settle, viewState, pixel } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_counters: ${SKIP}`);
const TRACE = path.join(TEST_DATA, 'real-gpu', 'gpt2_eager.json.gz');

// fmtBytes of web/js/format.js, written again: KiB/MiB/GiB with one decimal.
function bytesText(n) {
  if (Math.abs(n) < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (Math.abs(n) >= 1024 && i < u.length - 1);
  return `${n.toFixed(1)} ${u[i]}`;
}

test('memory lanes and [memory] rows of a real PyTorch trace', { skip: SKIP, timeout: 240000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-counters-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  fs.mkdirSync(cap);
  fs.copyFileSync(TRACE, path.join(cap, path.basename(TRACE)));
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'gpt2'], { stdio: 'ignore' });
  const profileDir = path.join(data, 'profiles', 'global', 'gpt2@latest');
  const raw = JSON.parse(gunzipSync(fs.readFileSync(TRACE)));
  const { sql } = await openDuckDB();
  const events = `read_parquet('${path.join(profileDir, 'SystemProfileEvents*.parquet')}')`;
  const nMemory = Number((await sql(`SELECT count(*)::BIGINT AS n FROM ${events}
    WHERE name = '[memory]' AND trace_event_source = 'framework'`))[0].n);
  assert.equal(nMemory, raw.traceEvents.filter((e) => e.name === '[memory]' && (e.ph === 'i' || e.ph === 'I')).length,
               'a row per [memory] instant of the JSON');
  const base = BigInt(raw.baseTimeNanoseconds ?? 0);

  // GPU 0's samples from the JSON, in time order, and the widest gap between two of them.
  const gpu = raw.traceEvents.filter((e) => e.name === '[memory]' && e.args['Device Type'] === 1 && e.args['Device Id'] === 0)
    .map((e) => ({ ts: BigInt(Math.round(e.ts * 1000)) + base, a: e.args['Total Allocated'], r: e.args['Total Reserved'] }))
    .sort((x, y) => (x.ts < y.ts ? -1 : x.ts > y.ts ? 1 : 0));
  assert.ok(gpu.length > 1000, 'the trace has GPU 0 memory samples');
  let gap = 1;
  for (let i = 1; i + 1 < gpu.length; i++) if (gpu[i + 1].ts - gpu[i].ts > gpu[gap + 1].ts - gpu[gap].ts && gpu[i].ts > gpu[i - 1].ts) gap = i;

  const { url, page, pageErrors } = await openPage(t, BIN, data);

  await t.test('a memory lane per device, labelled, painted', async () => {
    await page.goto(`${url}/view/gpt2`);
    await settle(page);
    const st = await viewState(page);
    const lanes = st.rows.filter((r) => r.kind === 'lane').map((r) => r.label);
    assert.deepEqual(lanes, ['GPU 0 memory', 'CPU memory']);
    for (const l of lanes) assert.ok(st.counterPixels[l] > 100, `${l}: its path covers ${st.counterPixels[l]} pixels`);
    if (process.env.NXPROF_SCREENSHOT) await page.screenshot({ path: process.env.NXPROF_SCREENSHOT });
    const row = st.rows.find((r) => r.label === 'GPU 0 memory');
    let ink = 0;
    for (let x = GUTTER + 40; x < 1400; x += 40) {
      const [r, g, b] = await pixel(page, x, row.y + row.h - 4);
      if (!(Math.abs(r - g) < 8 && Math.abs(g - b) < 8 && r > 200)) ink++;
    }
    assert.ok(ink > 10, `the lane's area is on the canvas (${ink} of ${Math.floor((1400 - GUTTER - 40) / 40)} probes)`);
  });

  await t.test('hover: the bytes in force, as the JSON gives them', async () => {
    const a = gpu[gap], b = gpu[gap + 1], d = b.ts - a.ts;
    await page.goto(`${url}/view/gpt2?start=${a.ts - d}&end=${a.ts + 2n * d}`);
    await settle(page);
    const st = await viewState(page);
    const row = st.rows.find((r) => r.label === 'GPU 0 memory');
    const S = BigInt(st.start), E = BigInt(st.end);
    const x = GUTTER + Number(a.ts + d / 2n - S) / Number(E - S) * st.width;
    const box = await page.locator('#timeline').boundingBox();
    await page.mouse.move(box.x + x, box.y + row.y + row.h / 2);
    const tip = page.locator('#tooltip');
    await tip.waitFor({ state: 'visible', timeout: 10000 });
    const text = await tip.innerText();
    assert.match(text, /GPU 0 memory/);
    assert.ok(text.includes(`allocated: ${bytesText(a.a)}`), `${text} holds allocated ${bytesText(a.a)}`);
    assert.ok(text.includes(`reserved: ${bytesText(a.r)}`), `${text} holds reserved ${bytesText(a.r)}`);
  });

  await t.test('a [memory] row is a marker that can be clicked', async () => {
    const st = await viewState(page);
    const marks = await page.evaluate(() => window.nxViewer.events((e) => e.name === '[memory]' && e.dur === 0));
    assert.ok(marks.length > 0, 'the window draws [memory] rows');
    const m = marks.find((e) => e.x > GUTTER + 10 && e.x < st.width + GUTTER - 10) || marks[0];
    assert.ok(m.w >= 5, `the marker is ${m.w} px wide`);
    const box = await page.locator('#timeline').boundingBox();
    await page.mouse.click(box.x + m.x + m.w / 2, box.y + m.y + m.h / 2);
    await page.waitForFunction((o) => window.nxViewer.state.sel && window.nxViewer.state.sel.ordinal === o, m.ordinal, { timeout: 10000 });
    await page.waitForFunction(() => /Total Allocated/.test(document.querySelector('#details').innerText), null, { timeout: 15000 });
    assert.match(await page.locator('#details').innerText(), /\[memory\]/);
  });

  await t.test('search finds every [memory] row', async () => {
    const want = Number((await sql(`SELECT count(*)::BIGINT AS n FROM ${events} WHERE contains(lower(name), '[memory]')`))[0].n);
    assert.equal(want, nMemory);
    await page.goto(`${url}/view/gpt2`);
    await settle(page);
    await page.selectOption('#search-field', 'name');
    await page.fill('#search-q', '[memory]');
    await page.press('#search-q', 'Enter');
    await page.waitForFunction((n) => document.querySelector('#search-count').textContent === `1 of ${n}`, want.toLocaleString('en-US'), { timeout: 20000 });
  });

  await t.test('a flow start links to its flow end', async () => {
    const fs0 = raw.traceEvents.filter((e) => e.cat === 'fwdbwd');
    const start = fs0.find((e) => e.ph === 's' && fs0.filter((x) => x.id === e.id).length === 2);
    const end = fs0.find((e) => e.ph === 'f' && e.id === start.id);
    const ns = (e) => BigInt(Math.round(e.ts * 1000)) + base;
    await page.goto(`${url}/view/gpt2?start=${ns(start) - 2000n}&end=${ns(start) + 2000n}`);
    await settle(page);
    const mark = (await page.evaluate((s) => window.nxViewer.events((e) => e.name === 'fwdbwd' && e.start === s), String(ns(start))))[0];
    assert.ok(mark && mark.w >= 5, 'the flow start is a marker');
    const box = await page.locator('#timeline').boundingBox();
    await page.mouse.click(box.x + mark.x + mark.w / 2, box.y + mark.y + mark.h / 2);
    await page.waitForFunction((o) => { const s = window.nxViewer.state; return s.sel && s.sel.ordinal === o && s.flows; }, mark.ordinal, { timeout: 15000 });
    const flows = (await viewState(page)).flows;
    assert.deepEqual(flows.successors.map((r) => String(r.start)), [String(ns(end))]);
  });

  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
