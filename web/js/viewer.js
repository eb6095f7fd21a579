// viewer.js — the timeline viewer shared by the Device Trace Viewer and the System Trace
// Viewer: its layout, fetching, URL and selection, run on the changes the store tells
// (store.js owns the state); the other modules paint it (paint.js), drive it (input.js)
// and fill its panels, writing the store only.
//
// - Tables and lanes: the profile's timeline tables are viewer.timelines of /api/schema
//   whose table the profile has, in the schema's drawing order; its lanes viewer.usage the
//   same way, then the counter lanes (memory per device, Chrome counters) that /counters
//   finds over the whole profile when it has SystemProfileEvents (counter_lanes.js).
//   /tracks gives the track tree (layout.js); nothing about tables is copied here.
// - Every pan/zoom redraws at once (requestAnimationFrame, with the data already loaded)
//   and, debounced by FETCH_DEBOUNCE_MS, fetches /timeline (binary: its numbers come as
//   typed arrays, timeline_bin.js) and /usage for the visible
//   window with width = the plot's width in CSS pixels, i.e. the server's sampling (one
//   event per track, depth and pixel bucket); /counters comes on its own and is drawn when
//   it arrives. Stale responses are dropped.
// - Vertical layout: the time axis and the lanes are a pinned header; the track rows
//   scroll under it (the canvas is as tall as the view and sticks to its top while a
//   spacer gives the scroll height), so the axis never scrolls away.
// - The URL is rewritten (history.replaceState) after every pan, zoom, selection, search,
//   grouping or colour change (state.js has the format; store.js fromURL and urlOf the
//   round trip), so a copied link reopens the view.
import * as API from './api.js';
import { big, namePath, schema as loadSchema } from './api.js';
import { decodeTimeline } from './timeline_bin.js';
import { $, setStatus } from './dom.js';
import { clampWindow, windowOnEvent } from './state.js';
import { V, createStore, update, set, subscribe, windowAbs, absOf, relOf, fromURL, urlOf } from './store.js';
import { GUTTER, AXIS_H, plotWidth, geom, screenRows } from './plot.js';
import { buildTree, hasGroupings, layoutRows, pathTo, GROUPINGS } from './layout.js';
import { ingestTimeline, ingestUsage, colourise } from './data.js';
import { ingestCounters } from './counter_lanes.js';
import { LANE_H } from './lanes.js';
import { paintFrame } from './paint.js';
import { eventBox } from './hit.js';
import { installInput, hideTooltip } from './input.js';
import { showDetails, showWindowSummary } from './panels.js';
import { installLegend, updateLegend } from './legend.js';
import { installSearch } from './search.js';
import { installExport } from './export.js';
import { installHelp } from './help.js';
import { installAnnotations, currentDocument } from './annotate.js';

const FETCH_DEBOUNCE_MS = 120;

export { V, createStore };

// viewer.js writes the store through update() too; its own bookkeeping (the frame and
// fetch timers, the requests in flight) included.
// Tables /tracks could not read: table -> message.
const tracksErrors = (v = V) => new Map((v.tracksDoc.errors || []).map((e) => [e.table, e.error]));

export function draw(v = V) {
  if (v.frame) return;
  document.body.dataset.paint = 'pending';   // for tests: a frame is on its way (docs/viewer.md)
  update(v, { frame: requestAnimationFrame(() => {
    update(v, { frame: 0 });
    document.body.dataset.paint = 'done';
    const t0 = performance.now();
    paintFrame(v);
    update(v, { paintMs: performance.now() - t0 });   // reported in nxViewer.state for bench/viewer
    for (const p of v.painters) p(v);
  }) });
}

// After the window moved: clamped, redrawn, fetched (clamp false: the caller keeps it).
export function changed(v = V, clamp = true) {
  if (clamp) { const [viewS, viewE] = clampWindow(v.viewS, v.viewE, v.span); update(v, { viewS, viewE }); }
  if (v === V) hideTooltip();
  draw(v);
  scheduleFetch(FETCH_DEBOUNCE_MS, v);
}

export function updateURL() {
  if (!V.tracksDoc) return;
  const { S, E } = windowAbs();
  const url = urlOf(V, `/view/${V.enc}`);
  if (location.pathname + location.search !== url) history.replaceState(null, '', url);
  const crumb = $('#crumb-system');
  if (crumb) crumb.href = `${crumb.dataset.base}?start=${S}&end=${E}`;
}

