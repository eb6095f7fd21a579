// api.js — the JSON API of `nxprof serve` (docs/api.md): fetch, errors, exact integers.
//
// The server writes integers beyond 2^53 as decimal strings; parseJSON also turns any
// unsafe integer number into a BigInt (reading the number's source text), and big()
// makes a BigInt of either, so absolute timestamps stay exact. api() throws an Error with
// the server's {"error"} message and the HTTP status in .status. schema() fetches
// /api/schema once per page (the viewer's timeline tables, labels, colours, search and
// export fields, usage lanes come from its "viewer" member, never from copies in JS).

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
export async function api(path, { method = 'GET', send } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (send !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(send); }
  const res = await fetch(path, init);
  const body = parsed(await res.text());
  if (!res.ok) throw failure(res, body);
  return body;
}

// A GET whose answer is binary (/timeline?format=bin): its ArrayBuffer; errors as api()'s.
export async function apiBytes(path) {
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
// /api/schema, once: {viewer: {groups, timelines, usage}, units: Map table -> Map field ->
// catalogue unit} (docs/api.md).
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

// A profile's saved annotations (docs/api.md "Annotations"): the document, and saving one
// (answered with the document as saved).
const annotationsPath = (name) => `/api/profiles/${namePath(name)}/annotations`;
export const loadAnnotations = (name) => api(annotationsPath(name));
export const saveAnnotations = (name, doc) => api(annotationsPath(name), { method: 'PUT', send: doc });

// A device profile's time per NKI source line (docs/api.md "Source"), its top `limit` lines.
export const loadSource = (name, limit) => api(`/api/profiles/${namePath(name)}/source?limit=${limit}`);
// The Memory view's answer for window [S, E] (absolute ns) at `width` px: SBUF allocation
// rectangles and HBM by category (docs/api.md "Memory"). enc: the profile's namePath.
export const loadMemory = (enc, S, E, width) => api(`/api/profiles/${enc}/memory?start=${S}&end=${E}&width=${width}`);
