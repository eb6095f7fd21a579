/*
 * diff.c — the diff of two profiles (rules in diff.h): each side's groups come from
 * query/top.h, are turned into (key text, figures) entries, the profiler's rows and
 * (for "kernel") the non-kernel rows dropped, sorted and folded by key; the two sorted
 * lists are then joined in one merge walk and the rows ordered by |delta|.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/diff.h"
#include "query/device_activity.h"
#include "query/engine/profile_kind.h"
#include "query/top.h"

#define SYSTEM_TABLE "SystemProfileEvents"
#define DEVICE_TABLE "Instruction"
#define FRAMEWORK_TABLE "FrameworkInstruction"

/* One side's group: its key text (NULL: null) and figures. */
typedef struct entry {
    char *key;
    size_t len;
    nx_diff_side s;
} entry;

typedef struct side {
    entry *e;
    size_t n;
    int64_t excluded;
    int64_t steps;      /* distinct ProfilerStep#<n> names */
    bool has_wall;
    int64_t wall;
} side;

static void side_free(side *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->e[i].key);
    free(s->e);
}

static bool is_step_name(const nx_group_key *k)
{
    static const char step[] = "ProfilerStep#";
    return !k->null && k->type == NXPQ_STRING && k->len >= sizeof step - 1 && memcmp(k->s, step, sizeof step - 1) == 0;
}

/* The profiler's own rows (device_activity.h), by name: a diff's groups have no cat. */
static bool is_profiler_name(const nx_group_key *k)
{
    return !k->null && k->type == NXPQ_STRING && nx_activity_profiler_name(k->s, k->len);
}

static bool is_kernel_cat(const nx_group_key *k)
{
    return !k->null && k->type == NXPQ_STRING && k->len == 6 && memcmp(k->s, "kernel", 6) == 0;
}

/* The key's text, malloc'd (NULL with *oom false for a null key). */
static char *key_text(const nx_group_key *k, size_t *len, bool *oom)
{
    char num[32];
    const char *src = k->s;
    *oom = false;
    if (k->null)
        return NULL;
    if (k->type != NXPQ_STRING) {
        *len = (size_t)snprintf(num, sizeof num, "%" PRId64, k->i);
        src = num;
    } else {
        *len = k->len;
    }
    char *t = malloc(*len + 1);
    if (!t) {
        *oom = true;
        return NULL;
    }
    memcpy(t, src, *len);
    t[*len] = '\0';
    return t;
}

/* Keys ascending, bytewise, shorter prefix first, null last. */
static int key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    if (!a || !b)
        return (a == NULL) - (b == NULL);
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return (alen > blen) - (alen < blen);
}

static int entry_cmp(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    return key_cmp(a->key, a->len, b->key, b->len);
}

/* A step's name: bytes valid while its group_by lives. */
typedef struct name_ref {
    const char *s;
    size_t len;
} name_ref;

static int name_cmp(const void *x, const void *y)
{
    const name_ref *a = x, *b = y;
    return key_cmp(a->s, a->len, b->s, b->len);
}

/* The distinct names among n (sorted in place): a name can head several groups when
 * the key is not the name (cat, thread). */
static int64_t distinct_names(name_ref *names, size_t n)
{
    qsort(names, n, sizeof *names, name_cmp);
    int64_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += i == 0 || name_cmp(&names[i - 1], &names[i]) != 0;
    return d;
}

static int add_to(nx_diff_side *t, const nx_diff_side *s, const char *what, nx_error *err)
{
    if (__builtin_add_overflow(t->count, s->count, &t->count) ||
        __builtin_add_overflow(t->total_ns, s->total_ns, &t->total_ns) ||
        __builtin_add_overflow(t->self_ns, s->self_ns, &t->self_ns)) {
        snprintf(err->msg, sizeof err->msg, "%s: a summed time is beyond int64", what);
        return -1;
    }
    return 0;
}

