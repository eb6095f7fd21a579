/*
 * memory_usage.c — SbufUsage and PsumUsage: how full SBUF and PSUM are over time,
 * derived from the program's static allocations (program file section
 * MEMORY_ALLOCATIONS, docs/capture-format.md) and the instruction records that
 * open and close each allocation's live range. Rules (docs/processing.md,
 * "SbufUsage, PsumUsage"):
 *
 * Live ranges, per (trace, pcore, allocation):
 * - An allocation becomes live at the start of an instruction record of its
 *   trace and pcore whose (engine, pc) is its live_engine/live_pc. A live-from
 *   start while it is already live keeps it live (its bytes are not counted
 *   twice) and restarts its default free time (below).
 * - It becomes free at the end of the first instruction record of the same trace
 *   and pcore with its free_engine/free_pc that starts while it is live (the
 *   free instruction may be the live-from instruction itself). A free-at record
 *   seen while the allocation is not live changes nothing.
 * - If no free-at record comes, it is freed by default at the end of the
 *   `execution` record of the same trace and pcore whose interval holds the
 *   live-from start (an execution owns its program's static allocations); when
 *   no execution record holds that start, at the end of the live-from
 *   instruction itself. (The end of the whole trace is not usable: a streaming
 *   sink learns it only after every trace has been read.) Whichever of the
 *   explicit and the default free is set last wins.
 *
 * Occupancy: a live SBUF allocation occupies bytes_per_partition bytes in each
 * of its partitions [first_partition, first_partition + partition_count); a
 * PSUM one the same in its bank. Capacities: SBUF partition group g (columns
 * partition_<g>_util_percent, g in 0, 32, 64, 96) holds partitions g..g+31 that
 * exist (< sbuf_partitions), each sbuf_partition_bytes; all of SBUF holds
 * sbuf_partitions x sbuf_partition_bytes. PSUM bank k (bank_<k>_util_percent,
 * k < 8 and < psum_banks) holds sbuf_partitions x (psum_partition_bytes /
 * psum_banks); all of PSUM sbuf_partitions x psum_partition_bytes. A column
 * whose capacity is 0 (no such group/bank) is null.
 *
 * Series and samples: one series per (table, pcore_idx), summed over every
 * device trace whose program has at least one allocation: occupancy and
 * capacity are both sums over those traces (with one NeuronCore per pcore, the
 * percent of that core's memory; with several, of their combined memory).
 * Buckets are those of DmaUsage/HbmUsage (dma_usage.h): NX_USAGE_BUCKET_NS wide,
 * aligned to multiples of it in Unix ns, timestamp = bucket start. A sample is
 * 100 x (integral of occupied bytes over the bucket, in byte-ns) /
 * (bucket width x capacity): the time-weighted average percent, computed in
 * exact integers and rounded once to FLOAT. A series runs from the bucket in
 * which its first allocation goes live to bucket ceil(t_last / W), where t_last
 * is its last change (so its last sample is a bucket that is entirely empty).
 * Of every run of consecutive buckets whose samples are identical in every
 * column, only the first and the last are written (a line plot keeps its
 * shape; an idle or steady stretch costs two rows). Rows are in timestamp order,
 * ties in pcore order.
 *
 * SbufAllocation (sbuf_allocation.h) gets every finished live range of an SBUF
 * allocation, and writes it once no range still live starts before it.
 *
 * Memory: a slot per (trace, pcore, allocation) and an indexed min-heap of
 * pending frees over those slots; nothing grows with the number of events or
 * buckets. Stretches with no change are crossed in one step.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/device/dma_usage.h"
#include "process/row.h"
#include "process/device/sbuf_allocation.h"
#include "process/device/sum_guard.h"
#include "util/int_ops.h"

#define W NX_USAGE_BUCKET_NS
#define NCOLS 9                        /* 0: the whole memory; 1..8: groups or banks */
#define NO_POS UINT32_MAX

