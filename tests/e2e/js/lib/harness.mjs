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
//   profileLayout(PROF, CAP)                   // the system and device profiles a run should write
//   synthProcessed(BIN, DIR)                   // tiny capture synthesized and processed
import { after } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { findCapture } from './nxcapture.mjs';

export const TEST_DATA = process.env.NXPROF_TEST_DATA ?? fileURLToPath(new URL('../../../data', import.meta.url));

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

// The profiles `nxprof process CAP --output-file PROF` is to write for a capture of one
// session, derived from the capture's own files by the documented layout
// (docs/architecture.md, "Output layout"; src/process/profile_plan.h), not from what nxprof
// wrote: a system profile at PROF and, per trace_<hash>_nd<D>_nc<C>.nxtrace, a device profile
// named <basename(PROF)>-nd<D>-nc<C> (plus "-<the 16 hex digits of the hash>" when two
// programs of the session trace the same core) at PROF/devices/<name>/; a session of one
// trace and no system files (runtime_events.tsv, cpu_usage.tsv, host_mem.tsv,
// device_mem.tsv, *.json, *.json.gz) gives just that device profile, at PROF itself.
//   { system: PROF or null, devices: [{ name, dir, trace, hash, nd, nc }] in (nd, nc, hash)
//     order, device(nd, nc) -> that entry }
export function profileLayout(prof, cap) {
  const { traces } = findCapture(cap);
  const sessions = new Set(traces.map((t) => dirname(t)));
  if (sessions.size > 1) throw new Error(`${cap}: ${sessions.size} sessions; profileLayout takes one`);
  const parsed = traces.map((trace) => {
    const [, hash, nd, nc] = /^trace_([0-9a-f]{16})_nd(\d+)_nc(\d+)\.nxtrace$/.exec(basename(trace));
    return { trace, hash, nd: Number(nd), nc: Number(nc) };
  }).sort((a, b) => a.nd - b.nd || a.nc - b.nc || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  const session = [...sessions][0];
  const systemFiles = session !== undefined && readdirSync(session).some((n) =>
    ['runtime_events.tsv', 'cpu_usage.tsv', 'host_mem.tsv', 'device_mem.tsv'].includes(n) || /\.json(\.gz)?$/.test(n));
  const base = basename(prof);
  let devices;
  if (parsed.length === 1 && !systemFiles) {
    devices = [{ ...parsed[0], name: base, dir: prof }];
  } else {
    devices = parsed.map((d) => {
      const shared = parsed.filter((x) => x.nd === d.nd && x.nc === d.nc).length > 1;
      const name = `${base}-nd${d.nd}-nc${d.nc}${shared ? `-${d.hash}` : ''}`;
      return { ...d, name, dir: join(prof, 'devices', name) };
    });
  }
  return {
    system: parsed.length === 1 && !systemFiles ? null : prof,
    devices,
    device: (nd, nc) => devices.find((d) => d.nd === nd && d.nc === nc),
  };
}

// `nxprof synth --preset tiny --seed 5` into dir/cap, processed into dir/prof: the paths, the
// capture's session directory (where the system files are), its instance id, and the
// profiles (profileLayout): system = prof, devices = one per NeuronCore's trace.
export function synthProcessed(bin, dir) {
  const cap = join(dir, 'cap'), prof = join(dir, 'prof');
  execFileSync(bin, ['synth', '--preset', 'tiny', '--out', cap, '--seed', '5'], { stdio: 'pipe' });
  execFileSync(bin, ['process', cap, '--output-file', prof], { stdio: 'pipe' });
  const sessionDir = readdirSync(cap).find((n) => /_pid_\d+$/.test(n));
  const layout = profileLayout(prof, cap);
  return {
    cap, prof, system: layout.system, devices: layout.devices, device: layout.device,
    instance: sessionDir.replace(/_pid_\d+$/, ''),
    sessionPath: join(cap, sessionDir, readdirSync(join(cap, sessionDir))[0]),
  };
}
