/*
 * breakdown_answer.c — the breakdown's answers from the collected rows
 * (breakdown_internal.h): the entries per (rank, device) and window, and the
 * top kernels with their spread across ranks. The rules are in breakdown.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query/breakdown_internal.h"
#include "query/device_activity.h"
#include "util/int_ops.h"

/* The four unions one device's windows are measured on. */
typedef struct unions {
    nx_interval *u[4];
    size_t n[4];
} unions;
enum { U_COMPUTE, U_COMM, U_CC, U_ALL };   /* U_CC: compute and communication */

static void unions_free(unions *s)
{
    for (int i = 0; i < 4; i++)
        free(s->u[i]);
}

static bool unions_build(const bd_row *g, size_t n, unions *s)
{
    *s = (unions){0};
    for (int i = 0; i < 4; i++)
        if (!(s->u[i] = malloc((n ? n : 1) * sizeof(nx_interval))))
            return false;
    for (size_t r = 0; r < n; r++) {
        nx_interval x = {g[r].start, g[r].end};
        if (g[r].cls == NX_BD_COMPUTE)
            s->u[U_COMPUTE][s->n[U_COMPUTE]++] = x;
        if (g[r].cls == NX_BD_COMM)
            s->u[U_COMM][s->n[U_COMM]++] = x;
        if (g[r].cls != NX_BD_MEMORY)
            s->u[U_CC][s->n[U_CC]++] = x;
        s->u[U_ALL][s->n[U_ALL]++] = x;
    }
    for (int i = 0; i < 4; i++)
        s->n[i] = nx_interval_union(s->u[i], s->n[i]);
    return true;
}

static int overflow(nx_error *err, const nx_bd_entry *e)
{
    return nx_error_set(err, "breakdown: %s of rank %" PRId64 ": a sum exceeds int64 ns", e->device, e->rank);
}

static int temporal(const unions *s, int64_t lo, int64_t hi, nx_bd_entry *e, nx_error *err)
{
    int64_t len[4];
    for (int i = 0; i < 4; i++)
        if (!nx_interval_length(s->u[i], s->n[i], lo, hi, &len[i]))
            return overflow(err, e);
    nx_bd_temporal *t = &e->t;
    t->window_ns = hi - lo;
    t->compute_ns = len[U_COMPUTE];
    t->communication_ns = len[U_CC] - len[U_COMPUTE];
    t->overlapped_comm_ns = len[U_COMM] - t->communication_ns;
    t->memory_ns = len[U_ALL] - len[U_CC];
    t->idle_ns = t->window_ns - len[U_ALL];
    t->overlap_pct = len[U_COMM] ? 100.0 * (double)t->overlapped_comm_ns / (double)len[U_COMM] : -1;
    return 0;
}

