// timeline_bin.js — a /timeline?format=bin answer (docs/api.md "Binary timeline") into
// the JSON answer's shape (pure).
//
// The layout (src/query/timeline_bin.h): "NXTB", u32 header length H, H bytes of JSON
// header, zeros to a multiple of 8, then per table without an error its columnar arrays
// of `sampled` elements, each at a multiple of 8: f64 start (from the window start), f64
// dur, f64 ord, u32 depth (nested tables), then per label an i32 string id (-1 null) or
// an f64 integer (NaN null). Every track's arrays are views (subarray) of its table's:
// nothing is copied but the integer labels, whose NaN becomes the JSON answer's null.
// Typed arrays read the host's byte order; every browser the viewer runs in is
// little-endian, the layout's order.
const MAGIC = 0x4254584e; // "NXTB" read as a little-endian u32

// Reads the answer in `buf` (an ArrayBuffer); throws on a damaged one, naming the offset.
export function decodeTimeline(buf) {
  const dv = new DataView(buf);
  if (buf.byteLength < 8 || dv.getUint32(0, true) !== MAGIC) throw new Error('timeline: not a binary timeline answer (offset 0)');
  const h = dv.getUint32(4, true);
  if (8 + h > buf.byteLength) throw new Error(`timeline: header of ${h} bytes past the end (offset 4)`);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, h)));
  let at = (8 + h + 7) & ~7;
  const take = (Kind, n, what) => {
    const end = at + n * Kind.BYTES_PER_ELEMENT;
    if (end > buf.byteLength) throw new Error(`timeline: ${what} past the end (offset ${at})`);
    const a = new Kind(buf, at, n);
    at = (end + 7) & ~7;
    return a;
  };
  for (const t of head.tables) {
    if (t.error) continue;
    const n = t.sampled, name = t.table;
    const start = take(Float64Array, n, `${name} start`), dur = take(Float64Array, n, `${name} dur`),
      ord = take(Float64Array, n, `${name} ord`);
    const depth = t.nested ? take(Uint32Array, n, `${name} depth`) : null;
    const labels = t.label_fields.map((f, l) => (t.label_types[l] === 'string'
      ? take(Int32Array, n, `${name} ${f}`)
      : Array.from(take(Float64Array, n, `${name} ${f}`), (v) => (Number.isNaN(v) ? null : v))));
    let first = 0;
    for (const tr of t.tracks) {
      const view = (a) => a.subarray(first, first + tr.n);
      tr.start = view(start); tr.dur = view(dur); tr.ord = view(ord);
      if (depth) tr.depth = view(depth);
      tr.labels = Object.fromEntries(t.label_fields.map((f, l) => [f, Array.isArray(labels[l])
        ? labels[l].slice(first, first + tr.n) : view(labels[l])]));
      first += tr.n;
      delete tr.n;
    }
    delete t.nested;
  }
  return head;
}
