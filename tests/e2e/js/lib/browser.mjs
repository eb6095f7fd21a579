// browser.mjs — what the viewer's browser tests share: `nxprof serve` on a data path, Debian's
// chromium through playwright-core, waiting for a settled view, reading the canvas, and the
// track rule of docs/query.md written as DuckDB SQL (independent of the viewer's code).
//
//   SKIP                                   a reason when chromium is missing (else false)
//   const { url, page, context, pageErrors, consoleErrors } = await openPage(t, BIN, dataPath, opts)
//                                          server + chromium + one page, closed after t even on failure
//   const { child, url } = await startServer(BIN, dataPath)
//   const browser = await launch()
//   await settle(page)                     the page loaded, the view's window fetched and painted
//   await until(cond, what)                poll a Node-side condition (downloads, ...) until true
//   await viewState(page)                  window.nxViewer.state
//   await paintedRows(page)                per track row: painted plot pixels on its first level
//   await pixel(page, x, y)                [r, g, b] of the canvas at CSS pixel (x, y)
//   TRACK_SQL.Instruction, TRACK_SQL.SystemProfileEvents   the track of a row, as SQL
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export const CHROMIUM = process.env.NXPROF_CHROMIUM || '/usr/bin/chromium';
export const SKIP = !fs.existsSync(CHROMIUM) ? `chromium is not installed at ${CHROMIUM} (scripts/bootstrap installs it); skipping the browser tests` : false;
export const GUTTER = 180;   // px of track labels left of the plot (docs/viewer.md)

export const TRACK_SQL = {
  Instruction: "coalesce(nullif(timeline_track, ''), engine)",
  SystemProfileEvents: "CASE WHEN trace_event_source <> 'framework' AND nc_idx IS NOT NULL THEN 'nc' || nc_idx::VARCHAR " +
    "ELSE coalesce('rank' || worker_gid::VARCHAR || '/', '') || coalesce(left(instance_id, 255), '') || '/' || " +
    "coalesce(process_id::VARCHAR, '') || '/' || coalesce(thread_id::VARCHAR, '') END",
};

export async function startServer(bin, dataPath) {
  const child = spawn(bin, ['serve', '--data-path', dataPath, '--bind', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`nxprof serve did not start: ${err}`)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/serving .* at (http:\/\/\S+?)\/?\s/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`nxprof serve exited ${code}: ${err}`)); });
  });
  return { child, url };
}

export async function launch() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
}

// `nxprof serve` on dataPath, chromium and one page (opts: viewport, downloads), every one
// closed by an after hook of test t, so a failing check leaves no process behind.
// pageErrors collects uncaught page exceptions, consoleErrors the console's error lines.
export async function openPage(t, bin, dataPath, { viewport = { width: 1500, height: 1000 }, downloads = false } = {}) {
  const { child, url } = await startServer(bin, dataPath);
  t.after(() => { child.kill('SIGTERM'); });
  const browser = await launch();
  t.after(() => browser.close().catch(() => {}));
  const context = await browser.newContext({ acceptDownloads: downloads, viewport });
  const page = await context.newPage();
  const pageErrors = [], consoleErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  return { url, browser, context, page, pageErrors, consoleErrors };
}

export const viewState = (page) => page.evaluate(() => window.nxViewer.state);

// Settled: the page's sections answered (body[data-ready], set by web/app.js), the window
// shown is the one fetched at the current plot width, nothing in flight, no frame pending
// (body[data-paint], web/js/viewer.js), and the canvas at the same place for two frames
// (a layout that still moves would send the mouse to the wrong row).
export async function settle(page) {
  await page.evaluate(() => { window.nxSettleAt = null; });
  await page.waitForFunction(() => {
    const s = window.nxViewer && window.nxViewer.state, d = document.body.dataset;
    const r = document.querySelector('#timeline').getBoundingClientRect();
    const at = `${r.x},${r.y},${r.width},${r.height},${document.querySelector('#timeline-scroll').scrollTop}`;
    const still = window.nxSettleAt === at;
    window.nxSettleAt = at;
    return still && d.ready === 'true' && d.paint !== 'pending' && s && s.loaded && s.fetching === 0 && s.lastWindow &&
      s.lastWindow.start === s.start && s.lastWindow.end === s.end && s.lastWindow.width === s.width;
  }, null, { timeout: 30000, polling: 'raf' });
}

// Resolves once cond() holds (polled on Node's side), rejects naming `what` after ms.
export async function until(cond, what, ms = 30000) {
  for (const t0 = Date.now(); !cond();) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Per visible track row: how many plot pixels on the middle line of its first level are
// not background (white or light grey), and the first such x (CSS px, -1 when none).
export function paintedRows(page) {
  return page.evaluate((gutter) => {
    const c = document.querySelector('#timeline'), ctx = c.getContext('2d');
    const dpr = c.width / c.getBoundingClientRect().width;
    const out = [];
    for (const r of window.nxViewer.state.rows) {
      if (r.kind !== 'track' || !r.visible) continue;
      const mid = r.levels > 1 ? r.y + 2 + 8 : r.y + r.h / 2;
      const y = Math.floor(mid * dpr), x0 = Math.ceil((gutter + 2) * dpr);
      const img = ctx.getImageData(x0, y, c.width - x0, 1).data;
      let n = 0, firstX = -1;
      for (let i = 0; i < img.length; i += 4) {
        const [R, G, B] = [img[i], img[i + 1], img[i + 2]];
        if (!(Math.abs(R - G) < 8 && Math.abs(G - B) < 8 && R > 200)) { n++; if (firstX < 0) firstX = i / 4; }
      }
      out.push({ table: r.table, track: r.track, label: r.label, levels: r.levels, y: mid, painted: n, firstX: firstX < 0 ? -1 : (x0 + firstX) / dpr });
    }
    return out;
  }, GUTTER);
}

export function pixel(page, x, y) {
  return page.evaluate(([px, py]) => {
    const c = document.querySelector('#timeline');
    const dpr = c.width / c.getBoundingClientRect().width;
    return [...c.getContext('2d').getImageData(Math.floor(px * dpr), Math.floor(py * dpr), 1, 1).data.slice(0, 3)];
  }, [x, y]);
}
