/*
 * row.h — one row at a time into a catalogue table, with the schema's promises kept.
 *
 * The processor's tables are all written through this helper. It records which
 * columns a row filled and puts null into every other one at nx_row_end(); a
 * required column left empty is an error naming the table and field, so no
 * required value is ever silently null. Values are converted to the column's
 * Parquet type (an integer put into an INT32 column is range-checked; a number
 * goes to FLOAT or DOUBLE as the catalogue says).
 *
 * Usage:
 *     nx_row r;
 *     nx_row_open(&r, &ctx->dest, "Throttle", &err);
 *     size_t c_ts = nx_row_col(&r, "timestamp");           // resolve once
 *     for (...) { nx_row_begin(&r, &err); nx_row_i64(&r, c_ts, t); ...; nx_row_end(&r, &err); }
 *     nx_row_close(&r, true, &tables, &err);               // false: abort, nothing kept
 * Put functions never fail on their own; the first problem (unknown column,
 * wrong kind of value) is reported by nx_row_end(), and problems found when a
 * batch is handed to the codec (a required value missing, a value too large for
 * an INT32 column) by the nx_row_end() or nx_row_close() that flushes it, naming
 * the table, field and row.
 *
 * Rows are kept column by column in batches of up to NX_ROW_BATCH rows and given
 * to the Parquet writer a column at a time: a put is a store, so a 50-column
 * table costs about as much per row as the values it holds. Strings are copied
 * into the batch, so callers may pass temporary buffers.
 *
 * A table that fills a whole batch gets a thread of its own that hands full
 * batches to the Parquet writer while the caller fills the next one (up to
 * NX_ROW_FLUSH_DEPTH full batches wait for it, so the writer's bursts at row
 * group ends do not stop the caller), so the sink's thread spends its time on
 * records, not on the codec. Tables that never fill a batch are flushed on the caller's thread at
 * close and cost no thread. A timeline table's index (timeline_index_writer.h)
 * gets every batch just before the codec does. Errors found by the background flush are reported
 * by the next nx_row_begin() or by nx_row_close().
 */
#ifndef NX_ROW_H
#define NX_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/table_writer.h"
#include "schema/schema.h"
#include "util/absent.h"

#define NX_ROW_BATCH 4096
#define NX_ROW_FLUSH_DEPTH 3           /* full batches a table's flush thread may hold */

/* Where a profile's tables go and how they are written. */
typedef struct nx_table_dest {
    const char *dir;                         /* the (temporary) profile directory */
    uint64_t max_rows;                       /* per-file row limit; 0: the default */
    const nxpq_writer_options *base;         /* codec options (threads, ...); NULL: defaults */
    _Atomic uint64_t *rows_written;          /* NULL, or the rows of every table closed through
                                                nx_row_close() are added here (Summary.total_row_count) */
} nx_table_dest;

typedef struct nx_row_batch nx_row_batch;     /* rows buffered column by column (row.c) */
typedef struct nx_row_flusher nx_row_flusher; /* the table's background flush thread (row.c) */

typedef struct nx_row {
    nx_table_writer *tw;
    const nx_schema_table *s;
    nx_row_batch *b;                 /* the batch being filled: ring[cur] */
    nx_row_batch *ring[NX_ROW_FLUSH_DEPTH + 1];   /* [0] from the start, the others from the first
                                                     hand-off: the batch being filled and those
                                                     handed off */
    unsigned cur;
    nx_row_flusher *bg;              /* started at the first hand-off */
    struct nx_tlx_writer *tlx;       /* the table's timeline index, for timeline tables
                                        (timeline_index_writer.h): fed every batch */
    struct nx_row_keyed *keyed;      /* per field, once a column is keyed (nx_row_keyed_*) */
    uint64_t rows;                   /* rows ended */
    _Atomic uint64_t *rows_written;  /* the destination's tally (nx_table_dest) */
    bool oom;
    const char *missing;             /* a field name the catalogue lacks */
    const char *wrong;               /* a field put with the wrong kind of value */
} nx_row;

int nx_row_open(nx_row *r, const nx_table_dest *dest, const char *table, nx_error *err);
int nx_row_begin(nx_row *r, nx_error *err);
/* Column index of `name`; an unknown name makes every put to it, and the row, fail. */
size_t nx_row_col(nx_row *r, const char *name);

void nx_row_i64(nx_row *r, size_t c, int64_t v);          /* INT64 or INT32 column */
void nx_row_num(nx_row *r, size_t c, double v);           /* FLOAT or DOUBLE column */
void nx_row_bool(nx_row *r, size_t c, bool v);
void nx_row_str(nx_row *r, size_t c, const char *s);
void nx_row_strn(nx_row *r, size_t c, const char *s, size_t len);
/* A string that stays valid and unchanged until nx_row_close() (program strings):
 * stored by reference, not copied. */
void nx_row_str_ref(nx_row *r, size_t c, const char *s, size_t len);
void nx_row_list_i64(nx_row *r, size_t c, const int64_t *v, size_t n);
void nx_row_list_str(nx_row *r, size_t c, const char *const *v, size_t n);
/* Optional values: NX_ABSENT (-1) and NULL/"" leave the column null. */
void nx_row_opt_i64(nx_row *r, size_t c, int64_t v);
void nx_row_opt_str(nx_row *r, size_t c, const char *s);

/* Keyed columns: columns whose value is a function of a per-row key (the
 * program instruction a row is about, say). A row has NX_ROW_KEYS key slots.
 * Before the first row, give each such column its key slot and its value per
 * key: nx_row_keyed_str() for a STRING column (a NULL ptr: null),
 * nx_row_keyed_i64() for an INT64/INT32 column (NX_ABSENT: null). The arrays
 * and the string bytes are referenced and must stay valid until nx_row_close().
 * Then per row nx_row_key() sets a slot's key; the columns of a slot the row
 * did not set are null, and a key past a column's array fails the table. Keyed
 * columns take no other puts. The table's files are the same as with puts of
 * the values, but the codec never hashes them (parquet.h,
 * nxpq_set_dictionary_strings()). */
#define NX_ROW_KEYS 2
int nx_row_keyed_str(nx_row *r, unsigned slot, size_t c, const nxpq_str *v, size_t n, nx_error *err);
int nx_row_keyed_i64(nx_row *r, unsigned slot, size_t c, const int64_t *v, size_t n, nx_error *err);
void nx_row_key(nx_row *r, unsigned slot, uint32_t key);

int nx_row_end(nx_row *r, nx_error *err);
/* Finishes the table and counts it in *tables. A table that got no rows is not
 * written (a profile holds a table only when it has that activity); ok false
 * aborts, removing what was written. Always releases r; safe on a zeroed r. */
int nx_row_close(nx_row *r, bool ok, unsigned *tables, nx_error *err);
/* For a sink's finish: closes the table when rc is 0 (returning the close's
 * result), else discards it and returns rc. */
int nx_row_finish(nx_row *r, int rc, unsigned *tables, nx_error *err);
/* Aborts the table, for error paths (same as nx_row_close(r, false, ...)). */
void nx_row_discard(nx_row *r);
uint64_t nx_row_count(const nx_row *r);

#endif
