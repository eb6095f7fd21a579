/*
 * throttle_error_tables.c — Throttle (one row per `throttle` record),
 * ThrottleSummary (per device trace and throttle type, written at the end) and
 * Error (one row per `error` record). Throttle and Error rows are written as
 * records arrive, so both are sorted by timestamp.
 *
 * Throttle: timestamp = Unix ns of start; duration = end - start (ns); k, n
 * from the record; type = "activity_<mechanism>" (mechanism in decimal);
 * pcore_idx = the record's pcore.
 *
 * ThrottleSummary: one row per (device trace, type) that had at least one
 * throttle record, traces in capture order, types by mechanism number.
 *   nc_idx                 the trace header's neuroncore_idx (like
 *                          Metadata.neuroncore_idx and DeviceProfileList.nc_id).
 *   throttle_type          "activity_<mechanism>".
 *   throttle_active_time_ns
 *                          length of the union of the type's throttle
 *                          intervals on that trace (all pcores together), so
 *                          overlapping intervals count once.
 *   throttle_active_time_percent
 *                          100 x active time / span, where span is the trace's
 *                          last_ns - first_ns (earliest record start to latest
 *                          record end, the Metadata first/last timestamps).
 *                          Null when the span is 0.
 *   max_achievable_util_with_throttling_percent
 *                          100 x (1 - sum over the type's records of
 *                          (1 - k/n) x duration / (span x pcore_count)),
 *                          clamped to [0, 100]: outside throttling every pcore
 *                          can be 100% busy, inside an interval at most k of
 *                          every n slots, and the trace's pcores share the
 *                          span equally. Null when the span is 0.
 *
 * Error: description and metadata are the record's program strings (metadata
 * reference 0 -> null); error_type_id (an int32 column: a u32 above 2^31-1 is
 * stored as the same 32 bits, i.e. negative); metadata_hex = the 64-bit payload in
 * lowercase hexadecimal without leading zeros or prefix ("0" for 0);
 * pcore_idx; timestamp = Unix ns of ts; type = the ErrorType enum text
 * ("Custom Notification", "Errors", "Warnings").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"

#define N_MECH 256                   /* mechanism is a u8 */
#define TYPE_LEN 16                  /* "activity_255" + NUL */

/* Per (trace, mechanism) running summary. */
typedef struct throttle_acc {
    bool any;
    int64_t cur_start, cur_end;      /* the union interval being grown */
    int64_t active_ns;               /* union length of closed intervals */
    double lost;                     /* sum of (1 - k/n) x duration, ns */
} throttle_acc;

typedef struct throttle_error_sink {
    nx_row thr, errs;
    size_t tc[6], ec[7];
    char types[N_MECH][TYPE_LEN];    /* "activity_<m>", built once */
    throttle_acc **acc;              /* per trace: NULL until its first throttle */
    size_t n_traces;
} throttle_error_sink;

enum { T_duration, T_k, T_n, T_timestamp, T_type, T_pcore_idx };
enum { E_description, E_error_type_id, E_metadata, E_metadata_hex, E_pcore_idx, E_timestamp, E_type };

static void te_free(throttle_error_sink *s)
{
    if (!s)
        return;
    if (s->acc)
        for (size_t i = 0; i < s->n_traces; i++)
            free(s->acc[i]);
    free(s->acc);
    free(s);
}

static int te_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    static const char *const tnames[] = {"duration", "k", "n", "timestamp", "type", "pcore_idx"};
    static const char *const enames[] = {"description", "error_type_id", "metadata", "metadata_hex",
                                         "pcore_idx", "timestamp", "type"};
    throttle_error_sink *s = calloc(1, sizeof *s);
    if (s)
        s->acc = calloc(ctx->n_traces + 1, sizeof *s->acc);
    if (!s || !s->acc) {
        free(s);
        snprintf(err->msg, sizeof err->msg, "Throttle: out of memory");
        return -1;
    }
    s->n_traces = ctx->n_traces;
    for (unsigned m = 0; m < N_MECH; m++)
        snprintf(s->types[m], TYPE_LEN, "activity_%u", m);
    if (nx_row_open(&s->thr, &ctx->dest, "Throttle", err) != 0) {
        te_free(s);
        return -1;
    }
    if (nx_row_open(&s->errs, &ctx->dest, "Error", err) != 0) {
        nx_row_discard(&s->thr);
        te_free(s);
        return -1;
    }
    for (size_t i = 0; i < 6; i++)
        s->tc[i] = nx_row_col(&s->thr, tnames[i]);
    for (size_t i = 0; i < 7; i++)
        s->ec[i] = nx_row_col(&s->errs, enames[i]);
    *state = s;
    return 0;
}

