/*
 * schedule.c — runs the program's steps once per core and records what the
 * hardware would report: each engine executes its instructions in order, an
 * instruction starts when its engine is free and its dependencies (semaphores)
 * are satisfied; DMA blocks start when triggered and their queue is free, and
 * their packets share the DMA engine the queue is mapped to (queues on one
 * engine contend); collectives start when the last rank triggers them, so they
 * are scheduled for all cores in lockstep. Durations get a few percent of
 * per-core jitter. The records of one core, sorted by time, are its template.
 */
#include <stdlib.h>
#include <string.h>

#include "capture/capture_util.h"
#include "synth/synth_internal.h"

#define SEM_LATENCY 12                 /* ticks for a semaphore update to reach a waiter */
#define DMA_BYTES_PER_TICK_X10 193     /* 27 GB/s per DMA engine at 1.4 GHz */
#define DMA_LATENCY 1400               /* ticks from a packet's issue to its completion */
#define RING_BYTES_PER_TICK_X10 714    /* 100 GB/s per link for collectives */
#define N_DMA_ENGINES 16

typedef struct pending {
    unsigned char rec[NX_TRACE_RECORD_SIZE];
    uint8_t flags;
    uint64_t ts;
    uint32_t seq;
} pending;

typedef struct core {
    uint64_t rng;
    uint64_t engine_free[NX_ENGINE_COUNT];
    uint64_t queue_free[SY_N_QUEUES], queue_done[SY_N_QUEUES];
    uint64_t dma_free[N_DMA_ENGINES];
    uint32_t next_block[SY_N_QUEUES];
    int32_t sem[SY_N_SEMS];
    uint64_t *end;                   /* per step */
    pending *recs;
    size_t n, cap;
    bool failed;
} core;

typedef struct sched {
    const sy_builder *b;
    const sy_cc_refs *refs;
    core *cores;
    unsigned n_cores;
} sched;

static void emit(core *c, const nx_trace_record *r, uint8_t flags)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        pending *p = realloc(c->recs, cap * sizeof *p);
        if (!p) {
            c->failed = true;
            return;
        }
        c->recs = p;
        c->cap = cap;
    }
    pending *p = &c->recs[c->n];
    nx_trace_encode(r, p->rec);
    p->flags = flags;
    p->ts = r->ts;
    p->seq = (uint32_t)c->n++;
}

/* ticks +/- 6 %, at least 1. */
static uint64_t jitter(core *c, uint64_t ticks)
{
    uint64_t v = ticks * sy_range(&c->rng, 94, 106) / 100;
    return v ? v : 1;
}

static void signal(core *c, uint16_t sem, uint64_t ts, uint8_t source_kind, uint16_t source)
{
    nx_trace_record r = {.kind = NX_REC_SEMAPHORE, .ts = ts,
                         .u.sem = {.semaphore = sem, .value = ++c->sem[sem], .source_kind = source_kind,
                                   .source = source, .op = NX_SEM_INC, .timing = NX_SEM_TIMING_COMPLETE,
                                   .update_mode = 1}};
    emit(c, &r, 0);
}

/* When the dependencies of step s are visible to it. */
static uint64_t deps_ready(const sched *S, const core *c, const sy_step *s)
{
    uint64_t t = 0;
    for (int k = 0; k < SY_MAX_DEPS; k++) {
        if (s->dep[k] == SY_NONE)
            continue;
        const sy_step *d = &S->b->steps[s->dep[k]];
        bool same = s->kind == SY_INSTR && d->kind == SY_INSTR && d->engine == s->engine;
        uint64_t at = c->end[s->dep[k]] + (same ? 0 : SEM_LATENCY);
        if (at > t)
            t = at;
    }
    return t;
}

