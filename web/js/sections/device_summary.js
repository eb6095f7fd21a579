// device_summary.js — the Summary section at the foot of a device profile's side panel,
// from /summary: the profile's Summary row (its first 8 fields, the rest folded, each by
// its catalogue unit) and its top 10 OpcodeSummary rows by instruction time, with bars.
import { summary } from '../api.js';
import { esc, cut, fmtNs, fmtCount } from '../format.js';
import { fieldRows } from '../panels.js';

function summaryHTML(s) {
  let html = '';
  if (s.summary) {
    const entries = Object.entries(s.summary).filter(([, v]) => v !== null).map(([name, value]) => ({ name, value }));
    html += `<table class="fields">${fieldRows('Summary', entries.slice(0, 8))}</table>`;
    if (entries.length > 8) html += `<details><summary>all ${entries.length} fields</summary><table class="fields">${fieldRows('Summary', entries.slice(8))}</table></details>`;
  } else html += '<p class="muted">No Summary table.</p>';
  const os = s.opcode_summary;
  if (os && os.rows.length) {
    const ci = (n) => os.columns.indexOf(n);
    const iE = ci('engine'), iO = ci('opcode'), iT = ci('instruction_time_ns'), iC = ci('instruction_count');
    const max = Math.max(...os.rows.map((r) => Number(r[iT] ?? 0)), 1);
    html += `<h3>Top opcodes by instruction time <span class="muted">(${os.rows.length} of ${os.total_rows})</span></h3><table class="bars">`;
    for (const r of os.rows) {
      const v = Number(r[iT] ?? 0);
      html += `<tr><td>${cut(r[iE] ?? '')}</td><td>${cut(r[iO] ?? '')}</td><td class="barcell"><div class="bar" style="width:${(100 * v / max).toFixed(1)}%" title="${esc(fmtNs(v))}, ${esc(fmtCount(r[iC]))} instructions"></div></td><td class="num">${esc(fmtNs(v))}</td></tr>`;
    }
    html += '</table>';
  }
  return html;
}

export const deviceSummary = {
  id: 'summary', page: 'device', place: 'side-bottom', title: 'Summary',
  async show(el, { name }) {
    const box = el.querySelector('.content');
    try { box.innerHTML = summaryHTML(await summary(name, 10)); } catch (e) { box.textContent = `Summary unavailable: ${e.message}`; }
  },
};
