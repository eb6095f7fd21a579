/*
 * activity_tables.c — ActiveTime and OpcodeSummary: when each engine was busy,
 * and which opcodes kept it busy.
 *
 * Rules (docs/processing.md, "Activity, summaries and roll-ups"):
 *
 * - A lane is one physical core of one device trace: (trace, pcore_idx). Lanes
 *   are never merged with each other, so two NeuronCores busy at the same time
 *   give two ActiveTime rows (the table has no trace column; rows of different
 *   traces may overlap, rows of one lane and engine never do).
 * - An instruction's busy interval is its record's [start_ts, end_ts] exactly.
 *   evt_wait_time_ns is the time the instruction waited on its semaphore BEFORE
 *   its start (capture format: "time waited ... before starting"), so it lies
 *   outside [start_ts, end_ts] and nothing has to be cut out of the interval.
 * - ActiveTime: per (lane, engine), the union of the busy intervals. Two
 *   intervals merge when they overlap or touch (next start <= current end).
 *   One row per merged interval: start_ts, end_ts, engine, pcore_idx,
 *   duration_ns = end_ts - start_ts. Rows are sorted by start_ts (ties: the
 *   order the intervals closed). An interval is complete only when a later
 *   instruction of its lane and engine starts after its end (or at the end of
 *   the capture), so closed intervals wait in a reorder heap until no open
 *   interval of any lane/engine can start earlier (watermark = smallest start
 *   of the open intervals).
 * - OpcodeSummary: one row per (engine, opcode) that ran, summed over all lanes:
 *     instruction_count   = number of instruction records,
 *     instruction_time_ns = sum of (end_ts - start_ts),
 *     active_time_ns      = sum over lanes of the length of the union of that
 *                           opcode's intervals on that lane and engine (merge on
 *                           overlap or touch, as above),
 *     active_time_percent = 100 * active_time_ns / (the engine's total active
 *                           time = sum of that engine's ActiveTime durations),
 *                           0 when the engine was never active.
 *   Rows are ordered by engine number (tensor, vector, scalar, gpsimd, sync),
 *   then opcode (byte order).
 *
 * Memory: lanes x engines for ActiveTime, lanes x distinct (engine, opcode)
 * pairs for OpcodeSummary, plus the reorder heap, which holds the closed
 * intervals that started after the oldest still-open one. That is what sorting
 * by start costs: an engine busy without a single gap for a long stretch keeps
 * the other engines' intervals of that stretch waiting (synth's engines go idle
 * between executions, which bounds it by one execution).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/device/reorder.h"
#include "process/row.h"
#include "process/device/sum_guard.h"

typedef struct span {
    int64_t s, e;
    bool open;
} span;

typedef struct active_item {
    int64_t s, e;
    uint8_t engine, pcore;
} active_item;

typedef struct opslot {
    uint8_t engine;
    const char *opcode;              /* points into a program's strings */
    int64_t count, time_ns, active_ns;
} opslot;

typedef struct activity_sink {
    size_t *lane_base;               /* per trace: first lane */
    uint8_t *lane_pcore;             /* per lane */
    size_t n_lanes;
    span *eng;                       /* n_lanes x NX_ENGINE_COUNT */
    int64_t eng_active[NX_ENGINE_COUNT];
    opslot *slots;
    size_t n_slots, cap_slots;
    uint32_t **slot_of;              /* per program: instruction index -> slot */
    size_t n_progs;
    span *opspan;                    /* n_lanes x n_slots */
    nx_reorder q;
    nx_row r;
    size_t c_start, c_end, c_engine, c_pcore, c_dur;
    nx_sum_guard sums;
} activity_sink;

static void activity_free(activity_sink *s)
{
    if (!s)
        return;
    if (s->slot_of)
        for (size_t i = 0; i < s->n_progs; i++)
            free(s->slot_of[i]);
    free(s->slot_of);
    free(s->lane_base);
    free(s->lane_pcore);
    free(s->eng);
    free(s->slots);
    free(s->opspan);
    nx_reorder_free(&s->q);
    free(s);
}

static int oom(nx_error *err)
{
    snprintf(err->msg, sizeof err->msg, "ActiveTime/OpcodeSummary: out of memory");
    return -1;
}

/* Slot of (engine, opcode), added when new. Linear: runs once per program
 * instruction at open, and programs have few distinct opcodes. */
static long intern_slot(activity_sink *s, uint8_t engine, const char *opcode)
{
    for (size_t i = 0; i < s->n_slots; i++)
        if (s->slots[i].engine == engine && strcmp(s->slots[i].opcode, opcode) == 0)
            return (long)i;
    if (s->n_slots == s->cap_slots) {
        size_t cap = s->cap_slots ? 2 * s->cap_slots : 32;
        opslot *v = realloc(s->slots, cap * sizeof *v);
        if (!v)
            return -1;
        s->slots = v;
        s->cap_slots = cap;
    }
    s->slots[s->n_slots] = (opslot){.engine = engine, .opcode = opcode};
    return (long)s->n_slots++;
}

