/*
 * sum_guard.h — int64 sums over a capture's records that fail instead of wrapping.
 *
 * The device sinks add durations, byte counts and the program's per-instruction
 * counts over every record. Each value fits an int64, but damaged input (an
 * instruction lasting 2^62 ns, a program count of 2^62) can make a sum exceed
 * one. A sink keeps one nx_sum_guard, points its `at` to each record while
 * adding it (NULL in finish()), adds with nx_sum_add() / nx_sum_mul_add() and
 * returns nx_sum_error() from event() and finish() when a sum did not fit: the
 * message names the table, the sum, and the trace file and offset of the record
 * being added (a sink that sums batches of records adds the batch at a later
 * record, so the message says "this record or one before it"), or the source
 * given for sums made in finish().
 * A failed sum keeps its wrapped value, but it is never written: the sink fails.
 */
#ifndef NX_SUM_GUARD_H
#define NX_SUM_GUARD_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "process/device/device_sink.h"

typedef struct nx_sum_guard {
    const nx_device_event *at;       /* the record being added; NULL in finish() (the sink sets it) */
    const char *what;                /* the first sum that did not fit; NULL while all fit */
    const char *path;                /* the trace file of the record it was found at; NULL: none */
    uint64_t offset;                 /* that record's byte offset */
} nx_sum_guard;

static inline void nx_sum_overflowed(nx_sum_guard *g, const char *what)
{
    if (g->what)
        return;
    g->what = what;
    g->path = g->at ? g->at->trace->path : NULL;
    g->offset = g->at ? g->at->offset : 0;
}

/* *acc += v. */
static inline void nx_sum_add(nx_sum_guard *g, int64_t *acc, int64_t v, const char *what)
{
    if (__builtin_add_overflow(*acc, v, acc))
        nx_sum_overflowed(g, what);
}

/* *acc += n * v. */
static inline void nx_sum_mul_add(nx_sum_guard *g, int64_t *acc, int64_t n, int64_t v, const char *what)
{
    int64_t p;
    if (__builtin_mul_overflow(n, v, &p) || __builtin_add_overflow(*acc, p, acc))
        nx_sum_overflowed(g, what);
}

/* *out = b - a (a time span across traces). */
static inline void nx_sum_span(nx_sum_guard *g, int64_t *out, int64_t b, int64_t a, const char *what)
{
    if (__builtin_sub_overflow(b, a, out))
        nx_sum_overflowed(g, what);
}

/* 0 while every sum fit; else -1 with the message in err. `source` names the
 * file for sums made at finish (a program's path, say); NULL: "the capture". */
static inline int nx_sum_error(const nx_sum_guard *g, const char *table, const char *source, nx_error *err)
{
    if (!g->what)
        return 0;
    if (g->path)
        return nx_error_set(err,
                              "%s (record at %" PRIu64 "): %s's %s exceeds the int64 range (a damaged time or "
                              "count in this record or one before it?)",
                              g->path, g->offset, table, g->what);
    return nx_error_set(err, "%s: %s's %s exceeds the int64 range (a damaged time or count?)",
                          source ? source : "the capture", table, g->what);
}

#endif
