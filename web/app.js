// nxprof web viewer: the profile list, a system profile's page and the Device Trace Viewer (Canvas 2D, no framework).
//
// Talks only to the JSON API of `nxprof serve` (docs/api.md). Rules it implements:
// - Routes: "/" (and "/index.html") is the profile list: each system profile with its
//   device profiles (its DeviceProfileList, from /api/profiles) indented under it, then
//   the device profiles no system profile names. "/view/<name>" (or "/profile/<name>")
//   opens profile <name> (URL-encoded): a system profile shows its summary (wall time,
//   busy time per thread, top operators) and its Device Profiles table, one link per
//   device profile; a device profile opens the Device Trace Viewer, with a link back to
//   its system profile. A device profile nested in its system profile's folder (as
//   `process --output-file` writes them) is named "<system>/devices/<device>" and
//   opened at /view/<system>/devices/<device> (docs/api.md).
// - URL of a view: /view/<name>?start=<ns>&end=<ns>[&event=<Table>:<ordinal>]; start and end
//   are absolute profile timestamps in ns (inclusive window), event the selected row. The URL
//   is rewritten (history.replaceState) after every pan, zoom or selection, so a copied link
//   reopens the same view.
// - Time: the profile's timestamps are Unix-epoch ns (> 2^53). The server writes such
//   integers as decimal strings (and parseJSON turns any unsafe integer number into a
//   BigInt), so absolute times are BigInt here; the view is kept as Number offsets from
//   t0 = the first timestamp of /tracks (exact to the ns for spans below 104 days). Axis
//   labels are relative to t0 in ns/us/ms/s, one unit per axis.
// - Lanes: DMA throughput, HBM usage, SBUF usage, PSUM usage, CPU (host), Host memory and
//   Device HBM from /usage, one lane per table of USAGE_LANES the profile has (one /usage
//   request per window for all of them; see paintLane); without DmaUsage a DMA activity
//   lane derived from the DMA events on screen. Hovering a lane shows its value per series
//   (NeuronCore, CPU, HBM stack) under the pointer.
// - Every pan/zoom redraws at once (requestAnimationFrame, with the data already loaded) and,
//   debounced by FETCH_DEBOUNCE_MS, fetches /timeline for the visible window with
//   width = the plot's width in CSS pixels, i.e. the server's sampling (one event per track
//   and pixel bucket: the longest). Stale responses are dropped.
// - Instructions are coloured by framework operator: key = framework_name label when the
//   API gives it, else raw_framework_id, else hlo_name, else opcode; colour =
//   PALETTE[fnv1a32(key) % PALETTE.length], so the same operator always has the same colour.
// - Export to CSV: one request per checked table, all started at once, each file saved as
//   soon as its response is complete; X-Nxprof-Truncated: true shows a notice. Sampled
//   exports use the same start/end/width as the timeline on screen, so they hold the rows
//   drawn (docs/query.md "Sampling").

const FETCH_DEBOUNCE_MS = 120;
const GUTTER = 180;            // px for track labels, left of the plot
const AXIS_H = 30;
const LANE_H = 36;
const GROUP_H = 20;
const TRACK_H = 18;
const TIMELINE_TABLES = ['Instruction', 'DmaPacketAggregated', 'DmaPacket', 'CcInstruction', 'CcOp', 'SemaphoreUpdate'];
const EXPORT_TABLES = ['Instruction', 'DmaPacketAggregated', 'DmaPacket', 'CcInstruction', 'SemaphoreUpdate'];
const POINT_TABLES = new Set(['SemaphoreUpdate']);
const STRING_LABELS = new Set(['opcode', 'hlo_name', 'queue_type', 'description', 'operation', 'framework_name']);
const TABLE_SUFFIX = { DmaPacket: ' · packets', CcOp: ' · ops' };
// The /usage lanes, in drawing order (the server's table order). Lanes whose series' unit
// is "percent" use a fixed 0-100 % scale and show the mean over series; the others
// (bytes_per_second, bytes) show the sum over series scaled to its peak in the window.
// gauge: the table holds plain samples taken every few ms (system tables), so a sample
// holds until the next one and the last one until the window's end; otherwise the last
// sample holds for USAGE_HOLD_NS (the device tables' bucket). name: a series' name in the
// tooltip (default "core <pcore_idx>"); what: what one series is, for the caption.
const USAGE_LANES = [
  { lane: 'dma', table: 'DmaUsage', label: 'DMA throughput', fill: 'rgba(78,121,167,0.75)' },
  { lane: 'hbm', table: 'HbmUsage', label: 'HBM usage', fill: 'rgba(225,87,89,0.75)' },
  { lane: 'sbuf', table: 'SbufUsage', label: 'SBUF usage', fill: 'rgba(89,161,79,0.75)', line: '#2f6b2a' },
  { lane: 'psum', table: 'PsumUsage', label: 'PSUM usage', fill: 'rgba(176,122,161,0.75)', line: '#6e3f63' },
  { lane: 'cpu', table: 'CpuUsage', label: 'CPU (host)', fill: 'rgba(242,142,43,0.75)', line: '#a35a12', gauge: true,
    what: 'CPU', name: (sr) => `CPU ${sr.key ?? sr.cpu_id ?? '(none)'}` },
  { lane: 'hostmem', table: 'HostMemUsage', label: 'Host memory', fill: 'rgba(118,183,178,0.75)', line: '#3f7a75', gauge: true,
    what: 'host', name: () => 'host' },
  { lane: 'devhbm', table: 'SystemProfileHbmUsage', label: 'Device HBM', fill: 'rgba(156,117,95,0.75)', gauge: true,
    what: 'HBM', name: (sr) => sr.key ?? `device ${sr.device_idx} hbm ${sr.hbm_idx}` },
];
const USAGE_BY_LANE = new Map(USAGE_LANES.map((l) => [l.lane, l]));
const USAGE_BY_TABLE = new Map(USAGE_LANES.map((l) => [l.table, l]));
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#bcbd22', '#6b6ecf'];

const $ = (sel) => document.querySelector(sel);

// ---------- utilities ----------

// JSON with exact 64-bit integers: unsafe integers become BigInt (reads the number's source
// text, supported by current Chromium and Firefox; older browsers get a rounded Number).
export function parseJSON(text) {
  return JSON.parse(text, (key, value, ctx) => {
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) &&
        ctx && typeof ctx.source === 'string' && /^-?\d+$/.test(ctx.source)) {
      return BigInt(ctx.source);
    }
    return value;
  });
}

async function api(path) {
  const res = await fetch(path, { headers: { Accept: 'application/json' } });
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

// The server writes integers beyond 2^53 as decimal strings (docs/api.md); BigInt takes both.
const big = (v) => (v === null || v === undefined ? null : typeof v === 'bigint' ? v : typeof v === 'string' ? BigInt(v) : BigInt(Math.round(v)));

export function fnv1a32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
export const colourOf = (key) => PALETTE[fnv1a32(String(key)) % PALETTE.length];

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
// times (so labels read "8.8 ms", not "8800 us"), with as many decimals as the step needs.
function fmtTick(t, step, mag) {
  const units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']];
  const [div, name] = units.find(([d]) => mag >= d) || units[3];
  const dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / div) - 1e-9)));
  return `${(t / div).toFixed(dec)} ${name}`;
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function fmtBytes(n) {
  n = Number(n);
  if (n < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return `${n.toFixed(1)} ${u[i]}`;
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const fmtVal = (v) => (v === null || v === undefined ? '' : Array.isArray(v) ? JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? x.toString() : x)) : String(v));

