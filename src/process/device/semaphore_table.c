/*
 * semaphore_table.c — the SemaphoreUpdate table: one row per `semaphore` record
 * of every device trace, in the pipeline's global start-time order (so the
 * table is sorted by timestamp with no buffering here).
 *
 * Columns (docs/capture-format.md, "4 semaphore"):
 *   timestamp             Unix ns of the record's ts.
 *   id                    the program's SEMAPHORES[semaphore].name, e.g. "S[12]".
 *   value                 the record's value (after the update).
 *   update_source         source_kind 0 (engine): the engine's display name
 *                         ("Tensor", "Vector", "Scalar", "GpSimd", "Sync");
 *                         1 (DMA queue): DMA_QUEUES[source].name;
 *                         2 (CC core): "CC<source>" in decimal, e.g. "CC3".
 *   double_set_or_clear   flags bit 0 (always written: true or false).
 *   update_mode           the raw i32 mode code.
 *   update_operation_type "sem_set", "sem_inc" or "sem_dec" from operation 0/1/2.
 *   update_trigger_timing "start" (1), "complete" (2); null when timing is 0.
 *   pcore_idx             the record's pcore.
 *
 * Every string is resolved without formatting per row: semaphore and queue
 * names point into the program, and the "CC<n>" names are built once per
 * program at open (n < min(cc_core_count, 65536), the reader's range).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"

#define SEM_COLS(X)                                                                                  \
    X(timestamp) X(id) X(value) X(update_source) X(double_set_or_clear) X(update_mode)                \
    X(update_operation_type) X(update_trigger_timing) X(pcore_idx)

enum {
#define X(name) SC_##name,
    SEM_COLS(X)
#undef X
    SC_COUNT
};

/* "CC<n>" for n < count, in one buffer of fixed 8-byte slots ("CC65535" fits). */
typedef struct cc_names {
    char *buf;
    size_t count;
} cc_names;

typedef struct semaphore_sink {
    nx_row r;
    size_t col[SC_COUNT];
    cc_names *cc;                    /* per program */
    size_t n_progs;
} semaphore_sink;

static void semaphore_free(semaphore_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_progs; i++)
        free(s->cc[i].buf);
    free(s->cc);
    free(s);
}

static int semaphore_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    static const char *const names[] = {
#define X(name) #name,
        SEM_COLS(X)
#undef X
    };
    semaphore_sink *s = calloc(1, sizeof *s);
    if (s)
        s->cc = calloc(ctx->n_progs + 1, sizeof *s->cc);
    if (!s || !s->cc) {
        free(s);
        snprintf(err->msg, sizeof err->msg, "SemaphoreUpdate: out of memory");
        return -1;
    }
    s->n_progs = ctx->n_progs;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        size_t n = ctx->progs[p]->hw.cc_core_count;
        if (n > 65536)
            n = 65536;   /* the record's source is a u16 */
        if (n == 0)
            continue;
        s->cc[p].buf = malloc(n * 8);
        if (!s->cc[p].buf) {
            semaphore_free(s);
            snprintf(err->msg, sizeof err->msg, "SemaphoreUpdate: out of memory");
            return -1;
        }
        s->cc[p].count = n;
        for (size_t i = 0; i < n; i++)
            snprintf(s->cc[p].buf + 8 * i, 8, "CC%u", (unsigned)(i & 0xFFFFu));   /* i < 65536 */
    }
    if (nx_row_open(&s->r, &ctx->dest, "SemaphoreUpdate", err) != 0) {
        semaphore_free(s);
        return -1;
    }
    for (size_t i = 0; i < SC_COUNT; i++)
        s->col[i] = nx_row_col(&s->r, names[i]);
    *state = s;
    return 0;
}

static int semaphore_event(void *state, const nx_device_event *ev, nx_error *err)
{
    semaphore_sink *s = state;
    const nx_program *g = ev->trace->prog;
    const nx_trace_record *rec = ev->rec;
    unsigned sem = rec->u.sem.semaphore, src = rec->u.sem.source;
    if (sem >= g->n_semaphores) {   /* the reader rejects this; kept as a guard */
        snprintf(err->msg, sizeof err->msg, "SemaphoreUpdate: %s: semaphore %u not in the program", ev->trace->path,
                 sem);
        return -1;
    }
    const char *source = NULL;
    switch (rec->u.sem.source_kind) {
    case NX_SEM_SRC_ENGINE: source = nx_engine_display_name(src); break;
    case NX_SEM_SRC_QUEUE: source = src < g->n_queues ? g->queues[src].name : NULL; break;
    case NX_SEM_SRC_CC_CORE: {
        const cc_names *cc = &s->cc[ev->trace->prog_index];
        source = src < cc->count ? cc->buf + 8 * (size_t)src : NULL;
        break;
    }
    default: break;
    }
    if (nx_row_begin(&s->r, err) != 0)
        return -1;
    nx_row *r = &s->r;
    nx_row_i64(r, s->col[SC_timestamp], ev->start_ns);
    nx_row_str(r, s->col[SC_id], g->semaphores[sem].name);
    nx_row_i64(r, s->col[SC_value], rec->u.sem.value);
    nx_row_opt_str(r, s->col[SC_update_source], source);
    nx_row_bool(r, s->col[SC_double_set_or_clear], (rec->u.sem.flags & NX_SEM_FLAG_DOUBLE) != 0);
    nx_row_i64(r, s->col[SC_update_mode], rec->u.sem.update_mode);
    nx_row_opt_str(r, s->col[SC_update_operation_type], nx_sem_op_name(rec->u.sem.op));
    nx_row_opt_str(r, s->col[SC_update_trigger_timing], nx_sem_timing_name(rec->u.sem.timing));
    nx_row_i64(r, s->col[SC_pcore_idx], rec->pcore);
    return nx_row_end(r, err);
}

static int semaphore_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    (void)ctx;
    semaphore_sink *s = state;
    int rc = nx_row_close(&s->r, true, tables, err);
    semaphore_free(s);
    return rc;
}

static void semaphore_abort(void *state)
{
    semaphore_sink *s = state;
    nx_row_discard(&s->r);
    semaphore_free(s);
}

const nx_device_sink nx_sink_semaphore = {
    .name = "SemaphoreUpdate",
    .kinds = NX_KIND_BIT(NX_REC_SEMAPHORE),
    .open = semaphore_open,
    .event = semaphore_event,
    .finish = semaphore_finish,
    .abort = semaphore_abort,
};