/* Sorts s's entries by key and folds equal keys into one. */
static int fold(side *s, const char *dir, nx_error *err)
{
    if (s->n == 0)
        return 0;
    qsort(s->e, s->n, sizeof *s->e, entry_cmp);
    size_t w = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (entry_cmp(&s->e[w], &s->e[i]) == 0) {
            if (add_to(&s->e[w].s, &s->e[i].s, dir, err) < 0)
                return -1;
            free(s->e[i].key);
        } else {
            s->e[++w] = s->e[i];
        }
    }
    s->n = w + 1;
    return 0;
}

/* What one side's top run groups by and which of its keys decide what is kept. */
typedef struct plan {
    const char *keys[2];
    size_t n_keys;
    int name_at;   /* the key holding the name (system profiles), or -1 */
    bool drop_profiler; /* leave the profiler's rows out */
    int cat_at;    /* the key holding the category ("kernel"), or -1 */
    int show_at;   /* the key shown */
} plan;

static plan plan_of(const char *by, bool system, bool include_profiler)
{
    plan p = {.name_at = -1, .cat_at = -1, .show_at = 0, .drop_profiler = system && !include_profiler};
    if (system && strcmp(by, "kernel") == 0) {
        p.keys[0] = "name";
        p.keys[1] = "cat";
        p.n_keys = 2;
        p.cat_at = 1;
        p.name_at = 0;
        return p;
    }
    p.keys[0] = by;
    p.n_keys = 1;
    if (system) {
        if (strcmp(by, "name") == 0) {
            p.name_at = 0;
        } else {
            p.keys[1] = "name";
            p.n_keys = 2;
            p.name_at = 1;
        }
    }
    return p;
}

/* Turns the groups of r into s's entries under plan p. */
static int collect(const nx_top *r, const plan *p, side *s, const char *dir, nx_error *err)
{
    size_t n = nx_group_by_count(r->g), n_steps = 0;
    s->e = calloc(n ? n : 1, sizeof *s->e);
    name_ref *steps = calloc(n ? n : 1, sizeof *steps);
    if (!s->e || !steps) {
        free(steps);
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", dir);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const nx_group_stats *st = nx_group_by_stats(r->g, i);
        nx_group_key k;
        if (p->name_at >= 0) {
            nx_group_by_key(r->g, i, (size_t)p->name_at, &k);
            if (is_step_name(&k))
                steps[n_steps++] = (name_ref){k.s, k.len};
            if (p->drop_profiler && is_profiler_name(&k)) {
                s->excluded += st->count;
                continue;
            }
        }
        if (p->cat_at >= 0) {
            nx_group_by_key(r->g, i, (size_t)p->cat_at, &k);
            if (!is_kernel_cat(&k))
                continue;
        }
        nx_group_by_key(r->g, i, (size_t)p->show_at, &k);
        entry *e = &s->e[s->n];
        bool oom;
        e->key = key_text(&k, &e->len, &oom);
        if (oom) {
            free(steps);
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", dir);
            return -1;
        }
        s->n++;
        e->s.count = st->count;
        e->s.total_ns = st->sum[0];
        e->s.self_ns = r->self ? st->sum[1] : 0;
    }
    s->steps = distinct_names(steps, n_steps);
    free(steps);
    return fold(s, dir, err);
}

/* One side: top's GROUP BY of dir's table, collected. Returns top's codes. */
static int side_run(const char *dir, const char *table, const plan *p, side *s, bool *self, nx_error *err)
{
    nx_top r;
    /* top keeps the profiler's rows: their ProfilerStep#N names give the steps,
     * and the plan leaves them out of the groups itself. */
    nx_top_options o = {.table = table, .by = p->keys, .n_by = p->n_keys, .profiler_rows = true};
    int rc = nx_top_run(dir, &o, &r, err);
    if (rc != 0)
        return rc;
    *self = r.self;
    s->has_wall = r.have_wall;
    s->wall = nx_top_wall(&r);
    rc = collect(&r, p, s, dir, err);
    nx_top_free(&r);
    return rc;
}