function setStatus(text) { $('#status').textContent = text || ''; }

function notice(text) {
  const div = document.createElement('div');
  div.className = 'notice';
  div.innerHTML = `<span>${esc(text)}</span><button title="Dismiss">×</button>`;
  div.querySelector('button').onclick = () => div.remove();
  $('#notices').append(div);
}

// Counts, percentages and seconds as text with their units (durations: fmtNs).
const fmtCount = (n) => (n === null || n === undefined ? '' : Number(n).toLocaleString('en-US'));
// Percent: 2 decimals below 10, else 1 ("0.97 %", "42.5 %").
const fmtPct = (x) => (x === null || x === undefined ? '' : `${Number(x).toFixed(Math.abs(x) < 10 ? 2 : 1)} %`);
const fmtSec = (x) => (x === null || x === undefined ? '' : fmtNs(Number(x) * 1e9));
// A cell whose text is cut with an ellipsis when too long, the whole text on hover.
const cut = (text, cls = '') => `<span class="cut ${cls}" title="${esc(text)}">${esc(text)}</span>`;

// ---------- routing ----------

// A profile name as a URL path: "<S>" or "<S>/devices/<D>", each segment percent-encoded.
const namePath = (name) => name.split('/').map(encodeURIComponent).join('/');
const viewHref = (name) => `/view/${namePath(name)}`;
const leafName = (name) => name.slice(name.lastIndexOf('/') + 1);

function route() {
  const fail = (e) => { setStatus(`Error: ${e.message}`); };
  const m = location.pathname.match(/^\/(?:view|profile)\/([^/]+(?:\/devices\/[^/]+)?)\/?$/);
  if (m) openProfile(m[1].split('/').map(decodeURIComponent).join('/')).catch(fail);
  else showProfiles().catch(fail);
}

// The header's trail: Profiles › [its system profile ›] profile `name`.
function setCrumb(name, system) {
  const sep = ' <span class="sep">›</span> ';
  let html = '<a href="/">Profiles</a>';
  if (system) html += `${sep}<a id="crumb-system" href="${viewHref(system)}" title="system profile ${esc(system)}">${esc(system)}</a>`;
  html += `${sep}<span class="here" title="${esc(name)}">${esc(leafName(name))}</span>`;
  $('#crumb').innerHTML = html;
}

// The system profile device profile `name` belongs to: the one it is nested in, else the
// listing's system_profile (docs/api.md), or null.
async function systemOf(name) {
  const nest = name.indexOf('/');
  if (nest >= 0) return name.slice(0, nest);
  const { profiles } = await api('/api/profiles');
  const p = profiles.find((x) => x.name === name);
  return p ? p.system_profile : null;
}

async function openProfile(name) {
  setStatus('Loading…');
  const info = await api(`/api/profiles/${namePath(name)}`);
  setCrumb(name, null);
  document.title = `nxprof — ${leafName(name)}`;
  if (info.kind === 'system') {
    await showSystem(info);
  } else {
    systemOf(name).then((system) => setCrumb(name, system), () => {});
    await startViewer(name, info);
  }
}

async function showProfiles() {
  $('#list-view').hidden = false;
  document.title = 'nxprof — profiles';
  const { profiles } = await api('/api/profiles');
  const byName = new Map(profiles.map((p) => [p.name, p]));
  // Device profiles nested in their system profile's folder are not in the listing.
  const nested = profiles.flatMap((p) => (p.device_profiles || []).filter((d) => d.open && !byName.has(d.open)));
  await Promise.all(nested.map((d) => api(`/api/profiles/${namePath(d.open)}`).then((x) => byName.set(d.open, x), () => {})));
  const tbody = $('#profiles tbody');
  tbody.innerHTML = '';
  $('#profiles-empty').hidden = profiles.length > 0;
  for (const p of profiles) {
    if (p.system_profile && byName.has(p.system_profile)) continue;   // listed under its system profile
    tbody.append(profileRow(p, null));
    for (const d of p.device_profiles || []) tbody.append(profileRow(byName.get(d.open) || null, d));
  }
}

// One row of the profile list: profile p (null when unknown), or device profile ref (a
// DeviceProfileList entry of the row above) indented under its system profile.
function profileRow(p, ref) {
  const tr = document.createElement('tr');
  tr.className = ref ? 'child' : p.kind === 'system' ? 'system' : '';
  const name = ref ? ref.name : p.name;
  const open = ref ? ref.open : p.name;
  const link = open ? `<a href="${viewHref(open)}" title="${esc(name)}">${esc(name)}</a>` : `<span title="${esc(name)}">${esc(name)}</span>`;
  const kind = ref && !ref.exists ? '<span class="warn">missing</span>' : esc(p ? p.kind ?? '' : '');
  const nc = ref && ref.nc_id !== null ? `NC ${esc(ref.nc_id)}` : '';
  const span = p && p.first_ts !== null && p.last_ts !== null;
  const dur = span ? fmtNs(Number(big(p.last_ts) - big(p.first_ts))) : '';
  const err = p && p.error ? `${cut(`⚠ ${p.error}`, 'warn')}<br>` : '';
  tr.innerHTML = `<td class="name"><span class="cut">${ref ? '<span class="tree">└</span>' : ''}${link}</span></td><td>${kind}</td><td>${nc}</td>` +
    `<td class="num">${p ? fmtBytes(p.size_bytes) : ''}</td><td>${esc(span ? p.first_ts : '')}</td><td class="num">${dur}</td>` +
    `<td class="tables">${p ? err + cut(p.tables.join(', ')) : ''}</td>`;
  return tr;
}

// ---------- system profile ----------

