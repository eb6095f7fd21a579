/*
 * breakdown.h — where each device's time went, per rank and per step, from a
 * system profile's SystemProfileEvents as device_activity.h classifies its
 * rows (docs/analyses.md gives the definitions to users). All times
 * are integer nanoseconds; nothing is counted twice.
 *
 * Entries: per (rank, device) with device activity, in rank then device
 * order: one over the rank's trace span (the first start to the last end over
 * every row of that rank, as device_stats.h has it), then one per step of
 * that rank (device_activity.h's step rows), in start order, over the step's
 * window [start, end):
 *   - temporal: the device's kernel, memcpy and memset intervals in three sets,
 *     communication (kernels whose name nx_activity_is_collective matches),
 *     memory (memcpy and memset rows) and compute (the other kernels); each
 *     instant of
 *     the window counts once, for the first of compute > communication > memory
 *     > idle that covers it (HTA's precedence), so compute_ns +
 *     communication_ns + memory_ns + idle_ns = window_ns exactly;
 *     overlapped_comm_ns is the communication time under compute (counted in
 *     compute_ns) and overlap_pct = overlapped_comm_ns / all communication time
 *     (-1 when there is none);
 *   - idle causes: each gap of the busy union (the union of the three sets),
 *     taken whole (from the end of the busy time before it, or the rank's
 *     first row, to the start of the busy time after it) and classified by the
 *     row that starts when it ends: host wait when that row's launch (the host
 *     row of its rank with the same correlation id) starts at or after the gap
 *     begins (nothing was queued); kernel wait when it was launched before and
 *     the gap is shorter than NX_BD_KERNEL_WAIT_NS and follows busy time; other
 *     otherwise (no row after it, no launch linked, a long gap with work
 *     queued). The sums are of the gaps' parts inside the window (they add up
 *     to idle_ns), the counts of the gaps with such a part;
 *   - classes: count and summed duration of the rows of each class that start
 *     inside the window;
 *   - launch: over the kernels that start inside the window, the launch delay
 *     (kernel start - launch start) of those with a linked launch: median and
 *     p95 (nearest rank), max, the outliers (delays above p95 + 3/2 (p95 -
 *     median), integer division), the kernels shorter than NX_BD_SHORT_KERNEL_NS
 *     and the verdict: "cpu-bound" when host wait is the largest idle cause
 *     and idle_ns > the busy time (the device mostly waits for the host), else
 *     "gpu-bound" when the median delay is at least NX_BD_QUEUED_NS (kernels
 *     wait in the queue behind the device's work), else "balanced"; "unknown"
 *     without linked launches;
 *   - transfers: memcpy and memset rows starting inside the window per kind
 *     (HtoD, DtoH, DtoD, HtoH, PtoP from the name, "memset", "other"): count,
 *     the rows with args.bytes, their bytes and summed duration, and bytes per
 *     ns (= GB/s; 0 when the duration is 0).
 * Launches are host slices (no device) with args.correlation (Kineto) or
 * args.correlation_id (JAX), keyed by (rank, id): correlation ids repeat
 * across ranks.
 * Kernels: the top `top` kernel names by total time over every kernel row in
 * scope (the whole trace of the ranks asked for), with count, total, mean, min,
 * max, class and, over the ranks with device activity, the spread of each
 * rank's total (min, max, mean; a rank without the kernel counts 0).
 * Host: over every row in scope, the span (first start, last end) and the
 * host's synchronous copies (device_activity.h nx_activity_is_sync_copy, on
 * no device): count and summed duration; not in the JSON (the insights read
 * it, so that they need no scan of their own).
 * With rank >= 0 only that rank's rows count; with step >= 0 only the entries
 * of steps numbered step are kept (the kernels stay the whole trace's).
 * Memory: about 80 bytes per device row, 24 per launch row and each distinct
 * device row name once.
 */
#ifndef NX_QUERY_BREAKDOWN_H
#define NX_QUERY_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

