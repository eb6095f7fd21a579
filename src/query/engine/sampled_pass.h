/*
 * sampled_pass.h — the sampled first pass over a window of a timeline table:
 * which events the viewer draws and a sampled export writes (window.h's rule:
 * per track and bucket the longest, ties by earliest start, then earliest row).
 *
 * A table whose events nest (timeline_rules.h nx_timeline_info.nested:
 * SystemProfileEvents) is sampled per (track, level, bucket) instead, depth by
 * profile/nesting.h's rule and level by nx_nesting_level (the depth, with every
 * depth past NX_NESTING_LEVELS - 2 in the last level): each level of a call
 * stack keeps its own winner per bucket, so the children of an event are drawn
 * however far the view is zoomed out, and the buckets stay at most
 * NX_NESTING_LEVELS per track however deep the nesting. Each kept event
 * carries its own depth. The scan takes each row's depth from
 * query/engine/nesting_values.h (the index's nesting section, or computed from the
 * table), the index from its depth tracks; both give the same result.
 *
 * It runs on two threads, one per half of the buckets: the window is split at
 * the first nanosecond of bucket width/2, the first half takes the events that
 * start before it (those starting before the window included, clamped into
 * bucket 0), the second the events that start at or after it. No bucket spans
 * both halves, so the union of the two halves' winners is exactly the result of
 * one pass, whatever the thread timing. Each half opens the table on its own.
 *
 * When the table has a usable timeline index (timeline_index.h) the pass reads
 * the index instead (query/engine/index_sample.h; a large table's tracks on up to four
 * threads), with the same result; NXPROF_NO_TIMELINE_INDEX=1 in the
 * environment forces the scan (for comparisons and benchmarks).
 *
 * Tracks are numbered in order of first appearance in file order (the first
 * half's, then the second half's new ones), which for a table sorted by start
 * time is the order one pass over the window would give; for a nested table a
 * track is its thread's (or core's) whole call stack, all depths together.
 */
#ifndef NX_QUERY_SAMPLED_PASS_H
#define NX_QUERY_SAMPLED_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/engine/sampled_events.h"

/* 0 (*out filled; release with nx_sampled_free), NX_PROFILE_TABLE_ABSENT,
 * NX_QUERY_OVER_BUDGET with err when its pixel buckets would exceed the
 * query memory budget (query/engine/budget.h: one budget per call, shared by its
 * threads), or -1 with err naming the table or file (for a nested table also:
 * rows not in start order per track, so no depth). start <= end, width >= 1. */
int nx_sampled_pass(const char *profile_dir, const char *table, int64_t start, int64_t end, uint32_t width,
                    nx_sampled *out, nx_error *err);

#endif
