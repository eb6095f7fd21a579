/*
 * engine_breakdown.c — a NeuronCore's engines, collectives and DMA over its
 * device profile's window (see engine_breakdown.h): one scan of each of
 * Instruction, CcOp and DmaPacket keeps their intervals, then unions answer.
 */
#include "query/engine_breakdown.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/breakdown_internal.h"
#include "query/device_activity.h"
#include "util/json.h"

typedef struct ivec {
    nx_interval *v;
    size_t n, cap;
} ivec;

typedef struct eb_engine {
    char *name;
    ivec iv;
} eb_engine;

typedef struct eb_acc {
    eb_engine *eng;
    size_t n_eng;
    ivec cc, dma;
    int64_t dma_bytes, lo, hi;
    bool any;
} eb_acc;

static bool push(ivec *v, int64_t s, int64_t e)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        nx_interval *p = realloc(v->v, cap * sizeof *p);
        if (!p)
            return false;
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = (nx_interval){s, e};
    return true;
}

static ivec *engine_of(eb_acc *a, const char *s, size_t n)
{
    if (!s)
        s = "(none)", n = 6;
    for (size_t i = 0; i < a->n_eng; i++)
        if (strlen(a->eng[i].name) == n && memcmp(a->eng[i].name, s, n) == 0)
            return &a->eng[i].iv;
    eb_engine *g = realloc(a->eng, (a->n_eng + 1) * sizeof *g);
    if (!g)
        return NULL;
    a->eng = g;
    char *name = strndup(s, n);
    if (!name)
        return NULL;
    a->eng[a->n_eng] = (eb_engine){.name = name};
    return &a->eng[a->n_eng++].iv;
}

enum { T_INSTRUCTION, T_CC, T_DMA };

static const nxpq_column_data *col(const nxpq_batch *b, int i) { return &b->columns[i]; }
static bool has(const nxpq_column_data *c, size_t r) { return !c->valid || c->valid[r]; }
static int64_t i64(const nxpq_column_data *c, size_t r) { return c->type == NXPQ_INT32 ? c->values.i32[r] : c->values.i64[r]; }

/* One row of table `which`: its interval, and its engine or bytes (column 2). */
static bool add_row(eb_acc *a, int which, const nxpq_batch *b, size_t r, int64_t s, int64_t e)
{
    a->lo = a->any && a->lo < s ? a->lo : s;
    a->hi = a->any && a->hi > e ? a->hi : e;
    a->any = true;
    const nxpq_column_data *x = b->n_columns > 2 ? col(b, 2) : NULL;
    if (which == T_CC)
        return push(&a->cc, s, e);
    if (which == T_DMA) {
        if (x && has(x, r) && __builtin_add_overflow(a->dma_bytes, i64(x, r), &a->dma_bytes))
            return false;
        return push(&a->dma, s, e);
    }
    bool named = x && has(x, r);
    ivec *v = engine_of(a, named ? x->data + x->offsets[r] : NULL,
                        named ? (size_t)(x->offsets[r + 1] - x->offsets[r]) : 0);
    return v && push(v, s, e);
}

typedef struct scan_ctx {
    eb_acc *a;
    int which;
    const char *table;
} scan_ctx;

static int scan_batch(void *ctx, const nxpq_batch *b, size_t file, nx_error *err)
{
    eb_acc *a = ((scan_ctx *)ctx)->a;
    int which = ((scan_ctx *)ctx)->which;
    const char *table = ((scan_ctx *)ctx)->table;
    for (size_t r = 0; r < b->n_rows; r++) {
        if (!has(col(b, 0), r) || !has(col(b, 1), r))
            continue;   /* not an event */
        int64_t s = i64(col(b, 0), r), e = i64(col(b, 1), r);
        if (e < s)
            return nx_error_set(err, "%s: file %zu row %" PRId64 " (start_ts %" PRId64 ", end_ts %" PRId64
                                  "): its end_ts is before its start_ts", table, file, b->first_row + (int64_t)r, s, e);
        if (!add_row(a, which, b, r, s, e))
            return nx_error_set(err, "engine breakdown: %s: out of memory or bytes beyond int64", table);
    }
    return 0;
}

