// bench/viewer/run.mjs — how responsive the Device Trace Viewer is on a big profile: the
// real `nxprof serve` and web/ in Debian's chromium (headless, playwright-core), timing
// what a user waits for.
//
//   node bench/viewer/run.mjs [--data-path P --profile NAME | --events 10000000]
//                             [--steps 6] [--bin build] [--width 1600]
//
// Without --data-path it synthesizes a llama-layer capture of --events device records
// (seed 7) and processes it into a temporary data path (removed at the end).
// Measured, in the page (performance.now()):
//   - open: from navigating to /view/<name> until the whole-profile timeline is drawn
//     (profile info, tracks, the sampled timeline of every timeline table, usage lanes);
//   - each interaction: --steps zoom-ins (W), pans (D) and zoom-outs (S), from the key
//     press until the new window's sampled events are fetched and drawn;
//   - paint: the time one frame's paint() takes (nxViewer.state.paintMs): at most 16.7 ms
//     for 60 frames/s while dragging.
// Prints a table with the median and the worst of each.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.join(opt('--bin', 'build'), 'nxprof');
const CHROMIUM = process.env.NXPROF_CHROMIUM || '/usr/bin/chromium';
const steps = Number(opt('--steps', 6));
const widthPx = Number(opt('--width', 1600));
let dataPath = opt('--data-path', null);
let name = opt('--profile', null);
let tmp = null;
if (!dataPath) {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nxprof-bench-viewer-'));
  const cap = path.join(tmp, 'cap');
  dataPath = path.join(tmp, 'data');
  name = 'bench-nd0-nc0';   // the device profile of NeuronCore 0 (the system profile is 'bench')
  const events = opt('--events', '10000000');
  console.error(`bench/viewer: synthesizing ${events} events and processing them...`);
  execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', events, '--seed', '7', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', dataPath, '--display-name', 'bench'], { stdio: 'ignore' });
  fs.rmSync(cap, { recursive: true, force: true });
}

const child = spawn(BIN, ['serve', '--data-path', dataPath, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (d) => { out += d; const m = out.match(/serving .* at (http:\/\/\S+?)\/?\s/); if (m) resolve(m[1]); });
  child.on('exit', (c) => reject(new Error(`nxprof serve exited ${c}`)));
});
const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
try {
  const page = await (await browser.newContext({ viewport: { width: widthPx, height: 900 } })).newPage();
  const settled = () => page.waitForFunction(() => {
    const s = window.nxViewer && window.nxViewer.state;
    return s && s.loaded && s.fetching === 0 && s.lastWindow && s.lastWindow.start === s.start && s.lastWindow.end === s.end;
  }, null, { timeout: 120000, polling: 'raf' }).then(() => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r()))));
  const t0 = Date.now();
  await page.goto(`${url}/view/${encodeURIComponent(name)}`);
  await settled();
  const open = Date.now() - t0;
  const st0 = await page.evaluate(() => window.nxViewer.state);
  await page.click('#timeline', { position: { x: 5, y: 5 } }).catch(() => {});
  const lat = { 'zoom in (W)': [], 'pan (D)': [], 'zoom out (S)': [] };
  const paints = [st0.paintMs];
  for (const [label, key] of [['zoom in (W)', 'w'], ['pan (D)', 'd'], ['zoom out (S)', 's']]) {
    for (let i = 0; i < steps; i++) {
      const before = await page.evaluate(() => window.nxViewer.state.start + ':' + window.nxViewer.state.end);
      const a = Date.now();
      await page.keyboard.press(key);
      await page.waitForFunction((b) => { const s = window.nxViewer.state; return s.start + ':' + s.end !== b; }, before, { timeout: 30000 });
      await settled();
      lat[label].push(Date.now() - a);
      paints.push((await page.evaluate(() => window.nxViewer.state)).paintMs);
    }
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const max = (xs) => Math.max(...xs);
  console.log(`profile ${name} (${dataPath}); viewport ${widthPx} px; ${st0.rows.filter((r) => r.kind === 'track').length} tracks, ` +
              `${st0.drawnEvents} events drawn at full zoom-out`);
  console.log('| what | median | worst |');
  console.log('| --- | --- | --- |');
  console.log(`| open, whole profile drawn | ${open} ms | |`);
  for (const [k, v] of Object.entries(lat)) console.log(`| ${k}: key to new window drawn (${v.length}x) | ${med(v)} ms | ${max(v)} ms |`);
  const p = paints.filter((x) => x !== null);
  console.log(`| paint of one frame (${p.length}x) | ${med(p).toFixed(1)} ms | ${max(p).toFixed(1)} ms |`);
} finally {
  await browser.close();
  child.kill('SIGTERM');
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
