// search.js — the toolbar's search box: a field (the search_fields of the profile's
// timeline tables, /api/schema) and a text; Enter or › finds the next match, Shift+Enter
// or ‹ the previous one, over every event of those tables (/search, on the server, not
// just what is drawn). The match is selected and brought on screen; "k of N" tells where
// it is among all matches. The query stays in the URL (&q=..&field=..). The text matches
// as a substring; a caller that sets the store's search.match to 'exact' (the Source table's lines)
// gets whole values only, until the box is edited.
import * as API from './api.js';
import { V, set, select, windowAbs } from './store.js';
import { $ } from './dom.js';
import { esc, fmtCount } from './format.js';

let seq = 0;

function fields() {
  const out = [];
  for (const t of V.timelineTables) for (const f of (V.defs.get(t) || {}).search_fields || []) if (!out.includes(f)) out.push(f);
  return out;
}

export function installSearch() {
  const sel = $('#search-field'), box = $('#search-q');
  const list = fields();
  sel.innerHTML = list.map((f) => `<option value="${esc(f)}">${esc(f)}</option>`).join('');
  if (!V.search.field || !list.includes(V.search.field)) set({ search: { ...V.search, field: list[0] || null } });
  sel.value = V.search.field || '';
  box.value = V.search.q || '';
  $('#search').hidden = !list.length;
  sel.onchange = () => { $('#search-count').textContent = ''; set({ search: { field: sel.value, q: box.value } }, 'url'); };
  box.oninput = () => { set({ search: { field: sel.value, q: box.value } }); $('#search-count').textContent = ''; };
  box.onkeydown = (e) => {
    if (e.key === 'Enter') { e.preventDefault(); run(e.shiftKey ? 'prev' : 'next'); }
    if (e.key === 'Escape') box.blur();
  };
  $('#search-next').onclick = () => run('next');
  $('#search-prev').onclick = () => run('prev');
}

export async function run(dir) {
  const field = $('#search-field').value, q = $('#search-q').value;
  if (!q || !field) return;
  // exact only while the box still holds the text a caller set with match 'exact' (nki.js)
  const match = V.search.match === 'exact' && V.search.q === q && V.search.field === field ? 'exact' : null;
  const tables = V.timelineTables.filter((t) => ((V.defs.get(t) || {}).search_fields || []).includes(field));
  const { S, E } = windowAbs();
  let pos = { from: dir === 'prev' ? E : S };
  if (V.sel && V.selRef && V.selRef.start !== null) pos = { from: V.selRef.start, from_ord: V.sel.ordinal, from_table: V.sel.table };
  const my = ++seq;
  const count = $('#search-count');
  count.textContent = 'searching…';
  let r;
  try {
    r = await API.search(V.name, { tables, field, q, match, ...pos, dir });
  } catch (e) { if (my === seq) count.textContent = `error: ${e.message}`; return; }
  if (my !== seq) return;
  set({ search: { field, q, match, total: Number(r.total), position: r.position === null ? null : Number(r.position) } });
  if (!r.event) {
    count.textContent = Number(r.total) ? `no ${dir === 'next' ? 'later' : 'earlier'} match (${fmtCount(r.total)} in all)` : 'no match';
    set({}, 'url');
    return;
  }
  count.textContent = `${fmtCount(r.position)} of ${fmtCount(r.total)}`;
  select(r.event, true);
}
