// memory.js — the Memory view of a device profile (docs/viewer.md "Memory view"): SBUF
// partitions down and time across, on the timeline's own window and gutter, so panning or
// zooming either one moves both; allocations as rectangles coloured by owner
// (memory_data.js), a tooltip with the address range and owner on hover, and HBM by
// category in the panel beside it.
//
// Its state is the page's store's (V.memory: open, doc, error, the window asked for, the
// geometry drawn), written through store.js set. It draws after every timeline frame (the
// store's painters) and fetches /memory (api.js loadMemory) for the visible window at the
// plot's width, debounced like the timeline; stale answers are dropped. For tests,
// body[data-memory] is "pending" while an answer is awaited and "done" once the answer for
// the visible window is drawn, and window.nxMemory gives the drawn boxes.
import { V, set, windowAbs } from './store.js';
import { loadMemory } from './api.js';
import { zoomAt } from './input.js';
import { GUTTER, nsPerPx, plotWidth } from './plot.js';
import { ingestMemory, rectBox, rectAt, partitionAt, addressText } from './memory_data.js';
import { $ } from './dom.js';
import { esc, fmtBytes, fmtNs, fmtPct, ellipsize } from './format.js';

const TOP = 18, BOTTOM = 4, DEBOUNCE_MS = 120, NAME_MIN_W = 36, NAME_MIN_H = 11;
const FONT = '11px system-ui, sans-serif';
let seq = 0, timer = 0;   // the latest /memory asked for, the debounce
const mem = (fields) => set({ memory: { ...V.memory, ...fields } });

// Shows the Memory toggle when the profile has either table; a no-op otherwise.
export function installMemory(tables) {
  if (!tables.has('SbufAllocation') && !tables.has('HbmUsageSummaryByType')) return;
  set({ memory: { open: false, doc: null, asked: '', error: null, g: null } });
  const button = $('#memory-toggle');
  button.hidden = false;
  button.onclick = () => setOpen(!V.memory.open);
  set({ painters: [...V.painters, paintMemory] });
  installPointer($('#memory-canvas'));
}

function setOpen(open) {
  mem({ open });
  $('#memory-view').hidden = !open;
  $('#memory-toggle').classList.toggle('on', open);
  $('#memory-toggle').setAttribute('aria-pressed', String(open));
  if (open) document.body.dataset.memory = 'pending';
  set({}, 'moved');
}

// After a timeline frame: fetch when the window or width changed, then draw.
function paintMemory() {
  const m = V.memory;
  if (!m || !m.open) return;
  const { S, E } = windowAbs();
  const width = plotWidth();
  const key = `${S} ${E} ${width}`;
  if (key !== m.asked) {
    mem({ asked: key });
    document.body.dataset.memory = 'pending';
    clearTimeout(timer);
    timer = setTimeout(() => fetchMemory(S, E, width, key), DEBOUNCE_MS);
  }
  draw();
}

async function fetchMemory(S, E, width, key) {
  const my = ++seq;
  try {
    const doc = await loadMemory(V.name, S, E, width);
    if (my !== seq) return;
    mem({ doc: ingestMemory(doc, Number(S - V.origin)), error: null });
    showHbm(V.memory.doc.hbm);
  } catch (e) {
    if (my !== seq) return;
    mem({ error: e.message });
  }
  draw();
  if (V.memory.asked === key) document.body.dataset.memory = 'done';
}

function geometry(canvas) {
  const wrap = canvas.parentElement;
  const w = V.cssW, h = Math.max(60, wrap.clientHeight);
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.style.width = `${w}px`; canvas.style.height = `${h}px`;
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const partitions = (V.memory.doc && V.memory.doc.partitions) || 128;
  return { ctx, w, h, g: { gutter: GUTTER, viewS: V.viewS, k: nsPerPx(), top: TOP, plotH: h - TOP - BOTTOM, partitions } };
}

function draw() {
  const canvas = $('#memory-canvas'), m = V.memory;
  const { ctx, w, h, g } = geometry(canvas);
  mem({ g });
  ctx.clearRect(0, 0, w, h);
  ctx.font = FONT;
  ctx.fillStyle = '#f8fafc';
  ctx.fillRect(0, 0, GUTTER, h);
  ctx.fillStyle = '#111827';
  ctx.textBaseline = 'middle';
  ctx.fillText('SBUF allocations', 8, TOP / 2);
  paintPartitionAxis(ctx, w, g);
  const doc = m.doc;
  const message = m.error ? `Error: ${m.error}` : doc && !doc.sbuf.present ? 'This profile has no SbufAllocation table.'
    : doc && !doc.rects.length ? 'No SBUF allocation in this window.' : '';
  if (message) {
    ctx.fillStyle = m.error ? '#b91c1c' : '#6b7280';
    ctx.fillText(message, GUTTER + 12, TOP + g.plotH / 2);
  }
  if (!doc) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER, TOP, w - GUTTER, g.plotH);
  ctx.clip();
  for (const r of doc.rects) {
    const b = rectBox(r, g);
    if (b.x > w) continue;
    ctx.fillStyle = r.colour;
    ctx.fillRect(b.x, b.y, b.w, b.h);
    if (b.w >= NAME_MIN_W && b.h >= NAME_MIN_H && r.owner) {
      ctx.fillStyle = '#fff';
      ctx.fillText(ellipsize(r.owner, b.w - 6, (s) => ctx.measureText(s).width), b.x + 3, b.y + b.h / 2);
    }
  }
  ctx.restore();
}