/* The first row of g[0..n) (by start) starting at or after x. */
static size_t first_at(const bd_row *g, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (g[m].start < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The cause of the whole gap [g0, g1) (g1 the start of the busy time after it,
 * INT64_MAX when none; after_busy: busy time ends at g0). 0 host, 1 kernel, 2 other. */
static int gap_cause(const bd_row *g, size_t n, int64_t g0, int64_t g1, bool after_busy)
{
    int64_t launch = INT64_MAX;
    for (size_t r = g1 == INT64_MAX ? n : first_at(g, n, g1); r < n && g[r].start == g1; r++)
        if (g[r].launch != INT64_MIN && g[r].launch < launch)
            launch = g[r].launch;
    if (launch == INT64_MAX)
        return 2;
    if (launch >= g0)
        return 0;
    return after_busy && g1 - g0 < NX_BD_KERNEL_WAIT_NS ? 1 : 2;
}

static void idle_causes(const bd_row *g, size_t n, const unions *s, const bd_span *sp, int64_t lo, int64_t hi,
                        nx_bd_idle *idle)
{
    const nx_interval *u = s->u[U_ALL];
    size_t m = s->n[U_ALL];
    int64_t *sum[3] = {&idle->host_wait_ns, &idle->kernel_wait_ns, &idle->other_ns};
    int64_t *cnt[3] = {&idle->host_wait_count, &idle->kernel_wait_count, &idle->other_count};
    size_t i = 0, top = m;   /* the first gap ending after lo: the first busy start after lo */
    while (i < top) {
        size_t mid = i + (top - i) / 2;
        if (u[mid].start <= lo)
            i = mid + 1;
        else
            top = mid;
    }
    for (; i <= m && (i == 0 || u[i - 1].end < hi); i++) {
        int64_t g0 = i ? u[i - 1].end : sp->lo, g1 = i < m ? u[i].start : sp->hi;
        int64_t c0 = g0 > lo ? g0 : lo, c1 = g1 < hi ? g1 : hi;
        if (c1 <= c0)
            continue;
        int cause = gap_cause(g, n, g0, i < m ? g1 : INT64_MAX, i > 0);
        *sum[cause] += c1 - c0;   /* the parts are disjoint inside the window: no overflow */
        (*cnt[cause])++;
    }
}

/* The nearest-rank percentile q (1..100) of sorted d[0..n), n > 0. */
static int64_t pct(const int64_t *d, size_t n, size_t q) { return d[(n * q + 99) / 100 - 1]; }

static void verdict(nx_bd_entry *e)
{
    nx_bd_launch *l = &e->launch;
    const nx_bd_idle *i = &e->idle;
    int64_t busy = e->t.window_ns - e->t.idle_ns;
    if (!l->linked)
        l->verdict = "unknown";
    else if (i->host_wait_ns > i->kernel_wait_ns && i->host_wait_ns > i->other_ns && e->t.idle_ns > busy)
        l->verdict = "cpu-bound";
    else if (l->median_ns >= NX_BD_QUEUED_NS)
        l->verdict = "gpu-bound";
    else
        l->verdict = "balanced";
}

/* Classes, launches and transfers of the rows starting in [lo, hi). */
static int per_row(const bd_row *g, size_t n, int64_t lo, int64_t hi, nx_bd_entry *e, nx_error *err)
{
    int64_t *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return nx_error_set(err, "breakdown: out of memory");
    size_t nd = 0;
    bool ok = true;
    for (size_t r = first_at(g, n, lo); r < n && g[r].start < hi; r++) {
        int64_t dur = g[r].end - g[r].start;
        e->class_count[g[r].cls]++;
        ok &= !__builtin_add_overflow(e->class_ns[g[r].cls], dur, &e->class_ns[g[r].cls]);
        if (g[r].kind == NX_ACT_KERNEL) {
            e->launch.kernels++;
            e->launch.short_kernels += dur < NX_BD_SHORT_KERNEL_NS;
            if (g[r].launch != INT64_MIN)
                ok &= !__builtin_sub_overflow(g[r].start, g[r].launch, &d[nd++]);
        } else {
            nx_bd_xfer *x = &e->xfer[g[r].xfer];
            x->count++;
            if (g[r].bytes >= 0) {
                x->with_bytes++;
                ok &= !__builtin_add_overflow(x->bytes, g[r].bytes, &x->bytes);
                ok &= !__builtin_add_overflow(x->duration_ns, dur, &x->duration_ns);
            }
        }
    }
    for (int k = 0; k < NX_BD_N_XFER; k++)
        e->xfer[k].gbps = e->xfer[k].duration_ns ? (double)e->xfer[k].bytes / (double)e->xfer[k].duration_ns : 0;
    nx_bd_launch *l = &e->launch;
    l->linked = (int64_t)nd;
    if (nd) {
        qsort(d, nd, sizeof *d, nx_qsort_cmp_i64);
        l->median_ns = pct(d, nd, 50);
        l->p95_ns = pct(d, nd, 95);
        l->max_ns = d[nd - 1];
        l->outlier_above_ns = l->p95_ns + 3 * (l->p95_ns - l->median_ns) / 2;
        for (size_t i = 0; i < nd; i++)
            l->outliers += d[i] > l->outlier_above_ns;
    }
    free(d);
    return ok ? 0 : overflow(err, e);
}

static int entry(const bd_row *g, size_t n, const unions *s, const bd_span *sp, const bd_step *st, nx_bd_entry *e,
                 nx_error *err)
{
    *e = (nx_bd_entry){.rank = g[0].rank, .step = st ? st->step : -1, .start_ns = st ? st->start : sp->lo,
                       .end_ns = st ? st->end : sp->hi};
    nx_device_name((nx_device_type)g[0].dtype, g[0].device, e->device, sizeof e->device);
    if (st && !(e->step_name = strdup(st->name)))
        return nx_error_set(err, "breakdown: out of memory");
    if (temporal(s, e->start_ns, e->end_ns, e, err) < 0)
        return -1;
    idle_causes(g, n, s, sp, e->start_ns, e->end_ns, &e->idle);
    if (per_row(g, n, e->start_ns, e->end_ns, e, err) < 0)
        return -1;
    verdict(e);
    return 0;
}

static const bd_span *span_of(const bd_acc *a, int64_t rank)
{
    for (size_t i = 0; i < a->n_spans; i++)
        if (a->spans[i].rank == rank)
            return &a->spans[i];
    return NULL;   /* not reached: every row widens its rank's span */
}

static int cmp_step(const void *pa, const void *pb)
{
    const bd_step *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

/* The entries of one device's rows g[0..n). */
static int device_entries(const bd_acc *a, const bd_row *g, size_t n, int64_t step, nx_breakdown *out,
                          nx_error *err)
{
    unions s;
    int rc = unions_build(g, n, &s) ? 0 : nx_error_set(err, "breakdown: out of memory");
    const bd_span *sp = span_of(a, g[0].rank);
    for (size_t k = 0; rc == 0 && k <= a->n_steps; k++) {   /* k 0: the whole span, then the steps */
        const bd_step *st = k ? &a->steps[k - 1] : NULL;
        if (st ? st->rank != g[0].rank || (step >= 0 && st->step != step) : step >= 0)
            continue;
        nx_bd_entry *grown = realloc(out->entries, (out->n_entries + 1) * sizeof *grown);
        if (!grown) {
            rc = nx_error_set(err, "breakdown: out of memory");
            break;
        }
        out->entries = grown;
        rc = entry(g, n, &s, sp, st, &out->entries[out->n_entries], err);
        if (rc == 0 || out->entries[out->n_entries].step_name)
            out->n_entries++;   /* kept so that free releases its name */
    }
    unions_free(&s);
    return rc;
}

int bd_answer_entries(bd_acc *a, int64_t step, nx_breakdown *out, nx_error *err)
{
    if (a->n_steps)   /* qsort must not get a null array */
        qsort(a->steps, a->n_steps, sizeof *a->steps, cmp_step);
    for (size_t i = 0; i < a->n_rows;) {
        size_t j = i + 1;
        while (j < a->n_rows && a->rows[j].rank == a->rows[i].rank && a->rows[j].dtype == a->rows[i].dtype &&
               a->rows[j].device == a->rows[i].device)
            j++;
        if (device_entries(a, a->rows + i, j - i, step, out, err) < 0)
            return -1;
        i = j;
    }
    return 0;
}
