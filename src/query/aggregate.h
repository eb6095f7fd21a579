/*
 * aggregate.h — exact aggregates of a selection: every event of a timeline
 * table that lies in a time range [start, end] on some of its tracks, grouped
 * by a label column or by track, with per group the event count, the time
 * inside the range and, for a table whose events nest, the self time inside
 * the range.
 *
 * Events: those window.h keeps for the window [start, end] (interval events
 * overlapping it, point events inside it), on the selected tracks (all tracks
 * when none are named; a named track the table does not have selects
 * nothing).
 *
 * Group key (o->by; NULL: the table's default, timeline_rules.h
 * nx_timeline_view.aggregate_default):
 *   "track"                 the event's track name;
 *   a STRING or INT32/INT64 column of the table's schema: its value; a null
 *                           value, or a file without the column, is the null
 *                           key (one group).
 * Anything else (another schema type, a name not in the schema) is
 * NX_AGGREGATE_BAD_BY.
 *
 * Per group:
 *   count     its events;
 *   total_ns  the sum of clip(e) over its events, clip(e) = min(e.end, end) -
 *             max(e.start, start): the part of the event inside the range
 *             (0 for point events);
 *   self_ns   tables whose events nest (nx_timeline_info.nested, i.e.
 *             SystemProfileEvents) only: the sum over its events of
 *             max(0, clip(e) - sum of clip(c) over e's children c), the
 *             children being those of profile/nesting.h on the whole track
 *             (a child outside the range has clip 0). For an event wholly
 *             inside the range this is its self time (docs/query.md, "Depth and
 *             self time"); summed over a whole track and a range covering it,
 *             it is the track's total self time. Every encloser of an event
 *             in the range overlaps the range, so the children are found from
 *             the events in the range alone.
 * Order: total_ns descending, then count descending, then the key ascending
 * (integers numerically, text by unsigned bytes, the null key last). The
 * first o->top groups are listed; `other` sums the rest.
 *
 * Cost: one window query over [start, end] (window.h pruning) reading the
 * timing, track and key columns, the key in dictionary form where the file
 * has it (a key is looked up once per dictionary entry, not per row). Memory:
 * the groups (at most NX_AGGREGATE_MAX_GROUPS) and, for nested tables, the
 * nesting pass's stacks; nothing per event.
 *
 * Threads: a table whose events do not nest is shared out in consecutive row
 * spans (query/engine/row_split.h), one thread per span with its own table handle
 * and groups; the spans' groups are then summed key by key, so the answer is
 * the same whatever the number of threads (memory: each span's groups). A
 * nested table is passed on one thread: its nesting pass needs each track
 * whole and in order.
 */
#ifndef NX_QUERY_AGGREGATE_H
#define NX_QUERY_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

/* nx_aggregate_run: o->by cannot group this table (err says why), or the
 * selection has more than NX_AGGREGATE_MAX_GROUPS groups. */
enum { NX_AGGREGATE_BAD_BY = 2, NX_AGGREGATE_TOO_MANY = 3 };
#define NX_AGGREGATE_MAX_GROUPS (1u << 20)

typedef struct nx_aggregate_options {
    const char *table;             /* a timeline table */
    int64_t start, end;            /* inclusive, start <= end */
    const char *const *tracks;     /* the selected track names (NUL-terminated); none: all tracks */
    size_t n_tracks;
    const char *by;                /* NULL: the table's default */
    size_t top;                    /* groups listed */
    int threads;                   /* threads sharing the table (query/engine/row_split.h); 0: min(cores, row groups) */
} nx_aggregate_options;

typedef struct nx_aggregate_group {
    bool null, is_int;             /* the key: null, an integer, or text */
    int64_t i;
    const char *s;                 /* len bytes, valid while the result lives */
    size_t len;
    uint64_t count;
    int64_t total_ns, self_ns;     /* self_ns: 0 unless nested */
} nx_aggregate_group;

typedef struct nx_aggregate {
    const char *by;                /* the key used (o->by or the default) */
    bool nested;                   /* self_ns is meaningful */
    uint64_t events;               /* events of the selection */
    nx_aggregate_group *groups;    /* the first min(top, n_groups) in order */
    size_t n_shown, n_groups;      /* groups listed, groups in all */
    uint64_t other_count;          /* the groups not listed: their sums */
    int64_t other_total_ns, other_self_ns;
    void *priv;                    /* the key bytes */
} nx_aggregate;

/* Runs the aggregate over profile_dir. 0 (*out filled; nx_aggregate_free it),
 * NX_PROFILE_TABLE_ABSENT, NX_AGGREGATE_BAD_BY, NX_AGGREGATE_TOO_MANY, or -1
 * with err naming the table (unreadable, rows of a nested table not in start
 * order per track, a sum beyond int64, out of memory). */
int nx_aggregate_run(const char *profile_dir, const nx_aggregate_options *o, nx_aggregate *out, nx_error *err);
void nx_aggregate_free(nx_aggregate *a);

#endif
