/*
 * aggregate.c — the selection aggregates of aggregate.h.
 *
 * One window query over the range. Keys are interned in an open-addressing
 * table (XXH3 of a tag byte and the key's bytes) into dense group ids; a
 * dictionary-form key column maps each dictionary entry to its group once
 * (rebuilt when a batch brings another dictionary), and a key "track" maps
 * each track id once. For a nested table every selected event also goes
 * through the nesting pass, clipped to the range (profile/nesting.h
 * nx_nesting_clip); the pass hands back each event's self time later, so the
 * row number it carries is (sequence << GROUP_BITS) | group id: the sequence
 * keeps the pass's tie order (later rows after earlier ones), the low bits
 * say which group the self time belongs to.
 */
#include "query/aggregate.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "profile/nesting.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/engine/row_split.h"
#include "query/engine/window.h"
#include "schema/schema.h"
#include "util/fork_join.h"

enum { GROUP_BITS = 20 };
_Static_assert(NX_AGGREGATE_MAX_GROUPS == 1u << GROUP_BITS, "group ids fit the nesting row's low bits");

/* ------------------------------------------------------------------ groups -- */

typedef struct kmeta {
    uint64_t hash;
    size_t off;                   /* a text key's bytes: bytes + off (they move as bytes grows) */
} kmeta;

typedef struct keyset {
    nx_aggregate_group *g;        /* s is set at the end */
    kmeta *m;
    size_t n, cap;
    uint32_t *slots;              /* group id + 1, 0 = empty; mask + 1 slots */
    size_t mask;
    char *bytes;
    size_t blen, bcap;
} keyset;

static void keyset_free(keyset *k)
{
    free(k->g);
    free(k->m);
    free(k->slots);
    free(k->bytes);
}

static uint64_t key_hash(bool null, bool is_int, int64_t i, const char *s, size_t len)
{
    if (null)
        return XXH3_64bits("", 0);
    if (is_int)
        return XXH3_64bits_withSeed(&i, sizeof i, 1);
    return XXH3_64bits_withSeed(s, len, 2);
}

static bool key_equal(const keyset *k, size_t id, bool null, bool is_int, int64_t i, const char *s, size_t len)
{
    const nx_aggregate_group *g = &k->g[id];
    if (g->null || null)
        return g->null && null;
    if (g->is_int || is_int)
        return g->is_int && is_int && g->i == i;
    return g->len == len && memcmp(k->bytes + k->m[id].off, s, len) == 0;
}

static int grow_slots(keyset *k)
{
    size_t size = k->slots ? (k->mask + 1) * 2 : 64;
    uint32_t *slots = calloc(size, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t id = 0; id < k->n; id++) {
        size_t p = k->m[id].hash & (size - 1);
        while (slots[p])
            p = (p + 1) & (size - 1);
        slots[p] = (uint32_t)id + 1;
    }
    free(k->slots);
    k->slots = slots;
    k->mask = size - 1;
    return 0;
}

static int add_group(keyset *k, uint64_t h, bool null, bool is_int, int64_t i, const char *s, size_t len)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        nx_aggregate_group *g = realloc(k->g, cap * sizeof *g);
        if (!g)
            return -1;
        k->g = g;
        kmeta *m = realloc(k->m, cap * sizeof *m);
        if (!m)
            return -1;
        k->m = m;
        k->cap = cap;
    }
    if (!null && !is_int && (!k->bytes || len > k->bcap - k->blen)) {
        size_t cap = k->bcap ? k->bcap : 4096;
        while (cap - k->blen < len)
            cap *= 2;
        char *b = realloc(k->bytes, cap);
        if (!b)
            return -1;
        k->bytes = b;
        k->bcap = cap;
    }
    nx_aggregate_group *g = &k->g[k->n];
    *g = (nx_aggregate_group){.null = null, .is_int = is_int, .i = is_int ? i : 0};
    k->m[k->n] = (kmeta){h, k->blen};
    if (!null && !is_int) {
        if (len)
            memcpy(k->bytes + k->blen, s, len);
        g->len = len;
        k->blen += len;
    }
    size_t p = h & k->mask;
    while (k->slots[p])
        p = (p + 1) & k->mask;
    k->slots[p] = (uint32_t)k->n + 1;
    k->n++;
    return 0;
}

