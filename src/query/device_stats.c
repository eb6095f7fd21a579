/*
 * device_stats.c — devices and steps (see device_stats.h): one scan of
 * SystemProfileEvents through device_activity.h collects each device's
 * activity intervals per kind, each rank's span and the step rows; the
 * answers are interval unions of those, whole (devices) or clipped to each
 * step's window (steps).
 */
#include "query/device_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "util/decimal.h"
#include "util/int_ops.h"
#include "util/json.h"

#define EVENTS "SystemProfileEvents"

enum { K_KERNEL, K_MEMCPY, K_MEMSET, N_KINDS };

typedef struct ivec {
    nx_interval *v;
    size_t n, cap;
} ivec;

typedef struct dev_acc {
    nx_device_type type;
    int64_t index, rank;
    ivec kind[N_KINDS];              /* raw intervals per kind, in row order */
} dev_acc;

typedef struct rank_span {
    int64_t rank, first, last;
} rank_span;

typedef struct acc {
    int64_t want_rank;
    dev_acc *dev;
    size_t n_dev, last_dev;
    rank_span *ranks;
    size_t n_ranks, last_rank;
    nx_step_stat *steps;
    size_t n_steps, cap_steps;
} acc;

static bool ivec_push(ivec *v, nx_interval x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        nx_interval *g = realloc(v->v, cap * sizeof *g);
        if (!g)
            return false;
        v->v = g;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return true;
}

/* Appends a copy of src to dst. */
static bool ivec_extend(ivec *dst, const ivec *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (!ivec_push(dst, src->v[i]))
            return false;
    return true;
}

static int kind_slot(nx_activity_kind k)
{
    return k == NX_ACT_KERNEL ? K_KERNEL : k == NX_ACT_MEMCPY ? K_MEMCPY : K_MEMSET;
}

/* The accumulator of (type, index, rank), added when new; NULL when out of memory. */
static dev_acc *find_dev(acc *a, const nx_activity *x)
{
    dev_acc *d = a->n_dev ? &a->dev[a->last_dev] : NULL;
    if (d && d->type == x->device_type && d->index == x->device && d->rank == x->rank)
        return d;
    for (size_t i = 0; i < a->n_dev; i++) {
        d = &a->dev[i];
        if (d->type == x->device_type && d->index == x->device && d->rank == x->rank) {
            a->last_dev = i;
            return d;
        }
    }
    dev_acc *g = realloc(a->dev, (a->n_dev + 1) * sizeof *g);
    if (!g)
        return NULL;
    a->dev = g;
    a->last_dev = a->n_dev;
    d = &a->dev[a->n_dev++];
    *d = (dev_acc){.type = x->device_type, .index = x->device, .rank = x->rank};
    return d;
}

/* Widens the span of the row's rank (added when new): false when out of memory. */
static bool widen_rank(acc *a, int64_t rank, int64_t start, int64_t end)
{
    rank_span *r = a->n_ranks && a->ranks[a->last_rank].rank == rank ? &a->ranks[a->last_rank] : NULL;
    for (size_t i = 0; !r && i < a->n_ranks; i++)
        if (a->ranks[i].rank == rank) {
            a->last_rank = i;
            r = &a->ranks[i];
        }
    if (!r) {
        rank_span *g = realloc(a->ranks, (a->n_ranks + 1) * sizeof *g);
        if (!g)
            return false;
        a->ranks = g;
        a->last_rank = a->n_ranks;
        r = &a->ranks[a->n_ranks++];
        *r = (rank_span){rank, start, end};
    }
    r->first = start < r->first ? start : r->first;
    r->last = end > r->last ? end : r->last;
    return true;
}