enum { MEM_SBUF = NX_MEM_SBUF, MEM_PSUM = NX_MEM_PSUM, N_MEM = 2 };
static const char *const TABLES[N_MEM] = {"SbufUsage", "PsumUsage"};
static const unsigned TABLE_COLS[N_MEM] = {5, 9};   /* total + 4 groups / 8 banks */

typedef struct alloc_info {
    uint8_t memory;
    int64_t delta[NCOLS];              /* bytes occupied per column while live */
} alloc_info;

/* Per program: its allocations and, per instruction, the allocations it opens
 * or closes (CSR: live-from entries first, then free-at entries). */
typedef struct prog_info {
    size_t n_allocs;
    alloc_info *allocs;
    uint32_t *first;                   /* n_instrs + 1 offsets into list */
    uint32_t *list;                    /* alloc index << 1 | (1: free-at) */
} prog_info;

typedef struct slot {
    int64_t free_at;                   /* pending free while live */
    int64_t live_from;                 /* start of the live range while live */
    const nx_program *prog;
    uint32_t alloc;                    /* index into prog->allocs */
    uint32_t pos;                      /* heap position, NO_POS when not queued */
    uint8_t memory, pcore;
    bool live;
    const alloc_info *a;
} slot;

typedef struct series {
    bool started, done, have_prev, prev_first, ending;
    int64_t occ[NCOLS];                /* bytes occupied now */
    int64_t acc[NCOLS];                /* byte-ns since the open bucket's start */
    int64_t last;                      /* acc integrated up to here */
    int64_t prev[NCOLS];               /* the previous bucket's byte-ns, not yet decided */
    int64_t prev_b;
    int64_t last_change, end_b;
    uint64_t cap[NCOLS];               /* bytes; 0: null column */
} series;

typedef struct exec_span {
    int64_t start, end;                /* -1: none yet */
} exec_span;

typedef struct mem_state {
    prog_info *progs;
    size_t n_progs;
    size_t *trace_base;                /* first slot of each trace */
    exec_span *exec;                   /* per trace x NX_TRACE_MAX_PCORES */
    slot *slots;
    size_t n_slots;
    uint32_t *heap;                    /* slot indices, min-heap by free_at */
    size_t n_heap;
    series s[N_MEM][NX_USAGE_MAX_SERIES];
    bool any;                          /* a series started: cur is valid */
    int64_t cur;                       /* the open bucket */
    nx_row r[N_MEM];
    size_t c_ts[N_MEM], c_pcore[N_MEM], c_col[N_MEM][NCOLS];
    nx_sum_guard sums;                 /* occupancy and byte-ns sums */
    nx_sbuf_rows sbuf;                 /* SbufAllocation */
} mem_state;

/* --- indexed min-heap of pending frees --------------------------------------- */

static void heap_set(mem_state *m, size_t i, uint32_t s)
{
    m->heap[i] = s;
    m->slots[s].pos = (uint32_t)i;
}

static void sift_up(mem_state *m, size_t i)
{
    uint32_t s = m->heap[i];
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (m->slots[m->heap[up]].free_at <= m->slots[s].free_at)
            break;
        heap_set(m, i, m->heap[up]);
        i = up;
    }
    heap_set(m, i, s);
}

static void sift_down(mem_state *m, size_t i)
{
    uint32_t s = m->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m->n_heap)
            break;
        if (c + 1 < m->n_heap && m->slots[m->heap[c + 1]].free_at < m->slots[m->heap[c]].free_at)
            c++;
        if (m->slots[m->heap[c]].free_at >= m->slots[s].free_at)
            break;
        heap_set(m, i, m->heap[c]);
        i = c;
    }
    heap_set(m, i, s);
}

/* Queues slot s to be freed at t, or moves its pending free to t. The heap has
 * room for every slot, so this never allocates. */
static void set_free(mem_state *m, uint32_t s, int64_t t)
{
    slot *x = &m->slots[s];
    x->free_at = t;
    if (x->pos == NO_POS) {
        m->heap[m->n_heap] = s;
        x->pos = (uint32_t)m->n_heap++;
        sift_up(m, x->pos);
    } else {
        sift_up(m, x->pos);
        sift_down(m, m->slots[s].pos);
    }
}

