// device_profiles.js — the Device Profiles section of a system profile's page, its last:
// one row per DeviceProfileList entry (ctx.info.device_profiles) with a link to its Device
// Trace Viewer (or "missing"), its LNC, and the facts /summary read from that device
// profile (ctx.summary.device_profiles: physical cores, total duration, executions, MFU,
// HFU, MBU, CC active time). Left out on a profile that names no device profiles (a
// PyTorch or JAX trace processed alone): it has no NeuronCore facts to show.
import { viewHref } from '../api.js';
import { esc, fmtCount, fmtPct, fmtSec } from '../format.js';

const HEAD = '<thead><tr><th>Name</th><th class="num" title="Logical NeuronCore (DeviceProfileList.nc_id)">LNC</th><th class="num">Physical cores</th>' +
  '<th class="num">Total duration</th><th class="num">Executions</th><th class="num" title="Model FLOPs utilisation">MFU</th>' +
  '<th class="num" title="Hardware FLOPs utilisation">HFU</th><th class="num" title="Memory bandwidth utilisation">MBU</th>' +
  '<th class="num" title="Time with a collective operation in progress">CC active time</th></tr></thead>';

function rowHTML(ref, d) {
  const name = ref.open ? `<a href="${viewHref(ref.open)}" title="${esc(ref.name)}">${esc(ref.name)}</a>` : `<span title="${esc(ref.name)}">${esc(ref.name)}</span> <span class="warn">missing</span>`;
  const err = d.error ? ` <span class="warn" title="${esc(d.error)}">⚠</span>` : '';
  return `<tr><td class="name"><span class="cut">${name}</span>${err}</td><td class="num">${esc(ref.nc_id ?? '')}</td><td class="num">${esc(fmtCount(d.physical_cores))}</td>` +
    `<td class="num">${esc(fmtSec(d.total_time_s))}</td><td class="num">${esc(fmtCount(d.executions))}</td><td class="num">${esc(fmtPct(d.mfu_estimated_percent))}</td>` +
    `<td class="num">${esc(fmtPct(d.hfu_estimated_percent))}</td><td class="num">${esc(fmtPct(d.mbu_estimated_percent))}</td>` +
    `<td class="num">${esc(fmtSec(d.cc_op_active_time_s))}</td></tr>`;
}

export const deviceProfiles = {
  id: 'system-devices', page: 'system', place: 'below', title: 'Device Profiles',
  show(el, { info, summary, framework }) {
    el.hidden = framework;
    const facts = new Map(((summary && summary.device_profiles) || []).map((d) => [d.name, d]));
    const rows = (info.device_profiles || []).map((ref) => rowHTML(ref, facts.get(ref.name) || {})).join('');
    el.querySelector('.content').innerHTML = `<table id="device-profiles">${HEAD}<tbody>` +
      `${rows || '<tr><td colspan="9" class="muted">This system profile names no device profiles.</td></tr>'}</tbody></table>`;
  },
};
