/*
 * diff.h — the diff of two profiles of one kind (`nxprof diff A B`, GET /api/diff):
 * the rows of one table of each grouped by one key (query/top.h runs each side's
 * GROUP BY), the groups of both joined on the key, and per group the count and the
 * summed time in A and in B, the difference and the ratio.
 *
 * Kinds and tables: two system profiles (query/engine/profile_kind.h nx_profile_is_system)
 * compare SystemProfileEvents, two device profiles compare Instruction, or by
 * "framework_name" the IR roll-up FrameworkInstruction (its rows' end_ts - start_ts
 * summed: top.h's NX_TOP_SPAN); a system and a device profile are NX_DIFF_KINDS, refused.
 * Keys (nx_diff_options.by; NULL: "name" on system profiles, "opcode" on device ones):
 *   "kernel"  system profiles: the events whose category (top.h's virtual key "cat")
 *             is "kernel", grouped by name as the profile stores it;
 *   any other key top.h accepts for the table (a column such as "name", "opcode",
 *   "hlo_name", or the virtual "cat" and "thread" of SystemProfileEvents); a key the
 *   table lacks is NX_TOP_BAD_KEY. A key's value is its text (integers in decimal,
 *   booleans 0/1) or null; groups are equal when their texts are.
 * Profiler rows: unless include_profiler, the rows of SystemProfileEvents named
 *   "PyTorch Profiler (<n>)" (the profiler's own span) or "ProfilerStep#<n>" (its
 *   step annotations) count nowhere: not in the groups, not in the totals (they are
 *   counted in excluded_a/excluded_b). Each side then runs top with the keys
 *   (by, "name") and folds the groups of one `by` value back together.
 * Per group, side s in {a, b}: count_s rows, total_ns_s the summed time, and
 *   self_ns_s the summed self time on nesting tables (top.h; has_self). Then
 *   delta_ns = total_ns_b - total_ns_a; ratio = total_ns_b / total_ns_a, none
 *   (has_ratio false) when either total is 0; status: added (count_a 0), removed
 *   (count_b 0), same (counts, totals and self times equal), else changed.
 * Order: |delta_ns| descending, ties by the key ascending (bytewise, shorter prefix
 *   first, null last): total, so output is deterministic.
 * Totals: the same figures over every kept row of each side (all groups, whatever a
 *   caller's limit shows); on nesting tables total_ns counts a nested event's time at
 *   each level it is nested in, self_ns counts every nanosecond once. Wall: last end
 *   minus first start of each side's table (nesting tables only, top.h's wall).
 * Exact: int64 nanoseconds throughout; a sum beyond int64 is an error, not a wrap.
 *
 * Device and step totals side by side (diff_totals.c; system profiles only: a device
 * profile has no SystemProfileEvents, so its lists are empty): query/device_stats.h of
 * each side (every rank), joined.
 *   Devices join on (rank, device), steps on (rank, step number); when neither side holds
 *   more than one rank (two single-rank profiles, e.g. the two ranks of one run traced
 *   apart) the rank is left out of the key, so rank 0's GPU 0 meets rank 1's GPU 0 and
 *   their ProfilerStep#2 meet. Each side keeps its own rank; a row only one side has is
 *   in_a or in_b only, its other side zero. Equal keys on one side pair in that side's
 *   order.
 *   Order: devices by (rank, device type, number), steps by (rank, step number), the
 *   rank being A's when A has the row, else B's (null first).
 */
#ifndef NX_QUERY_DIFF_H
#define NX_QUERY_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/device_stats.h"
#include "util/strbuf.h"

/* nx_diff_run: A is a system profile and B a device profile or the reverse; a
 * normalisation without its divisor on a side (no step, no wall). */
enum { NX_DIFF_KINDS = 3, NX_DIFF_NO_DIVISOR = 4 };

/* Normalised figures (nx_diff_options.normalize), beside the exact ones:
 *   STEP  each side's times divided by its number of steps (distinct ProfilerStep#<n>
 *         names, counted whether or not the profiler's rows are kept): ns per step;
 *   WALL  each side's times divided by its wall time: the fraction of the wall.
 * Rows are then ordered by |norm_delta| (norm_b - norm_a) descending, ties by key.
 * Without a divisor on either side (no step, or a device profile's missing wall):
 * NX_DIFF_NO_DIVISOR, err saying which. */
