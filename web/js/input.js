// input.js — mouse and keys on the timeline, and the hover tooltip.
//
// drag: pan; Shift- or Ctrl-drag: area selection (selection.js); click an event: select
// it; click a group header: collapse/expand it; right-click: add a marker, or remove the
// one under the pointer; wheel over the plot: zoom around the pointer (Shift+wheel or a
// horizontal wheel: pan); wheel over the labels: scroll the tracks. Keys: A/D/←/→ pan
// 15 %, W/S zoom ×0.7, 0 whole profile, PageUp/PageDown scroll the tracks, M clear the
// markers, / focus the search box, Esc clear the area selection, ? the help overlay.
import { V, set, select, absOf } from './store.js';
import { GUTTER, geom, nsPerPx, screenRows } from './plot.js';
import { zoomWindow } from './state.js';
import { rowAt, eventAt, rowsInBand } from './hit.js';
import { toggleMarker, NEAR_PX } from './markers.js';
import { annotationsChanged } from './annotate.js';
import { laneReadout, laneTooltip } from './lanes.js';
import { counterReadout, counterTooltip } from './counter_lanes.js';
import { fetchEvent } from './panels.js';
import { setArea, clearArea, leavesUnder } from './selection.js';
import { openHelp } from './help.js';
import { $ } from './dom.js';
import { esc, fmtNs, fmtVal } from './format.js';

let installed = false;
// The hovered events' /event answers, the latest 500 (keyed "<table>:<ordinal>").
const eventFull = new Map();
let hoverTimer = 0;

// Collapses or expands group `id` of the track tree.
function toggleGroup(id) {
  const collapsed = new Set(V.collapsed);
  if (collapsed.has(id)) collapsed.delete(id); else collapsed.add(id);
  set({ collapsed }, 'layout');
}

export function zoomAt(factor, xPx) {
  const t = V.viewS + (xPx - GUTTER) * nsPerPx();
  const [viewS, viewE] = zoomWindow(V.viewS, V.viewE, t, factor);
  set({ viewS, viewE }, 'window');
}
export function pan(fraction) { const w = V.viewE - V.viewS; set({ viewS: V.viewS + w * fraction, viewE: V.viewE + w * fraction }, 'window'); }
const mid = () => GUTTER + (V.cssW - GUTTER) / 2;

// The row and event under canvas point (x, y): {row, d, i} or {row} or null.
function hitAt(x, y) {
  const row = rowAt(screenRows().filter((r) => r.kind === 'axis' || r.kind === 'lane' || (r.visible && r.y >= V.headerH - r.h)), y);
  if (!row) return null;
  if (row.kind === 'track' && y < V.headerH) return null;
  if (row.kind !== 'track' || x < GUTTER) return { row };
  const d = V.data.get(row.id);
  const i = d ? eventAt(d, row, x, y, geom()) : -1;
  return i >= 0 ? { row, d, i } : { row };
}

