// viewer.js — the timeline viewer shared by the Device Trace Viewer and the System Trace
// Viewer: its state, layout, fetching, URL and selection; the other modules paint it
// (paint.js), drive it (input.js) and fill its panels.
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
//   grouping or colour change (state.js has the format), so a copied link reopens the view.
import { api, apiBytes, big, namePath, schema as loadSchema } from './api.js';
import { decodeTimeline } from './timeline_bin.js';
import { $, setStatus } from './dom.js';
import { clampWindow, parseViewQuery, viewQuery, windowOnEvent } from './state.js';
import { buildTree, hasGroupings, layoutRows, pathTo, GROUPINGS } from './layout.js';
import { ingestTimeline, ingestUsage, colourise } from './data.js';
import { ingestCounters } from './counter_lanes.js';
import { LANE_H } from './lanes.js';
import { paintFrame, GUTTER, AXIS_H } from './paint.js';
import { eventBox } from './hit.js';
import { installInput, hideTooltip } from './input.js';
import { showDetails, showWindowSummary, loadDeviceSummary } from './panels.js';
import { showInsights } from './insights.js';
import { showSource } from './nki.js';
import { installLegend, updateLegend } from './legend.js';
import { installSearch } from './search.js';
import { installSelection } from './selection.js';
import { installExport } from './export.js';
import { installHelp } from './help.js';
import { installAnnotations, currentDocument } from './annotate.js';
import { installMemory } from './memory.js';

const FETCH_DEBOUNCE_MS = 120;

// A view's store: everything one timeline shows. The page's viewer is V; the Compare
// page's stacked timelines are stores of their own (createStore, openTimeline), drawn by
// the same layout, fetch and paint code. Only the page's store drives the URL, the panels,
// the legend and the status line.
export const createStore = () => ({
  name: null, enc: null, info: null, kind: null, schema: null, defs: new Map(), laneDefs: new Map(),
  tables: new Set(), timelineTables: [], usageTables: [], counterLanes: [], counters: null, counterDrawn: {},
  origin: 0n, span: 1, viewS: 0, viewE: 1,
  tracksDoc: null, tree: [], mode: 'default', collapsed: new Set(), colourMode: null,
  header: [], rows: [], headerH: 0, contentH: 0, scrollTop: 0, viewH: 0, cssW: 0,
  data: new Map(), errors: new Map(), lastTables: null, lastWindow: null, usage: null,
  sel: null, flows: null, area: null, markers: [], regions: [], annot: null, search: { field: null, q: '' },
  source: { sort: 'self_ns', asc: false, doc: null },
  devices: [], fetchSeq: 0, fetchTimer: 0, frame: 0, inFlight: 0, drawnEvents: 0, paintMs: null, names: [],
  painters: [], memory: null,   // views drawn after each frame on the same window (memory.js)
});

export const V = createStore();

// Each takes the store (the page's by default).
export const plotWidth = (v = V) => Math.max(1, Math.min(10000, Math.round(v.cssW - GUTTER)));
export const nsPerPx = (v = V) => (v.viewE - v.viewS) / Math.max(1, v.cssW - GUTTER);
export const geom = (v = V) => ({ gutter: GUTTER, viewS: v.viewS, k: nsPerPx(v), pad: 2, levelH: 16 });
export const windowAbs = (v = V) => ({ S: v.origin + BigInt(Math.floor(v.viewS)), E: v.origin + BigInt(Math.ceil(v.viewE)) });
export const absOf = (t, v = V) => v.origin + BigInt(Math.round(t));
export const relOf = (abs, v = V) => Number(big(abs) - v.origin);

// Tables /tracks could not read: table -> message.
const tracksErrors = (v = V) => new Map((v.tracksDoc.errors || []).map((e) => [e.table, e.error]));

// Rows as drawn now: the pinned header at its place, the track rows shifted by the scroll.
export function screenRows(v = V) {
  return [...v.header, ...v.rows.map((r) => ({ ...r, y: r.y - v.scrollTop, visible: r.y - v.scrollTop + r.h > v.headerH && r.y - v.scrollTop < v.viewH }))];
}

