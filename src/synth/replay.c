/*
 * replay.c — turns each core's one-execution template into the trace of N
 * executions. Execution e replays the template through a piecewise-linear,
 * increasing time warp drawn from (seed, e) — the same for every core, so
 * collectives stay aligned — which changes every duration by a few percent but
 * keeps every order and dependency; block ids, execution index and CRCs are
 * rewritten, and the execution's own throttle and error notifications are
 * merged in at their time. Cost per record: a 40-byte copy and a few adds, which
 * is what lets synth write tens of millions of records per second.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_util.h"
#include "synth/synth_internal.h"

uint64_t sy_first_base(void)
{
    return SY_US(1000);   /* the first execution starts 1 ms after tick 0 */
}

void sy_exec_timing(const sy_plan *plan, uint32_t e, uint64_t base, sy_exec_time *t)
{
    uint64_t rng = sy_seed(plan->seed, e, 0x7157);
    const uint64_t L = plan->length;
    t->base = base;
    t->W[0] = 0;
    for (int i = 0; i <= SY_WARP_SEGMENTS; i++)
        t->T[i] = L * (uint64_t)i / SY_WARP_SEGMENTS;
    for (int i = 0; i < SY_WARP_SEGMENTS; i++) {
        t->scale[i] = (uint32_t)(65536 * sy_range(&rng, 960, 1070) / 1000);   /* -4 % .. +7 % */
        t->W[i + 1] = t->W[i] + ((t->T[i + 1] - t->T[i]) * t->scale[i] >> 16);
    }
    t->len = t->W[SY_WARP_SEGMENTS];
    t->gap = SY_US(sy_range(&rng, plan->d->gap_lo_us, plan->d->gap_hi_us)) + sy_range(&rng, 0, 1399);
}

static inline uint64_t warp_in(const sy_exec_time *t, int seg, uint64_t tick)
{
    return t->base + t->W[seg] + ((tick - t->T[seg]) * t->scale[seg] >> 16);
}

/* --- per-execution notifications ----------------------------------------------- */

typedef struct extra {
    nx_trace_record r;       /* template times */
    uint8_t flags;
} extra;

static void sort_extras(extra *x, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && x[k].r.ts < x[k - 1].r.ts; k--) {
            extra tmp = x[k];
            x[k] = x[k - 1];
            x[k - 1] = tmp;
        }
}

/* Throttling, a hardware warning and a custom notification, each with the
 * preset's probability (the tiny preset's first execution has all three). */
static size_t extras(const sy_plan *p, unsigned core, uint32_t e, extra out[3])
{
    uint64_t rng = sy_seed(p->seed, e, 0xe7700 + core);
    const uint64_t L = p->length ? p->length : 1;
    const bool all = p->preset == NX_SYNTH_TINY && e == 0;
    size_t n = 0;
    if (all || sy_next(&rng) % p->d->throttle_every == 0) {
        static const uint16_t KN[3][2] = {{3, 4}, {1, 2}, {7, 8}};
        unsigned pick = (unsigned)sy_range(&rng, 0, 2);
        uint64_t t0 = sy_range(&rng, 0, L * 3 / 4), len = sy_range(&rng, L / 50, L / 10) + 1;
        out[n++] = (extra){{.kind = NX_REC_THROTTLE, .ts = t0, .end = t0 + len,
                            .u.throttle = {(uint8_t)sy_range(&rng, 0, 1), KN[pick][0], KN[pick][1]}}, SY_F_END};
    }
    if (all || sy_next(&rng) % p->d->error_every == 0)
        out[n++] = (extra){{.kind = NX_REC_ERROR, .ts = sy_range(&rng, 0, L),
                            .u.error = {.type = NX_ERR_WARNINGS, .error_type_id = 7, .payload = sy_next(&rng) >> 40,
                                        .description = p->ref_oob, .metadata = p->ref_oob_meta}}, 0};
    if (all || sy_next(&rng) % p->d->notify_every == 0)
        out[n++] = (extra){{.kind = NX_REC_ERROR, .ts = L - L / 100,
                            .u.error = {.type = NX_ERR_CUSTOM_NOTIFICATION, .error_type_id = 1, .payload = e,
                                        .description = p->ref_notify, .metadata = 0}}, 0};
    sort_extras(out, n);
    return n;
}

