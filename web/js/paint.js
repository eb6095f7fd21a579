// paint.js — one frame of the timeline canvas (Canvas 2D).
//
// Order: the track rows under the pinned header (group headers with their event counts,
// tracks with their events: nested tables as slices by depth, one LEVEL_H band per level;
// names inside every block wide enough, ellipsised, and a light edge where each block at
// least MIN_EDGE_PX wide starts; a table that failed to read shows its
// error on its rows), then the overlays (grid, named regions, area selection, markers, flow arrows, the
// selected event's outline), then the header (time axis with marker deltas, usage
// and counter lanes), and a message when there is nothing to draw. Touching rectangles of one
// colour on one level are painted as one and fillStyle is set only when the colour
// changes, so a frame stays within a 60 frames/s budget even when every pixel of every
// track holds an event.
// paintFrame(v) paints view v (the page's store by default, or a store of store.js
// createStore, such as each of the Compare page's stacked timelines); a frame is painted
// synchronously, so the functions below read the view being painted from V, and what the
// frame found (the selected event's box, the names drawn, the boxes the flow arrows need,
// the counter lanes' pixels) from F, written into the store when the frame is done.
import { V as PAGE, update, relOf } from './store.js';
import { GUTTER, geom, screenRows, nsPerPx } from './plot.js';
import { ellipsize, fmtNs, fmtTick, niceStep } from './format.js';
import { shortName } from './names.js';
import { eventBox, visibleRange } from './hit.js';
import { markerDeltas } from './markers.js';
import { paintLane } from './lanes.js';
import { paintCounterLane } from './counter_lanes.js';
import { $ } from './dom.js';

const FONT = '11px system-ui, sans-serif', BOLD = 'bold 11px system-ui, sans-serif';
const MIN_NAME_PX = 28, MIN_EDGE_PX = 4, MAX_NAMES = 4000;
const MARKER = '#d97706', REGION = '#059669', PRED = '#7c3aed', SUCC = '#db2777';

let V = null, F = null;   // set by paintFrame

const widths = new Map();
function measure(ctx, s) {
  let w = widths.get(s);
  if (w === undefined) { w = ctx.measureText(s).width; if (widths.size > 20000) widths.clear(); widths.set(s, w); }
  return w;
}
const fit = (ctx, s, maxW) => ellipsize(s, maxW, (x) => measure(ctx, x));

const inkCache = new Map();
// Text colour for a block of colour c: dark on light fills, white on dark ones.
function inkOn(c) {
  let ink = inkCache.get(c);
  if (!ink) {
    const n = parseInt(c.slice(1), 16), r = n >> 16, g = (n >> 8) & 255, b = n & 255;
    ink = 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#111827' : '#ffffff';
    inkCache.set(c, ink);
  }
  return ink;
}

export function paintFrame(v = PAGE) {
  V = v;
  F = { selBox: null, names: [], boxes: new Map(), counterDrawn: {} };
  const ctx = V.ctx, W = V.cssW, H = V.viewH;
  if (!ctx) return;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, W, H);
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  const g = geom(V);
  const rows = screenRows(V).filter((r) => r.kind !== 'axis' && r.kind !== 'lane' && r.visible);
  // the boxes the flow arrows need, found while painting
  const want = new Set(V.flows ? [...V.flows.predecessors, ...V.flows.successors].map((r) => `${r.table}:${r.ordinal}`) : []);
  let drawn = 0;
  ctx.save();
  ctx.beginPath(); ctx.rect(0, V.headerH, W, H - V.headerH); ctx.clip();
  for (const r of rows) drawn += r.kind === 'group' ? (paintGroup(ctx, r, W), 0) : paintTrack(ctx, r, g, W, want);
  paintGrid(ctx, V.headerH, H);
  paintRegions(ctx, V.headerH, H, W);
  paintArea(ctx, rows, g);
  paintMarkerLines(ctx, V.headerH, H);
  paintFlows(ctx, g);
  if (F.selBox) {
    const b = F.selBox;
    ctx.strokeStyle = '#111827'; ctx.lineWidth = 2;
    ctx.strokeRect(b.x - 1, b.y, Math.max(2, b.w) + 2, b.h);
    ctx.lineWidth = 1;
  }
  ctx.restore();
  for (const r of V.header) r.kind === 'axis' ? paintAxis(ctx, r, W) : paintLaneRow(ctx, r, g, W);
  const emptyMessage = paintEmpty(ctx, rows, W, H);
  update(V, { ...F, drawnEvents: drawn, emptyMessage });
  if (V !== PAGE) return;
  const label = $('#range-label');
  label.firstChild.textContent = `${fmtNs(V.viewS)} – ${fmtNs(V.viewE)} (${fmtNs(V.viewE - V.viewS)} visible)`;
  label.lastChild.textContent = `t0 = ${V.origin} ns`;
}

