/*
 * cc_tables.c — the collective-communication tables: CcOp (one row per `cc_op`
 * record), CcInstruction (one row per `cc_instr` record) and CcStream (the
 * program's CC_STREAMS, a lookup written at the end).
 *
 * Rows of CcOp and CcInstruction are written as records arrive, so both are
 * sorted by start_ts (the pipeline's global order).
 *
 * CcOp, from the record and COLLECTIVES[collective] of the trace's program:
 *   start_ts, end_ts       Unix ns of start and end; duration_ns = end - start.
 *   operation, algorithm, dtype, num_elements, op_id, stream_id, stream_index,
 *   input_size, output_size, replica_group, replica_group_id
 *                          copied from the collective (-1 / "" -> null).
 *   trigger_engine         the collective's trigger engine as its hardware name
 *                          ("PE", "DVE", "ACT", "Pool", "SP"), as in the
 *                          catalogue example "Pool".
 *   trigger_start_ts       Unix ns of trigger_ts; null when absent.
 *   cc_trigger_start_delay start_ts - trigger_start_ts; null when absent.
 *   algorithm_bandwidth    bytes / (duration_ns / 1e9), in bytes per second,
 *                          where bytes = the larger of input_size and
 *                          output_size (whichever is present). This is the
 *                          nccl-tests "algbw" size convention: the full buffer
 *                          (equal to input_size for AllReduce, the gathered
 *                          output for AllGather, the full input for
 *                          ReduceScatter). Null when no size is present or the
 *                          duration is 0.
 *   bus_bandwidth          algorithm_bandwidth x factor(operation, n), the
 *                          nccl-tests "busbw" rule: AllReduce 2(n-1)/n;
 *                          AllGather, ReduceScatter, AllToAll (n-1)/n;
 *                          Broadcast, Reduce, Send, Recv, SendRecv, Permute 1.
 *                          Operation names match case-insensitively, ignoring
 *                          '_' and '-'. n = the number of ranks in the first
 *                          inner list of replica_group ("[[0, 1, 2, 3]]" -> 4,
 *                          a flat "[0, 1]" -> 2); when replica_group is absent
 *                          or does not parse, the program's
 *                          cc_participant_count. Null when algorithm_bandwidth
 *                          is null, the operation is not listed or n < 1.
 *
 * CcInstruction, from the record: start_ts, end_ts, duration_ns, core_idx
 * (cc_core), description (the program string), trigger_engine (hardware name,
 * null for 0xFF), trigger_start_ts (null when absent).
 *
 * CcStream: one row per CC_STREAMS record (stream_id, stream_index,
 * cc_core_ids) of every program whose traces had at least one cc_op or
 * cc_instr record; programs in capture order. Not written without collective
 * activity, like CcOp and CcInstruction.
 *
 * Per-collective values (size, bus factor) are computed once per program at
 * open, so a record costs a table look-up and the row puts.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"

#define OP_COLS(X)                                                                                   \
    X(start_ts) X(end_ts) X(duration_ns) X(operation) X(algorithm) X(num_elements) X(dtype) X(op_id)  \
    X(stream_id) X(stream_index) X(trigger_engine) X(input_size) X(output_size) X(algorithm_bandwidth) \
    X(bus_bandwidth) X(trigger_start_ts) X(cc_trigger_start_delay) X(replica_group_id) X(replica_group)
#define CI_COLS(X) \
    X(start_ts) X(end_ts) X(duration_ns) X(core_idx) X(description) X(trigger_engine) X(trigger_start_ts)

enum {
#define X(name) OC_##name,
    OP_COLS(X)
#undef X
    OC_COUNT
};
enum {
#define X(name) IC_##name,
    CI_COLS(X)
#undef X
    IC_COUNT
};

/* What a CcOp row needs from a collective beyond its fields. */
typedef struct coll_info {
    int64_t bytes;                   /* max(input_size, output_size), -1 absent */
    double bus_factor;               /* NAN when bus_bandwidth is null */
} coll_info;

typedef struct cc_sink {
    nx_row op, ins;
    size_t oc[OC_COUNT], icol[IC_COUNT];
    coll_info **info;                /* per program, per collective */
    bool *active;                    /* per program: cc records seen */
    size_t n_progs;
} cc_sink;

/* Ranks in the first group of a replica group text, or -1. */
static int64_t replica_group_size(const char *s)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s++ != '[')
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '[')
        s++;
    int64_t n = 0;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (*s == ']')
            return n;
        if (!isdigit((unsigned char)*s))
            return -1;
        while (isdigit((unsigned char)*s))
            s++;
        n++;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == ',')
            s++;
        else if (*s != ']')
            return -1;
    }
}

