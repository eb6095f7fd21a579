/*
 * profile_table.h — read one table of a profile directory as a single stream of
 * batches, whatever the number of files it was split into.
 *
 * A profile directory holds each table either as <Table>.parquet or, above the
 * per-file row limit, as the series <Table>_0.parquet, <Table>_1.parquet, ...,
 * <Table>_k.parquet (src/profile/table_writer.h). nx_profile_table_open() finds
 * which, with these rules:
 *   - <Table>.parquet alone                      -> that one file;
 *   - <Table>_<n>.parquet files (n decimal, no sign, no leading zeros except "0")
 *     numbered exactly 0..k with no gap           -> those files in numeric order;
 *   - both forms present, a gap in the numbering -> an error naming the table;
 *   - neither                                    -> NX_PROFILE_TABLE_ABSENT
 *     (not an error: tables are written only when the profile has that activity).
 * Names are matched exactly (case-sensitive), so "Instruction" never picks up
 * "InstructionFoo_0.parquet".
 *
 * The schema (column names, types) is the first file's; every later file must
 * have each projected column, with the same type, or the scan fails naming the
 * file. The table keeps the readers (footer metadata) of its first 16 files
 * open for its scans; a scan opens any later file itself, one at a time, so
 * memory is at most 17 readers' metadata plus one batch.
 */
#ifndef NX_QUERY_PROFILE_TABLE_H
#define NX_QUERY_PROFILE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

typedef struct nx_profile_table nx_profile_table;

enum { NX_PROFILE_TABLE_ABSENT = 1 };
/* Most entries in nx_profile_scan_options.more_ranges. */
enum { NX_PROFILE_MAX_MORE_RANGES = 4 };

/* Finds and opens `table` in `profile_dir`. Returns 0 (*out set), NX_PROFILE_TABLE_ABSENT
 * (*out NULL, err says which files were looked for) or -1 (err names the table/file). */
int nx_profile_table_open(const char *profile_dir, const char *table, nx_profile_table **out, nx_error *err);
void nx_profile_table_close(nx_profile_table *t);

const char *nx_profile_table_name(const nx_profile_table *t);
size_t nx_profile_table_file_count(const nx_profile_table *t);
const char *nx_profile_table_file_path(const nx_profile_table *t, size_t i);
/* Sum of the files' row counts (from their footers). */
int64_t nx_profile_table_num_rows(const nx_profile_table *t);
/* Row count of file i (from its footer); 0 past the last file. */
int64_t nx_profile_table_file_rows(const nx_profile_table *t, size_t i);

/* Columns of the first file. */
size_t nx_profile_table_num_columns(const nx_profile_table *t);
const nxpq_column_info *nx_profile_table_column(const nx_profile_table *t, size_t i);
/* Index of the column named `name`, or -1. */
int nx_profile_table_find_column(const nx_profile_table *t, const char *name);

typedef struct nx_profile_scan nx_profile_scan;

typedef struct nx_profile_scan_options {
    const char *const *columns;   /* projection by name, in batch order; must be non-empty */
    size_t n_columns;
    const char *range_column;     /* NULL, or an INT32/INT64 column: keep pages/row groups whose
                                     [min, max] may meet [range_min, range_max] (rows inside a kept
                                     page are all returned; callers filter exactly) */
    int64_t range_min, range_max;
    size_t batch_rows;            /* 0: the reader's default */
    int threads;                  /* threads decoding each batch's columns (nxpq_scan_options) */
    bool dictionary;              /* columns may come in dictionary form (nxpq_column_data) */
    /* More ranges, all of which must hold too (AND), each on its own INT32/INT64
     * column by name: e.g. a time window on interval events keeps start_ts in
     * [-inf, end] AND end_ts in [start, +inf], pruning both by page statistics.
     * The array is copied at open; the column names and the projection array must
     * outlive the scan. */
    const struct nx_profile_range *more_ranges;
    size_t n_more_ranges;
    /* With rows_end > 0: only the table's rows [rows_begin, rows_end), rows
     * numbered across its files in order (file i's first row is the sum of the
     * earlier files' row counts); only their files and pages are read. Lets
     * workers share a table out, one span each. */
    int64_t rows_begin, rows_end;
} nx_profile_scan_options;

typedef struct nx_profile_range {
    const char *column;
    int64_t min, max;
} nx_profile_range;

/* Starts a scan over every file of the table in order. NULL and err on failure
 * (unknown column names are an error naming the table). */
nx_profile_scan *nx_profile_scan_open(nx_profile_table *t, const nx_profile_scan_options *o, nx_error *err);
/* 1 and *out set to the next non-empty batch (valid until the next call), 0 at the
 * end of the last file, -1 on error. */
int nx_profile_scan_next(nx_profile_scan *s, const nxpq_batch **out, nx_error *err);
void nx_profile_scan_close(nx_profile_scan *s);
/* Index of the file the last batch came from (0 before the first batch). A row's
 * identity across the table is (file, batch->first_row + i). */
size_t nx_profile_scan_file(const nx_profile_scan *s);
/* One batch of nx_profile_scan_each: `file` as nx_profile_scan_file gives it.
 * Returns 0 to go on, -1 (err set) to stop. */
typedef int (*nx_profile_batch_fn)(void *ctx, const nxpq_batch *b, size_t file, nx_error *err);
/* Scans t with options o and calls fn for every batch, in table order; the scan is
 * closed, t is not. 0, or -1 with err set (the scan's error or fn's). */
int nx_profile_scan_each(nx_profile_table *t, const nx_profile_scan_options *o, nx_profile_batch_fn fn, void *ctx,
                         nx_error *err);
/* The reader's pruning statistics (parquet.h nxpq_scan_stats) summed over every
 * file scanned so far, including the current one. */
void nx_profile_scan_get_stats(const nx_profile_scan *s, nxpq_scan_stats *out);

/* The profile's time span: the smallest Metadata.first_hw_timestamp and the largest
 * last_hw_timestamp over all its rows (one per device trace, or one for a
 * framework-only profile), Unix ns. 0, NX_PROFILE_TABLE_ABSENT (no Metadata table or
 * no values in it), or -1 with err. */
int nx_profile_span(const char *profile_dir, int64_t *first, int64_t *last, nx_error *err);

#endif