static void finish_row(nx_diff_row *row)
{
    /* top refuses a negative time (top.c times_not_negative), so each total lies in
     * [0, INT64_MAX] and their difference fits. */
    row->delta_ns = row->b.total_ns - row->a.total_ns;
    row->has_ratio = row->a.total_ns != 0 && row->b.total_ns != 0;
    row->ratio = row->has_ratio ? (double)row->b.total_ns / (double)row->a.total_ns : 0.0;
    if (row->a.count == 0)
        row->status = NX_DIFF_ADDED;
    else if (row->b.count == 0)
        row->status = NX_DIFF_REMOVED;
    else if (row->a.count == row->b.count && row->a.total_ns == row->b.total_ns && row->a.self_ns == row->b.self_ns)
        row->status = NX_DIFF_SAME;
    else
        row->status = NX_DIFF_CHANGED;
}

static uint64_t abs_delta(const nx_diff_row *r)
{
    return r->delta_ns < 0 ? (uint64_t)0 - (uint64_t)r->delta_ns : (uint64_t)r->delta_ns;
}

static int row_cmp(const void *x, const void *y)
{
    const nx_diff_row *a = x, *b = y;
    uint64_t da = abs_delta(a), db = abs_delta(b);
    if (da != db)
        return da > db ? -1 : 1;
    return key_cmp(a->key, a->key_len, b->key, b->key_len);
}

static int norm_cmp(const void *x, const void *y)
{
    const nx_diff_row *a = x, *b = y;
    double da = fabs(a->norm_delta), db = fabs(b->norm_delta);
    if (da != db)
        return da > db ? -1 : 1;
    return key_cmp(a->key, a->key_len, b->key, b->key_len);
}

/* The divisors of d->normalize, then each row's normalised figures and their order. */
static int normalize(nx_diff *d, nx_error *err)
{
    if (d->normalize == NX_DIFF_NORM_NONE)
        return 0;
    bool step = d->normalize == NX_DIFF_NORM_STEP;
    int64_t a = step ? d->steps_a : d->has_wall_a ? d->wall_a : 0;
    int64_t b = step ? d->steps_b : d->has_wall_b ? d->wall_b : 0;
    if (a <= 0 || b <= 0) {
        snprintf(err->msg, sizeof err->msg, "cannot normalise per %s: %s has %s", step ? "step" : "wall time",
                 a <= 0 ? "A" : "B",
                 step ? "no ProfilerStep#<n> annotation" : "no wall time (a device profile has none)");
        return NX_DIFF_NO_DIVISOR;
    }
    d->div_a = (double)a;
    d->div_b = (double)b;
    for (size_t i = 0; i < d->n_rows; i++) {
        nx_diff_row *r = &d->rows[i];
        r->norm_a = (double)r->a.total_ns / d->div_a;
        r->norm_b = (double)r->b.total_ns / d->div_b;
        r->norm_delta = r->norm_b - r->norm_a;
    }
    qsort(d->rows, d->n_rows, sizeof *d->rows, norm_cmp);
    return 0;
}

/* The merge walk over the two sorted sides; takes their keys. */
static int join(side *a, side *b, nx_diff *d, nx_error *err)
{
    d->rows = calloc(a->n + b->n + 1, sizeof *d->rows);
    if (!d->rows) {
        snprintf(err->msg, sizeof err->msg, "diff: out of memory");
        return -1;
    }
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int c = i == a->n ? 1 : j == b->n ? -1 : entry_cmp(&a->e[i], &b->e[j]);
        nx_diff_row *row = &d->rows[d->n_rows++];
        entry *src = c <= 0 ? &a->e[i] : &b->e[j];
        row->key = src->key;
        row->key_len = src->len;
        src->key = NULL;
        if (c <= 0)
            row->a = a->e[i++].s;
        if (c >= 0) {
            row->b = b->e[j].s;
            free(b->e[j++].key);
            b->e[j - 1].key = NULL;
        }
        finish_row(row);
        if (add_to(&d->total_a, &row->a, "diff totals of A", err) < 0 ||
            add_to(&d->total_b, &row->b, "diff totals of B", err) < 0)
            return -1;
    }
    qsort(d->rows, d->n_rows, sizeof *d->rows, row_cmp);
    return 0;
}

