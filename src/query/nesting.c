/* nesting.c — depth and self time per track (rules in nesting.h). */
#include "query/nesting.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/profile_table.h"
#include "query/timeline_index.h"
#include "query/window.h"

/* An event on a track's stack: it may still enclose a later event. */
typedef struct open_ev {
    int64_t start, end, children;    /* children: sum of its children's durations (saturating) */
    uint64_t row;
    uint32_t depth;
    bool chain;                      /* every event below it on the stack encloses it */
} open_ev;

typedef struct group_ev {            /* an event of the latest start, not yet on the stack */
    int64_t end;
    uint64_t row;
} group_ev;

typedef struct ntrack {
    open_ev *stack;
    size_t n, cap;
    group_ev *group;
    size_t gn, gcap;
    int64_t gstart;                  /* the group's start */
} ntrack;

struct nx_nesting {
    nx_nesting_emit emit;
    void *ctx;
    ntrack *tracks;
    size_t n_tracks;
    bool stopped;                    /* rows out of order: nothing more is accepted */
};

nx_nesting *nx_nesting_new(nx_nesting_emit emit, void *ctx)
{
    nx_nesting *n = calloc(1, sizeof *n);
    if (n) {
        n->emit = emit;
        n->ctx = ctx;
    }
    return n;
}

void nx_nesting_free(nx_nesting *n)
{
    if (!n)
        return;
    for (size_t t = 0; t < n->n_tracks; t++) {
        free(n->tracks[t].stack);
        free(n->tracks[t].group);
    }
    free(n->tracks);
    free(n);
}

static int64_t duration(int64_t start, int64_t end)
{
    uint64_t d = (uint64_t)end - (uint64_t)start;   /* end >= start: exact in uint64 */
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* Drops the top of the stack, handing over its values. */
static int pop(nx_nesting *n, ntrack *t)
{
    const open_ev *e = &t->stack[--t->n];
    int64_t self = duration(e->start, e->end) - e->children;
    return n->emit(n->ctx, e->row, e->depth, self > 0 ? self : 0);
}

/* Puts an event on the stack: its depth and parent from the events there. */
static int push(nx_nesting *n, ntrack *t, int64_t start, int64_t end, uint64_t row)
{
    /* Events that end before this start cannot enclose it or any later event. */
    while (t->n && t->stack[t->n - 1].end < start)
        if (pop(n, t) != 0)
            return -1;
    /* Every event on the stack starts no later than this one, so the enclosers are
     * those ending no earlier; the innermost is the one nearest the top. */
    size_t p = t->n;
    while (p > 0 && t->stack[p - 1].end < end)
        p--;
    uint32_t depth;
    if (p == t->n && (p == 0 || t->stack[p - 1].chain)) {
        depth = (uint32_t)t->n;   /* a proper call stack: all of it encloses the event */
    } else {
        depth = 0;
        for (size_t k = 0; k < t->n; k++)
            depth += t->stack[k].end >= end;
    }
    if (p > 0) {
        open_ev *parent = &t->stack[p - 1];
        int64_t d = duration(start, end);
        parent->children = parent->children > INT64_MAX - d ? INT64_MAX : parent->children + d;
    }
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 16;
        open_ev *s = realloc(t->stack, c * sizeof *s);
        if (!s)
            return -1;
        t->stack = s;
        t->cap = c;
    }
    bool chain = depth == t->n;
    t->stack[t->n++] = (open_ev){start, end, 0, row, depth, chain};
    return 0;
}

