// counter_lanes.js — the framework counter lanes under the usage lanes, from /counters
// (docs/viewer.md): memory over time per device (series "allocated" and "reserved", in
// bytes) and one lane per Chrome counter (a series per numeric args member).
//
// The lanes are those of the whole profile (the first /counters answer, over its whole
// span), so rows do not come and go while panning; each window's answer fills them. A
// series is a step function: a sample holds until the next one, the last one to the end of
// the window (the lanes are gauges, /api/schema viewer.counter_lanes). A pixel takes the
// largest value each series holds over it (lanes.js seriesPixels), every series of a lane
// is drawn on one scale from 0 to the lane's peak in the window: memory as two areas
// (reserved behind, allocated in front), counters as lines; a legend names the series.
import { seriesPixels, valueOver } from './lanes.js';
import { fmtNs, fmtCounter, esc } from './format.js';

// A lane's identity across answers: its kind and key parts.
export const laneKey = (l) => JSON.stringify([l.kind, l.worker_gid ?? null, l.device_type ?? null, l.device_id ?? null,
  l.process_id ?? null, l.name ?? null]);

// A /counters answer whose window starts `offset` ns after t0 -> Map laneKey -> {key,
// kind, label, unit, series: [{name, t: Float64Array (ns from t0), v: Float64Array}]},
// a series' "before" sample first.
export function ingestCounters(doc, offset) {
  const out = new Map();
  for (const l of (doc && doc.lanes) || []) {
    const series = l.series.map((sr) => {
      const pre = sr.before ? 1 : 0, m = sr.t.length + pre;
      const t = new Float64Array(m), v = new Float64Array(m);
      if (pre) { t[0] = offset + Number(sr.before.t); v[0] = Number(sr.before.v); }
      for (let i = 0; i < sr.t.length; i++) { t[i + pre] = offset + Number(sr.t[i]); v[i + pre] = Number(sr.v[i]); }
      return { name: sr.name, t, v };
    });
    const key = laneKey(l);
    out.set(key, { key, kind: l.kind, label: l.label, unit: l.unit, series });
  }
  return out;
}

const MEMORY = { allocated: ['rgba(37,99,235,0.55)', '#1d4ed8'], reserved: ['rgba(147,197,253,0.55)', '#60a5fa'] };
const LINES = ['#0f766e', '#b45309', '#7c3aed', '#be123c', '#4d7c0f', '#0369a1'];
// The [fill, line] colours of series i (named `name`) of a lane of `kind`.
export function seriesColours(kind, name, i) {
  if (kind === 'memory' && MEMORY[name]) return MEMORY[name];
  const c = LINES[i % LINES.length];
  return [null, c];
}

let scratch = [];
function pixels(n, pw) {
  while (scratch.length < n) scratch.push(new Float64Array(pw));
  if (scratch[0].length !== pw) scratch = scratch.map(() => new Float64Array(pw));
  return scratch;
}

// Paints lane row r (r.def: {key, kind, label, unit}) from c (ingestCounters); returns the
// number of plot pixels where some series is above 0 (what the page reports as drawn).
export function paintCounterLane(ctx, r, c, g, W) {
  const pw = Math.max(1, Math.floor(W - g.gutter)), lane = c && c.get(r.def.key);
  if (!lane || !lane.series.length) return 0;
  const px = pixels(lane.series.length, pw);
  let max = 0, drawn = 0;
  lane.series.forEach((sr, s) => { seriesPixels(sr, px[s], pw, Infinity, g.viewS, g.k); for (let p = 0; p < pw; p++) max = Math.max(max, px[s][p]); });
  if (max <= 0) return 0;
  const yOf = (x) => r.y + r.h - 2 - (r.h - 6) * Math.max(0, Math.min(1, x / max));
  for (let p = 0; p < pw; p++) if (lane.series.some((sr, s) => px[s][p] > 0)) drawn++;
  for (let s = lane.series.length - 1; s >= 0; s--) {
    const [fill, line] = seriesColours(lane.kind, lane.series[s].name, s), one = px[s];
    const path = new Path2D();
    path.moveTo(g.gutter, yOf(one[0]));
    for (let p = 0; p < pw; p++) { const y = yOf(one[p]); path.lineTo(g.gutter + p, y); path.lineTo(g.gutter + p + 1, y); }
    if (fill) {
      const area = new Path2D(path);
      area.lineTo(g.gutter + pw, r.y + r.h); area.lineTo(g.gutter, r.y + r.h); area.closePath();
      ctx.fillStyle = fill; ctx.fill(area);
    }
    ctx.strokeStyle = line; ctx.lineWidth = 1; ctx.stroke(path);
  }
  paintLegend(ctx, lane, g.gutter + 6, r.y + 8);
  const caption = `peak ${fmtCounter(max, lane.unit)}`, cw = ctx.measureText(caption).width;
  ctx.fillStyle = 'rgba(255,255,255,0.85)';
  ctx.fillRect(W - 12 - cw, r.y + 1, cw + 8, 14);
  ctx.fillStyle = '#374151';
  ctx.fillText(caption, W - 8 - cw, r.y + 8);
  return drawn;
}

// A coloured square and the name of each series, left to right from (x, y).
function paintLegend(ctx, lane, x, y) {
  lane.series.forEach((sr, s) => {
    const [fill, line] = seriesColours(lane.kind, sr.name, s), w = ctx.measureText(sr.name).width;
    ctx.fillStyle = 'rgba(255,255,255,0.85)'; ctx.fillRect(x - 2, y - 7, w + 18, 14);
    ctx.fillStyle = fill || line; ctx.fillRect(x, y - 4, 8, 8);
    ctx.fillStyle = '#374151'; ctx.fillText(sr.name, x + 12, y);
    x += w + 22;
  });
}

// The values of lane row r under plot pixel p by paintCounterLane's rule: per series the
// largest value held over the pixel (null where no sample is in force yet).
export function counterReadout(r, c, p, g) {
  const lane = c && c.get(r.def.key);
  if (!lane) return null;
  const tA = g.viewS + p * g.k, tB = tA + g.k;
  return { label: lane.label, unit: lane.unit, t: tA, values: lane.series.map((sr) => ({ name: sr.name, v: valueOver(sr, tA, tB, Infinity) })) };
}

// The tooltip HTML of a counter readout.
export function counterTooltip(ro) {
  const lines = [`<b>${esc(ro.label)}</b> at ${fmtNs(ro.t)}`];
  for (const s of ro.values) lines.push(`${esc(s.name)}: ${s.v === null ? 'no sample' : esc(fmtCounter(s.v, ro.unit))}`);
  return lines.join('\n');
}
