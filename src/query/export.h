/*
 * export.h — one timeline table over a time window as rows handed to a row
 * writer (row_writer.h): the engine behind `nxprof export-csv`, `nxprof
 * export-perfetto` and the server's /export/<Table>.csv, so all give the same
 * rows (docs/query.md). The request's options come from export_request.h.
 *
 * Columns: "timeline_track" (the track function of window.h), then every field
 * of the table in schema order; a field the files lack, or hold in a type the
 * reader cannot decode, is an empty column. Rows: those inside the window
 * (window.h's rule) in file order, i.e. start-time order; sampled (width > 0):
 * only the events the sampler keeps, found by a first pass over the timing and
 * track columns; at most max_rows rows.
 *
 * Truncation means the window holds more than max_rows rows (sampled: kept rows).
 * It is known from the start for a sampled export, and for an unsampled one
 * opened with count_first (a pass over the timing columns only, stopped at
 * max_rows + 1 rows), which an HTTP response needs before its headers; otherwise
 * it is known once nx_export_next() has returned 0.
 *
 * Usage: nx_export_open; nx_export_begin; while (nx_export_next(...) > 0) flush
 * as you like; the writer's end_table; nx_export_close. Memory: one batch of
 * rows plus the sampler.
 */
#ifndef NX_QUERY_EXPORT_H
#define NX_QUERY_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/engine/row_writer.h"

typedef struct nx_export_options {
    int64_t start, end;              /* the window, inclusive ns, start <= end */
    uint32_t width;                  /* sampling buckets; 0: every row */
    uint64_t max_rows;               /* >= 1 */
    bool count_first;                /* unsampled: count the rows at open (see above) */
} nx_export_options;

typedef struct nx_export nx_export;

/* Opens `table` of `profile_dir` and runs the first pass. 0 (*out set),
 * NX_PROFILE_TABLE_ABSENT (the profile has no such table; *out NULL), or -1 with
 * err naming the table or file. */
int nx_export_open(const char *profile_dir, const char *table, const nx_export_options *o, nx_export **out,
                   nx_error *err);
/* Starts the table in w (its begin_table). 0 or -1 with err. */
int nx_export_begin(const nx_export *x, nx_row_writer *w, nx_error *err);
/* Hands the rows of the next window batch to w. 1: more to come, 0: done, -1: err set. */
int nx_export_next(nx_export *x, nx_row_writer *w, nx_error *err);
/* Rows the export writes in all (<= max_rows), or -1 while unknown. */
int64_t nx_export_planned_rows(const nx_export *x);
/* Whether rows were (or, when planned, will be) left out at max_rows. */
bool nx_export_truncated(const nx_export *x);
/* Pages and row groups read: pass 0 the sampling or counting pass, 1 the row pass. */
void nx_export_pages(const nx_export *x, int pass, nxpq_scan_stats *out);
void nx_export_close(nx_export *x);

/* Every row of the opened export into w: its begin_table, the rows, its
 * end_table. 0 or -1 with err. */
int nx_export_all(nx_export *x, nx_row_writer *w, nx_error *err);

/* Whole-profile formats (nx_row_format.per_table false: Perfetto): every row of
 * each of `tables` (n of them; tables the profile lacks are skipped) over
 * [start, end], unsampled and complete, into one writer of `format` on f, then
 * its finish; note (NX_ROW_NOTE bytes) gets the writer's remark, "" when none.
 * 0, or -1 with err naming the table or file. */
int nx_export_profile(const char *profile_dir, const nx_row_format *format, FILE *f, int64_t start, int64_t end,
                      const char *const *tables, size_t n, char *note, nx_error *err);

#endif
