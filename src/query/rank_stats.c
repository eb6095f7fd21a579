/*
 * rank_stats.c — steps and stragglers across ranks (see rank_stats.h): one
 * scan of SystemProfileEvents keeps the ranked step rows and collective rows;
 * sorting them then gives each step's per-rank durations and each collective
 * instance's ranks, with no pass over the table again.
 * The end of the file is the analysis "ranks" (analysis.h): the answer as
 * text, and the descriptor `nxprof ranks` and /ranks are served from.
 */
#include "query/rank_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/analysis.h"
#include "query/device_activity.h"
#include "util/int_ops.h"
#include "util/json.h"
#include "util/text.h"

#define EVENTS "SystemProfileEvents"

typedef struct step_row {
    int64_t rank, step, start, end;
} step_row;

typedef struct coll_row {
    int64_t rank, step, start, occurrence;
    size_t name;                     /* index into acc.names */
} coll_row;

typedef struct acc {
    step_row *steps;
    size_t n_steps, cap_steps;
    coll_row *colls;
    size_t n_colls, cap_colls;
    char **names;
    size_t n_names, last_name;
} acc;

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 64;
    void *g = realloc(*v, c * size);
    if (!g)
        return false;
    *v = g;
    *cap = c;
    return true;
}

/* The index of the collective's name, interned when new; false when out of memory. */
static bool intern(acc *a, const char *s, size_t len, size_t *out)
{
    for (size_t k = 0; k < a->n_names; k++) {
        size_t i = (a->last_name + k) % a->n_names;   /* the last hit first: names come in runs */
        if (strlen(a->names[i]) == len && memcmp(a->names[i], s, len) == 0) {
            *out = a->last_name = i;
            return true;
        }
    }
    char **g = realloc(a->names, (a->n_names + 1) * sizeof *g);
    if (!g)
        return false;
    a->names = g;
    if (!(g[a->n_names] = nx_text_dup(s, len)))
        return false;
    *out = a->last_name = a->n_names++;
    return true;
}

/* A collective row: named so, on the host or a device kernel (not an annotation copy). */
static bool is_collective(const nx_activity_row *row)
{
    if (row->a.profiler || !(row->a.kind == NX_ACT_NONE || row->a.kind == NX_ACT_KERNEL))
        return false;
    return nx_activity_is_collective(row->name, row->name_len);
}

static int on_row(void *ctx, const nx_activity_row *row, nx_error *err)
{
    acc *a = ctx;
    if (row->a.rank < 0)
        return 0;
    bool ok = true;
    if (row->a.is_step) {
        ok = grow((void **)&a->steps, &a->cap_steps, a->n_steps, sizeof *a->steps);
        if (ok)
            a->steps[a->n_steps++] = (step_row){row->a.rank, row->a.step, row->start_ns, row->end_ns};
    } else if (is_collective(row)) {
        size_t name = 0;
        ok = intern(a, row->name, row->name_len, &name) &&
             grow((void **)&a->colls, &a->cap_colls, a->n_colls, sizeof *a->colls);
        if (ok)
            a->colls[a->n_colls++] = (coll_row){.rank = row->a.rank, .step = -1, .start = row->start_ns, .name = name};
    }
    return ok ? 0 : nx_error_set(err, "%s: out of memory", EVENTS);
}

/* ---------------------------------------------------------------- order -- */

/* qsort, which must not be given a null array even when it is empty. */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(v, n, size, cmp);
}

/* Steps by rank, start (to find a collective's step by binary search). */
static int by_rank_start(const void *x, const void *y)
{
    const step_row *a = x, *b = y;
    int c = nx_cmp_i64(a->rank, b->rank);
    return c ? c : nx_cmp_i64(a->start, b->start);
}

/* Steps by number, rank, start: each rank's first row of a number leads its run. */
static int by_step_rank(const void *x, const void *y)
{
    const step_row *a = x, *b = y;
    int c = nx_cmp_i64(a->step, b->step);
    c = c ? c : nx_cmp_i64(a->rank, b->rank);
    return c ? c : nx_cmp_i64(a->start, b->start);
}

