/*
 * execution_tables.c — ExecutionInfo (one row per `execution` record).
 *
 * ExecutionInfo columns:
 *   execution_index      the record's index (int32 column: a u32 above 2^31-1
 *                        is stored as the same 32 bits, i.e. negative).
 *   neff_name            the program's network_name (null when empty).
 *   execution_start_ts, execution_end_ts
 *                        Unix ns of the record's start and end.
 *   num_subgraphs        the program's num_subgraphs (null when -1).
 *   row_count            the number of `instruction` records of the same trace
 *                        whose start lies in [execution_start_ts,
 *                        execution_end_ts] (both ends included) and that the
 *                        pipeline delivers after the execution record (an
 *                        instruction sharing the execution's start but stored
 *                        before it in the file is not counted). Overlapping
 *                        executions of a trace each count such an instruction.
 * Rows are sorted by execution_start_ts (ties: delivery order). A row is
 * complete only when no later instruction can fall in its span, i.e. once a
 * record starting after its end arrives; finished rows wait in a reorder heap
 * until no open execution starts earlier. Memory is bounded by the executions
 * in flight, not by the number of executions or instructions.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/device/reorder.h"
#include "process/row.h"

typedef struct exec_row {
    int64_t start, end;
    int64_t count;
    uint32_t index;
    size_t prog;
} exec_row;

typedef struct open_list {
    exec_row *v;
    size_t n, cap;
} open_list;

typedef struct execution_sink {
    nx_row r;
    size_t c_idx, c_neff, c_start, c_end, c_sub, c_rows;
    open_list *open;                 /* per trace: executions still counting */
    size_t n_traces;
    size_t n_open;                   /* over all traces */
    int64_t min_open_end;            /* INT64_MAX when none */
    nx_reorder done;                 /* finished rows, keyed by start */
    const nx_process_ctx *ctx;
} execution_sink;

static void exec_free(execution_sink *s)
{
    if (!s)
        return;
    if (s->open)
        for (size_t i = 0; i < s->n_traces; i++)
            free(s->open[i].v);
    free(s->open);
    nx_reorder_free(&s->done);
    free(s);
}

static int exec_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    execution_sink *s = calloc(1, sizeof *s);
    if (s)
        s->open = calloc(ctx->n_traces + 1, sizeof *s->open);
    if (!s || !s->open) {
        free(s);
        snprintf(err->msg, sizeof err->msg, "ExecutionInfo: out of memory");
        return -1;
    }
    s->n_traces = ctx->n_traces;
    s->min_open_end = INT64_MAX;
    s->ctx = ctx;
    nx_reorder_init(&s->done, sizeof(exec_row));
    if (nx_row_open(&s->r, &ctx->dest, "ExecutionInfo", err) != 0) {
        exec_free(s);
        return -1;
    }
    s->c_idx = nx_row_col(&s->r, "execution_index");
    s->c_neff = nx_row_col(&s->r, "neff_name");
    s->c_start = nx_row_col(&s->r, "execution_start_ts");
    s->c_end = nx_row_col(&s->r, "execution_end_ts");
    s->c_sub = nx_row_col(&s->r, "num_subgraphs");
    s->c_rows = nx_row_col(&s->r, "row_count");
    *state = s;
    return 0;
}

static int write_row(execution_sink *s, const exec_row *x, nx_error *err)
{
    const nx_program *g = s->ctx->progs[x->prog];
    nx_row *r = &s->r;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, s->c_idx, (int32_t)x->index);   /* int32 column: u32 bits */
    nx_row_opt_str(r, s->c_neff, g->header.network_name);
    nx_row_i64(r, s->c_start, x->start);
    nx_row_i64(r, s->c_end, x->end);
    nx_row_opt_i64(r, s->c_sub, g->header.num_subgraphs);
    nx_row_i64(r, s->c_rows, x->count);
    return nx_row_end(r, err);
}

/* Moves executions that ended before `now` to the reorder heap, then writes
 * the finished rows no open execution can precede. */
static int settle(execution_sink *s, int64_t now, nx_error *err)
{
    if (now > s->min_open_end) {
        s->min_open_end = INT64_MAX;
        for (size_t t = 0; t < s->n_traces; t++) {
            open_list *l = &s->open[t];
            size_t keep = 0;
            for (size_t i = 0; i < l->n; i++) {
                if (l->v[i].end < now) {
                    if (nx_reorder_push(&s->done, l->v[i].start, &l->v[i]) != 0) {
                        snprintf(err->msg, sizeof err->msg, "ExecutionInfo: out of memory");
                        return -1;
                    }
                    s->n_open--;
                } else {
                    if (l->v[i].end < s->min_open_end)
                        s->min_open_end = l->v[i].end;
                    l->v[keep++] = l->v[i];
                }
            }
            l->n = keep;
        }
    }
    int64_t watermark = now;
    if (s->n_open > 0)
        for (size_t t = 0; t < s->n_traces; t++)
            for (size_t i = 0; i < s->open[t].n; i++)
                if (s->open[t].v[i].start < watermark)
                    watermark = s->open[t].v[i].start;
    while (nx_reorder_ready(&s->done, watermark)) {
        if (write_row(s, nx_reorder_top(&s->done), err) != 0)
            return -1;
        nx_reorder_pop(&s->done);
    }
    return 0;
}

static int exec_event(void *state, const nx_device_event *ev, nx_error *err)
{
    execution_sink *s = state;
    open_list *l = &s->open[ev->trace->index];
    if (ev->rec->kind == NX_REC_INSTRUCTION) {
        for (size_t i = 0; i < l->n; i++)
            if (ev->start_ns >= l->v[i].start && ev->start_ns <= l->v[i].end)
                l->v[i].count++;
        /* Settling costs a scan only when an execution may have ended. */
        return ev->start_ns > s->min_open_end ? settle(s, ev->start_ns, err) : 0;
    }
    if (settle(s, ev->start_ns, err) != 0)
        return -1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        exec_row *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            snprintf(err->msg, sizeof err->msg, "ExecutionInfo: out of memory");
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (exec_row){ev->start_ns, ev->end_ns, 0, ev->rec->u.execution.index, ev->trace->prog_index};
    s->n_open++;
    if (ev->end_ns < s->min_open_end)
        s->min_open_end = ev->end_ns;
    return 0;
}

static int exec_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    (void)ctx;
    execution_sink *s = state;
    int rc = 0;
    /* Every open execution is complete now: close them all and drain. */
    for (size_t t = 0; t < s->n_traces && rc == 0; t++)
        for (size_t i = 0; i < s->open[t].n && rc == 0; i++)
            if (nx_reorder_push(&s->done, s->open[t].v[i].start, &s->open[t].v[i]) != 0) {
                snprintf(err->msg, sizeof err->msg, "ExecutionInfo: out of memory");
                rc = -1;
            }
    while (rc == 0 && nx_reorder_ready(&s->done, INT64_MAX)) {
        rc = write_row(s, nx_reorder_top(&s->done), err);
        nx_reorder_pop(&s->done);
    }
    rc = nx_row_finish(&s->r, rc, tables, err);
    exec_free(s);
    return rc;
}

static void exec_abort(void *state)
{
    execution_sink *s = state;
    nx_row_discard(&s->r);
    exec_free(s);
}

const nx_device_sink nx_sink_execution = {
    .name = "ExecutionInfo",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION) | NX_KIND_BIT(NX_REC_EXECUTION),
    .open = exec_open,
    .event = exec_event,
    .finish = exec_finish,
    .abort = exec_abort,
};