static bool add_step(acc *a, const nx_activity_row *row)
{
    if (a->n_steps == a->cap_steps) {
        size_t cap = a->cap_steps ? 2 * a->cap_steps : 16;
        nx_step_stat *g = realloc(a->steps, cap * sizeof *g);
        if (!g)
            return false;
        a->steps = g;
        a->cap_steps = cap;
    }
    char *name = malloc(row->name_len + 1);
    if (!name)
        return false;
    memcpy(name, row->name, row->name_len);
    name[row->name_len] = '\0';
    a->steps[a->n_steps++] = (nx_step_stat){.name = name, .step = row->a.step, .rank = row->a.rank,
                                            .start_ns = row->start_ns, .end_ns = row->end_ns,
                                            .duration_ns = row->end_ns - row->start_ns};
    return true;
}

static int on_row(void *ctx, const nx_activity_row *row, nx_error *err)
{
    acc *a = ctx;
    if (a->want_rank >= 0 && row->a.rank != a->want_rank)
        return 0;
    bool ok = widen_rank(a, row->a.rank, row->start_ns, row->end_ns);
    if (ok && nx_activity_is_busy(row->a.kind)) {
        dev_acc *d = find_dev(a, &row->a);
        ok = d && ivec_push(&d->kind[kind_slot(row->a.kind)], (nx_interval){row->start_ns, row->end_ns});
    }
    if (ok && row->a.is_step)
        ok = add_step(a, row);
    return ok ? 0 : nx_error_set(err, "%s: out of memory", EVENTS);
}

/* ------------------------------------------------------------- devices -- */

static const rank_span *span_of(const acc *a, int64_t rank)
{
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i].rank == rank)
            return &a->ranks[i];
    return NULL;
}

static int too_big(nx_error *err, const char *what, int64_t rank)
{
    return nx_error_set(err, "%s: the %s of rank %" PRId64 " exceeds the int64 range", EVENTS, what, rank);
}

/* One device's answer; d's vectors are left as their unions. */
static int device_answer(dev_acc *d, const acc *a, nx_device_stat *out, nx_error *err)
{
    *out = (nx_device_stat){.type = d->type, .index = d->index, .rank = d->rank};
    nx_device_name(d->type, d->index, out->device, sizeof out->device);
    const rank_span *sp = span_of(a, d->rank);   /* every device row widened its rank */
    out->start_ns = sp->first;
    out->end_ns = sp->last;
    if (__builtin_sub_overflow(sp->last, sp->first, &out->wall_ns))
        return too_big(err, "span", d->rank);
    int64_t *ns[N_KINDS] = {&out->kernel_ns, &out->memcpy_ns, &out->memset_ns};
    int64_t *count[N_KINDS] = {&out->kernel_count, &out->memcpy_count, &out->memset_count};
    ivec all = {0};
    for (int k = 0; k < N_KINDS; k++) {
        *count[k] = (int64_t)d->kind[k].n;
        d->kind[k].n = nx_interval_union(d->kind[k].v, d->kind[k].n);
        if (!nx_interval_length(d->kind[k].v, d->kind[k].n, INT64_MIN, INT64_MAX, ns[k]))
            return too_big(err, "device time", d->rank);
        if (!ivec_extend(&all, &d->kind[k])) {
            free(all.v);
            return nx_error_set(err, "%s: out of memory", EVENTS);
        }
    }
    all.n = nx_interval_union(all.v, all.n);
    bool ok = nx_interval_length(all.v, all.n, INT64_MIN, INT64_MAX, &out->busy_ns);
    free(all.v);
    if (!ok)
        return too_big(err, "busy time", d->rank);
    out->idle_ns = out->wall_ns - out->busy_ns;
    out->utilization = out->wall_ns > 0 ? (double)out->busy_ns / (double)out->wall_ns : 0.0;
    return 0;
}

/* --------------------------------------------------------------- steps -- */

/* A rank's device activity over all its devices: the union per kind and of
 * all, and its kernels' starts in order. */
typedef struct rank_view {
    ivec kind[N_KINDS], all;
    int64_t *kernel_starts;
    size_t n_kernels;
} rank_view;

static void rank_view_free(rank_view *v)
{
    for (int k = 0; k < N_KINDS; k++)
        free(v->kind[k].v);
    free(v->all.v);
    free(v->kernel_starts);
}