static uint32_t heap_pop(mem_state *m)
{
    uint32_t s = m->heap[0];
    m->slots[s].pos = NO_POS;
    if (--m->n_heap > 0) {
        heap_set(m, 0, m->heap[m->n_heap]);
        sift_down(m, 0);
    }
    return s;
}

static int64_t next_free(const mem_state *m)
{
    return m->n_heap ? m->slots[m->heap[0]].free_at : INT64_MAX;
}

/* --- series ------------------------------------------------------------------- */

static void integrate(nx_sum_guard *g, series *s, int64_t t)
{
    if (t > s->last) {
        int64_t dt = t - s->last;
        for (unsigned c = 0; c < NCOLS; c++)
            nx_sum_mul_add(g, &s->acc[c], s->occ[c], dt, "byte-ns in a bucket");
        s->last = t;
    }
}

/* Occupancy of series s changes by sign x delta at time t (t is inside the open bucket). */
static void change(nx_sum_guard *g, series *s, const alloc_info *a, int sign, int64_t t)
{
    integrate(g, s, t);
    for (unsigned c = 0; c < NCOLS; c++)
        nx_sum_mul_add(g, &s->occ[c], sign, a->delta[c], "bytes occupied");
    s->last_change = t;
}

static int write_row(mem_state *m, unsigned mem, unsigned pcore, int64_t bucket, const int64_t *v, nx_error *err)
{
    nx_row *r = &m->r[mem];
    const series *s = &m->s[mem][pcore];
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, m->c_ts[mem], bucket * W);
    for (unsigned c = 0; c < TABLE_COLS[mem]; c++)
        if (s->cap[c])
            nx_row_num(r, m->c_col[mem][c], 100.0 * (double)v[c] / ((double)W * (double)s->cap[c]));
    nx_row_i64(r, m->c_pcore[mem], pcore);
    return nx_row_end(r, err);
}

/* The open bucket `b` of series s ends: its sample is known; the previous
 * bucket's row is written when it is the first or the last of its run. */
static int close_series(mem_state *m, unsigned mem, unsigned pcore, int64_t b, nx_error *err)
{
    series *s = &m->s[mem][pcore];
    integrate(&m->sums, s, (b + 1) * W);
    if (nx_sum_error(&m->sums, "SbufUsage/PsumUsage", NULL, err) != 0)
        return -1;
    bool same = s->have_prev && memcmp(s->acc, s->prev, sizeof s->acc) == 0;
    if (s->have_prev && (s->prev_first || !same) && write_row(m, mem, pcore, s->prev_b, s->prev, err) != 0)
        return -1;
    s->prev_first = !same;
    memcpy(s->prev, s->acc, sizeof s->acc);
    memset(s->acc, 0, sizeof s->acc);
    s->prev_b = b;
    s->have_prev = true;
    return 0;
}

/* After the last bucket of a finished series (end_b, its first empty bucket
 * after its last change): the pending row is written when it is that bucket.
 * A pending bucket past end_b (the series stayed empty while others went on)
 * belongs to the empty run that bucket end_b started and was written as. */
static int end_series(mem_state *m, unsigned mem, unsigned pcore, nx_error *err)
{
    series *s = &m->s[mem][pcore];
    s->done = true;
    return s->have_prev && s->prev_b <= s->end_b ? write_row(m, mem, pcore, s->prev_b, s->prev, err) : 0;
}

static int close_bucket(mem_state *m, nx_error *err)
{
    int64_t b = m->cur;
    for (unsigned mem = 0; mem < N_MEM; mem++)
        for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++) {
            series *s = &m->s[mem][p];
            if (!s->started || s->done)
                continue;
            if (s->ending && b > s->end_b) {
                if (end_series(m, mem, p, err) != 0)
                    return -1;
                continue;
            }
            if (close_series(m, mem, p, b, err) != 0)
                return -1;
        }
    m->cur = b + 1;
    return 0;
}

/* Buckets cur .. to-1 hold no change for any series (every one is a full bucket
 * at its constant occupancy): close cur normally, decide its row knowing the
 * next is identical, and move to bucket to - 1 as the undecided one. */
