// data.js — /timeline and /usage responses -> typed arrays the painter reads (pure).
//
// Times become Number ns offsets from t0 (offset = window start - t0, plus the response's
// per-event offsets from the window start). Labels are decoded by the types /api/schema
// gives (viewer.timelines[].labels): a string label is an index into the response's
// `strings` (-1 or null: null), an integer label its value. A nested table's events carry
// "depth" (their nesting level on the track); other tables have none. A table the server
// could not read comes back with an "error" and no tracks: it is listed in `errors`, and
// its tracks' rows show the message while the other tables draw. Colours are computed
// once per response (and again when the colour mode changes), never per frame. The name
// drawn inside a block is the table's first string label when the table is coloured by a
// label (colour_by not empty), so tracks coloured by queue show no repeated text.
import { colourFields, colourKey, colourOf } from './colour.js';
import { maxDurOf } from './hit.js';

const typesOf = (def) => Object.fromEntries(((def && def.labels) || []).map((l) => [l.name, l.type]));

// The per-event colour keys and colours of track data d under colour mode `mode`.
export function colourise(d, def, mode) {
  const fields = colourFields(def, mode), n = d.start.length;
  d.keys = new Array(n); d.colour = new Array(n);
  for (let i = 0; i < n; i++) {
    d.keys[i] = colourKey(fields, d.labels, d.types, i, (def && def.group) || d.table, d.track);
    d.colour[i] = colourOf(d.keys[i]);
  }
}

// One track of a /timeline table (JSON arrays, or a binary answer's typed arrays) as arrays: start/dur (Float64Array), ord, depth
// (Int32Array, nested tables only), labels (decoded), name (the first string label).
// The label drawn as an event's name: the first string label of a table coloured by
// something other than its track, else null.
export function nameFieldOf(def) {
  const named = def && (def.colour_by || []).some((f) => f !== 'track');
  const field = named ? def.labels.find((l) => l.type === 'string') : null;
  return field ? field.name : null;
}

export function ingestTrack(tr, table, def, strings, offset) {
  const n = tr.start.length, types = typesOf(def);
  const start = new Float64Array(n), dur = new Float64Array(n);
  for (let i = 0; i < n; i++) { start[i] = offset + Number(tr.start[i]); dur[i] = Number(tr.dur[i]); }
  const labels = {};
  for (const [f, arr] of Object.entries(tr.labels || {})) {
    labels[f] = types[f] === 'string' ? Array.from(arr, (ix) => (ix === null || ix < 0 ? null : strings[ix])) : arr;
  }
  const nameField = nameFieldOf(def);
  const d = { table, track: tr.track, start, dur, ord: tr.ord, types, labels,
    depth: tr.depth ? Int32Array.from(tr.depth) : null,
    point: !!(def && def.kind === 'point'), name: nameField ? labels[nameField] || null : null };
  d.maxDur = maxDurOf(d);   // for hit.js visibleRange
  return d;
}

// A /timeline response whose window starts `offset` ns after t0: {tracks: Map
// "<table>\0<track>" -> track data, errors: Map table -> message, tables: [{table,
// rows_in_window, sampled, error}]}. defs maps table -> viewer.timelines entry.
export function ingestTimeline(tl, offset, defs, mode) {
  const strings = tl.strings || [];
  const tracks = new Map(), errors = new Map(), tables = [];
  for (const t of tl.tables || []) {
    const def = defs.get(t.table);
    tables.push({ table: t.table, rows_in_window: t.rows_in_window ?? null, sampled: t.sampled ?? null, error: t.error || null });
    if (t.error) { errors.set(t.table, t.error); continue; }
    for (const tr of t.tracks || []) {
      const d = ingestTrack(tr, t.table, def, strings, offset);
      colourise(d, def, mode);
      tracks.set(`${t.table}\0${tr.track}`, d);
    }
  }
  return { tracks, errors, tables };
}

// A series' name in the lane tooltip: its key, prefixed by what a series is ("CPU
// average") unless the key already says it ("device 0 hbm 1", "host"); without a key the
// NeuronCore ("core 0").
export function seriesName(sr, what) {
  const w = what || 'core';
  if (sr.key !== undefined && sr.key !== null) return String(sr.key).toLowerCase().includes(w.toLowerCase()) ? String(sr.key) : `${w} ${sr.key}`;
  return `${w} ${sr.pcore_idx ?? '(none)'}`;
}

// /usage series -> {byTable: Map table -> {percent, unit, series: [{name, t, v}]}, n}: t
// (Float64Array ns offsets from t0) and v per series, a step series' "before" sample first.
export function ingestUsage(usage, offset, lanes) {
  const byTable = new Map();
  let n = 0;
  for (const sr of usage.series || []) {
    const pre = sr.before ? 1 : 0, m = sr.t.length + pre;
    const t = new Float64Array(m), v = new Float64Array(m);
    if (pre) { t[0] = offset + Number(sr.before.t); v[0] = Number(sr.before.v); }
    for (let i = 0; i < sr.t.length; i++) { t[i + pre] = offset + Number(sr.t[i]); v[i + pre] = Number(sr.v[i]); }
    if (!byTable.has(sr.table)) byTable.set(sr.table, { percent: sr.unit === 'percent', unit: sr.unit, series: [] });
    const lane = lanes.get(sr.table);
    byTable.get(sr.table).series.push({ name: seriesName(sr, lane && lane.series_what), t, v });
    n++;
  }
  return { byTable, n };
}
