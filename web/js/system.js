// system.js — a system profile's page ("/view/<system>"): its name and facts line (wall
// time, events, first timestamp, device profiles, size, warnings), the System Trace Viewer
// (its SystemProfileEvents on the shared timeline, viewer.js, with the grouping modes and
// the CPU / host memory / device HBM lanes), then its sections under the timeline
// (sections/registry.js: Devices, Steps, Insights, Busy time, Top operators, Breakdown,
// Ranks, Device Profiles). The first window is drawn first; then /summary, read once for
// the facts line and the sections that show it. A profile that names no device profiles
// (a PyTorch or JAX trace processed alone: /api/profiles/<name> lists none) is a
// framework profile: it has no NeuronCore facts to show. The device profiles' spans
// (/api/profiles/<device>) let Event Details offer "Open in Device Trace Viewer" for a
// NeuronCore's events.
import { profileInfo, summary, big } from './api.js';
import { $, setStatus } from './dom.js';
import { esc, fmtNs, fmtCount, fmtBytes } from './format.js';
import { startViewer } from './viewer.js';
import { mountSections } from './sections/mount.js';

async function deviceSpans(info) {
  return Promise.all((info.device_profiles || []).filter((d) => d.open).map((d) =>
    profileInfo(d.open).then((p) => ({ open: d.open, name: d.name, nc_id: d.nc_id, first: big(p.first_ts), last: big(p.last_ts) }),
      () => ({ open: d.open, name: d.name, nc_id: d.nc_id, first: null, last: null }))));
}

function facts(info, s, failed) {
  const out = [];
  if (s && s.wall) out.push(`wall time <b>${esc(fmtNs(Number(s.wall.duration_ns)))}</b>`);
  if (s) out.push(`${esc(fmtCount(s.events))} events`);
  if (info.first_ts !== null) out.push(`first timestamp ${esc(info.first_ts)} ns`);
  // A trace without absolute time (JAX's Perfetto JSON): its times count from the trace start.
  if (info.relative_time) out.push('<span class="warn" id="relative-time">times count from the trace start (the trace gives no absolute time), not from the Unix epoch</span>');
  const devices = (info.device_profiles || []).length;
  if (devices) out.push(`${esc(fmtCount(devices))} device profiles`);
  out.push(esc(fmtBytes(info.size_bytes)));
  if (info.error) out.push(`<span class="warn" title="${esc(info.error)}">⚠ ${esc(info.error)}</span>`);
  if (failed && failed !== info.error) out.push(`<span class="warn">summary unavailable: ${esc(failed)}</span>`);
  return out.join(' · ');
}

export async function showSystem(info) {
  $('#system-view').hidden = false;
  $('#system-name').textContent = info.name;
  $('#system-name').title = info.name;
  const showSections = mountSections('system');
  const devices = await deviceSpans(info);
  // The first window first: the summary reads every event (seconds on a big profile)
  // and would share the server's CPUs with it.
  await startViewer(info.name, info, $('#system-timeline'), { devices })
    .catch((e) => { const p = $('#system-timeline-error'); p.textContent = `Timeline unavailable: ${e.message}`; p.hidden = false; });
  let s = null, failed = null;
  try { s = await summary(info.name); } catch (e) { failed = e.message; }
  $('#system-facts').innerHTML = facts(info, s, failed);
  await showSections({ name: info.name, info, summary: s, framework: !(info.device_profiles || []).length });
  setStatus('');
}
