// store.js — the view state: everything one timeline shows, owned here and written only
// through update/set/select, which tell the subscribers (viewer.js) what changed so they
// redraw, fetch, relayout or rewrite the URL. The other modules read the state and name
// the change; none of them imports viewer.js, so the modules form no import cycle.
//
// The page's view is V; the Compare page's stacked timelines are states of their own
// (createState), drawn by the same layout, fetch and paint code. Only V drives the URL,
// the panels, the legend and the status line (state.js has the URL's format; viewer.js
// reads it into V and writes it from V).
//
// Changes (any number per update):
//   'paint'   redraw;
//   'window'  the window moved: clamped to the profile, redrawn, fetched after a pause;
//   'moved'   the same, not clamped (the caller keeps the window as it is);
//   'layout'  the track rows again (grouping, a collapsed group), redrawn;
//   'colour'  the events recoloured by colourMode, the legend, redrawn;
//   'select'  the selection sel/selRef: details and flows again, its event brought on
//             screen when `reveal` holds it, redrawn;
//   'summary' the Window Summary panel again;
//   'url'     the URL rewritten from the state.

export const createState = () => ({
  name: null, info: null, kind: null, schema: null, units: null, defs: new Map(), laneDefs: new Map(),
  tables: new Set(), timelineTables: [], usageTables: [], counterLanes: [], counters: null, counterDrawn: {},
  origin: 0n, first: 0n, span: 1, viewS: 0, viewE: 1, axisLabel: null,
  tracksDoc: null, tree: [], mode: 'default', collapsed: new Set(), colourMode: null, defaultColour: null,
  header: [], rows: [], headerH: 0, contentH: 0, scrollTop: 0, viewH: 0, cssW: 0, canvas: null, ctx: null,
  data: new Map(), errors: new Map(), lastTables: null, lastWindow: null, usage: null, emptyMessage: null,
  sel: null, selRef: null, reveal: null, flows: null, hover: null, area: null, aggregate: null,
  markers: [], regions: [], annot: null, search: { field: null, q: '' },
  source: { sort: 'self_ns', asc: false, doc: null },
  selBox: null, boxes: new Map(), names: [], drawnEvents: 0, paintMs: null,
  devices: [], painters: [], memory: null,   // views drawn after each frame on the same window (memory.js)
});

export const V = createState();

const subscribers = [];
// fn(v, changes: Set of the names above), called after every update that names a change.
export function subscribe(fn) { subscribers.push(fn); }

// Writes `fields` into state v, then tells the subscribers of `changes`.
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
