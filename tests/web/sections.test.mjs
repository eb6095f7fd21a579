// The page sections' registry (web/js/sections/registry.js, docs/viewer.md "Sections"):
// every descriptor well formed (a unique id that index.html does not hard-code, a known
// page and place, a title, a show function, no unknown member), each group's sections
// side by side, every section a module of web/js/sections/ exports listed, the markup a
// section starts with, and the registry in the order, places, headings and modules of
// docs/viewer.md's table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SECTIONS } from '../../web/js/sections/registry.js';
import { PAGES, PLACES, sectionHTML } from '../../web/js/sections/mount.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIR = join(ROOT, 'web', 'js', 'sections');
const MEMBERS = new Set(['id', 'page', 'place', 'group', 'title', 'tip', 'hidden', 'show']);
const ID = /^[a-z][a-z0-9-]*$/;

// Every section a module of web/js/sections/ exports (an object with a show function),
// with the module's file name.
const exported = new Map();
for (const f of readdirSync(DIR).filter((x) => x.endsWith('.js')).sort()) {
  const m = await import(pathToFileURL(join(DIR, f)).href);
  for (const v of Object.values(m)) if (v && typeof v === 'object' && typeof v.show === 'function') exported.set(v, f);
}

test('every section is well formed', () => {
  assert.ok(SECTIONS.length > 0, 'the registry lists no section');
  for (const s of SECTIONS) {
    const what = `section ${s.id}`;
    assert.match(s.id, ID, `${what}: its id`);
    assert.ok(PAGES.includes(s.page), `${what}: page ${s.page} is none of ${PAGES.join(', ')}`);
    assert.ok(Object.hasOwn(PLACES, s.place), `${what}: place ${s.place} is none of ${Object.keys(PLACES).join(', ')}`);
    assert.ok(typeof s.title === 'string' && s.title.length > 0, `${what}: no title`);
    assert.ok(s.tip === undefined || (typeof s.tip === 'string' && s.tip.length > 0), `${what}: tip`);
    assert.ok(s.hidden === undefined || typeof s.hidden === 'boolean', `${what}: hidden`);
    assert.ok(s.group === undefined || ID.test(s.group), `${what}: group`);
    assert.equal(typeof s.show, 'function', `${what}: show is not a function`);
    for (const k of Object.keys(s)) assert.ok(MEMBERS.has(k), `${what}: unknown member ${k}`);
  }
});

test('ids and groups are unique, and index.html hard-codes none of them', () => {
  const html = readFileSync(join(ROOT, 'web', 'index.html'), 'utf8');
  const ids = [...SECTIONS.map((s) => s.id), ...new Set(SECTIONS.filter((s) => s.group).map((s) => s.group))];
  assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'ids used twice');
  for (const id of ids) assert.ok(!html.includes(`id="${id}"`), `index.html has an element #${id}: the registry builds it`);
});

test("a group's sections stand side by side, on one page and place", () => {
  const done = new Set();
  SECTIONS.forEach((s, i) => {
    const prev = SECTIONS[i - 1];
    if (!s.group || (prev && prev.group === s.group)) {
      if (s.group) assert.equal(`${s.page} ${s.place}`, `${prev.page} ${prev.place}`, `group ${s.group} spans two places`);
      return;
    }
    assert.ok(!done.has(s.group), `group ${s.group} is split by ${prev && prev.id}`);
    done.add(s.group);
  });
});

test('every section a module of web/js/sections/ exports is in the registry, once', () => {
  for (const [s, f] of exported) assert.ok(SECTIONS.includes(s), `${f} exports section ${s.id}, which registry.js does not list`);
  for (const s of SECTIONS) assert.ok(exported.has(s), `section ${s.id} is not exported by a module of web/js/sections/`);
  assert.equal(new Set(SECTIONS).size, SECTIONS.length, 'a section is listed twice');
});

test('a section starts as its heading (with its tip) over "Loading…", or hidden and empty', () => {
  assert.equal(sectionHTML({ title: 'Ops & more' }), '<h2>Ops &amp; more</h2><div class="content"><p class="muted">Loading…</p></div>');
  assert.equal(sectionHTML({ title: 'Ranks', tip: "each rank's <step>", hidden: true }),
    '<h2 title="each rank&#39;s &lt;step&gt;">Ranks</h2><div class="content"></div>');
});

test("the registry is docs/viewer.md's table of sections, in its order", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'viewer.md'), 'utf8');
  const at = doc.indexOf('\n### Sections\n');
  assert.ok(at >= 0, 'docs/viewer.md has no "### Sections"');
  const end = doc.indexOf('\n#', at + 2);   // the next heading
  const part = doc.slice(at + 1, end < 0 ? undefined : end);
  const rows = [...part.matchAll(/^\| (\w+) \| ([^|]+?) \| `([^`]+)` \| ([^|]+?) \| `([^`]+)` \|$/gm)]
    .map(([, page, place, id, title, module]) => ({ page, place, id, title, module }));
  const registry = SECTIONS.map((s) => ({ page: s.page, place: s.group ? `${s.place}, in \`#${s.group}\`` : s.place,
    id: s.id, title: s.title, module: exported.get(s) }));
  assert.deepEqual(registry, rows);
});
