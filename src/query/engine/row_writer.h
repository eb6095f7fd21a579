/*
 * row_writer.h — the output seam of exports: export.h reads a timeline table's
 * window and hands its rows, a batch at a time, to a row writer, which turns
 * them into one output format. The formats are listed in one place
 * (nx_row_format_find, row_formats.c): CSV (csv_rows.c, the bytes of
 * docs/query.md), JSON rows (json_rows.c) and Perfetto's protobuf trace
 * (perfetto_rows.c). A new format is a row writer file defining its
 * nx_row_format plus one line in that list.
 *
 * A writer receives, for each table exported into it:
 *   begin_table  the table (its schema: the columns are "timeline_track", then
 *                every schema field in order);
 *   rows         zero or more batches of rows in file (start-time) order;
 *   end_table    the table is done;
 * and finish once after the last table (then free). Formats with one file per
 * table (CSV, JSON rows) get one writer per file; Perfetto takes every table
 * of a profile into one trace. flush writes what the writer has buffered to
 * its FILE (a server streams a response as it goes); it may be NULL.
 * Each function returns 0, or -1 with err naming the table and what failed.
 */
#ifndef NX_QUERY_ROW_WRITER_H
#define NX_QUERY_ROW_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parquet/parquet.h"
#include "profile/timeline_rules.h"
#include "query/engine/window.h"
#include "schema/schema.h"

typedef struct nx_row_table {
    const char *table;
    const nx_schema_table *schema;
    const nx_timeline_info *timeline;
} nx_row_table;

/* One batch of rows. Row j < n is window row k = pick ? pick[j] : j of b: its
 * batch row b->rows[k], start b->start[k], end b->end[k] and track b->track[k]
 * (named by nx_window_track_name(w, ...)); cells[f] is schema field f's column
 * in b->batch, or NULL when the files lack it (an empty column). */
typedef struct nx_row_batch {
    const nx_window_batch *b;
    const nx_window *w;
    const nxpq_column_data *const *cells;
    const uint32_t *pick;
    size_t n;
} nx_row_batch;

typedef struct nx_row_writer nx_row_writer;

typedef struct nx_row_writer_ops {
    int (*begin_table)(nx_row_writer *w, const nx_row_table *t, nx_error *err);
    int (*rows)(nx_row_writer *w, const nx_row_batch *rb, nx_error *err);
    int (*end_table)(nx_row_writer *w, nx_error *err);
    int (*flush)(nx_row_writer *w, nx_error *err);
    int (*finish)(nx_row_writer *w, nx_error *err);
    void (*free)(nx_row_writer *w);
} nx_row_writer_ops;

#define NX_ROW_NOTE 256

/* Implementations put this first in their own struct. */
struct nx_row_writer {
    const nx_row_writer_ops *ops;
    char note[NX_ROW_NOTE];      /* after finish: a remark for the user (input it could
                                    not represent), "" when none */
};

/* Where a writer writes, and the export it is part of: the profile and the
 * window (Perfetto adds the profile's counter lanes over it). */
typedef struct nx_row_target {
    FILE *f;                     /* not closed by the writer */
    const char *profile_dir;
    int64_t start, end;          /* the export's window, inclusive ns */
} nx_row_target;

typedef struct nx_row_format {
    const char *name;            /* "csv", "json", "perfetto" */
    const char *extension;       /* of its files: ".csv", ".json", ".pftrace" */
    bool per_table;              /* one file per table; else one per profile */
    /* A writer for the target. NULL and err on failure. */
    nx_row_writer *(*open)(const nx_row_target *t, nx_error *err);
} nx_row_format;

/* The format named `name`, or NULL. */
const nx_row_format *nx_row_format_find(const char *name);
/* Format i in list order, or NULL past the last. */
const nx_row_format *nx_row_format_at(size_t i);


/* Batch row j's window row index (see nx_row_batch). */
static inline size_t nx_row_batch_k(const nx_row_batch *rb, size_t j) { return rb->pick ? rb->pick[j] : j; }

#endif
