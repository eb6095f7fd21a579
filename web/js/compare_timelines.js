// compare_timelines.js — the Compare page's two timelines stacked on one time axis: A's
// above B's, each a store of its own (store.js createStore, viewer.js openTimeline) laid out,
// fetched and painted by the viewer's own code, with every fact from /api/schema.
//
// Alignment: each store's origin (its "t0") is its alignment point, a chosen step's start
// or a clicked group's first event in that profile, so one window [s, e] in ns from the
// point is both views' window and both axes read "time from <point>". Wheel over either
// plot zooms both around the pointer (Shift+wheel or a horizontal wheel: pans), dragging
// pans both, as in the viewer; the track labels scroll each timeline's tracks. Hovering an
// event gives its name and duration (the canvas's title).
import { openTimeline } from './viewer.js';
import { createStore, update } from './store.js';
import { GUTTER, geom, nsPerPx, screenRows } from './plot.js';
import { zoomWindow } from './state.js';
import { eventAt, rowAt } from './hit.js';
import { fmtNs } from './format.js';
import { $ } from './dom.js';

const MIN_SPAN = 10;

const T = { stores: [], ready: null, s: 0, e: 1, at: null };

// Both stores on window [s, e] (ns from the alignment point), kept between MIN_SPAN and
// 1.5 times the longer profile.
function show(s, e) {
  const max = Math.max(...T.stores.map((v) => v.span)) * 1.5 + MIN_SPAN;
  const w = Math.min(max, Math.max(MIN_SPAN, e - s)), mid = (s + e) / 2;
  [T.s, T.e] = w === e - s ? [s, e] : [mid - w / 2, mid + w / 2];
  for (const v of T.stores) update(v, { viewS: T.s, viewE: T.e }, 'moved');
}

// The track rows of v on screen (below its pinned header).
const trackRows = (v) => screenRows(v).filter((r) => r.kind === 'track' && r.visible && r.y >= v.headerH);

// "name — duration" of the event of v under canvas point (x, y), or ''.
function eventText(v, x, y) {
  const row = x >= GUTTER ? rowAt(trackRows(v), y) : null;
  const d = row && v.data.get(row.id);
  const i = d ? eventAt(d, row, x, y, geom(v)) : -1;
  return i < 0 ? '' : `${d.name ? d.name[i] : row.label} — ${fmtNs(d.dur[i])}`;
}

function installInput(v) {
  const canvas = v.canvas;
  const xOf = (e) => e.clientX - canvas.getBoundingClientRect().left;
  canvas.addEventListener('mousemove', (e) => {
    canvas.title = e.buttons ? '' : eventText(v, xOf(e), e.clientY - canvas.getBoundingClientRect().top);
  });
  canvas.addEventListener('wheel', (e) => {
    const x = xOf(e);
    if (x < GUTTER && !e.shiftKey) return;   // the labels: let the tracks scroll
    e.preventDefault();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const d = (e.shiftKey ? (e.deltaY || e.deltaX) : e.deltaX) * nsPerPx(v);
      show(T.s + d, T.e + d);
    } else {
      const t = T.s + (Math.max(GUTTER, x) - GUTTER) * nsPerPx(v);
      show(...zoomWindow(T.s, T.e, t, Math.exp(e.deltaY * 0.0015)));
    }
  }, { passive: false });
  canvas.addEventListener('mousedown', (e) => {
    if (xOf(e) < GUTTER) return;
    const x0 = e.clientX, s0 = T.s, e0 = T.e, k = nsPerPx(v);
    const move = (m) => { const d = (x0 - m.clientX) * k; show(s0 + d, e0 + d); };
    const up = () => { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); };
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  });
}

// Opens profiles a and b stacked in #compare-timelines (once; later calls wait for it).
export function openStacked(a, b) {
  if (T.ready) return T.ready;
  $('#compare-timelines').hidden = false;
  T.stores = [createStore(), createStore()];
  T.ready = Promise.all([a, b].map((name, i) => {
    const who = i ? 'b' : 'a';
    return openTimeline(T.stores[i], name, $(`#cmp-timeline-${who}`)).then(() => installInput(T.stores[i]));
  }));
  return T.ready;
}

// Aligns both (once open) at absolute points aAbs and bAbs (BigInt ns; null: each
// profile's first timestamp, showing the whole of the longer), labelled `label`, showing
// [s, e] ns around them. Nothing when the timelines failed to open.
export async function alignStacked(aAbs, bAbs, label, s, e) {
  try { await T.ready; } catch { return; }   // openStacked's caller shows why
  const at = [aAbs ?? T.stores[0].first, bAbs ?? T.stores[1].first];
  T.at = { a: at[0].toString(), b: at[1].toString(), label };
  T.stores.forEach((v, i) => {
    // data, usage and counters were relative to the old origin
    update(v, { origin: at[i], axisLabel: `time from ${label}`, data: new Map(), usage: null, counters: null });
  });
  if (aAbs === null) [s, e] = [0, Math.max(...T.stores.map((v) => v.span))];
  show(s, e);
}

// For tests: the window, the alignment and per store its loaded window (absolute ns) and
// its track rows on screen (canvas CSS px).
export function stackedState() {
  return {
    start: T.s, end: T.e, at: T.at,
    views: T.stores.map((v) => ({ profile: v.name, origin: v.origin.toString(), loaded: v.lastWindow && { start: v.lastWindow.S.toString(), end: v.lastWindow.E.toString() },
      rows: v.rows.length, error: v.error || null, fetching: v.inFlight,
      tracks: trackRows(v).map((r) => ({ label: r.label, y: r.y, h: r.h })) })),
  };
}
