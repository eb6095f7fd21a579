/* tracks.c — the tracks of a profile (rules in tracks.h). */
#define _GNU_SOURCE /* memrchr */
#include "query/tracks.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_index.h"
#include "util/file_map.h"
#include "util/text.h"
#include "query/engine/nesting_values.h"
#include "query/track_labels.h"
#include "query/engine/window.h"

/* What a scan gathers per track id. */
typedef struct track_acc {
    int64_t count, first, last;
    uint32_t max_depth;
} track_acc;

/* A growable list of entries, each with the rank of its table. */
typedef struct entry_list {
    nx_track_entry *e;
    size_t *rank;
    size_t n, cap;
} entry_list;

static void part_free(nx_track_part *p) { free(p->s); }

static void entry_free(nx_track_entry *e)
{
    free(e->name);
    part_free(&e->instance);
    free(e->process_label);
    free(e->thread_label);
}

void nx_tracks_free(nx_tracks *t)
{
    for (size_t i = 0; t->tracks && i < t->n; i++)
        entry_free(&t->tracks[i]);
    free(t->tracks);
    for (size_t i = 0; i < t->n_errors; i++)
        free(t->errors[i].error);
    memset(t, 0, sizeof *t);
}

/* An integer part: the decimal text p[0..n) (an optional '-', then digits), or null. */
static nx_track_part int_part(const char *p, size_t n)
{
    nx_track_part r = {0};
    size_t i = n && p[0] == '-';
    if (n == i || n - i > 19)
        return r;
    int64_t v = 0;   /* built negative: INT64_MIN has no positive twin */
    for (size_t k = i; k < n; k++) {
        if (p[k] < '0' || p[k] > '9' || __builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, p[k] - '0', &v))
            return r;
    }
    if (!i && v == INT64_MIN)
        return r;
    r.ok = true;
    r.i = i ? v : -v;
    return r;
}

/* The "rank<N>/" a ranked thread track's name starts with (timeline_rules.h):
 * e->worker, and s/n moved past it; nothing when the name has no such prefix
 * followed by "<instance>/<pid>/<tid>". */
static void rank_prefix(nx_track_entry *e, const char **s, size_t *n)
{
    const char *slash = *n > 4 && memcmp(*s, "rank", 4) == 0 ? memchr(*s, '/', *n) : NULL;
    if (!slash)
        return;
    size_t rest = *n - (size_t)(slash + 1 - *s);
    const char *t = memrchr(slash + 1, '/', rest);
    nx_track_part w = int_part(*s + 4, (size_t)(slash - *s - 4));
    if (!t || !memrchr(slash + 1, '/', (size_t)(t - slash - 1)) || !w.ok || w.i < 0)
        return;
    e->worker = w;
    *s = slash + 1;
    *n = rest;
}

/* SystemProfileEvents' parts, read back from the track's name (tracks.h):
 * "nc<N>" gives nc; "[rank<W>/]<instance>/<pid>/<tid>" the other four. false
 * when out of memory. */
static bool name_parts(nx_track_entry *e)
{
    const char *s = e->name;
    size_t n = e->name_len;
    e->has_parts = true;
    if (n > 2 && s[0] == 'n' && s[1] == 'c' && (e->nc = int_part(s + 2, n - 2)).ok)
        return true;
    rank_prefix(e, &s, &n);
    const char *t = memrchr(s, '/', n);
    const char *p = t ? memrchr(s, '/', (size_t)(t - s)) : NULL;
    if (!p)
        return true;
    e->pid = int_part(p + 1, (size_t)(t - p - 1));
    e->tid = int_part(t + 1, n - (size_t)(t - s) - 1);
    if (p > s) {
        if (!(e->instance.s = nx_text_dup(s, (size_t)(p - s))))
            return false;
        e->instance.len = (size_t)(p - s);
        e->instance.ok = true;
    }
    return true;
}