/* Scans start_ts, end_ts and `extra` (of type xt; NULL: none) of `table`. */
static int scan(const char *dir, const char *table, int which, const char *extra, nxpq_type xt, eb_acc *a,
                nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, table, &t, err);
    if (rc != 0)
        return rc;
    const char *cols[3] = {"start_ts", "end_ts", extra};
    size_t n = 2;
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        int c = cols[i] ? nx_profile_table_find_column(t, cols[i]) : -1;
        nxpq_type ty = c < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)c)->type;
        bool ok = i < 2 ? ty == NXPQ_INT64 || ty == NXPQ_INT32 : ty == xt || (xt == NXPQ_INT64 && ty == NXPQ_INT32);
        if (i < 2 && !ok)
            rc = nx_error_set(err, "%s: no usable %s column", table, cols[i]);
        else if (i == 2 && ok)
            n = 3;
    }
    if (rc == 0) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = n};
        scan_ctx sc = {a, which, table};
        rc = nx_profile_scan_each(t, &so, scan_batch, &sc, err);
    }
    nx_profile_table_close(t);
    return rc;
}

static int cmp_engine(const void *pa, const void *pb)
{
    return strcmp(((const nx_eb_engine *)pa)->name, ((const nx_eb_engine *)pb)->name);
}

/* The length of the union of v inside the window (v is merged in place). */
static bool union_len(ivec *v, const nx_engine_breakdown *o, int64_t *len)
{
    v->n = nx_interval_union(v->v, v->n);
    return nx_interval_length(v->v, v->n, o->start_ns, o->end_ns, len);
}

/* Appends src's intervals to dst. */
static bool extend(ivec *dst, const ivec *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (!push(dst, src->v[i].start, src->v[i].end))
            return false;
    return true;
}

static int answer(eb_acc *a, nx_engine_breakdown *o, nx_error *err)
{
    o->start_ns = a->lo;
    o->end_ns = a->hi;
    if (__builtin_sub_overflow(a->hi, a->lo, &o->window_ns))
        return nx_error_set(err, "engine breakdown: the window exceeds int64 ns");
    o->engines = calloc(a->n_eng ? a->n_eng : 1, sizeof *o->engines);
    ivec compute = {0}, cc_compute = {0}, all = {0};
    bool ok = o->engines != NULL;
    for (size_t i = 0; ok && i < a->n_eng; i++) {
        nx_eb_engine *e = &o->engines[o->n_engines++];
        e->name = a->eng[i].name;
        a->eng[i].name = NULL;
        e->count = (int64_t)a->eng[i].iv.n;
        ok = union_len(&a->eng[i].iv, o, &e->busy_ns) && extend(&compute, &a->eng[i].iv);
        e->idle_ns = o->window_ns - e->busy_ns;
    }
    o->cc_count = (int64_t)a->cc.n;
    o->dma_count = (int64_t)a->dma.n;
    o->dma_bytes = a->dma_bytes;
    int64_t c = 0, cc_c = 0, n_all = 0;
    ok = ok && union_len(&compute, o, &c) && extend(&cc_compute, &compute) && extend(&cc_compute, &a->cc) &&
         union_len(&cc_compute, o, &cc_c) && extend(&all, &cc_compute) && extend(&all, &a->dma) &&
         union_len(&all, o, &n_all) && union_len(&a->cc, o, &o->cc_ns) && union_len(&a->dma, o, &o->dma_busy_ns);
    free(compute.v);
    free(cc_compute.v);
    free(all.v);
    if (!ok)
        return nx_error_set(err, "engine breakdown: out of memory or a sum beyond int64 ns");
    o->compute_ns = c;
    o->communication_ns = cc_c - c;
    o->overlapped_cc_ns = o->cc_ns - o->communication_ns;
    o->memory_ns = n_all - cc_c;
    o->idle_ns = o->window_ns - n_all;
    o->overlap_pct = o->cc_count ? (o->cc_ns ? 100.0 * (double)o->overlapped_cc_ns / (double)o->cc_ns : 0) : -1;
    o->dma_gbps = o->dma_busy_ns ? (double)o->dma_bytes / (double)o->dma_busy_ns : 0;
    qsort(o->engines, o->n_engines, sizeof *o->engines, cmp_engine);
    return 0;
}

