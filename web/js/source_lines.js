// source_lines.js — the Source table's rules (pure: no DOM): its columns, the order of its
// lines under a column and direction, and the search that finds a line's instructions.
//
// A line is a row of GET /api/profiles/<name>/source (docs/api.md): {file, line, count,
// self_ns, total_ns, self_percent, total_percent}. Sorting a column orders by its value
// (numbers numerically, file and line as "file" then line), ties by file then line
// ascending, nulls last either way, so the order is total and stable across clicks.
// Instruction.nki_source_location holds "<file name>:<line>" (the source file's last path
// component), so a line's instructions are the exact search of that text in that field.

export const SOURCE_COLUMNS = [
  { key: 'line', label: 'Line', title: 'NKI kernel source file and line' },
  { key: 'count', label: 'Instr.', title: 'Instructions the line generated', num: true },
  { key: 'self_ns', label: 'Self', title: 'Time of the instructions the line generated (exclusive)', num: true },
  { key: 'self_percent', label: '%', title: 'Self time as a share of all instruction time', num: true },
  { key: 'total_ns', label: 'Total', title: 'Self time plus the time of the functions called from the line (inclusive)', num: true },
];

const num = (v) => (v === null || v === undefined ? null : Number(v));
const where = (a, b) => String(a.file ?? '\uffff').localeCompare(String(b.file ?? '\uffff')) || ((num(a.line) ?? Infinity) - (num(b.line) ?? Infinity));

// The lines in the order of column `key`, descending unless asc.
export function sortLines(lines, key, asc = false) {
  const out = [...lines];
  out.sort((a, b) => {
    if (key === 'line') return asc ? where(a, b) : where(b, a);
    const x = num(a[key]), y = num(b[key]);
    if (x === null || y === null) return x === y ? where(a, b) : x === null ? 1 : -1;
    return (asc ? x - y : y - x) || where(a, b);
  });
  return out;
}

// "file.py:42" of a line: the file's last path component, its line.
export function lineLabel(l) {
  const file = l.file === null || l.file === undefined ? '?' : String(l.file);
  return `${file.slice(file.lastIndexOf('/') + 1)}:${l.line ?? '?'}`;
}

// The search ({field, q, match}) that finds a line's instructions: the whole value, so
// line 24 does not find 240.
export const lineSearch = (l) => ({ field: 'nki_source_location', q: lineLabel(l), match: 'exact' });
