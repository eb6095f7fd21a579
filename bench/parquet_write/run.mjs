// bench/parquet_write/run.mjs — nxprof vs DuckDB vs Polars writing the same table to
// Parquet with ZSTD, measured in one run. Prints rows/s, file sizes and ratios.
//
//   node bench/parquet_write/run.mjs [--rows N] [--runs K] [--bin build/bench/parquet_write/bench_parquet_write]
//
// The table (13 columns, see bench_parquet_write.c) is generated once and staged as an
// uncompressed Parquet file. DuckDB loads it into an in-memory table and Polars into a
// DataFrame before timing, so every tool is timed on the write alone: DuckDB's
// COPY ... TO (FORMAT parquet, COMPRESSION zstd), Polars' writeParquet({compression:'zstd'}),
// and nxprof's writer with its defaults (timed inside the C program, after generation).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const rows = Number(opt('--rows', 10_000_000));
const runs = Number(opt('--runs', 3));
const bin = opt('--bin', 'build/bench/parquet_write/bench_parquet_write');
const dir = mkdtempSync(join(tmpdir(), 'nxprof-bench-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => Number(process.hrtime.bigint()) / 1e9;

try {
  const staging = join(dir, 'staging.parquet');
  execFileSync(bin, ['staging', staging, String(rows)], { stdio: ['ignore', 'ignore', 'inherit'] });

  const results = [];
  {
    const times = []; let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const out = join(dir, 'nxprof.parquet');
      const r = JSON.parse(execFileSync(bin, ['write', out, String(rows)], { encoding: 'utf8' }));
      times.push(r.seconds); bytes = r.bytes;
    }
    results.push({ tool: 'nxprof', seconds: median(times), bytes });
  }
  {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`CREATE TABLE t AS SELECT * FROM '${staging}'`);
    const times = []; const out = join(dir, 'duckdb.parquet');
    for (let i = 0; i < runs; i++) {
      const t0 = now();
      await c.run(`COPY t TO '${out}' (FORMAT parquet, COMPRESSION zstd)`);
      times.push(now() - t0);
    }
    results.push({ tool: 'duckdb', seconds: median(times), bytes: statSync(out).size });
    c.closeSync?.();
  }
  {
    const df = pl.readParquet(staging);
    const times = []; const out = join(dir, 'polars.parquet');
    for (let i = 0; i < runs; i++) {
      const t0 = now();
      df.writeParquet(out, { compression: 'zstd' });
      times.push(now() - t0);
    }
    results.push({ tool: 'polars', seconds: median(times), bytes: statSync(out).size });
  }

  const rate = (r) => rows / r.seconds;
  const ours = results[0];
  const peers = results.slice(1);
  const fastest = peers.reduce((a, b) => (rate(a) > rate(b) ? a : b));
  const polars = results.find((r) => r.tool === 'polars');
  console.log(`parquet_write: ${rows} rows x 13 columns, ZSTD, median of ${runs} runs`);
  console.log('tool     rows/s        MB       seconds');
  for (const r of results)
    console.log(`${r.tool.padEnd(8)} ${(rate(r) / 1e6).toFixed(2).padStart(7)}M ${(r.bytes / 1e6).toFixed(1).padStart(9)} ${r.seconds.toFixed(3).padStart(9)}`);
  console.log(`speed ratio nxprof / fastest peer (${fastest.tool}): ${(rate(ours) / rate(fastest)).toFixed(2)}x`);
  for (const p of peers) console.log(`speed ratio nxprof / ${p.tool}: ${(rate(ours) / rate(p)).toFixed(2)}x`);
  console.log(`size ratio nxprof / polars: ${(ours.bytes / polars.bytes).toFixed(3)}x`);
  for (const p of peers) console.log(`size ratio nxprof / ${p.tool}: ${(ours.bytes / p.bytes).toFixed(3)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
