// format.js — numbers, times, bytes and names as text with their units (pure: no DOM).
//
// Durations and offsets are ns; fmtNs picks ns/us/ms/s by magnitude, an axis keeps one
// unit for all its ticks (fmtTick). Counts get thousands separators, percents 2 decimals
// below 10 and 1 above. ellipsize cuts a name to a width with "…" given a measure
// function (canvas measureText), so names never wrap mid-word on the canvas; the HTML
// panels use cut() (CSS ellipsis with the full text in the title).

// A duration or offset in ns as readable text ("950 ns", "12.5 us", "3.2 ms", "1.25 s").
export function fmtNs(ns, digits = 3) {
  const a = Math.abs(ns);
  const trim = (x) => String(Number(x.toFixed(digits)));
  if (a < 1e3) return `${trim(ns)} ns`;
  if (a < 1e6) return `${trim(ns / 1e3)} us`;
  if (a < 1e9) return `${trim(ns / 1e6)} ms`;
  return `${trim(ns / 1e9)} s`;
}

// Axis tick label: one unit for the whole axis, chosen by the magnitude of the visible
// times `mag` (so labels read "8.8 ms", not "8800 us"), as many decimals as `step` needs.
export function fmtTick(t, step, mag) {
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];
  const [div, name] = units.find(([d]) => mag >= d) || units[3];
  const dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / div) - 1e-9)));
  return `${(t / div).toFixed(dec)} ${name}`;
}

// The smallest 1, 2 or 5 times a power of ten that is >= raw (raw > 0).
export function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// Bytes as B below 1 KiB, else KiB/MiB/GiB/TiB with one decimal.
export function fmtBytes(n) {
  n = Number(n);
  if (Math.abs(n) < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (Math.abs(n) >= 1024 && i < u.length - 1);
  return `${n.toFixed(1)} ${u[i]}`;
}

const absent = (x) => x === null || x === undefined;
export const fmtCount = (n) => (absent(n) ? '' : Number(n).toLocaleString('en-US'));
export const fmtPct = (x) => (absent(x) ? '' : `${Number(x).toFixed(Math.abs(x) < 10 ? 2 : 1)} %`);
export const fmtSec = (x) => (absent(x) ? '' : fmtNs(Number(x) * 1e9));
// A usage lane's value by its unit: percent, bytes, bytes per second, else a count (PendingDma).
export const fmtUsage = (v, unit) => (unit === 'percent' ? fmtPct(v) : unit === 'bytes' ? fmtBytes(v)
  : unit === 'bytes_per_second' ? `${fmtBytes(v)}/s` : fmtCount(v));
// A /counters value by its unit: bytes, or the number as the trace wrote it (unit null).
export const fmtCounter = (v, unit) => (unit === 'bytes' ? fmtBytes(v) : Number(v).toLocaleString('en-US', { maximumFractionDigits: 3 }));

export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const bigText = (k, x) => (typeof x === 'bigint' ? x.toString() : x);
// A field value as text: lists and objects as JSON (BigInt as its digits), null as ''.
export const fmtVal = (v) => (absent(v) ? '' : typeof v === 'object' ? JSON.stringify(v, bigText) : String(v));
// HTML: text cut with an ellipsis when too long (CSS .cut), `title` (the whole text by
// default) on hover.
export const cut = (text, cls = '', title = text) => `<span class="cut ${cls}" title="${esc(title)}">${esc(text)}</span>`;

// The longest prefix of `text` that fits `maxW` with "…" appended (the text itself when it
// fits, '' when not even one character and the ellipsis fit). measure(s) -> width.
export function ellipsize(text, maxW, measure) {
  if (measure(text) <= maxW) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(`${text.slice(0, mid)}…`) <= maxW) lo = mid; else hi = mid - 1;
  }
  return lo ? `${text.slice(0, lo)}…` : '';
}

// `text` cut in the middle to at most `n` characters ("NeuronLlamaDe…MLP/aten.mm"), so
// names that share a long prefix stay apart; shorter text as it is.
export function middleCut(text, n) {
  if (text.length <= n) return text;
  const head = Math.ceil((n - 1) * 0.4), tail = n - 1 - head;
  return `${text.slice(0, head)}…${text.slice(text.length - tail)}`;
}

// JSON text pretty-printed (2-space indent), or null when it is not a JSON object/array.
export function prettyJSON(text) {
  if (typeof text !== 'string' || !/^\s*[[{]/.test(text)) return null;
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return null; }
}

// A field value by its catalogue unit (docs/schema): nanoseconds as a duration, or, for a
// timestamp (a name ending in _ts, or beyond 1e15 ns), as its offset from t0 when t0 is
// given; bytes, bytes per second, percent and seconds with their units. Anything else,
// and null, as fmtVal. Returns {text, raw}: raw is the stored value when text differs.
export function fmtField(name, value, unit, t0 = null) {
  if (value === null || value === undefined || typeof value === 'object' && typeof value !== 'bigint') return { text: fmtVal(value), raw: null };
  const n = Number(value), raw = String(value);
  if (!Number.isFinite(n)) return { text: raw, raw: null };
  switch (unit) {
    case 'nanoseconds': {
      const abs = /_ts$/.test(name) || Math.abs(n) > 1e15;
      if (!abs) return { text: fmtNs(n), raw };
      return t0 === null ? { text: raw, raw: null } : { text: `${raw} (t0 + ${fmtNs(Number(BigInt(value) - BigInt(t0)))})`, raw: null };
    }
    case 'bytes': return { text: fmtBytes(n), raw };
    case 'bytes_per_second': case 'bytes per second': return { text: `${fmtBytes(n)}/s`, raw };
    case 'percent': return { text: fmtPct(n), raw };
    case 'seconds': return { text: fmtSec(n), raw };
    default: return { text: typeof value === 'number' && !Number.isInteger(value) ? String(Number(value.toPrecision(6))) : raw, raw: null };
  }
}