static int skip_constant(mem_state *m, int64_t to, nx_error *err)
{
    for (unsigned mem = 0; mem < N_MEM; mem++)
        for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++) {
            const series *s = &m->s[mem][p];
            if (s->started && !s->done && (s->last != m->cur * W || (s->ending && to - 1 > s->end_b)))
                return 0;   /* a change inside the bucket, or the series ends in the range */
        }
    if (close_bucket(m, err) != 0)
        return -1;
    for (unsigned mem = 0; mem < N_MEM; mem++)
        for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++) {
            series *s = &m->s[mem][p];
            if (!s->started || s->done)
                continue;
            /* bucket prev_b (= cur - 1) is followed by an identical one */
            if (s->prev_first && write_row(m, mem, p, s->prev_b, s->prev, err) != 0)
                return -1;
            s->prev_first = false;
            s->prev_b = to - 1;
            s->last = to * W;
        }
    m->cur = to;
    return 0;
}

/* Closes every bucket that ends at or before `now` and applies the frees due
 * up to `now`, in time order. */
static int advance(mem_state *m, int64_t now, nx_error *err)
{
    if (!m->any)
        return 0;
    for (;;) {
        int64_t b_end = (m->cur + 1) * W;
        while (m->n_heap && next_free(m) <= now && next_free(m) < b_end) {
            int64_t t = next_free(m);
            slot *x = &m->slots[heap_pop(m)];
            x->live = false;
            change(&m->sums, &m->s[x->memory][x->pcore], x->a, -1, t);
            if (nx_sbuf_rows_add(&m->sbuf, x->prog, x->alloc, x->pcore, x->live_from, t, err) != 0)
                return -1;
        }
        if (b_end > now)
            return 0;
        int64_t next = next_free(m) < now ? next_free(m) : now;
        int64_t to = nx_floor_div(next, W);
        if (to > m->cur + 1) {
            int64_t before = m->cur;
            if (skip_constant(m, to, err) != 0)
                return -1;
            if (m->cur != before)
                continue;
        }
        if (close_bucket(m, err) != 0)
            return -1;
    }
}

/* --- sink ---------------------------------------------------------------------- */

static void free_state(mem_state *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_progs; i++) {
        free(m->progs[i].allocs);
        free(m->progs[i].first);
        free(m->progs[i].list);
    }
    free(m->progs);
    free(m->trace_base);
    free(m->exec);
    free(m->slots);
    free(m->heap);
    free(m);
}

/* Per-column bytes of allocation a while live (see the header for the columns). */
static void alloc_delta(const nx_prog_alloc *a, alloc_info *out)
{
    memset(out, 0, sizeof *out);
    out->memory = a->memory;
    int64_t bytes = (int64_t)a->bytes_per_partition;
    out->delta[0] = bytes * a->partition_count;
    if (a->memory == NX_MEM_SBUF) {
        unsigned lo = a->first_partition, hi = lo + a->partition_count;
        for (unsigned g = 0; g < 4; g++) {
            unsigned glo = 32 * g, ghi = glo + 32;
            unsigned l = lo > glo ? lo : glo, h = hi < ghi ? hi : ghi;
            if (h > l)
                out->delta[1 + g] = bytes * (h - l);
        }
    } else if (a->bank < 8) {
        out->delta[1 + a->bank] = bytes * a->partition_count;
    }
}