// The track tree and the rows again (after a grouping change or a collapse).
export function relayout(v = V) {
  const tree = buildTree(v.tracksDoc, v.defs, v.mode);
  const header = [{ kind: 'axis', label: '', y: 0, h: AXIS_H }];
  let y = AXIS_H;
  for (const lane of v.usageTables.map((t) => v.laneDefs.get(t))) {
    header.push({ kind: 'lane', lane: lane.lane, def: lane, label: lane.label, y, h: LANE_H });
    y += LANE_H;
  }
  for (const def of v.counterLanes) {
    header.push({ kind: 'lane', counter: true, def, label: def.label, y, h: LANE_H });
    y += LANE_H;
  }
  const { rows, height } = layoutRows(tree, v.defs, v.collapsed, y);
  update(v, { tree, header, headerH: y, rows, contentH: y + height + 8 });
  if (v.resize) v.resize();
  draw(v);
}

// The store's changes (store.js lists them), handled in that order.
function onChange(v, c) {
  if (c.has('colour')) {
    for (const d of v.data.values()) colourise(d, v.defs.get(d.table), v.colourMode);
    if (v === V) updateLegend();
    draw(v);
  }
  if (c.has('layout')) relayout(v);
  if (c.has('select') && v === V) {
    // the selected event (store.js select): outline, details, flows; brought on screen
    if (V.reveal) { const ref = V.reveal; update(V, { reveal: null }); revealEvent(ref); }
    draw();
    updateURL();
    showDetails(V.sel);
  }
  if (c.has('window')) changed(v);
  if (c.has('moved')) changed(v, false);
  if (c.has('paint')) draw(v);
  if (c.has('summary') && v === V) showWindowSummary();
  if (c.has('url') && v === V) updateURL();
}
subscribe(onChange);

function revealEvent(ref) {
  if (ref.start !== undefined && ref.start !== null) {
    const a = relOf(ref.start), b = ref.end !== undefined && ref.end !== null ? relOf(ref.end) : a;
    const [viewS, viewE] = windowOnEvent(V.viewS, V.viewE, a, b);
    update(V, { viewS, viewE });
    changed();
  }
  if (ref.track === undefined || ref.track === null) return;
  const id = `${ref.table}\0${ref.track}`;
  const above = pathTo(V.tree, id);
  if (above && above.some((g) => V.collapsed.has(g))) { update(V, { collapsed: new Set([...V.collapsed].filter((g) => !above.includes(g))) }); relayout(); }
  const r = V.rows.find((x) => x.id === id);
  const scroller = $('#timeline-scroll');
  if (r && scroller) {
    const top = r.y - V.headerH;
    if (r.y < V.scrollTop + V.headerH || r.y + r.h > V.scrollTop + V.viewH) scroller.scrollTop = Math.max(0, top - 40);
  }
}

export function scheduleFetch(delay = FETCH_DEBOUNCE_MS, v = V) {
  clearTimeout(v.fetchTimer);
  update(v, { fetchTimer: setTimeout(() => fetchWindow(v), delay) });
}

// The page's panels, legend and status after a window came (or failed: msg).
function windowDone(v, msg = '') {
  if (v !== V) { update(v, { error: msg || null }); return; }
  if (!msg) { showWindowSummary(); updateLegend(); }
  setStatus(msg);
}

async function fetchWindow(v) {
  const { S, E } = windowAbs(v);
  const width = plotWidth(v);
  if (v === V) updateURL();
  if (!v.timelineTables.length && !v.usageTables.length && !v.counterLanes.length) {
    update(v, { lastWindow: { S, E, width } }); if (v === V) showWindowSummary(); draw(v);
    firstWindowDone(v);
    return;
  }
  const seq = v.fetchSeq + 1;
  update(v, { fetchSeq: seq, inFlight: v.inFlight + 1 });
  try {
    if (v.counterLanes.length) fetchCounters(v, seq, API.counters(v.name, S, E, width), Number(S - v.origin));
    const [tl, usage] = await Promise.all([
      v.timelineTables.length ? API.timelineBytes(v.name, v.timelineTables, S, E, width).then(decodeTimeline) : { tables: [] },
      v.usageTables.length ? API.usage(v.name, v.usageTables, S, E, width).catch(() => null) : null,
    ]);
    if (seq !== v.fetchSeq) return; // a newer window was asked for
    const off = Number(S - v.origin);
    const got = ingestTimeline(tl, off, v.defs, v.colourMode);
    update(v, { data: got.tracks, lastTables: got.tables, errors: new Map([...tracksErrors(v), ...got.errors]),
      usage: usage ? ingestUsage(usage, off, v.laneDefs) : null, lastWindow: { S, E, width } });
    draw(v);
    windowDone(v);
  } catch (e) {
    if (seq === v.fetchSeq) windowDone(v, `Error: ${e.message}`);
  } finally {
    update(v, { inFlight: v.inFlight - 1 });
    firstWindowDone(v);
  }
}