// The summary of system profile `info` (/summary) and its Device Profiles table: one row
// per DeviceProfileList entry (/api/profiles), with the facts the summary read from that
// device profile's tables, and a link to it.
async function showSystem(info) {
  $('#system-view').hidden = false;
  $('#system-name').textContent = info.name;
  $('#system-name').title = info.name;
  let s = null, failed = null;
  try { s = await api(`/api/profiles/${namePath(info.name)}/summary`); } catch (e) { failed = e.message; }
  const facts = [];
  if (s && s.wall) facts.push(`wall time <b>${esc(fmtNs(Number(s.wall.duration_ns)))}</b>`);
  if (s) facts.push(`${esc(fmtCount(s.events))} events`);
  if (info.first_ts !== null) facts.push(`first timestamp ${esc(info.first_ts)} ns`);
  facts.push(`${esc(fmtCount((info.device_profiles || []).length))} device profiles`);
  facts.push(esc(fmtBytes(info.size_bytes)));
  if (info.error) facts.push(`<span class="warn" title="${esc(info.error)}">⚠ ${esc(info.error)}</span>`);
  if (failed && failed !== info.error) facts.push(`<span class="warn">summary unavailable: ${esc(failed)}</span>`);
  $('#system-facts').innerHTML = facts.join(' · ');

  const wall = s && s.wall ? Number(s.wall.duration_ns) : 0;
  const busy = (s && s.threads) || [];
  $('#system-busy .content').innerHTML = busy.length ? '<table class="bars"><tr><th>Thread or NeuronCore</th><th class="num">Busy</th><th class="num">of wall time</th><th></th><th class="num">Events</th></tr>' +
    busy.map((b) => {
      const frac = wall > 0 ? Number(b.busy_ns) / wall : 0;
      return `<tr><td>${cut(b.thread || '(none)')}</td><td class="num">${esc(fmtNs(Number(b.busy_ns)))}</td><td class="num">${esc(fmtPct(100 * frac))}</td>` +
        `<td class="barcell"><div class="gauge"><div class="bar" style="width:${(100 * Math.min(1, frac)).toFixed(1)}%"></div></div></td><td class="num">${esc(fmtCount(b.top_level_events))}</td></tr>`;
    }).join('') + '</table>' : '<p class="muted">No events.</p>';

  const ops = (s && s.top_operators) || [];
  const maxSelf = Math.max(1, ...ops.map((o) => Number(o.sum_self_ns ?? 0)));
  $('#system-ops .content').innerHTML = ops.length ? '<table class="bars"><tr><th>Operator</th><th class="num">Count</th><th class="num">Self time</th><th></th><th class="num">Total time</th></tr>' +
    ops.map((o) => `<tr><td>${cut(o.name ?? '(null)')}</td><td class="num">${esc(fmtCount(o.count))}</td><td class="num">${esc(o.sum_self_ns === null ? '' : fmtNs(Number(o.sum_self_ns)))}</td>` +
      `<td class="barcell"><div class="bar" style="width:${(100 * Number(o.sum_self_ns ?? 0) / maxSelf).toFixed(1)}%"></div></td><td class="num">${esc(o.sum_duration_ns === null ? '' : fmtNs(Number(o.sum_duration_ns)))}</td></tr>`).join('') +
    '</table>' : '<p class="muted">No operators.</p>';

  const facts2 = new Map(((s && s.device_profiles) || []).map((d) => [d.name, d]));
  const tbody = $('#device-profiles tbody');
  tbody.innerHTML = '';
  for (const ref of info.device_profiles || []) {
    const d = facts2.get(ref.name) || {};
    const tr = document.createElement('tr');
    const name = ref.open ? `<a href="${viewHref(ref.open)}" title="${esc(ref.name)}">${esc(ref.name)}</a>` : `<span title="${esc(ref.name)}">${esc(ref.name)}</span> <span class="warn">missing</span>`;
    const err = d.error ? ` <span class="warn" title="${esc(d.error)}">⚠</span>` : '';
    tr.innerHTML = `<td class="name"><span class="cut">${name}</span>${err}</td><td class="num">${esc(ref.nc_id ?? '')}</td><td class="num">${esc(fmtCount(d.physical_cores))}</td>` +
      `<td class="num">${esc(fmtSec(d.total_time_s))}</td><td class="num">${esc(fmtCount(d.executions))}</td><td class="num">${esc(fmtPct(d.mfu_estimated_percent))}</td>` +
      `<td class="num">${esc(fmtPct(d.hfu_estimated_percent))}</td><td class="num">${esc(fmtPct(d.mbu_estimated_percent))}</td>` +
      `<td class="num">${esc(fmtSec(d.cc_op_active_time_s))}</td>`;
    tbody.append(tr);
  }
  if (!tbody.children.length) tbody.innerHTML = '<tr><td colspan="9" class="muted">This system profile names no device profiles.</td></tr>';
  setStatus('');
}

// ---------- viewer state ----------

const V = {
  name: null, enc: null, tables: new Set(),
  origin: 0n, span: 1,              // t0 (BigInt ns) and profile length (ns)
  viewS: 0, viewE: 1,               // visible window, ns offsets from t0
  rows: [],                         // layout: {kind, label, table, track, y, h}
  data: new Map(),                  // `${table}\0${track}` -> {start, dur, ord, labels}
  last: null,                       // last timeline response (for the selection summary)
  lastWindow: null,                 // {S, E, width} of that response
  sel: null,                        // {table, ordinal}
  hover: null,
  usage: null, usageAvailable: true,
  fetchSeq: 0, fetchTimer: 0, frame: 0, contentH: 0, cssW: 0,
  eventCache: new Map(),
};

const plotWidth = () => Math.max(1, Math.min(10000, Math.round(V.cssW - GUTTER)));
const nsPerPx = () => (V.viewE - V.viewS) / Math.max(1, V.cssW - GUTTER);
const xOf = (t) => GUTTER + (t - V.viewS) / nsPerPx();
const windowAbs = () => ({ S: V.origin + BigInt(Math.floor(V.viewS)), E: V.origin + BigInt(Math.ceil(V.viewE)) });

// For tests and scripts: the visible window and what was drawn.
window.nxViewer = {
  get state() {
    const { S, E } = windowAbs();
    return { profile: V.name, start: S.toString(), end: E.toString(), width: plotWidth(),
      rows: V.rows.map((r) => ({ kind: r.kind, label: r.label, table: r.table, track: r.track, y: r.y, h: r.h })),
      drawnEvents: V.drawnEvents || 0, paintMs: V.paintMs ?? null, loaded: V.lastWindow !== null, sel: V.sel,
      lastWindow: V.lastWindow && { start: V.lastWindow.S.toString(), end: V.lastWindow.E.toString(), width: V.lastWindow.width },
      fetching: V.inFlight || 0 };
  },
  exports: [],
};

async function startViewer(name, info) {
  V.name = name;
  V.enc = namePath(name);
  $('#viewer').hidden = false;
  const tracks = await api(`/api/profiles/${V.enc}/tracks`);
  V.tables = new Set(info.tables);
  const first = big(tracks.first_ts ?? info.first_ts) ?? 0n;
  const lastTs = big(tracks.last_ts ?? info.last_ts) ?? first + 1000n;
  V.origin = first;
  V.span = Math.max(1, Number(lastTs - first));
  V.viewS = 0;
  V.viewE = V.span;

  const q = new URLSearchParams(location.search);
  if (/^-?\d+$/.test(q.get('start') || '') && /^-?\d+$/.test(q.get('end') || '')) {
    const s = Number(BigInt(q.get('start')) - V.origin), e = Number(BigInt(q.get('end')) - V.origin);
    if (e > s) { V.viewS = s; V.viewE = e; }
  }
  const ev = (q.get('event') || '').match(/^([A-Za-z]+):(\d+)$/);
  if (ev) V.sel = { table: ev[1], ordinal: Number(ev[2]) };

  V.tracksDoc = tracks;
  buildRows(tracks);
  setupCanvas();
  setupExport();
  loadSummary().catch((e) => { $('#summary .content').textContent = `Summary unavailable: ${e.message}`; });
  if (V.sel) showDetails(V.sel);
  scheduleFetch(0);
  setStatus('');
}