// Lines and labels every 32 partitions (a quarter of the usual 128).
function paintPartitionAxis(ctx, w, g) {
  const step = Math.max(1, Math.round(g.partitions / 4));
  ctx.strokeStyle = '#e5e7eb';
  ctx.fillStyle = '#6b7280';
  for (let p = 0; p < g.partitions; p += step) {
    const y = g.top + (p * g.plotH) / g.partitions;
    ctx.beginPath(); ctx.moveTo(GUTTER - 40, y + 0.5); ctx.lineTo(w, y + 0.5); ctx.stroke();
    ctx.fillText(`partition ${p}`, GUTTER - 96, y + 7);
  }
  ctx.fillText(`${g.partitions - 1}`, GUTTER - 30, g.top + g.plotH - 5);
}

function showHbm(hbm) {
  const box = $('#memory-hbm .content');
  if (!hbm.present) { box.innerHTML = '<p class="muted">This profile has no HbmUsageSummaryByType table.</p>'; return; }
  const total = Number(hbm.total) || 0;
  const rows = hbm.categories.map((c) => {
    const share = total ? (100 * Number(c.bytes)) / total : 0;
    return `<tr><td class="k" title="${esc(c.usage_type)}">${esc(c.usage_type)}</td><td class="num">${fmtBytes(c.bytes)}</td>
      <td><span class="bar" style="width:${share.toFixed(1)}%"></span> ${fmtPct(share)}</td></tr>`;
  }).join('');
  box.innerHTML = `<table class="hbm"><tbody>${rows}</tbody><tfoot><tr><td class="k">total</td><td class="num">${fmtBytes(total)}</td><td></td></tr></tfoot></table>
    <p class="muted hint">Bytes per usage category over the profile's NeuronCores (a static summary: the same for every window).</p>`;
}

function tooltipHTML(r) {
  const lines = [`<b>${esc(r.owner || '(no owner)')}</b>`,
    `address ${addressText(r.start_address, r.end_address, fmtBytes)}`,
    `partitions ${r.partition_lo === r.partition_hi ? r.partition_lo : `${r.partition_lo}–${r.partition_hi}`}`,
    `${fmtNs(r.t0)} – ${fmtNs(r.t1)} (${fmtNs(r.t1 - r.t0)})`];
  for (const f of ['tensor_name', 'hlo_name', 'opcode', 'queue_name', 'op_source_type', 'block_id', 'operands']) {
    if (r[f] !== null && r[f] !== undefined && r[f] !== '') lines.push(`${f}: ${esc(String(r[f]))}`);
  }
  return lines.join('\n');
}

// Hover: the tooltip; drag: pan; wheel: zoom around the pointer (Shift: pan), like the timeline.
function installPointer(canvas) {
  const tip = $('#memory-tip');
  let drag = null;
  const pos = (e) => { const b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
  canvas.addEventListener('mousemove', (e) => {
    const [x, y] = pos(e), m = V.memory;
    if (drag) {
      const k = nsPerPx(), dx = e.clientX - drag.x0;
      set({ viewS: drag.s - dx * k, viewE: drag.e - dx * k }, 'window');
      return;
    }
    const i = m.doc && m.g && x >= GUTTER ? rectAt(m.doc.rects, x, y, m.g) : -1;
    if (i < 0) {
      tip.hidden = true;
      canvas.title = m.g && partitionAt(y, m.g) >= 0 && x < GUTTER ? `partition ${partitionAt(y, m.g)}` : '';
      return;
    }
    tip.innerHTML = tooltipHTML(m.doc.rects[i]);
    tip.hidden = false;
    tip.style.left = `${Math.min(x + 14, V.cssW - tip.offsetWidth - 4)}px`;
    tip.style.top = `${Math.max(0, y - tip.offsetHeight - 8)}px`;
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('mousedown', (e) => {
    if (e.button !== 0) return;
    drag = { x0: e.clientX, s: V.viewS, e: V.viewE };
    e.preventDefault();
  });
  window.addEventListener('mouseup', () => { drag = null; });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const [x] = pos(e);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const d = (e.deltaX || e.deltaY) * nsPerPx();
      set({ viewS: V.viewS + d, viewE: V.viewE + d }, 'window');
    } else {
      zoomAt(Math.exp(e.deltaY * 0.0015), Math.max(GUTTER, x));
    }
  }, { passive: false });
}

// For tests and scripts: the drawn rectangles with their canvas boxes (CSS px).
window.nxMemory = {
  get state() {
    const m = V.memory;
    return m ? { open: m.open, error: m.error, window: m.asked, partitions: m.doc && m.doc.partitions, rects: m.doc ? m.doc.rects.length : 0 } : null;
  },
  boxes() {
    const m = V.memory;
    if (!m || !m.doc || !m.g) return [];
    return m.doc.rects.map((r) => ({ ...rectBox(r, m.g), owner: r.owner, ordinal: r.ordinal, partition_lo: r.partition_lo,
      partition_hi: r.partition_hi, start_address: r.start_address, end_address: r.end_address }))
      .filter((b) => b.x < V.cssW && b.x + b.w > GUTTER);
  },
};
