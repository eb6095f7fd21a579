// legend.js — the colour legend: which colour means what on screen, and the colour mode.
//
// The modes are the colour_by fields of the profile's timeline tables (colour.js has the
// rule). The legend lists, per table, the colour keys of the events in the last response
// (the keys, by name, not weighted: how much time each takes is the area selection's
// job), each with its swatch; long keys are cut in the middle (keys often share a long
// prefix, e.g. "NeuronLlamaDecoderLayer[0]/...") with the whole key on hover.
import { V, set } from './store.js';
import { colourModes, colourOf } from './colour.js';
import { $ } from './dom.js';
import { esc, middleCut } from './format.js';
import { shortName } from './names.js';

const MAX_KEYS = 24, KEY_CHARS = 40;

export function installLegend() {
  const sel = $('#colour-mode');
  const modes = colourModes(V.timelineTables.map((t) => V.defs.get(t)));
  sel.innerHTML = modes.map((m) => `<option value="${esc(m)}">${esc(m)}</option>`).join('');
  if (V.colourMode && modes.includes(V.colourMode)) sel.value = V.colourMode;
  sel.disabled = modes.length < 2;
  sel.onchange = () => set({ colourMode: sel.value }, 'colour', 'url');
}

// A key as the legend shows it: a track key without its "<group>:" prefix.
const shown = (k, table) => { const g = `${(V.defs.get(table) || {}).group}:`; return k.startsWith(g) ? k.slice(g.length) : k; };

export function updateLegend() {
  const byTable = new Map();
  for (const d of V.data.values()) {
    if (!byTable.has(d.table)) byTable.set(d.table, new Set());
    const s = byTable.get(d.table);
    for (const k of d.keys) if (k !== null) s.add(k);
  }
  let html = '';
  for (const table of V.timelineTables) {
    const keys = byTable.get(table);
    if (!keys) continue;
    if (!keys.size) {   // colour_by [] : one colour for the table
      html += `<h3>${esc(table)}</h3><ul class="legend-keys"><li><span class="swatch" style="background:${colourOf(null)}"></span><span class="key">every event</span></li></ul>`;
      continue;
    }
    const list = [...keys].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    html += `<h3>${esc(table)} <span class="muted">(${list.length})</span></h3><ul class="legend-keys">` +
      list.slice(0, MAX_KEYS).map((k) => `<li><span class="swatch" style="background:${colourOf(k)}"></span><span class="key" title="${esc(shown(k, table))}">${esc(middleCut(shortName(shown(k, table)), KEY_CHARS))}</span></li>`).join('') +
      (list.length > MAX_KEYS ? `<li class="muted">+${list.length - MAX_KEYS} more</li>` : '') + '</ul>';
  }
  $('#legend .keys').innerHTML = html || '<p class="muted">Nothing drawn.</p>';
}
