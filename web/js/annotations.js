// annotations.js — the saved annotations' document (docs/processing.md "Annotations") and
// the store's markers and regions (pure: no DOM, no fetch).
//
// In the store, a marker is {t, label, colour?, track?} and a region {t0, t1, name,
// colour?, note?}, times as Number ns offsets from the store's origin (the viewer's
// window rule); in the document, times are absolute ns written as decimal strings (exact
// beyond 2^53; the server reads numbers and strings alike). Optional members are kept as
// they came, so a round trip through the viewer loses nothing the file held.

export const VERSION = 1;

// The document of `markers` and `regions`; absOf(t) gives a time's absolute BigInt.
export function toDocument(markers, regions, absOf) {
  const opt = (o, k, v) => { if (v !== undefined && v !== null && v !== '') o[k] = v; return o; };
  return {
    version: VERSION,
    markers: markers.map((m) => opt(opt({ time_ns: absOf(m.t).toString(), label: m.label || '' }, 'colour', m.colour), 'track', m.track)),
    regions: regions.map((r) => opt(opt({ start_ns: absOf(r.t0).toString(), end_ns: absOf(r.t1).toString(), name: r.name }, 'colour', r.colour), 'note', r.note)),
  };
}

// {markers, regions} of document `doc` (as the server answers it); relOf(abs) gives an
// absolute time's offset. Markers come sorted by time, regions by start.
export function fromDocument(doc, relOf) {
  const markers = (doc.markers || []).map((m) => ({ t: relOf(m.time_ns), label: m.label || '', colour: m.colour, track: m.track }));
  const regions = (doc.regions || []).map((r) => ({ t0: relOf(r.start_ns), t1: relOf(r.end_ns), name: r.name, colour: r.colour, note: r.note }));
  markers.sort((a, b) => a.t - b.t);
  regions.sort((a, b) => a.t0 - b.t0 || a.t1 - b.t1);
  return { markers, regions };
}

// Document a with document b's markers and regions after its own (an import that keeps
// what is there), or b alone when replace.
export function mergeDocuments(a, b, replace) {
  if (replace) return { version: VERSION, markers: [...(b.markers || [])], regions: [...(b.regions || [])] };
  return { version: VERSION, markers: [...(a.markers || []), ...(b.markers || [])], regions: [...(a.regions || []), ...(b.regions || [])] };
}

// The text of an imported file as a document, or an Error naming what is wrong with its
// shape (the server checks every member when it is saved).
export function parseImport(text, parse = JSON.parse) {
  let doc;
  try { doc = parse(text); } catch (e) { throw new Error(`not JSON: ${e.message}`); }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a JSON object');
  if (doc.version !== VERSION) throw new Error(`version ${JSON.stringify(doc.version)} is not ${VERSION}`);
  for (const k of ['markers', 'regions']) if (doc[k] !== undefined && !Array.isArray(doc[k])) throw new Error(`"${k}" is not an array`);
  return doc;
}

// A region named `name` over [t0, t1] (an area selection or the visible window).
export const regionOf = (t0, t1, name) => ({ t0: Math.min(t0, t1), t1: Math.max(t0, t1), name });

// The default name of the next region: "Region N", N one past the regions so named.
export function nextRegionName(regions) {
  let n = 0;
  for (const r of regions) { const m = /^Region (\d+)$/.exec(r.name || ''); if (m) n = Math.max(n, Number(m[1])); }
  return `Region ${Math.max(n, regions.length) + 1}`;
}
