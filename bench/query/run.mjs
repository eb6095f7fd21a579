// bench/query/run.mjs — nxprof's window queries against DuckDB running the same in SQL over
// the same Parquet files, measured in one run (issue 6 item 7):
//   (a) the sampled 1920-px query of all Instruction tracks at zoom 100%, 1% and 0.01% of
//       the profile (the window is centred on the middle of the profile);
//   (b) an unsampled CSV export of about 1M Instruction rows (from the profile's start).
//
//   node bench/query/run.mjs [--events 10000000] [--profile DIR] [--runs 7] [--width 1920]
//                            [--csv-rows 1000000] [--bin build] [--dir /tmp/nxprof-bench-query]
//                            [--keep] [--only sampled|csv]
//
// Without --profile it synthesizes a llama-layer capture of --events device records
// (seed 7) and processes it into DIR/profile (reused on the next run when it exists;
// --keep leaves it there, otherwise DIR is removed at the end). --events 100000000 is the
// issue's size; the default 10M fits a 2-core machine in a few minutes. --only sampled or
// --only csv runs one half (the other half's rows are left out of the table).
//
// Ours (a): build/bench/query/bench_query, which calls nx_sampled_pass exactly as
// `nxprof export-csv`'s first pass and the server's timeline do and times it in-process:
// from the table's timeline index when the profile has one (the median is over the runs
// after the first, with the index mapped, as a server keeps it; the first run is
// reported too), and again with NXPROF_NO_TIMELINE_INDEX=1 (the page-pruned scan of
// the timing and track columns on two threads), without writing CSV. DuckDB (a): the documented rule in SQL, per track and bucket the
// longest event, ties by earliest start, then by file row:
//   bucket = (greatest(start_ts, S) - S) * W // (E - S + 1)
//   QUALIFY row_number() OVER (PARTITION BY track, bucket ORDER BY dur DESC, start_ts, row) = 1
// with the track coalesce(nullif(timeline_track, ''), engine, ''), over the window rule
// end_ts >= S AND start_ts <= E. Both return every kept event; the script checks that the
// row counts agree.
// (b): `nxprof export-csv --no-sample --tables Instruction` into a tmpfs directory (process
// start to exit, CSV written) against DuckDB's COPY (SELECT track, * ... in file order) TO
// 'x.csv' (HEADER) on tmpfs.
// Timings are medians of --runs runs after one warm-up run each (files in the page cache).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const events = Number(opt('--events', 10_000_000));
const runs = Number(opt('--runs', 7));
const width = Number(opt('--width', 1920));
const csvRows = Number(opt('--csv-rows', 1_000_000));
const build = opt('--bin', 'build');
const dir = opt('--dir', '/tmp/nxprof-bench-query');
const keep = args.includes('--keep') || args.includes('--profile');
const only = opt('--only', null);   // one half of the benchmark: 'sampled' (a) or 'csv' (b)
if (only && only !== 'sampled' && only !== 'csv') { console.error('bench/query: --only takes sampled or csv'); process.exit(2); }
const nxprof = join(build, 'nxprof');
const benchQuery = join(build, 'bench/query/bench_query');
const tmpfs = existsSync('/dev/shm') ? '/dev/shm' : dir;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => Number(process.hrtime.bigint()) / 1e9;
const ms = (s) => (s * 1000).toFixed(s < 0.1 ? 2 : 1);

for (const p of [nxprof, benchQuery])
  if (!existsSync(p)) { console.error(`bench/query: ${p} is not built (run make, or pass --bin)`); process.exit(1); }

