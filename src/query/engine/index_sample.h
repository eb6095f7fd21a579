/*
 * index_sample.h — the sampled pass of sampled_pass.h from a table's timeline
 * index (profile/timeline_index.h): the same winners, in-window count, track
 * order and depths as the scan, reading only the index's summaries and the
 * blocks a window edge or a bucket edge cuts. The runs (tracks, or depth
 * tracks) are independent: a table of more than 500,000 events has them dealt
 * out in contiguous groups of about equal events, one thread each (at most 4,
 * and no more than the CPUs online), each with its own sampler; the groups'
 * winners are merged by ordinal. Memory: width sampler slots (32 bytes) per run
 * that has events in the window, within the pass's budget (query/engine/budget.h).
 */
#ifndef NX_QUERY_INDEX_SAMPLE_H
#define NX_QUERY_INDEX_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/timeline_index.h"
#include "query/engine/budget.h"
#include "query/engine/sampled_events.h"

/* The sampled pass of sampled_pass.h from the index; samples' tags are label
 * tuple ids. by_depth (a table whose events nest): per (track, sampling level,
 * bucket), from the index's depth tracks, out->depth set (each event's own
 * depth). The samplers' slots come from budget (NULL: no limit). 0;
 * NX_QUERY_OVER_BUDGET with err when the budget has no room (the scan would
 * need the same: the caller reports it); or -1 with err (out of memory, no
 * depth tracks, or an event block found malformed while decoding: the caller
 * then falls back to the scan). */
int nx_tlx_sample(const nx_tlx *x, int64_t start, int64_t end, uint32_t width, bool by_depth, nx_budget *budget,
                  nx_sampled *out, nx_error *err);

#endif
