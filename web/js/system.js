// system.js — a system profile's page ("/view/<system>"): the System Trace Viewer (its
// SystemProfileEvents on the shared timeline, viewer.js, with the grouping modes and the
// CPU / host memory / device HBM lanes), then its summary (wall time, busy time per
// thread or stream, top operators, /summary; before them its Devices and Steps tables,
// device_answers.js) and its Device Profiles table, one row per
// DeviceProfileList entry with the facts the summary read from that device profile and a
// link to its Device Trace Viewer. A profile that names no device profiles (a PyTorch or
// JAX trace processed alone: /api/profiles/<name> lists none) has no NeuronCore facts to
// show, so the Device Profiles table (MFU, HFU, MBU per NeuronCore) is left out and its
// summary speaks of threads and streams. The device profiles' spans
// (/api/profiles/<device>) let Event Details offer "Open in Device Trace Viewer" for a
// NeuronCore's events. Its Insights (insights.js) and, with two ranks or more, its Ranks
// section (rank_heatmap.js) come last, each from its own API answer.
import { profileInfo, summary, big, viewHref } from './api.js';
import { showDeviceAnswers } from './device_answers.js';
import { showBreakdown } from './breakdown.js';
import { $, setStatus } from './dom.js';
import { esc, cut, fmtNs, fmtCount, fmtPct, fmtSec, fmtBytes } from './format.js';
import { shortName } from './names.js';
import { startViewer } from './viewer.js';
import { showRanks } from './rank_heatmap.js';
import { showInsights } from './insights.js';

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

function busyHTML(s, what) {
  const wall = s && s.wall ? Number(s.wall.duration_ns) : 0, busy = (s && s.threads) || [];
  if (!busy.length) return '<p class="muted">No events.</p>';
  return `<table class="bars"><tr><th>${what}</th><th class="num">Busy</th><th class="num">of wall time</th><th></th><th class="num">Events</th></tr>` +
    busy.map((b) => {
      const frac = wall > 0 ? Number(b.busy_ns) / wall : 0;
      return `<tr><td>${cut(b.thread || '(none)')}</td><td class="num">${esc(fmtNs(Number(b.busy_ns)))}</td><td class="num">${esc(fmtPct(100 * frac))}</td>` +
        `<td class="barcell"><div class="gauge"><div class="bar" style="width:${(100 * Math.min(1, frac)).toFixed(1)}%"></div></div></td><td class="num">${esc(fmtCount(b.top_level_events))}</td></tr>`;
    }).join('') + '</table>';
}

function opsHTML(s) {
  const ops = (s && s.top_operators) || [];
  if (!ops.length) return '<p class="muted">No operators.</p>';
  const maxSelf = Math.max(1, ...ops.map((o) => Number(o.sum_self_ns ?? 0)));
  return '<table class="bars"><tr><th>Operator</th><th class="num">Count</th><th class="num">Self time</th><th></th><th class="num">Total time</th></tr>' +
    ops.map((o) => `<tr><td>${cut(shortName(o.name ?? '(null)'), '', o.name ?? '(null)')}</td><td class="num">${esc(fmtCount(o.count))}</td><td class="num">${esc(o.sum_self_ns === null ? '' : fmtNs(Number(o.sum_self_ns)))}</td>` +
      `<td class="barcell"><div class="bar" style="width:${(100 * Number(o.sum_self_ns ?? 0) / maxSelf).toFixed(1)}%"></div></td><td class="num">${esc(o.sum_duration_ns === null ? '' : fmtNs(Number(o.sum_duration_ns)))}</td></tr>`).join('') +
    '</table>';
}

function devicesTable(info, s) {
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
}

export async function showSystem(info) {
  $('#system-view').hidden = false;
  $('#system-name').textContent = info.name;
  $('#system-name').title = info.name;
  const devices = await deviceSpans(info);
  // The first window first: the summary reads every event (seconds on a big profile)
  // and would share the server's CPUs with it.
  await startViewer(info.name, info, $('#system-timeline'), { devices })
    .catch((e) => { const p = $('#system-timeline-error'); p.textContent = `Timeline unavailable: ${e.message}`; p.hidden = false; });
  let s = null, failed = null;
  try { s = await summary(info.name); } catch (e) { failed = e.message; }
  $('#system-facts').innerHTML = facts(info, s, failed);
  showDeviceAnswers(s);
  const framework = !(info.device_profiles || []).length;
  $('#system-busy h2').textContent = framework ? 'Busy time per thread or stream' : 'Busy time per thread';
  $('#system-busy .content').innerHTML = busyHTML(s, framework ? 'Thread or stream' : 'Thread or NeuronCore');
  $('#system-devices').hidden = framework;
  $('#system-ops .content').innerHTML = opsHTML(s);
  devicesTable(info, s);
  await Promise.all([showInsights(info.name, $('#system-insights')), showRanks(info.name),
                     showBreakdown(info.name, $('#system-breakdown'))]);
  setStatus('');
}