function gutterLabel(ctx, r, text, x, font, colour) {
  ctx.font = font;
  ctx.fillStyle = colour;
  ctx.fillText(fit(ctx, text, GUTTER - x - 6), x, r.y + Math.min(r.h, 20) / 2);
}

function rowBase(ctx, r, W, gutterFill) {
  ctx.fillStyle = gutterFill;
  ctx.fillRect(0, r.y, GUTTER, r.h);
  ctx.strokeStyle = '#eceef2';
  ctx.beginPath(); ctx.moveTo(0, r.y + r.h - 0.5); ctx.lineTo(W, r.y + r.h - 0.5); ctx.stroke();
}

function paintGroup(ctx, r, W) {
  ctx.fillStyle = '#eef1f5';
  ctx.fillRect(GUTTER, r.y, W - GUTTER, r.h);
  rowBase(ctx, r, W, '#e3e7ee');
  const x = 4 + r.depth * 12;
  ctx.font = FONT; ctx.fillStyle = '#4b5563';
  ctx.fillText(r.collapsed ? '▸' : '▾', x, r.y + r.h / 2);
  gutterLabel(ctx, r, r.label, x + 12, BOLD, '#111827');
  ctx.font = FONT; ctx.fillStyle = '#6b7280';
  ctx.fillText(`${r.count.toLocaleString('en-US')} events`, GUTTER + 6, r.y + r.h / 2);
}

// Track data d's events on row r; returns how many were on screen.
function paintTrack(ctx, r, g, W, want) {
  rowBase(ctx, r, W, '#f6f7f9');
  gutterLabel(ctx, r, r.label, 8 + r.depth * 12, FONT, '#374151');
  const err = V.errors.get(r.table);
  ctx.save();
  ctx.beginPath(); ctx.rect(GUTTER, r.y, W - GUTTER, r.h); ctx.clip();
  if (err) {
    ctx.font = FONT; ctx.fillStyle = '#b91c1c';
    ctx.fillText(fit(ctx, `⚠ ${r.table} could not be read: ${err}`, W - GUTTER - 12), GUTTER + 6, r.y + Math.min(r.h, 20) / 2);
    ctx.restore();
    return 0;
  }
  const d = V.data.get(r.id);
  const n = d ? paintEvents(ctx, r, d, g, W, want) : 0;
  ctx.restore();
  return n;
}

