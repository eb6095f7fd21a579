// mount.js — puts a page's sections (registry.js) on the page and shows them. Each becomes
// <section id><h2 title="tip">title</h2><div class="content"></div></section>, placed in
// registry order at its place; the sections of one group share a <div id="<group>">
// (a grid in style.css), created where the group's first section goes.
import { $ } from '../dom.js';
import { esc } from '../format.js';
import { SECTIONS } from './registry.js';

export const PAGES = ['system', 'device'];

// A place: where its sections go on `page`, [parent, the child they go before (null: at the end)].
export const PLACES = {
  below: (page) => [$(`#${page}-view`), null],   // the page's main element, under the timeline
  'side-top': () => [$('#side'), $('#details')],  // the side panel, above Event Details
  'side-bottom': () => [$('#side'), null],        // the side panel, under the colour legend
};

// The inside of section s's element, before show().
export function sectionHTML(s) {
  const tip = s.tip ? ` title="${esc(s.tip)}"` : '';
  return `<h2${tip}>${esc(s.title)}</h2><div class="content">${s.hidden ? '' : '<p class="muted">Loading…</p>'}</div>`;
}

function mount(s) {
  const el = document.createElement('section');
  el.id = s.id;
  el.hidden = Boolean(s.hidden);
  el.innerHTML = sectionHTML(s);
  let [parent, before] = PLACES[s.place](s.page);
  if (s.group) {
    let box = document.getElementById(s.group);
    if (!box) { box = document.createElement('div'); box.id = s.group; parent.insertBefore(box, before); }
    [parent, before] = [box, null];
  }
  parent.insertBefore(el, before);
  return el;
}

// Puts `page`'s sections on it; returns show(ctx) (registry.js has ctx), which shows each
// and resolves once every one has its answer or its error.
export function mountSections(page) {
  const mounted = SECTIONS.filter((s) => s.page === page).map((s) => [s, mount(s)]);
  return (ctx) => Promise.all(mounted.map(async ([s, el]) => s.show(el, ctx)));
}
