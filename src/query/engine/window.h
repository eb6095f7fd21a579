/*
 * window.h — time-window queries over a timeline table of a profile and pixel
 * sampling. One engine for `nxprof export-csv` and the viewer, so an export and
 * the screen always agree. Which tables are timelines, their timing columns and
 * their tracks are the timeline rules (profile/timeline_rules.h).
 *
 * Window rule, for a window [start, end] in ns, both ends inclusive:
 *   interval events: kept when end_ts >= start AND start_ts <= end (overlap);
 *   point events:    kept when start <= timestamp <= end.
 *   Rows with a null timing column are never kept.
 * Pruning: interval tables are scanned with two ranges, start_ts in
 * [INT64_MIN, end] AND end_ts in [start, INT64_MAX]; point tables with
 * timestamp in [start, end]. The reader skips row groups by column-chunk
 * statistics and pages by the page index (files without a page index are read
 * whole per surviving row group); the exact rule above is then applied per row.
 * Both ranges are exact consequences of the rule, so no event that overlaps the
 * window can be pruned, whatever the durations (no maximum duration is needed).
 * Rows are returned in file order: tables are written sorted by start time,
 * so this is start-time order (ties in file order).
 *
 * Sampling (nx_sampler): the window [start, end] is divided into `width` equal
 * buckets per track: with L = end - start + 1, the bucket of an event is
 *     b = floor((clamp(event start, start, end) - start) * width / L)
 * (exact integer arithmetic), so an event that starts before the window falls in
 * bucket 0. Each occupied (track, bucket) keeps exactly one event: the longest
 * (end - start; point events have duration 0), ties by the earliest start, then
 * by the earliest row (file index, row index). The result does not depend on
 * batch sizes. Memory: width slots (32 bytes each) per track seen, allocated
 * when the track first appears, within a budget when one is set
 * (nx_sampler_set_budget); nothing per event.
 */
#ifndef NX_QUERY_WINDOW_H
#define NX_QUERY_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/engine/budget.h"

typedef struct nx_window_options {
    int64_t start, end;           /* inclusive, ns; start <= end */
    const char *const *columns;   /* caller's projection (may be empty); the query adds the
                                     timing and track columns it needs after these */
    size_t n_columns;
    size_t batch_rows;            /* 0: the reader's default */
    int threads;                  /* threads decoding each batch's columns (nxpq_scan_options) */
    bool dictionary;              /* the batch's columns may come in dictionary form (the
                                     timing and track rules read both forms) */
    const nx_profile_range *ranges;  /* more pruning, at most NX_WINDOW_MAX_RANGES ranges on
                                     INT32/INT64 columns (profile_table.h): pages and row
                                     groups that cannot meet them are skipped, the rows of
                                     the others all come back (callers filter exactly) */
    size_t n_ranges;
    int64_t rows_begin, rows_end; /* with rows_end > 0: only the table's rows [rows_begin, rows_end)
                                     (profile_table.h nx_profile_scan_options) */
} nx_window_options;

#define NX_WINDOW_MAX_RANGES (NX_PROFILE_MAX_MORE_RANGES - 1)

/* One batch of rows inside the window. Arrays are indexed by k < n_rows and are
 * valid until the next nx_window_next(). */
typedef struct nx_window_batch {
    const nxpq_batch *batch;      /* raw batch: caller's columns first, in order */
    size_t n_rows;                /* rows of `batch` that are inside the window */
    const uint32_t *rows;         /* their row index within `batch`, ascending */
    const int64_t *start, *end;   /* their start and end (end == start for points) */
    const uint32_t *track;        /* their track id */
    size_t file;                  /* file of the batch: ordinal = nx_row_ordinal(file, batch->first_row + rows[k]) */
} nx_window_batch;

typedef struct nx_window nx_window;

/* Starts a window query over `t`, which must be a timeline table (nx_timeline_find
 * by its name) holding its timing columns. NULL and err on failure. */
nx_window *nx_window_open(nx_profile_table *t, const nx_window_options *o, nx_error *err);
/* 1 and *out (possibly with n_rows == 0), 0 at the end, -1 on error. */
int nx_window_next(nx_window *w, nx_window_batch *out, nx_error *err);
void nx_window_close(nx_window *w);
/* Pages/row groups read vs total so far (profile_table.h nx_profile_scan_get_stats). */
void nx_window_stats(const nx_window *w, nxpq_scan_stats *out);

size_t nx_window_track_count(const nx_window *w);
/* Name of track `id` (NUL-terminated, valid while w lives); *len gets its length. */
const char *nx_window_track_name(const nx_window *w, uint32_t id, size_t *len);

/* ---------------------------------------------------------------- sampling -- */
typedef struct nx_sampler nx_sampler;

/* width >= 1 buckets over [start, end]. NULL and err on failure. */
nx_sampler *nx_sampler_new(int64_t start, int64_t end, uint32_t width, nx_error *err);
void nx_sampler_free(nx_sampler *s);
/* Bucket of an event starting at `ts` (rule above). */
uint32_t nx_sampler_bucket(const nx_sampler *s, int64_t ts);
/* The event starts [*lo, *hi] (inclusive) that fall into bucket b < width, the
 * clamping included: bucket 0 begins at INT64_MIN, the last ends at INT64_MAX. */
void nx_sampler_bucket_range(const nx_sampler *s, uint32_t b, int64_t *lo, int64_t *hi);
/* Makes the sampler take its slots (width x 32 bytes per track, as each is
 * first seen) from b (query/engine/budget.h), and give them back when freed. */
void nx_sampler_set_budget(nx_sampler *s, nx_budget *b);
/* Whether an offer failed because b had no room for a new track's slots (the
 * caller then reports NX_QUERY_OVER_BUDGET with the offer's err). */
bool nx_sampler_over_budget(const nx_sampler *s);
/* Offers every row of a window batch. -1 and err on out of memory or over budget. */
int nx_sampler_add(nx_sampler *s, const nx_window_batch *b, nx_error *err);
/* Offers one event (track id, start, end, ordinal); `tag` rides along with a kept
 * event (nx_sample.tag), e.g. the timeline index's label tuple. */
int nx_sampler_offer(nx_sampler *s, uint32_t track, int64_t start, int64_t end, int64_t ordinal, uint32_t tag,
                     nx_error *err);

typedef struct nx_sample {
    uint32_t track, bucket;
    int64_t start, end;
    int64_t ordinal;
    uint32_t tag;                 /* nx_sampler_offer's tag; 0 from nx_sampler_add */
} nx_sample;

/* The kept events, sorted by ordinal (file order, i.e. start-time order for
 * sorted tables). *n gets the count; the array is owned by the sampler and valid
 * until it is freed. NULL with *n == 0 when nothing was kept; on out of memory
 * NULL, *n == SIZE_MAX and err set. */
const nx_sample *nx_sampler_result(nx_sampler *s, size_t *n, nx_error *err);

#endif
