// breakdown.js — the "Breakdown" section of a system profile's page and of a device
// profile's, under the timeline, from /api/profiles/<name>/breakdown (docs/api.md; the
// definitions in docs/analyses.md). On a system profile: where each device's time went,
// per rank and per step. One stacked bar per entry splits its window into compute,
// communication (not under compute), memory and idle, which add up to the window; then
// idle time by cause, kernel classes, launch statistics with the verdict, memcpy/memset
// bandwidth and the top kernels with their spread across ranks. On a device profile: the
// NeuronCore's compute, collectives, DMA and idle, and its engines. Every figure is the
// API's; each cell keeps the exact value in data-v for tests and titles.
import { breakdown } from '../api.js';
import { esc, cut, fmtNs, fmtCount, fmtPct, fmtBytes } from '../format.js';
import { shortName } from '../names.js';

const PARTS = [
  ['compute_ns', 'Compute', '#2563eb'],
  ['communication_ns', 'Communication', '#d97706'],
  ['memory_ns', 'Memory', '#059669'],
  ['idle_ns', 'Idle', '#d1d5db'],
];

const label = (e) => `${e.device}${e.rank === null ? '' : ` · rank ${e.rank}`} · ${e.step === null ? 'whole trace' : `step ${e.step}`}`;

// A cell with the exact value v (ns, a count) and its text.
const td = (v, text, key) => `<td class="num" data-k="${key}" data-v="${esc(String(v))}" title="${esc(String(v))}">${esc(text)}</td>`;
const ns = (v, key) => td(v, fmtNs(Number(v)), key);
const sp = (v, text, key) => `<span data-k="${key}" data-v="${esc(String(v))}" title="${esc(String(v))}">${esc(text)}</span>`;

function bar(t) {
  const w = Number(t.window_ns) || 1;
  return '<div class="bd-bar">' + PARTS.map(([k, name, colour]) =>
    `<span style="width:${(100 * Number(t[k]) / w).toFixed(3)}%;background:${colour}" title="${esc(`${name} ${fmtNs(Number(t[k]))}`)}"></span>`).join('') + '</div>';
}

function temporalHTML(b) {
  const legend = PARTS.map(([, name, c]) => `<span class="bd-key"><i style="background:${c}"></i>${name}</span>`).join(' ');
  return `<p class="bd-legend">${legend}</p><table class="bars bd-table" id="bd-temporal"><tr><th>Device · rank · step</th><th class="num">Window</th><th class="bd-barcell"></th>` +
    PARTS.map(([, n]) => `<th class="num">${n}</th>`).join('') + '<th class="num" title="Communication under compute, as a share of all communication time">Comm. overlap</th></tr>' +
    b.entries.map((e, i) => `<tr data-entry="${i}"><td>${esc(label(e))}</td>${ns(e.temporal.window_ns, 'window_ns')}<td class="bd-barcell">${bar(e.temporal)}</td>` +
      PARTS.map(([k]) => ns(e.temporal[k], k)).join('') +
      td(e.temporal.overlap_pct ?? '', e.temporal.overlap_pct === null ? '—' : fmtPct(e.temporal.overlap_pct), 'overlap_pct') + '</tr>').join('') + '</table>';
}

function idleHTML(b) {
  const i = (e, k) => ns(e.idle[`${k}_ns`], `${k}_ns`) + td(e.idle[`${k}_count`], fmtCount(e.idle[`${k}_count`]), `${k}_count`);
  return '<table class="bars bd-table" id="bd-idle"><tr><th>Device · rank · step</th>' +
    `<th class="num" title="No work queued: the next kernel was launched after the gap began">Host wait</th><th class="num">gaps</th>` +
    `<th class="num" title="Work queued, gap under ${esc(fmtNs(Number(b.thresholds.kernel_wait_ns)))}">Kernel wait</th><th class="num">gaps</th><th class="num">Other</th><th class="num">gaps</th></tr>` +
    b.entries.map((e, n) => `<tr data-entry="${n}"><td>${esc(label(e))}</td>${i(e, 'host_wait')}${i(e, 'kernel_wait')}${i(e, 'other')}</tr>`).join('') + '</table>';
}

