// js.viewer_devices: the Devices and Steps tables of a system profile's page on real GPU
// traces (tests/data/real-gpu: gpt2_eager, the DDP pair), in Debian's chromium driven by
// playwright-core against the real `nxprof serve`. Expected values come from the API
// (GET /api/profiles/<name>/summary, whose numbers python.test_device_answers checks
// against the raw JSON) read in node, not from the viewer's code:
// - one Devices row per "devices" entry with its device, rank and kernel count, and busy,
//   idle and kernel times whose text reads back within its rounding to the API's ns;
// - one Steps row per "steps" entry (every step, the last one too) with its name, rank and
//   kernel count, its duration and device busy time likewise;
// - clicking a step zooms the timeline to exactly that step's window (the view's start and
//   end, and the URL);
// - a GPU trace has no NeuronCore: the Device Profiles (MFU) table is hidden.
// NXPROF_SCREENSHOT=<file.png> saves the page. Skipped (with a message) only when
// /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, TEST_DATA, tempDir } from './lib/harness.mjs';
import { SKIP, openPage, settle, viewState } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_devices: ${SKIP}`);
const GPU = path.join(TEST_DATA, 'real-gpu');
const SETS = { gpt2: ['gpt2_eager.json.gz'], ddp: ['ddp_rank0.json.gz', 'ddp_rank1.json.gz'] };

// "89.363 ms" -> [ns, half of its last digit in ns]: the text's value and its rounding.
function parseTime(text) {
  const m = /^(-?[\d.]+) (ns|us|ms|s)$/.exec(text.trim());
  assert.ok(m, `a time: '${text}'`);
  const unit = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[m[2]];
  const decimals = (m[1].split('.')[1] || '').length;
  return [Number(m[1]) * unit, Math.max(0.5, 0.5 * unit * 10 ** -Math.max(decimals, 0))];
}

function assertTime(text, ns, what) {
  const [v, tol] = parseTime(text);
  assert.ok(Math.abs(v - Number(ns)) <= tol * 1.0001 + 1e-9, `${what}: '${text}' is not ${ns} ns`);
}

// Integers beyond 2^53 come as strings: keep them as strings for comparisons.
const apiSummary = async (url, name) => (await fetch(`${url}/api/profiles/${name}/summary`)).json();

test('Devices and Steps tables on real GPU traces', { skip: SKIP, timeout: 240000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-devices-');
  const data = path.join(tmp, 'data');
  for (const [name, files] of Object.entries(SETS)) {
    const cap = path.join(tmp, `cap_${name}`);
    fs.mkdirSync(cap);
    for (const f of files) fs.copyFileSync(path.join(GPU, f), path.join(cap, f));
    execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', name], { stdio: 'ignore' });
  }
  const { url, page, pageErrors } = await openPage(t, BIN, data);
  const cells = (sel) => page.$$eval(`${sel} tr`, (rows) => rows.slice(1).map((r) => [...r.children].map((c) => c.textContent)));

  for (const name of Object.keys(SETS)) {
    await t.test(`${name}: the tables hold the API's devices and steps`, async () => {
      const s = await apiSummary(url, name);
      assert.ok(s.devices.length > 0 && s.steps.length > 0);
      await page.goto(`${url}/view/${name}`);
      await settle(page);
      await page.waitForSelector('#device-use');
      assert.equal(await page.isHidden('#system-devices'), true, 'no NeuronCore: no Device Profiles table');
      const dev = await cells('#device-use');
      assert.equal(dev.length, s.devices.length);
      s.devices.forEach((d, i) => {
        const [device, rank, busy, , , idle, kernels, kernelTime] = dev[i];
        assert.equal(device, d.device);
        assert.equal(rank, d.rank === null ? '' : String(d.rank));
        assertTime(busy, d.busy_ns, 'busy');
        assertTime(idle, d.idle_ns, 'idle');
        assert.equal(kernels.replaceAll(',', ''), String(d.kernel_count));
        assertTime(kernelTime, d.kernel_ns, 'kernel time');
      });
      const steps = await cells('#step-table');
      assert.equal(steps.length, s.steps.length);
      s.steps.forEach((st, i) => {
        const [label, rank, duration, busy, , , kernels] = steps[i];
        assert.ok(label.startsWith(st.name), `${label} is ${st.name}`);
        assert.equal(rank, st.rank === null ? '' : String(st.rank));
        assertTime(duration, st.duration_ns, 'duration');
        assertTime(busy, st.gpu_busy_ns, 'device busy');
        assert.equal(kernels.replaceAll(',', ''), String(st.kernel_count));
      });
    });

    await t.test(`${name}: clicking a step zooms the timeline to it`, async () => {
      const s = await apiSummary(url, name);
      const i = s.steps.length - 1;   // the last step
      await page.click(`#step-table tr.step[data-i="${i}"] a`);
      await settle(page);
      const st = await viewState(page);
      assert.equal(st.start, String(s.steps[i].start_ns));
      assert.equal(st.end, String(s.steps[i].end_ns));
      assert.ok(page.url().includes(`start=${s.steps[i].start_ns}&end=${s.steps[i].end_ns}`), page.url());
    });
  }
  if (process.env.NXPROF_SCREENSHOT) {
    await page.goto(`${url}/view/gpt2`);
    await settle(page);
    await page.waitForSelector('#device-use');
    await page.screenshot({ path: process.env.NXPROF_SCREENSHOT, fullPage: true });
  }
  assert.deepEqual(pageErrors, []);
});
