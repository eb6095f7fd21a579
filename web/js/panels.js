// panels.js — the side panel's own sections: Event Details (every field, args, flows,
// drill-down) and the visible window's table counts (the sections a page adds to the side
// panel are under sections/, e.g. a device profile's Summary).
//
// Event Details: the event's whole name when the timeline shows it shortened (names.js),
// every field of the selected row in schema order (/event), each number
// with its catalogue unit (format.js fmtField), long values cut with the whole text on
// hover; the row's extra_attributes_json pretty-printed as "Args"; its flows (/flows:
// predecessors and successors, each with "go to"); and, on a system profile, for an event
// on a NeuronCore's track that overlaps a device profile of that NeuronCore (the Device
// Profiles list: nc_id and its time span), "Open in Device Trace Viewer" at the event's
// window.
import * as API from './api.js';
import { viewHref, big } from './api.js';
import { V, set, select, relOf } from './store.js';
import { $ } from './dom.js';
import { selectWindow } from './selection.js';
import { esc, cut, fmtNs, fmtCount, fmtField, prettyJSON } from './format.js';
import { nameFieldOf } from './data.js';
import { shortName } from './names.js';
import { threadLabel } from './layout.js';
import { nkiHTML } from './nki.js';

// The /event answers asked for, the latest 500 (keyed "<table>:<ordinal>").
const eventCache = new Map();

export async function fetchEvent(table, ordinal) {
  const key = `${table}:${ordinal}`;
  if (eventCache.has(key)) return eventCache.get(key);
  const p = API.event(V.name, table, ordinal);
  eventCache.set(key, p);
  if (eventCache.size > 500) eventCache.delete(eventCache.keys().next().value);
  p.catch(() => eventCache.delete(key));
  return p;
}

const LONG_WORD = 24;
const fieldOf = (ev, name) => { const f = ev.fields.find((x) => x.name === name); return f ? f.value : null; };

// Table rows of `fields` [{name, value}] of `table`, each value by its catalogue unit.
export function fieldRows(table, fields) {
  const units = (V.units && V.units.get(table)) || new Map();
  return fields.map((f) => {
    const { text, raw } = fmtField(f.name, f.value, units.get(f.name), V.origin);
    const title = raw !== null ? `${text} (${raw})` : text;
    const tok = text.split(/\s+/).some((w) => w.length > LONG_WORD) ? ' tok' : '';   // a long word: cut, never broken
    return `<tr><td class="k" title="${esc(f.name)}">${esc(f.name)}</td><td class="v${tok}" title="${esc(title)}">${esc(text)}</td></tr>`;
  }).join('');
}

function argsHTML(ev) {
  const raw = fieldOf(ev, 'extra_attributes_json');
  if (raw === null || raw === undefined) return '';
  let obj = null;
  try { obj = JSON.parse(raw); } catch { /* not JSON: shown as a field */ }
  if (!obj || typeof obj !== 'object' || !Object.keys(obj).length) return '';
  const rows = Object.entries(obj).map(([k, v]) => {
    const text = typeof v === 'object' && v !== null ? JSON.stringify(v, null, 2) : String(v);
    return `<tr><td class="k">${esc(k)}</td><td class="v"><pre>${esc(text)}</pre></td></tr>`;
  }).join('');
  return `<h3>Args</h3><table class="args">${rows}</table><details><summary>extra_attributes_json</summary><pre>${esc(prettyJSON(raw) || raw)}</pre></details>`;
}

// The device profiles whose NeuronCore is the event's and whose span overlaps it.
function deviceExecutions(ev, start, end) {
  const track = (V.tracksDoc.groups || []).flatMap((g) => g.tracks).find((t) => t.table === ev.table && t.track === ev.track);
  if (!track || track.nc === null || track.nc === undefined || start === null) return [];
  return V.devices.filter((d) => d.open && Number(d.nc_id) === Number(track.nc) && d.first !== null &&
    big(start) <= d.last && big(end ?? start) >= d.first);
}

function refLabel(r) {
  const a = relOf(r.start), dur = r.end !== null && r.end !== undefined ? relOf(r.end) - a : 0;
  const extra = r.dependency_type !== undefined ? ` · ${r.dependency_type}${r.gap_time !== undefined && r.gap_time !== null ? `, gap ${fmtNs(Number(r.gap_time))}` : ''}`
    : r.flow_id !== undefined ? ` · flow ${r.flow_id}` : '';
  return `${r.track} @ ${fmtNs(a)} (${fmtNs(dur)})${extra}`;
}

function flowsHTML(f) {
  const list = (name, refs, cls) => `<h3>${name} <span class="muted">(${refs.length})</span></h3>` + (refs.length
    ? `<ul class="flows ${cls}">${refs.map((r, i) => `<li><a href="#" data-flow="${cls}:${i}" title="${esc(`${r.table} #${r.ordinal}`)}">go to</a> ${cut(refLabel(r))}</li>`).join('')}</ul>`
    : '<p class="muted">none</p>');
  return `<div class="flows-box">${list('Predecessors', f.predecessors || [], 'pred')}${list('Successors', f.successors || [], 'succ')}</div>`;
}

