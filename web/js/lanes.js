// lanes.js — the utilisation lanes under the time axis, from /usage (docs/viewer.md).
//
// One lane per viewer.usage entry of /api/schema whose table the profile has, in that
// order. Each sample holds its value until the series' next sample; the last one holds for
// HOLD_NS (the device tables' 10 us bucket), or to the window's end for a gauge lane
// (system tables sampled every few ms). A pixel takes the largest value of each series over
// it. Byte lanes show the sum over series scaled to its peak in the window (peak at the
// right end); percent lanes the mean over series on a fixed 0-100 % scale and, with
// several series, a line for the busiest series per pixel. Per-pixel arrays are kept
// between frames (reallocated only when the plot width changes).
import { fmtNs, fmtPct, fmtUsage, esc } from './format.js';

export const LANE_H = 36;
const HOLD_NS = 10000;
const FILLS = { dma: ['rgba(78,121,167,0.75)'], hbm: ['rgba(225,87,89,0.75)'], sbuf: ['rgba(89,161,79,0.75)', '#2f6b2a'],
  psum: ['rgba(176,122,161,0.75)', '#6e3f63'], cpu: ['rgba(242,142,43,0.75)', '#a35a12'],
  hostmem: ['rgba(118,183,178,0.75)', '#3f7a75'], devhbm: ['rgba(156,117,95,0.75)', '#6b4a38'] };
const fillOf = (lane) => FILLS[lane.lane] || ['rgba(107,114,128,0.6)', '#374151'];
const holdNs = (lane) => (lane.gauge ? Infinity : HOLD_NS);

let scratch = null;
function laneScratch(pw) {
  if (!scratch || scratch.pw !== pw) scratch = { pw, vals: new Float64Array(pw), one: new Float64Array(pw), hi: new Float64Array(pw) };
  return scratch;
}

// One series' value per plot pixel into `one`: the largest sample held over the pixel.
export function seriesPixels(sr, one, pw, hold, viewS, k) {
  one.fill(0);
  const n = sr.t.length;
  for (let i = 0; i < n; i++) {
    const t0 = sr.t[i], t1 = i + 1 < n ? sr.t[i + 1] : t0 + hold;
    const x0 = (t0 - viewS) / k, x1 = (t1 - viewS) / k;
    if (x1 <= 0 || x0 >= pw) continue;
    const v = sr.v[i];
    const p0 = Math.max(0, Math.floor(x0)), p1 = Math.min(pw, Math.max(p0 + 1, Math.ceil(x1)));
    for (let p = p0; p < p1; p++) if (v > one[p]) one[p] = v;
  }
}

// Paint lane row r (r.lane: its viewer.usage entry) from usage u (data.js ingestUsage).
export function paintLane(ctx, r, u, g, W) {
  const pw = Math.max(1, Math.floor(W - g.gutter)), lane = r.def;
  const s = u && u.byTable.get(lane.table);
  if (!s || !s.series.length) return;
  const { vals, one, hi } = laneScratch(pw);
  vals.fill(0); hi.fill(0);
  for (const sr of s.series) {
    seriesPixels(sr, one, pw, holdNs(lane), g.viewS, g.k);
    for (let p = 0; p < pw; p++) { vals[p] += one[p]; if (one[p] > hi[p]) hi[p] = one[p]; }
  }
  let max = 0, caption;
  const nS = s.series.length;
  if (s.percent) {
    let peakHi = 0;
    for (let p = 0; p < pw; p++) { vals[p] /= nS; max = Math.max(max, vals[p]); peakHi = Math.max(peakHi, hi[p]); }
    caption = `peak ${fmtPct(max)}` + (nS > 1 ? ` · busiest ${lane.series_what || 'core'} ${fmtPct(peakHi)}` : '');
    max = 100;
  } else {
    for (let p = 0; p < pw; p++) max = Math.max(max, vals[p]);
    caption = `peak ${fmtUsage(max, s.unit)}`;
  }
  if (max <= 0) return;
  const [fill, line] = fillOf(lane);
  const yOf = (x) => r.y + r.h - 2 - (r.h - 6) * Math.min(1, x / max);
  ctx.fillStyle = fill;
  ctx.beginPath();
  ctx.moveTo(g.gutter, r.y + r.h);
  for (let p = 0; p < pw; p++) { const y = yOf(vals[p]); ctx.lineTo(g.gutter + p, y); ctx.lineTo(g.gutter + p + 1, y); }
  ctx.lineTo(g.gutter + pw, r.y + r.h);
  ctx.closePath();
  ctx.fill();
  if (s.percent && nS > 1) {
    ctx.strokeStyle = line;
    ctx.beginPath();
    for (let p = 0; p < pw; p++) { const y = yOf(hi[p]); if (p === 0) ctx.moveTo(g.gutter, y); else ctx.lineTo(g.gutter + p, y); ctx.lineTo(g.gutter + p + 1, y); }
    ctx.stroke();
  }
  const cw = ctx.measureText(caption).width;
  ctx.fillStyle = 'rgba(255,255,255,0.85)';
  ctx.fillRect(W - 12 - cw, r.y + 1, cw + 8, 14);
  ctx.fillStyle = '#374151';
  ctx.fillText(caption, W - 8 - cw, r.y + 8);
}

// The largest value series sr ({t, v}, t ascending) holds over [tA, tB): the sample in
// force at tA (held for `hold` ns past a last sample) and every sample inside; null when
// none covers it.
export function valueOver(sr, tA, tB, hold) {
  const n = sr.t.length;
  let lo = 0, hi = n;
  while (lo < hi) { const m = (lo + hi) >> 1; if (sr.t[m] <= tA) lo = m + 1; else hi = m; }
  let best = null;
  const i0 = lo - 1;
  if (i0 >= 0 && (i0 + 1 < n ? sr.t[i0 + 1] : sr.t[i0] + hold) > tA) best = sr.v[i0];
  for (let i = lo; i < n && sr.t[i] < tB; i++) if (best === null || sr.v[i] > best) best = sr.v[i];
  return best;
}

// The value of lane r under plot pixel p by paintLane's rule: per series the largest sample
// held over the pixel (null where none covers it), and the total (sum, or mean of percents).
export function laneReadout(r, u, p, g) {
  const lane = r.def, s = u && u.byTable.get(lane.table);
  if (!s || !s.series.length) return null;
  const tA = g.viewS + p * g.k, tB = tA + g.k, hold = holdNs(lane);
  const cores = [];
  let sum = 0;
  for (const sr of s.series) {
    const best = valueOver(sr, tA, tB, hold);
    cores.push({ name: sr.name, v: best });
    sum += best ?? 0;
  }
  return { lane, percent: s.percent, unit: s.unit, t: tA, total: s.percent ? sum / s.series.length : sum, cores };
}

// The tooltip HTML of a lane readout.
export function laneTooltip(ro) {
  const fmt = (v) => (v === null ? 'no sample' : fmtUsage(v, ro.unit));
  const lines = [`<b>${esc(ro.lane.label)}</b> at ${fmtNs(ro.t)}`];
  if (ro.cores.length > 1) lines.push(`${ro.percent ? 'mean' : 'total'}: ${fmt(ro.total)}`);
  for (const c of ro.cores) lines.push(`${esc(c.name)}: ${fmt(c.v)}`);
  return lines.join('\n');
}