static int build_prog(const nx_program *p, prog_info *pi)
{
    pi->n_allocs = p->n_allocs;
    if (!p->n_allocs)
        return 0;
    pi->allocs = calloc(p->n_allocs, sizeof *pi->allocs);
    pi->first = calloc(p->n_instrs + 1, sizeof *pi->first);
    pi->list = calloc(2 * p->n_allocs, sizeof *pi->list);
    if (!pi->allocs || !pi->first || !pi->list)
        return -1;
    for (size_t a = 0; a < p->n_allocs; a++)
        alloc_delta(&p->allocs[a], &pi->allocs[a]);
    /* count per instruction, prefix sums, then fill live-from entries before
     * free-at ones so an instruction that does both opens first */
    const nx_prog_instr *from[2];
    for (size_t a = 0; a < p->n_allocs; a++) {
        from[0] = nx_program_find_instr(p, p->allocs[a].live_engine, p->allocs[a].live_pc);
        from[1] = nx_program_find_instr(p, p->allocs[a].free_engine, p->allocs[a].free_pc);
        if (!from[0] || !from[1])
            return -1;   /* the reader validated both */
        pi->first[from[0] - p->instrs + 1]++;
        pi->first[from[1] - p->instrs + 1]++;
    }
    for (size_t i = 0; i < p->n_instrs; i++)
        pi->first[i + 1] += pi->first[i];
    uint32_t *fill = calloc(p->n_instrs + 1, sizeof *fill);
    if (!fill)
        return -1;
    memcpy(fill, pi->first, (p->n_instrs + 1) * sizeof *fill);
    for (unsigned role = 0; role < 2; role++)
        for (size_t a = 0; a < p->n_allocs; a++) {
            const nx_prog_alloc *x = &p->allocs[a];
            const nx_prog_instr *in = role == 0 ? nx_program_find_instr(p, x->live_engine, x->live_pc)
                                                : nx_program_find_instr(p, x->free_engine, x->free_pc);
            pi->list[fill[in - p->instrs]++] = (uint32_t)a << 1 | role;
        }
    free(fill);
    return 0;
}

static int open_table(mem_state *m, const nx_process_ctx *ctx, unsigned mem, nx_error *err)
{
    static const char *const COLS[N_MEM][NCOLS] = {
        {"avg_util_percent", "partition_0_util_percent", "partition_32_util_percent", "partition_64_util_percent",
         "partition_96_util_percent"},
        {"avg_util_percent", "bank_0_util_percent", "bank_1_util_percent", "bank_2_util_percent",
         "bank_3_util_percent", "bank_4_util_percent", "bank_5_util_percent", "bank_6_util_percent",
         "bank_7_util_percent"},
    };
    if (nx_row_open(&m->r[mem], &ctx->dest, TABLES[mem], err) != 0)
        return -1;
    m->c_ts[mem] = nx_row_col(&m->r[mem], "timestamp");
    m->c_pcore[mem] = nx_row_col(&m->r[mem], "pcore_idx");
    for (unsigned c = 0; c < TABLE_COLS[mem]; c++)
        m->c_col[mem][c] = nx_row_col(&m->r[mem], COLS[mem][c]);
    return 0;
}

/* Adds one trace's memory (program hw) to the capacities of its pcores' series. */
static void add_capacity(mem_state *m, const nx_prog_hardware *hw, uint32_t pcores)
{
    uint64_t parts = hw->sbuf_partitions;
    uint64_t bank = hw->psum_banks ? hw->psum_partition_bytes / hw->psum_banks : 0;
    for (uint32_t p = 0; p < pcores && p < NX_USAGE_MAX_SERIES; p++) {
        series *sb = &m->s[MEM_SBUF][p], *ps = &m->s[MEM_PSUM][p];
        sb->cap[0] += parts * hw->sbuf_partition_bytes;
        for (unsigned g = 0; g < 4; g++) {
            uint64_t in_group = parts > 32 * g ? (parts - 32 * g < 32 ? parts - 32 * g : 32) : 0;
            sb->cap[1 + g] += in_group * hw->sbuf_partition_bytes;
        }
        ps->cap[0] += parts * hw->psum_partition_bytes;
        for (unsigned k = 0; k < 8; k++)
            if (k < hw->psum_banks)
                ps->cap[1 + k] += parts * bank;
    }
}

