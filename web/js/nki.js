// nki.js — NKI source attribution in an instruction's Event Details (docs/viewer.md "NKI
// source"), from the "nki" member of /event: the kernel source line and function, the
// call stack (outermost first), the loop iteration (outer loop first, "i = 0, j = 3") and
// the compiler's assembly line. The side panel's Source table is sections/source.js.
import { esc, cut } from './format.js';
import { lineLabel } from './source_lines.js';

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