function buildRows(tracks) {
  const rows = [];
  let y = 0;
  rows.push({ kind: 'axis', label: '', y, h: AXIS_H }); y += AXIS_H;
  const throughput = V.hasUsage && V.tables.has('DmaUsage');
  rows.push({ kind: 'lane', lane: 'dma', label: throughput ? 'DMA throughput' : 'DMA activity', y, h: LANE_H }); y += LANE_H;
  for (const l of USAGE_LANES) {
    if (l.lane === 'dma' || !V.hasUsage || !V.tables.has(l.table)) continue;
    rows.push({ kind: 'lane', lane: l.lane, label: l.label, y, h: LANE_H }); y += LANE_H;
  }
  for (const g of tracks.groups) {
    if (!g.tracks.length) continue;
    rows.push({ kind: 'group', label: g.label, group: g.group, y, h: GROUP_H }); y += GROUP_H;
    for (const t of g.tracks) {
      rows.push({ kind: 'track', group: g.group, table: t.table, track: t.track, count: t.count,
        label: (t.track || '(none)') + (TABLE_SUFFIX[t.table] || ''), y, h: TRACK_H });
      y += TRACK_H;
    }
  }
  V.rows = rows;
  V.contentH = y + 8;
  V.timelineTables = TIMELINE_TABLES.filter((t) => V.tables.has(t));
}

// ---------- fetching ----------

function scheduleFetch(delay = FETCH_DEBOUNCE_MS) {
  clearTimeout(V.fetchTimer);
  V.fetchTimer = setTimeout(fetchWindow, delay);
}

async function fetchWindow() {
  const { S, E } = windowAbs();
  const width = plotWidth();
  updateURL();
  if (!V.timelineTables.length) { V.lastWindow = { S, E, width }; draw(); return; }
  const seq = ++V.fetchSeq;
  V.inFlight = (V.inFlight || 0) + 1;
  try {
    const base = `/api/profiles/${V.enc}`;
    const qs = `start=${S}&end=${E}&width=${width}`;
    const usageTables = USAGE_LANES.map((l) => l.table).filter((t) => V.tables.has(t));
    const [tl, usage] = await Promise.all([
      api(`${base}/timeline?tables=${V.timelineTables.join(',')}&${qs}`),
      V.usageAvailable && usageTables.length
        ? api(`${base}/usage?tables=${usageTables.join(',')}&${qs}`).catch((e) => { if (e.status === 404 || e.status === 400) V.usageAvailable = false; return null; })
        : null,
    ]);
    if (seq !== V.fetchSeq) return; // a newer window was asked for
    ingest(tl, S);
    V.usage = usage ? ingestUsage(usage, S) : null;
    // The usage lanes appear once the server has given a series (docs/api.md "Requests
    // from the web UI"); until then only the derived DMA activity lane is drawn.
    if (!V.hasUsage && V.usage && V.usage.n) {
      V.hasUsage = true;
      buildRows(V.tracksDoc);
      V.resize();
    }
    V.last = tl;
    V.lastWindow = { S, E, width };
    updateSelectionSummary();
    draw();
  } catch (e) {
    if (seq === V.fetchSeq) setStatus(`Error: ${e.message}`);
  } finally {
    V.inFlight--;
  }
}

function ingest(tl, S) {
  const off = Number(S - V.origin);
  const strings = tl.strings || [];
  V.data = new Map();
  for (const t of tl.tables) {
    for (const tr of t.tracks || []) {   // a table that failed to read has only "error"
      const n = tr.start.length;
      const start = new Float64Array(n), dur = new Float64Array(n);
      for (let i = 0; i < n; i++) { start[i] = off + Number(tr.start[i]); dur[i] = Number(tr.dur[i]); }
      const labels = {};
      for (const [f, arr] of Object.entries(tr.labels || {})) {
        labels[f] = STRING_LABELS.has(f) ? arr.map((ix) => (ix === null || ix < 0 ? null : strings[ix])) : arr;
      }
      const d = { table: t.table, track: tr.track, start, dur, ord: tr.ord, labels };
      d.colour = Array.from({ length: n }, (_, i) => eventColour(d, i));   // once per fetch, not per frame
      V.data.set(`${t.table}\0${tr.track}`, d);
    }
  }
}

// /usage series -> per table, per series Float64Arrays of times (ns offsets from t0) and
// values, converted once per response so that paint does no parsing. A step series'
// "before" sample (percent tables: the value in force at the window's start) is put first.
function ingestUsage(usage, S) {
  const base = Number(S - V.origin);
  const byTable = new Map();
  let n = 0;
  for (const sr of usage.series || []) {
    const pre = sr.before ? 1 : 0, m = sr.t.length + pre;
    const t = new Float64Array(m), v = new Float64Array(m);
    if (pre) { t[0] = base + Number(sr.before.t); v[0] = Number(sr.before.v); }
    for (let i = 0; i < sr.t.length; i++) { t[i + pre] = base + Number(sr.t[i]); v[i + pre] = Number(sr.v[i]); }
    if (!byTable.has(sr.table)) byTable.set(sr.table, { percent: sr.unit === 'percent', unit: sr.unit, series: [] });
    const def = USAGE_BY_TABLE.get(sr.table);
    const name = def && def.name ? def.name(sr) : `core ${sr.pcore_idx ?? '(none)'}`;
    byTable.get(sr.table).series.push({ name, t, v });
    n++;
  }
  return { byTable, n };
}

function updateURL() {
  const { S, E } = windowAbs();
  let url = `/view/${V.enc}?start=${S}&end=${E}`;
  if (V.sel) url += `&event=${V.sel.table}:${V.sel.ordinal}`;
  if (location.pathname + location.search !== url) history.replaceState(null, '', url);
}

// ---------- drawing ----------

let canvas, ctx;

function setupCanvas() {
  canvas = $('#timeline');
  ctx = canvas.getContext('2d');
  const wrap = $('#timeline-wrap');
  const resize = () => {
    V.cssW = wrap.clientWidth;
    const dpr = window.devicePixelRatio || 1;
    canvas.style.height = `${V.contentH}px`;
    canvas.width = Math.round(V.cssW * dpr);
    canvas.height = Math.round(V.contentH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
    scheduleFetch();
  };
  V.resize = resize;
  new ResizeObserver(resize).observe(wrap);
  V.cssW = wrap.clientWidth;
  installInput(wrap);
}

function draw() {
  if (V.frame) return;
  V.frame = requestAnimationFrame(() => {
    V.frame = 0;
    const t0 = performance.now();
    paint();
    V.paintMs = performance.now() - t0;   // reported in nxViewer.state for bench/viewer
  });
}

function eventColour(d, i) {
  const L = d.labels;
  switch (d.table) {
    case 'Instruction': {
      const key = (L.framework_name && L.framework_name[i]) ?? (L.raw_framework_id && L.raw_framework_id[i] !== null ? `fw${L.raw_framework_id[i]}` : null) ??
        (L.hlo_name && L.hlo_name[i]) ?? (L.opcode && L.opcode[i]) ?? d.track;
      return colourOf(key);
    }
    case 'DmaPacketAggregated': case 'DmaPacket':
      return colourOf(`dma:${d.track}`);   // one colour per queue, the same in both DMA tables
    case 'CcInstruction': return colourOf(`cc:${(L.description && L.description[i]) ?? ''}`);
    case 'CcOp': return colourOf(`ccop:${(L.operation && L.operation[i]) ?? ''}`);
    default: return '#374151';
  }
}

function paint() {
  const W = V.cssW, H = V.contentH;
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, W, H);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  V.selBox = null;   // found again while painting (the selected row may be sampled away)
  let drawn = 0;
  const k = nsPerPx();
  for (const r of V.rows) {
    if (r.kind === 'axis') { paintAxis(r); continue; }
    // label gutter
    ctx.fillStyle = r.kind === 'group' ? '#e8ebf0' : '#f6f7f9';
    ctx.fillRect(0, r.y, GUTTER, r.h);
    if (r.kind === 'group') { ctx.fillStyle = '#eef1f5'; ctx.fillRect(GUTTER, r.y, W - GUTTER, r.h); }
    ctx.fillStyle = r.kind === 'group' ? '#111827' : '#374151';
    ctx.font = r.kind === 'group' ? 'bold 11px system-ui, sans-serif' : '11px system-ui, sans-serif';
    ctx.fillText(r.label, 8, r.y + r.h / 2, GUTTER - 12);
    ctx.strokeStyle = '#eceef2';
    ctx.beginPath(); ctx.moveTo(0, r.y + r.h - 0.5); ctx.lineTo(W, r.y + r.h - 0.5); ctx.stroke();
    ctx.save();
    ctx.beginPath(); ctx.rect(GUTTER, r.y, W - GUTTER, r.h); ctx.clip();
    if (r.kind === 'lane') drawn += paintLane(r);
    else if (r.kind === 'track') drawn += paintTrack(r, k);
    ctx.restore();
  }
  // the selected event: an outline
  if (V.selBox) {
    const b = V.selBox;
    ctx.strokeStyle = '#111827'; ctx.lineWidth = 2;
    ctx.strokeRect(b.x - 1, b.y, Math.max(2, b.w) + 2, b.h);
    ctx.lineWidth = 1;
  }
  V.drawnEvents = drawn;
  $('#range-label').textContent = `${fmtNs(V.viewS)} – ${fmtNs(V.viewE)} (${fmtNs(V.viewE - V.viewS)} visible) · t0 = ${V.origin} ns`;
}