int nx_diff_run(const char *a_dir, const char *b_dir, const nx_diff_options *o, nx_diff *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    bool sys_a = nx_profile_is_system(a_dir), sys_b = nx_profile_is_system(b_dir);
    if (sys_a != sys_b) {
        snprintf(err->msg, sizeof err->msg, "%s is a %s profile and %s a %s profile: only two of one kind compare",
                 a_dir, sys_a ? "system" : "device", b_dir, sys_b ? "system" : "device");
        return NX_DIFF_KINDS;
    }
    out->by = o->by ? o->by : sys_a ? "name" : "opcode";
    out->table = sys_a ? SYSTEM_TABLE : strcmp(out->by, "framework_name") == 0 ? FRAMEWORK_TABLE : DEVICE_TABLE;
    plan p = plan_of(out->by, sys_a, o->include_profiler);
    side a = {0}, b = {0};
    bool self_b = false;
    int rc = side_run(a_dir, out->table, &p, &a, &out->has_self, err);
    if (rc == 0)
        rc = side_run(b_dir, out->table, &p, &b, &self_b, err);
    if (rc == 0)
        rc = join(&a, &b, out, err);
    if (rc == 0)
        rc = nx_diff_totals(a_dir, b_dir, sys_a, out, err);
    out->has_self = out->has_self && self_b;
    out->excluded_a = a.excluded;
    out->excluded_b = b.excluded;
    out->has_wall_a = a.has_wall;
    out->wall_a = a.wall;
    out->has_wall_b = b.has_wall;
    out->wall_b = b.wall;
    out->steps_a = a.steps;
    out->steps_b = b.steps;
    out->normalize = o->normalize;
    side_free(&a);
    side_free(&b);
    if (rc == 0)
        rc = normalize(out, err);
    if (rc != 0)
        nx_diff_free(out);
    return rc;
}

void nx_diff_free(nx_diff *d)
{
    for (size_t i = 0; i < d->n_rows; i++)
        free(d->rows[i].key);
    free(d->rows);
    d->rows = NULL;
    d->n_rows = 0;
    free(d->devices);
    free(d->steps);
    d->devices = NULL;
    d->steps = NULL;
    d->n_devices = d->n_steps = 0;
    nx_device_stats_free(&d->stats_a);
    nx_device_stats_free(&d->stats_b);
}

const char *nx_diff_normalize_name(nx_diff_normalize n)
{
    return n == NX_DIFF_NORM_STEP ? "step" : n == NX_DIFF_NORM_WALL ? "wall" : NULL;
}

int nx_diff_normalize_parse(const char *s, nx_diff_normalize *out)
{
    if (strcmp(s, "step") == 0)
        *out = NX_DIFF_NORM_STEP;
    else if (strcmp(s, "wall") == 0)
        *out = NX_DIFF_NORM_WALL;
    else if (strcmp(s, "none") == 0)
        *out = NX_DIFF_NORM_NONE;
    else
        return -1;
    return 0;
}

const char *nx_diff_status_name(nx_diff_status s)
{
    static const char *const names[] = {"added", "removed", "changed", "same"};
    return names[s];
}

size_t nx_diff_shown(const nx_diff *d, uint64_t limit)
{
    return limit == 0 || limit > d->n_rows ? d->n_rows : (size_t)limit;
}
