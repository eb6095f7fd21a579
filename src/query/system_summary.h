/*
 * system_summary.h — what `nxprof summary` says about a system profile (a
 * profile with SystemProfileEvents and no Instruction: runtime and framework
 * events, CPU and memory samples, a DeviceProfileList naming its device
 * profiles).
 *
 * The answers (nx_system_summary):
 *   - wall time: the first start, the last end and their difference over
 *     SystemProfileEvents (rows with a start and an end; 0 when none has);
 *   - busy time per track (window.h's track rule: a framework event's thread,
 *     a runtime event's NeuronCore or thread): the length of the union of the
 *     track's top-level (depth 0, nesting.h) events' intervals, with their
 *     count and 100 * busy time / wall time (0 when the wall time is 0);
 *     a framework thread's track is named by its thread label when its trace
 *     named the process or thread (profile/thread_label.h, read from the
 *     track's first top-level event), else by its track name;
 *     ordered by busy time descending, ties by that name (bytewise);
 *   - per rank (a framework trace's rank, SystemProfileEvents.worker_gid;
 *     none when every row's is null): its events, span (first start, last
 *     end) and busy time (the sum of its tracks' busy time); a track's rank is
 *     its rows' worker_gid, part of a thread track's key (timeline_rules.h);
 *   - with a rank asked for, every answer above and below counts that rank's
 *     rows only (the wall time is its span);
 *   - the NX_SYSTEM_TOP_OPERATORS event names with the most self time
 *     (top.h grouped by name: count, inclusive and self sums, same order),
 *     without the profiler's own rows unless asked for (top.h);
 *   - one entry per DeviceProfileList row, in table order: its name, nc_id
 *     (the LNC), and from the device profile's own tables (found by
 *     profile_layout.h nx_device_profile_dir) Metadata.num_physical_cores (first row),
 *     ExecutionInfo's row count (0 without the table), and Summary's first
 *     row: total_time, mfu_estimated_percent, hfu_estimated_percent,
 *     mbu_estimated_percent, cc_op_active_time (each null when the table or
 *     the value is missing). A device profile that cannot be read (no such
 *     directory, no Metadata, an unreadable table, a name that is not a plain
 *     directory name) gives its entry with `error` set and no values; the
 *     summary itself still succeeds.
 * Memory: the tracks and device profiles, plus what top.h and nesting.h need.
 */
#ifndef NX_QUERY_SYSTEM_SUMMARY_H
#define NX_QUERY_SYSTEM_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/engine/profile_kind.h"

#define NX_SYSTEM_TOP_OPERATORS 10

typedef struct nx_system_busy {
    char *track;                     /* NUL-terminated */
    int64_t busy_ns;                 /* union of its top-level events */
    int64_t top_level;               /* its top-level events */
    double percent_of_wall;          /* busy_ns over the wall time, in percent */
} nx_system_busy;

typedef struct nx_system_operator {
    char *name;                      /* NULL for a null name */
    int64_t count, sum_ns, self_ns;
    bool sum_null, self_null;
} nx_system_operator;

typedef struct nx_opt_f64 {          /* a value that may be missing */
    bool ok;
    bool is_double;                  /* read from a DOUBLE (else FLOAT or integer) column */
    double v;
} nx_opt_f64;

typedef struct nx_system_device {
    char *name, *dir;                /* dir NULL when the name was refused */
    int64_t nc_id;
    bool nc_id_ok;
    char *error;                     /* NULL, or why the device profile was not read */
    bool cores_ok;
    int64_t physical_cores;
    int64_t executions;
    nx_opt_f64 total_time_s, mfu, hfu, mbu, cc_active_s;
} nx_system_device;

typedef struct nx_system_rank {
    int64_t rank;                    /* worker_gid */
    int64_t events;                  /* its rows */
    int64_t first_ts, last_ts;       /* its span: first start, last end */
    int64_t busy_ns;                 /* the sum of its tracks' busy time */
} nx_system_rank;

typedef struct nx_system_summary {
    int64_t rank;                    /* the rank asked for, -1: all */
    int64_t events;                  /* SystemProfileEvents rows (of that rank) */
    bool have_wall;
    int64_t first_ts, last_ts;
    int64_t wall_ns;                 /* last_ts - first_ts, 0 without a wall */
    nx_system_busy *busy;
    size_t n_busy;
    nx_system_rank *ranks;           /* per rank, in rank order; none without worker_gid */
    size_t n_ranks;
    nx_system_operator top[NX_SYSTEM_TOP_OPERATORS];
    size_t n_top;
    bool have_device_list;           /* the profile has DeviceProfileList */
    nx_system_device *devices;
    size_t n_devices;
    char note[600];                  /* why SystemProfileEvents' timeline index was not used, or "" */
} nx_system_summary;

/* Reads the summary of the system profile `dir`, of the rows whose
 * worker_gid is `rank` only when rank >= 0 (-1: every row). 0,
 * NX_PROFILE_TABLE_ABSENT (no SystemProfileEvents), or -1 with err naming the
 * table or file. */
int nx_system_summary_read(const char *dir, int64_t rank, nx_system_summary *out, nx_error *err);
/* The same, with the profiler's own rows among the operators when profiler_rows. */
int nx_system_summary_read_rows(const char *dir, int64_t rank, bool profiler_rows, nx_system_summary *out,
                                nx_error *err);
void nx_system_summary_free(nx_system_summary *s);

#endif