static void run_instr(const sched *S, core *c, uint32_t i)
{
    const sy_step *s = &S->b->steps[i];
    uint64_t free_at = c->engine_free[s->engine], dep = deps_ready(S, c, s);
    uint64_t start = dep > free_at ? dep : free_at, end = start + jitter(c, s->ticks);
    bool tensor = s->engine == NX_ENGINE_TENSOR;
    nx_trace_record r = {.kind = NX_REC_INSTRUCTION, .ts = start, .end = end,
                         .u.instr = {.engine = s->engine, .pc = s->pc, .flags = tensor ? NX_INSTR_FLAG_CRC : 0,
                                     .evt_wait_ticks = (uint32_t)(start - free_at)}};
    emit(c, &r, SY_F_END | (tensor ? SY_F_CRC_IN | SY_F_CRC_OUT : 0));
    c->engine_free[s->engine] = end;
    c->end[i] = end;
    if (s->signal_sem != NX_NO_SEMAPHORE)
        signal(c, s->signal_sem, end, NX_SEM_SRC_ENGINE, s->engine);
}

/* The packets of one block on queue q from `start` (at most a few hundred: the
 * presets' blocks are at most 4 MiB); returns the last end. */
static uint64_t run_packets(const sched *S, core *c, uint16_t q, uint32_t block, uint64_t start, uint64_t bytes)
{
    const unsigned pb = S->b->d->packet_bytes;
    const uint32_t engine = sy_queue_dma_engine(q) % N_DMA_ENGINES;
    uint64_t t = start, last_end = start;   /* t: when the queue may issue its next packet */
    uint16_t idx = 0;
    for (uint64_t off = 0; off < bytes; off += pb, idx++) {
        uint32_t n = (uint32_t)(bytes - off < pb ? bytes - off : pb);
        uint64_t s = t > c->dma_free[engine] ? t : c->dma_free[engine];
        uint64_t occupy = jitter(c, (uint64_t)n * 10 / DMA_BYTES_PER_TICK_X10);
        uint64_t e = s + occupy + jitter(c, DMA_LATENCY);
        c->dma_free[engine] = s + occupy;
        nx_trace_record r = {.kind = NX_REC_DMA_PACKET, .ts = s, .end = e,
                             .u.packet = {.queue = q, .block_id = block, .packet_idx = idx, .read_bytes = n,
                                          .write_bytes = n}};
        emit(c, &r, SY_F_END | SY_F_BLOCK | SY_F_CRC_OUT);
        t = s + occupy;
        if (e > last_end)
            last_end = e;
    }
    c->queue_free[q] = t;
    return last_end;
}

static void run_dma(const sched *S, core *c, uint32_t i)
{
    const sy_step *s = &S->b->steps[i];
    uint64_t dep = deps_ready(S, c, s);
    uint64_t trig = s->trigger != SY_NONE ? c->end[s->trigger] : dep;
    uint32_t block = c->next_block[s->queue]++;
    nx_trace_record r = {.kind = NX_REC_DMA_BLOCK, .ts = trig,
                         .u.block = {.queue = s->queue, .block_id = block, .descriptor = s->aux,
                                     .trigger_pc = s->pc, .trigger_engine = s->engine}};
    emit(c, &r, SY_F_BLOCK);
    uint64_t start = trig + 64;
    if (dep > start)
        start = dep;
    if (c->queue_free[s->queue] > start)
        start = c->queue_free[s->queue];
    uint64_t done = run_packets(S, c, s->queue, block, start, s->ticks);
    if (done < c->queue_done[s->queue])   /* a queue completes its blocks in order */
        done = c->queue_done[s->queue];
    c->queue_done[s->queue] = done;
    c->end[i] = done;
    if (s->signal_sem != NX_NO_SEMAPHORE)
        signal(c, s->signal_sem, done, NX_SEM_SRC_QUEUE, s->queue);
}

