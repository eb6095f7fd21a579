// compare.js — the Compare page ("/compare?a=<A>&b=<B>[&by=KEY][&all=1][&sort=COL[:asc]]"):
// the diff of two profiles of one kind from GET /api/diff (docs/api.md), as a table: per
// group its status (added and removed marked), the row count and the summed time in A and
// B, the difference B − A, the ratio B / A and, on nesting tables, the self time; a totals
// row over every group. Times are shown with their unit (fmtNs) and exact in ns on hover.
// Clicking a column header sorts by it (again: the other way); the server's order is
// |difference| descending. The key and the profiler-rows switch reload the answer; every
// choice is kept in the URL so a copied link reopens the same table. "Per step" and "per
// wall time" add each side's normalised time and their difference (&normalize=).
// Above the table, the device and step totals of both side by side (compare_totals.js).
// Steps (the answer's "steps": host ProfilerStep#N, or a JAX step_num): a step both
// profiles have is chosen (&step=), its duration in A and B shown side by side, and each
// profile's viewer linked at a window of one width starting at that step, so the two
// open aligned on the step. A click on a group (of event names, or of an Instruction
// column) links each profile's viewer around that group's first event (from the chosen
// step on), at one window width: aligned at that event.
import { search, diff, big, viewHref } from './api.js';
import { $, setStatus } from './dom.js';
import { esc, fmtNs, fmtCount, fmtPct, cut } from './format.js';
import { sharedSteps, totalsHTML } from './compare_totals.js';
import { alignStacked, openStacked, stackedState } from './compare_timelines.js';

const LIMIT = 1000;   // groups fetched; the page says how many others there were

// The page's one store of view state.
const C = { a: null, b: null, by: null, all: false, norm: null, sort: null, asc: false, answer: null, step: null, steps: null };

// A normalised figure (per step: ns; per wall: a fraction, shown as a percent).
const fmtNorm = (v, signed) => (v === undefined ? '' : (signed && v > 0 ? '+' : '') +
  (C.answer.normalize === 'wall' ? fmtPct(v * 100) : fmtNs(v)));
const normCell = (id, signed) => ({ id, num: true, norm: true, get: (o) => o[id], show: (o) => esc(fmtNorm(o[id], signed)) });

// Columns: id, header, the value of an op (or the totals), how it is shown, self only.
const COLUMNS = [
  { id: 'name', head: 'Group', get: (o) => o.name, show: (o) => (o.name === null ? '<span class="muted">(null)</span>' : cut(o.name)) },
  { id: 'status', head: 'Status', get: (o) => o.status, show: (o) => (o.status ? `<span class="diff-${o.status}">${o.status}</span>` : '') },
  { id: 'count_a', head: 'Count A', num: true, get: (o) => o.count_a, show: (o) => fmtCount(o.count_a) },
  { id: 'count_b', head: 'Count B', num: true, get: (o) => o.count_b, show: (o) => fmtCount(o.count_b) },
  { id: 'total_ns_a', head: 'Time A', num: true, time: true, get: (o) => Number(o.total_ns_a) },
  { id: 'total_ns_b', head: 'Time B', num: true, time: true, get: (o) => Number(o.total_ns_b) },
  { id: 'delta_ns', head: 'Δ B − A', num: true, time: true, signed: true, get: (o) => Number(o.delta_ns) },
  { id: 'ratio', head: 'B / A', num: true, get: (o) => o.ratio, show: (o) => (o.ratio === null ? '<span class="muted">–</span>' : `${o.ratio.toFixed(3)}×`) },
  { id: 'self_ns_a', head: 'Self A', num: true, time: true, self: true, get: (o) => Number(o.self_ns_a) },
  { id: 'self_ns_b', head: 'Self B', num: true, time: true, self: true, get: (o) => Number(o.self_ns_b) },
  { ...normCell('norm_a', false), head: 'Norm. A' },
  { ...normCell('norm_b', false), head: 'Norm. B' },
  { ...normCell('norm_delta', true), head: 'Norm. Δ' },
];

const columns = () => COLUMNS.filter((c) => (!c.self || C.answer.has_self) && (!c.norm || C.answer.normalize));

function cell(c, o) {
  if (!c.time) return `<td class="${c.num ? 'num' : c.id}">${c.show(o)}</td>`;
  const v = c.get(o);
  const text = (c.signed && v > 0 ? '+' : '') + fmtNs(v);
  return `<td class="num" title="${esc(`${v} ns`)}">${esc(text)}</td>`;
}

function sorted(ops) {
  if (!C.sort) return ops;
  const c = COLUMNS.find((x) => x.id === C.sort);
  if (!c) return ops;
  const key = (o) => c.get(o);
  const cmp = (x, y) => {
    const a = key(x), b = key(y);
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return (a < b ? -1 : 1) * (C.asc ? 1 : -1);
  };
  return [...ops].sort(cmp);
}