// Resolves the promise of the store's first window (startViewer, openTimeline), once.
function firstWindowDone(v) {
  const done = v.firstWindowDone;
  if (done) { update(v, { firstWindowDone: null }); done(); }
}

// The counter lanes of window `seq`, drawn when they come: /counters reads the table from
// its start (for the values in force), slower than /timeline's index, so the tracks do
// not wait for it; until then the lanes keep the previous window's samples (times are
// from t0, so they stay in place).
async function fetchCounters(v, seq, answer, off) {
  update(v, { inFlight: v.inFlight + 1 });
  try {
    const doc = await answer.catch(() => null);
    if (seq === v.fetchSeq) { update(v, { counters: doc ? ingestCounters(doc, off) : null }); draw(v); }
  } finally {
    update(v, { inFlight: v.inFlight - 1 });
  }
}

// For tests and scripts (docs/viewer.md "For scripts and tests").
function exposeState() {
  window.nxViewer = {
    get state() {
      const { S, E } = windowAbs();
      return { profile: V.name, kind: V.kind, start: S.toString(), end: E.toString(), width: plotWidth(),
        rows: screenRows().map((r) => ({ kind: r.kind, id: r.id, label: r.label, table: r.table, track: r.track, y: r.y, h: r.h,
          depth: r.depth, levels: r.levels, count: r.count, collapsed: r.collapsed, visible: r.visible !== false })),
        headerH: V.headerH, viewH: V.viewH, drawnEvents: V.drawnEvents, paintMs: V.paintMs, loaded: V.lastWindow !== null, sel: V.sel,
        lastWindow: V.lastWindow && { start: V.lastWindow.S.toString(), end: V.lastWindow.E.toString(), width: V.lastWindow.width },
        fetching: V.inFlight, group: V.mode, colourMode: V.colourMode, names: V.names, errors: Object.fromEntries(V.errors),
        markers: V.markers.map((m) => absOf(m.t).toString()),
        annotations: V.annot && { state: V.annot.state, error: V.annot.error, document: currentDocument() }, search: { ...V.search }, counterPixels: { ...V.counterDrawn },
        area: V.area && V.area.S !== undefined && { start: V.area.S.toString(), end: V.area.E.toString(), tracks: V.area.ids.map((id) => id.replace('\0', ':')) },
        aggregate: V.aggregate || null, flows: V.flows, tables: V.lastTables, empty: V.emptyMessage || null };
    },
    // Boxes (canvas CSS px) of the loaded events passing filter({table, track, ordinal, depth, name}).
    events(filter) { return drawnEvents(filter); },
    exports: (window.nxViewer && window.nxViewer.exports) || [],
  };
}

function drawnEvents(filter) {
  const out = [], g = geom();
  for (const r of screenRows()) {
    if (r.kind !== 'track') continue;
    const d = V.data.get(r.id);
    if (!d) continue;
    for (let i = 0; i < d.start.length; i++) {
      const ev = { table: d.table, track: d.track, ordinal: d.ord[i], depth: d.depth ? d.depth[i] : 0, name: d.name ? d.name[i] : null,
        start: absOf(d.start[i]).toString(), dur: d.dur[i] };
      if (filter && !filter(ev)) continue;
      out.push({ ...ev, ...eventBox(d, i, r, g) });
    }
  }
  return out;
}

// Open the viewer on profile `name` (info: /api/profiles/<name>) inside `host` (the page
// element that holds #viewer). opts.devices: the device profiles a system profile names,
// [{open, nc_id, first, last}], for "Open in Device Trace Viewer".
export async function startViewer(name, info, host, opts = {}) {
  const viewer = $('#viewer');
  host.append(viewer);
  host.hidden = false;
  viewer.hidden = false;
  exposeState();
  set({ devices: opts.devices || [] });
  const tracks = await loadStore(V, name, info);
  set(fromURL(V, location.search));
  installGrouping(tracks);
  installCanvas(V, $('#timeline'), $('#timeline-scroll'), $('#timeline-spacer'));
  installInput();
  installLegend();
  installSearch();
  installExport();
  installHelp();
  installAnnotations();
  relayout();
  if (V.sel) showDetails(V.sel);
  // Resolves once the first window has been answered (drawn, or failed).
  const firstWindow = new Promise((resolve) => { set({ firstWindowDone: resolve }); });
  scheduleFetch(0);
  setStatus('');
  return firstWindow;
}

