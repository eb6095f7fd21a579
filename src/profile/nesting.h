/*
 * nesting.h — the depth and self time of events that nest: the call stacks of
 * SystemProfileEvents (timeline_rules.h nx_timeline_info.nested), one per track (per
 * thread for framework events, per NeuronCore or thread for runtime events).
 *
 * Rule, per track:
 *   - event A encloses event B when A.start <= B.start and B.end <= A.end; of
 *     two events with equal intervals the earlier row encloses the later (and
 *     not the reverse);
 *   - depth(B) = the number of events of its track that enclose B (0: a
 *     top-level event);
 *   - the parent of B is its innermost encloser: the last of them in the
 *     order start ascending, end descending, row ascending (the latest start;
 *     of equal starts the shorter, then the later row). B is a child of its
 *     parent only;
 *   - self(B) = B.end - B.start minus the sum of its children's durations,
 *     never below 0 (children that overlap one another each count whole).
 * In a well-formed call stack every event's enclosers are its ancestors, so
 * depth is the stack depth and the children are the direct callees. Events
 * that overlap without nesting (A = [0, 10], B = [5, 15]) do not enclose each
 * other; an event inside both (C = [6, 8]) has depth 2 and parent B.
 *
 * Computation (nx_nesting): one streaming pass over each track's events in
 * start order, ties in row order (the order timeline tables are written in).
 * Per track a stack holds the events that may still enclose a later one (those
 * whose end is not before the latest start), and the events sharing the
 * latest start wait in a group until a later start arrives, since an event
 * starting at the same time but ending later encloses them whatever the row
 * order. An event's values are final, and handed to the caller, when the
 * stack drops it (a later event starts after its end) or at nx_nesting_finish.
 * Memory per track: the stack (the track's nesting depth, plus events that
 * overlap without nesting) and one group of equal starts; nothing per row.
 * On a well-formed stack each event costs O(1); overlaps that do not nest cost
 * a walk of the stack.
 *
 * Reading the values back (from the timeline index, or computed from the
 * table when the index cannot be used) is query/engine/nesting_values.h.
 */
#ifndef NX_PROFILE_NESTING_H
#define NX_PROFILE_NESTING_H

#include <stdint.h>

/* ------------------------------------------------------ sampling levels -- */

/* Sampling a nested table keeps one event per (track, level, pixel bucket)
 * (query/engine/sampled_pass.h), so that each level of a call stack is drawn at any
 * zoom. Depths 0 .. NX_NESTING_LEVELS - 2 are a level each; every deeper event
 * shares the last level, which is sampled like a flat track (its longest event
 * per bucket). The fold bounds the sampling structures (the timeline index's
 * depth tracks, a query's pixel buckets) by NX_NESTING_LEVELS per track,
 * whatever the nesting: 300,000 events nested one inside the next would
 * otherwise need 300,000 depth tracks. Depth and self time stay exact: only
 * which events a zoomed-out view keeps changes below the fold. */
#define NX_NESTING_LEVELS 64u

static inline uint32_t nx_nesting_level(uint32_t depth)
{
    return depth < NX_NESTING_LEVELS - 1 ? depth : NX_NESTING_LEVELS - 1;
}

/* ------------------------------------------------------------ the pass -- */

typedef struct nx_nesting nx_nesting;

/* Receives one event's final values (row as given to nx_nesting_add); returns
 * 0, or -1 to stop the pass (nx_nesting_add / _finish then return -1). */
typedef int (*nx_nesting_emit)(void *ctx, uint64_t row, uint32_t depth, int64_t self_ns);

/* NULL when out of memory. */
nx_nesting *nx_nesting_new(nx_nesting_emit emit, void *ctx);
/* The next event of `track` (a small id: memory is per id up to the largest).
 * 0; 1 when it starts before the track's previous event or ends before it
 * starts (nothing more is accepted: the caller's rows are not in start order);
 * -1 when out of memory or emit failed. */
int nx_nesting_add(nx_nesting *n, uint32_t track, int64_t start, int64_t end, uint64_t row);
/* Measures the durations that make self time inside [lo, hi] (lo <= hi), for
 * events added from now on: self(B) = clip(B) minus the sum of clip(C) over
 * its children C, never below 0, with clip(X) = max(0, min(X.end, hi) -
 * max(X.start, lo)). Which events enclose which is unchanged (the rule above,
 * on the whole intervals). Without a call every duration counts whole. */
void nx_nesting_clip(nx_nesting *n, int64_t lo, int64_t hi);
/* Emits every event still held. 0, or -1 (out of memory, emit failed). */
int nx_nesting_finish(nx_nesting *n);
void nx_nesting_free(nx_nesting *n);

#endif