/* The group id of a key, adding it when new: >= 0, -1 out of memory, -2 too many groups. */
static int64_t key_group(keyset *k, bool null, bool is_int, int64_t i, const char *s, size_t len)
{
    uint64_t h = key_hash(null, is_int, i, s, len);
    if (k->slots)
        for (size_t p = h & k->mask; k->slots[p]; p = (p + 1) & k->mask) {
            size_t id = k->slots[p] - 1;
            if (k->m[id].hash == h && key_equal(k, id, null, is_int, i, s, len))
                return (int64_t)id;
        }
    if (k->n >= NX_AGGREGATE_MAX_GROUPS)
        return -2;
    if ((k->n + 1) * 2 > (k->slots ? k->mask + 1 : 0) && grow_slots(k) < 0)
        return -1;
    if (add_group(k, h, null, is_int, i, s, len) < 0)
        return -1;
    return (int64_t)k->n - 1;
}

/* ------------------------------------------------------------------- state -- */

typedef struct agg {
    const nx_aggregate_options *o;
    const char *table;
    const char *dir;              /* the profile (each span opens the table itself) */
    int64_t rows;                 /* the table's rows */
    bool by_track, have_key;      /* have_key: the files hold the key column */
    keyset ks;
    uint8_t *track_sel;           /* per track id: selected */
    int64_t *track_gid;           /* per track id: its group (by_track) */
    size_t n_known, track_cap;
    uint64_t dict_id;             /* the dictionary dict_gid maps (have_dict) */
    bool have_dict;
    int64_t *dict_gid;            /* per entry (+1 for null): group, -1 unknown */
    size_t dict_cap;
    nx_nesting *nest;
    uint64_t seq;
    uint64_t events;
    bool overflow;                /* a self sum beyond int64 */
} agg;