function paintAxis(r) {
  const W = V.cssW;
  ctx.fillStyle = '#f0f2f5';
  ctx.fillRect(0, r.y, W, r.h);
  ctx.fillStyle = '#6b7280';
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText('time from t0', 8, r.y + r.h / 2);
  const k = nsPerPx();
  const step = niceStep(Math.max(1, 90 * k));
  const first = Math.ceil(V.viewS / step) * step;
  const mag = Math.max(Math.abs(V.viewS), Math.abs(V.viewE), step);
  ctx.strokeStyle = '#9ca3af';
  ctx.beginPath();
  for (let t = first; t <= V.viewE; t += step) {
    const x = Math.round(xOf(t)) + 0.5;
    if (x < GUTTER) continue;
    ctx.moveTo(x, r.y + r.h - 8); ctx.lineTo(x, r.y + r.h);
    ctx.fillStyle = '#374151';
    ctx.fillText(fmtTick(t, step, mag), x + 3, r.y + r.h / 2 - 2);
  }
  ctx.stroke();
  // grid lines across the tracks
  ctx.strokeStyle = 'rgba(0,0,0,0.05)';
  ctx.beginPath();
  for (let t = first; t <= V.viewE; t += step) {
    const x = Math.round(xOf(t)) + 0.5;
    if (x < GUTTER) continue;
    ctx.moveTo(x, r.y + r.h); ctx.lineTo(x, V.contentH);
  }
  ctx.stroke();
}

function paintTrack(r, k) {
  const d = V.data.get(`${r.table}\0${r.track}`);
  if (!d) return 0;
  const W = V.cssW;
  const y = r.y + 2, h = r.h - 4;
  let n = 0;
  const point = POINT_TABLES.has(d.table);
  const text = d.table === 'Instruction' ? d.labels.opcode : null;
  const selOrd = V.sel && V.sel.table === d.table ? V.sel.ordinal : null;
  // Events in start order; touching or overlapping rectangles of one colour are drawn as
  // one (at full zoom-out most events are a pixel wide and sit side by side), and
  // fillStyle is set only when the colour changes: both are the slow part of a frame.
  let fill = null, runC = null, runX0 = 0, runX1 = -Infinity;
  const flush = () => {
    if (runC === null) return;
    if (runC !== fill) ctx.fillStyle = fill = runC;
    ctx.fillRect(runX0, y, runX1 - runX0, h);
    runC = null;
  };
  for (let i = 0; i < d.start.length; i++) {
    const x0 = GUTTER + (d.start[i] - V.viewS) / k;
    const w = point ? 2 : Math.max(1, d.dur[i] / k);
    const x = point ? x0 - 1 : x0;
    if (x + w < GUTTER || x > W) continue;
    n++;
    if (selOrd !== null && d.ord[i] === selOrd) V.selBox = { x, y: r.y + 1, w, h: r.h - 2 };
    const c = d.colour[i];
    if (c === runC && x <= runX1 + 0.5) {
      if (x + w > runX1) runX1 = x + w;
    } else {
      flush();
      runC = c; runX0 = x; runX1 = x + w;
    }
    if (text && w > 44 && text[i]) {
      flush();
      ctx.fillStyle = fill = '#ffffff';
      ctx.fillText(text[i], Math.max(x, GUTTER) + 3, y + h / 2, w - 6);
    }
  }
  flush();
  return n;
}

// Utilisation lanes. With the server's /usage series (bucketed samples, docs/processing.md)
// each sample holds its value until the series' next sample (the last one for
// USAGE_HOLD_NS, the device tables' bucket width, or until the window's end for gauge
// lanes), and a pixel takes the largest value of each series over it. Byte lanes
// (DmaUsage, HbmUsage throughput; SystemProfileHbmUsage bytes) show the sum over series
// (pcore_idx; device/HBM stack) scaled to its peak in the window. Percent lanes
// (SbufUsage, PsumUsage, CpuUsage, HostMemUsage) show the mean over series on a fixed
// 0-100 % scale (with one series per NeuronCore, the occupancy of their memories
// together; CpuUsage is one "average" series when the profile has it) and, with several
// series, a line for the busiest series per pixel. Without a DmaUsage series the DMA lane
// shows the fraction of DMA queues busy per pixel, from the DMA transfers on screen. The
// per-pixel arrays are kept between frames (reallocated only when the plot width changes).
const USAGE_HOLD_NS = 10000;
// A value of a /usage series by its unit (bytes: B/KiB/MiB/GiB).
const fmtUsage = (v, unit) => (unit === 'percent' ? fmtPct(v) : unit === 'bytes' ? fmtBytes(v) : `${fmtBytes(v)}/s`);
const holdNs = (def) => (def && def.gauge ? Infinity : USAGE_HOLD_NS);

function laneScratch(pw) {
  let L = V.laneScratch;
  if (!L || L.pw !== pw) L = V.laneScratch = { pw, vals: new Float64Array(pw), one: new Float64Array(pw), hi: new Float64Array(pw) };
  return L;
}

// One series' value per plot pixel into `one` (largest sample held over the pixel; the
// last sample holds for `hold` ns).
function seriesPixels(sr, one, pw, hold) {
  one.fill(0);
  const n = sr.t.length, k = nsPerPx();
  for (let i = 0; i < n; i++) {
    const t0 = sr.t[i], t1 = i + 1 < n ? sr.t[i + 1] : t0 + hold;
    const x0 = (t0 - V.viewS) / k, x1 = (t1 - V.viewS) / k;
    if (x1 <= 0 || x0 >= pw) continue;
    const v = sr.v[i];
    const p0 = Math.max(0, Math.floor(x0)), p1 = Math.min(pw, Math.max(p0 + 1, Math.ceil(x1)));
    for (let p = p0; p < p1; p++) if (v > one[p]) one[p] = v;
  }
}