/* Collectives by rank, step, name, start: the order occurrences count in. */
static int by_rank_step_name(const void *x, const void *y)
{
    const coll_row *a = x, *b = y;
    int c = nx_cmp_i64(a->rank, b->rank);
    c = c ? c : nx_cmp_i64(a->step, b->step);
    c = c ? c : (a->name > b->name) - (a->name < b->name);
    return c ? c : nx_cmp_i64(a->start, b->start);
}

/* Collectives by instance (step, name, occurrence), then start, rank. */
static int by_instance(const void *x, const void *y)
{
    const coll_row *a = x, *b = y;
    int c = nx_cmp_i64(a->step, b->step);
    c = c ? c : (a->name > b->name) - (a->name < b->name);
    c = c ? c : nx_cmp_i64(a->occurrence, b->occurrence);
    c = c ? c : nx_cmp_i64(a->start, b->start);
    return c ? c : nx_cmp_i64(a->rank, b->rank);
}

static int by_output(const void *x, const void *y)
{
    const nx_straggler *a = x, *b = y;
    int c = nx_cmp_i64(a->step, b->step);
    c = c ? c : nx_cmp_i64(a->first_start_ns, b->first_start_ns);
    c = c ? c : strcmp(a->name, b->name);
    return c ? c : nx_cmp_i64(a->occurrence, b->occurrence);
}

/* ---------------------------------------------------------------- ranks -- */

static bool collect_ranks(const acc *a, nx_rank_stats *out)
{
    size_t n = a->n_steps + a->n_colls;
    if (n == 0)
        return true;
    if (!(out->ranks = malloc(n * sizeof *out->ranks)))
        return false;
    for (size_t i = 0; i < a->n_steps; i++)
        out->ranks[i] = a->steps[i].rank;
    for (size_t i = 0; i < a->n_colls; i++)
        out->ranks[a->n_steps + i] = a->colls[i].rank;
    qsort(out->ranks, n, sizeof *out->ranks, nx_qsort_cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || out->ranks[k - 1] != out->ranks[i])
            out->ranks[k++] = out->ranks[i];
    out->n_ranks = k;
    return true;
}

static size_t rank_slot(const nx_rank_stats *s, int64_t rank)
{
    const int64_t *p = bsearch(&rank, s->ranks, s->n_ranks, sizeof *s->ranks, nx_qsort_cmp_i64);
    return (size_t)(p - s->ranks);   /* every rank asked for was collected */
}

/* ---------------------------------------------------------------- steps -- */

/* Sorts v[0..n) and returns its lower middle. */
static int64_t lower_median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, nx_qsort_cmp_i64);
    return v[(n - 1) / 2];
}

/* Fills min, max, median, skew, slowest and fastest from the durations. */
static bool step_figures(const nx_rank_stats *s, nx_rank_step *st)
{
    int64_t *v = malloc(s->n_ranks * sizeof *v);
    if (!v)
        return false;
    size_t n = 0;
    for (size_t r = 0; r < s->n_ranks; r++) {
        int64_t d = st->duration_ns[r];
        if (d < 0)
            continue;
        if (n == 0 || d > st->max_ns)
            st->max_ns = d, st->slowest_rank = s->ranks[r];
        if (n == 0 || d < st->min_ns)
            st->min_ns = d, st->fastest_rank = s->ranks[r];
        v[n++] = d;
    }
    st->n_present = n;
    st->median_ns = lower_median(v, n);
    free(v);
    st->skew_ns = st->max_ns - st->min_ns;   /* both >= 0: no overflow */
    st->max_over_median = st->median_ns ? (double)st->max_ns / (double)st->median_ns : 0;
    return true;
}