/* A new entry of table `v` (rank: its view index) named name[0..len). NULL when out of memory. */
static nx_track_entry *entry_add(entry_list *l, const nx_timeline_view *v, size_t rank, const char *name, size_t len)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        nx_track_entry *g = realloc(l->e, nc * sizeof *g);
        if (!g)
            return NULL;
        l->e = g;
        size_t *r = realloc(l->rank, nc * sizeof *r);
        if (!r)
            return NULL;
        l->rank = r;
        l->cap = nc;
    }
    nx_track_entry *e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = nx_text_dup(name, len)))
        return NULL;
    e->view = v;
    e->name_len = len;
    l->rank[l->n++] = rank;
    if (nx_timeline_find(v->table)->track == NX_TRACK_SYSTEM && !name_parts(e))
        return NULL;
    return e;
}

/* ------------------------------------------------------------ one table -- */

/* Every track of the table from its timeline index. */
static int from_index(const nx_tlx *x, const nx_timeline_view *v, size_t rank, entry_list *l, nx_error *err)
{
    for (size_t id = 0; id < nx_tlx_track_count(x); id++) {
        const char *name;
        size_t len;
        uint64_t events;
        int64_t first, last;
        nx_tlx_track_info(x, id, &name, &len, &events, &first, &last);
        nx_track_entry *e = entry_add(l, v, rank, name, len);
        if (!e)
            return nx_error_set(err, "%s: out of memory", v->table);
        e->count = (int64_t)events;
        e->first_ts = first;
        e->last_ts = last;
        nx_tlx_track_max_depth(x, id, &e->max_depth);
    }
    return 0;
}

/* The scan's state for one table. */
typedef struct table_scan {
    const nx_timeline_view *v;
    nx_window *w;
    nx_nesting_values *nest;       /* nested tables */
    track_acc *acc;
    size_t n_acc;
} table_scan;

static bool acc_grow(table_scan *ts, size_t need)
{
    if (need <= ts->n_acc)
        return true;
    size_t n = need + 64;
    track_acc *g = realloc(ts->acc, n * sizeof *g);
    if (!g)
        return false;
    memset(g + ts->n_acc, 0, (n - ts->n_acc) * sizeof *g);
    ts->acc = g;
    ts->n_acc = n;
    return true;
}

static int scan_rows(table_scan *ts, nx_error *err)
{
    nx_window_batch wb;
    int rc;
    while ((rc = nx_window_next(ts->w, &wb, err)) > 0) {
        if (!acc_grow(ts, nx_window_track_count(ts->w)))
            return nx_error_set(err, "%s: out of memory", ts->v->table);
        int64_t base = nx_row_ordinal(wb.file, wb.batch->first_row);
        for (size_t k = 0; k < wb.n_rows; k++) {
            track_acc *a = &ts->acc[wb.track[k]];
            if (a->count++ == 0) {
                a->first = wb.start[k];
                a->last = wb.end[k];
            }
            if (wb.start[k] < a->first)
                a->first = wb.start[k];
            if (wb.end[k] > a->last)
                a->last = wb.end[k];
            uint32_t depth;
            int64_t self;
            if (ts->nest && nx_nesting_get(ts->nest, base + wb.rows[k], &depth, &self) && depth > a->max_depth)
                a->max_depth = depth;
        }
    }
    return rc < 0 ? -1 : 0;
}

/* Moves the scan's tracks into the list. */
static int scan_entries(table_scan *ts, size_t rank, entry_list *l, nx_error *err)
{
    for (uint32_t id = 0; id < nx_window_track_count(ts->w); id++) {
        size_t len;
        const char *name = nx_window_track_name(ts->w, id, &len);
        const track_acc *a = &ts->acc[id];
        nx_track_entry *e = entry_add(l, ts->v, rank, name, len);
        if (!e)
            return nx_error_set(err, "%s: out of memory", ts->v->table);
        e->count = a->count;
        e->first_ts = a->first;
        e->last_ts = a->last;
        e->max_depth = a->max_depth;
    }
    return 0;
}