function paintEvents(ctx, r, d, g, W, want) {
  const selOrd = V.sel && V.sel.table === d.table ? V.sel.ordinal : null;
  const runs = new Map();   // level -> {c, x0, x1, y, h}
  // One path per colour, filled once: tens of thousands of fillRect calls, each
  // with its own fill style, cost more than the whole rest of a frame.
  const paths = new Map();
  let n = 0;
  const flush = (run) => {
    if (!run || run.c === null) return;
    let p = paths.get(run.c);
    if (!p) paths.set(run.c, (p = new Path2D()));
    p.rect(run.x0, run.y, run.x1 - run.x0, run.h);
    run.c = null;
  };
  const texts = [], edges = [];
  const [lo, hi] = visibleRange(d, g, GUTTER, W);
  for (let i = lo; i < hi; i++) {
    const b = eventBox(d, i, r, g);
    if (b.x + b.w < GUTTER || b.x > W) continue;
    n++;
    if (selOrd !== null && d.ord[i] === selOrd) { F.selBox = b; F.boxes.set(`${d.table}:${selOrd}`, b); }
    if (want.size && want.has(`${d.table}:${d.ord[i]}`)) F.boxes.set(`${d.table}:${d.ord[i]}`, b);
    const lvl = b.y, c = d.colour[i];
    let run = runs.get(lvl);
    if (!run) { run = { c: null }; runs.set(lvl, run); }
    if (run.c !== null && b.w < 1 && b.x + b.w <= run.x1 + 0.5) {
      // a sliver inside the pixel the level's run already paints: nothing to add
    } else if (c === run.c && b.x <= run.x1 + 0.5) {
      if (b.x + b.w > run.x1) run.x1 = b.x + b.w;
    } else {
      flush(run);
      Object.assign(run, { c, x0: b.x, x1: b.x + b.w, y: b.y, h: b.h });
    }
    if (b.w >= MIN_EDGE_PX) edges.push(b);
    if (d.name && d.name[i] && b.w >= MIN_NAME_PX) texts.push([i, b, c]);
  }
  for (const run of runs.values()) flush(run);
  for (const [c, p] of paths) { ctx.fillStyle = c; ctx.fill(p); }
  // a light edge where each wide block starts (blocks of one colour touch), then the names
  ctx.fillStyle = 'rgba(255,255,255,0.6)';
  const edgePath = new Path2D();
  for (const b of edges) edgePath.rect(b.x, b.y, 1, b.h);
  ctx.fill(edgePath);
  ctx.font = FONT;
  for (const [i, b, c] of texts) {
    const x = Math.max(b.x, GUTTER), w = Math.min(b.x + b.w, W) - x;
    const s = fit(ctx, shortName(String(d.name[i])), w - 6);
    if (!s) continue;
    ctx.fillStyle = inkOn(c);
    ctx.fillText(s, x + 3, b.y + b.h / 2 + 0.5);
    if (F.names.length < MAX_NAMES) F.names.push({ text: s, name: String(d.name[i]), table: d.table, track: d.track, ordinal: d.ord[i], x: x + 3, y: b.y + b.h / 2 });
  }
  return n;
}

function ticks() {
  const k = nsPerPx(V);
  const step = niceStep(Math.max(1, 90 * k));
  const first = Math.ceil(V.viewS / step) * step;
  const out = [];
  for (let t = first; t <= V.viewE; t += step) out.push(t);
  return { step, list: out };
}
const xOf = (t) => GUTTER + (t - V.viewS) / nsPerPx(V);

function paintGrid(ctx, y0, y1) {
  ctx.strokeStyle = 'rgba(0,0,0,0.05)';
  ctx.beginPath();
  for (const t of ticks().list) { const x = Math.round(xOf(t)) + 0.5; if (x >= GUTTER) { ctx.moveTo(x, y0); ctx.lineTo(x, y1); } }
  ctx.stroke();
}

function paintAxis(ctx, r, W) {
  ctx.fillStyle = '#f0f2f5';
  ctx.fillRect(0, r.y, W, r.h);
  ctx.font = FONT; ctx.fillStyle = '#6b7280';
  ctx.fillText(V.axisLabel || 'time from t0', 8, r.y + r.h / 2);
  const { step, list } = ticks();
  const mag = Math.max(Math.abs(V.viewS), Math.abs(V.viewE), step);
  ctx.strokeStyle = '#9ca3af';
  ctx.beginPath();
  for (const t of list) {
    const x = Math.round(xOf(t)) + 0.5;
    if (x < GUTTER) continue;
    ctx.moveTo(x, r.y + r.h - 8); ctx.lineTo(x, r.y + r.h);
    ctx.fillStyle = '#374151';
    ctx.fillText(fmtTick(t, step, mag), x + 3, r.y + r.h / 2 - 4);
  }
  ctx.stroke();
  ctx.strokeStyle = '#d1d5db';
  ctx.beginPath(); ctx.moveTo(0, r.y + r.h - 0.5); ctx.lineTo(W, r.y + r.h - 0.5); ctx.stroke();
  if (V.area) {
    const x0 = Math.max(GUTTER, xOf(V.area.t0)), x1 = Math.min(W, xOf(V.area.t1));
    if (x1 > x0) { ctx.fillStyle = 'rgba(37,99,235,0.25)'; ctx.fillRect(x0, r.y, x1 - x0, r.h); }
  }
  paintMarkerFlags(ctx, r, W);
}