async function loadFlows(sel, box) {
  let f;
  try { f = await API.flows(V.name, sel.table, sel.ordinal); } catch { return; }
  if (!V.sel || V.sel.table !== sel.table || V.sel.ordinal !== sel.ordinal) return;
  set({ flows: { predecessors: f.predecessors || [], successors: f.successors || [] } });
  const slot = box.querySelector('.flows-slot');
  if (slot && (V.flows.predecessors.length || V.flows.successors.length)) {
    slot.innerHTML = flowsHTML(V.flows);
    for (const a of slot.querySelectorAll('a[data-flow]')) {
      a.onclick = (e) => {
        e.preventDefault();
        const [cls, i] = a.dataset.flow.split(':');
        select((cls === 'pred' ? V.flows.predecessors : V.flows.successors)[Number(i)], true);
      };
    }
  }
  set({}, 'paint');
}

// The selected event's track as the tree names it ("GPU 0 / stream 7"), else its key.
function trackTitle(ev) {
  const tracks = ((V.tracksDoc && V.tracksDoc.groups) || []).flatMap((g) => g.tracks);
  const t = tracks.find((x) => x.table === ev.table && x.track === ev.track);
  return t && t.thread_label ? threadLabel(t) : `track ${ev.track}`;
}

export async function showDetails(sel) {
  const box = $('#details .content');
  if (!sel) { box.innerHTML = '<p class="muted">Click an event.</p>'; return; }
  box.innerHTML = '<p class="muted">Loading…</p>';
  let ev;
  try { ev = await fetchEvent(sel.table, sel.ordinal); } catch (e) {
    if (!V.sel || V.sel.table !== sel.table || V.sel.ordinal !== sel.ordinal) return;   // another event is selected now
    box.innerHTML = `<p class="muted">Event ${esc(sel.table)}:${esc(sel.ordinal)} unavailable: ${esc(e.message)}</p>`;
    return;
  }
  if (!V.sel || V.sel.table !== sel.table || V.sel.ordinal !== sel.ordinal) return;
  const def = V.defs.get(ev.table) || {};
  const start = def.start ? fieldOf(ev, def.start) : null, end = def.end ? fieldOf(ev, def.end) : start;
  set({ selRef: { table: ev.table, ordinal: ev.ordinal, track: ev.track, start, end } });
  let html = `<p class="ev-head"><b>${esc(ev.table)}</b> #${esc(ev.ordinal)}${ev.track !== undefined ? ` · ${cut(trackTitle(ev))}` : ''}</p>`;
  const name = nameFieldOf(def) && fieldOf(ev, nameFieldOf(def));
  if (typeof name === 'string' && shortName(name) !== name) html += `<p class="ev-name">${esc(name)}</p>`;   // shortened on the timeline: here whole
  if (start !== null) html += `<p class="muted">${esc(fmtNs(relOf(start)))} – ${esc(fmtNs(relOf(end ?? start)))} (${esc(fmtNs(relOf(end ?? start) - relOf(start)))})</p>`;
  for (const d of deviceExecutions(ev, start, end)) {
    html += `<p><a class="open-device" href="${viewHref(d.open)}?start=${big(start)}&end=${big(end ?? start)}" title="${esc(d.open)}">Open in Device Trace Viewer</a> <span class="muted">${cut(d.open)}</span></p>`;
  }
  html += '<div class="flows-slot"></div>';
  html += nkiHTML(ev);
  html += argsHTML(ev);
  html += `<h3>Fields</h3><table class="fields">${fieldRows(ev.table, ev.fields)}</table>`;
  box.innerHTML = html;
  set({}, 'paint');
  loadFlows(sel, box);
}

// Without an area selection: the window and the exact rows per table in it.
export function showWindowSummary() {
  if (V.area) return;
  const box = $('#selection .content'), w = V.lastWindow;
  if (!w) return;
  let html = `<p>${esc(fmtNs(Number(w.S - V.origin)))} – ${esc(fmtNs(Number(w.E - V.origin)))} <span class="muted">(${esc(fmtNs(Number(w.E - w.S)))})</span></p>`;
  if (V.lastTables && V.lastTables.length) {
    html += '<table class="counts"><tr><th>Table</th><th class="num" title="Rows of the table in the window">In window</th><th class="num" title="Rows drawn (one per track, depth and pixel)">Drawn</th></tr>';
    for (const t of V.lastTables) {
      html += t.error ? `<tr><td>${esc(t.table)}</td><td colspan="2" class="warn">${cut(`⚠ ${t.error}`)}</td></tr>`
        : `<tr><td>${esc(t.table)}</td><td class="num">${esc(fmtCount(t.rows_in_window))}</td><td class="num">${esc(fmtCount(t.sampled))}</td></tr>`;
    }
    html += '</table>';
  }
  html += '<p class="muted hint">Shift-drag (or Ctrl-drag) over tracks for exact totals of that area. <button id="area-window" type="button">Whole window</button></p>';
  box.innerHTML = html;
  $('#area-window').onclick = selectWindow;
}
