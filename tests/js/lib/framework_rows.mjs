// framework_rows.mjs — a profile of a real PyTorch trace with its `[memory]` instants as
// SystemProfileEvents rows, whoever wrote them: when `nxprof process` already keeps them
// (docs/processing.md, the storage contract of framework rows), the profile is used as it
// is; otherwise they are added here from the raw JSON in the contract's shape (start_ts =
// end_ts = ts + baseTimeNanoseconds, duration 0, extra_attributes_json beginning with
// "ph"), the table re-written sorted by start_ts with DuckDB and re-indexed with
// `nxprof index`, so the viewer's tests of the memory lanes do not depend on who wrote them.
//
//   await withMemoryRows(BIN, profileDir, raw, sql, tmp)  -> number of [memory] rows
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const q = (s) => `'${String(s).replaceAll("'", "''")}'`;

// The contract's row of a Kineto [memory] instant: [start_ts, pid, tid, extra JSON].
function memoryRow(e, base) {
  const ts = BigInt(Math.round(Number(e.ts) * 1000)) + base;
  const extra = { ph: e.ph, cat: e.cat, ...(e.s ? { s: e.s } : {}), args: e.args };
  return [ts, e.pid, e.tid, JSON.stringify(extra)];
}

export async function withMemoryRows(bin, profileDir, raw, sql, tmp) {
  const file = path.join(profileDir, 'SystemProfileEvents.parquet');
  const count = async () => Number((await sql(`SELECT count(*)::BIGINT AS n FROM read_parquet(${q(file)})
    WHERE name = '[memory]' AND trace_event_source = 'framework'`))[0].n);
  const have = await count();
  if (have > 0) return have;
  const base = BigInt(raw.baseTimeNanoseconds ?? 0);
  const rows = raw.traceEvents.filter((e) => e.name === '[memory]' && (e.ph === 'i' || e.ph === 'I')).map((e) => memoryRow(e, base));
  const csv = path.join(tmp, 'memory-rows.csv');
  fs.writeFileSync(csv, 'start_ts,pid,tid,extra\n' + rows.map((r) => `${r[0]},${r[1]},${r[2]},"${r[3].replaceAll('"', '""')}"`).join('\n') + '\n');
  const out = path.join(tmp, 'SystemProfileEvents.parquet');
  await sql(`CREATE OR REPLACE TABLE ev AS SELECT * FROM read_parquet(${q(file)})`);
  await sql(`INSERT INTO ev BY NAME SELECT start_ts, start_ts AS end_ts, 0::BIGINT AS duration_ns, '[memory]' AS name,
    'framework' AS trace_event_source, (SELECT any_value(instance_id) FROM ev) AS instance_id, pid AS process_id,
    tid AS thread_id, extra AS extra_attributes_json
    FROM read_csv(${q(csv)}, header = true, columns = {'start_ts': 'BIGINT', 'pid': 'BIGINT', 'tid': 'BIGINT', 'extra': 'VARCHAR'})`);
  await sql(`COPY (SELECT * REPLACE ((row_number() OVER (ORDER BY start_ts, id NULLS LAST) - 1)::BIGINT AS id) FROM ev
    ORDER BY start_ts, id NULLS LAST) TO ${q(out)} (FORMAT parquet)`);
  fs.copyFileSync(out, file);
  fs.rmSync(path.join(profileDir, '.SystemProfileEvents.nxtl'), { force: true });
  execFileSync(bin, ['index', profileDir], { stdio: 'ignore' });
  const got = await count();
  if (got !== rows.length) throw new Error(`${file}: ${got} [memory] rows after adding ${rows.length}`);
  return got;
}