/* One ring step on core c: data movement on a CC core and its DMA block. */
static void ring_step(const sched *S, core *c, const sy_step *s, unsigned k, uint64_t t0, uint64_t d,
                      uint64_t trig, uint64_t chunk)
{
    const unsigned n = S->n_cores;
    uint8_t cc = (uint8_t)(SY_CC_CORE0 + k % 4);
    uint64_t move_end = t0 + d * 2 / 3;
    nx_trace_record r = {.kind = NX_REC_CC_INSTR, .ts = t0, .end = move_end,
                         .u.cc_instr = {.cc_core = cc, .trigger_engine = s->engine, .description = S->refs->advance,
                                        .collective = s->aux, .trigger_ts = trig}};
    emit(c, &r, SY_F_END | SY_F_TRIG);
    uint32_t block = c->next_block[SY_Q_CCRING]++;
    nx_trace_record br = {.kind = NX_REC_DMA_BLOCK, .ts = t0,
                          .u.block = {.queue = SY_Q_CCRING, .block_id = block, .descriptor = S->b->ring_desc,
                                      .trigger_pc = NX_NO_PC, .trigger_engine = NX_ENGINE_NONE}};
    emit(c, &br, SY_F_BLOCK);
    run_packets(S, c, SY_Q_CCRING, block, t0, chunk);
    if (k + 1 < n) {   /* reduce-scatter half: add the received chunk */
        r.ts = move_end, r.end = t0 + d, r.u.cc_instr.description = S->refs->reduce;
        emit(c, &r, SY_F_END | SY_F_TRIG);
    }
}

/* A collective on every core: it starts when the last rank has triggered it. */
static void run_cc(const sched *S, uint32_t i)
{
    const sy_step *s = &S->b->steps[i];
    const unsigned n = S->n_cores, steps = 2 * (n - 1);
    uint64_t start = 0;
    for (unsigned c = 0; c < n; c++)
        if (S->cores[c].end[s->trigger] > start)
            start = S->cores[c].end[s->trigger];
    start += 280;
    const uint64_t chunk = s->ticks / n ? s->ticks / n : 1;
    const uint64_t d = SY_US(2) + chunk * 10 / RING_BYTES_PER_TICK_X10;
    const uint64_t end = start + steps * d;
    for (unsigned ci = 0; ci < n; ci++) {
        core *c = &S->cores[ci];
        uint64_t trig = c->end[s->trigger];
        nx_trace_record r = {.kind = NX_REC_CC_OP, .ts = start, .end = end, .u.cc_op = {s->aux, trig}};
        nx_trace_record w = {.kind = NX_REC_CC_INSTR, .ts = trig + 20, .end = start,
                             .u.cc_instr = {.cc_core = SY_CC_CORE0, .trigger_engine = s->engine,
                                            .description = S->refs->wait, .collective = s->aux, .trigger_ts = trig}};
        emit(c, &w, SY_F_END | SY_F_TRIG);
        emit(c, &r, SY_F_END | SY_F_TRIG);
        for (unsigned k = 0; k < steps; k++)
            ring_step(S, c, s, k, start + k * d, d, trig, chunk);
        c->end[i] = end;
        if (s->signal_sem != NX_NO_SEMAPHORE)
            signal(c, s->signal_sem, end, NX_SEM_SRC_CC_CORE, (uint16_t)(SY_CC_CORE0 + (steps - 1) % 4));
    }
}

/* After the final Sync instruction every semaphore goes back to 0. */
static void reset_semaphores(core *c, uint64_t at)
{
    for (uint16_t s = 0; s < SY_N_SEMS; s++) {
        if (c->sem[s] == 0)
            continue;
        c->sem[s] = 0;
        nx_trace_record r = {.kind = NX_REC_SEMAPHORE, .ts = at,
                             .u.sem = {.semaphore = s, .value = 0, .source_kind = NX_SEM_SRC_ENGINE,
                                       .source = NX_ENGINE_SYNC, .op = NX_SEM_SET,
                                       .timing = NX_SEM_TIMING_COMPLETE, .update_mode = 0}};
        emit(c, &r, 0);
    }
}