#define NX_BD_KERNEL_WAIT_NS INT64_C(10000)   /* a gap under 10 us between queued work */
#define NX_BD_SHORT_KERNEL_NS INT64_C(10000)  /* a kernel under 10 us */
#define NX_BD_QUEUED_NS INT64_C(100000)       /* a median launch delay of 100 us or more */

enum { NX_BD_COMPUTE, NX_BD_COMM, NX_BD_MEMORY, NX_BD_N_CLASSES };
enum { NX_BD_HTOD, NX_BD_DTOH, NX_BD_DTOD, NX_BD_HTOH, NX_BD_PTOP, NX_BD_MEMSET, NX_BD_XOTHER, NX_BD_N_XFER };

/* "compute", "communication", "memory"; "HtoD", ..., "memset", "other". */
const char *nx_breakdown_class_name(int cls);
const char *nx_breakdown_xfer_name(int kind);

typedef struct nx_bd_temporal {
    int64_t window_ns, compute_ns, communication_ns, overlapped_comm_ns, memory_ns, idle_ns;
    double overlap_pct;              /* -1: no communication */
} nx_bd_temporal;

typedef struct nx_bd_idle {
    int64_t host_wait_ns, kernel_wait_ns, other_ns;
    int64_t host_wait_count, kernel_wait_count, other_count;
} nx_bd_idle;

typedef struct nx_bd_launch {
    int64_t kernels, linked, median_ns, p95_ns, max_ns, outlier_above_ns, outliers, short_kernels;
    const char *verdict;             /* static text */
} nx_bd_launch;

typedef struct nx_bd_xfer {
    int64_t count, with_bytes, bytes, duration_ns;
    double gbps;
} nx_bd_xfer;

typedef struct nx_bd_entry {
    char device[32];
    int64_t rank;                    /* -1: null */
    int64_t step;                    /* -1: the whole trace span */
    char *step_name;                 /* NULL for the whole span */
    int64_t start_ns, end_ns;
    nx_bd_temporal t;
    nx_bd_idle idle;
    int64_t class_count[NX_BD_N_CLASSES], class_ns[NX_BD_N_CLASSES];
    nx_bd_launch launch;
    nx_bd_xfer xfer[NX_BD_N_XFER];
} nx_bd_entry;

typedef struct nx_bd_kernel {
    char *name;
    int cls;
    int64_t count, total_ns, min_ns, max_ns;
    double mean_ns;
    int64_t rank_min_ns, rank_max_ns;
    double rank_mean_ns;
} nx_bd_kernel;

typedef struct nx_bd_host {
    int64_t first_ns, last_ns;       /* 0, 0: no row */
    int64_t sync_copies, sync_copy_ns;
} nx_bd_host;

typedef struct nx_breakdown {
    nx_bd_host host;
    nx_bd_entry *entries;
    size_t n_entries;
    nx_bd_kernel *kernels;
    size_t n_kernels;
    size_t n_ranks;                  /* ranks with device activity in scope */
} nx_breakdown;

/* Reads the breakdown of system profile `dir` (rules above). 0,
 * NX_PROFILE_TABLE_ABSENT (no SystemProfileEvents: *out empty), or -1 with err
 * naming the table, row or what overflowed. */
int nx_breakdown_read(const char *dir, int64_t rank, int64_t step, size_t top, nx_breakdown *out, nx_error *err);
void nx_breakdown_free(nx_breakdown *b);

/* The answer as one JSON object: {"kind":"system","thresholds":{...},"n_ranks":N,
 * "entries":[...],"kernels":[...]} with the names above (rank, step and
 * overlap_pct null when -1 / -1 / no communication). With safe_ints, integers
 * beyond +-2^53 are decimal strings (the HTTP API's rule). */
void nx_breakdown_json(const nx_breakdown *b, bool safe_ints, nx_strbuf *out);

#endif
