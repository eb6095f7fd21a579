// source.js — the Source section of a device profile's side panel (docs/viewer.md "NKI
// source"), from /source: time per NKI file:line with count, self and total time and
// share of instruction time, sortable by any column; clicking a line searches its
// instructions (the toolbar's search, field nki_source_location, whole values) and
// selects the first one. The table's sort lives in the store (V.source); its rules
// (columns, order, a line's label and search) are source_lines.js. Hidden on a profile
// without NKI data (KernelInstructions).
import { loadSource } from '../api.js';
import { V, set, select } from '../store.js';
import { $ } from '../dom.js';
import { esc, fmtNs, fmtCount, fmtPct } from '../format.js';
import { run as runSearch } from '../search.js';
import { SOURCE_COLUMNS, sortLines, lineLabel, lineSearch } from '../source_lines.js';

function tableHTML(doc) {
  const s = V.source;
  const head = SOURCE_COLUMNS.map((c) => `<th class="${c.num ? 'num' : ''} sortable${c.key === s.sort ? ' sorted' : ''}" data-key="${c.key}" title="${esc(c.title)}">${esc(c.label)}${c.key === s.sort ? (s.asc ? ' ▲' : ' ▼') : ''}</th>`).join('');
  const index = new Map(doc.lines.map((l, i) => [l, i]));   // a row's line in the answer, for clicks
  const body = sortLines(doc.lines, s.sort, s.asc).map((l) => `<tr class="src-line" data-i="${index.get(l)}" title="${esc(`${l.file ?? '?'}:${l.line ?? '?'}: find its instructions`)}">` +
    `<td class="src-where"><a href="#"><span dir="ltr">${esc(lineLabel(l))}</span></a></td><td class="num">${esc(fmtCount(l.count))}</td><td class="num">${esc(fmtNs(Number(l.self_ns)))}</td>` +
    `<td class="num">${esc(fmtPct(l.self_percent))}</td><td class="num">${esc(fmtNs(Number(l.total_ns)))}</td></tr>`).join('');
  const more = Number(doc.total_lines) > doc.lines.length ? ` · top ${doc.lines.length} of ${fmtCount(doc.total_lines)} lines` : '';
  return `<p class="muted">NKI kernels: ${esc(fmtPct(doc.coverage_percent))} of instruction time (${esc(fmtCount(doc.attributed))} of ${esc(fmtCount(doc.instructions))} instructions)${esc(more)}</p>` +
    `<div class="source-scroll"><table class="bars source-table" id="source-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function findLine(l) {
  const s = lineSearch(l);
  $('#search-field').value = s.field;
  $('#search-q').value = s.q;
  set({ search: { field: s.field, q: s.q, match: s.match } }, 'url');
  select(null);   // search from the window's start, not from the selected event
  return runSearch('next');
}

export const source = {
  id: 'source', page: 'device', place: 'side-top', hidden: true, title: 'Source',
  tip: 'Instruction time per NKI kernel source line (KernelInstructions joined to Instruction); click a line to find its instructions',
  async show(el, { name }) {
    const box = el.querySelector('.content');
    let doc;
    try { doc = await loadSource(name, 200); } catch (e) {
      el.hidden = e.status === 404;
      box.innerHTML = `<p class="muted">Source unavailable: ${esc(e.message)}</p>`;
      return;
    }
    set({ source: { ...V.source, doc } });
    el.hidden = false;
    const paint = () => { box.innerHTML = tableHTML(doc); };
    paint();
    box.onclick = (e) => {
      const th = e.target.closest('th.sortable');
      if (th) {
        const key = th.dataset.key;
        set({ source: { ...V.source, asc: V.source.sort === key ? !V.source.asc : key === 'line', sort: key } });
        paint();
        return;
      }
      const tr = e.target.closest('tr.src-line');
      if (!tr) return;
      e.preventDefault();
      findLine(doc.lines[Number(tr.dataset.i)]);
    };
  },
};