function render() {
  const d = C.answer;
  const cols = columns();
  $('#compare-table thead').innerHTML = `<tr>${cols.map((c) => {
    const mark = C.sort === c.id ? (C.asc ? ' ▲' : ' ▼') : '';
    return `<th class="${c.num ? 'num' : ''}" data-col="${c.id}" title="Sort by ${esc(c.head)}">${esc(c.head)}${mark}</th>`;
  }).join('')}</tr>`;
  const key = (o) => (o.name !== null && canAlign() ? ` data-key="${esc(o.name)}" title="Click: open both profiles at its first event"` : '');
  $('#compare-table tbody').innerHTML = sorted(d.ops).map((o) =>
    `<tr class="row-${o.status}"${key(o)}>${cols.map((c) => cell(c, o)).join('')}</tr>`).join('');
  const t = { ...d.totals, name: 'Total', status: '' };
  $('#compare-table tfoot').innerHTML = `<tr>${cols.map((c) => (c.id === 'name' ? '<td><b>Total</b></td>' : cell(c, t))).join('')}</tr>`;
  const more = d.groups - d.shown;
  const facts = [`${esc(d.table)} by <b>${esc(d.by)}</b>`, `${fmtCount(d.groups)} groups`];
  if (more > 0) facts.push(`${fmtCount(more)} more not shown (the totals cover them)`);
  if (d.wall_ns_a !== null && d.wall_ns_b !== null) facts.push(`wall time A ${fmtNs(Number(d.wall_ns_a))}, B ${fmtNs(Number(d.wall_ns_b))}`);
  if (d.normalize === 'step') facts.push(`per step: ${fmtCount(d.steps_a)} steps in A, ${fmtCount(d.steps_b)} in B`);
  if (d.normalize === 'wall') facts.push('per wall time: each side\'s share of its wall time');
  if (d.excluded_a || d.excluded_b) facts.push(`profiler rows left out: ${fmtCount(d.excluded_a)} in A, ${fmtCount(d.excluded_b)} in B`);
  $('#compare-facts').innerHTML = facts.join(' · ');
  $('#compare-totals').innerHTML = totalsHTML(d);
}

// The chosen step side by side, and each profile's viewer at one window from that step.
function renderStep() {
  const { a: ea, b: eb } = C.steps.get(C.step);
  const da = ea.end - ea.start, db = eb.end - eb.start;
  const w = da > db ? da : db;
  const link = (name, e, who) => `<a id="compare-open-${who}" href="${viewHref(name)}?start=${big(e.start)}&end=${big(e.start) + w}">open ${who.toUpperCase()} at ${esc(C.step)}</a>`;
  const d = Number(db - da);
  alignStacked(ea.start, eb.start, C.step, -Number(w) / 20, Number(w) * 1.05);
  $('#compare-step-out').innerHTML = `lasts ${fmtNs(Number(da))} in A, ${fmtNs(Number(db))} in B (Δ ${d > 0 ? '+' : ''}${fmtNs(d)}) · ` +
    `${link(C.a, ea, 'a')} · ${link(C.b, eb, 'b')}`;
}

// Whether a group's events can be found by /search: names of SystemProfileEvents (by name
// or kernel), or a column of Instruction.
const canAlign = () => C.answer && ((C.answer.table === 'SystemProfileEvents' && ['name', 'kernel'].includes(C.answer.by)) ||
  C.answer.table === 'Instruction');

// The first event of group `key` in each profile (from the chosen step's start when a step
// is chosen), and each profile's viewer at one window around it, the event a third in.
async function alignAt(key) {
  const field = C.answer.by === 'kernel' ? 'name' : C.answer.by;
  const st = C.steps && C.step ? C.steps.get(C.step) : null;
  const step = st ? [st.a, st.b] : [null, null];
  const first = async (name, st) => {
    return (await search(name, { tables: [C.answer.table], field, q: key, match: 'exact', from: st ? big(st.start) : null })).event;
  };
  const [ea, eb] = await Promise.all([first(C.a, step[0]), first(C.b, step[1])]);
  const out = $('#compare-at');
  out.hidden = false;
  const where = step[0] ? ` from ${esc(C.step)}` : '';
  if (!ea || !eb) {
    out.innerHTML = `<b>${esc(key)}</b>${where}: not in ${!ea ? 'A' : 'B'}`;
    return;
  }
  const da = big(ea.end) - big(ea.start), db = big(eb.end) - big(eb.start);
  let w = da > db ? da : db;
  if (w < 1000n) w = 1000n;
  const link = (name, e, who) => `<a id="compare-at-${who}" href="${viewHref(name)}?start=${big(e.start) - w}&end=${big(e.start) + 2n * w}">open ${who.toUpperCase()}</a>`;
  alignStacked(big(ea.start), big(eb.start), `first ${key}${step[0] ? ` from ${C.step}` : ''}`, -Number(w), 2 * Number(w));
  out.innerHTML = `first <b>${esc(key)}</b>${where}: ${fmtNs(Number(da))} in A, ${fmtNs(Number(db))} in B · ` +
    `${link(C.a, ea, 'a')} · ${link(C.b, eb, 'b')} at one window around it`;
}

