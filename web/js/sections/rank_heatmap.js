// rank_heatmap.js — the Ranks section of a system profile's page, from
// /api/profiles/<name>/ranks (query/rank_stats.h): a heat map of ranks x steps whose
// cell colour is the rank's step duration relative to the step's median (blue: faster,
// red: slower, full colour at 20 % off), the skew table per step, and the latest
// collectives. Hovering a cell shows its values; clicking it zooms the timeline to that
// rank's step. Shown only when the profile has two ranks or more.
import { ranks as loadRanks, big } from '../api.js';
import { $ } from '../dom.js';
import { esc, fmtNs } from '../format.js';
import { heatColour } from '../colour.js';
import { set, relOf } from '../store.js';

function heatHTML(doc) {
  const head = doc.steps.map((s) => `<th class="num">${esc(s.step)}</th>`).join('');
  const rows = doc.ranks.map((r) => '<tr>' + `<th>rank ${esc(r)}</th>` + doc.steps.map((s) => {
    const d = s.durations_ns[r];
    if (d === undefined) return '<td class="heat none" title="no such step on this rank"></td>';
    const ns = Number(d), med = Number(s.median_ns);
    const tip = `rank ${r}, step ${s.step}: ${fmtNs(ns)} (${med > 0 ? (ns / med).toFixed(3) : '-'} × the median ${fmtNs(med)})`;
    return `<td class="heat" data-rank="${esc(r)}" data-step="${esc(s.step)}" data-ns="${esc(d)}" data-start="${esc(s.starts_ns[r])}"` +
      ` style="background:${heatColour(ns, med)}" title="${esc(tip)}">${esc(fmtNs(ns, 1))}</td>`;
  }).join('') + '</tr>').join('');
  return `<table id="rank-heatmap"><tr><th>step</th>${head}</tr>${rows}</table>`;
}

function skewHTML(doc) {
  return '<table class="bars" id="rank-skew"><tr><th>Step</th><th class="num">Skew</th><th class="num">Max / median</th>' +
    '<th class="num">Slowest</th><th class="num">Fastest</th><th class="num">Straggler</th><th class="num">Lateness</th></tr>' +
    doc.steps.map((s) => `<tr><td>${esc(s.step)}</td><td class="num">${esc(fmtNs(Number(s.skew_ns)))}</td>` +
      `<td class="num">${esc(s.max_over_median.toFixed(3))}</td><td class="num">${esc(s.slowest_rank)}</td><td class="num">${esc(s.fastest_rank)}</td>` +
      `<td class="num">${esc(s.straggler_rank ?? '-')}</td><td class="num">${esc(s.straggler_rank === null ? '' : fmtNs(Number(s.max_lateness_ns)))}</td></tr>`).join('') +
    '</table>';
}

function stragglersHTML(doc) {
  const top = [...doc.stragglers].sort((a, b) => Number(b.lateness_ns) - Number(a.lateness_ns)).slice(0, 10);
  if (!top.length) return '<p class="muted">No collective was seen on two ranks.</p>';
  return `<h3>Latest collectives <span class="muted">(${top.length} of ${doc.stragglers.length})</span></h3>` +
    '<table class="bars" id="rank-stragglers"><tr><th>Step</th><th>Collective</th><th class="num">#</th><th class="num">Straggler</th>' +
    '<th class="num">Lateness</th><th class="num">vs median</th></tr>' +
    top.map((g) => `<tr><td>${esc(g.step)}</td><td><span class="cut" title="${esc(g.name)}">${esc(g.name)}</span></td><td class="num">${esc(g.occurrence)}</td>` +
      `<td class="num">${esc(g.straggler_rank)}</td><td class="num">${esc(fmtNs(Number(g.lateness_ns)))}</td><td class="num">${esc(fmtNs(Number(g.lateness_vs_median_ns)))}</td></tr>`).join('') +
    '</table>';
}

// Zooms the timeline to the clicked cell's step on its rank.
function zoomTo(cell) {
  const start = big(cell.dataset.start), ns = big(cell.dataset.ns);
  set({ viewS: relOf(start), viewE: relOf(start + ns) }, 'window');
  $('#system-timeline').scrollIntoView({ block: 'nearest' });
}

export const ranks = {
  id: 'system-ranks', page: 'system', place: 'below', hidden: true, title: 'Ranks',
  tip: "Each rank's step durations against the step's median, and the ranks that start collectives last",
  async show(el, { name }) {
    let doc;
    try { doc = await loadRanks(name); } catch { el.hidden = true; return; }
    if (doc.ranks.length < 2) { el.hidden = true; return; }
    el.hidden = false;
    el.querySelector('.content').innerHTML = (doc.steps.length ? heatHTML(doc) + skewHTML(doc) : '<p class="muted">No steps.</p>') + stragglersHTML(doc);
    for (const cell of el.querySelectorAll('td.heat[data-start]')) cell.onclick = () => zoomTo(cell);
  },
};