/* --- replay ------------------------------------------------------------------------ */

typedef struct replay {
    const sy_plan *plan;
    const sy_template *tpl;
    const sy_exec_time *t;
    uint32_t e;
    uint64_t crc_seed;
} replay;

/* Rewrites the times and per-execution fields of one record copied to o. */
static inline void patch(const replay *x, unsigned char *o, uint8_t f, int seg, size_t i)
{
    const sy_exec_time *t = x->t;
    if (f & SY_F_END) {
        uint64_t v = nx_get_u64(o + 16);
        int j = seg;
        while (j + 1 < SY_WARP_SEGMENTS && v >= t->T[j + 1])
            j++;
        nx_put_u64(o + 16, warp_in(t, j, v));
    }
    if (f & SY_F_TRIG) {
        uint64_t v = nx_get_u64(o + 24);
        int j = seg;
        while (j > 0 && v < t->T[j])
            j--;
        if (v != NX_NO_TICKS)
            nx_put_u64(o + 24, warp_in(t, j, v));
    }
    if (f & SY_F_BLOCK)
        nx_put_u32(o + 4, nx_get_u32(o + 4) + x->e * x->plan->blocks_per_queue[nx_get_u16(o + 2)]);
    if (f & SY_F_EXEC)
        nx_put_u32(o + 4, x->e);
    if (f & SY_F_CRC_OUT)
        nx_put_u32(o + 32, (uint32_t)sy_mix(x->crc_seed ^ i));
    if (f & SY_F_CRC_IN)
        nx_put_u32(o + 28, (uint32_t)sy_mix(x->crc_seed ^ ~(uint64_t)i));
}

/* Replayed records go through a small buffer straight to write(2). */
#define SINK_RECORDS 8192
typedef struct sink {
    unsigned char *buf;
    size_t n;
    nx_trace_writer *tw;
    nx_error *err;
    int rc;
    uint64_t bytes;
} sink;

static void sink_flush(sink *k)
{
    if (k->n && k->rc == 0)
        k->rc = nx_trace_writer_put_raw(k->tw, k->buf, k->n, k->err);
    k->bytes += k->n * NX_TRACE_RECORD_SIZE;
    k->n = 0;
}

static inline unsigned char *sink_slot(sink *k)
{
    if (k->n == SINK_RECORDS)
        sink_flush(k);
    return k->buf + k->n++ * NX_TRACE_RECORD_SIZE;
}

static void put_extra(const replay *x, const extra *ex, sink *k)
{
    unsigned char *o = sink_slot(k);
    nx_trace_encode(&ex->r, o);
    int seg = 0;
    while (seg + 1 < SY_WARP_SEGMENTS && ex->r.ts >= x->t->T[seg + 1])
        seg++;
    nx_put_u64(o + 8, warp_in(x->t, seg, ex->r.ts));
    patch(x, o, ex->flags, seg, 0);
}

/* One execution: the template with the extras merged in at their time. */
static void replay_exec(const replay *x, const extra *ex, size_t n_ex, sink *out)
{
    const sy_template *tpl = x->tpl;
    const sy_exec_time *t = x->t;
    size_t k = 0;
    int seg = 0;
    for (size_t i = 0; i < tpl->n; i++) {
        const unsigned char *src = tpl->recs + i * NX_TRACE_RECORD_SIZE;
        uint64_t ts = nx_get_u64(src + 8);
        while (k < n_ex && ex[k].r.ts <= ts)
            put_extra(x, &ex[k++], out);
        unsigned char *o = sink_slot(out);
        memcpy(o, src, NX_TRACE_RECORD_SIZE);
        while (seg + 1 < SY_WARP_SEGMENTS && ts >= t->T[seg + 1])
            seg++;
        nx_put_u64(o + 8, warp_in(t, seg, ts));
        if (tpl->flags[i])
            patch(x, o, tpl->flags[i], seg, i);
    }
    while (k < n_ex)
        put_extra(x, &ex[k++], out);
}

