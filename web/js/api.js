// api.js — the JSON API of `nxprof serve` (docs/api.md): one function per endpoint, the
// only place a URL of the API is built; fetch, errors, exact integers.
//
// The server writes integers beyond 2^53 as decimal strings; parseJSON also turns any
// unsafe integer number into a BigInt (reading the number's source text), and big()
// makes a BigInt of either, so absolute timestamps stay exact. Every call throws an Error
// with the server's {"error"} message and the HTTP status in .status. schema() fetches
// /api/schema once per page (the viewer's timeline tables, labels, colours, search and
// export fields, usage lanes, the width limit and the profile name grammar come from its
// "viewer" member, never from copies in JS). A profile is named by its name ("<S>" or a
// device profile nested in it, docs/api.md); windows are absolute ns (BigInt or its
// decimal text) sampled at `width` px.

export function parseJSON(text) {
  return JSON.parse(text, (key, value, ctx) => {
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) &&
        ctx && typeof ctx.source === 'string' && /^-?\d+$/.test(ctx.source)) {
      return BigInt(ctx.source);
    }
    return value;
  });
}

// The Error for a failed response whose body is `text` (JSON {"error"} or not).
function failure(res, body) {
  const err = new Error((body && body.error) || `${res.status} ${res.statusText}`);
  err.status = res.status;
  return err;
}

const parsed = (text) => { try { return parseJSON(text); } catch { return null; /* not JSON */ } };

// send: a value sent as JSON with `method` (PUT, POST); absent: a GET.
async function api(path, { method = 'GET', send } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (send !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(send); }
  const res = await fetch(path, init);
  const body = parsed(await res.text());
  if (!res.ok) throw failure(res, body);
  return body;
}

// A GET whose answer is binary (/timeline?format=bin): its ArrayBuffer; errors as api()'s.
async function apiBytes(path) {
  const res = await fetch(path, { headers: { Accept: 'application/octet-stream' } });
  if (!res.ok) throw failure(res, parsed(await res.text()));
  return res.arrayBuffer();
}

export const big = (v) => (v === null || v === undefined ? null : typeof v === 'bigint' ? v
  : typeof v === 'string' ? BigInt(v) : BigInt(Math.round(v)));

// A profile name as a URL path: "<S>" or "<S>/devices/<D>", each segment percent-encoded.
export const namePath = (name) => name.split('/').map(encodeURIComponent).join('/');
export const viewHref = (name) => `/view/${namePath(name)}`;
export const leafName = (name) => name.slice(name.lastIndexOf('/') + 1);

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

const profilePath = (name) => `/api/profiles/${namePath(name)}`;
const win = (S, E, width) => `start=${S}&end=${E}&width=${width}`;

// The profile list, and one profile's facts.
export const profiles = () => api('/api/profiles');
export const profileInfo = (name) => api(profilePath(name));
export const tracks = (name) => api(`${profilePath(name)}/tracks`);
// The timeline tables' events of window [S, E] at `width` px, binary (format=bin): its
// ArrayBuffer (timeline_bin.js reads it).
export const timelineBytes = (name, tables, S, E, width) =>
  apiBytes(`${profilePath(name)}/timeline?tables=${tables.join(',')}&${win(S, E, width)}&format=bin`);
export const usage = (name, tables, S, E, width) => api(`${profilePath(name)}/usage?tables=${tables.join(',')}&${win(S, E, width)}`);
export const counters = (name, S, E, width) => api(`${profilePath(name)}/counters?${win(S, E, width)}`);
export const event = (name, table, ordinal) => api(`${profilePath(name)}/event?table=${encodeURIComponent(table)}&ordinal=${ordinal}`);
export const flows = (name, table, ordinal) => api(`${profilePath(name)}/flows?table=${encodeURIComponent(table)}&ordinal=${ordinal}`);
// The next or previous match: p {tables, field, q, match (or null), from, from_ord,
// from_table (null without a selected event), dir (null: the server's default)}.
export function search(name, p) {
  let q = `${profilePath(name)}/search?tables=${p.tables.join(',')}&field=${encodeURIComponent(p.field)}&q=${encodeURIComponent(p.q)}`;
  if (p.match) q += `&match=${p.match}`;
  if (p.from !== null && p.from !== undefined) q += `&from=${p.from}`;
  if (p.from_ord !== null && p.from_ord !== undefined) q += `&from_ord=${p.from_ord}&from_table=${p.from_table}`;
  if (p.dir) q += `&dir=${p.dir}`;
  return api(q);
}
// The exact aggregate of `table` over [S, E]: trackIds "<table>:<track>" (null: every
// track of the table), by the grouping field (null: the table's default).
export const aggregate = (name, table, S, E, trackIds, by) => api(`${profilePath(name)}/aggregate?tables=${table}&start=${S}&end=${E}` +
  `${trackIds ? `&tracks=${trackIds.map((id) => encodeURIComponent(id)).join(',')}` : ''}${by ? `&by=${encodeURIComponent(by)}` : ''}`);
// top: the rows of the top lists (null: the server's default).
export const summary = (name, top = null) => api(`${profilePath(name)}/summary${top === null ? '' : `?top=${top}`}`);
export const breakdown = (name, top = null) => api(`${profilePath(name)}/breakdown${top === null ? '' : `?top=${top}`}`);
export const insights = (name) => api(`${profilePath(name)}/insights`);
export const ranks = (name) => api(`${profilePath(name)}/ranks`);
// A device profile's time per NKI source line (docs/api.md "Source"), its top `limit` lines.
export const loadSource = (name, limit) => api(`${profilePath(name)}/source?limit=${limit}`);
// The Memory view's answer for window [S, E] at `width` px: SBUF allocation rectangles and
// HBM by category (docs/api.md "Memory").
export const loadMemory = (name, S, E, width) => api(`${profilePath(name)}/memory?${win(S, E, width)}`);
// A profile's saved annotations (docs/api.md "Annotations"): the document, and saving one
// (answered with the document as saved).
export const loadAnnotations = (name) => api(`${profilePath(name)}/annotations`);
export const saveAnnotations = (name, doc) => api(`${profilePath(name)}/annotations`, { method: 'PUT', send: doc });
// The diff of two profiles; q: its parameters (URLSearchParams).
export const diff = (q) => api(`/api/diff?${q}`);
// The CSV export of `table` over [S, E] (sampled at `width` px, or every row when width is
// null): the Response, for its headers and body; an Error with the server's message (else
// the HTTP status) when it failed.
export async function exportCSV(name, table, S, E, width) {
  const res = await fetch(`${profilePath(name)}/export/${table}.csv?start=${S}&end=${E}&sampled=${width === null ? 0 : 1}${width === null ? '' : `&width=${width}`}`);
  if (!res.ok) {
    let msg = `${res.status}`;
    try { msg = parseJSON(await res.text()).error || msg; } catch { /* keep the status */ }
    throw new Error(msg);
  }
  return res;
}
