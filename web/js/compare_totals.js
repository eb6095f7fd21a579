// compare_totals.js — the Compare page's device and step totals side by side, from
// /api/diff's "devices" and "steps" (docs/api.md): per device its busy, idle and kernel
// time and utilisation in A and B with the busy difference; per step its duration and
// GPU-busy time in A and B with the duration's difference and ratio. A side without the
// device or step shows "–". Times are shown with their unit and exact in ns on hover.
// Also the steps both profiles have, for the step picker and the stacked timelines.
import { esc, fmtNs, fmtPct } from './format.js';

const none = '<td class="num"><span class="muted">–</span></td>';

// A time cell (exact ns on hover); signed: a difference, "+" when positive.
function timeCell(v, signed = false) {
  if (v === null || v === undefined) return none;
  const n = Number(v);
  return `<td class="num" title="${esc(`${v} ns`)}">${esc((signed && n > 0 ? '+' : '') + fmtNs(n))}</td>`;
}

const rankText = (a, b) => (a === b ? (a === null ? '' : String(a)) : `${a ?? '–'} / ${b ?? '–'}`);
const pctCell = (u) => (u === null ? none : `<td class="num">${esc(fmtPct(u * 100))}</td>`);
const ratioCell = (r) => (r === null ? none : `<td class="num">${r.toFixed(3)}×</td>`);

function devicesTable(devices) {
  const head = ['Device', 'Rank', 'Busy A', 'Busy B', 'Δ busy', 'Idle A', 'Idle B', 'Kernel A', 'Kernel B', 'Util. A', 'Util. B'];
  const rows = devices.map((d) => `<tr><td>${esc(d.device)}</td><td>${esc(rankText(d.rank_a, d.rank_b))}</td>` +
    timeCell(d.busy_ns_a) + timeCell(d.busy_ns_b) + timeCell(d.busy_ns_delta, true) + timeCell(d.idle_ns_a) +
    timeCell(d.idle_ns_b) + timeCell(d.kernel_ns_a) + timeCell(d.kernel_ns_b) + pctCell(d.utilization_a) +
    pctCell(d.utilization_b) + '</tr>');
  return table('compare-devices', 'Devices', head, rows);
}

function stepsTable(steps) {
  const head = ['Step', 'Rank', 'Duration A', 'Duration B', 'Δ', 'B / A', 'GPU busy A', 'GPU busy B', 'Δ GPU busy'];
  const rows = steps.map((s) => `<tr data-step="${esc(s.name)}"><td>${esc(s.name)}</td><td>${esc(rankText(s.rank_a, s.rank_b))}</td>` +
    timeCell(s.duration_ns_a) + timeCell(s.duration_ns_b) + timeCell(s.delta_ns, true) + ratioCell(s.ratio) +
    timeCell(s.gpu_busy_ns_a) + timeCell(s.gpu_busy_ns_b) + timeCell(s.gpu_busy_ns_delta, true) + '</tr>');
  return table('compare-steps', 'Steps', head, rows);
}

function table(id, caption, head, rows) {
  if (!rows.length) return '';
  const th = head.map((h, i) => `<th class="${i > 1 ? 'num' : ''}">${esc(h)}</th>`).join('');
  return `<table id="${id}" class="compare-totals"><caption>${caption}</caption><thead><tr>${th}</tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>`;
}

// The two tables' HTML ('' when the answer has neither: device profiles).
export const totalsHTML = (answer) => devicesTable(answer.devices || []) + stepsTable(answer.steps || []);

// The steps both profiles have, by name (the first of a name kept): name -> {a, b}, each
// {start, end} as BigInt absolute ns.
export function sharedSteps(answer) {
  const out = new Map();
  for (const s of answer.steps || []) {
    if (s.duration_ns_a === null || s.duration_ns_b === null || out.has(s.name)) continue;
    const side = (start, dur) => ({ start: BigInt(start), end: BigInt(start) + BigInt(dur) });
    out.set(s.name, { a: side(s.start_ns_a, s.duration_ns_a), b: side(s.start_ns_b, s.duration_ns_b) });
  }
  return out;
}
