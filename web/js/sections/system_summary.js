// system_summary.js — a system profile's summary tables, side by side under the timeline
// (the #system-summary grid), from /summary (ctx.summary, fetched once by system.js): Busy
// time per thread (per framework thread, stream or NeuronCore: the union of its top-level
// events, its share of the wall time, the events counted; "per thread or stream" on a
// profile that names no device profiles) and Top operators by self time (count, self and
// total time, kernel names shortened, names.js).
import { esc, cut, fmtNs, fmtCount, fmtPct } from '../format.js';
import { shortName } from '../names.js';

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

export const busy = {
  id: 'system-busy', page: 'system', place: 'below', group: 'system-summary', title: 'Busy time per thread',
  tip: "The union of each track's top-level events: a framework thread, or a NeuronCore's runtime events; on a GPU stream, its kernels, memcpys and memsets",
  show(el, { summary, framework }) {
    if (framework) el.querySelector('h2').textContent = 'Busy time per thread or stream';
    el.querySelector('.content').innerHTML = busyHTML(summary, framework ? 'Thread or stream' : 'Thread or NeuronCore');
  },
};

export const ops = {
  id: 'system-ops', page: 'system', place: 'below', group: 'system-summary', title: 'Top operators by self time',
  show(el, { summary }) { el.querySelector('.content').innerHTML = opsHTML(summary); },
};
