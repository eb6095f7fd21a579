// store.js — the view state: everything one timeline shows, owned here. Modules read it
// (V, or a store of their own) and write it only through update/set/select, naming what
// changed; the subscribers (viewer.js) then redraw, fetch, relayout, show the details or
// rewrite the URL. store.js imports no module that draws, so no module needs viewer.js to
// change the view and the modules form no import cycle.
//
// The page's view is V; the Compare page's stacked timelines are stores of their own
// (createStore), drawn by the same layout, fetch and paint code. Only V drives the URL, the
// panels, the legend and the status line.
//
// Changes (any number per update; the subscriber handles them in this order):
//   'colour'  the events recoloured by colourMode, the legend, redrawn;
//   'layout'  the track rows again (grouping, a collapsed group), redrawn;
//   'select'  the selection sel/selRef: its event brought on screen when `reveal` holds it,
//             redrawn, the URL, Event Details and flows again;
//   'window'  the window moved: clamped to the profile, redrawn, fetched after a pause;
//   'moved'   the same, not clamped (the caller keeps the window as it is);
//   'paint'   redraw;
//   'summary' the Window Summary panel again;
//   'url'     the URL rewritten from the state (urlOf).
import { big } from './api.js';
import { parseViewQuery, viewQuery } from './state.js';

export const createStore = () => ({
  name: null, enc: null, info: null, kind: null, schema: null, units: null, defs: new Map(), laneDefs: new Map(),
  tables: new Set(), timelineTables: [], usageTables: [], counterLanes: [], counters: null, counterDrawn: {},
  origin: 0n, first: 0n, span: 1, viewS: 0, viewE: 1, axisLabel: null,
  tracksDoc: null, tree: [], mode: 'default', collapsed: new Set(), colourMode: null, defaultColour: null,
  header: [], rows: [], headerH: 0, contentH: 0, scrollTop: 0, viewH: 0, cssW: 0, canvas: null, ctx: null, resize: null,
  data: new Map(), errors: new Map(), lastTables: null, lastWindow: null, usage: null, emptyMessage: null, error: null,
  sel: null, selRef: null, reveal: null, flows: null, hover: null, area: null, aggregate: null, aggBy: new Map(),
  markers: [], regions: [], annot: null, search: { field: null, q: '' },
  source: { sort: 'self_ns', asc: false, doc: null },
  selBox: null, boxes: new Map(), names: [], drawnEvents: 0, paintMs: null,
  devices: [], fetchSeq: 0, fetchTimer: 0, frame: 0, inFlight: 0, firstWindowDone: null,
  painters: [], memory: null,   // views drawn after each frame on the same window (memory.js)
});

export const V = createStore();
export const get = () => V;

const subscribers = [];
// fn(v, changes: Set of the names above), called after every update that names a change.
export function subscribe(fn) { subscribers.push(fn); }

// Writes `fields` into store v, then tells the subscribers of `changes`.
export function update(v, fields, ...changes) {
  Object.assign(v, fields);
  if (!changes.length) return;
  const c = new Set(changes);
  for (const fn of subscribers) fn(v, c);
}

// update on the page's view.
export const set = (fields, ...changes) => update(V, fields, ...changes);

// Selects event ref {table, ordinal[, start, end, track]} (null clears); reveal: also bring
// it on screen (expand its groups, scroll to its row, move the window onto it).
export function select(ref, reveal = false) {
  const sel = ref ? { table: ref.table, ordinal: Number(ref.ordinal) } : null;
  const selRef = ref && ref.start !== undefined && ref.start !== null
    ? { table: ref.table, ordinal: Number(ref.ordinal), track: ref.track, start: ref.start, end: ref.end ?? ref.start } : null;
  set({ sel, selRef, flows: null, reveal: ref && reveal ? ref : null }, 'select');
}

// Times: the window is kept as Number offsets from v.origin (t0); these convert.
export const windowAbs = (v = V) => ({ S: v.origin + BigInt(Math.floor(v.viewS)), E: v.origin + BigInt(Math.ceil(v.viewE)) });
export const absOf = (t, v = V) => v.origin + BigInt(Math.round(t));
export const relOf = (abs, v = V) => Number(big(abs) - v.origin);

// Shows the window [startAbs, endAbs] (absolute ns, BigInt or its decimal text) on the
// page's view: a step row of the Devices and Steps tables zooms the timeline to its step so.
export function zoomTo(startAbs, endAbs) {
  const s = relOf(startAbs), e = relOf(endAbs);
  set({ viewS: s, viewE: Math.max(e, s + 10) }, 'window', 'url');
}

// The URL round trip (state.js has its format). fromURL: the fields of store v that query
// string `search` gives (the window when valid, the selection, search, grouping, colour).
export function fromURL(v, search) {
  const q = parseViewQuery(search), out = { sel: q.event };
  if (q.start !== null && q.end !== null) {
    const s = Number(q.start - v.origin), e = Number(q.end - v.origin);
    if (e > s) { out.viewS = s; out.viewE = e; }
  }
  if (q.q) out.search = { q: q.q, field: q.field };
  if (q.group) out.mode = q.group;
  if (q.colour) out.colourMode = q.colour;
  return out;
}

// The view URL of store v (its path is `path`, "/view/<name>").
export function urlOf(v, path) {
  const { S, E } = windowAbs(v);
  return `${path}?${viewQuery({ start: S, end: E, event: v.sel, q: v.search.q, field: v.search.field,
    group: v.mode !== 'default' ? v.mode : null, colour: v.colourMode !== v.defaultColour ? v.colourMode : null })}`;
}
