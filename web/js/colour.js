// colour.js — which colour an event gets, the key the legend shows for it, and a heat map cell's colour (pure).
//
// A timeline table's colour_by (/api/schema viewer.timelines) lists label fields in order
// of preference, e.g. Instruction ["framework_name", "raw_framework_id", "hlo_name",
// "opcode"]. The colour mode picks where the list starts: mode "opcode" colours
// instructions by opcode, mode "framework_name" (the default, the list's first) by
// framework operator, falling back along the list when an event's value is null; a table
// whose list lacks the mode uses its own first field. The key is the value itself for a
// string label, "<field> <value>" for an integer one, "<group>:<track>" for the field
// "track" or when every field is null, so the events of one queue share a colour across
// the tables of its group. An empty list (SemaphoreUpdate) means one colour for the table:
// key null, colour NEUTRAL. colour = PALETTE[fnv1a32(key) % PALETTE.length]: the same key
// always gets the same colour, on every screen and every zoom.

export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#bcbd22', '#6b6ecf'];

export function fnv1a32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export const NEUTRAL = '#4b5563';
export const colourOf = (key) => (key === null ? NEUTRAL : PALETTE[fnv1a32(String(key)) % PALETTE.length]);

// The fields to try, in order, for table definition `def` under colour mode `mode`.
export function colourFields(def, mode) {
  const list = (def && def.colour_by) || [];
  const at = list.indexOf(mode);
  return at >= 0 ? list.slice(at) : list;
}

// The colour key of event i: labels maps field -> decoded values (strings or numbers, null
// when null); types maps field -> "string" | "integer".
export function colourKey(fields, labels, types, i, group, track) {
  if (!fields.length) return null;
  for (const f of fields) {
    if (f === 'track') return `${group}:${track}`;
    const arr = labels[f];
    const v = arr ? arr[i] : null;
    if (v === null || v === undefined) continue;
    return types[f] === 'integer' ? `${f} ${v}` : String(v);
  }
  return `${group}:${track}`;
}

// The colour modes a set of table definitions offers: every colour_by field, in order of
// first appearance (the first is the default).
export function colourModes(defs) {
  const out = [];
  for (const d of defs) for (const f of d.colour_by || []) if (!out.includes(f)) out.push(f);
  return out;
}

// A heat map cell's colour for value v against the reference m (the Ranks heat map: a
// rank's step duration against the step's median): blue below, red above, white at m,
// full colour at `full` (a fraction) off.
export function heatColour(v, m, full = 0.2) {
  const r = m > 0 ? v / m : 1;
  const k = Math.min(1, Math.abs(r - 1) / full);
  const light = Math.round(96 - 46 * k);
  return r >= 1 ? `hsl(0 75% ${light}%)` : `hsl(215 75% ${light}%)`;
}