function axisLabel(ctx, text, cx, y, colour, W) {
  const w = measure(ctx, text) + 8;
  const x = Math.max(GUTTER, Math.min(W - w, cx - w / 2));
  ctx.fillStyle = 'rgba(255,255,255,0.92)';
  ctx.fillRect(x, y - 6, w, 12);
  ctx.fillStyle = colour;
  ctx.fillText(text, x + 4, y);
}

function paintMarkerLines(ctx, y0, y1) {
  ctx.setLineDash([4, 3]);
  for (const m of V.markers) {
    const x = Math.round(xOf(m.t)) + 0.5;
    if (x < GUTTER) continue;
    ctx.strokeStyle = m.colour || MARKER;
    ctx.beginPath(); ctx.moveTo(x, y0); ctx.lineTo(x, y1); ctx.stroke();
  }
  ctx.setLineDash([]);
}

// Named regions (annotate.js): a tinted band over the tracks, its edges, its name at the top.
function paintRegions(ctx, y0, y1, W) {
  for (const r of V.regions || []) {
    const x0 = Math.max(GUTTER, xOf(r.t0)), x1 = Math.min(W, xOf(r.t1));
    if (x1 < GUTTER || x0 > W) continue;
    const colour = r.colour || REGION;
    ctx.globalAlpha = 0.1; ctx.fillStyle = colour; ctx.fillRect(x0, y0, Math.max(1, x1 - x0), y1 - y0);
    ctx.globalAlpha = 0.7; ctx.strokeStyle = colour;
    ctx.beginPath();
    for (const x of [xOf(r.t0), xOf(r.t1)]) if (x >= GUTTER && x <= W) { ctx.moveTo(Math.round(x) + 0.5, y0); ctx.lineTo(Math.round(x) + 0.5, y1); }
    ctx.stroke();
    ctx.globalAlpha = 1;
    const text = fit(ctx, r.name, Math.max(0, x1 - x0 - 8));
    if (!text) continue;
    const w = measure(ctx, text) + 8;
    ctx.fillStyle = 'rgba(255,255,255,0.9)'; ctx.fillRect(x0 + 1, y0 + 2, w, 14);
    ctx.fillStyle = colour; ctx.fillText(text, x0 + 5, y0 + 9);
  }
}

function paintMarkerFlags(ctx, r, W) {
  if (!V.markers.length) return;
  paintMarkerLines(ctx, r.y, V.headerH);
  for (const m of V.markers) {
    const x = xOf(m.t);
    if (x < GUTTER || x > W) continue;
    ctx.fillStyle = m.colour || MARKER;
    ctx.beginPath(); ctx.moveTo(x - 5, r.y); ctx.lineTo(x + 5, r.y); ctx.lineTo(x, r.y + 7); ctx.closePath(); ctx.fill();
    if (m.label) axisLabel(ctx, fit(ctx, m.label, 160), x + 8 + Math.min(160, measure(ctx, m.label)) / 2, r.y + 7, m.colour || '#92400e', W);
  }
  for (const dl of markerDeltas(V.markers)) {
    const a = xOf(dl.from), b = xOf(dl.to);
    if (b < GUTTER || a > W) continue;
    axisLabel(ctx, `Δ ${fmtNs(dl.delta)}`, (Math.max(a, GUTTER) + Math.min(b, W)) / 2, r.y + r.h - 7, '#92400e', W);
  }
}

function paintLaneRow(ctx, r, g, W) {
  rowBase(ctx, r, W, '#f6f7f9');
  ctx.fillStyle = '#ffffff'; ctx.fillRect(GUTTER, r.y, W - GUTTER, r.h - 1);
  gutterLabel(ctx, r, r.label, 8, FONT, '#374151');
  ctx.save();
  ctx.beginPath(); ctx.rect(GUTTER, r.y, W - GUTTER, r.h); ctx.clip();
  ctx.font = FONT;
  if (r.counter) F.counterDrawn[r.label] = paintCounterLane(ctx, r, V.counters, g, W);
  else paintLane(ctx, r, V.usage, g, W);
  ctx.restore();
}

