// js.viewer_nki: NKI source attribution in the Device Trace Viewer (docs/viewer.md "NKI
// source"), in Debian's chromium against `nxprof serve`, on a synthesized llama-layer
// device profile (its NKI flash-attention kernel's debug tables). Every expected value
// comes from DuckDB over the Parquet files (joins on pcore_idx too, docs/processing.md):
// - an NKI instruction's Event Details show its source file:line and function, its call
//   stack (outermost first), its loop iteration (i = .., j = ..) and its assembly line;
// - the Source table's lines are DuckDB's join of Instruction and KernelInstructions grouped
//   by file and line, ordered by self time (ties by file, line); sorting by Total puts the
//   outermost call site (all attributed time) first;
// - clicking a line searches its instructions (nki_source_location) and selects one:
//   "k of N", N DuckDB's count.
// NXPROF_SCREENSHOT_DIR, when set, receives nki-source.png (docs/nki-source.png): the side
// panel's Source table above the selected instruction's NKI block.
// Skipped (with a message) only when /usr/bin/chromium is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireBin, tempDir, openDuckDB } from './lib/harness.mjs';
import { SKIP, openPage, settle, viewState } from './lib/browser.mjs';

if (SKIP) console.log(`# SKIP js.viewer_nki: ${SKIP}`);