export function installInput() {
  if (installed) return;
  installed = true;
  const canvas = V.canvas;
  let drag = null;
  const pos = (e) => { const b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
  const timeAt = (x) => V.viewS + (x - GUTTER) * nsPerPx();
  canvas.addEventListener('mousedown', (e) => {
    if (e.button !== 0) return;
    const [x, y] = pos(e);
    const area = (e.shiftKey || e.ctrlKey || e.metaKey) && x >= GUTTER;
    drag = { x0: e.clientX, y0: e.clientY, s: V.viewS, e: V.viewE, moved: false, x, y, area };
    e.preventDefault();
  });
  window.addEventListener('mousemove', (e) => {
    if (drag) {
      const dx = e.clientX - drag.x0, dy = e.clientY - drag.y0;
      if (Math.abs(dx) > 2 || Math.abs(dy) > 2) drag.moved = true;
      if (!drag.moved) return;
      if (drag.area) {
        const [x, y] = pos(e);
        const t0 = timeAt(Math.max(GUTTER, Math.min(drag.x, x))), t1 = timeAt(Math.max(drag.x, x));
        set({ area: areaOf(t0, t1, drag.y, y) }, 'paint');
      } else {
        const k = (drag.e - drag.s) / Math.max(1, V.cssW - GUTTER);
        set({ viewS: drag.s - dx * k, viewE: drag.e - dx * k }, 'window');
      }
      return;
    }
    if (e.target !== canvas) return;
    hover(...pos(e));
  });
  window.addEventListener('mouseup', () => {
    if (!drag) return;
    const d = drag; drag = null;
    if (d.area && d.moved && V.area) { setArea(V.area); return; }
    if (d.moved) return;
    const h = hitAt(d.x, d.y);
    if (h && h.row.kind === 'group' && d.x < GUTTER + 120) { toggleGroup(h.row.id); return; }
    if (h && h.d) {
      const a = absOf(h.d.start[h.i]);
      select({ table: h.d.table, ordinal: h.d.ord[h.i], track: h.d.track, start: a, end: absOf(h.d.start[h.i] + h.d.dur[h.i]) });
    }
  });
  canvas.addEventListener('contextmenu', (e) => {
    e.preventDefault();
    const [x] = pos(e);
    if (x < GUTTER) return;
    set({ markers: toggleMarker(V.markers, timeAt(x), NEAR_PX * nsPerPx()) });
    annotationsChanged();
  });
  canvas.addEventListener('mouseleave', () => { if (!drag) hideTooltip(); });
  canvas.addEventListener('wheel', (e) => {
    const [x] = pos(e);
    if (x < GUTTER && !e.shiftKey) return;   // the labels: let the tracks scroll
    e.preventDefault();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const dd = e.shiftKey ? (e.deltaY || e.deltaX) : e.deltaX;
      pan(dd / Math.max(1, V.cssW - GUTTER));
    } else {
      zoomAt(Math.exp(e.deltaY * 0.0015), Math.max(GUTTER, x));
    }
  }, { passive: false });
  window.addEventListener('keydown', onKey);
  $('#zoom-in').onclick = () => zoomAt(0.7, mid());
  $('#zoom-out').onclick = () => zoomAt(1 / 0.7, mid());
  $('#zoom-reset').onclick = () => set({ viewS: 0, viewE: V.span }, 'window');
}

function onKey(e) {
  if (e.target.closest && e.target.closest('input, textarea, select, dialog')) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const scroller = $('#timeline-scroll');
  switch (e.key) {
    case 'a': case 'A': case 'ArrowLeft': pan(-0.15); break;
    case 'd': case 'D': case 'ArrowRight': pan(0.15); break;
    case 'w': case 'W': zoomAt(0.7, mid()); break;
    case 's': case 'S': zoomAt(1 / 0.7, mid()); break;
    case '0': set({ viewS: 0, viewE: V.span }, 'window'); break;
    case 'PageDown': scroller.scrollTop += (V.viewH - V.headerH) * 0.8; break;
    case 'PageUp': scroller.scrollTop -= (V.viewH - V.headerH) * 0.8; break;
    case 'm': case 'M': set({ markers: [] }); annotationsChanged(); break;
    case 'Escape': clearArea(); break;
    case '?': openHelp(); break;
    case '/': $('#search-q').focus(); break;
    default: return;
  }
  e.preventDefault();
}

// The area between times t0 and t1 over the track rows between canvas heights y0 and y1
// (a collapsed group in the band counts with every track under it; a band that starts in
// the header takes every track).
function areaOf(t0, t1, y0, y1) {
  const all = Math.min(y0, y1) < V.headerH;
  const band = screenRows().filter((r) => r.visible !== false && r.kind !== 'axis' && r.kind !== 'lane');
  let ids;
  if (all) ids = leavesUnder(null);
  else {
    ids = rowsInBand(band, Math.max(y0, V.headerH), Math.max(y1, V.headerH)).map((r) => r.id);
    for (const r of band) if (r.kind === 'group' && r.collapsed && r.y < Math.max(y0, y1) && r.y + r.h > Math.min(y0, y1)) ids.push(...leavesUnder(r.id));
  }
  return { t0, t1, ids: [...new Set(ids)], all };
}