function paintLane(r) {
  const W = V.cssW, pw = Math.max(1, Math.floor(W - GUTTER));
  const def = USAGE_BY_LANE.get(r.lane);
  const u = def && V.usage && V.usage.byTable.get(def.table);
  const { vals, one, hi } = laneScratch(pw);
  vals.fill(0);
  let max = 0, caption = '', percent = false, nSeries = 0;
  if (u && u.series.length) {
    percent = u.percent;
    nSeries = u.series.length;
    hi.fill(0);
    for (const sr of u.series) {
      seriesPixels(sr, one, pw, holdNs(def));
      for (let p = 0; p < pw; p++) { vals[p] += one[p]; if (one[p] > hi[p]) hi[p] = one[p]; }
    }
    if (percent) {
      let peakHi = 0;
      for (let p = 0; p < pw; p++) { vals[p] /= nSeries; max = Math.max(max, vals[p]); peakHi = Math.max(peakHi, hi[p]); }
      caption = `peak ${fmtPct(max)}` + (nSeries > 1 ? ` · busiest ${def.what || 'core'} ${fmtPct(peakHi)}` : '');
      max = 100;
    } else {
      for (let p = 0; p < pw; p++) max = Math.max(max, vals[p]);
      caption = `peak ${fmtUsage(max, u.unit)}`;
    }
  } else if (r.lane === 'dma') {
    let tracks = 0;
    const k = nsPerPx();
    for (const d of V.data.values()) {
      if (d.table !== 'DmaPacketAggregated' && !(d.table === 'DmaPacket' && !V.tables.has('DmaPacketAggregated'))) continue;
      tracks++;
      for (let i = 0; i < d.start.length; i++) {
        const a = (d.start[i] - V.viewS) / k, b = (d.start[i] + d.dur[i] - V.viewS) / k;
        for (let p = Math.max(0, Math.floor(a)); p < Math.min(pw, Math.ceil(b)); p++) {
          vals[p] += Math.min(b, p + 1) - Math.max(a, p);
        }
      }
    }
    max = tracks;
    caption = 'queues busy';
  } else {
    return 0;
  }
  if (max <= 0) return 0;
  const yOf = (x) => r.y + r.h - 2 - (r.h - 6) * Math.min(1, x / max);
  ctx.fillStyle = def ? def.fill : USAGE_LANES[0].fill;
  ctx.beginPath();
  ctx.moveTo(GUTTER, r.y + r.h);
  for (let p = 0; p < pw; p++) {
    const y = yOf(vals[p]);
    ctx.lineTo(GUTTER + p, y); ctx.lineTo(GUTTER + p + 1, y);
  }
  ctx.lineTo(GUTTER + pw, r.y + r.h);
  ctx.closePath();
  ctx.fill();
  if (percent && nSeries > 1) {
    ctx.strokeStyle = def.line;
    ctx.beginPath();
    for (let p = 0; p < pw; p++) {
      const y = yOf(hi[p]);
      if (p === 0) ctx.moveTo(GUTTER, y); else ctx.lineTo(GUTTER + p, y);
      ctx.lineTo(GUTTER + p + 1, y);
    }
    ctx.stroke();
  }
  const cw = ctx.measureText(caption).width;
  ctx.fillStyle = 'rgba(255,255,255,0.85)';
  ctx.fillRect(W - 12 - cw, r.y + 1, cw + 8, 14);
  ctx.fillStyle = '#374151';
  ctx.fillText(caption, W - 8 - cw, r.y + 8);
  return 0;
}

// The value of a /usage lane under plot pixel p, by paintLane's rule: per series the
// largest sample held over the pixel (null where no sample covers it), and the lane's
// total (sum of throughputs or bytes, or mean of percents over the series).
function laneReadout(r, p) {
  const def = USAGE_BY_LANE.get(r.lane);
  const u = def && V.usage && V.usage.byTable.get(def.table);
  if (!u || !u.series.length) return null;
  const k = nsPerPx(), tA = V.viewS + p * k, tB = tA + k, hold = holdNs(def);
  const cores = [];
  let sum = 0;
  for (const sr of u.series) {
    const n = sr.t.length;
    // last sample at or before tA (binary search), then every sample starting inside the pixel
    let lo = 0, hiI = n;
    while (lo < hiI) { const m = (lo + hiI) >> 1; if (sr.t[m] <= tA) lo = m + 1; else hiI = m; }
    let best = null;
    const i0 = lo - 1;
    if (i0 >= 0 && (i0 + 1 < n ? sr.t[i0 + 1] : sr.t[i0] + hold) > tA) best = sr.v[i0];
    for (let i = lo; i < n && sr.t[i] < tB; i++) if (best === null || sr.v[i] > best) best = sr.v[i];
    cores.push({ name: sr.name, v: best });
    sum += best ?? 0;
  }
  return { def, percent: u.percent, unit: u.unit, t: tA, total: u.percent ? sum / u.series.length : sum, cores };
}

function showLaneTooltip(r, mx, my) {
  const ro = laneReadout(r, Math.floor(mx - GUTTER));
  if (!ro) { hideTooltip(); return; }
  const fmt = (v) => (v === null ? 'no sample' : fmtUsage(v, ro.unit));
  const lines = [`<b>${esc(ro.def.label)}</b> at ${fmtNs(ro.t)}`];
  if (ro.cores.length > 1) lines.push(`${ro.percent ? 'mean' : 'total'}: ${fmt(ro.total)}`);
  for (const c of ro.cores) lines.push(`${esc(c.name)}: ${fmt(c.v)}`);
  const tip = $('#tooltip');
  V.hover = null;
  tip.innerHTML = lines.join('\n');
  tip.hidden = false;
  const wrap = $('#timeline-wrap');
  tip.style.left = `${Math.max(0, Math.min(mx + 14, wrap.clientWidth - tip.offsetWidth - 4))}px`;
  tip.style.top = `${my + 16}px`;
}

// ---------- hit testing, tooltip, details ----------

function rowAt(y) { return V.rows.find((r) => y >= r.y && y < r.y + r.h); }

function hitTest(mx, my) {
  const r = rowAt(my);
  if (!r || r.kind !== 'track' || mx < GUTTER) return null;
  const d = V.data.get(`${r.table}\0${r.track}`);
  if (!d) return null;
  const k = nsPerPx();
  const point = POINT_TABLES.has(d.table);
  let best = -1, bestDist = 3;
  for (let i = 0; i < d.start.length; i++) {
    const x0 = GUTTER + (d.start[i] - V.viewS) / k;
    const x1 = point ? x0 : x0 + Math.max(1, d.dur[i] / k);
    const dist = mx < x0 ? x0 - mx : mx > x1 ? mx - x1 : 0;
    if (dist < bestDist || (dist === 0 && bestDist === 0 && d.dur[i] < d.dur[best])) { best = i; bestDist = dist; }
  }
  if (best < 0) return null;
  return { row: r, d, i: best, table: d.table, ordinal: d.ord[best] };
}