export function draw(v = V) {
  if (v.frame) return;
  document.body.dataset.paint = 'pending';   // for tests: a frame is on its way (docs/viewer.md)
  v.frame = requestAnimationFrame(() => {
    v.frame = 0;
    document.body.dataset.paint = 'done';
    const t0 = performance.now();
    paintFrame(v);
    v.paintMs = performance.now() - t0;   // reported in nxViewer.state for bench/viewer
    for (const p of v.painters) p(v);
  });
}

// After the window moved: clamped, redrawn, fetched (clamp false: the caller keeps it).
export function changed(v = V, clamp = true) {
  if (clamp) [v.viewS, v.viewE] = clampWindow(v.viewS, v.viewE, v.span);
  if (v === V) hideTooltip();
  draw(v);
  scheduleFetch(FETCH_DEBOUNCE_MS, v);
}

// Shows the window [startAbs, endAbs] (absolute ns, BigInt or its decimal text): a step
// row of the Devices and Steps tables zooms the timeline to its step so.
export function zoomTo(startAbs, endAbs) {
  const s = relOf(startAbs), e = relOf(endAbs);
  V.viewS = s; V.viewE = Math.max(e, s + 10);
  changed();
  updateURL();
}

export function updateURL() {
  if (!V.tracksDoc) return;
  const { S, E } = windowAbs();
  const url = `/view/${V.enc}?${viewQuery({ start: S, end: E, event: V.sel, q: V.search.q, field: V.search.field,
    group: V.mode !== 'default' ? V.mode : null, colour: V.colourMode !== V.defaultColour ? V.colourMode : null })}`;
  if (location.pathname + location.search !== url) history.replaceState(null, '', url);
  const crumb = $('#crumb-system');
  if (crumb) crumb.href = `${crumb.dataset.base}?start=${S}&end=${E}`;
}

// The track tree and the rows again (after a grouping change or a collapse).
export function relayout(v = V) {
  v.tree = buildTree(v.tracksDoc, v.defs, v.mode);
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
  v.header = header;
  v.headerH = y;
  const { rows, height } = layoutRows(v.tree, v.defs, v.collapsed, y);
  v.rows = rows;
  v.contentH = y + height + 8;
  if (v.resize) v.resize();
  draw(v);
}

export function setGrouping(mode) { V.mode = mode; relayout(); updateURL(); }

export function setColourMode(mode) {
  V.colourMode = mode;
  for (const d of V.data.values()) colourise(d, V.defs.get(d.table), mode);
  updateLegend();
  draw();
  updateURL();
}

export function toggleGroup(id) {
  if (V.collapsed.has(id)) V.collapsed.delete(id); else V.collapsed.add(id);
  relayout();
}

// Select event ref {table, ordinal[, start, end, track]} (null clears): outline, details,
// flows. reveal: also bring it on screen (expand its groups, scroll to its row, move the
// window onto it).
export function select(ref, reveal = false) {
  V.sel = ref ? { table: ref.table, ordinal: Number(ref.ordinal) } : null;
  V.selRef = ref && ref.start !== undefined && ref.start !== null
    ? { table: ref.table, ordinal: Number(ref.ordinal), track: ref.track, start: ref.start, end: ref.end ?? ref.start } : null;
  V.flows = null;
  if (ref && reveal) revealEvent(ref);
  draw();
  updateURL();
  showDetails(V.sel);
}

function revealEvent(ref) {
  if (ref.start !== undefined && ref.start !== null) {
    const a = relOf(ref.start), b = ref.end !== undefined && ref.end !== null ? relOf(ref.end) : a;
    [V.viewS, V.viewE] = windowOnEvent(V.viewS, V.viewE, a, b);
    changed();
  }
  if (ref.track === undefined || ref.track === null) return;
  const id = `${ref.table}\0${ref.track}`;
  const above = pathTo(V.tree, id);
  if (above && above.some((g) => V.collapsed.has(g))) { for (const g of above) V.collapsed.delete(g); relayout(); }
  const r = V.rows.find((x) => x.id === id);
  const scroller = $('#timeline-scroll');
  if (r && scroller) {
    const top = r.y - V.headerH;
    if (r.y < V.scrollTop + V.headerH || r.y + r.h > V.scrollTop + V.viewH) scroller.scrollTop = Math.max(0, top - 40);
  }
}

export function scheduleFetch(delay = FETCH_DEBOUNCE_MS, v = V) {
  clearTimeout(v.fetchTimer);
  v.fetchTimer = setTimeout(() => fetchWindow(v), delay);
}