static bool build_steps(acc *a, nx_rank_stats *out)
{
    sort(a->steps, a->n_steps, sizeof *a->steps, by_step_rank);
    size_t n = 0;
    for (size_t i = 0; i < a->n_steps; i++)
        n += i == 0 || a->steps[i].step != a->steps[i - 1].step;
    if (n && !(out->steps = calloc(n, sizeof *out->steps)))
        return false;
    for (size_t i = 0; i < a->n_steps; i++) {
        const step_row *r = &a->steps[i];
        bool new_step = i == 0 || r->step != a->steps[i - 1].step;
        if (new_step) {
            nx_rank_step *st = &out->steps[out->n_steps++];
            st->step = r->step;
            st->straggler_rank = -1;
            st->duration_ns = malloc(out->n_ranks * sizeof *st->duration_ns);
            st->start_ns = malloc(out->n_ranks * sizeof *st->start_ns);
            if (!st->duration_ns || !st->start_ns)
                return false;
            for (size_t k = 0; k < out->n_ranks; k++)
                st->duration_ns[k] = st->start_ns[k] = -1;
        }
        if (!new_step && r->rank == a->steps[i - 1].rank)
            continue;   /* a later row of the same number and rank */
        nx_rank_step *st = &out->steps[out->n_steps - 1];
        size_t k = rank_slot(out, r->rank);
        st->duration_ns[k] = r->end - r->start;   /* device_activity checked end >= start */
        st->start_ns[k] = r->start;
    }
    for (size_t i = 0; i < out->n_steps; i++)
        if (!step_figures(out, &out->steps[i]))
            return false;
    return true;
}

/* ---------------------------------------------------------- collectives -- */

/* The step of each collective: its rank's step whose [start, end) holds its
 * start (the latest-starting one when steps nest). False when out of memory. */
static bool assign_steps(acc *a)
{
    sort(a->steps, a->n_steps, sizeof *a->steps, by_rank_start);
    /* reach[j]: the latest end among the rank's steps up to j, so the look back
     * below stops as soon as no earlier step can hold the start. */
    int64_t *reach = a->n_steps ? malloc(a->n_steps * sizeof *reach) : NULL;
    if (a->n_steps && !reach)
        return false;
    for (size_t j = 0; j < a->n_steps; j++) {
        bool same = j && a->steps[j - 1].rank == a->steps[j].rank;
        reach[j] = same && reach[j - 1] > a->steps[j].end ? reach[j - 1] : a->steps[j].end;
    }
    for (size_t i = 0; i < a->n_colls; i++) {
        coll_row *c = &a->colls[i];
        size_t lo = 0, hi = a->n_steps;   /* the first step after (rank, start) */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const step_row *s = &a->steps[mid];
            if (s->rank < c->rank || (s->rank == c->rank && s->start <= c->start))
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j-- > 0 && a->steps[j].rank == c->rank && reach[j] > c->start;)
            if (c->start < a->steps[j].end) {
                c->step = a->steps[j].step;
                break;
            }
    }
    free(reach);
    return true;
}

static void number_occurrences(acc *a)
{
    sort(a->colls, a->n_colls, sizeof *a->colls, by_rank_step_name);
    for (size_t i = 0; i < a->n_colls; i++) {
        const coll_row *p = i ? &a->colls[i - 1] : NULL;
        coll_row *c = &a->colls[i];
        bool same = p && p->rank == c->rank && p->step == c->step && p->name == c->name;
        c->occurrence = same ? p->occurrence + 1 : 0;
    }
}

/* One instance's entry from its rows g[0..n), in start order (n >= 2). */
static bool straggler_of(const acc *a, const coll_row *g, size_t n, nx_straggler *out)
{
    int64_t *starts = malloc(n * sizeof *starts);
    char *name = strdup(a->names[g[0].name]);
    if (!starts || !name) {
        free(starts);
        free(name);
        return false;
    }
    size_t last = n - 1;   /* the lowest rank among those that started last */
    for (size_t i = 0; i < n; i++) {
        starts[i] = g[i].start;
        if (g[i].start == g[n - 1].start && g[i].rank < g[last].rank)
            last = i;
    }
    int64_t median = lower_median(starts, n);
    free(starts);
    *out = (nx_straggler){.step = g[0].step, .name = name, .occurrence = g[0].occurrence, .n_ranks = n,
                          .first_rank = g[0].rank, .first_start_ns = g[0].start,
                          .straggler_rank = g[last].rank, .start_ns = g[last].start};
    if (__builtin_sub_overflow(out->start_ns, out->first_start_ns, &out->lateness_ns) ||
        __builtin_sub_overflow(out->start_ns, median, &out->lateness_vs_median_ns))
        out->lateness_ns = out->lateness_vs_median_ns = INT64_MAX;   /* starts span more than int64 */
    return true;
}

