// bench/process/peers.mjs — the peers of bench/process/run.sh: how long DuckDB and Polars
// take to WRITE an nxprof profile that is already in memory (every table of PROFILE_DIR,
// same rows, Parquet with ZSTD). No other tool reads nxprof's capture format, so the fair
// comparison for `nxprof process` (which reads and decodes the capture, computes every table
// and writes it) is a peer doing only the last step of that job.
//
//   node bench/process/peers.mjs PROFILE_DIR [--runs K] [--tables all|Instruction,DmaPacket,...]
//
// Rules:
// - Tables: every file `T.parquet` in PROFILE_DIR (and in each device profile under its
//   devices/ folder) is table T; files `T_0.parquet`,
//   `T_1.parquet`, ... (a table split by nxprof) are one table T, read in index order. Names
//   starting with '.' (timeline indexes such as `.Instruction.nxtl`) and other files are
//   ignored. --tables restricts the set to the named tables (an unknown name is an error).
// - DuckDB (@duckdb/node-api): one in-memory instance; untimed, per table
//   `CREATE TABLE "T" AS SELECT * FROM read_parquet([files])`; timed, one run = every table
//   in name order `COPY "T" TO 'TMP/T.parquet' (FORMAT parquet, COMPRESSION zstd)`. The
//   instance is closed before Polars loads, so the two peers never hold the data together.
// - Polars (nodejs-polars): untimed, readParquet of every file of a table (concatenated
//   vertically when split); timed, one run = every table in name order
//   `df.writeParquet('TMP/T.parquet', {compression: 'zstd'})`. A table Polars cannot read or
//   write is reported on stderr, left out of every run and named in "polars_partial"; the
//   Polars total is then partial (a sum over the other tables).
// - Each peer's figure is the median over --runs runs (default 3) of the wall time of one
//   run; there is no warm-up run (the data is already loaded in memory, and nxprof's runs in
//   run.sh are not warmed up either). Output files are deleted, untimed, before every run.
//   Both peers use their default thread counts (printed on stderr).
// - stdout: one JSON line {"duckdb_s", "polars_s", "tables", "rows", "polars_partial"}, where
//   rows is the total row count DuckDB loaded; the detail (per-table rows and times) goes to
//   stderr. The temp directory is removed on exit, also on errors.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';

const usage = 'usage: node bench/process/peers.mjs PROFILE_DIR [--runs K] [--tables all|T1,T2,...]';
const args = process.argv.slice(2);
let profile = null, runs = 3, only = 'all';
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else if (args[i] === '--tables') only = args[++i];
  else if (!args[i]?.startsWith('--') && profile === null) profile = args[i];
  else { console.error(usage); process.exit(2); }
}
if (profile === null || !Number.isInteger(runs) || runs < 1 || !only) { console.error(usage); process.exit(2); }

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const now = () => Number(process.hrtime.bigint()) / 1e9;
const sqlStr = (s) => `'${s.replaceAll("'", "''")}'`;
const sqlId = (s) => `"${s.replaceAll('"', '""')}"`;

// name -> files in part order. A system profile's device profiles (DIR/devices/<name>/,
// docs/architecture.md "Output layout") are part of the same run: their tables are named
// "devices/<name>/T".
function listTables(dir, prefix = '', tables = new Map()) {
  const parts = new Map();
  for (const f of readdirSync(dir)) {
    if (f.startsWith('.')) continue;
    const m = /^(.+?)(?:_(\d+))?\.parquet$/.exec(f);
    if (!m) continue;
    const idx = m[2] === undefined ? -1 : Number(m[2]);
    if (!parts.has(m[1])) parts.set(m[1], []);
    parts.get(m[1]).push({ idx, path: join(dir, f) });
  }
  for (const name of [...parts.keys()].sort())
    tables.set(prefix + name, parts.get(name).sort((a, b) => a.idx - b.idx).map((p) => p.path));
  if (prefix === '' && existsSync(join(dir, 'devices')))
    for (const d of readdirSync(join(dir, 'devices')).sort())
      listTables(join(dir, 'devices', d), `devices/${d}/`, tables);
  return tables;
}
// An output file name for table key `name` (no '/').
const outFile = (name) => join(tmp, `${name.replaceAll('/', '__')}.parquet`);

let tables;
try {
  tables = listTables(profile);
} catch (e) {
  console.error(`peers: cannot list ${profile}: ${e.message}`);
  process.exit(1);
}
if (only !== 'all') {
  const want = only.split(',').filter(Boolean);
  const missing = want.filter((t) => !tables.has(t));
  if (missing.length) { console.error(`peers: no table ${missing.join(', ')} in ${profile}`); process.exit(1); }
  tables = new Map(want.map((t) => [t, tables.get(t)]));
}
if (tables.size === 0) { console.error(`peers: no .parquet tables in ${profile}`); process.exit(1); }