// The page's panels, legend and status after a window came (or failed: msg).
function windowDone(v, msg = '') {
  if (v !== V) { v.error = msg || null; return; }
  if (!msg) { showWindowSummary(); updateLegend(); }
  setStatus(msg);
}

async function fetchWindow(v) {
  const { S, E } = windowAbs(v);
  const width = plotWidth(v);
  if (v === V) updateURL();
  if (!v.timelineTables.length && !v.usageTables.length && !v.counterLanes.length) {
    v.lastWindow = { S, E, width }; if (v === V) showWindowSummary(); draw(v);
    if (v.firstWindowDone) { v.firstWindowDone(); v.firstWindowDone = null; }
    return;
  }
  const seq = ++v.fetchSeq;
  v.inFlight++;
  try {
    const base = `/api/profiles/${v.enc}`, qs = `start=${S}&end=${E}&width=${width}`;
    if (v.counterLanes.length) fetchCounters(v, seq, `${base}/counters?${qs}`, Number(S - v.origin));
    const [tl, usage] = await Promise.all([
      v.timelineTables.length ? apiBytes(`${base}/timeline?tables=${v.timelineTables.join(',')}&${qs}&format=bin`).then(decodeTimeline) : { tables: [] },
      v.usageTables.length ? api(`${base}/usage?tables=${v.usageTables.join(',')}&${qs}`).catch(() => null) : null,
    ]);
    if (seq !== v.fetchSeq) return; // a newer window was asked for
    const off = Number(S - v.origin);
    const got = ingestTimeline(tl, off, v.defs, v.colourMode);
    v.data = got.tracks; v.lastTables = got.tables;
    v.errors = new Map([...tracksErrors(v), ...got.errors]);
    v.usage = usage ? ingestUsage(usage, off, v.laneDefs) : null;
    v.lastWindow = { S, E, width };
    draw(v);
    windowDone(v);
  } catch (e) {
    if (seq === v.fetchSeq) windowDone(v, `Error: ${e.message}`);
  } finally {
    v.inFlight--;
    if (v.firstWindowDone) { v.firstWindowDone(); v.firstWindowDone = null; }
  }
}