static int mem_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    *state = NULL;
    bool any = false;
    for (size_t i = 0; i < ctx->n_progs; i++)
        any |= ctx->progs[i]->n_allocs > 0;
    if (!any)
        return 0;   /* no program says what it allocates: neither table is written */
    mem_state *m = calloc(1, sizeof *m);
    if (!m)
        goto oom;
    m->n_progs = ctx->n_progs;
    m->progs = calloc(ctx->n_progs, sizeof *m->progs);
    m->trace_base = calloc(ctx->n_traces + 1, sizeof *m->trace_base);
    m->exec = calloc(ctx->n_traces * NX_TRACE_MAX_PCORES + 1, sizeof *m->exec);
    if (!m->progs || !m->trace_base || !m->exec)
        goto oom;
    for (size_t i = 0; i < ctx->n_progs; i++)
        if (build_prog(ctx->progs[i], &m->progs[i]) != 0)
            goto oom;
    for (size_t t = 0; t < ctx->n_traces; t++) {
        const nx_device_trace *tr = &ctx->traces[t];
        size_t na = m->progs[tr->prog_index].n_allocs;
        m->trace_base[t] = m->n_slots;
        m->n_slots += na * tr->hdr.pcore_count;
        if (na)
            add_capacity(m, &tr->prog->hw, tr->hdr.pcore_count);
        for (unsigned p = 0; p < NX_TRACE_MAX_PCORES; p++)
            m->exec[t * NX_TRACE_MAX_PCORES + p] = (exec_span){-1, -1};
    }
    m->trace_base[ctx->n_traces] = m->n_slots;
    if (m->n_slots > NO_POS - 1) {
        snprintf(err->msg, sizeof err->msg, "SbufUsage/PsumUsage: %zu allocation slots; at most %u",
                 m->n_slots, NO_POS - 1);
        free_state(m);
        return -1;
    }
    m->slots = calloc(m->n_slots + 1, sizeof *m->slots);
    m->heap = calloc(m->n_slots + 1, sizeof *m->heap);
    if (!m->slots || !m->heap)
        goto oom;
    for (size_t t = 0; t < ctx->n_traces; t++) {
        const prog_info *pi = &m->progs[ctx->traces[t].prog_index];
        for (size_t k = m->trace_base[t]; k < m->trace_base[t + 1]; k++) {
            size_t rel = k - m->trace_base[t];
            const alloc_info *a = &pi->allocs[rel % pi->n_allocs];
            m->slots[k] = (slot){.pos = NO_POS, .memory = a->memory, .pcore = (uint8_t)(rel / pi->n_allocs), .a = a,
                                 .prog = ctx->traces[t].prog, .alloc = (uint32_t)(rel % pi->n_allocs)};
        }
    }
    for (unsigned mem = 0; mem < N_MEM; mem++)
        if (open_table(m, ctx, mem, err) != 0) {
            for (unsigned k = 0; k < mem; k++)
                nx_row_discard(&m->r[k]);
            free_state(m);
            return -1;
        }
    if (nx_sbuf_rows_open(&m->sbuf, &ctx->dest, err) != 0) {
        for (unsigned k = 0; k < N_MEM; k++)
            nx_row_discard(&m->r[k]);
        free_state(m);
        return -1;
    }
    *state = m;
    return 0;
oom:
    free_state(m);
    snprintf(err->msg, sizeof err->msg, "SbufUsage/PsumUsage: out of memory");
    return -1;
}

/* The earliest start of a live range still open (every live slot has a pending
 * free), or `now`: no SbufAllocation range can start before it any more. */
static int64_t open_from(const mem_state *m, int64_t now)
{
    int64_t w = now;
    for (size_t i = 0; i < m->n_heap; i++)
        if (m->slots[m->heap[i]].live_from < w)
            w = m->slots[m->heap[i]].live_from;
    return w;
}

