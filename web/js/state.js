// state.js — the view's window and its URL (pure: no DOM).
//
// URL of a view: /view/<name>?start=<ns>&end=<ns>[&event=<Table>:<ordinal>][&q=<text>&field=<f>]
// [&group=<mode>][&colour=<field>]; start and end are absolute profile timestamps in ns
// (inclusive), event the selected row, q/field the search box, group the System Trace
// Viewer's grouping mode, colour the colour mode (absent: the defaults). The window is
// kept as Number offsets from t0 (the first timestamp of /tracks), exact to the ns for
// spans below 104 days.

// The view parameters of a query string; absent or malformed ones are null.
export function parseViewQuery(search) {
  const q = new URLSearchParams(search);
  const int = (k) => (/^-?\d+$/.test(q.get(k) || '') ? BigInt(q.get(k)) : null);
  const ev = (q.get('event') || '').match(/^([A-Za-z]+):(\d+)$/);
  return {
    start: int('start'), end: int('end'),
    event: ev ? { table: ev[1], ordinal: Number(ev[2]) } : null,
    q: q.get('q') || null, field: q.get('field') || null,
    group: q.get('group') || null, colour: q.get('colour') || null,
  };
}

// The query string of a view (without '?'): v = {start, end (BigInt), event, q, field, group, colour}.
export function viewQuery(v) {
  let s = `start=${v.start}&end=${v.end}`;
  if (v.event) s += `&event=${v.event.table}:${v.event.ordinal}`;
  if (v.q) s += `&q=${encodeURIComponent(v.q)}&field=${encodeURIComponent(v.field || '')}`;
  if (v.group) s += `&group=${encodeURIComponent(v.group)}`;
  if (v.colour) s += `&colour=${encodeURIComponent(v.colour)}`;
  return s;
}

// The window [s, e] kept between 10 ns and 1.5 times the profile span, moved at most a
// quarter of the span past either end.
export function clampWindow(s, e, span) {
  const minSpan = 10, maxSpan = span * 1.5 + 10;
  let w = Math.min(maxSpan, Math.max(minSpan, e - s));
  const lo = -0.25 * span - 5, hi = 1.25 * span + 5;
  if (s < lo) s = lo;
  if (s + w > hi) s = Math.max(lo, hi - w);
  if (s + w > hi) w = hi - s;
  return [s, s + w];
}

// The window zoomed by `factor` (< 1 zooms in) around time t, which stays where it is.
export const zoomWindow = (s, e, t, factor) => [t - (t - s) * factor, t + (e - t) * factor];

// The window that shows event [a, b]: [s, e] itself when the event lies inside its middle
// 90 %, else the same span centred on the event when it fits in 80 % of the span, else the
// event with 10 % margins on both sides.
export function windowOnEvent(s, e, a, b) {
  const span = e - s, d = Math.max(1, b - a);
  if (a >= s + 0.05 * span && b <= e - 0.05 * span) return [s, e];
  if (d <= 0.8 * span) { const mid = (a + b) / 2; return [mid - span / 2, mid + span / 2]; }
  return [a - d * 0.1, b + d * 0.1];
}
