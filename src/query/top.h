/*
 * top.h — the answer behind `nxprof top`: one table of a profile, across all
 * its split files, grouped by some of its columns (group_by.h), with per group
 * the row count, the summed time and, for a table whose events nest
 * (SystemProfileEvents, window.h nx_timeline_info.nested), the summed self time.
 *
 * Summed value (sum[0] of the groups, nx_top.value):
 *   NX_TOP_DURATION  duration_ns, when the table has it as an INT64 column;
 *   NX_TOP_SPAN      else end_ts - start_ts per row, when both are integer
 *                    columns (null when either is null): the IR roll-up tables;
 *   NX_TOP_COUNT     else nothing is summed; groups are ordered by count.
 * Tables whose events nest (nx_top.self):
 *   - sum[1] is each row's self time (profile/nesting.h: duration minus its
 *     children's, per track), and groups are ordered by it;
 *   - wall = the table's last end - first start (max end_ts - min start_ts over
 *     its rows), for "percent of wall time" (one group's self time over it);
 *   - two virtual keys, for names the table has no column of:
 *       "cat"    the string member "cat" of extra_attributes_json (PyTorch's
 *                category: "cpu_op", "kernel", ...; JSON escapes decoded), null
 *                when absent, not a string, or the text is not a JSON object;
 *       "thread" a framework event's thread label when its trace named the
 *                process or thread or has a rank (profile/thread_label.h:
 *                "python3 (469) / thread 520 (pt_autograd_0)", "GPU 0 / stream
 *                7", "rank 1 / GPU 0 / stream 7"), else the row's
 *                track (window.h: "<instance>/<pid>/<tid>" of a framework
 *                event's thread, "nc<i>" or a thread for runtime events).
 * Joined keys: on a table with kernel_instruction_name and pcore_idx but no
 * column of that name (Instruction), "file_path" (STRING) and "line_number"
 * (INT64) are the KernelInstructions row's of (kernel_instruction_name,
 * pcore_idx) (nki_source.h), null for a row that joins none: SQL's LEFT JOIN.
 * Profiler rows: the profiler's own rows of SystemProfileEvents
 * (device_activity.h: "PyTorch Profiler (n)", every "ProfilerStep#N") are
 * left out of the groups and totals unless profiler_rows is set; the wall
 * still spans them (they are part of the trace).
 * Rank filter (has_rank): only rows whose worker_gid equals rank count, in the
 * groups, the totals and the wall; a table without an integer worker_gid is
 * NX_TOP_BAD_KEY.
 * Order: group_by.h's, on the self sum, else the summed value, else the count:
 * descending, ties by the keys ascending (strings bytewise, nulls last).
 * Percent (nx_top_percent) of a group, of the other groups past a limit
 * (nx_top_rest) or of the totals: for a nesting table 100 * self time / wall
 * time; else 100 * sum / total sum, or 100 * count / total count when nothing
 * is summed; 0 when the divisor is 0.
 * Defaults of `nxprof top`: the table Instruction, or SystemProfileEvents on a
 * system profile (profile_kind.h nx_profile_is_system); the keys "name" for
 * SystemProfileEvents, "engine,opcode" for other tables.
 * Memory: the groups, plus the depth and self time of every row when the table
 * has no usable timeline index (nesting.h).
 */
#ifndef NX_QUERY_TOP_H
#define NX_QUERY_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/engine/group_by.h"
#include "query/engine/nesting_values.h"

#define NX_TOP_MAX_KEYS 16

/* nx_top_run: a key is not a column of the schema's table (nor a virtual one)
 * or not an integer, boolean or string column; err says which. A column the
 * schema has but the profile's file lacks (or stores as another type) is a
 * data problem: -1, naming the file. */
enum { NX_TOP_BAD_KEY = 2 };

typedef enum nx_top_value { NX_TOP_DURATION, NX_TOP_SPAN, NX_TOP_COUNT } nx_top_value;

typedef struct nx_top_options {
    const char *table;
    const char *const *by;             /* 1..NX_TOP_MAX_KEYS names, no repeats */
    size_t n_by;
    const nx_nesting_values *nesting;  /* self time of the table's rows; NULL: opened when needed */
    bool has_rank;                     /* only the rows whose worker_gid is rank (a framework */
    int64_t rank;                      /*   trace's rank): groups, totals and wall alike */
    bool profiler_rows;                /* keep the profiler's own rows in the groups (above) */
} nx_top_options;

typedef struct nx_top {
    nx_group_by *g;                    /* sum[0]: the summed value; sum[1]: self time (self) */
    nx_top_value value;
    bool self;                         /* the table's events nest */
    int64_t rows;
    int64_t profiler_left_out;         /* rows (of the rank) left out as the profiler's own */
    size_t files;
    bool have_wall;                    /* self, and some row has a start and an end */
    int64_t first_ts, last_ts;         /* the wall: min start_ts, max end_ts */
    char note[600];                    /* self: why the timeline index was not used, or "" */
} nx_top;

/* Runs the query. 0 (*out filled; nx_top_free it), NX_PROFILE_TABLE_ABSENT,
 * NX_TOP_BAD_KEY, or -1 with err naming the table. */
int nx_top_run(const char *profile_dir, const nx_top_options *o, nx_top *out, nx_error *err);
void nx_top_free(nx_top *t);

/* The wall time: last_ts - first_ts, 0 without one (have_wall false). */
int64_t nx_top_wall(const nx_top *t);
/* The percent of st (a group's stats, nx_top_rest's or the totals; rule above). */
double nx_top_percent(const nx_top *t, const nx_group_stats *st);
/* The groups shown under a limit: all when limit is 0 or above their count. */
size_t nx_top_shown(const nx_top *t, uint64_t limit);
/* The stats of the groups ranked from `from` on, summed (the groups a limit left out). */
nx_group_stats nx_top_rest(const nx_top *t, size_t from);
/* The default table of profile_dir and the default keys of a table (comma-separated). */
const char *nx_top_default_table(const char *profile_dir);
const char *nx_top_default_by(const char *table);

#endif
