/*
 * rank_stats.h — how the ranks of one system profile compare, step by step
 * and collective by collective (docs/analyses.md gives the definitions
 * to users). Read from SystemProfileEvents as device_activity.h classifies
 * its rows; all times are integer nanoseconds.
 *
 * Ranks: the distinct worker_gid >= 0 of the step rows and collective rows
 * (rows of a null rank take no part).
 * Steps: one entry per step number that some rank has a step row of
 * (device_activity.h: host ProfilerStep#N, or args.step_num), in number
 * order. A rank's duration of the step is its first step row of that number
 * (end - start); ranks without one are absent from the entry. Over the ranks
 * present: min, max and median (the lower middle of the sorted durations, so
 * it is one of them), skew = max - min, max_over_median = max / median (0
 * when the median is 0), the slowest and fastest rank (ties: the lower rank);
 * and, from the stragglers below of that step, the straggler rank and its
 * lateness (the collective of the step with the greatest lateness; -1 and 0
 * when the step has none).
 * Collectives: rows named as collectives (nx_activity_is_collective) that are
 * host rows (on no device: c10d::allreduce_, gloo:all_reduce,
 * record_param_comms) or device kernels (NCCL kernels); device annotations
 * (gpu_user_annotation copies of host ranges) are left out so a range is not
 * counted twice. A collective belongs to the step of its rank whose window
 * [start, end) holds its start (step -1 when none does). Its occurrence is
 * its position (from 0) among the collectives of the same rank, step and name
 * in start order; the n-th occurrence of a name in a step is one collective
 * instance, matched across ranks.
 * Stragglers: one entry per instance seen on 2 ranks or more, ordered by
 * step, then the earliest start, then name: the rank that started first and
 * its start, the rank that started last (the straggler, ties: the lower
 * rank) and its start, lateness = its start - the first start, and
 * lateness_vs_median = its start - the median start (lower middle).
 * Memory: about 48 bytes per collective row and step row.
 *
 * The analysis "ranks" (analysis.h, nx_analysis_ranks in rank_stats.c) serves
 * the answer to `nxprof ranks` and GET /api/profiles/<name>/ranks; a profile
 * without SystemProfileEvents is NX_ANALYSIS_NOT_APPLICABLE.
 */
#ifndef NX_QUERY_RANK_STATS_H
#define NX_QUERY_RANK_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

typedef struct nx_rank_step {
    int64_t step;
    int64_t *duration_ns;            /* per rank, in nx_rank_stats.ranks order; -1: absent */
    int64_t *start_ns;               /* per rank; meaningful where duration_ns >= 0 */
    size_t n_present;
    int64_t min_ns, max_ns, median_ns, skew_ns;
    double max_over_median;
    int64_t slowest_rank, fastest_rank;
    int64_t straggler_rank;          /* -1: no collective instance in the step */
    int64_t max_lateness_ns;
} nx_rank_step;

typedef struct nx_straggler {
    int64_t step;
    char *name;                      /* NUL-terminated */
    int64_t occurrence;
    size_t n_ranks;
    int64_t first_rank, first_start_ns;
    int64_t straggler_rank, start_ns;
    int64_t lateness_ns, lateness_vs_median_ns;
} nx_straggler;

typedef struct nx_rank_stats {
    int64_t *ranks;                  /* ascending */
    size_t n_ranks;
    nx_rank_step *steps;
    size_t n_steps;
    nx_straggler *stragglers;
    size_t n_stragglers;
} nx_rank_stats;

/* Reads the rank answer of the system profile `dir`. 0, NX_PROFILE_TABLE_ABSENT
 * (no SystemProfileEvents: *out empty), or -1 with err naming the table, row
 * or what overflowed. */
int nx_rank_stats_read(const char *dir, nx_rank_stats *out, nx_error *err);
void nx_rank_stats_free(nx_rank_stats *s);

/* Appends the object {"ranks":[...],"steps":[{"step","durations_ns":{"<rank>":
 * ns},"starts_ns":{...},"min_ns","max_ns","median_ns","skew_ns",
 * "max_over_median","slowest_rank","fastest_rank","straggler_rank" (null when
 * -1),"max_lateness_ns"}],"stragglers":[{"step","name","occurrence","ranks",
 * "first_rank","first_start_ns","straggler_rank","start_ns","lateness_ns",
 * "lateness_vs_median_ns"}]} to b; safe_ints as nx_json_put_i64. */
void nx_rank_stats_json(const nx_rank_stats *s, bool safe_ints, nx_strbuf *b);

/* Appends the answer as people read it (times in microseconds, exact to the
 * ns): "Ranks: 0 1 ...", the table of step durations per rank with each step's
 * skew, max/median, slowest and fastest rank, straggler and its lateness, then
 * the 10 latest collectives (greatest lateness first); or one line saying there
 * are no ranks. `nxprof ranks` and summary's Ranks section print it. */
void nx_rank_stats_text(const nx_rank_stats *s, nx_strbuf *b);

#endif