/* Lowercase letters and digits of `s` (no '_' or '-'), at most cap-1 of them. */
static void op_key(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++) {
        if (*s == '_' || *s == '-' || *s == ' ')
            continue;
        out[n++] = (char)tolower((unsigned char)*s);
    }
    out[n] = '\0';
}

/* The busbw factor of nccl-tests for `operation` over n ranks; NAN if unknown. */
static double bus_factor(const char *operation, int64_t n)
{
    char k[32];
    op_key(operation, k, sizeof k);
    if (n < 1)
        return NAN;
    double dn = (double)n;
    if (strcmp(k, "allreduce") == 0)
        return 2.0 * (dn - 1.0) / dn;
    if (strcmp(k, "allgather") == 0 || strcmp(k, "reducescatter") == 0 || strcmp(k, "alltoall") == 0)
        return (dn - 1.0) / dn;
    if (strcmp(k, "broadcast") == 0 || strcmp(k, "reduce") == 0 || strcmp(k, "send") == 0 ||
        strcmp(k, "recv") == 0 || strcmp(k, "sendrecv") == 0 || strcmp(k, "permute") == 0)
        return 1.0;
    return NAN;
}

static void cc_free(cc_sink *s)
{
    if (!s)
        return;
    if (s->info)
        for (size_t i = 0; i < s->n_progs; i++)
            free(s->info[i]);
    free(s->info);
    free(s->active);
    free(s);
}

static int cc_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    static const char *const op_names[] = {
#define X(name) #name,
        OP_COLS(X)
#undef X
    };
    static const char *const ins_names[] = {
#define X(name) #name,
        CI_COLS(X)
#undef X
    };
    cc_sink *s = calloc(1, sizeof *s);
    if (s) {
        s->info = calloc(ctx->n_progs + 1, sizeof *s->info);
        s->active = calloc(ctx->n_progs + 1, sizeof *s->active);
    }
    if (!s || !s->info || !s->active)
        goto oom;
    s->n_progs = ctx->n_progs;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        s->info[p] = calloc(g->n_collectives + 1, sizeof *s->info[p]);
        if (!s->info[p])
            goto oom;
        for (size_t c = 0; c < g->n_collectives; c++) {
            const nx_prog_collective *co = &g->collectives[c];
            int64_t bytes = co->input_size > co->output_size ? co->input_size : co->output_size;
            int64_t n = replica_group_size(co->replica_group);
            if (n < 1)
                n = g->header.cc_participant_count;
            s->info[p][c].bytes = bytes >= 0 ? bytes : -1;
            s->info[p][c].bus_factor = bus_factor(co->operation, n);
        }
    }
    if (nx_row_open(&s->op, &ctx->dest, "CcOp", err) != 0) {
        cc_free(s);
        return -1;
    }
    if (nx_row_open(&s->ins, &ctx->dest, "CcInstruction", err) != 0) {
        nx_row_discard(&s->op);
        cc_free(s);
        return -1;
    }
    for (size_t i = 0; i < OC_COUNT; i++)
        s->oc[i] = nx_row_col(&s->op, op_names[i]);
    for (size_t i = 0; i < IC_COUNT; i++)
        s->icol[i] = nx_row_col(&s->ins, ins_names[i]);
    *state = s;
    return 0;
oom:
    cc_free(s);
    snprintf(err->msg, sizeof err->msg, "CcOp: out of memory");
    return -1;
}