static int cmp_pending(const void *a, const void *b)
{
    const pending *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts core c's records into its template; the execution record ends at len. */
static int finish_template(core *c, uint64_t len, sy_template *t)
{
    nx_put_u64(c->recs[0].rec + 16, len);
    qsort(c->recs, c->n, sizeof *c->recs, cmp_pending);
    t->recs = malloc(c->n * NX_TRACE_RECORD_SIZE);
    t->flags = malloc(c->n);
    if (!t->recs || !t->flags)
        return -1;
    t->n = c->n;
    for (size_t i = 0; i < c->n; i++) {
        memcpy(t->recs + i * NX_TRACE_RECORD_SIZE, c->recs[i].rec, NX_TRACE_RECORD_SIZE);
        t->flags[i] = c->recs[i].flags;
        t->count[c->recs[i].rec[0]]++;
    }
    return 0;
}

static int init_cores(sched *S, const sy_plan *plan)
{
    S->cores = calloc(S->n_cores, sizeof *S->cores);
    if (!S->cores)
        return -1;
    for (unsigned i = 0; i < S->n_cores; i++) {
        core *c = &S->cores[i];
        c->rng = sy_seed(plan->seed, i, 0x5c4ed);
        c->end = calloc(S->b->n_steps ? S->b->n_steps : 1, sizeof *c->end);
        if (!c->end)
            return -1;
        /* The execution record comes first; its end is known at the end. */
        nx_trace_record r = {.kind = NX_REC_EXECUTION, .ts = 0, .end = 0};
        emit(c, &r, SY_F_END | SY_F_EXEC);
    }
    return 0;
}

static void free_cores(sched *S)
{
    for (unsigned i = 0; S->cores && i < S->n_cores; i++) {
        free(S->cores[i].end);
        free(S->cores[i].recs);
    }
    free(S->cores);
}

static void run_steps(sched *S)
{
    for (uint32_t i = 0; i < S->b->n_steps; i++) {
        const sy_step *s = &S->b->steps[i];
        if (s->kind == SY_CC) {
            run_cc(S, i);
            continue;
        }
        for (unsigned c = 0; c < S->n_cores; c++)
            (s->kind == SY_INSTR ? run_instr : run_dma)(S, &S->cores[c], i);
    }
}

int sy_schedule(const sy_builder *b, const sy_cc_refs *refs, sy_plan *plan)
{
    sched S = {.b = b, .refs = refs, .n_cores = plan->cores};
    int rc = -1;
    plan->tpl = calloc(plan->cores, sizeof *plan->tpl);
    if (!plan->tpl || init_cores(&S, plan) != 0)
        goto out;
    run_steps(&S);
    uint64_t len = 0;
    for (unsigned i = 0; i < S.n_cores; i++) {
        core *c = &S.cores[i];
        reset_semaphores(c, c->engine_free[NX_ENGINE_SYNC]);
        for (size_t k = 0; k < c->n; k++) {
            uint64_t e = (c->recs[k].flags & SY_F_END) ? nx_get_u64(c->recs[k].rec + 16) : c->recs[k].ts;
            if (e > len)
                len = e;
        }
        if (c->failed)
            goto out;
    }
    plan->length = len;
    memcpy(plan->blocks_per_queue, S.cores[0].next_block, sizeof plan->blocks_per_queue);
    for (unsigned i = 0; i < S.n_cores; i++)
        if (finish_template(&S.cores[i], len, &plan->tpl[i]) != 0)
            goto out;
    rc = 0;
out:
    free_cores(&S);
    return rc;
}

void sy_templates_free(sy_plan *plan)
{
    for (unsigned i = 0; plan->tpl && i < plan->cores; i++) {
        free(plan->tpl[i].recs);
        free(plan->tpl[i].flags);
    }
    free(plan->tpl);
    plan->tpl = NULL;
}