// Store v on profile `name` (info: /api/profiles/<name>): its tables and lanes from
// /api/schema, its tracks, its whole span in view. Returns the /tracks answer.
async function loadStore(v, name, info) {
  update(v, { name, enc: namePath(name), info, kind: info.kind });
  const [doc, tracks, counterLanes] = await Promise.all([loadSchema(), API.tracks(name), profileCounterLanes(v, info)]);
  const schema = doc.viewer, tables = new Set(info.tables);
  const colour = (schema.timelines.find((t) => tables.has(t.table) && (t.colour_by || []).length) || { colour_by: [null] }).colour_by[0];
  const first = big(tracks.first_ts ?? info.first_ts) ?? 0n;
  const lastTs = big(tracks.last_ts ?? info.last_ts) ?? first + 1000n;
  const span = Math.max(1, Number(lastTs - first));
  update(v, {
    counterLanes, schema, units: doc.units, tables,
    defs: new Map(schema.timelines.map((t) => [t.table, t])),
    laneDefs: new Map(schema.usage.map((u) => [u.table, u])),
    timelineTables: schema.timelines.map((t) => t.table).filter((t) => tables.has(t)),
    usageTables: schema.usage.map((u) => u.table).filter((t) => tables.has(t)),
    defaultColour: colour, colourMode: colour,
    first, origin: first, span, viewS: 0, viewE: span, tracksDoc: tracks,
  });
  update(v, { errors: tracksErrors(v) });
  return tracks;
}

// A timeline of its own (the Compare page's stacked views): store v (createStore) on
// profile `name`, drawn inside element `root` (given a height by the page) on a canvas of
// its own, with the tracks in the default grouping. No input: the caller moves the window
// (store.js update(v, {viewS, viewE}, 'moved')). Resolves when the first window is drawn.
export async function openTimeline(v, name, root) {
  const info = await API.profileInfo(name);
  await loadStore(v, name, info);
  root.innerHTML = '<div class="timeline-scroll"><canvas class="timeline"></canvas><div></div></div>';
  const scroller = root.firstChild;
  installCanvas(v, scroller.firstChild, scroller, scroller.lastChild);
  relayout(v);
  const firstWindow = new Promise((resolve) => { update(v, { firstWindowDone: resolve }); });
  scheduleFetch(0, v);
  return firstWindow;
}

// The counter lanes of the whole profile (one /counters pass at width 1), [] without
// SystemProfileEvents or when /counters fails (the lanes are then left out).
async function profileCounterLanes(v, info) {
  const first = info.first_ts, last = info.last_ts;
  if (!(info.tables || []).includes('SystemProfileEvents') || first === null || first === undefined || last === null || last === undefined) return [];
  const doc = await API.counters(v.name, first, last, 1).catch(() => null);
  return [...ingestCounters(doc, 0).values()].map(({ key, kind, label, unit }) => ({ key, kind, label, unit }));
}

function installGrouping(tracks) {
  const sel = $('#group-mode');
  sel.innerHTML = GROUPINGS.map(([id, label]) => `<option value="${id}">${label}</option>`).join('');
  if (!GROUPINGS.some(([id]) => id === V.mode)) set({ mode: 'default' });
  sel.value = V.mode;
  sel.onchange = () => set({ mode: sel.value }, 'layout', 'url');
  $('#group-box').hidden = !hasGroupings(tracks);
}

function installCanvas(v, canvas, scroller, spacer) {
  const ctx = canvas.getContext('2d');
  update(v, { canvas, ctx });
  const resize = () => {
    update(v, { cssW: scroller.clientWidth, viewH: Math.max(50, scroller.clientHeight) });
    const dpr = window.devicePixelRatio || 1;
    canvas.style.height = `${v.viewH}px`;
    canvas.width = Math.round(v.cssW * dpr);
    canvas.height = Math.round(v.viewH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    spacer.style.height = `${Math.max(0, v.contentH - v.viewH)}px`;
    update(v, { scrollTop: scroller.scrollTop });
    draw(v);
    if (plotWidth(v) !== (v.lastWindow && v.lastWindow.width)) scheduleFetch(FETCH_DEBOUNCE_MS, v);
  };
  update(v, { resize });
  new ResizeObserver(resize).observe(scroller);
  scroller.addEventListener('scroll', () => { update(v, { scrollTop: scroller.scrollTop }); if (v === V) hideTooltip(); draw(v); });
  resize();
}

