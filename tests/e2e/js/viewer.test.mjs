// js.viewer: the web viewer (web/) in Debian's chromium, driven by playwright-core, against
// the real `nxprof serve` on a processed small llama-layer capture: a system profile `demo`
// and a device profile per NeuronCore (`demo-nd0-nc0`, `demo-nd0-nc1`).
//
// Checks, each against facts found without the viewer's code:
// - the profile list shows the system profile with the device profiles its
//   DeviceProfileList names (DuckDB) indented under it, each with its NeuronCore; opening
//   the system profile shows its summary and a Device Profiles table with one row per
//   DeviceProfileList row; the row's link opens that core's Device Trace Viewer, which links
//   back to the system profile;
// - the Device Trace Viewer paints tracks: every Instruction track (engine) that DuckDB
//   finds in the device profile's Instruction.parquet has a labelled row whose plot area
//   has coloured pixels (read from the canvas with getImageData);
// - D / ArrowRight / dragging the axis pan (URL start and end move by the same amount),
//   W / the wheel zoom in (URL span shrinks), S zooms out;
// - hovering a painted pixel of an Instruction row shows a tooltip with the table, opcode
//   and time window;
// - clicking selects the event: the URL gets event=Table:ordinal, Event Details lists every
//   Instruction field of the schema (catalogue.tsv), and reloading that URL reopens it;
// - Export to CSV of two tables downloads two files whose bytes equal
//   `nxprof export-csv --start S --end E --width W` for the viewer's window and width;
//   a response marked X-Nxprof-Truncated shows a notice;
// - SBUF usage and PSUM usage lanes are laid out (labels from nxViewer.state.rows) and
//   painted for the device profile (its SbufUsage/PsumUsage files exist), hovering them
//   shows a percent readout, and the one /usage request per window names every usage table
//   the profile has (a device profile has no system tables, so no CPU, host memory or
//   device HBM lane); a copy of the profile without those files gets neither lane;
// - CPU (host), Host memory and Device HBM lanes are laid out and painted for a copy of the
//   device profile given the system profile's CpuUsage/HostMemUsage/SystemProfileHbmUsage
//   files (the device span, ~3 ms, is narrower than the 10 ms sampling period, so they
//   show the sample before the window); hovering the CPU lane at the window's left edge
//   shows the "average" util_percent in force there (from DuckDB), the Device HBM lane a
//   per-HBM byte readout.
// Skipped (with a message) only when /usr/bin/chromium is missing; CI installs it
// (scripts/bootstrap).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SKIP, TRACK_SQL, openPage, settle, until, viewState, paintedRows } from './lib/browser.mjs';

const BIN = process.env.NXPROF_BIN;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const CATALOGUE = path.join(HERE, '..', '..', '..', 'src', 'schema', 'catalogue.tsv');
const skip = SKIP;
if (skip) console.log(`# SKIP js.viewer: ${skip}`);

function schemaFields(table) {
  return fs.readFileSync(CATALOGUE, 'utf8').split('\n')
    .map((l) => l.split('\t')).filter((c) => c[0] === 'field' && c[1] === table).map((c) => c[2]);
}

// Instruction tracks by DuckDB: timeline_track when non-empty, else engine (docs/query.md).
async function instructionTracks(profileDir) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const glob = path.join(profileDir, 'Instruction*.parquet');
  const r = await con.runAndReadAll(`SELECT DISTINCT ${TRACK_SQL.Instruction} AS t FROM read_parquet('${glob}') ORDER BY t`);
  return r.getRowObjects().map((o) => o.t);
}

const waitLoaded = settle;
const paintedByRow = paintedRows;
const urlRange = (page) => {
  const u = new URL(page.url());
  return { start: BigInt(u.searchParams.get('start')), end: BigInt(u.searchParams.get('end')) };
};
async function waitUrlChange(page, before) {
  await page.waitForFunction((b) => {
    const u = new URL(location.href);
    return u.searchParams.get('start') !== b.start || u.searchParams.get('end') !== b.end;
  }, { start: before.start.toString(), end: before.end.toString() }, { timeout: 20000 });
  return urlRange(page);
}