/* --- one thread per group of cores --------------------------------------------------- */

typedef struct worker {
    const sy_plan *plan;
    unsigned first, stride;
    uint64_t records[NX_REC_KIND_MAX + 1];
    uint64_t bytes;
    int rc;
    nx_error err;
} worker;

static int write_core(worker *w, unsigned core, unsigned char *buf)
{
    const sy_plan *p = w->plan;
    nx_trace_header h = p->header;
    h.neuron_device_idx = core / 2;   /* two NeuronCores per Neuron device, as on trn1 */
    h.neuroncore_idx = core % 2;
    char name[NX_CAP_NAME_MAX];
    nx_cap_trace_name(h.program_hash, h.neuron_device_idx, h.neuroncore_idx, name);
    char *path = nx_cap_join(p->dir, name);
    if (!path)
        return nx_cap_fail(&w->err, p->dir, "out of memory");
    sink out = {.buf = buf, .err = &w->err};
    int rc = nx_trace_writer_open(path, &h, &out.tw, &w->err);
    free(path);
    if (rc != 0)
        return -1;
    uint64_t base = sy_first_base();
    for (uint32_t e = 0; e < p->executions && out.rc == 0; e++) {
        sy_exec_time t;
        sy_exec_timing(p, e, base, &t);
        extra ex[3];
        size_t n_ex = extras(p, core, e, ex);
        replay x = {p, &p->tpl[core], &t, e, sy_seed(p->seed, core, e)};
        replay_exec(&x, ex, n_ex, &out);
        for (size_t k = 0; k < n_ex; k++)
            w->records[ex[k].r.kind]++;
        base += t.len + t.gap;
    }
    sink_flush(&out);
    for (int k = 0; k <= NX_REC_KIND_MAX; k++)
        w->records[k] += p->tpl[core].count[k] * p->executions;
    w->bytes += out.bytes + NX_TRACE_HEADER_SIZE;
    rc = out.rc;
    return nx_trace_writer_close(out.tw, rc == 0 ? &w->err : NULL) != 0 || rc != 0 ? -1 : 0;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    unsigned char *buf = malloc(SINK_RECORDS * NX_TRACE_RECORD_SIZE);
    if (!buf) {
        w->rc = nx_cap_fail(&w->err, w->plan->dir, "out of memory for the replay buffer");
        return NULL;
    }
    for (unsigned c = w->first; c < w->plan->cores && w->rc == 0; c += w->stride)
        w->rc = write_core(w, c, buf);
    free(buf);
    return NULL;
}

int sy_replay_all(const sy_plan *plan, unsigned threads, nx_synth_stats *stats, nx_error *err)
{
    if (threads == 0 || threads > plan->cores)
        threads = plan->cores;
    worker *ws = calloc(threads, sizeof *ws);
    pthread_t *tid = calloc(threads, sizeof *tid);
    if (!ws || !tid) {
        free(ws);
        free(tid);
        nx_error_set(err, "out of memory starting %u writer threads", threads);
        return -1;
    }
    for (unsigned i = 0; i < threads; i++)
        ws[i] = (worker){.plan = plan, .first = i, .stride = threads};
    unsigned started = 1;
    while (started < threads && pthread_create(&tid[started], NULL, worker_main, &ws[started]) == 0)
        started++;
    for (unsigned i = started; i < threads; i++)   /* threads that could not start: do their work here */
        worker_main(&ws[i]);
    worker_main(&ws[0]);
    int rc = 0;
    for (unsigned i = 0; i < threads; i++) {
        if (i > 0 && i < started)
            pthread_join(tid[i], NULL);
        if (ws[i].rc != 0 && rc == 0) {
            nx_error_set(err, "%s", ws[i].err.msg);
            rc = -1;
        }
        for (int k = 0; k <= NX_REC_KIND_MAX; k++) {
            stats->records[k] += ws[i].records[k];
            stats->total_records += ws[i].records[k];
        }
        stats->device_bytes += ws[i].bytes;
    }
    free(ws);
    free(tid);
    return rc;
}