static int64_t clip(int64_t s, int64_t e, int64_t lo, int64_t hi)
{
    if (s < lo)
        s = lo;
    if (e > hi)
        e = hi;
    if (e <= s)
        return 0;
    uint64_t d = (uint64_t)e - (uint64_t)s;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

static int self_emit(void *ctx, uint64_t row, uint32_t depth, int64_t self_ns)
{
    (void)depth;
    agg *a = ctx;
    nx_aggregate_group *g = &a->ks.g[row & ((1u << GROUP_BITS) - 1)];
    if (__builtin_add_overflow(g->self_ns, self_ns, &g->self_ns))
        a->overflow = true;
    return 0;
}

/* Flags (and by_track groups) of the window's tracks up to its current count. */
static int learn_tracks(agg *a, const nx_window *w, nx_error *err)
{
    size_t n = nx_window_track_count(w);
    if (n <= a->n_known)
        return 0;
    if (n > a->track_cap) {
        size_t cap = a->track_cap ? a->track_cap : 64;
        while (cap < n)
            cap *= 2;
        uint8_t *sel = realloc(a->track_sel, cap);
        if (sel)
            a->track_sel = sel;
        int64_t *gid = realloc(a->track_gid, cap * sizeof *gid);
        if (gid)
            a->track_gid = gid;
        if (!sel || !gid)
            return nx_error_set(err, "%s: out of memory aggregating", a->table);
        a->track_cap = cap;
    }
    for (size_t id = a->n_known; id < n; id++) {
        size_t len;
        const char *name = nx_window_track_name(w, (uint32_t)id, &len);
        bool sel = a->o->n_tracks == 0;
        for (size_t k = 0; k < a->o->n_tracks && !sel; k++)
            sel = strlen(a->o->tracks[k]) == len && memcmp(a->o->tracks[k], name, len) == 0;
        a->track_sel[id] = sel;
        a->track_gid[id] = -1;
        if (sel && a->by_track && (a->track_gid[id] = key_group(&a->ks, false, false, 0, name, len)) < 0)
            return a->track_gid[id] == -2 ? NX_AGGREGATE_TOO_MANY
                                          : nx_error_set(err, "%s: out of memory aggregating", a->table);
    }
    a->n_known = n;
    return 0;
}

/* Readies dict_gid for dictionary-form column c (all unknown for a new dictionary). 0, or -1. */
static int dict_ready(agg *a, const nxpq_column_data *c)
{
    if (a->have_dict && a->dict_id == c->dict_id)
        return 0;
    if (c->dict_n + 1 > a->dict_cap) {
        int64_t *d = realloc(a->dict_gid, (c->dict_n + 1) * sizeof *d);
        if (!d)
            return -1;
        a->dict_gid = d;
        a->dict_cap = c->dict_n + 1;
    }
    for (size_t d = 0; d <= c->dict_n; d++)
        a->dict_gid[d] = -1;
    a->dict_id = c->dict_id;
    a->have_dict = true;
    return 0;
}

/* The group of entry d of dictionary-form column c (after dict_ready). */
static int64_t entry_group(agg *a, const nxpq_column_data *c, uint32_t d)
{
    int64_t g;
    if (d == c->dict_n)
        g = key_group(&a->ks, true, false, 0, NULL, 0);
    else if (c->type == NXPQ_STRING)
        g = key_group(&a->ks, false, false, 0, c->dict_strs[d].ptr, c->dict_strs[d].len);
    else
        g = key_group(&a->ks, false, true, c->type == NXPQ_INT64 ? c->dict_values.i64[d] : c->dict_values.i32[d],
                      NULL, 0);
    return a->dict_gid[d] = g;
}

/* The group of row i of key column c: NULL (the files lack it) or plain values. */
static int64_t row_group(agg *a, const nxpq_column_data *c, size_t i)
{
    if (!c)
        return key_group(&a->ks, true, false, 0, NULL, 0);
    if (c->type == NXPQ_STRING) {
        const char *s;
        size_t len;
        bool ok = nx_column_str(c, i, &s, &len);
        return key_group(&a->ks, !ok, false, 0, ok ? s : NULL, ok ? len : 0);
    }
    int64_t v;
    bool ok = nx_column_int(c, i, &v);
    return key_group(&a->ks, !ok, ok, ok ? v : 0, NULL, 0);
}

static int add_batch(agg *a, nx_window *w, const nx_window_batch *b, nx_error *err)
{
    int rc = learn_tracks(a, w, err);
    if (rc != 0)
        return rc;
    const nxpq_column_data *c = a->have_key ? &b->batch->columns[0] : NULL;
    const uint32_t *dict = c && c->dict_index ? c->dict_index : NULL;
    if (dict && !a->by_track && dict_ready(a, c) < 0)
        return nx_error_set(err, "%s: out of memory aggregating", a->table);
    for (size_t k = 0; k < b->n_rows; k++) {
        uint32_t tid = b->track[k];
        if (!a->track_sel[tid])
            continue;
        int64_t gid;
        if (a->by_track)
            gid = a->track_gid[tid];
        else if (dict)
            gid = a->dict_gid[dict[b->rows[k]]] >= 0 ? a->dict_gid[dict[b->rows[k]]]
                                                      : entry_group(a, c, dict[b->rows[k]]);
        else
            gid = row_group(a, c, b->rows[k]);
        if (gid < 0)
            return gid == -2 ? NX_AGGREGATE_TOO_MANY : nx_error_set(err, "%s: out of memory aggregating", a->table);
        nx_aggregate_group *g = &a->ks.g[gid];
        g->count++;
        a->events++;
        if (__builtin_add_overflow(g->total_ns, clip(b->start[k], b->end[k], a->o->start, a->o->end), &g->total_ns))
            return nx_error_set(err, "%s: total time of a group beyond int64", a->table);
        if (!a->nest)
            continue;
        int n = nx_nesting_add(a->nest, tid, b->start[k], b->end[k], (a->seq++ << GROUP_BITS) | (uint64_t)gid);
        if (n > 0)
            return nx_error_set(err, "%s: an event starts before the previous event of its track or ends before "
                                       "it starts; self time needs each track in start order",
                                  a->table);
        if (n < 0)
            return nx_error_set(err, "%s: out of memory computing self time", a->table);
    }
    return 0;
}

/* --------------------------------------------------------------- the order -- */

static int cmp_key(const nx_aggregate_group *x, const nx_aggregate_group *y)
{
    if (x->null || y->null)
        return x->null - y->null;        /* the null key last */
    if (x->is_int)
        return x->i < y->i ? -1 : x->i > y->i;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_group(const void *pa, const void *pb)
{
    const nx_aggregate_group *x = pa, *y = pb;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return cmp_key(x, y);
}

static int finish(agg *a, nx_aggregate *out, nx_error *err)
{
    if (a->nest && nx_nesting_finish(a->nest) != 0)
        return nx_error_set(err, "%s: out of memory computing self time", a->table);
    if (a->overflow)
        return nx_error_set(err, "%s: self time of a group beyond int64", a->table);
    keyset *k = &a->ks;
    for (size_t i = 0; i < k->n; i++)
        if (!k->g[i].null && !k->g[i].is_int)
            k->g[i].s = k->bytes + k->m[i].off;
    if (k->n > 1)
        qsort(k->g, k->n, sizeof *k->g, cmp_group);
    out->groups = k->g;
    out->n_groups = k->n;
    out->n_shown = a->o->top < k->n ? a->o->top : k->n;
    out->priv = k->bytes;
    out->events = a->events;
    for (size_t i = out->n_shown; i < k->n; i++) {
        out->other_count += k->g[i].count;
        if (__builtin_add_overflow(out->other_total_ns, k->g[i].total_ns, &out->other_total_ns) ||
            __builtin_add_overflow(out->other_self_ns, k->g[i].self_ns, &out->other_self_ns))
            return nx_error_set(err, "%s: the other groups' time beyond int64", a->table);
    }
    k->g = NULL;
    k->bytes = NULL;
    return 0;
}

/* ------------------------------------------------------------------ spans -- */

static void agg_release(agg *a)
{
    nx_nesting_free(a->nest);
    keyset_free(&a->ks);
    free(a->track_sel);
    free(a->track_gid);
    free(a->dict_gid);
}

/* Passes the table's rows [begin, end) (all when end is 0) into a. */
static int pass_span(agg *a, nx_profile_table *t, const char *by, int64_t begin, int64_t end, nx_error *err)
{
    const char *cols[1] = {by};
    nx_window_options wo = {.start = a->o->start, .end = a->o->end, .columns = cols, .n_columns = a->have_key,
                            .dictionary = true, .rows_begin = begin, .rows_end = end};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        return -1;
    nx_window_batch b;
    int more, rc = 0;
    while ((more = nx_window_next(w, &b, err)) > 0 && (rc = add_batch(a, w, &b, err)) == 0)
        ;
    nx_window_close(w);
    return more < 0 ? -1 : rc;
}

/* The workers of a table shared out (row_split.h): span i goes into part[i],
 * part[0] being the caller's state. */
typedef struct span_job {
    const char *dir, *by;
    int64_t rows;
    size_t n;
    agg *part[NX_FORK_JOIN_MAX];
    int rc[NX_FORK_JOIN_MAX];
    nx_error err[NX_FORK_JOIN_MAX];
} span_job;

static void span_work(void *ctx, size_t i)
{
    span_job *j = ctx;
    agg *a = j->part[i];
    int64_t begin, end;
    nx_row_split_span(j->rows, j->n, i, &begin, &end);
    nx_profile_table *t;
    j->rc[i] = nx_profile_table_open(j->dir, a->table, &t, &j->err[i]);
    if (j->rc[i] == NX_PROFILE_TABLE_ABSENT)
        j->rc[i] = nx_error_set(&j->err[i], "%s: the table went away while it was aggregated", a->table);
    if (j->rc[i] != 0)
        return;
    j->rc[i] = pass_span(a, t, j->by, begin, end, &j->err[i]);
    nx_profile_table_close(t);
}

/* Adds part p's groups into a's: sums per key, so the groups, and the order
 * finish gives them, are those of one pass. */
static int merge_part(agg *a, const agg *p, nx_error *err)
{
    a->events += p->events;
    for (size_t id = 0; id < p->ks.n; id++) {
        const nx_aggregate_group *g = &p->ks.g[id];
        const char *text = g->null || g->is_int ? NULL : p->ks.bytes + p->ks.m[id].off;
        int64_t gid = key_group(&a->ks, g->null, g->is_int, g->i, text, g->len);
        if (gid < 0)
            return gid == -2 ? NX_AGGREGATE_TOO_MANY : nx_error_set(err, "%s: out of memory aggregating", a->table);
        a->ks.g[gid].count += g->count;
        if (__builtin_add_overflow(a->ks.g[gid].total_ns, g->total_ns, &a->ks.g[gid].total_ns))
            return nx_error_set(err, "%s: total time of a group beyond int64", a->table);
    }
    return 0;
}

/* Passes the table into a: in spans on threads, merged into a, or, for a
 * nested table (whose nesting pass needs each track whole and in order), in
 * one span on the caller's thread. Memory: each span's groups. */
static int pass_spans(agg *a, const char *by, nx_error *err)
{
    span_job *j = calloc(1, sizeof *j);
    agg *parts = NULL;
    if (!j)
        return nx_error_set(err, "%s: out of memory aggregating", a->table);
    j->dir = a->dir;
    j->by = by;
    j->rows = a->rows;
    j->n = a->nest ? 1 : nx_row_split_count(j->rows, a->o->threads);
    if (j->n > 1 && !(parts = calloc(j->n - 1, sizeof *parts))) {
        free(j);
        return nx_error_set(err, "%s: out of memory aggregating", a->table);
    }
    j->part[0] = a;
    for (size_t i = 1; i < j->n; i++) {
        parts[i - 1] = (agg){.o = a->o, .table = a->table, .by_track = a->by_track, .have_key = a->have_key};
        j->part[i] = &parts[i - 1];
    }
    nx_fork_join(j->n, span_work, j);
    int rc = 0;
    for (size_t i = 0; i < j->n && rc == 0; i++)
        if ((rc = j->rc[i]) != 0)
            *err = j->err[i];
    for (size_t i = 1; i < j->n && rc == 0; i++)
        rc = merge_part(a, j->part[i], err);
    for (size_t i = 1; i < j->n; i++)
        agg_release(j->part[i]);
    free(parts);
    free(j);
    return rc;
}

/* -------------------------------------------------------------------- run -- */

/* Checks o->by against the schema and the files: 0 (a->by_track / a->have_key
 * set), NX_AGGREGATE_BAD_BY or -1. */
static int check_by(agg *a, nx_profile_table *t, const char *by, nx_error *err)
{
    if (strcmp(by, "track") == 0) {
        a->by_track = true;
        return 0;
    }
    const nx_schema_table *st = nx_schema_table_find(a->table);
    const nx_schema_field *f = st ? nx_schema_field_find(st, by) : NULL;
    bool text = f && strcmp(f->type, "string") == 0;
    if (!f || (!text && strcmp(f->type, "integer") != 0)) {
        nx_error_set(err, "%s: cannot group by '%s' (%s)", a->table, by,
                       f ? "not a string or integer field" : "no such field; 'track' or a field of the table");
        return NX_AGGREGATE_BAD_BY;
    }
    int c = nx_profile_table_find_column(t, by);
    if (c < 0)
        return 0;
    nxpq_type ty = nx_profile_table_column(t, (size_t)c)->type;
    if (text ? ty != NXPQ_STRING : ty != NXPQ_INT32 && ty != NXPQ_INT64)
        return nx_error_set(err, "%s: column '%s' is %s, expected %s", a->table, by, nxpq_type_name(ty),
                              text ? "a string" : "an integer");
    a->have_key = true;
    return 0;
}

static int run(agg *a, nx_profile_table *t, nx_aggregate *out, nx_error *err)
{
    const nx_timeline_info *info = nx_timeline_find(a->table);
    const nx_timeline_view *view = nx_timeline_view_find(a->table);
    if (!info || !view)
        return nx_error_set(err, "%s: not a timeline table", a->table);
    out->by = a->o->by ? a->o->by : view->aggregate_default;
    out->nested = info->nested;
    int rc = check_by(a, t, out->by, err);
    if (rc != 0)
        return rc;
    if (info->nested) {
        if (!(a->nest = nx_nesting_new(self_emit, a)))
            return nx_error_set(err, "%s: out of memory computing self time", a->table);
        nx_nesting_clip(a->nest, a->o->start, a->o->end);
    }
    rc = pass_spans(a, out->by, err);
    if (rc == NX_AGGREGATE_TOO_MANY)
        nx_error_set(err, "%s: grouping by '%s' gives more than %u groups", a->table, out->by,
                       NX_AGGREGATE_MAX_GROUPS);
    if (rc != 0)
        return rc;
    return finish(a, out, err);
}

int nx_aggregate_run(const char *profile_dir, const nx_aggregate_options *o, nx_aggregate *out, nx_error *err)
{
    *out = (nx_aggregate){0};
    if (o->start > o->end)
        return nx_error_set(err, "%s: range end %lld is before its start %lld", o->table, (long long)o->end,
                              (long long)o->start);
    nx_profile_table *t;
    int rc = nx_profile_table_open(profile_dir, o->table, &t, err);
    if (rc != 0)
        return rc;
    agg a = {.o = o, .table = o->table, .dir = profile_dir, .rows = nx_profile_table_num_rows(t)};
    rc = run(&a, t, out, err);
    nx_profile_table_close(t);
    agg_release(&a);
    if (rc != 0) {
        const char *by = out->by;
        nx_aggregate_free(out);
        out->by = by;
    }
    return rc;
}

void nx_aggregate_free(nx_aggregate *a)
{
    if (!a)
        return;
    free(a->groups);
    free(a->priv);
    *a = (nx_aggregate){0};
}