static int cmp_group(const void *a, const void *b)
{
    const group_ev *x = a, *y = b;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;   /* the longer encloses: first */
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The events of one start: longest first, equal ones in row order. */
static int group_flush(nx_nesting *n, ntrack *t)
{
    if (t->gn > 1)
        qsort(t->group, t->gn, sizeof *t->group, cmp_group);
    for (size_t i = 0; i < t->gn; i++)
        if (push(n, t, t->gstart, t->group[i].end, t->group[i].row) != 0)
            return -1;
    t->gn = 0;
    return 0;
}

int nx_nesting_add(nx_nesting *n, uint32_t track, int64_t start, int64_t end, uint64_t row)
{
    if (n->stopped || end < start || (track < n->n_tracks && n->tracks[track].gn && start < n->tracks[track].gstart)) {
        n->stopped = true;
        return 1;
    }
    if (track >= n->n_tracks) {
        size_t c = (size_t)track + 1;
        ntrack *g = realloc(n->tracks, c * sizeof *g);
        if (!g)
            return -1;
        memset(g + n->n_tracks, 0, (c - n->n_tracks) * sizeof *g);
        n->tracks = g;
        n->n_tracks = c;
    }
    ntrack *t = &n->tracks[track];
    if (t->gn && start > t->gstart && group_flush(n, t) != 0)
        return -1;
    if (t->gn == t->gcap) {
        size_t c = t->gcap ? t->gcap * 2 : 4;
        group_ev *g = realloc(t->group, c * sizeof *g);
        if (!g)
            return -1;
        t->group = g;
        t->gcap = c;
    }
    t->gstart = start;
    t->group[t->gn++] = (group_ev){end, row};
    return 0;
}

int nx_nesting_finish(nx_nesting *n)
{
    for (size_t k = 0; k < n->n_tracks; k++) {
        ntrack *t = &n->tracks[k];
        if (group_flush(n, t) != 0)
            return -1;
        while (t->n)
            if (pop(n, t) != 0)
                return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- reading -- */

struct nx_nesting_values {
    nx_tlx *index;                   /* the index answers, or: */
    nx_tlx_nest *rows;               /* per table row, computed */
    int64_t *file_first;             /* per file: its first row's number (n_files + 1) */
    size_t n_files;
};

static int store(void *ctx, uint64_t row, uint32_t depth, int64_t self_ns)
{
    nx_nesting_values *v = ctx;
    v->rows[row] = (nx_tlx_nest){self_ns, depth, 1};
    return 0;
}

/* The values from one scan of the table's timing and track columns. */
static int compute(nx_nesting_values *v, nx_profile_table *t, nxpq_error *err)
{
    const char *table = nx_profile_table_name(t);
    int64_t rows = nx_profile_table_num_rows(t);
    v->n_files = nx_profile_table_file_count(t);
    v->rows = calloc(rows > 0 ? (size_t)rows : 1, sizeof *v->rows);
    v->file_first = calloc(v->n_files + 1, sizeof *v->file_first);
    nx_nesting *n = nx_nesting_new(store, v);
    if (!v->rows || !v->file_first || !n) {
        nx_nesting_free(n);
        return nxpq_error_set(err, "%s: out of memory for the depth and self time of %lld rows", table,
                              (long long)rows);
    }
    for (size_t f = 0; f < v->n_files; f++)
        v->file_first[f + 1] = v->file_first[f] + nx_profile_table_file_rows(t, f);
    int rc = -1;
    nx_window_options wo = {.start = INT64_MIN, .end = INT64_MAX};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        goto done;
    nx_window_batch b;
    int more;
    while ((more = nx_window_next(w, &b, err)) > 0) {
        int64_t base = v->file_first[b.file] + b.batch->first_row;
        for (size_t k = 0; k < b.n_rows; k++) {
            int64_t row = base + b.rows[k];
            if (b.file >= v->n_files || row >= v->file_first[b.file + 1]) {
                nxpq_error_set(err, "%s: file %zu holds more rows than its footer says", table, b.file);
                goto done;
            }
            int a = nx_nesting_add(n, b.track[k], b.start[k], b.end[k], (uint64_t)row);
            if (a > 0) {
                nxpq_error_set(err, "%s: row %lld starts before the previous event of its track or ends before it "
                                    "starts; depth and self time need each track in start order",
                               table, (long long)row);
                goto done;
            }
            if (a < 0) {
                nxpq_error_set(err, "%s: out of memory computing depth and self time", table);
                goto done;
            }
        }
    }
    if (more < 0)
        goto done;
    if (nx_nesting_finish(n) != 0) {
        nxpq_error_set(err, "%s: out of memory computing depth and self time", table);
        goto done;
    }
    rc = 0;
done:
    nx_window_close(w);
    nx_nesting_free(n);
    return rc;
}

int nx_nesting_open(const char *profile_dir, const char *table, nx_nesting_values **out, char *note,
                    size_t note_len, nxpq_error *err)
{
    *out = NULL;
    char why[512] = "";
    const nx_timeline_info *info = nx_timeline_find(table);
    if (!info || !info->nested)
        return nxpq_error_set(err, "%s: not a table whose events nest (no depth or self time)", table);
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, table, &t, err);
    if (rc != 0)
        return rc;
    nx_nesting_values *v = calloc(1, sizeof *v);
    if (!v) {
        nx_profile_table_close(t);
        return nxpq_error_set(err, "%s: out of memory", table);
    }
    /* NXPROF_NO_TIMELINE_INDEX=1 forces the scan, as for sampling (sampled_pass.h). */
    const char *off = getenv("NXPROF_NO_TIMELINE_INDEX");
    bool no_index = off && strcmp(off, "1") == 0;
    nx_tlx *x = NULL;
    int irc = no_index ? 1 : nx_tlx_open(profile_dir, table, &x, why, sizeof why);
    if (irc < 0) {
        rc = nxpq_error_set(err, "%s: out of memory opening its timeline index", table);
    } else if (irc == 0 && nx_tlx_has_nesting(x)) {
        v->index = x;
        x = NULL;
    } else {
        if (irc == 0)
            snprintf(why, sizeof why, "it holds no depth and self time");
        else if (no_index)
            snprintf(why, sizeof why, "NXPROF_NO_TIMELINE_INDEX=1");
        rc = compute(v, t, err);
    }
    nx_tlx_close(x);
    nx_profile_table_close(t);
    if (rc != 0) {
        nx_nesting_close(v);
        return -1;
    }
    if (note)
        snprintf(note, note_len, "%s", why);
    *out = v;
    return 0;
}

bool nx_nesting_get(const nx_nesting_values *v, int64_t ordinal, uint32_t *depth, int64_t *self_ns)
{
    if (v->index)
        return nx_tlx_nesting(v->index, ordinal, depth, self_ns);
    size_t file = (size_t)((uint64_t)ordinal >> 40);
    int64_t row = ordinal & ((INT64_C(1) << 40) - 1);
    if (ordinal < 0 || file >= v->n_files || row >= v->file_first[file + 1] - v->file_first[file])
        return false;
    const nx_tlx_nest *e = &v->rows[v->file_first[file] + row];
    if (!e->set)
        return false;
    *depth = e->depth;
    *self_ns = e->self_ns;
    return true;
}

void nx_nesting_close(nx_nesting_values *v)
{
    if (!v)
        return;
    nx_tlx_close(v->index);
    free(v->rows);
    free(v->file_first);
    free(v);
}
