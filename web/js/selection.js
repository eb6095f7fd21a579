// selection.js — area selection: a time range over a set of tracks, and its exact
// aggregates from /aggregate (computed by the query engine from every event of those
// tracks overlapping the range, not from what is drawn).
//
// Shift- or Ctrl-drag over the tracks selects the tracks the drag crosses (a collapsed
// group with every track under it; a drag started on the axis takes every track) and the
// time between its ends; "Whole window" takes every track and the visible window. The
// side panel then lists, per table, the event count and the groups by the table's
// aggregate_by field (a select switches it): count, total time and self time clipped to
// the range, with the rest as "other". Esc clears it.
import { aggregate } from './api.js';
import { V, set, absOf } from './store.js';
import { $ } from './dom.js';
import { esc, cut, fmtNs, fmtCount } from './format.js';
import { shortName } from './names.js';

let seq = 0;

// Ids of the tracks under group `id` of the tree (every track when id is null).
export function leavesUnder(id) {
  const out = [];
  const walk = (nodes, inside) => {
    for (const n of nodes) {
      const here = inside || n.id === id || id === null;
      if (n.children) walk(n.children, here); else if (here) out.push(n.id);
    }
  };
  walk(V.tree, false);
  return out;
}

export function clearArea() {
  if (!V.area) return;
  seq++;
  set({ area: null, aggregate: null }, 'summary', 'paint');
}

export function selectWindow() { setArea({ t0: V.viewS, t1: V.viewE, ids: leavesUnder(null), all: true }); }

// Select `area` {t0, t1 (ns offsets from t0), ids, all}: S and E are the absolute window
// asked for (t0 rounded down, t1 up), the one nxViewer.state reports.
export function setArea(area) {
  set({ area: { ...area, S: absOf(Math.floor(area.t0)), E: absOf(Math.ceil(area.t1)) } }, 'paint');
  loadAggregate();
}

// The /aggregate answer for `table`: its selected tracks, or none (all of them) when the
// area holds every track of the table (which keeps the URL short).
function requestFor(table, area, S, E) {
  const mine = area.ids.filter((id) => id.startsWith(`${table}\0`));
  const every = (V.tracksDoc.groups || []).reduce((n, g) => n + g.tracks.filter((t) => t.table === table).length, 0);
  const tracks = area.all || mine.length >= every ? null : mine.map((id) => id.replace('\0', ':'));
  return aggregate(V.name, table, S, E, tracks, V.aggBy.get(table) || null);
}

async function loadAggregate() {
  const area = V.area, my = ++seq, { S, E } = area;
  const tables = V.timelineTables.filter((t) => area.all || area.ids.some((id) => id.startsWith(`${t}\0`)));
  const box = $('#selection .content');
  box.innerHTML = `<p class="muted">Aggregating ${esc(fmtCount(area.ids.length))} tracks over ${esc(fmtNs(area.t1 - area.t0))}…</p>`;
  const answers = await Promise.all(tables.map((t) => requestFor(t, area, S, E).then((r) => r, (e) => ({ error: e.message, table: t }))));
  if (my !== seq) return;
  set({ aggregate: { start: S.toString(), end: E.toString(), tables: answers.flatMap((a) => (a.error ? [{ table: a.table, error: a.error }] : a.tables)) } });
  render();
}

function groupRows(t) {
  const max = Math.max(1, ...t.groups.map((g) => Number(g.total_ns)));
  const self = t.groups.some((g) => g.self_ns !== null && g.self_ns !== undefined);
  let html = `<table class="bars agg"><tr><th>${esc(t.by || 'key')}</th><th class="num">Count</th><th class="num">Total</th>${self ? '<th class="num">Self</th>' : ''}<th></th></tr>`;
  for (const g of t.groups) {
    const key = g.key === null ? '(null)' : String(g.key);
    html += `<tr><td>${cut(shortName(key), '', key)}</td><td class="num">${esc(fmtCount(g.count))}</td><td class="num">${esc(fmtNs(Number(g.total_ns)))}</td>` +
      `${self ? `<td class="num">${g.self_ns === null ? '' : esc(fmtNs(Number(g.self_ns)))}</td>` : ''}` +
      `<td class="barcell"><div class="bar" style="width:${(100 * Number(g.total_ns) / max).toFixed(1)}%"></div></td></tr>`;
  }
  if (t.other && Number(t.other.count)) {
    html += `<tr class="muted"><td>other</td><td class="num">${esc(fmtCount(t.other.count))}</td><td class="num">${esc(fmtNs(Number(t.other.total_ns)))}</td>${self ? '<td></td>' : ''}<td></td></tr>`;
  }
  return `${html}</table>`;
}

function render() {
  const a = V.area, agg = V.aggregate, box = $('#selection .content');
  let html = `<p><b>Area</b> ${esc(fmtNs(a.t0))} – ${esc(fmtNs(a.t1))} <span class="muted">(${esc(fmtNs(a.t1 - a.t0))}, ${esc(fmtCount(a.ids.length))} tracks)</span> <button id="area-clear" type="button" title="Esc">Clear</button></p>`;
  for (const t of agg.tables) {
    if (t.error) { html += `<h3>${esc(t.table)}</h3><p class="warn">${cut(`⚠ ${t.error}`)}</p>`; continue; }
    const def = V.defs.get(t.table) || {};
    const opts = (def.aggregate_by || []).map((f) => `<option value="${esc(f)}"${f === t.by ? ' selected' : ''}>${esc(f)}</option>`).join('');
    html += `<h3>${esc(t.table)} <span class="muted">${esc(fmtCount(t.events))} events</span></h3>`;
    if (opts) html += `<label class="by">by <select data-table="${esc(t.table)}">${opts}</select></label>`;
    html += t.groups.length ? groupRows(t) : '<p class="muted">No events in the area.</p>';
  }
  box.innerHTML = html;
  $('#area-clear').onclick = clearArea;
  for (const sel of box.querySelectorAll('select[data-table]')) {
    sel.onchange = () => { set({ aggBy: new Map([...V.aggBy, [sel.dataset.table, sel.value]]) }); loadAggregate(); };
  }
}
