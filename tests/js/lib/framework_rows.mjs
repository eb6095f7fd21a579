// framework_rows.mjs — a profile of a real PyTorch trace with its `[memory]` instants and its
// `fwdbwd` flow events (`s`, `f`) as SystemProfileEvents rows, whoever wrote them: when
// `nxprof process` already keeps a kind (docs/processing.md, the storage contract of
// framework rows), its rows are used as they are; otherwise they are added here from the
// raw JSON in the contract's shape (start_ts = end_ts = ts + baseTimeNanoseconds, duration
// 0, extra_attributes_json beginning with "ph", a flow's flow_id ["<cat>:<id>"]), the table
// re-written sorted by start_ts with DuckDB and re-indexed with `nxprof index`, so the
// viewer's tests of these rows do not depend on who wrote them.
//
//   await withFrameworkRows(BIN, profileDir, raw, sql, tmp)
//     -> { memory: number of [memory] rows, flows: number of fwdbwd rows }
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const q = (s) => `'${String(s).replaceAll("'", "''")}'`;
const csvText = (s) => `"${String(s).replaceAll('"', '""')}"`;

// The kinds added, each: which rows of the table are of it, which JSON events give it, and
// the row of one event: [name, extra JSON object, flow id or ''].
const KINDS = {
  memory: { where: "name = '[memory]'", events: (e) => e.name === '[memory]' && (e.ph === 'i' || e.ph === 'I'),
    row: (e) => ['[memory]', { ph: e.ph, cat: e.cat, ...(e.s ? { s: e.s } : {}), args: e.args }, ''] },
  flows: { where: "name = 'fwdbwd'", events: (e) => e.cat === 'fwdbwd' && (e.ph === 's' || e.ph === 'f'),
    row: (e) => [e.name, { ph: e.ph, cat: e.cat, id: e.id, ...(e.bp ? { bp: e.bp } : {}) }, `${e.cat}:${e.id}`] },
};

export async function withFrameworkRows(bin, profileDir, raw, sql, tmp) {
  const file = path.join(profileDir, 'SystemProfileEvents.parquet');
  const count = async (k) => Number((await sql(`SELECT count(*)::BIGINT AS n FROM read_parquet(${q(file)})
    WHERE ${KINDS[k].where} AND trace_event_source = 'framework'`))[0].n);
  const base = BigInt(raw.baseTimeNanoseconds ?? 0);
  const lines = [], want = {};
  for (const k of Object.keys(KINDS)) {
    want[k] = await count(k);
    if (want[k] > 0) continue;
    for (const e of raw.traceEvents.filter(KINDS[k].events)) {
      const [name, extra, flow] = KINDS[k].row(e);
      const ts = BigInt(Math.round(Number(e.ts) * 1000)) + base;
      lines.push([ts, e.pid, e.tid, csvText(name), csvText(JSON.stringify(extra)), csvText(flow)].join(','));
      want[k]++;
    }
  }
  if (!lines.length) return want;
  const csv = path.join(tmp, 'framework-rows.csv');
  fs.writeFileSync(csv, `start_ts,pid,tid,name,extra,flow\n${lines.join('\n')}\n`);
  const out = path.join(tmp, 'SystemProfileEvents.parquet');
  await sql(`CREATE OR REPLACE TABLE ev AS SELECT * FROM read_parquet(${q(file)})`);
  await sql(`INSERT INTO ev BY NAME SELECT start_ts, start_ts AS end_ts, 0::BIGINT AS duration_ns, name,
    'framework' AS trace_event_source, (SELECT any_value(instance_id) FROM ev) AS instance_id, pid AS process_id,
    tid AS thread_id, extra AS extra_attributes_json, CASE WHEN coalesce(flow, '') = '' THEN NULL ELSE [flow] END AS flow_id
    FROM read_csv(${q(csv)}, header = true, columns = {'start_ts': 'BIGINT', 'pid': 'BIGINT', 'tid': 'BIGINT',
      'name': 'VARCHAR', 'extra': 'VARCHAR', 'flow': 'VARCHAR'})`);
  await sql(`COPY (SELECT * REPLACE ((row_number() OVER (ORDER BY start_ts, id NULLS LAST) - 1)::BIGINT AS id) FROM ev
    ORDER BY start_ts, id NULLS LAST) TO ${q(out)} (FORMAT parquet)`);
  fs.copyFileSync(out, file);
  fs.rmSync(path.join(profileDir, '.SystemProfileEvents.nxtl'), { force: true });
  execFileSync(bin, ['index', profileDir], { stdio: 'ignore' });
  for (const k of Object.keys(KINDS)) {
    const got = await count(k);
    if (got !== want[k]) throw new Error(`${file}: ${got} ${k} rows, ${want[k]} expected`);
  }
  return want;
}
