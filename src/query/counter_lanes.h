/*
 * counter_lanes.h — the framework counter lanes of a system profile over a time
 * window: memory over time per device, from Kineto's "[memory]" instants, and
 * one lane per Chrome counter ("ph":"C"), each series reduced to at most one
 * sample per pixel bucket. Behind GET /api/profiles/<n>/counters (docs/api.md)
 * and the viewer's counter lanes (/api/schema "viewer" "counter_lanes").
 *
 * Rows used: SystemProfileEvents rows with trace_event_source "framework" and a
 * non-null start_ts (docs/processing.md gives their extra_attributes_json):
 *   memory   name "[memory]"; its "args" members "Device Type", "Device Id"
 *            (integers) key the lane, "Total Allocated" and "Total Reserved"
 *            (numbers) are the samples of its series "allocated" and "reserved"
 *            (unit bytes; a member that is absent or no number gives no sample);
 *   counter  extra_attributes_json begins with {"ph":"C" (the phase is its
 *            first member); every member of its "args" whose value is a JSON
 *            number is a sample of the series of that member's name (no unit).
 * Lanes, in this order: the memory lanes, then the counter lanes, each in the
 * order their first row appears in the table (rows before the window first).
 *   memory   one per (worker_gid, Device Type, Device Id), labelled
 *            "GPU <id> memory" (type 1, CUDA; "GPU memory" without an id),
 *            "CPU memory" (type 0), "device type <t> <id> memory" (any other;
 *            "device type <t> memory" without an id), "memory" (no type); a
 *            null or absent part of the key is its own lane;
 *   counter  one per (worker_gid, process_id, name), labelled "<name> (pid <p>)"
 *            ("<name>" when process_id is null).
 *   Either label is prefixed "rank <worker_gid> / " when worker_gid is not null.
 * Series (a lane's, in order: "allocated", "reserved"; a counter's, in the
 * order their members first appear): each sample holds until the series' next
 * one (a step function). Points: samples with start_ts in [start, end]; with
 * L = end - start + 1 a sample's bucket is floor((t - start) * width / L)
 * (window.h's sampler rule) and each occupied bucket keeps the sample with the
 * largest value (ties: the earliest in file order), the reduction of usage.h;
 * points in bucket order. before: the sample with the largest start_ts < start
 * (ties: the last in file order), the value in force at start. A lane whose
 * rows all start after end is not answered.
 *
 * Reading: one streaming pass over SystemProfileEvents' start_ts, name,
 * trace_event_source, worker_gid, process_id and extra_attributes_json with
 * start_ts in [INT64_MIN, end] (pages and row groups starting after end are
 * skipped by their statistics); the before samples are kept as they pass, so
 * nothing of the table is held. A profile without the table, or whose table
 * lacks start_ts, name, trace_event_source or extra_attributes_json as INT64 /
 * STRING columns, has no lanes; worker_gid and process_id read as null when
 * absent or not INT64.
 * Memory: width points (16 bytes each) per series, taken from a query budget
 * (budget.h) as each series is first seen: over it, NX_QUERY_OVER_BUDGET and an
 * error saying so. At most NX_COUNTER_MAX_LANES lanes and NX_COUNTER_MAX_SERIES
 * series per lane, else an error naming the row that would pass the cap.
 */
#ifndef NX_QUERY_COUNTER_LANES_H
#define NX_QUERY_COUNTER_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

#define NX_COUNTER_MAX_LANES 256
#define NX_COUNTER_MAX_SERIES 64

typedef enum nx_counter_kind { NX_COUNTER_MEMORY, NX_COUNTER_COUNTER } nx_counter_kind;

/* A lane kind's facts for the viewer (/api/schema): kind name, what its values
 * are in ("bytes", or NULL), its fixed series names (NULL-ended; none for
 * counters, whose series are their args' members). */
typedef struct nx_counter_kind_info {
    const char *kind, *unit;
    const char *series[3];
} nx_counter_kind_info;
const nx_counter_kind_info *nx_counter_kind_at(nx_counter_kind k);

/* A nullable integer part of a lane's key. */
typedef struct nx_counter_key {
    bool null;
    int64_t v;
} nx_counter_key;

typedef struct nx_counter_series {
    char *name;                 /* malloc'd, NUL-terminated */
    bool has_before;
    int64_t before_t;
    double before_v;
    size_t n;                   /* points */
    int64_t *t;                 /* absolute start_ts, ns */
    double *v;
} nx_counter_series;

typedef struct nx_counter_lane {
    nx_counter_kind kind;
    nx_counter_key worker_gid;
    nx_counter_key device_type, device_id;  /* memory lanes */
    nx_counter_key process_id;              /* counter lanes */
    char *name;                             /* counter lanes: the row name (malloc'd); NULL for memory */
    char *label;                            /* malloc'd */
    nx_counter_series *series;
    size_t n_series;
} nx_counter_lane;

typedef struct nx_counter_lanes {
    nx_counter_lane *lanes;
    size_t n;
    nxpq_scan_stats stats;       /* the pass's row groups and pages read vs total */
} nx_counter_lanes;

/* The lanes of profile_dir over [start, end] (start <= end) at width >= 1
 * buckets. 0 (*out filled; nx_counter_lanes_free it), NX_QUERY_OVER_BUDGET or
 * -1, with err naming the table (and row) at fault. */
int nx_counter_lanes_read(const char *profile_dir, int64_t start, int64_t end, uint32_t width,
                          nx_counter_lanes *out, nx_error *err);
void nx_counter_lanes_free(nx_counter_lanes *c);

#endif