function launchHTML(b) {
  const c = (e, k) => td(e.classes[k].count, fmtCount(e.classes[k].count), `${k}_count`) + ns(e.classes[k].total_ns, `${k}_total_ns`);
  return '<table class="bars bd-table" id="bd-launch"><tr><th>Device · rank · step</th><th class="num">Compute kernels</th><th class="num">time</th>' +
    '<th class="num">Comm. kernels</th><th class="num">time</th><th class="num">Memcpy/memset</th><th class="num">time</th>' +
    '<th class="num" title="Kernel start − launch (runtime call) start">Launch delay median</th><th class="num">p95</th><th class="num">max</th>' +
    `<th class="num">outliers</th><th class="num" title="Kernels under ${esc(fmtNs(Number(b.thresholds.short_kernel_ns)))}">short kernels</th><th>Verdict</th></tr>` +
    b.entries.map((e, n) => {
      const l = e.launch;
      return `<tr data-entry="${n}"><td>${esc(label(e))}</td>${c(e, 'compute')}${c(e, 'communication')}${c(e, 'memory')}` +
        ns(l.median_ns, 'median_ns') + ns(l.p95_ns, 'p95_ns') + ns(l.max_ns, 'max_ns') +
        td(l.outliers, fmtCount(l.outliers), 'outliers') + td(l.short_kernels, `${fmtCount(l.short_kernels)} of ${fmtCount(l.kernels)}`, 'short_kernels') +
        `<td data-k="verdict" data-v="${esc(l.verdict)}" class="bd-verdict bd-${esc(l.verdict)}">${esc(l.verdict)}</td></tr>`;
    }).join('') + '</table>';
}

function transfersHTML(b) {
  const rows = b.entries.flatMap((e, n) => e.transfers.map((x) => `<tr data-entry="${n}"><td>${esc(label(e))}</td><td>${esc(x.kind)}</td>` +
    td(x.count, fmtCount(x.count), 'count') + td(x.bytes, fmtBytes(Number(x.bytes)), 'bytes') + ns(x.duration_ns, 'duration_ns') +
    td(x.gbps, `${Number(x.gbps).toFixed(3)} GB/s`, 'gbps') + '</tr>'));
  if (!rows.length) return '<p class="muted">No memcpy or memset.</p>';
  return '<table class="bars bd-table" id="bd-transfers"><tr><th>Device · rank · step</th><th>Kind</th><th class="num">Count</th><th class="num">Bytes</th><th class="num">Time</th><th class="num">Bandwidth</th></tr>' +
    rows.join('') + '</table>';
}

function kernelsHTML(b) {
  if (!b.kernels.length) return '<p class="muted">No kernels.</p>';
  const spread = b.n_ranks > 1;
  return '<table class="bars bd-table" id="bd-kernels"><tr><th>Kernel</th><th>Class</th><th class="num">Count</th><th class="num">Total</th><th class="num">Mean</th><th class="num">Min</th><th class="num">Max</th>' +
    (spread ? `<th class="num" title="Each rank's total over ${b.n_ranks} ranks">Rank min</th><th class="num">Rank max</th><th class="num">Rank mean</th>` : '') + '</tr>' +
    b.kernels.map((k) => `<tr><td>${cut(shortName(k.name), '', k.name)}</td><td>${esc(k.class)}</td>${td(k.count, fmtCount(k.count), 'count')}` +
      ns(k.total_ns, 'total_ns') + ns(k.mean_ns, 'mean_ns') + ns(k.min_ns, 'min_ns') + ns(k.max_ns, 'max_ns') +
      (spread ? ns(k.rank_min_ns, 'rank_min_ns') + ns(k.rank_max_ns, 'rank_max_ns') + ns(k.rank_mean_ns, 'rank_mean_ns') : '') + '</tr>').join('') + '</table>';
}

function systemHTML(b) {
  if (!b.entries.length) return '<p class="muted">No kernel, memcpy or memset on a device.</p>';
  return `<h3>Time per device, rank and step</h3>${temporalHTML(b)}<h3>Idle time by cause</h3>${idleHTML(b)}` +
    `<h3>Kernel classes and launches</h3>${launchHTML(b)}<h3>Memcpy and memset</h3>${transfersHTML(b)}` +
    `<h3>Top kernels by total time</h3>${kernelsHTML(b)}`;
}