async function fetchEvent(table, ordinal) {
  const key = `${table}:${ordinal}`;
  if (V.eventCache.has(key)) return V.eventCache.get(key);
  const p = api(`/api/profiles/${V.enc}/event?table=${encodeURIComponent(table)}&ordinal=${ordinal}`);
  V.eventCache.set(key, p);
  if (V.eventCache.size > 500) V.eventCache.delete(V.eventCache.keys().next().value);
  p.catch(() => V.eventCache.delete(key));
  return p;
}

const fieldMap = (ev) => Object.fromEntries(ev.fields.map((f) => [f.name, f.value]));

function tooltipHTML(h, full) {
  const d = h.d, i = h.i, L = d.labels;
  const lines = [];
  const s = d.start[i], e = s + d.dur[i];
  lines.push(`<b>${esc(d.table)}</b> · ${esc(d.track)}`);
  lines.push(POINT_TABLES.has(d.table) ? `at ${fmtNs(s)}` : `${fmtNs(s)} – ${fmtNs(e)} (${fmtNs(d.dur[i])})`);
  const f = full ? fieldMap(full) : {};
  const lab = (name) => f[name] ?? (L[name] ? L[name][i] : null);
  if (d.table === 'Instruction') {
    lines.push(`opcode: ${esc(lab('opcode') ?? '')}`);
    if (f.operands !== undefined) lines.push(`operands: ${esc(f.operands ?? '')}`);
    const ir = [];
    if (lab('framework_name')) ir.push(`framework: ${lab('framework_name')}`);
    else if (lab('raw_framework_id') !== null && lab('raw_framework_id') !== undefined) ir.push(`framework id: ${lab('raw_framework_id')}`);
    if (lab('hlo_name')) ir.push(`HLO: ${lab('hlo_name')}`);
    if (f.penguin_id) ir.push(`penguin: ${f.penguin_id}`);
    if (f.bir_instruction_name) ir.push(`BIR: ${f.bir_instruction_name}`);
    if (f.layer) ir.push(`layer: ${f.layer}`);
    if (ir.length) lines.push(esc(ir.join('\n')));
  } else {
    for (const [name, arr] of Object.entries(L)) if (arr[i] !== null && arr[i] !== undefined) lines.push(`${esc(name)}: ${esc(arr[i])}`);
  }
  if (!full) lines.push('<span style="opacity:.6">loading details…</span>');
  return lines.join('\n');
}

function showTooltip(h, mx, my) {
  const tip = $('#tooltip');
  const key = `${h.table}:${h.ordinal}`;
  V.hover = { ...h, key };
  const cached = V.eventFull && V.eventFull.get(key);
  tip.innerHTML = tooltipHTML(h, cached);
  tip.hidden = false;
  const wrap = $('#timeline-wrap');
  const x = Math.min(mx + 14, wrap.clientWidth - tip.offsetWidth - 4);
  tip.style.left = `${Math.max(0, x)}px`;
  tip.style.top = `${my + 16 + wrap.scrollTop * 0}px`;
  if (!cached) {
    clearTimeout(V.hoverTimer);
    V.hoverTimer = setTimeout(() => {
      fetchEvent(h.table, h.ordinal).then((ev) => {
        V.eventFull = V.eventFull || new Map();
        V.eventFull.set(key, ev);
        if (V.eventFull.size > 500) V.eventFull.delete(V.eventFull.keys().next().value);
        if (V.hover && V.hover.key === key && !tip.hidden) tip.innerHTML = tooltipHTML(h, ev);
      }).catch(() => {});
    }, 60);
  }
}

function hideTooltip() { $('#tooltip').hidden = true; V.hover = null; }

async function showDetails(sel) {
  const box = $('#details .content');
  box.innerHTML = '<p class="muted">Loading…</p>';
  try {
    const ev = await fetchEvent(sel.table, sel.ordinal);
    let html = `<p><b>${esc(ev.table)}</b> #${esc(ev.ordinal)}${ev.track !== undefined ? ` · track ${esc(ev.track)}` : ''}</p><table>`;
    for (const f of ev.fields) html += `<tr><td class="k">${esc(f.name)}</td><td>${esc(fmtVal(f.value))}</td></tr>`;
    box.innerHTML = `${html}</table>`;
  } catch (e) {
    box.innerHTML = `<p class="muted">Event ${esc(sel.table)}:${esc(sel.ordinal)} unavailable: ${esc(e.message)}</p>`;
  }
}

// ---------- input: pan, zoom, hover, click ----------

function clampView() {
  const minSpan = 10, maxSpan = V.span * 1.5 + 10;
  let w = Math.min(maxSpan, Math.max(minSpan, V.viewE - V.viewS));
  let s = V.viewS;
  const lo = -0.25 * V.span - 5, hi = 1.25 * V.span + 5;
  if (s < lo) s = lo;
  if (s + w > hi) s = Math.max(lo, hi - w);
  if (s + w > hi) w = hi - s;
  V.viewS = s; V.viewE = s + w;
}

function changed() { clampView(); hideTooltip(); draw(); scheduleFetch(); }

function zoomAt(factor, xPx) {
  const t = V.viewS + (xPx - GUTTER) * nsPerPx();
  V.viewS = t - (t - V.viewS) * factor;
  V.viewE = t + (V.viewE - t) * factor;
  changed();
}
function pan(fraction) { const w = V.viewE - V.viewS; V.viewS += w * fraction; V.viewE += w * fraction; changed(); }

function installInput(wrap) {
  let drag = null;
  const pos = (e) => { const b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
  canvas.addEventListener('mousedown', (e) => {
    const [x, y] = pos(e);
    drag = { x0: e.clientX, s: V.viewS, e: V.viewE, moved: false, x, y };
    e.preventDefault();
  });
  window.addEventListener('mousemove', (e) => {
    if (drag) {
      const dx = e.clientX - drag.x0;
      if (Math.abs(dx) > 2) drag.moved = true;
      if (drag.moved) {
        const k = (drag.e - drag.s) / Math.max(1, V.cssW - GUTTER);
        V.viewS = drag.s - dx * k; V.viewE = drag.e - dx * k;
        changed();
      }
      return;
    }
    if (e.target !== canvas) return;
    const [x, y] = pos(e);
    const h = hitTest(x, y);
    canvas.style.cursor = rowAt(y)?.kind === 'axis' ? 'grab' : h ? 'pointer' : 'crosshair';
    if (h) showTooltip(h, x, y);
    else if (x >= GUTTER && rowAt(y)?.kind === 'lane' && USAGE_BY_LANE.has(rowAt(y).lane)) showLaneTooltip(rowAt(y), x, y);
    else hideTooltip();
  });
  window.addEventListener('mouseup', () => {
    if (!drag) return;
    const d = drag; drag = null;
    if (d.moved) return;
    const h = hitTest(d.x, d.y);
    if (!h) return;
    V.sel = { table: h.table, ordinal: h.ordinal };
    draw();
    updateURL();
    showDetails(V.sel);
  });
  canvas.addEventListener('mouseleave', () => { if (!drag) hideTooltip(); });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const [x] = pos(e);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const d = e.shiftKey ? (e.deltaY || e.deltaX) : e.deltaX;
      pan(d / Math.max(1, V.cssW - GUTTER));
    } else {
      zoomAt(Math.exp(e.deltaY * 0.0015), Math.max(GUTTER, x));
    }
  }, { passive: false });
  window.addEventListener('keydown', (e) => {
    if (e.target.closest && e.target.closest('input, textarea, select, dialog')) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const mid = GUTTER + (V.cssW - GUTTER) / 2;
    switch (e.key) {
      case 'a': case 'A': case 'ArrowLeft': pan(-0.15); break;
      case 'd': case 'D': case 'ArrowRight': pan(0.15); break;
      case 'w': case 'W': zoomAt(0.7, mid); break;
      case 's': case 'S': zoomAt(1 / 0.7, mid); break;
      case '0': V.viewS = 0; V.viewE = V.span; changed(); break;
      default: return;
    }
    e.preventDefault();
  });
  $('#zoom-in').onclick = () => zoomAt(0.7, GUTTER + (V.cssW - GUTTER) / 2);
  $('#zoom-out').onclick = () => zoomAt(1 / 0.7, GUTTER + (V.cssW - GUTTER) / 2);
  $('#zoom-reset').onclick = () => { V.viewS = 0; V.viewE = V.span; changed(); };
}

