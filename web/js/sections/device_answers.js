// device_answers.js — a system profile's Devices and Steps tables, from the summary's
// "devices" and "steps" (GET /api/profiles/<name>/summary; the definitions are in
// docs/analyses.md): per device and rank its busy time (kernels, memcpys and memsets
// united, annotations left out), share of the rank's wall time, idle time and the time
// and count of each kind; per step its duration and the device time inside it. A step's
// row zooms the timeline to the step. A table with no rows is hidden. Two sections of the
// system page, side by side under the timeline (the #system-answers grid).
import { esc, fmtNs, fmtCount, fmtPct } from '../format.js';
import { $ } from '../dom.js';
import { zoomTo } from '../store.js';

const rankText = (r) => (r === null || r === undefined ? '' : String(r));
const ns = (v) => esc(fmtNs(Number(v)));

function devicesHTML(devices) {
  return '<table class="bars" id="device-use"><tr><th>Device</th><th class="num">Rank</th><th class="num">Busy</th>' +
    '<th class="num">of wall time</th><th></th><th class="num">Idle</th><th class="num">Kernels</th><th class="num">Kernel time</th>' +
    '<th class="num">Memcpy time</th><th class="num">Memset time</th></tr>' +
    devices.map((d) => {
      const frac = Number(d.utilization);
      return `<tr><td>${esc(d.device)}</td><td class="num">${esc(rankText(d.rank))}</td><td class="num">${ns(d.busy_ns)}</td>` +
        `<td class="num">${esc(fmtPct(100 * frac))}</td><td class="barcell"><div class="gauge"><div class="bar" style="width:${(100 * Math.min(1, frac)).toFixed(1)}%"></div></div></td>` +
        `<td class="num">${ns(d.idle_ns)}</td><td class="num">${esc(fmtCount(d.kernel_count))}</td><td class="num">${ns(d.kernel_ns)}</td>` +
        `<td class="num">${ns(d.memcpy_ns)}</td><td class="num">${ns(d.memset_ns)}</td></tr>`;
    }).join('') + '</table>';
}

// A JAX step's name ("train") does not carry its number: show it.
const stepName = (s) => (s.name.endsWith(String(s.step)) ? s.name : `${s.name} (step ${s.step})`);

function stepsHTML(steps) {
  return '<table class="bars" id="step-table"><tr><th>Step</th><th class="num">Rank</th><th class="num">Duration</th>' +
    '<th class="num">Device busy</th><th class="num">of step</th><th></th><th class="num">Kernels</th><th class="num">Kernel time</th>' +
    '<th class="num">Memcpy time</th><th class="num">Memset time</th></tr>' +
    steps.map((s, i) => {
      const dur = Number(s.duration_ns), frac = dur > 0 ? Number(s.gpu_busy_ns) / dur : 0;
      return `<tr class="step" data-i="${i}" title="Zoom the timeline to this step"><td><a href="#">${esc(stepName(s))}</a></td>` +
        `<td class="num">${esc(rankText(s.rank))}</td><td class="num">${ns(s.duration_ns)}</td><td class="num">${ns(s.gpu_busy_ns)}</td>` +
        `<td class="num">${esc(dur > 0 ? fmtPct(100 * frac) : '')}</td><td class="barcell"><div class="gauge"><div class="bar" style="width:${(100 * Math.min(1, frac)).toFixed(1)}%"></div></div></td>` +
        `<td class="num">${esc(fmtCount(s.kernel_count))}</td><td class="num">${ns(s.kernel_ns)}</td>` +
        `<td class="num">${ns(s.memcpy_ns)}</td><td class="num">${ns(s.memset_ns)}</td></tr>`;
    }).join('') + '</table>';
}

export const deviceUse = {
  id: 'system-device-use', page: 'system', place: 'below', group: 'system-answers', hidden: true, title: 'Devices',
  tip: "Per device and rank: the union of its kernel, memcpy and memset intervals (annotations left out), against the rank's trace span",
  show(el, { summary }) {
    const devices = (summary && summary.devices) || [];
    el.hidden = !devices.length;
    el.querySelector('.content').innerHTML = devices.length ? devicesHTML(devices) : '';
  },
};

export const steps = {
  id: 'system-steps', page: 'system', place: 'below', group: 'system-answers', hidden: true, title: 'Steps',
  tip: 'Each training step (ProfilerStep#N, a JAX step) and the device time inside its window; click a step to zoom the timeline to it',
  show(el, { summary }) {
    const rows = (summary && summary.steps) || [];
    el.hidden = !rows.length;
    const box = el.querySelector('.content');
    box.innerHTML = rows.length ? stepsHTML(rows) : '';
    box.onclick = (ev) => {
      const tr = ev.target.closest('tr.step');
      if (!tr) return;
      ev.preventDefault();
      const st = rows[Number(tr.dataset.i)];
      zoomTo(st.start_ns, st.end_ns);
      $('#system-timeline').scrollIntoView({ block: 'start' });
    };
  },
};
