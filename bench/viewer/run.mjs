// bench/viewer/run.mjs — how responsive the Device Trace Viewer is on a big profile: the
// real `nxprof serve` and web/ in Debian's chromium (headless, playwright-core), timing
// what a user waits for.
//
//   node bench/viewer/run.mjs [--data-path P --profile NAME | --events 10000000]
//                             [--moves 20] [--seed 7] [--bin build] [--width 1600]
//
// Without --data-path it synthesizes a llama-layer capture of --events device records
// (seed 7) and processes it into a temporary data path (removed at the end).
// Measured, in the page (performance.now()):
//   - open: from navigation (the page's time origin) until the whole-profile timeline is
//     drawn (profile info, tracks, the sampled timeline of every timeline table, usage lanes);
//   - --moves random pans and zooms (keys W, S, A, D, drawn from a generator seeded with
//     --seed; a key that would not move the window, at full zoom-out or at an edge, is
//     drawn again): from the key press until the first frame showing the new window is
//     painted ("drawn": from the events already loaded), and until the new window's
//     sampled events are fetched and drawn ("refined"; the viewer waits 120 ms after the
//     last input before fetching);
//   - paint: the time one frame's paint() takes (nxViewer.state.paintMs), after each move
//     is drawn and after it is refined.
// Prints a table with the median and the 95th percentile of each.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const BIN = path.join(opt('--bin', 'build'), 'nxprof');
const CHROMIUM = process.env.NXPROF_CHROMIUM || '/usr/bin/chromium';
const moves = Number(opt('--moves', 20));
let seed = Number(opt('--seed', 7)) >>> 0;
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
  await page.goto(`${url}/view/${encodeURIComponent(name)}`);
  await settled();
  const open = await page.evaluate(() => performance.now());
  const st0 = await page.evaluate(() => window.nxViewer.state);
  await page.click('#timeline', { position: { x: 5, y: 5 } }).catch(() => {});
  await page.evaluate(() => window.addEventListener('keydown', () => { window.nxBenchKey = performance.now(); }, true));
  // mulberry32: the same moves for the same --seed.
  const rand = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const drawn = [], refined = [], paints = [st0.paintMs], used = { w: 0, s: 0, a: 0, d: 0 };
  let depth = 0;   // zoom-ins minus zoom-outs: at 0 the window is the whole profile
  while (drawn.length < moves) {
    const key = depth === 0 ? 'w' : 'wsad'[Math.floor(rand() * 4)];
    const before = await page.evaluate(() => window.nxViewer.state.start + ':' + window.nxViewer.state.end);
    await page.keyboard.press(key);
    // The key's handler moved the window (or not, at an edge); the next animation frame
    // runs after the viewer's own, which paints the new window from the loaded events.
    const first = await page.evaluate((b) => new Promise((r) => requestAnimationFrame(() => {
      const s = window.nxViewer.state;
      r(s.start + ':' + s.end === b ? null : { ms: performance.now() - window.nxBenchKey, paint: s.paintMs });
    })), before);
    if (!first) continue;
    depth += key === 'w' ? 1 : key === 's' ? -1 : 0;
    used[key]++;
    drawn.push(first.ms);
    paints.push(first.paint);
    await settled();
    const st = await page.evaluate(() => ({ ms: performance.now() - window.nxBenchKey, paint: window.nxViewer.state.paintMs }));
    refined.push(st.ms);
    paints.push(st.paint);
  }
  const q = (xs, f) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(f * xs.length))];
  const fmt = (x) => `${x.toFixed(1)} ms`;
  console.log(`profile ${name} (${dataPath}); viewport ${widthPx} px; ${st0.rows.filter((r) => r.kind === 'track').length} tracks, ` +
              `${st0.drawnEvents} events drawn at full zoom-out; moves (seed ${opt('--seed', 7)}): ` +
              `${used.w} W, ${used.s} S, ${used.a} A, ${used.d} D`);
  console.log('| what | median | p95 |');
  console.log('| --- | --- | --- |');
  console.log(`| open: navigation to whole profile drawn | ${fmt(open)} | |`);
  console.log(`| pan/zoom: key to new window drawn (${drawn.length}x) | ${fmt(q(drawn, 0.5))} | ${fmt(q(drawn, 0.95))} |`);
  console.log(`| pan/zoom: key to new window refined (${refined.length}x) | ${fmt(q(refined, 0.5))} | ${fmt(q(refined, 0.95))} |`);
  const p = paints.filter((x) => x !== null);
  console.log(`| paint of one frame (${p.length}x) | ${fmt(q(p, 0.5))} | ${fmt(q(p, 0.95))} |`);
} finally {
  await browser.close();
  child.kill('SIGTERM');
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}
