// export.js — the Export to CSV dialog: one checkbox per timeline table the schema marks
// exportable (viewer.timelines[].export, labelled export_label), disabled when the
// profile lacks the table; Export is disabled while no enabled box is checked. Export
// sends one request per table at once (/export/<Table>.csv with the timeline's window,
// and its width when sampled), saves each file as soon as its response is complete
// (named by Content-Disposition), shows a notice when the server truncated one
// (X-Nxprof-Truncated), and, when all are done, a confirmation naming every file saved.
import { exportCSV } from './api.js';
import { V, windowAbs } from './store.js';
import { plotWidth } from './plot.js';
import { $, notice, setStatus } from './dom.js';
import { esc, fmtNs, fmtCount } from './format.js';

let installed = false;

function buildBoxes() {
  const defs = V.schema.timelines.filter((t) => t.export);
  $('#export-tables').innerHTML = defs.map((t, i) => {
    const has = V.tables.has(t.table);
    return `<label class="${has ? '' : 'disabled'}" title="${esc(t.table)}${has ? '' : ': not in this profile'}"><input type="checkbox" name="table" value="${esc(t.table)}"${has ? '' : ' disabled'}${has && i === defs.findIndex((d) => V.tables.has(d.table)) ? ' checked' : ''}> ${esc(t.export_label || t.table)}</label>`;
  }).join('') || '<p class="muted">No exportable tables.</p>';
  syncGo();
}

const chosen = () => [...document.querySelectorAll('#export-dialog input[name=table]:checked:not(:disabled)')].map((c) => c.value);
function syncGo() {
  const n = chosen().length, any = !!document.querySelector('#export-dialog input[name=table]:not(:disabled)');
  $('#export-go').disabled = n === 0;
  $('#export-none').hidden = any;
}

export function installExport() {
  const dlg = $('#export-dialog');
  buildBoxes();
  if (installed) return;
  installed = true;
  $('#export-tables').addEventListener('change', syncGo);
  $('#export-open').onclick = () => {
    const { S, E } = windowAbs();
    $('#export-range').textContent = `Window ${S} – ${E} ns (${fmtNs(Number(E - S))}), ${plotWidth()} px`;
    syncGo();
    dlg.showModal();
  };
  dlg.addEventListener('close', () => {
    if (dlg.returnValue !== 'export') return;
    startExports(chosen(), $('#export-sampled').checked);
  });
}

function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url; a.download = name;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

async function exportOne(rec, w) {
  const res = await exportCSV(V.name, rec.table, w.S, w.E, w.width);
  rec.truncated = res.headers.get('X-Nxprof-Truncated') === 'true';
  rec.rows = res.headers.get('X-Nxprof-Rows');
  const m = (res.headers.get('Content-Disposition') || '').match(/filename="([^"]+)"/);
  rec.filename = m ? m[1] : `${V.name}_${rec.table}.csv`;
  saveBlob(await res.blob(), rec.filename);
  rec.status = 'done';
  if (rec.truncated) notice(`${rec.table}: the export was truncated by the server (${rec.rows ?? '?'} rows written). Zoom in or sample to get every row.`);
}

function startExports(tables, sampled) {
  if (!tables.length) return;
  const { S, E } = windowAbs();
  const w = { S, E, width: sampled ? plotWidth() : null };
  setStatus(`Exporting ${tables.length} table(s)…`);
  const recs = tables.map((table) => ({ table, status: 'running', truncated: false, filename: null, rows: null }));
  window.nxViewer.exports.push(...recs);
  Promise.all(recs.map((rec) => exportOne(rec, w).catch((e) => { rec.status = 'error'; rec.error = e.message; notice(`${rec.table}: export failed: ${e.message}`); })))
    .then(() => {
      setStatus('');
      const done = recs.filter((r) => r.status === 'done');
      if (done.length) notice(`Downloaded ${done.map((r) => `${r.filename} (${fmtCount(r.rows)} rows)`).join(', ')}`, 'ok');
    });
}
