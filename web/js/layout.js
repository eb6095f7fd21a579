// layout.js — the track tree and the rows it lays out (pure: no DOM).
//
// /tracks gives groups of tracks (docs/api.md). A device profile's groups become one tree
// level each (Compute engines, DMA queues, ...). A group whose tracks carry the
// SystemProfileEvents parts (instance, pid, tid, nc) is arranged by the grouping mode:
//   default    instance -> process -> thread, then the instance's NeuronCores
//   process    process -> thread, then one "NeuronCores" group
//   thread     one "Threads" group, then "NeuronCores"
//   neuroncore one "NeuronCores" group, then "Threads"
//   instance   instance -> its threads and NeuronCores, flat
// Tracks of ranked framework traces (/tracks' rank, a trace's worker_gid) are first split
// by rank: the unranked tracks arranged as above, then one group per rank in /tracks' order,
// "rank N (instance, pid P)" (the instance when it names a host, P the rank's smallest
// positive pid: its Python process), each holding its tracks arranged as above with the
// "rank N / " prefix of their process labels dropped (the group says it).
// A track with a non-null nc is a NeuronCore's track (its runtime events), any other one a
// thread's. Tracks keep /tracks' order inside a group, NeuronCores go by index, except in
// the compute group, where an engine's rows of other tables (CoreBarriers) sit under its
// Instruction row (underEngines).
// Every group node has an id (stable for a mode), its label and the sum of its tracks'
// event counts; collapsing a group hides what is under it. A table /tracks could not read
// (its "errors": [{table, error}]) gets one row of its own, track "", at the end of its
// group (the schema's group of the table), where the viewer writes the error.
// Rows: a group header of GROUP_H, then its children indented one level; a track of a
// nested table (max_depth known) is (max_depth + 1) levels of LEVEL_H plus 2 px padding
// above and below, any other one TRACK_H. y is in content coordinates from `top`.

export const GROUP_H = 20, TRACK_H = 18, LEVEL_H = 16, TRACK_PAD = 2;
export const GROUPINGS = [['default', 'Default'], ['process', 'Process'], ['thread', 'Thread'],
  ['neuroncore', 'NeuronCore'], ['instance', 'Instance']];

const trackId = (t) => `${t.table}\0${t.track}`;
const hasParts = (g) => g.tracks.some((t) => 'pid' in t || 'nc' in t);
const isNc = (t) => t.nc !== null && t.nc !== undefined;
const txt = (v, none) => (v === null || v === undefined || v === '' ? none : String(v));

function leaf(t, label, suffix = '') { return { id: trackId(t), track: t, label: label + suffix, count: Number(t.count) || 0 }; }
function node(id, label, children, title) {
  return { id, label, title: title || label, children, count: children.reduce((a, c) => a + c.count, 0) };
}
// Items grouped by key(item) in order of first appearance: [[key, items], ...].
function groupBy(items, key) {
  const m = new Map();
  for (const it of items) { const k = key(it); if (!m.has(k)) m.set(k, []); m.get(k).push(it); }
  return [...m.entries()];
}

const ncLeaves = (ts) => ts.filter(isNc).sort((a, b) => Number(a.nc) - Number(b.nc)).map((t) => leaf(t, `NeuronCore ${t.nc}`));
// A thread's label (also the Event Details' track): the names its trace gave ("python3 (469) / thread 520 (pt_autograd_0)",
// /tracks' process_label and thread_label), else pid/tid, else its track name.
const known = (v) => v !== null && v !== undefined && v !== '';
export const threadLabel = (t) => (known(t.thread_label) ? `${t.process_label} / ${t.thread_label}`
  : known(t.pid) && known(t.tid) ? `${t.pid}/${t.tid}` : txt(t.track, '(none)'));
const processLabel = (pid, ts) => { const n = ts.find((t) => known(t.process_label)); return n ? n.process_label : `process ${pid}`; };
const threadLeafLabel = (t) => (known(t.thread_label) ? t.thread_label : known(t.tid) ? `thread ${t.tid}` : txt(t.track, '(none)'));

