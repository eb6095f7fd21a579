// dom.js — the few DOM helpers every page uses: query, status line, notices.
import { esc } from './format.js';

export const $ = (sel) => document.querySelector(sel);

export function setStatus(text) { $('#status').textContent = text || ''; }

// A dismissable line under the toolbar; kind 'ok' for confirmations, else a warning.
export function notice(text, kind = 'warn') {
  const div = document.createElement('div');
  div.className = `notice ${kind}`;
  div.innerHTML = `<span>${esc(text)}</span><button title="Dismiss">×</button>`;
  div.querySelector('button').onclick = () => div.remove();
  $('#notices').append(div);
  return div;
}