typedef enum nx_diff_normalize { NX_DIFF_NORM_NONE, NX_DIFF_NORM_STEP, NX_DIFF_NORM_WALL } nx_diff_normalize;

typedef enum nx_diff_status { NX_DIFF_ADDED, NX_DIFF_REMOVED, NX_DIFF_CHANGED, NX_DIFF_SAME } nx_diff_status;

typedef struct nx_diff_side {
    int64_t count, total_ns, self_ns;
} nx_diff_side;

typedef struct nx_diff_row {
    char *key;                 /* NUL-terminated copy (key_len bytes); NULL: the null group */
    size_t key_len;
    nx_diff_side a, b;
    int64_t delta_ns;
    bool has_ratio;
    double ratio;
    nx_diff_status status;
    double norm_a, norm_b, norm_delta; /* total_ns over each side's divisor (normalize only) */
} nx_diff_row;

/* One device of either side: figures of a side that lacks it are zero. */
typedef struct nx_diff_device {
    bool in_a, in_b;
    nx_device_stat a, b;
} nx_diff_device;

/* One step of either side; the step stats' names point into nx_diff's stats. */
typedef struct nx_diff_step {
    bool in_a, in_b;
    nx_step_stat a, b;
} nx_diff_step;

typedef struct nx_diff_options {
    const char *by;            /* NULL: the default key of the kind */
    bool include_profiler;     /* keep the profiler's own rows */
    nx_diff_normalize normalize;
} nx_diff_options;

typedef struct nx_diff {
    const char *table;         /* static: "SystemProfileEvents", "Instruction" or "FrameworkInstruction" */
    const char *by;            /* the key used (the options' or the default; not owned) */
    bool has_self;             /* the table's events nest: self_ns is meaningful */
    nx_diff_row *rows;         /* in the order above */
    size_t n_rows;
    nx_diff_side total_a, total_b;
    bool has_wall_a, has_wall_b;
    int64_t wall_a, wall_b;
    int64_t excluded_a, excluded_b; /* profiler rows left out */
    int64_t steps_a, steps_b;  /* distinct ProfilerStep#<n> names */
    nx_diff_normalize normalize;
    double div_a, div_b;       /* the divisors (normalize only) */
    nx_diff_device *devices;   /* device and step totals side by side (see above) */
    size_t n_devices;
    nx_diff_step *steps;
    size_t n_steps;
    nx_device_stats stats_a, stats_b; /* each side's device_stats (owned) */
} nx_diff;

/* Runs the diff. 0 (*out filled; nx_diff_free it), NX_DIFF_KINDS, NX_DIFF_NO_DIVISOR, NX_TOP_BAD_KEY,
 * NX_PROFILE_TABLE_ABSENT (either side lacks the table; err names it), or -1 with
 * err naming the profile and table at fault. */
int nx_diff_run(const char *a_dir, const char *b_dir, const nx_diff_options *o, nx_diff *out, nx_error *err);
void nx_diff_free(nx_diff *d);

/* diff_totals.c: fills d's devices and steps from the system profiles a_dir and b_dir
 * (nothing for device profiles). 0, or -1 with err naming the profile at fault. */
int nx_diff_totals(const char *a_dir, const char *b_dir, bool system, nx_diff *d, nx_error *err);

/* "step", "wall" or NULL (none); and the reverse (-1: not a name). */
const char *nx_diff_normalize_name(nx_diff_normalize n);
int nx_diff_normalize_parse(const char *s, nx_diff_normalize *out);
/* "added", "removed", "changed" or "same". */
const char *nx_diff_status_name(nx_diff_status s);
/* The rows shown under a limit: all when limit is 0 or above their count. */
size_t nx_diff_shown(const nx_diff *d, uint64_t limit);

/* diff_json.c: the diff as one JSON object (docs/api.md "GET /api/diff"), the first
 * nx_diff_shown(d, limit) rows in "ops"; a and b are the profiles' names as the
 * caller knows them. Out of memory leaves b failed (nx_strbuf_failed). */
void nx_diff_json(nx_strbuf *b, const nx_diff *d, const char *a, const char *b_name, uint64_t limit);

#endif
