/* nesting.c — the streaming pass that gives events their depth and self time (rule in nesting.h). */
#include "profile/nesting.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t lo, hi;                  /* durations are measured inside [lo, hi] (nx_nesting_clip) */
};

nx_nesting *nx_nesting_new(nx_nesting_emit emit, void *ctx)
{
    nx_nesting *n = calloc(1, sizeof *n);
    if (n) {
        n->emit = emit;
        n->ctx = ctx;
        n->lo = INT64_MIN;
        n->hi = INT64_MAX;
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

void nx_nesting_clip(nx_nesting *n, int64_t lo, int64_t hi)
{
    n->lo = lo;
    n->hi = hi;
}

/* The part of [start, end] inside [n->lo, n->hi], as a duration (0 when none). */
static int64_t clipped(const nx_nesting *n, int64_t start, int64_t end)
{
    int64_t s = start > n->lo ? start : n->lo, e = end < n->hi ? end : n->hi;
    return e < s ? 0 : duration(s, e);
}

/* Drops the top of the stack, handing over its values. */
static int pop(nx_nesting *n, ntrack *t)
{
    const open_ev *e = &t->stack[--t->n];
    int64_t self = clipped(n, e->start, e->end) - e->children;
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
        int64_t d = clipped(n, start, end);
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

