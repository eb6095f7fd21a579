// plot.js — a view's geometry: the label gutter and axis height, the window in pixels, the
// rows as drawn. Each function takes a store (store.js; the page's by default).
import { V } from './store.js';

export const GUTTER = 180, AXIS_H = 30;

// The plot's width in CSS pixels as the windowed endpoints sample it: at most the server's
// limit (/api/schema viewer.limits.max_width; none before the store has the schema, when
// nothing is fetched).
export const plotWidth = (v = V) => Math.max(1, Math.min(v.schema ? v.schema.limits.max_width : Infinity, Math.round(v.cssW - GUTTER)));
export const nsPerPx = (v = V) => (v.viewE - v.viewS) / Math.max(1, v.cssW - GUTTER);
export const geom = (v = V) => ({ gutter: GUTTER, viewS: v.viewS, k: nsPerPx(v), pad: 2, levelH: 16 });

// Rows as drawn now: the pinned header at its place, the track rows shifted by the scroll.
export function screenRows(v = V) {
  return [...v.header, ...v.rows.map((r) => ({ ...r, y: r.y - v.scrollTop, visible: r.y - v.scrollTop + r.h > v.headerH && r.y - v.scrollTop < v.viewH }))];
}
