// hit.js — where an event is drawn and which event is under a point (pure geometry).
//
// The plot starts at x = gutter; time t (ns offset from t0) is at gutter + (t - viewS) / k
// with k = ns per CSS pixel. An interval event is at least 1 px wide, a point event a
// 2 px tick centred on its time, and a zero-duration event of an interval table (an
// instant, a flow end, an async instant, a counter sample) a MARK_W px marker centred on
// its time, so that it can be seen and clicked at any zoom. On a nested track, depth level L is the band
// [row.y + pad + L * levelH, + levelH); other tracks use the row less pad above and below.
// A point hits an event when it is within 3 px of its box, the nearest one winning and,
// among boxes that contain the point, the shortest (the innermost on screen).

export const HIT_SLOP = 3;
export const MARK_W = 5;

// The row under y (rows: {y, h}), or undefined.
export const rowAt = (rows, y) => rows.find((r) => y >= r.y && y < r.y + r.h);

// The box of event i of track data d (start, dur, depth arrays; point flag) on row r.
export function eventBox(d, i, r, g) {
  const x0 = g.gutter + (d.start[i] - g.viewS) / g.k;
  const mark = !d.point && d.dur[i] === 0;
  const w = d.point ? 2 : mark ? MARK_W : Math.max(1, d.dur[i] / g.k);
  const x = d.point ? x0 - 1 : mark ? x0 - MARK_W / 2 : x0;
  if (r.nested) {
    const lvl = d.depth ? d.depth[i] : 0;
    return { x, w, y: r.y + g.pad + lvl * g.levelH, h: g.levelH - 1 };
  }
  return { x, w, y: r.y + g.pad, h: r.h - 2 * g.pad };
}

// The events of d whose boxes may reach the pixels [x0, x1]: [lo, hi), found by binary
// search on start (a track's events come in start order; d.maxDur, set at ingest, is
// their longest duration, or Infinity when they are not in start order), so a frame
// zoomed into the loaded events visits only those on screen. A box reaches at most
// MARK_W px left of its start and max(MARK_W, dur / k) px right of it.
export function visibleRange(d, g, x0, x1) {
  const n = d.start.length;
  if (!(d.maxDur < Infinity)) return [0, n];
  const t0 = g.viewS + (x0 - g.gutter - MARK_W) * g.k - d.maxDur, t1 = g.viewS + (x1 - g.gutter + MARK_W) * g.k;
  // the first event starting at or after t (after t: strict)
  const first = (t, strict) => {
    let lo = 0, hi = n;
    while (lo < hi) { const m = (lo + hi) >> 1; if (d.start[m] < t || (strict && d.start[m] === t)) lo = m + 1; else hi = m; }
    return lo;
  };
  return [first(t0, false), first(t1, true)];
}

// The longest duration of track data d's events, or Infinity when they are not in
// start order (visibleRange then visits them all).
export function maxDurOf(d) {
  let m = 0;
  for (let i = 0; i < d.start.length; i++) {
    if (i > 0 && d.start[i] < d.start[i - 1]) return Infinity;
    if (d.dur[i] > m) m = d.dur[i];
  }
  return m;
}

// The index of the event of d under (mx, my) on row r, or -1.
export function eventAt(d, r, mx, my, g) {
  const level = r.nested ? Math.floor((my - r.y - g.pad) / g.levelH) : -1;
  let best = -1, bestDist = HIT_SLOP;
  const [lo, hi] = visibleRange(d, g, mx - HIT_SLOP, mx + HIT_SLOP);
  for (let i = lo; i < hi; i++) {
    if (level >= 0 && (d.depth ? d.depth[i] : 0) !== level) continue;
    const b = eventBox(d, i, r, g);
    const dist = mx < b.x ? b.x - mx : mx > b.x + b.w ? mx - b.x - b.w : 0;
    if (dist < bestDist || (dist === 0 && bestDist === 0 && d.dur[i] < d.dur[best])) { best = i; bestDist = dist; }
  }
  return best;
}

// Track rows that the vertical band [y0, y1] touches (in any order of y0, y1).
export function rowsInBand(rows, y0, y1) {
  const a = Math.min(y0, y1), b = Math.max(y0, y1);
  return rows.filter((r) => r.kind === 'track' && r.y < b && r.y + r.h > a);
}