function paintArea(ctx, rows, g) {
  if (!V.area) return;
  const ids = new Set(V.area.ids);
  const x0 = Math.max(GUTTER, xOf(V.area.t0)), x1 = xOf(V.area.t1);
  ctx.fillStyle = 'rgba(37,99,235,0.14)';
  for (const r of rows) if (r.kind === 'track' && ids.has(r.id)) ctx.fillRect(x0, r.y, Math.max(1, x1 - x0), r.h);
  ctx.strokeStyle = 'rgba(37,99,235,0.8)';
  ctx.beginPath();
  for (const x of [x0, x1]) { ctx.moveTo(Math.round(x) + 0.5, V.headerH); ctx.lineTo(Math.round(x) + 0.5, V.viewH); }
  ctx.stroke();
  ctx.font = FONT;
  axisLabel(ctx, `selection ${fmtNs(V.area.t1 - V.area.t0)}`, (x0 + Math.min(x1, V.cssW)) / 2, V.headerH + 9, '#1d4ed8', V.cssW);
}

// Where event ref {table, ordinal, start, end, track} is on screen: its box when drawn,
// else its time on its row (level 0), or null when its row is not shown.
function refBox(ref, g) {
  const drawnBox = F.boxes.get(`${ref.table}:${ref.ordinal}`);
  if (drawnBox) return drawnBox;
  const r = screenRows(V).find((x) => x.kind === 'track' && x.table === ref.table && x.track === ref.track);
  if (!r || !r.visible) return null;
  const a = relOf(ref.start, V), b = ref.end !== null && ref.end !== undefined ? relOf(ref.end, V) : a;
  const x = g.gutter + (a - g.viewS) / g.k;
  return { x, w: Math.max(1, (b - a) / g.k), y: r.y + g.pad, h: r.nested ? g.levelH - 1 : r.h - 2 * g.pad };
}

function arrow(ctx, x0, y0, x1, y1, colour) {
  ctx.strokeStyle = colour; ctx.fillStyle = colour; ctx.lineWidth = 1.5;
  const mx = (x0 + x1) / 2;
  ctx.beginPath(); ctx.moveTo(x0, y0); ctx.bezierCurveTo(mx, y0, mx, y1, x1, y1); ctx.stroke();
  const dir = x1 >= mx ? 1 : -1;
  ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 7 * dir, y1 - 4); ctx.lineTo(x1 - 7 * dir, y1 + 4); ctx.closePath(); ctx.fill();
  ctx.lineWidth = 1;
}

// An end off the plot is pinned to its edge, so the curve bends where it can be seen
// instead of running along the selected row over other events' names.
function paintFlows(ctx, g) {
  if (!V.flows || !V.selRef) return;
  const s = refBox(V.selRef, g);
  if (!s) return;
  const mid = (b) => b.y + b.h / 2, pin = (x) => Math.min(Math.max(x, g.gutter), V.cssW);
  for (const p of V.flows.predecessors || []) { const b = refBox(p, g); if (b) arrow(ctx, pin(b.x + b.w), mid(b), pin(s.x), mid(s), PRED); }
  for (const p of V.flows.successors || []) { const b = refBox(p, g); if (b) arrow(ctx, pin(s.x + s.w), mid(s), pin(b.x), mid(b), SUCC); }
}

// Why nothing is drawn, in the middle of the track area; returns it (null: something is).
function paintEmpty(ctx, rows, W, H) {
  let msg = null;
  if (!V.timelineTables.length) msg = 'This profile has no timeline tables.';
  else if (!V.rows.length) msg = 'This profile\'s timeline tables hold no events.';
  else if (V.lastTables && V.lastTables.every((t) => !t.error && Number(t.rows_in_window) === 0)) msg = 'No events in this window — press 0 to see the whole profile.';
  if (!msg) return null;
  const y = V.headerH + Math.max(40, Math.min(120, (H - V.headerH) / 2));
  ctx.font = '13px system-ui, sans-serif';
  ctx.fillStyle = '#6b7280';
  const w = ctx.measureText(msg).width;
  ctx.fillText(msg, GUTTER + Math.max(8, (W - GUTTER - w) / 2), y);
  ctx.font = FONT;
  return msg;
}
