// nxcapture.mjs — a small, independent decoder of nxprof's capture files for tests,
// written from docs/capture-format.md alone (it shares no code with nxprof's C
// readers, so tests that compare nxprof's tables with it can fail).
//
//   findCapture(dir)  -> { programs: Map(hash -> path), traces: [path] }
//   readProgram(path) -> { strings, queues, descs, tensors, semaphores, instrs, instrByKey }
//   readTrace(path)   -> { header, records }   (records decoded per kind; times in ticks
//                                               and Unix ns as BigInt)
// Only the fields tests need are decoded; add more as needed (keep to the spec).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, basename } from 'node:path';

const walk = (d) => readdirSync(d).flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? walk(p) : [p];
});

export function findCapture(dir) {
  const files = walk(dir);
  const programs = new Map();
  for (const p of files) {
    const m = /^program_([0-9a-f]{16})\.nxprog$/.exec(basename(p));
    if (m) programs.set(m[1], p);
  }
  const traces = files.filter((p) => /^trace_[0-9a-f]{16}_nd\d+_nc\d+\.nxtrace$/.test(basename(p))).sort();
  return { programs, traces };
}

// NUL-terminated string at byte `ref` of the STRINGS section.
function strAt(strings, ref) {
  const end = strings.indexOf(0, ref);
  return strings.subarray(ref, end).toString('utf8');
}

export function readProgram(path) {
  const b = readFileSync(path);
  if (b.subarray(0, 8).toString('latin1') !== 'NXPROG\0\0') throw new Error(`${path}: not a program file`);
  const tocCount = b.readUInt32LE(16), tocEntry = b.readUInt32LE(20), tocOff = Number(b.readBigUInt64LE(24));
  const sec = new Map();
  for (let i = 0; i < tocCount; i++) {
    const at = tocOff + i * tocEntry;
    sec.set(b.readUInt32LE(at), { size: b.readUInt32LE(at + 4), off: Number(b.readBigUInt64LE(at + 8)),
      count: Number(b.readBigUInt64LE(at + 16)) });
  }
  const S = sec.get(1);
  const strings = b.subarray(S.off, S.off + S.count);
  const str = (at) => strAt(strings, b.readUInt32LE(at));
  const each = (id, fn) => {
    const s = sec.get(id);
    if (!s) return [];
    return Array.from({ length: s.count }, (_, i) => fn(s.off + i * s.size, i));
  };
  // INSTRUCTIONS (288 bytes): pc u32 @0, engine u8 @4, wait u16 @8, signal u16 @10, opcode str @16.
  const instrs = each(4, (at) => ({ pc: b.readUInt32LE(at), engine: b[at + 4], wait: b.readUInt16LE(at + 8),
    signal: b.readUInt16LE(at + 10), opcode: str(at + 16) }));
  // DMA_QUEUES (24 bytes): name @0, purpose @4, type u8 @8, owner u8 @9, dma_engine u32 @12.
  const QTYPES = ['instruction', 'input', 'output', 'data', 'software_dynamic', 'hardware_dynamic', 'unknown'];
  const queues = each(5, (at) => ({ name: str(at), purpose: str(at + 4), type: QTYPES[b[at + 8]],
    dmaEngine: b.readUInt32LE(at + 12) }));
  // DMA_DESCRIPTORS (112 bytes): queue u16 @0, completion_semaphore u16 @2, strings from @32:
  // op, variable, source, dest, semaphore_label, ...
  const descs = each(6, (at) => ({ queue: b.readUInt16LE(at), completionSem: b.readUInt16LE(at + 2),
    op: str(at + 32), variable: str(at + 36), source: str(at + 40), dest: str(at + 44),
    semaphoreLabel: str(at + 48) }));
  // TENSORS (32 bytes): name @0, type @4, format @8, shape @12, size i64 @16, node i64 @24.
  const tensors = each(7, (at) => ({ name: str(at), type: str(at + 4), format: str(at + 8), shape: str(at + 12),
    size: b.readBigInt64LE(at + 16), node: b.readBigInt64LE(at + 24) }));
  const semaphores = each(8, (at) => ({ name: str(at), initial: b.readInt32LE(at + 4) }));
  const instrByKey = new Map(instrs.map((x) => [`${x.engine}:${x.pc}`, x]));
  return { path, strings, instrs, queues, descs, tensors, semaphores, instrByKey };
}

export function readTrace(path) {
  const b = readFileSync(path);
  if (b.subarray(0, 8).toString('latin1') !== 'NXTRACE\0') throw new Error(`${path}: not a device trace`);
  const header = {
    headerSize: b.readUInt32LE(12), recordSize: b.readUInt32LE(16), pcoreCount: b.readUInt32LE(20),
    programHash: b.readBigUInt64LE(24).toString(16).padStart(16, '0'),
    num: BigInt(b.readUInt32LE(32)), den: BigInt(b.readUInt32LE(36)), epoch: b.readBigInt64LE(40),
  };
  const ns = (ticks) => header.epoch + (ticks * header.den) / header.num;
  const records = [];
  let seq = 0;
  for (let at = header.headerSize; at + header.recordSize <= b.length; at += header.recordSize) {
    const kind = b[at], pcore = b[at + 1], ts = b.readBigUInt64LE(at + 8);
    const r = { kind, pcore, ts, start: ns(ts), seq: seq++ };
    if (kind === 1) {
      Object.assign(r, { engine: b[at + 2], pc: b.readUInt32LE(at + 4), end: ns(b.readBigUInt64LE(at + 16)) });
    } else if (kind === 2) {
      Object.assign(r, { queue: b.readUInt16LE(at + 2), blockId: b.readUInt32LE(at + 4),
        descriptor: b.readUInt32LE(at + 16), triggerPc: b.readUInt32LE(at + 20), triggerEngine: b[at + 24] });
    } else if (kind === 3) {
      Object.assign(r, { queue: b.readUInt16LE(at + 2), blockId: b.readUInt32LE(at + 4),
        end: ns(b.readBigUInt64LE(at + 16)), readBytes: b.readUInt32LE(at + 24), writeBytes: b.readUInt32LE(at + 28),
        crc: b.readUInt32LE(at + 32), packetIdx: b.readUInt16LE(at + 36) });
    } else if (kind === 9) {
      Object.assign(r, { index: b.readUInt32LE(at + 4), end: ns(b.readBigUInt64LE(at + 16)) });
    }
    records.push(r);
  }
  return { path, header, records };
}
