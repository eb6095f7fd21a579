// nki.js — NKI source attribution in the device viewer (docs/viewer.md "NKI source"):
//
// - in an instruction's Event Details, its "nki" member of /event: the kernel source line
//   and function, the call stack (outermost first), the loop iteration (outer loop first,
//   "i = 0, j = 3") and the compiler's assembly line;
// - the side panel's Source table (GET /source): time per NKI file:line with count, self
//   and total time and share of instruction time, sortable by any column; clicking a line
//   searches its instructions (the toolbar's search, field nki_source_location) and
//   selects the first one. The table's sort lives in the store (V.source).
import { loadSource } from './api.js';
import { V, set, select } from './store.js';
import { $ } from './dom.js';
import { esc, cut, fmtNs, fmtCount, fmtPct } from './format.js';
import { run as runSearch } from './search.js';
import { SOURCE_COLUMNS, sortLines, lineLabel, lineSearch } from './source_lines.js';

const at = (file, line) => `${file ?? '?'}:${line ?? '?'}`;
// "file.py:42" shown, the whole path on hover.
const where = (file, line) => cut(lineLabel({ file, line }), '', at(file, line));

function stackHTML(stack) {
  if (!stack.length) return '';
  const rows = stack.map((f, i) => `<li title="${esc(at(f.file, f.line))}">${'&nbsp;'.repeat(2 * i)}${esc(f.function ?? '?')} <span class="muted">${where(f.file, f.line)}</span></li>`).join('');
  return `<tr><td class="nk">stack</td><td class="v"><ol class="nki-stack">${rows}</ol></td></tr>`;
}

// The "NKI source" block of an event's details ('' when the event has none).
export function nkiHTML(ev) {
  const n = ev && ev.nki;
  if (!n) return '';
  let rows = '';
  if (n.source) {
    rows += `<tr><td class="nk">source</td><td class="v nki-loc">${where(n.source.file, n.source.line)}</td></tr>`;
    if (n.source.function) rows += `<tr><td class="nk">function</td><td class="v">${cut(n.source.function)}</td></tr>`;
  } else rows += '<tr><td class="nk">source</td><td class="v muted">not attributed to an NKI kernel line</td></tr>';
  rows += stackHTML(n.stack || []);
  if ((n.iteration || []).length) {
    const text = n.iteration.map((v) => `${v.name ?? '?'} = ${v.value ?? '?'}`).join(', ');
    const title = n.iteration.map((v) => `${v.name}: loop at ${at(v.file, v.line)}`).join('\n');
    rows += `<tr><td class="nk">iteration</td><td class="v nki-iter" title="${esc(title)}">${esc(text)}</td></tr>`;
  }
  if (n.assembly) {
    const a = n.assembly;
    rows += `<tr><td class="nk">assembly</td><td class="v nki-asm" title="instruction ${esc(a.instruction_id)}, pc ${esc(a.compiler_pc)}"><code>${esc(`${a.opcode ?? ''} ${a.operands ?? ''}`.trim())}</code></td></tr>`;
  }
  return `<h3>NKI source</h3><table class="fields nki">${rows}</table>`;
}

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

// Shows the Source section of a device profile (hidden when the profile has no NKI data).
export async function showSource(name) {
  const sec = $('#source'), box = $('#source .content');
  let doc;
  try { doc = await loadSource(name, 200); } catch (e) {
    sec.hidden = e.status === 404;
    box.innerHTML = `<p class="muted">Source unavailable: ${esc(e.message)}</p>`;
    return;
  }
  set({ source: { ...V.source, doc } });
  sec.hidden = false;
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
}
