// The web viewer's module graph, read from the source text of web/app.js and every .js
// under web/js/, sub-folders included (no module is loaded): every import names a module
// of web/, the modules form no import cycle (a failure names one), and no module but
// js/api.js spells a URL of the API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '../../web');
// The .js files under folder `dir`, its sub-folders' included.
const modulesUnder = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? modulesUnder(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []);
const files = [join(WEB, 'app.js'), ...modulesUnder(join(WEB, 'js'))];
const sources = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
const name = (f) => relative(WEB, f);

// Without comments, so a comment that names a module or an endpoint counts for nothing.
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

// The modules file f imports (static `import ... from`, `export ... from`, bare `import '...'`
// and dynamic `import('...')` with a literal), as absolute paths.
export function importsOf(f, text) {
  const src = code(text), out = [];
  const forms = [/^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/gm, /^\s*import\s*['"]([^'"]+)['"]/gm, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const re of forms) for (const m of src.matchAll(re)) if (m[1].startsWith('.')) out.push(resolve(dirname(f), m[1]));
  return [...new Set(out)];
}

// The first import cycle of graph (Map file -> [files]), as [a, b, ..., a], or null.
export function findCycle(graph) {
  const state = new Map();   // file -> 'open' while on the path, 'done' after
  const path = [];
  const visit = (f) => {
    if (state.get(f) === 'done') return null;
    if (state.get(f) === 'open') return [...path.slice(path.indexOf(f)), f];
    state.set(f, 'open');
    path.push(f);
    for (const to of graph.get(f) || []) { const c = visit(to); if (c) return c; }
    path.pop();
    state.set(f, 'done');
    return null;
  };
  for (const f of [...graph.keys()].sort()) { const c = visit(f); if (c) return c; }
  return null;
}

const graph = new Map([...sources].map(([f, text]) => [f, importsOf(f, text)]));

test('the cycle finder finds a cycle and names it', () => {
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', []]])), null);
  assert.deepEqual(importsOf('/w/js/x.js', "// import { a } from './gone.js';\nimport { b } from './b.js';\nimport {\n  c,\n} from './c.js';\nexport { d } from './d.js';\n"),
    ['/w/js/b.js', '/w/js/c.js', '/w/js/d.js']);
});

test('every import names a module of web/', () => {
  assert.ok(graph.get(join(WEB, 'app.js')).length > 0, 'app.js imports nothing: the parser is broken');
  assert.ok(sources.has(join(WEB, 'js', 'sections', 'registry.js')), 'the modules of web/js/sections/ are not read');
  for (const [f, tos] of graph) for (const to of tos) assert.ok(sources.has(to), `${name(f)} imports ${name(to)}, which is not a module of web/`);
});

test('the modules form no import cycle', () => {
  const cycle = findCycle(graph);
  assert.equal(cycle, null, cycle ? `import cycle: ${cycle.map(name).join(' -> ')}` : '');
});

test("no module but js/api.js spells an '/api/' URL", () => {
  for (const [f, text] of sources) {
    if (name(f) === join('js', 'api.js')) continue;
    assert.ok(!/['"`]\/api\//.test(code(text)), `${name(f)} spells an /api/ URL (api.js builds them)`);
    assert.ok(!/\bfetch\s*\(/.test(code(text)), `${name(f)} calls fetch (api.js does)`);
  }
});