const tmp = mkdtempSync(join(tmpdir(), 'nxprof-peers-'));
const clearOut = () => { for (const f of readdirSync(tmp)) rmSync(join(tmp, f), { force: true }); };
const fmt = (s) => s.toFixed(3);
let exitCode = 0;
try {
  // DuckDB
  const rowsOf = new Map();
  let duckdbS;
  {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const threads = (await c.runAndReadAll(`SELECT current_setting('threads')`)).getRows()[0][0];
    for (const [name, files] of tables) {
      await c.run(`CREATE TABLE ${sqlId(name)} AS SELECT * FROM read_parquet([${files.map(sqlStr).join(', ')}])`);
      const n = (await c.runAndReadAll(`SELECT count(*)::VARCHAR FROM ${sqlId(name)}`)).getRows()[0][0];
      rowsOf.set(name, Number(n));
    }
    const totals = [];
    const per = new Map([...tables.keys()].map((t) => [t, []]));
    for (let i = 0; i < runs; i++) {
      clearOut();
      let total = 0;
      for (const name of tables.keys()) {
        const t0 = now();
        await c.run(`COPY ${sqlId(name)} TO ${sqlStr(outFile(name))} (FORMAT parquet, COMPRESSION zstd)`);
        const t = now() - t0;
        per.get(name).push(t);
        total += t;
      }
      totals.push(total);
    }
    duckdbS = median(totals);
    console.error(`peers: DuckDB (${threads} threads): ${tables.size} tables, median of ${runs} run(s), no warm-up: ${fmt(duckdbS)} s [${totals.map(fmt).join(', ')}]`);
    for (const [name, ts] of per)
      console.error(`  duckdb  ${name.padEnd(28)} ${String(rowsOf.get(name)).padStart(11)} rows ${fmt(median(ts)).padStart(9)} s`);
    c.closeSync();
    db.closeSync();
  }
  clearOut();

  // Polars
  const frames = new Map();
  const partial = [];
  for (const [name, files] of tables) {
    try {
      const dfs = files.map((f) => pl.readParquet(f));
      const df = dfs.length === 1 ? dfs[0] : pl.concat(dfs, { how: 'vertical' });
      if (df.height !== rowsOf.get(name))
        console.error(`peers: WARNING: Polars read ${df.height} rows of ${name}, DuckDB ${rowsOf.get(name)}`);
      frames.set(name, df);
    } catch (e) {
      console.error(`peers: Polars cannot read ${name}: ${String(e.message ?? e).split('\n')[0]}; left out, Polars total is partial`);
      partial.push(name);
    }
  }
  const totals = [];
  const per = new Map([...frames.keys()].map((t) => [t, []]));
  for (let i = 0; i < runs; i++) {
    clearOut();
    let total = 0;
    for (const [name, df] of frames) {
      const t0 = now();
      try {
        df.writeParquet(outFile(name), { compression: 'zstd' });
      } catch (e) {
        // A write failure is rare (Polars read it); drop the table from every run.
        console.error(`peers: Polars cannot write ${name}: ${String(e.message ?? e).split('\n')[0]}; left out, Polars total is partial`);
        partial.push(name);
        frames.delete(name);
        per.delete(name);
        i = -1; // restart the runs without that table, so every run covers the same tables
        break;
      }
      const t = now() - t0;
      per.get(name).push(t);
      total += t;
    }
    if (i === -1) { totals.length = 0; for (const ts of per.values()) ts.length = 0; continue; }
    totals.push(total);
  }
  const polarsS = totals.length ? median(totals) : 0;
  const threads = process.env.POLARS_MAX_THREADS ?? `default: ${availableParallelism()}`;
  console.error(`peers: Polars (${threads} threads): ${frames.size} tables${partial.length ? ` (partial: without ${partial.join(', ')})` : ''}, median of ${runs} run(s), no warm-up: ${fmt(polarsS)} s [${totals.map(fmt).join(', ')}]`);
  for (const [name, ts] of per)
    console.error(`  polars  ${name.padEnd(28)} ${String(frames.get(name).height).padStart(11)} rows ${fmt(median(ts)).padStart(9)} s`);

  const rows = [...rowsOf.values()].reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({ duckdb_s: Number(duckdbS.toFixed(4)), polars_s: Number(polarsS.toFixed(4)),
                               tables: tables.size, rows, polars_partial: partial }));
} catch (e) {
  console.error(`peers: ${e.stack ?? e}`);
  exitCode = 1;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(exitCode);
