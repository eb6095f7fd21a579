// js.viewer_system: the System Trace Viewer (a system profile's page) in Debian's chromium,
// driven by playwright-core, against the real `nxprof serve`, on two profiles: the system
// profile of a synthesized llama-layer capture (`demo`: framework threads, runtime and
// hardware events per NeuronCore, a device profile per NeuronCore) and a real PyTorch
// profiler trace (tests/data/chrome-traces/rank-0...pt.trace.json.gz, processed alone: CPU
// threads, GPU streams, nested operators, kernels).
//
// Every expected value comes from DuckDB over the profile's Parquet files (the track rule
// of docs/query.md as SQL, tests/e2e/js/lib/browser.mjs), never from the viewer's code:
// - one row per SystemProfileEvents track, each painted, under group headers whose event
//   counts add up to the table's rows; nested slices (a PyTorch thread has several levels);
// - event names drawn inside wide blocks (nxViewer.state.names), on painted pixels;
// - the grouping modes (Default, Process, Thread, NeuronCore, Instance) rearrange the same
//   tracks and stay in the URL;
// - hover tooltip; click -> Event Details with every field of the schema and the args of
//   extra_attributes_json; its flows (events sharing a flow id) listed and drawn;
// - a device execution on a NeuronCore's track offers "Open in Device Trace Viewer" at
//   that event's window on the device profile of that NeuronCore; the device view's trail
//   links back to the system profile at the same window;
// - search by name with next/previous over every event: "k of N" with N the matches, the
//   selected event the k-th match in (start, ordinal) order, the query in the URL;
// - an area selection over a PyTorch thread gives, per event name, the count and the time
//   clipped to the area that DuckDB computes from every event of that track;
// - markers (right-click) with the time between them; the help overlay (? / Esc);
// - a window with no events says so; Export offers only the tables the profile has.
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, TRACK_SQL, GUTTER, openPage, settle, viewState, paintedRows, pixel } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_system: ${SKIP}`);
const FIXTURE = 'rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz';

test('System Trace Viewer in chromium against nxprof serve', { skip: SKIP, timeout: 280000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-sys-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data'), ptIn = path.join(tmp, 'pt-in');
  execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', '20000', '--seed', '7', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'demo'], { stdio: 'ignore' });
  fs.mkdirSync(ptIn);
  fs.copyFileSync(path.join(TEST_DATA, 'chrome-traces', FIXTURE), path.join(ptIn, FIXTURE));
  execFileSync(BIN, ['process', ptIn, '--data-path', data, '--display-name', 'pt'], { stdio: 'ignore' });
  const globalDir = path.join(data, 'profiles', 'global');
  const { sql } = await openDuckDB();
  const events = (p) => `read_parquet('${path.join(globalDir, `${p}@latest`, 'SystemProfileEvents*.parquet')}', file_row_number = true)`;
  const tracksOf = async (p) => (await sql(`SELECT ${TRACK_SQL.SystemProfileEvents} AS t, count(*) AS n FROM ${events(p)} GROUP BY 1 ORDER BY 1`))
    .map((r) => ({ track: r.t, count: Number(r.n) }));
  const fields = (await sql(`DESCRIBE SELECT * FROM ${events('demo')}`)).map((r) => r.column_name).filter((c) => c !== 'file_row_number');
  const origin = async (p) => BigInt((await sql(`SELECT min(start_ts)::VARCHAR AS s FROM ${events(p)}`))[0].s);
  // A process group is labelled "process <pid>", or "<process_name> (<pid>)" when the trace
  // named the process (docs/processing.md "Process and thread names"; synth names its python).
  const procLabels = new Set((await sql(`SELECT DISTINCT json_extract_string(extra_attributes_json, '$.process_name') || ' (' || process_id || ')' AS l
      FROM ${events('demo')} WHERE trace_event_source = 'framework' AND json_extract_string(extra_attributes_json, '$.process_name') IS NOT NULL`)).map((r) => r.l));
  const isProcess = (label) => /^process /.test(label) || procLabels.has(label);

  const { url, page, pageErrors } = await openPage(t, BIN, data, { downloads: true });
  const sysRows = async () => (await viewState(page)).rows.filter((r) => r.kind === 'track' && r.table === 'SystemProfileEvents');
  const box = async () => page.locator('#timeline').boundingBox();

  await t.test('demo: one painted row per SystemProfileEvents track, group counts add up', async () => {
    const want = await tracksOf('demo');
    await page.goto(`${url}/view/demo`);
    await settle(page);
    const rows = await sysRows();
    assert.deepEqual(rows.map((r) => r.track).sort(), want.map((w) => w.track).sort(), 'a row per track');
    for (const w of want) assert.equal(rows.find((r) => r.track === w.track).count, w.count, `${w.track}: its event count`);
    const painted = await paintedRows(page);
    for (const w of want) assert.ok(painted.find((r) => r.track === w.track).painted > 0, `track ${w.track} painted`);
    const st = await viewState(page);
    const top = st.rows.find((r) => r.kind === 'group' && r.depth === 0);
    assert.equal(top.count, want.reduce((a, w) => a + w.count, 0), 'the group header counts every event');
    assert.ok(st.rows.some((r) => r.kind === 'group' && /^instance /.test(r.label)), 'Default groups by instance');
    assert.ok(st.rows.some((r) => r.kind === 'group' && isProcess(r.label)), '... then process');
    assert.ok(rows.some((r) => /^NeuronCore \d+$/.test(r.label)), 'NeuronCore tracks');
    // the usage lanes, then a counter lane per counter of the synth's trace.json (its "C" events)
    const counters = await sql(`SELECT DISTINCT name, process_id::VARCHAR AS pid FROM ${events('demo')}
                                WHERE trace_event_source = 'framework' AND starts_with(extra_attributes_json, '{"ph":"C"')
                                ORDER BY name, pid`);
    assert.ok(counters.length > 0, 'the demo has counter events');
    assert.deepEqual(st.rows.filter((r) => r.kind === 'lane').map((r) => r.label),
                     ['CPU (host)', 'Host memory', 'Device HBM', ...counters.map((c) => `${c.name} (pid ${c.pid})`)]);
    // the Device Profiles table stays on the page, under the timeline
    assert.ok(await page.locator('#device-profiles tbody tr a').count() >= 2);
  });

  // The demo's device executions: hardware events on a NeuronCore's track.
  const execs = (await sql(`SELECT file_row_number AS o, start_ts::VARCHAR AS s, end_ts::VARCHAR AS e, nc_idx, name, flow_id, extra_attributes_json AS x
                             FROM ${events('demo')} WHERE name = 'device_execution' ORDER BY nc_idx`));
  const t0 = await origin('demo');

  await t.test('demo: names inside wide blocks, grouping modes rearrange the same tracks', async () => {
    const S = BigInt(execs[0].s) - 1000000n, E = BigInt(execs[0].e) + 1000000n;
    await page.goto(`${url}/view/demo?start=${S}&end=${E}`);
    await settle(page);
    const st = await viewState(page);
    const names = st.names.filter((n) => n.name === 'device_execution');
    assert.ok(names.length >= 2, `device_execution written in its blocks (${JSON.stringify(st.names.map((n) => n.text))})`);
    const px = await pixel(page, names[0].x - 2, names[0].y);
    assert.ok(!(px[0] > 240 && px[1] > 240 && px[2] > 240), 'the name sits on a painted block');
    const tracks = (await sysRows()).map((r) => r.track).sort();
    const groupsIn = async () => (await viewState(page)).rows.filter((r) => r.kind === 'group').map((r) => r.label);
    for (const [mode, check] of [
      ['thread', (g) => g.indexOf('Threads') >= 0 && g.indexOf('Threads') < g.indexOf('NeuronCores')],
      ['neuroncore', (g) => g.indexOf('NeuronCores') >= 0 && g.indexOf('NeuronCores') < g.indexOf('Threads')],
      ['process', (g) => g.some(isProcess) && g.includes('NeuronCores') && !g.some((x) => /^instance /.test(x))],
      ['instance', (g) => g.some((x) => /^instance /.test(x)) && !g.some(isProcess)],
      ['default', (g) => g.some((x) => /^instance /.test(x)) && g.some(isProcess)]]) {
      await page.selectOption('#group-mode', mode);
      await settle(page);
      const g = await groupsIn();
      assert.ok(check(g), `${mode}: groups ${g}`);
      assert.deepEqual((await sysRows()).map((r) => r.track).sort(), tracks, `${mode}: the same tracks`);
      const q = new URL(page.url()).searchParams.get('group');
      assert.equal(q, mode === 'default' ? null : mode, `${mode} in the URL`);
    }
  });

  let devUrl;
  await t.test('demo: a device execution -> details, args, flows, Open in Device Trace Viewer, trail back', async () => {
    const ex = execs[0];
    const ev = (await page.evaluate((o) => window.nxViewer.events((e) => e.ordinal === o), Number(ex.o)))[0];
    assert.ok(ev, 'the device execution is drawn');
    const b = await box();
    await page.mouse.move(b.x + ev.x + Math.min(ev.w / 2, 40), b.y + ev.y + ev.h / 2);
    const tip = page.locator('#tooltip');
    await tip.waitFor({ state: 'visible', timeout: 10000 });
    assert.match(await tip.innerText(), /device_execution/);
    await page.mouse.down(); await page.mouse.up();
    await page.waitForFunction(() => document.querySelectorAll('#details table.fields td.k').length > 0, null, { timeout: 15000 });
    assert.deepEqual(await page.locator('#details table.fields td.k').allInnerTexts(), fields, 'every field in schema order');
    const args = JSON.parse(ex.x);
    assert.deepEqual(await page.locator('#details table.args td.k').allInnerTexts(), Object.keys(args), 'args from extra_attributes_json');
    // flows: the events sharing one of its flow ids
    const ids = ex.flow_id;
    const sharing = await sql(`SELECT file_row_number AS o, start_ts FROM ${events('demo')} WHERE file_row_number <> ${ex.o}
                               AND list_has_any(flow_id, [${ids.map((i) => `'${i}'`).join(',')}]::VARCHAR[]) ORDER BY o`);
    assert.ok(sharing.length > 0, 'the synthesized execution shares a flow id');
    await page.waitForFunction(() => window.nxViewer.state.flows, null, { timeout: 15000 });
    const fl = (await viewState(page)).flows;
    assert.deepEqual([...fl.predecessors, ...fl.successors].map((r) => r.ordinal).sort((a, c) => a - c), sharing.map((r) => Number(r.o)));
    assert.equal(await page.locator('#details ul.flows a').count(), sharing.length, 'a go to link per flow');
    // drill-down: the device profile of that NeuronCore, at the execution's window
    const dev = (await sql(`SELECT device_profile_name AS n FROM read_parquet('${path.join(globalDir, 'demo@latest', 'DeviceProfileList.parquet')}') WHERE nc_id = ${ex.nc_idx}`))[0].n;
    const link = page.locator('#details a.open-device');
    await link.waitFor({ timeout: 10000 });
    assert.equal(await link.getAttribute('href'), `/view/${dev}?start=${ex.s}&end=${ex.e}`);
    await link.click();
    await page.waitForURL(new RegExp(`/view/${dev}\\?`));
    await settle(page);
    const st = await viewState(page);
    assert.equal(st.start, ex.s); assert.equal(st.end, ex.e);
    assert.ok(st.drawnEvents > 0, 'the device view draws that execution');
    const crumb = page.locator('#crumb-system');
    await page.waitForFunction(() => document.querySelector('#crumb-system'), null, { timeout: 10000 });
    devUrl = page.url();
    assert.equal(await crumb.getAttribute('href'), `/view/demo?start=${ex.s}&end=${ex.e}`, 'the trail goes back at the same window');
    await crumb.click();
    await page.waitForURL(/\/view\/demo\?/);
    await settle(page);
    const back = await viewState(page);
    assert.equal(back.start, ex.s); assert.equal(back.end, ex.e);
    assert.equal(back.kind, 'system');
  });

  await t.test('demo: search by name, next and previous, over every event', async () => {
    const q = 'nrt_';
    const matches = await sql(`SELECT file_row_number AS o FROM ${events('demo')} WHERE contains(lower(name), '${q}') ORDER BY start_ts, file_row_number`);
    assert.ok(matches.length >= 3);
    await page.goto(`${url}/view/demo`);
    await settle(page);
    await page.selectOption('#search-field', 'name');
    await page.fill('#search-q', q);
    const step = async (key, k) => {
      await page.press('#search-q', key);
      await page.waitForFunction((want) => document.querySelector('#search-count').textContent === want, `${k} of ${matches.length}`, { timeout: 15000 });
      assert.deepEqual((await viewState(page)).sel, { table: 'SystemProfileEvents', ordinal: Number(matches[k - 1].o) }, `match ${k} selected`);
    };
    await step('Enter', 1);
    await step('Enter', 2);
    await step('Enter', 3);
    await step('Shift+Enter', 2);
    const u = new URL(page.url()).searchParams;
    assert.equal(u.get('q'), q); assert.equal(u.get('field'), 'name');
    assert.equal(u.get('event'), `SystemProfileEvents:${matches[1].o}`);
  });

  await t.test('demo: a window without events says so', async () => {
    const quiet = await sql(`SELECT max(end_ts)::VARCHAR AS e FROM ${events('demo')} WHERE start_ts < ${t0} + 650000000`);
    const nextStart = await sql(`SELECT min(start_ts)::VARCHAR AS s FROM ${events('demo')} WHERE end_ts > ${quiet[0].e}`);
    const gapS = BigInt(quiet[0].e) + 10n, gapE = BigInt(nextStart[0].s) - 10n;
    assert.ok(gapE > gapS, 'the synthesized timeline has a quiet gap');
    await page.goto(`${url}/view/demo?start=${gapS}&end=${gapE}`);
    await settle(page);
    assert.match((await viewState(page)).empty || '', /No events in this window/);
  });

  // The PyTorch fixture.
  const ptTracks = await tracksOf('pt');
  await t.test('PyTorch: a painted row per thread and stream, nested levels, names in blocks', async () => {
    await page.goto(`${url}/view/pt`);
    await settle(page);
    const rows = await sysRows();
    assert.deepEqual(rows.map((r) => r.track).sort(), ptTracks.map((w) => w.track).sort(), 'a row per thread');
    const painted = await paintedRows(page);
    for (const w of ptTracks) {
      const r = painted.find((x) => x.track === w.track);
      if (r) assert.ok(r.painted > 0, `thread ${w.track} painted`);
    }
    assert.ok(rows.some((r) => r.levels >= 3), 'nested operators get several levels');
    assert.deepEqual((await viewState(page)).rows.filter((r) => r.kind === 'lane'), [], 'no usage lanes without usage tables');
    const step = (await sql(`SELECT start_ts::VARCHAR AS s, end_ts::VARCHAR AS e FROM ${events('pt')} WHERE name LIKE 'ProfilerStep#%' ORDER BY start_ts LIMIT 1`))[0];
    await page.goto(`${url}/view/pt?start=${step.s}&end=${step.e}`);
    await settle(page);
    assert.ok((await viewState(page)).names.some((n) => /^ProfilerStep#\d+$/.test(n.text)), 'ProfilerStep written in its block');
    const op = (await sql(`SELECT start_ts::VARCHAR AS s, end_ts::VARCHAR AS e, name FROM ${events('pt')} WHERE name LIKE 'aten::%' ORDER BY duration_ns DESC LIMIT 1`))[0];
    const pad = (BigInt(op.e) - BigInt(op.s)) / 2n;
    await page.goto(`${url}/view/pt?start=${BigInt(op.s) - pad}&end=${BigInt(op.e) + pad}`);
    await settle(page);
    assert.ok((await viewState(page)).names.some((n) => n.name === op.name), `${op.name} written in its block`);
  });

  await t.test('PyTorch: area aggregate over a thread equals DuckDB over its events', async () => {
    const st = await viewState(page);
    const busiest = ptTracks.slice().sort((a, b) => b.count - a.count)[0];
    const row = st.rows.find((r) => r.track === busiest.track);
    const b = await box();
    const x0 = GUTTER + 200, x1 = GUTTER + 700;
    await page.keyboard.down('Shift');
    await page.mouse.move(b.x + x0, b.y + row.y + 4);
    await page.mouse.down();
    await page.mouse.move(b.x + x1, b.y + row.y + 6, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction(() => window.nxViewer.state.aggregate, null, { timeout: 20000 });
    const { area, aggregate } = await viewState(page);
    assert.deepEqual(area.tracks, [`SystemProfileEvents:${busiest.track}`]);
    const S = area.start, E = area.end;
    const want = await sql(`SELECT name AS k, count(*) AS c, sum(least(end_ts, ${E}) - greatest(start_ts, ${S}))::BIGINT AS tot
                            FROM ${events('pt')} WHERE end_ts >= ${S} AND start_ts <= ${E} AND ${TRACK_SQL.SystemProfileEvents} = '${busiest.track}'
                            GROUP BY 1 ORDER BY tot DESC, c DESC, k ASC NULLS LAST`);
    const got = aggregate.tables.find((x) => x.table === 'SystemProfileEvents');
    assert.equal(Number(got.events), want.reduce((a, r) => a + Number(r.c), 0), 'event count');
    const byKey = new Map(got.groups.map((g) => [g.key, g]));
    for (const w of want.slice(0, Math.min(want.length, got.groups.length))) {
      const g = byKey.get(w.k);
      assert.ok(g, `group ${w.k}`);
      assert.equal(Number(g.count), Number(w.c), `${w.k}: count`);
      assert.equal(Number(g.total_ns), Number(w.tot), `${w.k}: total clipped to the area`);
      if (g.self_ns !== null) assert.ok(Number(g.self_ns) <= Number(g.total_ns), `${w.k}: self <= total`);
    }
    const text = await page.locator('#selection').innerText();
    assert.ok(text.includes(String(want[0].k)), 'the panel lists the top name');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => window.nxViewer.state.area === null);
  });

  await t.test('markers show the time between them; ? opens the help, Esc closes it', async () => {
    await settle(page);
    const b = await box();
    const st0 = await viewState(page);
    // contextmenu reaches the page after the click's promise resolves: wait until the
    // number of markers moves off `n`, then check where it went
    const markers = (n) => page.waitForFunction((k) => window.nxViewer.state.markers.length !== k, n, { timeout: 15000 });
    await page.mouse.click(b.x + GUTTER + 300, b.y + 15, { button: 'right' });
    await markers(0);
    await page.mouse.click(b.x + GUTTER + 600, b.y + 15, { button: 'right' });
    await markers(1);
    await settle(page);
    const st = await viewState(page);
    assert.equal(st.markers.length, 2);
    const nsPerPx = Number(BigInt(st0.end) - BigInt(st0.start)) / st0.width;
    const delta = Number(BigInt(st.markers[1]) - BigInt(st.markers[0]));
    assert.ok(Math.abs(delta - 300 * nsPerPx) <= 2 * nsPerPx, `marker delta ${delta} ns for 300 px`);
    const line = [];
    for (let y = st.headerH + 30; y < st.headerH + 40; y++) line.push(await pixel(page, GUTTER + 300, y));
    assert.ok(line.some((px) => px[0] > 180 && px[2] < 100), `a marker line across the tracks (${JSON.stringify(line)})`);
    await page.mouse.click(b.x + GUTTER + 600, b.y + 15, { button: 'right' });
    await markers(2);
    assert.equal((await viewState(page)).markers.length, 1, 'right-click on a marker removes it');
    await page.keyboard.press('m');
    await markers(1);
    assert.equal((await viewState(page)).markers.length, 0, 'M clears them');
    await page.keyboard.press('?');
    await page.waitForFunction(() => document.querySelector('#help-dialog').open);
    assert.match(await page.locator('#help-dialog').innerText(), /Shift.*drag/s);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('#help-dialog').open);
  });

  await t.test('Export: a box per table the schema offers, enabled where the profile has it', async () => {
    // /api/schema marks which timeline tables the dialog offers; the PyTorch profile has
    // only SystemProfileEvents of them, so that box alone is enabled (and checked).
    const offered = (await (await fetch(`${url}/api/schema`)).json()).viewer.timelines.filter((x) => x.export).map((x) => x.table);
    await page.click('#export-open');
    await page.locator('#export-dialog').waitFor({ state: 'visible' });
    const boxes = await page.locator('#export-dialog input[name=table]').evaluateAll((l) => l.map((c) => [c.value, c.disabled, c.checked]));
    assert.deepEqual(boxes.map((x) => x[0]), offered, 'one box per table the schema offers');
    assert.deepEqual(boxes.filter(([, disabled]) => !disabled), [['SystemProfileEvents', false, true]], 'only the table this profile has');
    assert.ok(await page.locator('#export-go').isEnabled(), 'Export is enabled');
    assert.ok(await page.locator('#export-none').isHidden());
    await page.click('#export-cancel');
  });

  await t.test('settle waits for the sections: a late /summary moves the timeline down', async () => {
    // The facts line (from /summary) comes after the first window; on a loaded machine a
    // test that read the canvas's place before it sent the mouse to the wrong row.
    let release;
    const held = new Promise((r) => { release = r; });
    const summary = `${url}/api/profiles/pt/summary`;
    await page.route(summary, async (route) => { await held; await route.continue(); });
    await page.goto(`${url}/view/pt`);
    await page.waitForFunction(() => window.nxViewer && window.nxViewer.state.loaded && document.body.dataset.paint === 'done');
    const early = await box();
    assert.equal(await page.locator('#system-facts').innerText(), '', 'the facts line waits for /summary');
    const settled = settle(page);
    release();
    await settled;
    await page.unroute(summary);
    assert.notEqual(await page.locator('#system-facts').innerText(), '', 'settled: the facts line is in');
    assert.ok((await box()).y > early.y, `the timeline moved down (${early.y} -> ${(await box()).y})`);
  });

  assert.ok(devUrl, 'the drill-down ran');
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