static int activity_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    *state = NULL;
    if (ctx->n_traces == 0)
        return 0;
    activity_sink *s = calloc(1, sizeof *s);
    if (!s)
        return oom(err);
    nx_reorder_init(&s->q, sizeof(active_item));
    s->lane_base = calloc(ctx->n_traces, sizeof *s->lane_base);
    s->slot_of = calloc(ctx->n_progs ? ctx->n_progs : 1, sizeof *s->slot_of);
    if (!s->lane_base || !s->slot_of)
        goto nomem;
    s->n_progs = ctx->n_progs;
    for (size_t t = 0; t < ctx->n_traces; t++) {
        s->lane_base[t] = s->n_lanes;
        s->n_lanes += ctx->traces[t].hdr.pcore_count;
    }
    s->lane_pcore = calloc(s->n_lanes, 1);
    s->eng = calloc(s->n_lanes * NX_ENGINE_COUNT, sizeof *s->eng);
    if (!s->lane_pcore || !s->eng)
        goto nomem;
    for (size_t t = 0; t < ctx->n_traces; t++)
        for (uint32_t p = 0; p < ctx->traces[t].hdr.pcore_count; p++)
            s->lane_pcore[s->lane_base[t] + p] = (uint8_t)p;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *pr = ctx->progs[p];
        s->slot_of[p] = malloc((pr->n_instrs ? pr->n_instrs : 1) * sizeof(uint32_t));
        if (!s->slot_of[p])
            goto nomem;
        for (size_t i = 0; i < pr->n_instrs; i++) {
            long k = intern_slot(s, pr->instrs[i].engine, pr->instrs[i].opcode);
            if (k < 0)
                goto nomem;
            s->slot_of[p][i] = (uint32_t)k;
        }
    }
    s->opspan = calloc(s->n_lanes * (s->n_slots ? s->n_slots : 1), sizeof *s->opspan);
    if (!s->opspan)
        goto nomem;
    if (nx_row_open(&s->r, &ctx->dest, "ActiveTime", err) != 0) {
        activity_free(s);
        return -1;
    }
    s->c_start = nx_row_col(&s->r, "start_ts");
    s->c_end = nx_row_col(&s->r, "end_ts");
    s->c_engine = nx_row_col(&s->r, "engine");
    s->c_pcore = nx_row_col(&s->r, "pcore_idx");
    s->c_dur = nx_row_col(&s->r, "duration_ns");
    *state = s;
    return 0;
nomem:
    activity_free(s);
    return oom(err);
}

static int write_active(activity_sink *s, const active_item *it, nx_error *err)
{
    if (nx_row_begin(&s->r, err) != 0)
        return -1;
    nx_row_i64(&s->r, s->c_start, it->s);
    nx_row_i64(&s->r, s->c_end, it->e);
    nx_row_str(&s->r, s->c_engine, nx_engine_name(it->engine));
    nx_row_i64(&s->r, s->c_pcore, it->pcore);
    nx_row_i64(&s->r, s->c_dur, it->e - it->s);
    return nx_row_end(&s->r, err);
}

/* Writes the closed intervals that no open interval can precede. */
static int flush_active(activity_sink *s, nx_error *err)
{
    int64_t wm = INT64_MAX;
    for (size_t i = 0; i < s->n_lanes * NX_ENGINE_COUNT; i++)
        if (s->eng[i].open && s->eng[i].s < wm)
            wm = s->eng[i].s;
    while (nx_reorder_ready(&s->q, wm)) {
        if (write_active(s, nx_reorder_top(&s->q), err) != 0)
            return -1;
        nx_reorder_pop(&s->q);
    }
    return 0;
}

static int close_engine_span(activity_sink *s, size_t lane, unsigned engine, nx_error *err)
{
    span *sp = &s->eng[lane * NX_ENGINE_COUNT + engine];
    if (!sp->open)
        return 0;
    sp->open = false;
    nx_sum_add(&s->sums, &s->eng_active[engine], sp->e - sp->s, "engine active time");
    active_item it = {.s = sp->s, .e = sp->e, .engine = (uint8_t)engine, .pcore = s->lane_pcore[lane]};
    if (nx_reorder_push(&s->q, sp->s, &it) != 0)
        return oom(err);
    return 0;
}

static void close_op_span(activity_sink *s, span *sp, opslot *slot)
{
    if (sp->open) {
        nx_sum_add(&s->sums, &slot->active_ns, sp->e - sp->s, "active_time_ns");
        sp->open = false;
    }
}

