// annotate.js — the Annotations panel: the page's markers and named regions loaded when a
// profile opens, saved with the profile after every change (debounced by SAVE_DEBOUNCE_MS),
// listed with their labels and names to edit, a region added over the area selection (else
// the visible window), and Export / Import of the JSON document (docs/viewer.md
// "Annotations"). The markers and regions live in the page's store (V.markers,
// V.regions); annotations.js converts them, api.js carries them.
import { V, set, absOf, relOf, zoomTo } from './store.js';
import { loadAnnotations, saveAnnotations, parseJSON, leafName } from './api.js';
import { toDocument, fromDocument, mergeDocuments, parseImport, regionOf, nextRegionName } from './annotations.js';
import { $, notice } from './dom.js';
import { esc, fmtNs } from './format.js';

const SAVE_DEBOUNCE_MS = 400;
let timer = 0, seq = 0, installed = false;

// Where saving stands: 'loading', 'saved', 'pending' (a save is due or in flight),
// 'failed' (the last save was refused: .error), 'unreadable' (the saved file could not be
// read: nothing is saved until an import replaces it).
const status = (state, error = null) => {
  set({ annot: { state, error } });
  const el = $('#annot-status');
  if (el) el.textContent = { loading: 'loading…', saved: 'saved', pending: 'saving…', failed: 'not saved', unreadable: 'not readable' }[state];
  if (el) el.title = error || '';
};

export const currentDocument = () => toDocument(V.markers, V.regions, absOf);

// Takes document `doc` (as the server answered it) into the store and shows it.
function apply(doc) {
  const { markers, regions } = fromDocument(doc, relOf);
  set({ markers, regions });
  render();
  set({}, 'paint');
}

// Loads the profile's annotations into the page's store (on open).
export async function installAnnotations() {
  status('loading');
  wire();
  render();
  try {
    apply(await loadAnnotations(V.name));
    status('saved');
  } catch (e) {
    status('unreadable', e.message);
    notice(`The saved annotations could not be read, so changes are not saved (Import with "replace" writes a new file): ${e.message}`);
  }
}

// After the markers or regions changed: listed again (structure: false when only a label
// changed, so the field being edited keeps its focus), drawn, and saved soon.
export function annotationsChanged(structure = true) {
  if (structure) render();
  set({}, 'paint');
  if (V.annot && V.annot.state === 'unreadable') return;
  status('pending');
  clearTimeout(timer);
  timer = setTimeout(save, SAVE_DEBOUNCE_MS);
}

async function save() {
  const my = ++seq;
  try {
    await saveAnnotations(V.name, currentDocument());
    if (my === seq) status('saved');
  } catch (e) {
    if (my === seq) { status('failed', e.message); notice(`Annotations not saved: ${e.message}`); }
  }
}

function render() {
  const box = $('#annot-list');
  if (!box) return;
  const rows = [];
  V.markers.forEach((m, i) => rows.push(`<div class="annot-row" data-kind="marker" data-i="${i}">` +
    `<button class="go" type="button" title="Show this time">◆ ${esc(fmtNs(m.t))}</button>` +
    `<input class="text" value="${esc(m.label || '')}" placeholder="label" maxlength="256" aria-label="Marker label">` +
    '<button class="del" type="button" title="Remove">×</button></div>'));
  V.regions.forEach((r, i) => rows.push(`<div class="annot-row" data-kind="region" data-i="${i}">` +
    `<button class="go" type="button" title="Show this region">▭ ${esc(fmtNs(r.t0))} +${esc(fmtNs(r.t1 - r.t0))}</button>` +
    `<input class="text" value="${esc(r.name)}" placeholder="name" maxlength="256" aria-label="Region name">` +
    '<button class="del" type="button" title="Remove">×</button></div>'));
  box.innerHTML = rows.join('') || '<p class="muted">Right-click the plot to add a marker; name a region below.</p>';
  $('#region-name').placeholder = nextRegionName(V.regions);
}

// The item of a row of the list: [array, index, kind].
function itemOf(el) {
  const row = el.closest('.annot-row');
  if (!row) return null;
  const list = row.dataset.kind === 'marker' ? V.markers : V.regions;
  return [list, Number(row.dataset.i), row.dataset.kind];
}

function wire() {
  if (installed) return;
  installed = true;
  const box = $('#annot-list');
  box.addEventListener('click', (e) => {
    const it = itemOf(e.target);
    if (!it) return;
    const [list, i, kind] = it;
    if (e.target.closest('.del')) { set({ [`${kind}s`]: list.filter((_, j) => j !== i) }); annotationsChanged(); return; }
    if (!e.target.closest('.go')) return;
    const x = list[i], span = Math.max(1000, V.viewE - V.viewS);
    if (kind === 'marker') zoomTo(absOf(x.t - span / 2), absOf(x.t + span / 2));
    else { const pad = (x.t1 - x.t0) * 0.05 + 5; zoomTo(absOf(x.t0 - pad), absOf(x.t1 + pad)); }
  });
  box.addEventListener('change', (e) => {
    const it = itemOf(e.target);
    if (!it || !e.target.classList.contains('text')) return;
    const [list, i, kind] = it;
    const v = e.target.value;
    if (kind === 'region' && !v.trim()) { e.target.value = list[i].name; return; }   // a region keeps a name
    const item = kind === 'marker' ? { ...list[i], label: v } : { ...list[i], name: v };
    set({ [`${kind}s`]: list.map((x, j) => (j === i ? item : x)) });
    annotationsChanged(false);
  });
  $('#region-add').onclick = addRegion;
  $('#region-name').addEventListener('keydown', (e) => { if (e.key === 'Enter') addRegion(); });
  $('#annot-export').onclick = exportFile;
  $('#annot-import').onclick = () => $('#annot-file').click();
  $('#annot-file').onchange = importFile;
}

// A region over the area selection, else the visible window, named by the field.
function addRegion() {
  const field = $('#region-name');
  const name = field.value.trim() || nextRegionName(V.regions);
  const r = V.area ? regionOf(V.area.t0, V.area.t1, name) : regionOf(V.viewS, V.viewE, name);
  set({ regions: [...V.regions, r].sort((a, b) => a.t0 - b.t0 || a.t1 - b.t1) });
  field.value = '';
  annotationsChanged();
}

function exportFile() {
  const blob = new Blob([`${JSON.stringify(currentDocument(), null, 1)}\n`], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${leafName(V.name)}-annotations.json`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// The chosen file's annotations added to the profile's (or replacing them), saved at once;
// the store changes only when the server accepted them.
async function importFile() {
  const input = $('#annot-file'), file = input.files && input.files[0];
  input.value = '';
  if (!file) return;
  const before = { ...V.annot }, replace = $('#annot-replace').checked || before.state === 'unreadable';
  try {
    const doc = parseImport(await file.text(), parseJSON);
    clearTimeout(timer);
    const my = ++seq;
    status('pending');
    const saved = await saveAnnotations(V.name, mergeDocuments(currentDocument(), doc, replace));
    if (my === seq) status('saved');
    apply(saved);
    notice(`Imported ${(doc.markers || []).length} markers and ${(doc.regions || []).length} regions from ${file.name}`, 'ok');
  } catch (e) {
    status(before.state, before.error);
    notice(`Import of ${file.name} failed: ${e.message}`);
  }
}