function loadSteps() {
  C.steps = sharedSteps(C.answer);
  const both = [...C.steps.keys()];
  $('#compare-align').hidden = both.length === 0;
  if (!both.length) return;
  if (!both.includes(C.step)) C.step = both[0];
  $('#compare-step').innerHTML = both.map((k) => `<option${k === C.step ? ' selected' : ''}>${esc(k)}</option>`).join('');
  renderStep();
}

function writeURL() {
  const q = new URLSearchParams({ a: C.a, b: C.b });
  if (C.by) q.set('by', C.by);
  if (C.all) q.set('all', '1');
  if (C.norm) q.set('normalize', C.norm);
  if (C.step) q.set('step', C.step);
  if (C.sort) q.set('sort', `${C.sort}${C.asc ? ':asc' : ''}`);
  history.replaceState(null, '', `/compare?${q}`);
}

async function load() {
  setStatus('Loading…');
  const q = new URLSearchParams({ a: C.a, b: C.b, limit: String(LIMIT) });
  if (C.by) q.set('by', C.by);
  if (C.all) q.set('all', '1');
  if (C.norm) q.set('normalize', C.norm);
  try {
    C.answer = await diff(q);
    $('#compare-error').hidden = true;
    $('#compare-by').value = C.answer.by;
    render();
    setStatus('');
  } catch (e) {
    $('#compare-error').textContent = `Error: ${e.message}`;
    $('#compare-error').hidden = false;
    setStatus('');
  }
  writeURL();
}

export async function showCompare() {
  const q = new URLSearchParams(location.search);
  C.a = q.get('a');
  C.b = q.get('b');
  C.by = q.get('by') || null;
  C.all = q.get('all') === '1';
  const s = (q.get('sort') || '').split(':');
  C.sort = s[0] || null;
  C.asc = s[1] === 'asc';
  C.step = q.get('step') || null;
  C.norm = q.get('normalize') || null;
  $('#compare-view').hidden = false;
  window.nxCompare = { get stacked() { return stackedState(); } };   // for tests (docs/viewer.md)
  if (!C.a || !C.b) throw new Error('the Compare page needs two profiles: /compare?a=<A>&b=<B>');
  document.title = `nxprof — ${C.a} vs ${C.b}`;
  $('#crumb').innerHTML = `<span class="sep">›</span> <span class="here">Compare</span>`;
  for (const [id, name] of [['#compare-a', C.a], ['#compare-b', C.b]]) {
    $(id).textContent = name;
    $(id).href = viewHref(name);
  }
  $('#compare-all').checked = C.all;
  $('#compare-norm').value = C.norm || '';
  $('#compare-norm').addEventListener('change', () => { C.norm = $('#compare-norm').value || null; load(); });
  $('#compare-by').addEventListener('change', () => { C.by = $('#compare-by').value.trim() || null; load(); });
  $('#compare-all').addEventListener('change', () => { C.all = $('#compare-all').checked; load(); });
  $('#compare-table thead').addEventListener('click', (e) => {
    const th = e.target.closest('th[data-col]');
    if (!th) return;
    if (C.sort === th.dataset.col) C.asc = !C.asc;
    else { C.sort = th.dataset.col; C.asc = th.dataset.col === 'name' || th.dataset.col === 'status'; }
    render();
    writeURL();
  });
  $('#compare-step').addEventListener('change', () => { C.step = $('#compare-step').value; renderStep(); writeURL(); });
  $('#compare-table tbody').addEventListener('click', (e) => {
    const tr = e.target.closest('tr[data-key]');
    if (tr) alignAt(tr.dataset.key).catch((err) => { $('#compare-at').textContent = `Error: ${err.message}`; });
  });
  await load();
  if (C.answer) {
    $('#cmp-name-a').textContent = C.a;
    $('#cmp-name-b').textContent = C.b;
    openStacked(C.a, C.b).catch((e) => { $('#compare-error').textContent = `Timelines: ${e.message}`; $('#compare-error').hidden = false; });
    loadSteps();
    if (!C.steps.size) alignStacked(null, null, 'each profile\'s start', 0, 1);
    writeURL();
  }
}