static int mem_event(void *state, const nx_device_event *ev, nx_error *err)
{
    mem_state *m = state;
    if (!m)
        return 0;
    const nx_trace_record *rec = ev->rec;
    const nx_device_trace *tr = ev->trace;
    if (rec->kind == NX_REC_EXECUTION) {
        if (rec->pcore < NX_TRACE_MAX_PCORES)
            m->exec[tr->index * NX_TRACE_MAX_PCORES + rec->pcore] = (exec_span){ev->start_ns, ev->end_ns};
        return 0;
    }
    const prog_info *pi = &m->progs[tr->prog_index];
    if (!pi->n_allocs)
        return 0;
    size_t i = (size_t)(ev->instr - tr->prog->instrs);
    uint32_t lo = pi->first[i], hi = pi->first[i + 1];
    if (lo == hi)
        return 0;   /* the usual case: the instruction opens and closes nothing */
    int64_t now = ev->start_ns;
    m->sums.at = ev;
    if (advance(m, now, err) != 0)
        return -1;
    const exec_span *ex = &m->exec[tr->index * NX_TRACE_MAX_PCORES + rec->pcore];
    size_t base = m->trace_base[tr->index] + (size_t)rec->pcore * pi->n_allocs;
    for (uint32_t k = lo; k < hi; k++) {
        uint32_t a = pi->list[k] >> 1, s = (uint32_t)(base + a);
        slot *x = &m->slots[s];
        if (pi->list[k] & 1) {   /* free-at */
            if (x->live)
                set_free(m, s, ev->end_ns);
            continue;
        }
        if (!x->live) {
            series *se = &m->s[x->memory][rec->pcore];
            if (!m->any) {
                m->any = true;
                m->cur = nx_floor_div(now, W);
            }
            if (!se->started) {
                se->started = true;
                se->last = now;   /* the bucket's time before `now` counts as empty */
            }
            x->live = true;
            x->live_from = now;
            change(&m->sums, se, x->a, +1, now);
        }
        bool in_exec = ex->start >= 0 && ex->start <= now && now <= ex->end;
        set_free(m, s, in_exec ? ex->end : ev->end_ns);
    }
    if (nx_sbuf_rows_drain(&m->sbuf, open_from(m, now), err) != 0)
        return -1;
    return nx_sum_error(&m->sums, "SbufUsage/PsumUsage", NULL, err);
}

static int mem_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    mem_state *m = state;
    if (!m)
        return 0;
    int rc = 0;
    m->sums.at = NULL;
    if (m->any) {
        /* every allocation still live has a pending free: apply them in order */
        while (rc == 0 && m->n_heap)
            rc = advance(m, next_free(m), err);
        int64_t last = m->cur;
        for (unsigned mem = 0; mem < N_MEM; mem++)
            for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++) {
                series *s = &m->s[mem][p];
                if (!s->started)
                    continue;
                s->ending = true;
                s->end_b = nx_floor_div(s->last_change + W - 1, W);
                if (s->end_b > last)
                    last = s->end_b;
            }
        /* close through the last series' end bucket, then write what is pending */
        if (rc == 0)
            rc = advance(m, (last + 1) * W, err);
        for (unsigned mem = 0; rc == 0 && mem < N_MEM; mem++)
            for (unsigned p = 0; rc == 0 && p < NX_USAGE_MAX_SERIES; p++)
                if (m->s[mem][p].started && !m->s[mem][p].done)
                    rc = end_series(m, mem, p, err);
    }
    if (rc == 0)
        rc = nx_sum_error(&m->sums, "SbufUsage/PsumUsage",
                          ctx->n_traces == 1 ? ctx->traces[0].path : ctx->o->capture_dir, err);
    rc = nx_row_finish(&m->r[MEM_SBUF], rc, tables, err);
    rc = nx_row_finish(&m->r[MEM_PSUM], rc, tables, err);
    rc = nx_sbuf_rows_finish(&m->sbuf, rc, tables, err);
    free_state(m);
    return rc;
}

static void mem_abort(void *state)
{
    mem_state *m = state;
    if (!m)
        return;
    for (unsigned mem = 0; mem < N_MEM; mem++)
        nx_row_discard(&m->r[mem]);
    nx_sbuf_rows_discard(&m->sbuf);
    free_state(m);
}

const nx_device_sink nx_sink_memory_usage = {
    .name = "SbufUsage/PsumUsage",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION) | NX_KIND_BIT(NX_REC_EXECUTION),
    .open = mem_open,
    .event = mem_event,
    .finish = mem_finish,
    .abort = mem_abort,
};