static int activity_event(void *state, const nx_device_event *ev, nx_error *err)
{
    activity_sink *s = state;
    const nx_trace_record *rec = ev->rec;
    const nx_program *pr = ev->trace->prog;
    const nx_prog_instr *in = ev->instr;
    size_t lane = s->lane_base[ev->trace->index] + rec->pcore;
    unsigned engine = rec->u.instr.engine;
    int64_t a = ev->start_ns, b = ev->end_ns;
    s->sums.at = ev;

    /* Opcode statistics. */
    uint32_t k = s->slot_of[ev->trace->prog_index][in - pr->instrs];
    opslot *slot = &s->slots[k];
    slot->count++;
    nx_sum_add(&s->sums, &slot->time_ns, b - a, "instruction_time_ns");
    span *os = &s->opspan[lane * s->n_slots + k];
    if (os->open && a <= os->e) {
        if (b > os->e)
            os->e = b;
    } else {
        close_op_span(s, os, slot);
        *os = (span){.s = a, .e = b, .open = true};
    }
    if (nx_sum_error(&s->sums, "OpcodeSummary", NULL, err) != 0)
        return -1;

    /* Engine busy intervals. */
    span *sp = &s->eng[lane * NX_ENGINE_COUNT + engine];
    if (sp->open && a <= sp->e) {
        if (b > sp->e)
            sp->e = b;
        return 0;
    }
    bool closed = sp->open;
    if (close_engine_span(s, lane, engine, err) != 0 || nx_sum_error(&s->sums, "OpcodeSummary", NULL, err) != 0)
        return -1;
    *sp = (span){.s = a, .e = b, .open = true};
    return closed ? flush_active(s, err) : 0;
}

static int cmp_slot(const void *pa, const void *pb)
{
    const opslot *a = pa, *b = pb;
    if (a->engine != b->engine)
        return a->engine < b->engine ? -1 : 1;
    return strcmp(a->opcode, b->opcode);
}

static int write_opcode_summary(activity_sink *s, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "OpcodeSummary", err) != 0)
        return -1;
    size_t c_engine = nx_row_col(&r, "engine"), c_opcode = nx_row_col(&r, "opcode"),
           c_count = nx_row_col(&r, "instruction_count"), c_time = nx_row_col(&r, "instruction_time_ns"),
           c_active = nx_row_col(&r, "active_time_ns"), c_pct = nx_row_col(&r, "active_time_percent");
    /* The slot table is no longer indexed after this point, so it may be sorted in place. */
    qsort(s->slots, s->n_slots, sizeof *s->slots, cmp_slot);
    for (size_t i = 0; i < s->n_slots; i++) {
        const opslot *o = &s->slots[i];
        if (o->count == 0)
            continue;
        int64_t total = s->eng_active[o->engine];
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_engine, nx_engine_name(o->engine));
        nx_row_str(&r, c_opcode, o->opcode);
        nx_row_i64(&r, c_count, o->count);
        nx_row_i64(&r, c_time, o->time_ns);
        nx_row_i64(&r, c_active, o->active_ns);
        nx_row_num(&r, c_pct, total > 0 ? 100.0 * (double)o->active_ns / (double)total : 0.0);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int activity_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    activity_sink *s = state;
    if (!s)
        return 0;
    int rc = 0;
    s->sums.at = NULL;
    for (size_t lane = 0; lane < s->n_lanes && rc == 0; lane++)
        for (unsigned e = 0; e < NX_ENGINE_COUNT && rc == 0; e++)
            rc = close_engine_span(s, lane, e, err);
    for (size_t lane = 0; lane < s->n_lanes; lane++)
        for (size_t k = 0; k < s->n_slots; k++)
            close_op_span(s, &s->opspan[lane * s->n_slots + k], &s->slots[k]);
    if (rc == 0)
        rc = nx_sum_error(&s->sums, "OpcodeSummary", ctx->n_traces == 1 ? ctx->traces[0].path : ctx->o->capture_dir,
                          err);
    if (rc == 0)
        rc = flush_active(s, err);
    rc = nx_row_finish(&s->r, rc, tables, err);
    if (rc == 0)
        rc = write_opcode_summary(s, ctx, tables, err);
    activity_free(s);
    return rc;
}

static void activity_abort(void *state)
{
    activity_sink *s = state;
    if (!s)
        return;
    nx_row_discard(&s->r);
    activity_free(s);
}

const nx_device_sink nx_sink_activity = {
    .name = "ActiveTime/OpcodeSummary",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION),
    .open = activity_open,
    .event = activity_event,
    .finish = activity_finish,
    .abort = activity_abort,
};