test('viewer in chromium against nxprof serve', { skip, timeout: 240000 }, async (t) => {
  assert.ok(BIN, 'NXPROF_BIN must name the nxprof binary');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nxviewer-'));
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  // llama-layer, small: enough events that sampling at the screen's width drops rows.
  execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', '40000', '--seed', '7', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'demo'], { stdio: 'ignore' });
  const globalDir = path.join(data, 'profiles', 'global');
  const systemDir = path.join(globalDir, 'demo@latest');
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const devices = (await duck.runAndReadAll(`SELECT device_profile_name AS name, nc_id FROM read_parquet('${path.join(systemDir, 'DeviceProfileList.parquet')}', file_row_number = true)
                                               ORDER BY file_row_number`)).getRowObjects().map((r) => ({ name: r.name, nc: Number(r.nc_id) }));
  assert.ok(devices.length >= 2, 'the capture has several NeuronCores');
  // The Device Trace Viewer checks run on the last core's device profile (reached by its link).
  const DEV = devices[devices.length - 1].name;
  const profileDir = path.join(globalDir, `${DEV}@latest`);
  const expectedTracks = await instructionTracks(profileDir);
  assert.ok(expectedTracks.length >= 2, 'the tiny capture has several engines');
  const SHOTS = process.env.NXPROF_SCREENSHOTS || tmp;

  const { url, page, pageErrors } = await openPage(t, BIN, data, { viewport: { width: 1400, height: 900 }, downloads: true });
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  await t.test('the profile list shows the system profile with its device profiles under it', async () => {
    await page.goto(`${url}/`);
    await page.locator('#profiles tbody tr').first().waitFor({ timeout: 10000 });
    const rows = await page.locator('#profiles tbody tr').evaluateAll((trs) => trs.map((tr) => ({
      name: tr.querySelector('td.name').innerText.replace(/^└\s*/, '').trim(), child: tr.classList.contains('child'),
      kind: tr.children[1].innerText, nc: tr.children[2].innerText, href: tr.querySelector('a') && tr.querySelector('a').getAttribute('href'),
      indent: tr.querySelector('td.name a').getBoundingClientRect().left })));
    assert.deepEqual(rows.map((r) => [r.name, r.child]), [['demo', false], ...devices.map((d) => [d.name, true])], 'system row, then one indented row per device profile');
    assert.equal(rows[0].kind, 'system');
    rows.slice(1).forEach((r, i) => {
      assert.equal(r.kind, 'device');
      assert.equal(r.nc, `NC ${devices[i].nc}`);
      assert.equal(r.href, `/view/${devices[i].name}`);
      assert.ok(r.indent > rows[0].indent + 8, 'indented under the system profile');
    });
    await page.screenshot({ path: path.join(SHOTS, 'viewer-profile-list.png') });
    await page.locator('#profiles a', { hasText: /^demo$/ }).click();
    await page.waitForURL(/\/view\/demo(\?|$)/);
  });

  await t.test('the system profile shows its summary and a Device Profiles table; a link opens that device profile', async () => {
    await page.locator('#device-profiles tbody tr a').first().waitFor({ timeout: 15000 });
    await page.waitForFunction(() => !/Loading/.test(document.querySelector('#system-ops').innerText), null, { timeout: 15000 });
    assert.match(await page.locator('#system-facts').innerText(), /wall time \d+(\.\d+)? (ns|us|ms|s)/);
    assert.ok(await page.locator('#system-busy tr').count() > 1, 'busy time rows');
    assert.ok(await page.locator('#system-ops tr').count() > 1, 'operator rows');
    const table = await page.locator('#device-profiles tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.innerText.trim())));
    assert.deepEqual(table.map((r) => [r[0], r[1]]), devices.map((d) => [d.name, String(d.nc)]), 'one row per device profile: name, LNC');
    for (const r of table) {
      assert.match(r[3], /^\d+(\.\d+)? (ns|us|ms|s)$/, `total duration ${r[3]}`);
      assert.match(r[5], /^\d+(\.\d+)? %$/, `MFU ${r[5]}`);
    }
    await page.screenshot({ path: path.join(SHOTS, 'viewer-system-profile.png'), fullPage: true });
    await page.locator('#device-profiles a', { hasText: DEV }).click();
    await page.waitForURL(new RegExp(`/view/${DEV}`));
    await waitLoaded(page);
    assert.equal(await page.locator('#crumb-system').innerText(), 'demo', 'a link back to the system profile');
    const st = await viewState(page);
    assert.equal(await page.locator('#crumb-system').getAttribute('href'), `/view/demo?start=${st.start}&end=${st.end}`,
      'the trail links back to the system profile at the same window');
  });

  await t.test('the timeline canvas painted every instruction track', async () => {
    const st = await viewState(page);
    assert.ok(st.drawnEvents > 0, 'events were drawn');
    const rows = await paintedByRow(page);
    for (const tr of expectedTracks) {
      const row = rows.find((r) => r.table === 'Instruction' && r.track === tr);
      assert.ok(row, `a row for Instruction track ${tr}`);
      assert.ok(row.painted > 0, `pixels painted on track ${tr}`);
    }
    const groups = st.rows.filter((r) => r.kind === 'group').map((r) => r.label);
    assert.ok(groups.includes('Compute engines') && groups.includes('DMA queues'), `groups: ${groups}`);
  });

  await t.test('keys, drag and wheel pan and zoom, and the URL follows', async () => {
    // Each step starts from the settled window: under load the previous step's URL may
    // still be on its way, and would pass for this step's change.
    let r0 = urlRange(page);
    await page.keyboard.press('w');
    let r1 = await waitUrlChange(page, r0);
    assert.ok(r1.end - r1.start < r0.end - r0.start, 'W zooms in');
    await waitLoaded(page);

    await waitLoaded(page);
    r0 = urlRange(page);
    await page.keyboard.press('d');
    r1 = await waitUrlChange(page, r0);
    assert.ok(r1.start > r0.start, 'D pans right');
    assert.ok(Math.abs(Number((r1.end - r1.start) - (r0.end - r0.start))) <= 2, 'panning keeps the span');

    await waitLoaded(page);
    r0 = urlRange(page);
    await page.keyboard.press('ArrowLeft');
    r1 = await waitUrlChange(page, r0);
    assert.ok(r1.start < r0.start, 'ArrowLeft pans left');

    await waitLoaded(page);
    r0 = urlRange(page);
    const box = await page.locator('#timeline').boundingBox();
    await page.mouse.move(box.x + 800, box.y + 12);      // on the axis
    await page.mouse.down();
    await page.mouse.move(box.x + 600, box.y + 12, { steps: 5 });
    await page.mouse.up();
    r1 = await waitUrlChange(page, r0);
    assert.ok(r1.start > r0.start, 'dragging the axis left moves the window later');

    await waitLoaded(page);
    r0 = urlRange(page);
    await page.mouse.move(box.x + 700, box.y + 200);
    await page.mouse.wheel(0, -400);
    r1 = await waitUrlChange(page, r0);
    assert.ok(r1.end - r1.start < r0.end - r0.start, 'wheel up zooms in');

    await waitLoaded(page);
    r0 = urlRange(page);
    await page.keyboard.down('Shift');
    await page.mouse.wheel(0, 300);
    await page.keyboard.up('Shift');
    r1 = await waitUrlChange(page, r0);
    assert.ok(r1.start > r0.start && Math.abs(Number((r1.end - r1.start) - (r0.end - r0.start))) <= 2, 'Shift+wheel pans');

    await waitLoaded(page);
    r0 = urlRange(page);
    await page.keyboard.press('s');
    r1 = await waitUrlChange(page, r0);
    assert.ok(r1.end - r1.start > r0.end - r0.start, 'S zooms out');
    await page.keyboard.press('0');     // whole profile again
    await waitLoaded(page);
  });

  let selectedUrl;
  await t.test('hover shows a tooltip, click opens Event Details and the URL keeps it', async () => {
    const rows = await paintedByRow(page);
    const row = rows.find((r) => r.table === 'Instruction' && r.painted > 0);
    const box = await page.locator('#timeline').boundingBox();
    await page.mouse.move(box.x + row.firstX + 0.5, box.y + row.y);
    const tip = page.locator('#tooltip');
    await tip.waitFor({ state: 'visible', timeout: 15000 });
    const text = await tip.innerText();
    assert.match(text, /Instruction/);
    assert.match(text, /opcode: \S+/);
    assert.match(text, /\d+(\.\d+)? (ns|us|ms|s) – /, 'time window');
    await page.waitForFunction(() => /operands:/.test(document.querySelector('#tooltip').innerText), null, { timeout: 15000 });

    await page.mouse.down();
    await page.mouse.up();
    await page.waitForURL(/event=Instruction%3A\d+|event=Instruction:\d+/);
    selectedUrl = page.url();
    await page.waitForFunction(() => document.querySelectorAll('#details td.k').length > 0);
    const names = await page.locator('#details td.k').allInnerTexts();
    assert.deepEqual(names, schemaFields('Instruction'), 'every Instruction field, in schema order');

    await page.goto(selectedUrl);
    await waitLoaded(page);
    assert.equal(page.url(), selectedUrl, 'the link reopens the same window and selection');
    await page.waitForFunction(() => document.querySelectorAll('#details td.k').length > 0);
  });

  await t.test('Export to CSV: two tables, two files equal to nxprof export-csv', async () => {
    const r0 = urlRange(page);
    await page.keyboard.press('w');     // a window smaller than the profile
    await waitUrlChange(page, r0);
    await waitLoaded(page);
    const st = await viewState(page);
    await page.click('#export-open');
    const dlg = page.locator('#export-dialog');
    await dlg.waitFor({ state: 'visible' });
    assert.ok(await page.locator('#export-sampled').isChecked(), 'sampling is on by default');
    for (const cb of await page.locator('#export-dialog input[name=table]').all()) {
      const v = await cb.getAttribute('value');
      const want = v === 'Instruction' || v === 'DmaPacketAggregated';
      if ((await cb.isChecked()) !== want) await cb.click();
    }
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    await page.click('#export-go');
    await dlg.waitFor({ state: 'hidden' });
    await until(() => downloads.length >= 2, 'two downloads');
    assert.equal(downloads.length, 2, 'two files downloaded');
    const outDir = path.join(tmp, 'cli');
    execFileSync(BIN, ['export-csv', profileDir, '--start', st.start, '--end', st.end, '--width', String(st.width),
      '--tables', 'Instruction,DmaPacketAggregated', '--out', outDir]);
    for (const d of downloads) {
      const name = d.suggestedFilename();
      const m = name.match(new RegExp(`^${DEV}_(\\w+)_(\\d+)_(\\d+)\\.csv$`));
      assert.ok(m, `file name ${name}`);
      assert.equal(m[2], st.start); assert.equal(m[3], st.end);
      const file = path.join(tmp, name);
      await d.saveAs(file);
      const got = fs.readFileSync(file, 'utf8');
      const want = fs.readFileSync(path.join(outDir, `${m[1]}.csv`), 'utf8');
      assert.ok(want.split('\n').length > 2, `${m[1]}: the window holds rows`);
      assert.equal(got, want, `${m[1]}.csv equals nxprof export-csv`);
    }
    // the export was sampled: the same window unsampled holds more Instruction rows
    const fullDir = path.join(tmp, 'cli-full');
    execFileSync(BIN, ['export-csv', profileDir, '--start', st.start, '--end', st.end, '--no-sample',
      '--tables', 'Instruction', '--out', fullDir]);
    const lines = (f) => fs.readFileSync(f, 'utf8').split('\n').length;
    assert.ok(lines(path.join(fullDir, 'Instruction.csv')) > lines(path.join(outDir, 'Instruction.csv')),
      'sampling at the timeline width dropped rows');
  });

  await t.test('a truncated export shows a notice', async () => {
    await page.route('**/export/*.csv*', async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, headers: { ...res.headers(), 'x-nxprof-truncated': 'true', 'x-nxprof-rows': '3' } });
    });
    await page.click('#export-open');
    for (const cb of await page.locator('#export-dialog input[name=table]').all()) {
      const want = (await cb.getAttribute('value')) === 'Instruction';
      if ((await cb.isChecked()) !== want) await cb.click();
    }
    await page.click('#export-go');
    await page.locator('.notice', { hasText: 'truncated' }).waitFor({ timeout: 10000 });
    await page.unroute('**/export/*.csv*');
  });

  // SBUF/PSUM lanes: the device profile has SbufUsage and PsumUsage (synth writes
  // MEMORY_ALLOCATIONS), so both lanes are laid out, labelled, painted, and one /usage
  // request per window asks for every usage table the profile has (and no system table:
  // those are in the system profile); a copy of the profile without those two files has
  // the DMA/HBM lanes but neither memory lane.
  const usageRequests = [];
  const SYS_LANES = ['CPU (host)', 'Host memory', 'Device HBM'];
  const SYS_TABLES = 'CpuUsage,HostMemUsage,SystemProfileHbmUsage';
  // The tables each /usage request of profile `name` asked for.
  page.on('request', (r) => {
    const u = new URL(r.url()), m = u.pathname.match(/^\/api\/profiles\/(.+)\/usage$/);
    if (m) usageRequests.push({ profile: decodeURIComponent(m[1]), tables: u.searchParams.get('tables') });
  });
  const usageOf = (name) => usageRequests.filter((r) => r.profile === name).map((r) => r.tables);
  const laneRows = async () => (await viewState(page)).rows.filter((r) => r.kind === 'lane');
  // Per lane row, the plot pixels of its bottom line that are painted (not grey).
  const paintedPixels = (rows) => page.evaluate((lanes) => {
    const c = document.querySelector('#timeline');
    const ctx = c.getContext('2d');
    const dpr = c.width / c.getBoundingClientRect().width;
    return lanes.map((r) => {
      const y = Math.floor((r.y + r.h - 1.5) * dpr), x0 = Math.ceil(182 * dpr);
      const img = ctx.getImageData(x0, y, c.width - x0, 1).data;
      let n = 0;
      for (let i = 0; i < img.length; i += 4) if (!(Math.abs(img[i] - img[i + 1]) < 8 && Math.abs(img[i + 1] - img[i + 2]) < 8)) n++;
      return n;
    });
  }, rows);
  await t.test('SBUF and PSUM usage lanes: labelled, painted, a percent readout on hover', async () => {
    const files = fs.readdirSync(profileDir);
    assert.ok(files.some((f) => /^SbufUsage(_\d+)?\.parquet$/.test(f)) && files.some((f) => /^PsumUsage(_\d+)?\.parquet$/.test(f)),
      'the device profile has SbufUsage and PsumUsage');
    usageRequests.length = 0;
    await page.goto(`${url}/view/${DEV}`);
    await waitLoaded(page);
    await page.waitForFunction(() => window.nxViewer.state.rows.some((r) => r.label === 'SBUF usage'), null, { timeout: 15000 });
    await waitLoaded(page);
    const lanes = await laneRows();
    assert.deepEqual(lanes.map((r) => r.label), ['DMA throughput', 'HBM usage', 'SBUF usage', 'PSUM usage', 'Pending DMA']);
    assert.ok(usageOf(DEV).length >= 1);
    for (const q of usageOf(DEV)) assert.equal(q, 'DmaUsage,HbmUsage,SbufUsage,PsumUsage,PendingDma', 'one /usage request with every usage table');
    // painted: the lane's fill reaches its bottom line wherever the series has samples
    const painted = await paintedPixels(lanes);
    lanes.forEach((r, i) => assert.ok(painted[i] > 0, `${r.label} lane painted`));
    const box = await page.locator('#timeline').boundingBox();
    for (const label of ['SBUF usage', 'PSUM usage']) {
      const r = lanes.find((x) => x.label === label);
      await page.mouse.move(box.x + 600, box.y + r.y + r.h / 2);
      const tip = page.locator('#tooltip');
      await tip.waitFor({ state: 'visible', timeout: 10000 });
      const text = await tip.innerText();
      assert.match(text, new RegExp(`${label} at \\d`), text);
      assert.match(text, /core \d+: (\d+(\.\d+)? %|no sample)/, text);
      await page.mouse.move(box.x + 5, box.y + 5);
    }
  });

  // The device profile copied as `name`, without the tables whose file names match `drop` and
  // with the system profile's files whose names match `add`, opened in the viewer until the
  // lane `waitLabel` is there: its lane labels (usageOf(name) then gives what the page asked
  // /usage for).
  const laneLabelsOf = async (name, drop, add, waitLabel) => {
    const bare = path.join(globalDir, `${name}@latest`);
    fs.cpSync(profileDir, bare, { recursive: true, dereference: true });
    for (const f of fs.readdirSync(bare)) if (drop && drop.test(f)) fs.rmSync(path.join(bare, f));
    for (const f of fs.readdirSync(systemDir)) if (add && add.test(f)) fs.copyFileSync(path.join(systemDir, f), path.join(bare, f));
    usageRequests.length = 0;
    await page.goto(`${url}/view/${name}`);
    await waitLoaded(page);
    await page.waitForFunction((l) => window.nxViewer.state.rows.some((r) => r.label === l), waitLabel, { timeout: 15000 });
    await waitLoaded(page);
    return (await laneRows()).map((r) => r.label);
  };

  await t.test('a profile without SbufUsage/PsumUsage has no memory lanes', async () => {
    const labels = await laneLabelsOf('nomem', /^(SbufUsage|PsumUsage)(_\d+)?\.parquet$/, null, 'HBM usage');
    assert.deepEqual(labels, ['DMA throughput', 'HBM usage', 'Pending DMA']);
    assert.ok(usageOf('nomem').length >= 1);
    for (const q of usageOf('nomem')) assert.equal(q, 'DmaUsage,HbmUsage,PendingDma');
  });

  // CPU (host), Host memory, Device HBM, on a copy of the device profile given the system
  // profile's three usage tables: the hover readout of the CPU lane at the plot's left edge
  // (pixel 0, whose window starts at the view's start S) is the largest "average"
  // util_percent among the sample in force at S (the latest at or before it) and any sample
  // inside that pixel, formatted as the viewer's percent rule (2 decimals below 10, else 1).
  await t.test('CPU (host), Host memory and Device HBM lanes: labelled, painted, readouts on hover', async () => {
    const labels = await laneLabelsOf('withsys', null, /^(CpuUsage|HostMemUsage|SystemProfileHbmUsage)(_\d+)?\.parquet$/, 'Device HBM');
    assert.deepEqual(labels, ['DMA throughput', 'HBM usage', 'SBUF usage', 'PSUM usage', 'Pending DMA', ...SYS_LANES]);
    assert.ok(usageOf('withsys').length >= 1);
    for (const q of usageOf('withsys')) assert.equal(q, `DmaUsage,HbmUsage,SbufUsage,PsumUsage,PendingDma,${SYS_TABLES}`);
    const lanes = (await laneRows()).filter((r) => SYS_LANES.includes(r.label));
    assert.deepEqual(lanes.map((r) => r.label), SYS_LANES);
    const painted = await paintedPixels(lanes);
    // a gauge sample holds over the whole window: (nearly) every plot pixel is painted
    const st = await viewState(page);
    lanes.forEach((r, i) => assert.ok(painted[i] > st.width * 0.9, `${r.label} lane painted (${painted[i]} of ${st.width} px)`));

    const S = BigInt(st.start), E = BigInt(st.end), pxNs = Number(E - S) / st.width;
    const cpu = (await duck.runAndReadAll(`SELECT timestamp AS t, util_percent AS v FROM read_parquet('${path.join(systemDir, 'CpuUsage*.parquet')}')
                                            WHERE cpu_id = 'average' ORDER BY timestamp`)).getRowObjects();
    const atS = cpu.filter((r) => BigInt(r.t) <= S).pop();
    const inPx = cpu.filter((r) => BigInt(r.t) > S && Number(BigInt(r.t) - S) < pxNs);
    assert.ok(atS, 'a CPU sample before the window');
    const best = Math.max(atS.v, ...inPx.map((r) => r.v));
    const pct = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} %`;
    const box = await page.locator('#timeline').boundingBox();
    const tip = page.locator('#tooltip');
    const cpuLane = lanes.find((r) => r.label === 'CPU (host)');
    await page.mouse.move(box.x + 180.2, box.y + cpuLane.y + cpuLane.h / 2);
    await tip.waitFor({ state: 'visible', timeout: 10000 });
    let text = await tip.innerText();
    assert.match(text, /CPU \(host\) at /, text);
    assert.ok(text.includes(`CPU average: ${pct(best)}`), `${text} shows CPU average: ${pct(best)}`);
    await page.mouse.move(box.x + 5, box.y + 5);
    const hbm = lanes.find((r) => r.label === 'Device HBM');
    await page.mouse.move(box.x + 700, box.y + hbm.y + hbm.h / 2);
    await tip.waitFor({ state: 'visible', timeout: 10000 });
    text = await tip.innerText();
    assert.match(text, /Device HBM at \d/, text);
    assert.match(text, /device 0 hbm 0: \d+(\.\d)? (B|KiB|MiB|GiB)/, text);
    await page.mouse.move(box.x + 5, box.y + 5);
  });

  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