// The counter lanes of window `seq`, drawn when they come: /counters reads the table from
// its start (for the values in force), slower than /timeline's index, so the tracks do
// not wait for it; until then the lanes keep the previous window's samples (times are
// from t0, so they stay in place).
async function fetchCounters(v, seq, url, off) {
  v.inFlight++;
  try {
    const doc = await api(url).catch(() => null);
    if (seq === v.fetchSeq) { v.counters = doc ? ingestCounters(doc, off) : null; draw(v); }
  } finally {
    v.inFlight--;
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

function readURL() {
  const q = parseViewQuery(location.search);
  if (q.start !== null && q.end !== null) {
    const s = Number(q.start - V.origin), e = Number(q.end - V.origin);
    if (e > s) { V.viewS = s; V.viewE = e; }
  }
  V.sel = q.event;
  if (q.q) V.search = { q: q.q, field: q.field };
  if (q.group) V.mode = q.group;
  if (q.colour) V.colourMode = q.colour;
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
  V.devices = opts.devices || [];
  const tracks = await loadStore(V, name, info);
  readURL();
  installGrouping(tracks);
  installCanvas(V, $('#timeline'), $('#timeline-scroll'), $('#timeline-spacer'));
  installInput();
  installLegend();
  installSearch();
  installSelection();
  installExport();
  installHelp();
  installAnnotations();
  relayout();
  if (info.kind === 'device') { loadDeviceSummary(); showInsights(name, $('#insights')); showSource(name); installMemory(V.tables); }
  else { $('#summary').hidden = true; $('#source').hidden = true; }
  if (V.sel) showDetails(V.sel);
  // Resolves once the first window has been answered (drawn, or failed).
  const firstWindow = new Promise((resolve) => { V.firstWindowDone = resolve; });
  scheduleFetch(0);
  setStatus('');
  return firstWindow;
}

// Store v on profile `name` (info: /api/profiles/<name>): its tables and lanes from
// /api/schema, its tracks, its whole span in view. Returns the /tracks answer.
async function loadStore(v, name, info) {
  Object.assign(v, { name, enc: namePath(name), info, kind: info.kind });
  const [doc, tracks, counterLanes] = await Promise.all([loadSchema(), api(`/api/profiles/${v.enc}/tracks`), profileCounterLanes(v, info)]);
  v.counterLanes = counterLanes;
  const schema = doc.viewer;
  v.schema = schema;
  v.units = doc.units;
  v.tables = new Set(info.tables);
  v.defs = new Map(schema.timelines.map((t) => [t.table, t]));
  v.laneDefs = new Map(schema.usage.map((u) => [u.table, u]));
  v.timelineTables = schema.timelines.map((t) => t.table).filter((t) => v.tables.has(t));
  v.usageTables = schema.usage.map((u) => u.table).filter((t) => v.tables.has(t));
  v.defaultColour = v.colourMode = (schema.timelines.find((t) => v.tables.has(t.table) && (t.colour_by || []).length) || { colour_by: [null] }).colour_by[0];
  const first = big(tracks.first_ts ?? info.first_ts) ?? 0n;
  const lastTs = big(tracks.last_ts ?? info.last_ts) ?? first + 1000n;
  v.first = first;
  v.origin = first;
  v.span = Math.max(1, Number(lastTs - first));
  v.viewS = 0; v.viewE = v.span;
  v.tracksDoc = tracks;
  v.errors = tracksErrors(v);
  return tracks;
}

// A timeline of its own (the Compare page's stacked views): store v (createStore) on
// profile `name`, drawn inside element `root` (given a height by the page) on a canvas of
// its own, with the tracks in the default grouping. No input: the caller moves the window
// (v.viewS, v.viewE, then changed(v, false)). Resolves when the first window is drawn.
export async function openTimeline(v, name, root) {
  const info = await api(`/api/profiles/${namePath(name)}`);
  await loadStore(v, name, info);
  root.innerHTML = '<div class="timeline-scroll"><canvas class="timeline"></canvas><div></div></div>';
  const scroller = root.firstChild;
  installCanvas(v, scroller.firstChild, scroller, scroller.lastChild);
  relayout(v);
  const firstWindow = new Promise((resolve) => { v.firstWindowDone = resolve; });
  scheduleFetch(0, v);
  return firstWindow;
}

// The counter lanes of the whole profile (one /counters pass at width 1), [] without
// SystemProfileEvents or when /counters fails (the lanes are then left out).
async function profileCounterLanes(v, info) {
  const first = info.first_ts, last = info.last_ts;
  if (!(info.tables || []).includes('SystemProfileEvents') || first === null || first === undefined || last === null || last === undefined) return [];
  const doc = await api(`/api/profiles/${v.enc}/counters?start=${first}&end=${last}&width=1`).catch(() => null);
  return [...ingestCounters(doc, 0).values()].map(({ key, kind, label, unit }) => ({ key, kind, label, unit }));
}

function installGrouping(tracks) {
  const sel = $('#group-mode');
  sel.innerHTML = GROUPINGS.map(([id, label]) => `<option value="${id}">${label}</option>`).join('');
  if (!GROUPINGS.some(([id]) => id === V.mode)) V.mode = 'default';
  sel.value = V.mode;
  sel.onchange = () => setGrouping(sel.value);
  $('#group-box').hidden = !hasGroupings(tracks);
}

function installCanvas(v, canvas, scroller, spacer) {
  const ctx = canvas.getContext('2d');
  v.canvas = canvas; v.ctx = ctx;
  const resize = () => {
    v.cssW = scroller.clientWidth;
    v.viewH = Math.max(50, scroller.clientHeight);
    const dpr = window.devicePixelRatio || 1;
    canvas.style.height = `${v.viewH}px`;
    canvas.width = Math.round(v.cssW * dpr);
    canvas.height = Math.round(v.viewH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    spacer.style.height = `${Math.max(0, v.contentH - v.viewH)}px`;
    v.scrollTop = scroller.scrollTop;
    draw(v);
    if (plotWidth(v) !== (v.lastWindow && v.lastWindow.width)) scheduleFetch(FETCH_DEBOUNCE_MS, v);
  };
  v.resize = resize;
  new ResizeObserver(resize).observe(scroller);
  scroller.addEventListener('scroll', () => { v.scrollTop = scroller.scrollTop; if (v === V) hideTooltip(); draw(v); });
  resize();
}