static int put_op(cc_sink *s, const nx_device_event *ev, nx_error *err)
{
    const nx_program *g = ev->trace->prog;
    const nx_trace_record *rec = ev->rec;
    uint32_t ci = rec->u.cc_op.collective;
    if (ci >= g->n_collectives) {   /* the reader rejects this; kept as a guard */
        snprintf(err->msg, sizeof err->msg, "CcOp: %s: collective %" PRIu32 " not in the program", ev->trace->path,
                 ci);
        return -1;
    }
    const nx_prog_collective *co = &g->collectives[ci];
    const coll_info *in = &s->info[ev->trace->prog_index][ci];
    int64_t dur = ev->end_ns - ev->start_ns;
    nx_row *r = &s->op;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, s->oc[OC_start_ts], ev->start_ns);
    nx_row_i64(r, s->oc[OC_end_ts], ev->end_ns);
    nx_row_i64(r, s->oc[OC_duration_ns], dur);
    nx_row_str(r, s->oc[OC_operation], co->operation);
    nx_row_str(r, s->oc[OC_algorithm], co->algorithm);
    nx_row_i64(r, s->oc[OC_num_elements], co->num_elements);
    nx_row_str(r, s->oc[OC_dtype], co->dtype);
    nx_row_i64(r, s->oc[OC_op_id], co->op_id);
    nx_row_i64(r, s->oc[OC_stream_id], co->stream_id);
    nx_row_i64(r, s->oc[OC_stream_index], co->stream_index);
    nx_row_str(r, s->oc[OC_trigger_engine], nx_engine_hw_name(co->trigger_engine));
    nx_row_opt_i64(r, s->oc[OC_input_size], co->input_size);
    nx_row_opt_i64(r, s->oc[OC_output_size], co->output_size);
    if (in->bytes >= 0 && dur > 0) {
        double algbw = (double)in->bytes * 1e9 / (double)dur;
        nx_row_num(r, s->oc[OC_algorithm_bandwidth], algbw);
        if (!isnan(in->bus_factor))
            nx_row_num(r, s->oc[OC_bus_bandwidth], algbw * in->bus_factor);
    }
    if (rec->u.cc_op.trigger_ts != NX_NO_TICKS) {
        int64_t trig = nx_trace_unix_ns(&ev->trace->hdr, rec->u.cc_op.trigger_ts);
        nx_row_i64(r, s->oc[OC_trigger_start_ts], trig);
        nx_row_i64(r, s->oc[OC_cc_trigger_start_delay], ev->start_ns - trig);
    }
    nx_row_opt_i64(r, s->oc[OC_replica_group_id], co->replica_group_id);
    nx_row_opt_str(r, s->oc[OC_replica_group], co->replica_group);
    return nx_row_end(r, err);
}

static int put_instr(cc_sink *s, const nx_device_event *ev, nx_error *err)
{
    const nx_trace_record *rec = ev->rec;
    const char *desc = nx_program_string(ev->trace->prog, rec->u.cc_instr.description);
    if (!desc || !*desc) {   /* the reader rejects this; kept as a guard */
        snprintf(err->msg, sizeof err->msg, "CcInstruction: %s: bad description reference %" PRIu32,
                 ev->trace->path, rec->u.cc_instr.description);
        return -1;
    }
    nx_row *r = &s->ins;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, s->icol[IC_start_ts], ev->start_ns);
    nx_row_i64(r, s->icol[IC_end_ts], ev->end_ns);
    nx_row_i64(r, s->icol[IC_duration_ns], ev->end_ns - ev->start_ns);
    nx_row_i64(r, s->icol[IC_core_idx], rec->u.cc_instr.cc_core);
    nx_row_str(r, s->icol[IC_description], desc);
    nx_row_opt_str(r, s->icol[IC_trigger_engine], nx_engine_hw_name(rec->u.cc_instr.trigger_engine));
    if (rec->u.cc_instr.trigger_ts != NX_NO_TICKS)
        nx_row_i64(r, s->icol[IC_trigger_start_ts], nx_trace_unix_ns(&ev->trace->hdr, rec->u.cc_instr.trigger_ts));
    return nx_row_end(r, err);
}

static int cc_event(void *state, const nx_device_event *ev, nx_error *err)
{
    cc_sink *s = state;
    s->active[ev->trace->prog_index] = true;
    return ev->rec->kind == NX_REC_CC_OP ? put_op(s, ev, err) : put_instr(s, ev, err);
}

static int write_streams(cc_sink *s, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "CcStream", err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "stream_id"), c_idx = nx_row_col(&r, "stream_index"),
           c_cores = nx_row_col(&r, "cc_core_ids");
    for (size_t p = 0; p < ctx->n_progs; p++) {
        if (!s->active[p])
            continue;
        const nx_program *g = ctx->progs[p];
        for (size_t i = 0; i < g->n_cc_streams; i++) {
            if (nx_row_begin(&r, err) != 0)
                goto fail;
            nx_row_i64(&r, c_id, g->cc_streams[i].stream_id);
            nx_row_i64(&r, c_idx, g->cc_streams[i].stream_index);
            nx_row_str(&r, c_cores, g->cc_streams[i].cc_core_ids);
            if (nx_row_end(&r, err) != 0)
                goto fail;
        }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int cc_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    cc_sink *s = state;
    int rc = nx_row_close(&s->op, true, tables, err);
    rc = nx_row_finish(&s->ins, rc, tables, err);
    if (rc == 0)
        rc = write_streams(s, ctx, tables, err);
    cc_free(s);
    return rc;
}

static void cc_abort(void *state)
{
    cc_sink *s = state;
    nx_row_discard(&s->op);
    nx_row_discard(&s->ins);
    cc_free(s);
}

const nx_device_sink nx_sink_cc = {
    .name = "collective tables",
    .kinds = NX_KIND_BIT(NX_REC_CC_OP) | NX_KIND_BIT(NX_REC_CC_INSTR),
    .open = cc_open,
    .event = cc_event,
    .finish = cc_finish,
    .abort = cc_abort,
};