function hover(x, y) {
  const h = hitAt(x, y);
  if (!h) { hideTooltip(); V.canvas.style.cursor = 'crosshair'; return; }
  V.canvas.style.cursor = h.row.kind === 'axis' ? 'grab' : h.row.kind === 'group' ? 'pointer' : h.d ? 'pointer' : 'crosshair';
  if (h.d) { showEventTooltip(h, x, y); return; }
  if (h.row.kind === 'lane' && x >= GUTTER) {
    const p = Math.floor(x - GUTTER), g = geom();
    const ro = h.row.counter ? counterReadout(h.row, V.counters, p, g) : laneReadout(h.row, V.usage, p, g);
    if (ro) { placeTooltip(h.row.counter ? counterTooltip(ro) : laneTooltip(ro), x, y); set({ hover: null }); return; }
  }
  if (x < GUTTER && (h.row.kind === 'track' || h.row.kind === 'group')) {
    const r = h.row;
    const more = r.kind === 'track' ? `${esc(r.table)} · track ${esc(r.track)}${r.levels > 1 ? ` · ${r.levels} levels` : ''}` : (r.collapsed ? 'click to expand' : 'click to collapse');
    placeTooltip(`<b>${esc(r.title || r.label)}</b>\n${r.count.toLocaleString('en-US')} events\n${more}`, x, y);
    return;
  }
  hideTooltip();
}

function placeTooltip(html, x, y) {
  const tip = $('#tooltip'), wrap = $('#timeline-wrap');
  tip.innerHTML = html;
  tip.hidden = false;
  tip.style.left = `${Math.max(0, Math.min(x + 14, wrap.clientWidth - tip.offsetWidth - 4))}px`;
  tip.style.top = `${Math.min(y + 16, Math.max(0, wrap.clientHeight - tip.offsetHeight - 4))}px`;
}

export function hideTooltip() { const t = $('#tooltip'); if (t) t.hidden = true; set({ hover: null }); }

const MAX_TIP_FIELDS = 6, TIP_CHARS = 64;
const clip = (v) => (v.length > TIP_CHARS ? `${v.slice(0, TIP_CHARS - 1)}…` : v);
// Tooltip text of event i of track data d: table and track, time window, depth, labels
// (the event's name whole, since the timeline shows it shortened: names.js), and, once
// /event answered, the first string fields of the row that are not labels.
export function tooltipHTML(d, i, full) {
  const s = d.start[i], e = s + d.dur[i];
  const lines = [`<b>${esc(d.table)}</b> · ${esc(d.track)}`];
  lines.push(d.point ? `at ${fmtNs(s)}` : `${fmtNs(s)} – ${fmtNs(e)} (${fmtNs(d.dur[i])})`);
  if (d.depth) lines.push(`depth: ${d.depth[i]}`);
  for (const [name, arr] of Object.entries(d.labels)) {
    if (arr[i] === null || arr[i] === undefined) continue;
    lines.push(arr === d.name ? `${esc(name)}: <span class="tip-name">${esc(String(arr[i]))}</span>` : `${esc(name)}: ${esc(clip(String(arr[i])))}`);
  }
  if (!full) { lines.push('<span style="opacity:.6">loading details…</span>'); return lines.join('\n'); }
  const shown = (full.fields || []).filter((f) => !(f.name in d.labels) && f.type === 'string' && f.value !== null && f.value !== '' && f.value !== d.track);
  for (const f of shown.slice(0, MAX_TIP_FIELDS)) {
    const v = fmtVal(f.value);
    lines.push(`${esc(f.name)}: ${esc(clip(v))}`);
  }
  return lines.join('\n');
}

function showEventTooltip(h, x, y) {
  const key = `${h.d.table}:${h.d.ord[h.i]}`;
  set({ hover: { key } });
  const cached = eventFull.get(key);
  placeTooltip(tooltipHTML(h.d, h.i, cached), x, y);
  if (cached) return;
  clearTimeout(hoverTimer);
  hoverTimer = setTimeout(() => {
    fetchEvent(h.d.table, h.d.ord[h.i]).then((ev) => {
      eventFull.set(key, ev);
      if (eventFull.size > 500) eventFull.delete(eventFull.keys().next().value);
      if (V.hover && V.hover.key === key && !$('#tooltip').hidden) placeTooltip(tooltipHTML(h.d, h.i, ev), x, y);
    }).catch(() => {});
  }, 60);
}

