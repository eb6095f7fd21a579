// The web viewer's module graph: no import cycle among web/**/*.js, and no '/api/' URL
// outside js/api.js (the only place URLs of the API are built). Imports are read from
// the source text here, independently of the modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '../../web');
const files = (dir) => readdirSync(dir, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []));
const sources = new Map(files(WEB).map((f) => [f, readFileSync(f, 'utf8')]));
const imports = (f) => [...sources.get(f).matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)]
  .map((m) => resolve(dirname(f), m[1]));

test('every import names a file of web/', () => {
  for (const f of sources.keys()) for (const to of imports(f)) assert.ok(sources.has(to), `${relative(WEB, f)} imports ${relative(WEB, to)}, not found`);
});

test('the modules form no import cycle', () => {
  const state = new Map();   // file -> 'open' while on the path, 'done' after
  const visit = (f, path) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'open') {
      const cycle = [...path.slice(path.indexOf(f)), f].map((x) => relative(WEB, x));
      assert.fail(`import cycle: ${cycle.join(' -> ')}`);
    }
    state.set(f, 'open');
    for (const to of imports(f)) visit(to, [...path, f]);
    state.set(f, 'done');
  };
  for (const f of sources.keys()) visit(f, []);
});

test("no '/api/' URL outside js/api.js", () => {
  for (const [f, text] of sources) {
    if (relative(WEB, f) === join('js', 'api.js')) continue;
    const code = text.split('\n').filter((l) => !/^\s*\/\//.test(l)).join('\n');   // comments may name endpoints
    assert.ok(!/['"`]\/api\//.test(code), `${relative(WEB, f)} spells an /api/ URL`);
  }
});
