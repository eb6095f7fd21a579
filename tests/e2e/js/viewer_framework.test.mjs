// js.viewer_framework: the System Trace Viewer on a real framework trace, in Debian's
// chromium driven by playwright-core against the real `nxprof serve`: the PyTorch profiler
// trace tests/data/real-gpu/gpt2_eager.json.gz (torch 2.11, GPT-2 on an H200) processed
// alone, so the system profile names no device profiles.
//
// Expected values come from the raw JSON (kernel names) and from DuckDB over the profile's
// Parquet files (row counts), never from the viewer's code:
// - no Neuron-only panel: the Device Profiles table (MFU, HFU, MBU) is not on the page,
//   the busy time per thread or stream is;
// - the Export dialog offers SystemProfileEvents, enabled and checked; a complete export of
//   the window holds exactly the rows DuckDB counts overlapping it; a sampled export is
//   byte for byte `nxprof export-csv --width W`;
// - a long C++ kernel name is drawn shortened on the GPU stream (the hand-written short
//   form), and its hover tooltip and Event Details show the whole name from the JSON; the
//   flow arrow from its launch, far off to the left, bends inside the plot rather than
//   running along the GPU stream.
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { requireBin, TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, GUTTER, openPage, settle, viewState, pixel } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_framework: ${SKIP}`);
const TRACE = path.join(TEST_DATA, 'real-gpu', 'gpt2_eager.json.gz');
// A kernel of the trace, its name as the JSON spells it, and how the timeline shows it:
// return type dropped, template arguments and parameters folded, and (still over 60
// characters) only its nearest named scope kept (docs/viewer.md, "Kernel names").
const KERNEL = 'void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float, false>' +
  '(float const*, float const*, float const*, float const*, float const*, float*, int)';
const KERNEL_SHORT = 'native::layer_norm_grad_input_kernel_vectorized<…>(…)';

test('System Trace Viewer on a real PyTorch trace', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-fw-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  fs.mkdirSync(cap);
  fs.copyFileSync(TRACE, path.join(cap, path.basename(TRACE)));
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'gpt2'], { stdio: 'ignore' });
  const profileDir = path.join(data, 'profiles', 'global', 'gpt2@latest');
  const { sql } = await openDuckDB();
  const events = `read_parquet('${path.join(profileDir, 'SystemProfileEvents*.parquet')}')`;
  const raw = JSON.parse(gunzipSync(fs.readFileSync(TRACE)));
  const kernels = raw.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'kernel' && e.name === KERNEL);
  assert.ok(kernels.length > 0, 'the trace runs the kernel');

  const { url, page, pageErrors } = await openPage(t, BIN, data, { downloads: true });

  await t.test('no Neuron-only panels: no Device Profiles (MFU) table, busy time per thread or stream', async () => {
    await page.goto(`${url}/view/gpt2`);
    await settle(page);
    await page.waitForFunction(() => document.querySelector('#system-busy table.bars'), null, { timeout: 30000 });
    assert.equal(await page.locator('#device-profiles').isVisible(), false, 'the Device Profiles table is hidden');
    assert.equal(await page.getByText('MFU', { exact: true }).isVisible(), false, 'no MFU column on the page');
    assert.doesNotMatch(await page.locator('#system-facts').innerText(), /device profile/, 'no count of device profiles it cannot have');
    assert.equal(await page.locator('#system-busy h2').innerText(), 'Busy time per thread or stream');
    assert.match(await page.locator('#system-busy th').first().innerText(), /Thread or stream/);
    assert.ok(await page.locator('#system-busy table.bars tr').count() > 1, 'busy time rows');
  });

  // A window of 1.5 kernels around the kernel's first run, from the profile's own times.
  const k = (await sql(`SELECT start_ts::VARCHAR AS s, end_ts::VARCHAR AS e FROM ${events} WHERE name = '${KERNEL}' ORDER BY start_ts LIMIT 1`))[0];
  const dur = BigInt(k.e) - BigInt(k.s), S = BigInt(k.s) - dur / 4n, E = BigInt(k.e) + dur / 4n;

  await t.test('a long kernel name is drawn short; hover and Event Details show it whole', async () => {
    await page.goto(`${url}/view/gpt2?start=${S}&end=${E}`);
    await settle(page);
    const drawn = (await viewState(page)).names.filter((n) => n.name === KERNEL);
    assert.equal(drawn.length, 1, 'the kernel is labelled once');
    assert.equal(drawn[0].text, KERNEL_SHORT);
    const b = await page.locator('#timeline').boundingBox();
    await page.mouse.move(b.x + drawn[0].x + 20, b.y + drawn[0].y);
    const tip = page.locator('#tooltip .tip-name');
    await tip.waitFor({ state: 'visible', timeout: 10000 });
    assert.equal(await tip.textContent(), KERNEL, 'the tooltip names it whole');
    await page.mouse.down(); await page.mouse.up();
    const whole = page.locator('#details .ev-name');
    await whole.waitFor({ timeout: 15000 });
    assert.equal(await whole.textContent(), KERNEL, 'Event Details names it whole');
    // Its launch (the flow's predecessor, on a CPU thread) is far left of the window: the
    // arrow bends inside the plot instead of running along the GPU stream over its names.
    await page.waitForFunction(() => window.nxViewer.state.flows && window.nxViewer.state.flows.predecessors.length === 1, null, { timeout: 15000 });
    await page.mouse.move(b.x + 2, b.y + 2);
    await settle(page);
    const ev = (await page.evaluate(() => window.nxViewer.events().filter((e) => e.ordinal === window.nxViewer.state.sel.ordinal)))[0];
    assert.ok(ev.x > GUTTER + 40, 'the kernel starts inside the plot');
    let purple = 0;
    for (let x = GUTTER + 4; x < (GUTTER + ev.x) / 2; x += 2) {
      const [r, g, bl] = await pixel(page, x, ev.y + ev.h / 2);
      if (Math.abs(r - 0x7c) < 40 && Math.abs(g - 0x3a) < 40 && Math.abs(bl - 0xed) < 40) purple++;
    }
    assert.equal(purple, 0, 'no flow line along the stream left of the kernel');
  });

  const exportOnce = async (sampled) => {
    await page.click('#export-open');
    const dlg = page.locator('#export-dialog');
    await dlg.waitFor({ state: 'visible' });
    const boxes = await page.locator('#export-dialog input[name=table]').evaluateAll((l) => l.map((c) => [c.value, c.disabled, c.checked]));
    assert.deepEqual(boxes.find((x) => x[0] === 'SystemProfileEvents'), ['SystemProfileEvents', false, true], 'offered, enabled, checked');
    assert.ok(await page.locator('#export-none').isHidden(), 'no "none of the exportable tables"');
    if ((await page.locator('#export-sampled').isChecked()) !== sampled) await page.click('#export-sampled');
    const download = page.waitForEvent('download', { timeout: 30000 });
    await page.click('#export-go');
    const d = await download;
    const file = path.join(tmp, `${sampled ? 's' : 'c'}-${d.suggestedFilename()}`);
    await d.saveAs(file);
    return file;
  };

  await t.test('Export, complete: every SystemProfileEvents row of the window, as DuckDB counts them', async () => {
    const st = await viewState(page);
    const file = await exportOnce(false);
    const want = await sql(`SELECT count(*)::BIGINT AS n FROM ${events} WHERE end_ts >= ${st.start} AND start_ts <= ${st.end}`);
    const got = await sql(`SELECT count(*)::BIGINT AS n FROM read_csv('${file}', header = true, all_varchar = true)`);
    assert.ok(Number(want[0].n) > 1, 'the window holds rows');
    assert.equal(Number(got[0].n), Number(want[0].n));
  });

  await t.test('Export, sampled: the file nxprof export-csv writes at the timeline width', async () => {
    const st = await viewState(page);
    const file = await exportOnce(true);
    const outDir = path.join(tmp, 'cli');
    execFileSync(BIN, ['export-csv', profileDir, '--start', st.start, '--end', st.end, '--width', String(st.width),
      '--tables', 'SystemProfileEvents', '--out', outDir]);
    assert.equal(fs.readFileSync(file, 'utf8'), fs.readFileSync(path.join(outDir, 'SystemProfileEvents.csv'), 'utf8'));
  });

  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