static bool same_instance(const coll_row *x, const coll_row *y)
{
    return x->step == y->step && x->name == y->name && x->occurrence == y->occurrence;
}

static bool build_stragglers(acc *a, nx_rank_stats *out)
{
    sort(a->colls, a->n_colls, sizeof *a->colls, by_instance);
    size_t n = 0;
    for (size_t i = 0, j; i < a->n_colls; i = j) {
        for (j = i + 1; j < a->n_colls && same_instance(&a->colls[j], &a->colls[i]);)
            j++;
        if (j - i < 2)
            continue;
        if (!grow((void **)&out->stragglers, &n, out->n_stragglers, sizeof *out->stragglers) ||
            !straggler_of(a, &a->colls[i], j - i, &out->stragglers[out->n_stragglers]))
            return false;
        out->n_stragglers++;
    }
    sort(out->stragglers, out->n_stragglers, sizeof *out->stragglers, by_output);
    return true;
}

/* Each step's straggler: its instance with the greatest lateness (the first of equals). */
static void step_stragglers(nx_rank_stats *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_stragglers; i++) {
        const nx_straggler *g = &s->stragglers[i];
        while (k < s->n_steps && s->steps[k].step < g->step)
            k++;
        if (k == s->n_steps)
            return;
        nx_rank_step *st = &s->steps[k];
        if (st->step == g->step && (st->straggler_rank < 0 || g->lateness_ns > st->max_lateness_ns)) {
            st->straggler_rank = g->straggler_rank;
            st->max_lateness_ns = g->lateness_ns;
        }
    }
}

static void acc_free(acc *a)
{
    for (size_t i = 0; i < a->n_names; i++)
        free(a->names[i]);
    free(a->names);
    free(a->steps);
    free(a->colls);
}

int nx_rank_stats_read(const char *dir, nx_rank_stats *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    acc a = {0};
    int rc = nx_activity_scan(dir, on_row, &a, err);
    if (rc == 0) {
        bool ok = assign_steps(&a);
        if (ok)
            number_occurrences(&a);
        ok = ok && collect_ranks(&a, out) && build_steps(&a, out) && build_stragglers(&a, out);
        if (ok)
            step_stragglers(out);
        else
            rc = nx_error_set(err, "%s: out of memory", EVENTS);
    }
    acc_free(&a);
    if (rc != 0)
        nx_rank_stats_free(out);
    return rc;
}

void nx_rank_stats_free(nx_rank_stats *s)
{
    for (size_t i = 0; i < s->n_steps; i++) {
        free(s->steps[i].duration_ns);
        free(s->steps[i].start_ns);
    }
    for (size_t i = 0; i < s->n_stragglers; i++)
        free(s->stragglers[i].name);
    free(s->steps);
    free(s->stragglers);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- JSON -- */

static void put(nx_strbuf *b, const char *key, int64_t v, bool safe)
{
    nx_strbuf_printf(b, ",\"%s\":", key);
    nx_json_put_i64(b, v, safe);
}

/* {"<rank>": v, ...} over the ranks present in the step. */
static void per_rank(const nx_rank_stats *s, const int64_t *v, const int64_t *present, bool safe, nx_strbuf *b)
{
    nx_strbuf_putc(b, '{');
    bool first = true;
    for (size_t r = 0; r < s->n_ranks; r++) {
        if (present[r] < 0)
            continue;
        nx_strbuf_printf(b, "%s\"%" PRId64 "\":", first ? "" : ",", s->ranks[r]);
        nx_json_put_i64(b, v[r], safe);
        first = false;
    }
    nx_strbuf_putc(b, '}');
}

static void step_json(const nx_rank_stats *s, const nx_rank_step *st, bool safe, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"step\":");
    nx_json_put_i64(b, st->step, safe);
    nx_strbuf_puts(b, ",\"durations_ns\":");
    per_rank(s, st->duration_ns, st->duration_ns, safe, b);
    nx_strbuf_puts(b, ",\"starts_ns\":");
    per_rank(s, st->start_ns, st->duration_ns, safe, b);
    put(b, "min_ns", st->min_ns, safe);
    put(b, "max_ns", st->max_ns, safe);
    put(b, "median_ns", st->median_ns, safe);
    put(b, "skew_ns", st->skew_ns, safe);
    nx_json_put_f64_member(b, "max_over_median", st->max_over_median);
    put(b, "slowest_rank", st->slowest_rank, safe);
    put(b, "fastest_rank", st->fastest_rank, safe);
    if (st->straggler_rank >= 0)
        put(b, "straggler_rank", st->straggler_rank, safe);
    else
        nx_strbuf_puts(b, ",\"straggler_rank\":null");
    put(b, "max_lateness_ns", st->max_lateness_ns, safe);
    nx_strbuf_putc(b, '}');
}

