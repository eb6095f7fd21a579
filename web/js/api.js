// api.js — the JSON API of `nxprof serve` (docs/api.md): one function per endpoint, the
// only place a URL of the API (or of a viewer page) is built; fetch, errors, exact integers.
//
// The server writes integers beyond 2^53 as decimal strings; parseJSON also turns any
// unsafe integer number into a BigInt (reading the number's source text), and big()
// makes a BigInt of either, so absolute timestamps stay exact. Every call throws an Error
// with the server's {"error"} message and the HTTP status in .status. schema() fetches
// /api/schema once per page (the viewer's timeline tables, labels, colours, search and
// export fields, usage lanes, limits and name grammar come from its "viewer" member,
// never from copies in JS). A profile is named by its name ("<S>" or a device profile
// nested in it, docs/api.md); windows are absolute ns (BigInt or its decimal text).

export function parseJSON(text) {
  return JSON.parse(text, (key, value, ctx) => {
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) &&
        ctx && typeof ctx.source === 'string' && /^-?\d+$/.test(ctx.source)) {
      return BigInt(ctx.source);
    }
    return value;
  });
}

// send: a value sent as JSON with `method` (PUT, POST); absent: a GET.
async function api(path, { method = 'GET', send } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (send !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(send); }
  const res = await fetch(path, init);
  const text = await res.text();
  let body = null;
  try { body = parseJSON(text); } catch { /* not JSON */ }
  if (!res.ok) {
    const err = new Error((body && body.error) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

export const big = (v) => (v === null || v === undefined ? null : typeof v === 'bigint' ? v
  : typeof v === 'string' ? BigInt(v) : BigInt(Math.round(v)));

// A profile name as a URL path: its segments (system profile, device folder, device
// profile) each percent-encoded.
export const namePath = (name) => name.split('/').map(encodeURIComponent).join('/');
export const viewHref = (name) => `/view/${namePath(name)}`;
export const leafName = (name) => name.slice(name.lastIndexOf('/') + 1);
// The Compare page of query `q` (URLSearchParams or its text).
export const compareHref = (q) => `/compare?${q}`;

// A query string of `params` in their order, without '?': null or undefined values are
// left out, a list is its encoded items joined by commas.
export const query = (params) => Object.entries(params).filter(([, v]) => v !== null && v !== undefined)
  .map(([k, v]) => `${k}=${Array.isArray(v) ? v.map((x) => encodeURIComponent(x)).join(',') : encodeURIComponent(String(v))}`).join('&');

const profilePath = (name, leaf = '', params = null) =>
  `/api/profiles/${namePath(name)}${leaf ? `/${leaf}` : ''}${params ? `?${query(params)}` : ''}`;
const get = (name, leaf, params) => api(profilePath(name, leaf, params));
// A window's parameters: [S, E] absolute ns sampled at `width` px.
const win = (S, E, width) => ({ start: S, end: E, width });

let schemaPromise = null;
// /api/schema, once: {viewer: {groups, timelines, usage, counter_lanes, limits, names},
// units: Map table -> Map field -> catalogue unit} (docs/api.md).
export function schema() {
  if (!schemaPromise) {
    schemaPromise = api('/api/schema').then((s) => {
      if (!s || !s.viewer) throw new Error('/api/schema has no "viewer" member');
      const units = new Map((s.tables || []).map((t) => [t.name, new Map((t.fields || []).map((f) => [f.name, f.unit || '']))]));
      return { viewer: s.viewer, units };
    });
    schemaPromise.catch(() => { schemaPromise = null; });
  }
  return schemaPromise;
}

export const profiles = () => api('/api/profiles');
export const profileInfo = (name) => get(name);
export const tracks = (name) => get(name, 'tracks');
export const timeline = (name, tables, S, E, width) => get(name, 'timeline', { tables, ...win(S, E, width) });
export const usage = (name, tables, S, E, width) => get(name, 'usage', { tables, ...win(S, E, width) });
export const counters = (name, S, E, width) => get(name, 'counters', win(S, E, width));
export const event = (name, table, ordinal) => get(name, 'event', { table, ordinal });
export const flows = (name, table, ordinal) => get(name, 'flows', { table, ordinal });
// p: {tables, field, q, match, from, from_ord, from_table, dir}, the absent ones null.
export const search = (name, p) => get(name, 'search', p);
// tracks: "<table>:<track>" ids, null for all of the table's; by: null for the default.
export const aggregate = (name, table, S, E, trackIds, by) =>
  get(name, 'aggregate', { tables: table, start: S, end: E, tracks: trackIds, by });
export const summary = (name, top = null) => get(name, 'summary', top === null ? null : { top });
export const breakdown = (name, top = null) => get(name, 'breakdown', top === null ? null : { top });
export const insights = (name) => get(name, 'insights');
export const ranks = (name) => get(name, 'ranks');
// A device profile's time per NKI source line (docs/api.md "Source"), its top `limit` lines.
export const source = (name, limit) => get(name, 'source', { limit });
// The Memory view's answer for window [S, E] at `width` px: SBUF allocation rectangles and
// HBM by category (docs/api.md "Memory").
export const memory = (name, S, E, width) => get(name, 'memory', win(S, E, width));
// A profile's saved annotations (docs/api.md "Annotations"): the document, and saving one
// (answered with the document as saved).
export const loadAnnotations = (name) => get(name, 'annotations');
export const saveAnnotations = (name, doc) => api(profilePath(name, 'annotations'), { method: 'PUT', send: doc });
// q: the diff's parameters (URLSearchParams).
export const diff = (q) => api(`/api/diff?${q}`);
// The CSV export of `table` with parameters p {start, end, sampled, width}, fetched as a
// file by the caller.
export const exportURL = (name, table, p) => profilePath(name, `export/${encodeURIComponent(table)}.csv`, p);
