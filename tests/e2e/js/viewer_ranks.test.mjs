// js.viewer_ranks: the System Trace Viewer on the two ranks of a real DDP run
// (tests/data/real-gpu/ddp_rank0.json.gz and ddp_rank1.json.gz, both on GPU 0 of one
// machine) processed together, in Debian's chromium driven by playwright-core against the
// real `nxprof serve`. Expected values come from the raw JSON (each file's
// distributedInfo.rank) and from DuckDB over the profile (each rank's threads and events):
// - the tracks are grouped by rank: one "rank N (...)" group per rank of the JSON, in rank
//   order, whose event count is that rank's row count and which holds one track row per
//   distinct thread of that rank (so rank 0's and rank 1's "GPU 0 / stream 7" are two rows);
// - in every grouping mode the rank groups stay, and collapsing one hides only its rows.
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { requireBin, TEST_DATA, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, openPage, settle, viewState } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_ranks: ${SKIP}`);
const TRACES = [0, 1].map((r) => path.join(TEST_DATA, 'real-gpu', `ddp_rank${r}.json.gz`));

test('System Trace Viewer groups the DDP pair by rank', { skip: SKIP, timeout: 200000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-ranks-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  fs.mkdirSync(cap);
  for (const f of TRACES) fs.copyFileSync(f, path.join(cap, path.basename(f)));
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'ddp'], { stdio: 'ignore' });
  const ranks = TRACES.map((f) => JSON.parse(gunzipSync(fs.readFileSync(f))).distributedInfo.rank);
  assert.deepEqual(ranks, [0, 1]);
  const { sql } = await openDuckDB();
  const events = `read_parquet('${path.join(data, 'profiles', 'global', 'ddp@latest', 'SystemProfileEvents*.parquet')}')`;
  const per = new Map((await sql(`SELECT worker_gid::INTEGER AS r, count(*)::INTEGER AS n,
      count(DISTINCT (process_id, thread_id))::INTEGER AS threads FROM ${events} GROUP BY 1`)).map((x) => [x.r, x]));

  const { url, page, pageErrors } = await openPage(t, BIN, data);
  const rankGroups = (st) => st.rows.filter((r) => r.kind === 'group' && /^rank \d+/.test(r.label));
  // The track rows under a group row: the rows after it that are deeper, up to the next row at its depth.
  const under = (st, g) => {
    const i = st.rows.indexOf(st.rows.find((r) => r.id === g.id));
    const out = [];
    for (const r of st.rows.slice(i + 1)) { if (r.depth <= g.depth) break; out.push(r); }
    return out.filter((r) => r.kind === 'track');
  };

  await t.test('one group per rank, in rank order, with that rank\'s events and threads', async () => {
    await page.goto(`${url}/view/ddp`);
    await settle(page);
    const st = await viewState(page);
    const groups = rankGroups(st);
    assert.deepEqual(groups.map((g) => Number(/^rank (\d+)/.exec(g.label)[1])), ranks);
    for (const g of groups) {
      const r = Number(/^rank (\d+)/.exec(g.label)[1]);
      assert.equal(g.count, per.get(r).n, `rank ${r}'s events`);
      assert.equal(under(st, g).length, per.get(r).threads, `rank ${r}'s tracks`);
      assert.ok(under(st, g).every((x) => x.track.startsWith(`rank${r}/`)), `rank ${r} holds only its tracks`);
    }
  });

  await t.test('every grouping mode keeps the rank groups; collapsing one hides only its rows', async () => {
    for (const mode of ['process', 'thread', 'instance', 'default']) {
      await page.selectOption('#group-mode', mode);
      await settle(page);
      assert.equal(rankGroups(await viewState(page)).length, 2, mode);
    }
    const st = await viewState(page);
    const [g0, g1] = rankGroups(st);
    const before = under(st, g1).length, n0 = st.rows.filter((r) => r.kind === 'track').length;
    const b = await page.locator('#timeline').boundingBox();
    await page.mouse.click(b.x + 20, b.y + g0.y + g0.h / 2);
    await page.waitForFunction((n) => window.nxViewer.state.rows.filter((r) => r.kind === 'track').length < n, n0);
    const after = await viewState(page);
    const c0 = after.rows.find((r) => r.id === g0.id);
    assert.equal(c0.collapsed, true, 'rank 0 collapsed');
    assert.equal(under(after, after.rows.find((r) => r.id === g1.id)).length, before, 'rank 1 untouched');
    assert.deepEqual(pageErrors, []);
  });
});