/* Builds rank's view from the raw intervals of its devices: false when out of memory. */
static bool rank_view_build(const acc *a, int64_t rank, rank_view *v)
{
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < a->n_dev; i++) {
        const dev_acc *d = &a->dev[i];
        for (int k = 0; d->rank == rank && k < N_KINDS; k++)
            if (!ivec_extend(&v->kind[k], &d->kind[k]) || !ivec_extend(&v->all, &d->kind[k]))
                return false;
    }
    const ivec *kern = &v->kind[K_KERNEL];
    if (kern->n && !(v->kernel_starts = malloc(kern->n * sizeof *v->kernel_starts)))
        return false;
    for (size_t i = 0; i < kern->n; i++)
        v->kernel_starts[i] = kern->v[i].start;
    v->n_kernels = kern->n;
    if (v->n_kernels > 1)
        qsort(v->kernel_starts, v->n_kernels, sizeof *v->kernel_starts, nx_qsort_cmp_i64);
    for (int k = 0; k < N_KINDS; k++)
        v->kind[k].n = nx_interval_union(v->kind[k].v, v->kind[k].n);
    v->all.n = nx_interval_union(v->all.v, v->all.n);
    return true;
}

/* The number of sorted values s[0..n) below x. */
static size_t below(const int64_t *s, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (s[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static int step_answer(const rank_view *v, nx_step_stat *s, nx_error *err)
{
    int64_t lo = s->start_ns, hi = s->end_ns;
    if (!nx_interval_length(v->all.v, v->all.n, lo, hi, &s->gpu_busy_ns) ||
        !nx_interval_length(v->kind[K_KERNEL].v, v->kind[K_KERNEL].n, lo, hi, &s->kernel_ns) ||
        !nx_interval_length(v->kind[K_MEMCPY].v, v->kind[K_MEMCPY].n, lo, hi, &s->memcpy_ns) ||
        !nx_interval_length(v->kind[K_MEMSET].v, v->kind[K_MEMSET].n, lo, hi, &s->memset_ns))
        return too_big(err, "device time in a step", s->rank);
    s->kernel_count = (int64_t)(below(v->kernel_starts, v->n_kernels, hi) - below(v->kernel_starts, v->n_kernels, lo));
    return 0;
}

static int cmp_step(const void *pa, const void *pb)
{
    const nx_step_stat *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

/* Every step's figures, from its rank's view (built once per rank: steps are
 * sorted by rank first). */
static int steps_answer(acc *a, nx_error *err)
{
    if (a->n_steps > 1)
        qsort(a->steps, a->n_steps, sizeof *a->steps, cmp_step);
    rank_view v = {0};
    bool have = false;
    for (size_t i = 0; i < a->n_steps; i++) {
        nx_step_stat *s = &a->steps[i];
        if (!have || a->steps[i - 1].rank != s->rank) {
            rank_view_free(&v);
            have = true;
            if (!rank_view_build(a, s->rank, &v)) {
                rank_view_free(&v);
                return nx_error_set(err, "%s: out of memory", EVENTS);
            }
        }
        if (step_answer(&v, s, err) != 0) {
            rank_view_free(&v);
            return -1;
        }
    }
    rank_view_free(&v);
    return 0;
}

/* ---------------------------------------------------------------- read -- */

static int cmp_device(const void *pa, const void *pb)
{
    const nx_device_stat *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->type != b->type)
        return a->type < b->type ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static void acc_free(acc *a)
{
    for (size_t i = 0; i < a->n_dev; i++)
        for (int k = 0; k < N_KINDS; k++)
            free(a->dev[i].kind[k].v);
    free(a->dev);
    free(a->ranks);
}

int nx_device_stats_read(const char *dir, int64_t rank, nx_device_stats *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    acc a = {.want_rank = rank};
    int rc = nx_activity_scan(dir, on_row, &a, err);
    /* Steps first: they read the devices' raw intervals, which device_answer unites in place. */
    if (rc == 0)
        rc = steps_answer(&a, err);
    out->steps = a.steps;
    out->n_steps = a.n_steps;
    if (rc == 0 && a.n_dev && !(out->devices = calloc(a.n_dev, sizeof *out->devices)))
        rc = nx_error_set(err, "%s: out of memory", EVENTS);
    for (size_t i = 0; rc == 0 && i < a.n_dev; i++)
        if ((rc = device_answer(&a.dev[i], &a, &out->devices[i], err)) == 0)
            out->n_devices++;
    if (rc == 0 && out->n_devices > 1)
        qsort(out->devices, out->n_devices, sizeof *out->devices, cmp_device);
    acc_free(&a);
    if (rc < 0)
        nx_device_stats_free(out);
    return rc;
}

void nx_device_stats_free(nx_device_stats *s)
{
    for (size_t i = 0; i < s->n_steps; i++)
        free(s->steps[i].name);
    free(s->steps);
    free(s->devices);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- JSON -- */

static void put_rank(nx_strbuf *b, int64_t rank)
{
    if (rank >= 0)
        nx_strbuf_printf(b, ",\"rank\":%" PRId64, rank);
    else
        nx_strbuf_puts(b, ",\"rank\":null");
}

static void device_json(const nx_device_stat *d, bool safe, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"device\":");
    nx_json_put_cstr(b, d->device);
    put_rank(b, d->rank);
    nx_json_put_i64_member(b, "start_ns", d->start_ns, safe);
    nx_json_put_i64_member(b, "end_ns", d->end_ns, safe);
    nx_json_put_i64_member(b, "wall_ns", d->wall_ns, safe);
    nx_json_put_i64_member(b, "busy_ns", d->busy_ns, safe);
    nx_json_put_i64_member(b, "idle_ns", d->idle_ns, safe);
    nx_json_put_f64_member(b, "utilization", d->utilization);
    nx_json_put_i64_member(b, "kernel_ns", d->kernel_ns, safe);
    nx_json_put_i64_member(b, "kernel_count", d->kernel_count, safe);
    nx_json_put_i64_member(b, "memcpy_ns", d->memcpy_ns, safe);
    nx_json_put_i64_member(b, "memcpy_count", d->memcpy_count, safe);
    nx_json_put_i64_member(b, "memset_ns", d->memset_ns, safe);
    nx_json_put_i64_member(b, "memset_count", d->memset_count, safe);
    nx_strbuf_putc(b, '}');
}

static void step_json(const nx_step_stat *s, bool safe, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"name\":");
    nx_json_put_cstr(b, s->name);
    nx_json_put_i64_member(b, "step", s->step, safe);
    put_rank(b, s->rank);
    nx_json_put_i64_member(b, "start_ns", s->start_ns, safe);
    nx_json_put_i64_member(b, "end_ns", s->end_ns, safe);
    nx_json_put_i64_member(b, "duration_ns", s->duration_ns, safe);
    nx_json_put_i64_member(b, "gpu_busy_ns", s->gpu_busy_ns, safe);
    nx_json_put_i64_member(b, "kernel_ns", s->kernel_ns, safe);
    nx_json_put_i64_member(b, "kernel_count", s->kernel_count, safe);
    nx_json_put_i64_member(b, "memcpy_ns", s->memcpy_ns, safe);
    nx_json_put_i64_member(b, "memset_ns", s->memset_ns, safe);
    nx_strbuf_putc(b, '}');
}

void nx_device_stats_json(const nx_device_stats *s, bool safe_ints, nx_strbuf *b)
{
    nx_strbuf_puts(b, "\"devices\":[");
    for (size_t i = 0; i < s->n_devices; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        device_json(&s->devices[i], safe_ints, b);
    }
    nx_strbuf_puts(b, "],\"steps\":[");
    for (size_t i = 0; i < s->n_steps; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        step_json(&s->steps[i], safe_ints, b);
    }
    nx_strbuf_putc(b, ']');
}