// ---------- summary panels ----------

async function loadSummary() {
  const s = await api(`/api/profiles/${V.enc}/summary?top=10`);
  const box = $('#summary .content');
  let html = '';
  if (s.summary) {
    const entries = Object.entries(s.summary).filter(([, v]) => v !== null);
    const show = entries.slice(0, 8);
    html += '<table>' + show.map(([k, v]) => `<tr><td class="k">${esc(k)}</td><td>${esc(fmtVal(v))}</td></tr>`).join('') + '</table>';
    if (entries.length > show.length) {
      html += `<details><summary>all ${entries.length} fields</summary><table>` +
        entries.slice(show.length).map(([k, v]) => `<tr><td class="k">${esc(k)}</td><td>${esc(fmtVal(v))}</td></tr>`).join('') + '</table></details>';
    }
  } else html += '<p class="muted">No Summary table.</p>';
  const os = s.opcode_summary;
  if (os && os.rows.length) {
    const ci = (n) => os.columns.indexOf(n);
    const iE = ci('engine'), iO = ci('opcode'), iT = ci('instruction_time_ns'), iC = ci('instruction_count');
    const max = Math.max(...os.rows.map((r) => Number(r[iT] ?? 0)), 1);
    html += `<h3>Top opcodes by instruction time <span class="muted">(${os.rows.length} of ${os.total_rows})</span></h3><table class="bars">`;
    for (const r of os.rows) {
      const v = Number(r[iT] ?? 0);
      html += `<tr><td>${esc(r[iE] ?? '')}</td><td>${esc(r[iO] ?? '')}</td><td style="width:40%"><div class="bar" style="width:${(100 * v / max).toFixed(1)}%" title="${esc(fmtNs(v))}, ${esc(r[iC] ?? '')} instructions"></div></td><td>${esc(fmtNs(v))}</td></tr>`;
    }
    html += '</table>';
  }
  box.innerHTML = html;
}

// From the last timeline response: exact rows per table in the window, and the busiest
// opcodes among the sampled events on screen (time clipped to the window).
function updateSelectionSummary() {
  const box = $('#selection .content');
  const tl = V.last;
  if (!tl) return;
  const w = V.lastWindow;
  let html = `<p>${fmtNs(Number(w.S - V.origin))} – ${fmtNs(Number(w.E - V.origin))} (${fmtNs(Number(w.E - w.S))})</p><table>`;
  html += '<tr><th>table</th><th>rows in window</th><th>drawn</th></tr>';
  for (const t of tl.tables) html += `<tr><td>${esc(t.table)}</td><td>${esc(t.rows_in_window)}</td><td>${esc(t.sampled)}</td></tr>`;
  html += '</table>';
  const byOp = new Map();
  const s0 = Number(w.S - V.origin), e0 = Number(w.E - V.origin);
  for (const d of V.data.values()) {
    if (d.table !== 'Instruction' || !d.labels.opcode) continue;
    for (let i = 0; i < d.start.length; i++) {
      const t = Math.max(0, Math.min(e0, d.start[i] + d.dur[i]) - Math.max(s0, d.start[i]));
      const op = d.labels.opcode[i] ?? '(null)';
      byOp.set(op, (byOp.get(op) || 0) + t);
    }
  }
  const top = [...byOp.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
  if (top.length) {
    const max = top[0][1] || 1;
    html += '<h3>Opcodes on screen <span class="muted">(sampled events)</span></h3><table class="bars">';
    for (const [op, t] of top) html += `<tr><td>${esc(op)}</td><td style="width:45%"><div class="bar" style="width:${(100 * t / max).toFixed(1)}%"></div></td><td>${esc(fmtNs(t))}</td></tr>`;
    html += '</table>';
  }
  box.innerHTML = html;
}

// ---------- Export to CSV ----------

function setupExport() {
  const dlg = $('#export-dialog');
  $('#export-open').onclick = () => {
    for (const cb of dlg.querySelectorAll('input[name=table]')) {
      const has = V.tables.has(cb.value);
      cb.disabled = !has;
      if (!has) cb.checked = false;
      cb.parentElement.classList.toggle('disabled', !has);
    }
    const { S, E } = windowAbs();
    $('#export-range').textContent = `Window ${S} – ${E} ns (${fmtNs(Number(E - S))}), ${plotWidth()} px`;
    dlg.showModal();
  };
  dlg.addEventListener('close', () => {
    if (dlg.returnValue !== 'export') return;
    const tables = [...dlg.querySelectorAll('input[name=table]:checked')].map((c) => c.value).filter((t) => EXPORT_TABLES.includes(t));
    const sampled = $('#export-sampled').checked;
    startExports(tables, sampled);
  });
}

function startExports(tables, sampled) {
  const { S, E } = windowAbs();
  const width = plotWidth();
  let pending = tables.length;
  if (!pending) return;
  setStatus(`Exporting ${pending} table(s)…`);
  for (const table of tables) {
    const rec = { table, status: 'running', truncated: false, filename: null, rows: null };
    window.nxViewer.exports.push(rec);
    const qs = `start=${S}&end=${E}&sampled=${sampled ? 1 : 0}${sampled ? `&width=${width}` : ''}`;
    fetch(`/api/profiles/${V.enc}/export/${table}.csv?${qs}`).then(async (res) => {
      if (!res.ok) {
        let msg = `${res.status}`;
        try { msg = parseJSON(await res.text()).error || msg; } catch { /* keep status */ }
        throw new Error(msg);
      }
      rec.truncated = res.headers.get('X-Nxprof-Truncated') === 'true';
      rec.rows = res.headers.get('X-Nxprof-Rows');
      const cd = res.headers.get('Content-Disposition') || '';
      const m = cd.match(/filename="([^"]+)"/);
      rec.filename = m ? m[1] : `${V.name}_${table}_${S}_${E}.csv`;
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url; a.download = rec.filename;
      document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      rec.status = 'done';
      if (rec.truncated) notice(`${table}: the export was truncated by the server (${rec.rows ?? '?'} rows written). Zoom in or sample to get every row.`);
    }).catch((e) => {
      rec.status = 'error';
      notice(`${table}: export failed: ${e.message}`);
    }).finally(() => {
      pending--;
      setStatus(pending ? `Exporting ${pending} table(s)…` : '');
    });
  }
}

route();