/* Every track of the table by one window scan over all time. */
static int from_scan(const char *dir, nx_profile_table *t, const nx_timeline_view *v, size_t rank, entry_list *l,
                     nx_error *err)
{
    const nx_timeline_info *info = nx_timeline_find(v->table);
    table_scan ts = {.v = v};
    int rc = -1;
    if (info->nested && nx_nesting_open(dir, v->table, &ts.nest, NULL, 0, err) != 0)
        goto done;
    nx_window_options wo = {.start = INT64_MIN, .end = INT64_MAX};
    if (!(ts.w = nx_window_open(t, &wo, err)) || scan_rows(&ts, err) < 0 ||
        nx_nesting_check(ts.nest, v->table, err) != 0)
        goto done;
    rc = scan_entries(&ts, rank, l, err);
done:
    free(ts.acc);
    nx_window_close(ts.w);
    nx_nesting_close(ts.nest);
    return rc;
}

static int read_table(const char *dir, size_t rank, entry_list *l, nx_error *err)
{
    const nx_timeline_view *v = nx_timeline_view_at(rank);
    nx_tlx *x = NULL;
    int xrc = nx_tlx_open(dir, v->table, &x, NULL);
    if (xrc < 0)
        return nx_error_set(err, "%s: out of memory", v->table);
    uint32_t depth;
    if (xrc == 0 && (!nx_timeline_find(v->table)->nested || nx_tlx_track_count(x) == 0 ||
                     nx_tlx_track_max_depth(x, 0, &depth))) {
        int rc = from_index(x, v, rank, l, err);
        if (rc == 0 && nx_tlx_changed(x))
            rc = nx_error_set(err, "%s: timeline index: %s", v->table, NX_FILE_MAP_CHANGED);
        nx_tlx_close(x);
        return rc;
    }
    nx_tlx_close(x);
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, v->table, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc == 0)
        rc = from_scan(dir, t, v, rank, l, err);
    nx_profile_table_close(t);
    return rc;
}

/* read_table, then for SystemProfileEvents the framework threads' labels. */
static int read_labelled(const char *dir, size_t rank, entry_list *l, nx_error *err)
{
    size_t before = l->n;
    int rc = read_table(dir, rank, l, err);
    if (rc == 0 && nx_timeline_find(nx_timeline_view_at(rank)->table)->track == NX_TRACK_SYSTEM)
        rc = nx_track_labels_read(dir, l->e + before, l->n - before, err);
    return rc;
}

/* ---------------------------------------------------------------- order -- */

/* Natural order: runs of digits compare by value, the rest bytewise. */
static int natural_cmp(const char *a, size_t la, const char *b, size_t lb)
{
    size_t i = 0, j = 0;
    while (i < la && j < lb) {
        bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            size_t si = i, sj = j;
            while (si < la && a[si] == '0')
                si++;
            while (sj < lb && b[sj] == '0')
                sj++;
            size_t ei = si, ej = sj;
            while (ei < la && a[ei] >= '0' && a[ei] <= '9')
                ei++;
            while (ej < lb && b[ej] >= '0' && b[ej] <= '9')
                ej++;
            if (ei - si != ej - sj)
                return ei - si < ej - sj ? -1 : 1;
            int c = memcmp(a + si, b + sj, ei - si);
            if (c)
                return c;
            i = ei;
            j = ej;
        } else {
            if (a[i] != b[j])
                return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
            i++;
            j++;
        }
    }
    return i < la ? 1 : j < lb ? -1 : 0;
}