test('NKI source in the Device Trace Viewer', { skip: SKIP, timeout: 280000 }, async (t) => {
  const BIN = requireBin();
  const tmp = tempDir('nxviewer-nki-');
  const cap = path.join(tmp, 'cap'), data = path.join(tmp, 'data');
  execFileSync(BIN, ['synth', '--preset', 'llama-layer', '--events', '20000', '--seed', '7', '--out', cap], { stdio: 'ignore' });
  execFileSync(BIN, ['process', cap, '--data-path', data, '--display-name', 'demo'], { stdio: 'ignore' });
  const DEV = 'demo-nd0-nc0';
  const dir = fs.realpathSync(path.join(data, 'profiles', 'global', `${DEV}@latest`));
  const { sql } = await openDuckDB();
  const T = (table) => `read_parquet('${path.join(dir, `${table}.parquet`)}', file_row_number = true)`;
  const shots = process.env.NXPROF_SCREENSHOT_DIR;

  const { url, page, pageErrors } = await openPage(t, BIN, data, { viewport: { width: 1500, height: 1000 } });

  // The longest NKI instruction with an assembly line of its pc and opcode (the row the
  // viewer shows, docs/api.md).
  const [pick] = await sql(`SELECT i.file_row_number::BIGINT AS o, i.start_ts::VARCHAR AS s, i.end_ts::VARCHAR AS e,
      k.file_path AS file, k.line_number::INTEGER AS line, k.stack_frame_id::INTEGER AS frame, k.iteration_variables_id::INTEGER AS it, i.pcore_idx::INTEGER AS pc,
      a.compiler_opcode AS op
    FROM ${T('Instruction')} i JOIN ${T('KernelInstructions')} k USING (kernel_instruction_name, pcore_idx)
    JOIN ${T('AssemblyInstruction')} a ON a.compiler_pc = i.compiler_pc AND a.compiler_opcode = i.compiler_opcode
    ORDER BY i.duration_ns DESC, i.file_row_number LIMIT 1`);
  assert.ok(pick, 'the profile has NKI instructions');

  await t.test('an instruction\'s details: source, function, stack, iteration, assembly', async () => {
    const pad = 20000n;
    await page.goto(`${url}/view/${DEV}?start=${BigInt(pick.s) - pad}&end=${BigInt(pick.e) + pad}&event=Instruction:${pick.o}`);
    await settle(page);
    await page.waitForSelector('#details table.nki', { timeout: 15000 });
    const short = `${pick.file.slice(pick.file.lastIndexOf('/') + 1)}:${pick.line}`;
    assert.equal((await page.locator('#details .nki-loc').innerText()).trim(), short);
    assert.equal(await page.locator('#details .nki-loc .cut').getAttribute('title'), `${pick.file}:${pick.line}`);
    // the stack: the frame and its callers, outermost first
    const frames = [];
    for (let f = pick.frame; f !== null && f !== undefined && frames.length < 10;) {
      const [r] = await sql(`SELECT fully_qualified_function_name AS fn, parent_stack_frame_id::INTEGER AS p FROM ${T('KernelStackFrames')} WHERE stack_frame_id = ${f} AND pcore_idx = ${pick.pc}`);
      if (!r) break;
      frames.unshift(r.fn);
      f = r.p;
    }
    const stack = await page.locator('#details ol.nki-stack li').allInnerTexts();
    assert.deepEqual(stack.map((s) => s.trim().split(/\s+/)[0]), frames);
    const fn = await page.locator('#details table.nki tr', { hasText: 'function' }).innerText();
    assert.ok(fn.includes(frames[frames.length - 1]), `function ${frames[frames.length - 1]}`);
    const binds = [];
    for (let v = pick.it; v !== null && v !== undefined && binds.length < 10;) {
      const [r] = await sql(`SELECT variable_name AS n, variable_value::INTEGER AS x, parent_iteration_variable_id::INTEGER AS p FROM ${T('KernelIterationVariables')} WHERE iteration_variable_id = ${v} AND pcore_idx = ${pick.pc}`);
      if (!r) break;
      binds.unshift(`${r.n} = ${r.x}`);
      v = r.p;
    }
    assert.equal((await page.locator('#details .nki-iter').innerText()).trim(), binds.join(', '));
    assert.ok((await page.locator('#details .nki-asm').innerText()).startsWith(pick.op), `assembly ${pick.op}`);
  });

  const lines = await sql(`SELECT k.file_path AS file, k.line_number::INTEGER AS line, count(*)::INTEGER AS n, sum(i.duration_ns)::BIGINT AS self
    FROM ${T('Instruction')} i JOIN ${T('KernelInstructions')} k USING (kernel_instruction_name, pcore_idx)
    GROUP BY ALL ORDER BY self DESC, file, line`);
  const label = (l) => `${l.file.slice(l.file.lastIndexOf('/') + 1)}:${l.line}`;

  await t.test('the Source table: DuckDB\'s time per line, sortable', async () => {
    await page.waitForSelector('#source-table tr.src-line', { timeout: 15000 });
    const rows = page.locator('#source-table tr.src-line');
    const first = (await rows.nth(0).innerText()).split('\t').map((s) => s.trim());
    assert.equal(first[0], label(lines[0]), 'the top line by self time');
    assert.equal(first[1], String(lines[0].n), 'its instruction count');
    assert.ok(await rows.count() >= lines.length, 'every line with instructions, plus the call sites');
    await page.locator('#source-table th', { hasText: 'Total' }).click();
    const top = (await page.locator('#source-table tr.src-line').nth(0).innerText()).split('\t')[0].trim();
    const [outer] = await sql(`SELECT file_path AS file, line_number::INTEGER AS line FROM ${T('KernelStackFrames')} WHERE parent_stack_frame_id IS NULL`);
    assert.equal(top, label(outer), 'sorted by total: the outermost call site holds all attributed time');
    await page.locator('#source-table th', { hasText: 'Self' }).click();
    if (shots) {   // the side panel from the Source table down to the instruction's NKI block
      await page.setViewportSize({ width: 1500, height: 2400 });
      await settle(page);
      const a = await page.locator('#source').boundingBox(), b = await page.locator('#details table.nki').boundingBox();
      await page.screenshot({ path: path.join(shots, 'nki-source.png'), clip: { x: a.x, y: a.y, width: a.width, height: b.y + b.height + 8 - a.y } });
      await page.setViewportSize({ width: 1500, height: 1000 });
      await settle(page);
    }
  });

  await t.test('clicking a line finds its instructions', async () => {
    const want = lines[0];
    const [{ n }] = await sql(`SELECT count(*)::INTEGER AS n FROM ${T('Instruction')} WHERE nki_source_location = '${label(want)}'`);
    await page.locator('#source-table tr.src-line').nth(0).locator('a').click();
    await page.waitForFunction(() => /of/.test(document.querySelector('#search-count').textContent), null, { timeout: 15000 });
    // the first match at or after the window's start, among all N
    assert.match(await page.locator('#search-count').innerText(), new RegExp(`^\\d+ of ${n}$`));
    const st = await viewState(page);
    assert.deepEqual({ field: st.search.field, q: st.search.q, match: st.search.match }, { field: 'nki_source_location', q: label(want), match: 'exact' });
    const [{ loc }] = await sql(`SELECT nki_source_location AS loc FROM ${T('Instruction')} WHERE file_row_number = ${st.sel.ordinal}`);
    assert.equal(loc, label(want), `the selected instruction is of ${label(want)}`);
    assert.deepEqual(pageErrors, []);
  });
});
