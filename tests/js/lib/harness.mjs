// harness.mjs — the set-up lines every JS test shared: where the nxprof binary and the
// test data (reference schema, real traces) is, a temporary directory removed after the file's tests, and
// a DuckDB connection (an independent Parquet reader) with a query helper.
//
//   const BIN = requireBin();                  // NXPROF_BIN, set by ctest
//   TEST_DATA                                  // NXPROF_TEST_DATA, default tests/data
//   const DIR = tempDir('nxprof-x-');          // removed by an after() hook
//   const { con, sql } = await openDuckDB();   // sql(q) -> rows as plain JS objects
//   pq(dir, 'Table')                           // read_parquet('dir/Table.parquet', file_row_number)
//   exists(path)
//   synthProcessed(BIN, DIR)                   // tiny capture synthesized and processed
import { after } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

export const TEST_DATA = process.env.NXPROF_TEST_DATA ?? fileURLToPath(new URL('../../data', import.meta.url));

export function requireBin() {
  const bin = process.env.NXPROF_BIN;
  if (!bin) throw new Error('set NXPROF_BIN to the nxprof executable (ctest does)');
  return bin;
}

export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function openDuckDB() {
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  return { con, sql: async (q) => (await con.runAndReadAll(q)).getRowObjectsJS() };
}

export const pq = (dir, t) => `read_parquet('${join(dir, `${t}.parquet`).replaceAll("'", "''")}', file_row_number = true)`;

export const exists = (p) => { try { statSync(p); return true; } catch { return false; } };

// `nxprof synth --preset tiny --seed 5` into dir/cap, processed into dir/prof: the paths, the
// capture's session directory (where the system files are) and its instance id.
export function synthProcessed(bin, dir) {
  const cap = join(dir, 'cap'), prof = join(dir, 'prof');
  execFileSync(bin, ['synth', '--preset', 'tiny', '--out', cap, '--seed', '5'], { stdio: 'pipe' });
  execFileSync(bin, ['process', cap, '--output-file', prof], { stdio: 'pipe' });
  const sessionDir = readdirSync(cap).find((n) => /_pid_\d+$/.test(n));
  return {
    cap, prof,
    instance: sessionDir.replace(/_pid_\d+$/, ''),
    sessionPath: join(cap, sessionDir, readdirSync(join(cap, sessionDir))[0]),
  };
}