static void straggler_json(const nx_straggler *g, bool safe, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"step\":");
    nx_json_put_i64(b, g->step, safe);
    nx_strbuf_puts(b, ",\"name\":");
    nx_json_put_cstr(b, g->name);
    put(b, "occurrence", g->occurrence, safe);
    put(b, "ranks", (int64_t)g->n_ranks, safe);
    put(b, "first_rank", g->first_rank, safe);
    put(b, "first_start_ns", g->first_start_ns, safe);
    put(b, "straggler_rank", g->straggler_rank, safe);
    put(b, "start_ns", g->start_ns, safe);
    put(b, "lateness_ns", g->lateness_ns, safe);
    put(b, "lateness_vs_median_ns", g->lateness_vs_median_ns, safe);
    nx_strbuf_putc(b, '}');
}

void nx_rank_stats_json(const nx_rank_stats *s, bool safe_ints, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"ranks\":[");
    for (size_t i = 0; i < s->n_ranks; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        nx_json_put_i64(b, s->ranks[i], safe_ints);
    }
    nx_strbuf_puts(b, "],\"steps\":[");
    for (size_t i = 0; i < s->n_steps; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        step_json(s, &s->steps[i], safe_ints, b);
    }
    nx_strbuf_puts(b, "],\"stragglers\":[");
    for (size_t i = 0; i < s->n_stragglers; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        straggler_json(&s->stragglers[i], safe_ints, b);
    }
    nx_strbuf_puts(b, "]}");
}

/* ---------------------------------------------------------------- text -- */

#define TOP_STRAGGLERS 10

/* ns as microseconds with three decimals (exact). */
static void us(char *out, size_t cap, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(out, cap, "%s%" PRIu64 ".%03" PRIu64, sign, u / 1000, u % 1000);
}

static int by_lateness(const void *x, const void *y)
{
    const nx_straggler *a = *(const nx_straggler *const *)x, *b = *(const nx_straggler *const *)y;
    return (a->lateness_ns < b->lateness_ns) - (a->lateness_ns > b->lateness_ns);
}

static void steps_text(const nx_rank_stats *s, nx_strbuf *b)
{
    char v[32];
    nx_strbuf_printf(b, "Step durations per rank (us)\n%8s", "step");
    for (size_t r = 0; r < s->n_ranks; r++) {
        snprintf(v, sizeof v, "rank %" PRId64, s->ranks[r]);
        nx_strbuf_printf(b, " %14s", v);
    }
    nx_strbuf_printf(b, " %12s %10s %8s %8s %10s %12s\n", "skew", "max/median", "slowest", "fastest", "straggler",
                     "lateness");
    for (size_t i = 0; i < s->n_steps; i++) {
        const nx_rank_step *st = &s->steps[i];
        nx_strbuf_printf(b, "%8" PRId64, st->step);
        for (size_t r = 0; r < s->n_ranks; r++) {
            if (st->duration_ns[r] < 0)
                snprintf(v, sizeof v, "-");
            else
                us(v, sizeof v, st->duration_ns[r]);
            nx_strbuf_printf(b, " %14s", v);
        }
        us(v, sizeof v, st->skew_ns);
        nx_strbuf_printf(b, " %12s %10.3f %8" PRId64 " %8" PRId64, v, st->max_over_median, st->slowest_rank,
                         st->fastest_rank);
        if (st->straggler_rank < 0) {
            nx_strbuf_printf(b, " %10s %12s\n", "-", "-");
            continue;
        }
        us(v, sizeof v, st->max_lateness_ns);
        nx_strbuf_printf(b, " %10" PRId64 " %12s\n", st->straggler_rank, v);
    }
}

