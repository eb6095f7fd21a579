// plot.js — a view's geometry: the label gutter and axis height, the window in pixels and
// in absolute ns, the rows as drawn. Each function takes a state (store.js; the page's by
// default).
import { V, set } from './store.js';
import { big } from './api.js';

export const GUTTER = 180, AXIS_H = 30;

// The width of the plot in CSS pixels as /timeline samples it: at most the server's
// limit (/api/schema viewer.limits.max_width).
export const plotWidth = (v = V) => Math.max(1, Math.min(v.schema.limits.max_width, Math.round(v.cssW - GUTTER)));
export const nsPerPx = (v = V) => (v.viewE - v.viewS) / Math.max(1, v.cssW - GUTTER);
export const geom = (v = V) => ({ gutter: GUTTER, viewS: v.viewS, k: nsPerPx(v), pad: 2, levelH: 16 });
export const windowAbs = (v = V) => ({ S: v.origin + BigInt(Math.floor(v.viewS)), E: v.origin + BigInt(Math.ceil(v.viewE)) });
export const absOf = (t, v = V) => v.origin + BigInt(Math.round(t));
export const relOf = (abs, v = V) => Number(big(abs) - v.origin);

// Rows as drawn now: the pinned header at its place, the track rows shifted by the scroll.
export function screenRows(v = V) {
  return [...v.header, ...v.rows.map((r) => ({ ...r, y: r.y - v.scrollTop, visible: r.y - v.scrollTop + r.h > v.headerH && r.y - v.scrollTop < v.viewH }))];
}

// Shows the window [startAbs, endAbs] (absolute ns, BigInt or its decimal text) on the
// page's view: a step row of the Devices and Steps tables zooms the timeline to its step so.
export function zoomTo(startAbs, endAbs) {
  const s = relOf(startAbs), e = relOf(endAbs);
  set({ viewS: s, viewE: Math.max(e, s + 10) }, 'window', 'url');
}