// A NeuronCore's device profile (engine_breakdown.h): one stacked bar of compute
// (instructions) > collectives (CcOp) > DMA (DmaPacket) > idle over the profile's window,
// collectives under compute, DMA bytes and bandwidth, and each engine's busy and idle time.
function engineHTML(b) {
  const t = { window_ns: b.window_ns, compute_ns: b.compute_ns, communication_ns: b.communication_ns, memory_ns: b.memory_ns, idle_ns: b.idle_ns };
  const names = ['Compute', 'Collectives', 'DMA', 'Idle'];
  const legend = PARTS.map(([, , c], i) => `<span class="bd-key"><i style="background:${c}"></i>${names[i]}</span>`).join(' ');
  const w = Number(b.window_ns) || 1;
  return `<p class="bd-legend">${legend}</p><table class="bars bd-table" id="bd-device"><tr><th class="num">Window</th><th class="bd-barcell"></th>` +
    names.map((n) => `<th class="num">${n}</th>`).join('') + '<th class="num" title="Collective time under compute, as a share of all collective time">CC overlap</th></tr>' +
    `<tr>${ns(b.window_ns, 'window_ns')}<td class="bd-barcell">${bar(t)}</td>${PARTS.map(([k]) => ns(b[k], k)).join('')}` +
    `${td(b.overlap_pct ?? '', b.overlap_pct === null ? '—' : fmtPct(b.overlap_pct), 'overlap_pct')}</tr></table>` +
    `<p class="facts" id="bd-dma">CcOp: ${sp(b.cc_count, fmtCount(b.cc_count), 'cc_count')} rows, ${sp(b.cc_ns, fmtNs(Number(b.cc_ns)), 'cc_ns')} · ` +
    `DMA: ${sp(b.dma_count, fmtCount(b.dma_count), 'dma_count')} packets, ${sp(b.dma_bytes, fmtBytes(Number(b.dma_bytes)), 'dma_bytes')} in ` +
    `${sp(b.dma_busy_ns, fmtNs(Number(b.dma_busy_ns)), 'dma_busy_ns')} busy, ${sp(b.dma_gbps, `${Number(b.dma_gbps).toFixed(3)} GB/s`, 'dma_gbps')}</p>` +
    '<table class="bars bd-table" id="bd-engines"><tr><th>Engine</th><th class="num">Instructions</th><th class="num">Busy</th><th class="num">of window</th><th class="bd-barcell"></th><th class="num">Idle</th></tr>' +
    b.engines.map((e) => `<tr><td>${esc(e.engine)}</td>${td(e.count, fmtCount(e.count), 'count')}${ns(e.busy_ns, 'busy_ns')}` +
      `<td class="num">${esc(fmtPct(100 * Number(e.busy_ns) / w))}</td><td class="bd-barcell"><div class="gauge"><div class="bar" style="width:${(100 * Number(e.busy_ns) / w).toFixed(3)}%"></div></div></td>${ns(e.idle_ns, 'idle_ns')}</tr>`).join('') +
    '</table>';
}

// Fills section `el` with html(answer) of profile `name`'s /breakdown (top: its top list's
// rows, null: the server's default), or the error.
async function showAnswer(el, name, top, html) {
  const box = el.querySelector('.content');
  try {
    box.innerHTML = html(await breakdown(name, top));
  } catch (e) {
    box.innerHTML = `<p class="warn">Breakdown unavailable: ${esc(e.message)}</p>`;
  }
}

export const systemBreakdown = {
  id: 'system-breakdown', page: 'system', place: 'below', title: 'Breakdown',
  tip: 'Per device, rank and step: compute, communication, memory and idle time, idle causes, launches (docs/analyses.md#breakdowns-per-rank-and-per-step)',
  show: (el, { name }) => showAnswer(el, name, 10, systemHTML),
};

export const deviceBreakdown = {
  id: 'device-breakdown', page: 'device', place: 'below', title: 'Breakdown',
  tip: 'Compute, collectives, DMA and idle time; engines busy and idle (docs/analyses.md#breakdowns-per-rank-and-per-step)',
  show: (el, { name }) => showAnswer(el, name, null, engineHTML),
};
