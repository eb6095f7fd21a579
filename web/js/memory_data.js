// memory_data.js — the Memory view's geometry (pure: no DOM): a /memory response
// (docs/api.md) as rectangles on the view's time line, where each lies on the canvas, and
// which one is under the pointer.
//
// Times become Number ns offsets from t0, as for the timeline (data.js): offset = window
// start - t0, plus each rectangle's start/end from the window start. Partitions run down
// the plot, partition 0 on top, one band of plotH / partitions px each; an allocation
// over partitions [lo, hi] covers bands lo..hi. Colours: colour.js's palette keyed by the
// owner (the tensor, else the HLO op, else the opcode, else the DMA queue), so one tensor
// keeps one colour at every zoom; an allocation without owner is NEUTRAL.
import { colourOf } from './colour.js';

export function ingestMemory(doc, offset) {
  const rects = ((doc.sbuf && doc.sbuf.rects) || []).map((r) => ({
    ...r, t0: offset + Number(r.start), t1: offset + Number(r.end),
    colour: colourOf(r.owner ? r.owner : null),
  }));
  return {
    rects, partitions: Number(doc.partitions) || 1,
    sbuf: { present: !!(doc.sbuf && doc.sbuf.present), in_window: Number((doc.sbuf && doc.sbuf.in_window) || 0) },
    hbm: doc.hbm || { present: false, categories: [], total: 0 },
  };
}

// The box of rect r in canvas px: g = {gutter, viewS, k (ns per px), top, plotH, partitions}.
// At least one px wide, so a short allocation stays visible; clipped to the plot's left edge.
export function rectBox(r, g) {
  const band = g.plotH / g.partitions;
  const x0 = Math.max(g.gutter, g.gutter + (r.t0 - g.viewS) / g.k);
  const x1 = g.gutter + (r.t1 - g.viewS) / g.k;
  return { x: x0, y: g.top + r.partition_lo * band, w: Math.max(1, x1 - x0), h: Math.max(1, (r.partition_hi - r.partition_lo + 1) * band) };
}

// The partition at canvas y, or -1 outside the plot.
export function partitionAt(y, g) {
  const p = Math.floor(((y - g.top) * g.partitions) / g.plotH);
  return p >= 0 && p < g.partitions ? p : -1;
}

// Index of the rectangle under (x, y) — the last drawn (topmost) wins — or -1.
export function rectAt(rects, x, y, g) {
  for (let i = rects.length - 1; i >= 0; i--) {
    const b = rectBox(rects[i], g);
    if (b.x + b.w < g.gutter) continue;
    if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h) return i;
  }
  return -1;
}

// "0x2000–0x3000 (4.0 KiB)": an address range [a0, a1) in hex with its size.
export function addressText(a0, a1, fmtBytes) {
  const hex = (v) => `0x${Number(v).toString(16)}`;
  return `${hex(a0)}–${hex(a1)} (${fmtBytes(Number(a1) - Number(a0))})`;
}
