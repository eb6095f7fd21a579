// js.viewer_annotations: saved annotations in the viewer (docs/viewer.md "Annotations"), in
// Debian's chromium driven by playwright-core against the real `nxprof serve` on a device
// profile of a synthesized capture. Expectations come from the file the server wrote in the
// profile (read here with fs and JSON.parse) and from the view's own window, never from the
// viewer's annotation code:
// - a right-click adds a marker, its label is typed in the panel; a Shift-drag area becomes
//   a named region with "Add region"; both are saved (the file holds them at the times shown);
// - after a reload the marker and the region are back, and painted (the region's tint);
// - Export downloads the same document; Import adds a file's markers, and a file the server
//   refuses (a bad colour) changes nothing and says why;
// - NXPROF_SCREENSHOT=<png> keeps a screenshot of the annotated view.
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, tempDir } from './lib/harness.mjs';
import { SKIP, GUTTER, openPage, settle, viewState, pixel } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_annotations: ${SKIP}`);

const FILE = '.nxprof-annotations.json';
// The document with every time as a BigInt (the server writes those beyond 2^53 as strings).
const norm = (doc) => ({
  version: doc.version,
  markers: (doc.markers || []).map((m) => ({ ...m, time_ns: BigInt(m.time_ns) })),
  regions: (doc.regions || []).map((r) => ({ ...r, start_ns: BigInt(r.start_ns), end_ns: BigInt(r.end_ns) })),
});
const near = (a, b, what) => assert.ok(BigInt(a) - BigInt(b) <= 1n && BigInt(b) - BigInt(a) <= 1n, `${what}: ${a} vs ${b}`);

test('annotations are saved with the profile, reloaded, exported and imported', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-annot-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  execFileSync(BIN, ['synth', '--preset', 'tiny', '--cores', '1', '--seed', '3', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'demo'], { stdio: 'ignore' });
  const DEV = 'demo-nd0-nc0';
  const file = path.join(data, 'profiles', 'global', `${DEV}@latest`, FILE);
  const onDisk = () => JSON.parse(fs.readFileSync(file, 'utf8'));

  const { url, page, pageErrors } = await openPage(t, BIN, data, { viewport: { width: 1400, height: 900 }, downloads: true });
  const box = () => page.locator('#timeline').boundingBox();
  const saved = () => page.waitForFunction(() => {
    const a = window.nxViewer.state.annotations;
    return a && a.state === 'saved';
  }, null, { timeout: 20000 });
  const open = async () => { await page.goto(`${url}/view/${DEV}`); await settle(page); await saved(); };

  let marker, area;
  await t.test('a marker and a region, labelled and named, are saved in the profile', async () => {
    await open();
    assert.equal(fs.existsSync(file), false, 'nothing saved before the first change');
    const b = await box();
    let st = await viewState(page);
    const y = st.headerH + 20;
    await page.mouse.click(b.x + GUTTER + 200, b.y + 15, { button: 'right' });
    await page.waitForFunction(() => window.nxViewer.state.markers.length === 1, null, { timeout: 15000 });
    await page.fill('#annot-list .annot-row[data-kind=marker] input', 'loss spike');
    await page.press('#annot-list .annot-row[data-kind=marker] input', 'Tab');
    await page.keyboard.down('Shift');
    await page.mouse.move(b.x + GUTTER + 400, b.y + y);
    await page.mouse.down();
    await page.mouse.move(b.x + GUTTER + 500, b.y + y + 5, { steps: 4 });
    await page.mouse.move(b.x + GUTTER + 650, b.y + y + 5, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction(() => window.nxViewer.state.area, null, { timeout: 15000 });
    await page.fill('#region-name', 'warm-up');
    await page.click('#region-add');
    await page.waitForFunction(() => window.nxViewer.state.annotations.document.regions.length === 1);
    await saved();
    st = await viewState(page);
    marker = st.markers[0];
    area = st.area;
    const doc = onDisk();
    assert.equal(doc.version, 1);
    assert.equal(doc.markers.length, 1);
    assert.equal(doc.markers[0].label, 'loss spike');
    near(doc.markers[0].time_ns, marker, 'the marker at the time the view shows');
    assert.equal(doc.regions.length, 1);
    assert.equal(doc.regions[0].name, 'warm-up');
    near(doc.regions[0].start_ns, area.start, 'the region starts where the area does');
    near(doc.regions[0].end_ns, area.end, 'and ends where it ends');
    // the region's width on screen is the drag's
    const nsPerPx = Number(BigInt(st.end) - BigInt(st.start)) / st.width;
    const px = Number(BigInt(doc.regions[0].end_ns) - BigInt(doc.regions[0].start_ns)) / nsPerPx;
    assert.ok(Math.abs(px - 250) <= 2, `a 250 px region (${px})`);
  });

  await t.test('after a reload they are back and painted', async () => {
    await page.keyboard.press('Escape');
    await open();
    const st = await viewState(page);
    assert.deepEqual(st.markers, [BigInt(onDisk().markers[0].time_ns).toString()]);
    assert.deepEqual(norm(st.annotations.document), norm(onDisk()));
    assert.equal(await page.inputValue('#annot-list .annot-row[data-kind=marker] input'), 'loss spike');
    assert.equal(await page.inputValue('#annot-list .annot-row[data-kind=region] input'), 'warm-up');
    // the region's tint over an empty part of the tracks: green above red and blue
    const d = onDisk().regions[0];
    const x = GUTTER + Number(BigInt(d.start_ns) + (BigInt(d.end_ns) - BigInt(d.start_ns)) / 2n - BigInt(st.start)) /
      (Number(BigInt(st.end) - BigInt(st.start)) / st.width);
    const column = [];
    for (let y = st.headerH + 20; y < st.viewH - 5; y += 7) column.push(await pixel(page, x, y));
    assert.ok(column.some(([r, g, b]) => g > r + 8 && g > b + 3), `a green tint in the region (${JSON.stringify(column.slice(0, 8))})`);
    if (process.env.NXPROF_SCREENSHOT) {
      await page.locator('#annotations').scrollIntoViewIfNeeded();
      await page.screenshot({ path: process.env.NXPROF_SCREENSHOT });
    }
  });

  await t.test('Export downloads the saved document', async () => {
    const dl = page.waitForEvent('download', { timeout: 20000 });
    await page.click('#annot-export');
    const d = await dl;
    assert.equal(d.suggestedFilename(), `${DEV}-annotations.json`);
    const got = JSON.parse(fs.readFileSync(await d.path(), 'utf8'));
    assert.deepEqual(norm(got), norm(onDisk()));
  });

  await t.test('Import adds a file\'s markers; a refused file changes nothing', async () => {
    const extra = path.join(tmp, 'extra.json');
    const at = (BigInt(marker) + 1000n).toString();
    fs.writeFileSync(extra, JSON.stringify({ version: 1, markers: [{ time_ns: at, label: 'imported', colour: '#2563eb' }] }));
    await page.setInputFiles('#annot-file', extra);
    await page.waitForFunction(() => window.nxViewer.state.markers.length === 2, null, { timeout: 15000 });
    await saved();
    let doc = onDisk();
    assert.deepEqual(doc.markers.map((m) => m.label).sort(), ['imported', 'loss spike']);
    assert.equal(doc.regions.length, 1, 'the region is kept');
    const bad = path.join(tmp, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ version: 1, markers: [{ time_ns: at, label: 'x', colour: 'red' }] }));
    await page.setInputFiles('#annot-file', bad);
    await page.waitForFunction(() => [...document.querySelectorAll('#notices .notice')].some((n) => /bad\.json/.test(n.textContent)));
    const text = await page.locator('#notices').innerText();
    assert.match(text, /markers\[2\]\.colour: not a colour/);
    doc = onDisk();
    assert.equal(doc.markers.length, 2, 'a refused import writes nothing');
    assert.equal((await viewState(page)).markers.length, 2);
    assert.deepEqual(pageErrors, []);
  });
});