static void stragglers_text(const nx_rank_stats *s, nx_strbuf *b)
{
    if (s->n_stragglers == 0) {
        nx_strbuf_puts(b, "\nNo collective was seen on two ranks.\n");
        return;
    }
    const nx_straggler **by = malloc(s->n_stragglers * sizeof *by);
    if (!by) {
        b->failed = true;            /* an allocation failed: the buffer's own way to say so (strbuf.h) */
        return;
    }
    for (size_t i = 0; i < s->n_stragglers; i++)
        by[i] = &s->stragglers[i];
    qsort(by, s->n_stragglers, sizeof *by, by_lateness);
    size_t n = s->n_stragglers < TOP_STRAGGLERS ? s->n_stragglers : TOP_STRAGGLERS;
    nx_strbuf_printf(b, "\nLatest collectives (%zu of %zu; lateness in us)\n%8s %-32s %5s %9s %12s %12s %6s\n", n,
                     s->n_stragglers, "step", "collective", "#", "straggler", "lateness", "vs median", "first");
    for (size_t i = 0; i < n; i++) {
        const nx_straggler *g = by[i];
        char late[32], med[32];
        us(late, sizeof late, g->lateness_ns);
        us(med, sizeof med, g->lateness_vs_median_ns);
        nx_strbuf_printf(b, "%8" PRId64 " %-32.32s %5" PRId64 " %9" PRId64 " %12s %12s %6" PRId64 "\n", g->step,
                         g->name, g->occurrence, g->straggler_rank, late, med, g->first_rank);
    }
    free(by);
}

void nx_rank_stats_text(const nx_rank_stats *s, nx_strbuf *b)
{
    if (s->n_ranks == 0) {
        nx_strbuf_puts(b, "No ranks: no step or collective row has a worker_gid (one trace, or traces of no rank).\n");
        return;
    }
    nx_strbuf_puts(b, "Ranks:");
    for (size_t r = 0; r < s->n_ranks; r++)
        nx_strbuf_printf(b, " %" PRId64, s->ranks[r]);
    nx_strbuf_putc(b, '\n');
    if (s->n_steps)
        steps_text(s, b);
    stragglers_text(s, b);
}

/* ------------------------------------------------------------ analysis -- */

static int ranks_answer(const nx_analysis_call *call, nx_strbuf *out, nx_error *err)
{
    nx_rank_stats s;
    int rc = nx_rank_stats_read(call->dir, &s, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return nx_error_set(err, "%s has no SystemProfileEvents table", call->name), NX_ANALYSIS_NOT_APPLICABLE;
    if (rc != 0)
        return NX_ANALYSIS_ERROR;
    if (call->format == NX_ANALYSIS_JSON)
        nx_rank_stats_json(&s, call->safe_ints, out);
    else
        nx_rank_stats_text(&s, out);
    nx_rank_stats_free(&s);
    return NX_ANALYSIS_OK;
}

const nx_analysis nx_analysis_ranks = {
    .name = "ranks",
    .summary = "compare ranks: step durations, skew and stragglers of collectives",
    .help = "Compare the ranks of a system profile (framework traces of several ranks):\n"
            "each step's duration per rank (ProfilerStep#N, JAX step_num steps), the skew\n"
            "(max - min, max / median, slowest and fastest rank), and the stragglers: for\n"
            "each collective (NCCL kernels, c10d::allreduce_, gloo:all_reduce, ...; the n-th\n"
            "of a name in a step matched across ranks) the rank that started it last and\n"
            "how late (against the first rank and the median). Times are exact nanoseconds;\n"
            "text shows microseconds. A profile without SystemProfileEvents is refused\n"
            "(exit 1).\n",
    .answer = ranks_answer,
};