void nx_engine_breakdown_free(nx_engine_breakdown *b)
{
    for (size_t i = 0; i < b->n_engines; i++)
        free(b->engines[i].name);
    free(b->engines);
    *b = (nx_engine_breakdown){0};
}

int nx_engine_breakdown_read(const char *dir, nx_engine_breakdown *out, nx_error *err)
{
    *out = (nx_engine_breakdown){0};
    eb_acc a = {0};
    int rc = scan(dir, "Instruction", T_INSTRUCTION, "engine", NXPQ_STRING, &a, err);
    for (int i = 0; rc == 0 && i < 2; i++) {
        rc = scan(dir, i ? "DmaPacket" : "CcOp", i ? T_DMA : T_CC, i ? "transfer_bytes" : NULL, NXPQ_INT64, &a, err);
        rc = rc == NX_PROFILE_TABLE_ABSENT ? 0 : rc;   /* no collectives, no DMA */
    }
    if (rc == 0)
        rc = answer(&a, out, err);
    if (rc < 0)
        nx_engine_breakdown_free(out);
    for (size_t i = 0; i < a.n_eng; i++) {
        free(a.eng[i].name);
        free(a.eng[i].iv.v);
    }
    free(a.eng);
    free(a.cc.v);
    free(a.dma.v);
    return rc;
}

void nx_engine_breakdown_json(const nx_engine_breakdown *b, bool s, nx_strbuf *out)
{
    nx_strbuf_puts(out, "{\"kind\":\"device\"");
    nx_json_put_i64_member(out, "start_ns", b->start_ns, s);
    nx_json_put_i64_member(out, "end_ns", b->end_ns, s);
    nx_json_put_i64_member(out, "window_ns", b->window_ns, s);
    nx_json_put_i64_member(out, "compute_ns", b->compute_ns, s);
    nx_json_put_i64_member(out, "communication_ns", b->communication_ns, s);
    nx_json_put_i64_member(out, "overlapped_cc_ns", b->overlapped_cc_ns, s);
    nx_json_put_i64_member(out, "memory_ns", b->memory_ns, s);
    nx_json_put_i64_member(out, "idle_ns", b->idle_ns, s);
    bd_json_pct(out, "overlap_pct", b->overlap_pct);
    nx_json_put_i64_member(out, "cc_count", b->cc_count, s);
    nx_json_put_i64_member(out, "cc_ns", b->cc_ns, s);
    nx_json_put_i64_member(out, "dma_count", b->dma_count, s);
    nx_json_put_i64_member(out, "dma_bytes", b->dma_bytes, s);
    nx_json_put_i64_member(out, "dma_busy_ns", b->dma_busy_ns, s);
    nx_json_put_f64_member(out, "dma_gbps", b->dma_gbps);
    nx_strbuf_puts(out, ",\"engines\":[");
    for (size_t i = 0; i < b->n_engines; i++) {
        nx_strbuf_puts(out, i ? ",{\"engine\":" : "{\"engine\":");
        nx_json_put_cstr(out, b->engines[i].name);
        nx_json_put_i64_member(out, "count", b->engines[i].count, s);
        nx_json_put_i64_member(out, "busy_ns", b->engines[i].busy_ns, s);
        nx_json_put_i64_member(out, "idle_ns", b->engines[i].idle_ns, s);
        nx_strbuf_puts(out, "}");
    }
    nx_strbuf_puts(out, "]}");
}