const ranked = (t) => t.rank !== null && t.rank !== undefined;
// "rank N (host, pid P)" of one rank's tracks.
function rankLabel(rank, ts) {
  const inst = new Set(ts.map((t) => txt(t.instance, '')));
  const host = inst.size === 1 ? [...inst][0] : '';
  const pids = ts.map((t) => Number(t.pid)).filter((p) => Number.isFinite(p) && p > 0);
  const parts = [...(host && host !== 'unknown' ? [host] : []), ...(pids.length ? [`pid ${Math.min(...pids)}`] : [])];
  return `rank ${rank}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}
// A ranked track as arranged inside its rank's group: its process label without "rank N / ".
function inRank(t) {
  const pfx = `rank ${t.rank} / `;
  return known(t.process_label) && t.process_label.startsWith(pfx) ? { ...t, process_label: t.process_label.slice(pfx.length) } : t;
}

// The subtree of a group of SystemProfileEvents tracks under grouping `mode`: per rank
// when some tracks have one, else arranged by `mode` (arrange).
export function systemTree(id, tracks, mode) {
  if (!tracks.some(ranked)) return arrange(id, tracks, mode);
  const plain = tracks.filter((t) => !ranked(t));
  return [...(plain.length ? arrange(id, plain, mode) : []),
    ...groupBy(tracks.filter(ranked), (t) => String(t.rank)).map(([rank, ts]) =>
      node(`${id}/r:${rank}`, rankLabel(rank, ts), arrange(`${id}/r:${rank}`, ts.map(inRank), mode)))];
}

function arrange(id, tracks, mode) {
  const threads = tracks.filter((t) => !isNc(t)), ncs = ncLeaves(tracks);
  const threadLeaves = threads.map((t) => leaf(t, threadLabel(t)));
  const ncGroup = () => (ncs.length ? [node(`${id}/nc`, 'NeuronCores', ncs)] : []);
  const threadGroup = () => (threadLeaves.length ? [node(`${id}/threads`, 'Threads', threadLeaves)] : []);
  const byInstance = (inner) => groupBy(tracks, (t) => txt(t.instance, '(no instance)'))
    .map(([inst, ts]) => node(`${id}/i:${inst}`, `instance ${inst}`, inner(`${id}/i:${inst}`, ts)));
  const processes = (pfx, ts) => groupBy(ts.filter((t) => !isNc(t)), (t) => txt(t.pid, '(unknown)'))
    .map(([pid, pts]) => node(`${pfx}/p:${pid}`, processLabel(pid, pts), pts.map((t) => leaf(t, threadLeafLabel(t)))));
  switch (mode) {
    case 'process': return [...processes(`${id}/proc`, tracks), ...ncGroup()];
    case 'thread': return [...threadGroup(), ...ncGroup()];
    case 'neuroncore': return [...ncGroup(), ...threadGroup()];
    case 'instance': return byInstance((pfx, ts) => [...ts.filter((t) => !isNc(t)).map((t) => leaf(t, threadLabel(t))), ...ncLeaves(ts)]);
    default: return byInstance((pfx, ts) => [...processes(pfx, ts), ...ncLeaves(ts)]);
  }
}

// Compute tracks with each engine's rows together: a track of a later table (CoreBarriers'
// "GpSimd") right under the first table's track of the same engine ("gpsimd"; names equal
// ignoring case), in /tracks' order; tracks naming no such engine after them.
function underEngines(tracks) {
  const first = tracks.length ? tracks[0].table : null;
  const key = (t) => String(t.track).toLowerCase();
  const own = tracks.filter((t) => t.table === first), engines = new Set(own.map(key));
  const extra = groupBy(tracks.filter((t) => t.table !== first && engines.has(key(t))), key);
  const byEngine = new Map(extra);
  return [...own.flatMap((t) => { const more = byEngine.get(key(t)) || []; byEngine.delete(key(t)); return [t, ...more]; }),
    ...tracks.filter((t) => t.table !== first && !engines.has(key(t)))];
}

// The track tree of a /tracks document: defs maps table -> its viewer.timelines entry.
export function buildTree(tracksDoc, defs, mode = 'default') {
  const out = [];
  const failed = tracksDoc.errors || [];
  for (const g of tracksDoc.groups || []) {
    const bad = failed.filter((e) => (defs.get(e.table) || {}).group === g.group)
      .map((e) => leaf({ table: e.table, track: '', count: 0 }, e.table));
    if (!g.tracks.length && !bad.length) continue;
    const id = `g:${g.group}`;
    const plain = g.group === 'compute' ? underEngines(g.tracks) : g.tracks;
    const children = hasParts(g) ? systemTree(`${id}:${mode}`, g.tracks, mode)
      : plain.map((t) => leaf(t, txt(t.track, '(none)'), (defs.get(t.table) || {}).track_suffix || ''));
    out.push(node(id, g.label, [...children, ...bad]));
  }
  return out;
}

// Whether any group of the document is arranged by grouping mode.
export const hasGroupings = (tracksDoc) => (tracksDoc.groups || []).some((g) => g.tracks.length && hasParts(g));

// Height of a track row: nested tables get a level per depth.
export function trackHeight(t, def) {
  if (!def || !def.nested) return TRACK_H;
  return (Math.max(0, Number(t.max_depth) || 0) + 1) * LEVEL_H + 2 * TRACK_PAD;
}

// Rows of the tree from y = top, skipping what collapsed groups hide.
export function layoutRows(tree, defs, collapsed, top = 0) {
  const rows = [];
  let y = top;
  const walk = (nodes, depth) => {
    for (const n of nodes) {
      if (n.children) {
        const closed = collapsed.has(n.id);
        rows.push({ kind: 'group', id: n.id, label: n.label, title: n.title, count: n.count, depth, collapsed: closed, y, h: GROUP_H });
        y += GROUP_H;
        if (!closed) walk(n.children, depth + 1);
      } else {
        const t = n.track, def = defs.get(t.table);
        const h = trackHeight(t, def);
        rows.push({ kind: 'track', id: n.id, table: t.table, track: t.track, label: n.label, count: n.count, depth,
          nested: !!(def && def.nested), levels: def && def.nested ? (Number(t.max_depth) || 0) + 1 : 1, y, h });
        y += h;
      }
    }
  };
  walk(tree, 0);
  return { rows, height: y - top };
}

// The ids of the groups above track `id` (to expand them), or null when it is not in the tree.
export function pathTo(tree, id) {
  const walk = (nodes, above) => {
    for (const n of nodes) {
      if (n.id === id && !n.children) return above;
      if (n.children) { const r = walk(n.children, [...above, n.id]); if (r) return r; }
    }
    return null;
  };
  return walk(tree, []);
}
