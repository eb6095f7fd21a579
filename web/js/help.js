// help.js — the keyboard help overlay: `?` (or the toolbar's ?) opens it, Esc closes it.
import { $ } from './dom.js';

let installed = false;

export function openHelp() { const d = $('#help-dialog'); if (!d.open) d.showModal(); }

export function installHelp() {
  if (installed) return;
  installed = true;
  $('#help-open').onclick = openHelp;
  $('#help-close').onclick = () => $('#help-dialog').close();
}
