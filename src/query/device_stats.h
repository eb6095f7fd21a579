/*
 * device_stats.h — what each device did and what each step cost, from a
 * system profile's SystemProfileEvents as device_activity.h classifies its
 * rows (docs/analyses.md gives the definitions to users). All times are
 * integer nanoseconds.
 *
 * Devices: one entry per (device, rank) with device activity (kernel, memcpy
 * or memset rows; annotations are not activity):
 *   - start_ns, end_ns, wall_ns: the rank's trace span, the first start and
 *     the last end over every row of that rank (all sources, host rows too),
 *     and their difference;
 *   - busy_ns: the length of the union of the device's kernel, memcpy and
 *     memset intervals; idle_ns = wall_ns - busy_ns; utilization = busy_ns /
 *     wall_ns (0 when wall_ns is 0);
 *   - kernel_ns, memcpy_ns, memset_ns: the length of the union of that kind's
 *     intervals (rows of one kind on two streams at once count once, so each
 *     is at most busy_ns); kernel_count, memcpy_count, memset_count: its rows;
 *   ordered by rank (null first), then device type (GPU before NeuronCore),
 *   then device number.
 * Steps: one entry per step row (device_activity.h: a host ProfilerStep#N, or
 * a slice with args.step_num), every step kept:
 *   - name, step (its number), rank, start_ns, end_ns, duration_ns;
 *   - gpu_busy_ns: the union of the device activity of every device of its
 *     rank, clipped to [start_ns, end_ns); kernel_ns, memcpy_ns, memset_ns:
 *     that kind's union clipped likewise; kernel_count: the rank's kernels
 *     that start inside the window;
 *   ordered by rank (null first), then start, then step number.
 * With a rank asked for (rank >= 0) only the rows of that rank count.
 * Memory: 16 bytes per device activity row, plus the steps.
 */
#ifndef NX_QUERY_DEVICE_STATS_H
#define NX_QUERY_DEVICE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/device_activity.h"
#include "util/strbuf.h"

typedef struct nx_device_stat {
    char device[32];                 /* "GPU 0", "NeuronCore 3" */
    nx_device_type type;
    int64_t index;                   /* the device's number */
    int64_t rank;                    /* -1: null */
    int64_t start_ns, end_ns, wall_ns;
    int64_t busy_ns, idle_ns;
    double utilization;              /* 0..1 */
    int64_t kernel_ns, kernel_count, memcpy_ns, memcpy_count, memset_ns, memset_count;
} nx_device_stat;

typedef struct nx_step_stat {
    char *name;                      /* NUL-terminated */
    int64_t step, rank;              /* rank -1: null */
    int64_t start_ns, end_ns, duration_ns;
    int64_t gpu_busy_ns, kernel_ns, kernel_count, memcpy_ns, memset_ns;
} nx_step_stat;

typedef struct nx_device_stats {
    nx_device_stat *devices;
    size_t n_devices;
    nx_step_stat *steps;
    size_t n_steps;
} nx_device_stats;

/* Reads the devices and steps of the system profile `dir` (rows of worker_gid
 * `rank` only when rank >= 0). 0, NX_PROFILE_TABLE_ABSENT (no
 * SystemProfileEvents: *out empty), or -1 with err naming the table, row or
 * what overflowed. */
int nx_device_stats_read(const char *dir, int64_t rank, nx_device_stats *out, nx_error *err);
void nx_device_stats_free(nx_device_stats *s);

/* Appends the members `"devices":[...],"steps":[...]` (the names above; rank
 * null when -1; utilization a number) to b. With safe_ints, integers beyond
 * +-2^53 are written as decimal strings (what the HTTP API does for every
 * integer a browser could not hold), else as numbers. */
void nx_device_stats_json(const nx_device_stats *s, bool safe_ints, nx_strbuf *b);

#endif