let profile = opt('--profile', null);
if (!profile) {
  profile = join(dir, 'profile');
  if (!existsSync(join(profile, 'Instruction.parquet')) && !existsSync(join(profile, 'Instruction_0.parquet'))) {
    mkdirSync(dir, { recursive: true });
    const cap = join(dir, 'capture');
    rmSync(cap, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
    console.error(`bench/query: synthesizing ${events} events and processing them (once)...`);
    execFileSync(nxprof, ['synth', '--preset', 'llama-layer', '--events', String(events), '--seed', '7', '--out', cap],
                 { stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync(nxprof, ['process', cap, '--output-file', profile], { stdio: ['ignore', 'ignore', 'inherit'] });
    rmSync(cap, { recursive: true, force: true });
  }
}

// The Instruction files in table order (profile_table.h: T.parquet, or T_0..T_k).
const files = readdirSync(profile).filter((f) => /^Instruction(_(0|[1-9][0-9]*))?\.parquet$/.test(f))
  .map((f) => ({ f, i: f === 'Instruction.parquet' ? 0 : Number(f.slice(12, -8)) }))
  .sort((a, b) => a.i - b.i).map(({ f }) => join(profile, f));
const fileList = `[${files.map((f) => `'${f}'`).join(',')}]`;
const fileIndex = `CASE filename ${files.map((f, i) => `WHEN '${f}' THEN ${i}`).join(' ')} END`;
const track = `coalesce(nullif(timeline_track, ''), engine, '')`;

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const one = async (sql) => (await c.runAndReadAll(sql)).getRows()[0];

const [lo, hi, total] = (await one(
  `SELECT min(start_ts)::VARCHAR, max(end_ts)::VARCHAR, count(*)::VARCHAR FROM read_parquet(${fileList})`)).map(BigInt);
const span = hi - lo + 1n;
const mid = lo + span / 2n;
console.log(`profile ${profile}: ${total} Instruction rows in ${files.length} file(s), ${Number(span) / 1e6} ms`);

const results = [];
for (const [label, frac] of only === 'csv' ? [] : [['100%', 1n], ['1%', 100n], ['0.01%', 10000n]]) {
  const len = span / frac;
  const S = frac === 1n ? lo : mid - len / 2n;
  const E = frac === 1n ? hi : S + len - 1n;
  // Ours: one process, warm-up + runs, timed inside.
  const r = JSON.parse(execFileSync(benchQuery, [profile, 'Instruction', String(S), String(E), String(width), String(runs + 1)],
                                    { encoding: 'utf8' }));
  const ours = median(r.seconds.slice(1));
  // The same pass forced to scan the Parquet files (no timeline index), fewer runs: at
  // full zoom on 100M records it takes seconds. Both must keep the same events.
  const scanRuns = Math.min(runs, 2);
  const sc = JSON.parse(execFileSync(benchQuery, [profile, 'Instruction', String(S), String(E), String(width), String(scanRuns + 1)],
                                     { encoding: 'utf8', env: { ...process.env, NXPROF_NO_TIMELINE_INDEX: '1' } }));
  if (sc.checksum !== r.checksum) console.log(`WARNING: zoom ${label}: the index and the scan kept different events`);
  const sql = `SELECT track, start_ts, end_ts FROM (
      SELECT ${track} AS track, start_ts, end_ts, ${fileIndex} AS fi, file_row_number AS rn,
             (greatest(start_ts, ${S})::HUGEINT - ${S}) * ${width} // ${E - S + 1n} AS bucket
      FROM read_parquet(${fileList}, filename = true, file_row_number = true)
      WHERE end_ts >= ${S} AND start_ts <= ${E})
    QUALIFY row_number() OVER (PARTITION BY track, bucket ORDER BY end_ts - start_ts DESC, start_ts, fi, rn) = 1`;
  const times = []; let rows = 0;
  for (let i = 0; i <= runs; i++) {
    const t0 = now();
    const res = await c.runAndReadAll(sql);
    const t = now() - t0;
    rows = res.currentRowCount;
    if (i) times.push(t);
  }
  const duck = median(times);
  results.push({ what: `sampled ${width} px, zoom ${label}`, rows_in_window: r.rows_in_window, rows: r.samples,
                 duck_rows: rows, ours, duck, index: r.index, cold: r.seconds[0], scan: median(sc.seconds.slice(1)),
                 pages: `${sc.pages_read}/${sc.pages_total}` });
  if (rows !== r.samples) console.log(`WARNING: zoom ${label}: nxprof kept ${r.samples} events, DuckDB ${rows}`);
}

// (b) unsampled CSV export of about csvRows rows from the profile's start.
if (only !== 'sampled') {
  const n = BigInt(Math.min(csvRows, Number(total)));
  const [E] = (await one(`SELECT start_ts::VARCHAR FROM read_parquet(${fileList}) ORDER BY start_ts LIMIT 1 OFFSET ${n - 1n}`)).map(BigInt);
  const S = lo;
  const out = join(tmpfs, `nxprof-bench-query-${process.pid}`);
  mkdirSync(out, { recursive: true });
  try {
    const oursT = []; let rows = 0;
    for (let i = 0; i <= runs; i++) {
      const t0 = now();
      execFileSync(nxprof, ['export-csv', profile, '--start', String(S), '--end', String(E), '--tables', 'Instruction',
                            '--no-sample', '--max-rows', String(Number(n) * 2), '--out', out], { stdio: 'inherit' });
      if (i) oursT.push(now() - t0);
    }
    rows = Number((await one(`SELECT count(*)::VARCHAR FROM read_csv('${join(out, 'Instruction.csv')}', all_varchar = true, header = true)`))[0]);
    const oursBytes = statSync(join(out, 'Instruction.csv')).size;
    const duckT = []; const dcsv = join(out, 'duck.csv');
    for (let i = 0; i <= runs; i++) {
      const t0 = now();
      await c.run(`COPY (SELECT ${track} AS timeline_track, * FROM read_parquet(${fileList})
                         WHERE end_ts >= ${S} AND start_ts <= ${E}) TO '${dcsv}' (HEADER)`);
      if (i) duckT.push(now() - t0);
    }
    const duckBytes = statSync(dcsv).size;
    results.push({ what: 'unsampled CSV export', rows, rows_in_window: rows, ours: median(oursT), duck: median(duckT),
                   bytes: `${(oursBytes / 1e6).toFixed(0)} MB / ${(duckBytes / 1e6).toFixed(0)} MB` });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

console.log(`median of ${runs} runs (after a warm-up run)\n`);
console.log('| query | rows in window | rows out | nxprof | DuckDB | DuckDB / nxprof | notes |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of results) {
  const notes = r.what.startsWith('unsampled')
    ? `${(r.rows / r.ours / 1e6).toFixed(2)}M rows/s vs ${(r.rows / r.duck / 1e6).toFixed(2)}M rows/s; CSV ${r.bytes}`
    : `${r.index ? 'timeline index' : 'scan (no index)'}, first run ${ms(r.cold)} ms; ` +
      `the scan without the index ${ms(r.scan)} ms (pages read ${r.pages})`;
  console.log(`| ${r.what} | ${Number(r.rows_in_window).toLocaleString('en-US')} | ${Number(r.rows).toLocaleString('en-US')} | ` +
              `${ms(r.ours)} ms | ${ms(r.duck)} ms | ${(r.duck / r.ours).toFixed(2)}x | ${notes} |`);
}
if (!keep) rmSync(dir, { recursive: true, force: true });