static int i64_cmp(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

/* Labelled tracks: by instance, then as Perfetto orders threads (tracks.h). */
static int labelled_cmp(const nx_track_entry *a, const nx_track_entry *b)
{
    int c = natural_cmp(a->instance.ok ? a->instance.s : "", a->instance.ok ? a->instance.len : 0,
                        b->instance.ok ? b->instance.s : "", b->instance.ok ? b->instance.len : 0);
    if (!c)
        c = i64_cmp(a->process_sort, b->process_sort);
    if (!c)
        c = i64_cmp(a->pid.i, b->pid.i);
    if (!c)
        c = i64_cmp(a->thread_sort, b->thread_sort);
    return c ? c : i64_cmp(a->tid.i, b->tid.i);
}

/* What qsort orders: an entry and its table's rank. */
typedef struct ranked {
    nx_track_entry e;
    size_t rank;
} ranked;

static int ranked_cmp(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->e.view->group != b->e.view->group)
        return a->e.view->group < b->e.view->group ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->e.worker.ok != b->e.worker.ok)
        return a->e.worker.ok ? 1 : -1;
    if (a->e.worker.i != b->e.worker.i)
        return a->e.worker.i < b->e.worker.i ? -1 : 1;
    if (a->e.labelled != b->e.labelled)
        return a->e.labelled ? -1 : 1;
    int c = a->e.labelled ? labelled_cmp(&a->e, &b->e) : 0;
    if (c)
        return c;
    c = natural_cmp(a->e.name, a->e.name_len, b->e.name, b->e.name_len);
    if (c)
        return c;
    if (a->e.name_len != b->e.name_len)
        return a->e.name_len < b->e.name_len ? -1 : 1;
    return memcmp(a->e.name, b->e.name, a->e.name_len);
}

/* Sorts the list into out (rules in tracks.h) and sets the groups and span. */
static int finish(entry_list *l, nx_tracks *out, nx_error *err)
{
    ranked *r = malloc((l->n + 1) * sizeof *r);
    if (!r)
        return nx_error_set(err, "tracks: out of memory");
    for (size_t i = 0; i < l->n; i++)
        r[i] = (ranked){l->e[i], l->rank[i]};
    qsort(r, l->n, sizeof *r, ranked_cmp);
    for (size_t i = 0; i < l->n; i++)
        l->e[i] = r[i].e;
    free(r);
    out->tracks = l->e;
    out->n = l->n;
    l->e = NULL;
    l->n = 0;
    size_t i = 0;
    for (size_t g = 0; g <= NX_TIMELINE_GROUPS; g++) {
        while (i < out->n && out->tracks[i].view->group < g)
            i++;
        out->group_first[g] = g == NX_TIMELINE_GROUPS ? out->n : i;
    }
    for (size_t k = 0; k < out->n; k++) {
        const nx_track_entry *e = &out->tracks[k];
        if (e->count == 0)
            continue;
        if (!out->have_span || e->first_ts < out->first_ts)
            out->first_ts = e->first_ts;
        if (!out->have_span || e->last_ts > out->last_ts)
            out->last_ts = e->last_ts;
        out->have_span = true;
    }
    return 0;
}

/* Table `rank` read into l, or, when it cannot be, its tracks dropped and its error
 * recorded in out. -1 only when out of memory recording the error. */
static int read_or_record(const char *dir, size_t rank, entry_list *l, nx_tracks *out, nx_error *err)
{
    size_t before = l->n;
    nx_error terr = {0};
    if (read_labelled(dir, rank, l, &terr) == 0)
        return 0;
    while (l->n > before)
        entry_free(&l->e[--l->n]);
    nx_track_error *e = &out->errors[out->n_errors];
    e->table = nx_timeline_view_at(rank)->table;
    if (!(e->error = strdup(terr.msg[0] ? terr.msg : "unreadable")))
        return nx_error_set(err, "%s: out of memory", e->table);
    out->n_errors++;
    return 0;
}

int nx_tracks_read(const char *profile_dir, nx_tracks *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    entry_list l = {0};
    int rc = 0;
    for (size_t rank = 0; rc == 0 && rank < NX_TIMELINE_TABLES; rank++)
        rc = read_or_record(profile_dir, rank, &l, out, err);
    if (rc == 0)
        rc = finish(&l, out, err);
    for (size_t i = 0; i < l.n; i++)
        entry_free(&l.e[i]);
    free(l.e);
    free(l.rank);
    if (rc != 0)
        nx_tracks_free(out);
    return rc;
}