static int put_throttle(throttle_error_sink *s, const nx_device_event *ev, nx_error *err)
{
    const nx_trace_record *rec = ev->rec;
    unsigned m = rec->u.throttle.mechanism;
    int64_t start = ev->start_ns, end = ev->end_ns;
    throttle_acc **pa = &s->acc[ev->trace->index];
    if (!*pa && !(*pa = calloc(N_MECH, sizeof **pa))) {
        snprintf(err->msg, sizeof err->msg, "ThrottleSummary: out of memory");
        return -1;
    }
    /* Records arrive by start time, so the union grows left to right. */
    throttle_acc *a = &(*pa)[m];
    if (!a->any) {
        a->any = true;
        a->cur_start = start;
        a->cur_end = end;
    } else if (start > a->cur_end) {
        a->active_ns += a->cur_end - a->cur_start;
        a->cur_start = start;
        a->cur_end = end;
    } else if (end > a->cur_end) {
        a->cur_end = end;
    }
    if (rec->u.throttle.n > 0)
        a->lost += (1.0 - (double)rec->u.throttle.k / (double)rec->u.throttle.n) * (double)(end - start);

    nx_row *r = &s->thr;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, s->tc[T_duration], end - start);
    nx_row_i64(r, s->tc[T_k], rec->u.throttle.k);
    nx_row_i64(r, s->tc[T_n], rec->u.throttle.n);
    nx_row_i64(r, s->tc[T_timestamp], start);
    nx_row_str(r, s->tc[T_type], s->types[m]);
    nx_row_i64(r, s->tc[T_pcore_idx], rec->pcore);
    return nx_row_end(r, err);
}

/* Lowercase hex of v without leading zeros; out holds at least 17 bytes. */
static void hex_u64(uint64_t v, char *out)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = digits[v & 0xF];
        v >>= 4;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
}

static int put_error(throttle_error_sink *s, const nx_device_event *ev, nx_error *err)
{
    const nx_trace_record *rec = ev->rec;
    const nx_program *g = ev->trace->prog;
    const char *desc = nx_program_string(g, rec->u.error.description);
    const char *meta = rec->u.error.metadata ? nx_program_string(g, rec->u.error.metadata) : NULL;
    const char *type = nx_error_type_name(rec->u.error.type);
    if (!desc || !*desc || !type) {   /* the reader rejects these; kept as a guard */
        snprintf(err->msg, sizeof err->msg, "Error: %s: bad error record (type %u, description %" PRIu32 ")",
                 ev->trace->path, rec->u.error.type, rec->u.error.description);
        return -1;
    }
    char hex[17];
    hex_u64(rec->u.error.payload, hex);
    nx_row *r = &s->errs;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_str(r, s->ec[E_description], desc);
    nx_row_i64(r, s->ec[E_error_type_id], (int32_t)rec->u.error.error_type_id);   /* int32 column: u32 bits */
    nx_row_opt_str(r, s->ec[E_metadata], meta);
    nx_row_str(r, s->ec[E_metadata_hex], hex);
    nx_row_i64(r, s->ec[E_pcore_idx], rec->pcore);
    nx_row_i64(r, s->ec[E_timestamp], ev->start_ns);
    nx_row_str(r, s->ec[E_type], type);
    return nx_row_end(r, err);
}

static int te_event(void *state, const nx_device_event *ev, nx_error *err)
{
    throttle_error_sink *s = state;
    return ev->rec->kind == NX_REC_THROTTLE ? put_throttle(s, ev, err) : put_error(s, ev, err);
}

static int write_summary(throttle_error_sink *s, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "ThrottleSummary", err) != 0)
        return -1;
    size_t c_nc = nx_row_col(&r, "nc_idx"), c_type = nx_row_col(&r, "throttle_type"),
           c_ns = nx_row_col(&r, "throttle_active_time_ns"), c_pct = nx_row_col(&r, "throttle_active_time_percent"),
           c_util = nx_row_col(&r, "max_achievable_util_with_throttling_percent");
    for (size_t t = 0; t < ctx->n_traces && t < s->n_traces; t++) {
        if (!s->acc[t])
            continue;
        const nx_device_trace *tr = &ctx->traces[t];
        int64_t span = tr->any ? tr->last_ns - tr->first_ns : 0;
        double pcores = tr->hdr.pcore_count ? (double)tr->hdr.pcore_count : 1.0;
        for (unsigned m = 0; m < N_MECH; m++) {
            const throttle_acc *a = &s->acc[t][m];
            if (!a->any)
                continue;
            int64_t active = a->active_ns + (a->cur_end - a->cur_start);
            if (nx_row_begin(&r, err) != 0)
                goto fail;
            nx_row_i64(&r, c_nc, tr->hdr.neuroncore_idx);
            nx_row_str(&r, c_type, s->types[m]);
            nx_row_i64(&r, c_ns, active);
            if (span > 0) {
                double util = 100.0 * (1.0 - a->lost / ((double)span * pcores));
                nx_row_num(&r, c_pct, 100.0 * (double)active / (double)span);
                nx_row_num(&r, c_util, util < 0 ? 0 : util > 100 ? 100 : util);
            }
            if (nx_row_end(&r, err) != 0)
                goto fail;
        }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int te_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    throttle_error_sink *s = state;
    int rc = nx_row_close(&s->thr, true, tables, err);
    rc = nx_row_finish(&s->errs, rc, tables, err);
    if (rc == 0)
        rc = write_summary(s, ctx, tables, err);
    te_free(s);
    return rc;
}

static void te_abort(void *state)
{
    throttle_error_sink *s = state;
    nx_row_discard(&s->thr);
    nx_row_discard(&s->errs);
    te_free(s);
}

const nx_device_sink nx_sink_throttle_error = {
    .name = "Throttle and Error",
    .kinds = NX_KIND_BIT(NX_REC_THROTTLE) | NX_KIND_BIT(NX_REC_ERROR),
    .open = te_open,
    .event = te_event,
    .finish = te_finish,
    .abort = te_abort,
};
