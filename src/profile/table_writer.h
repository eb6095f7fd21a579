/*
 * table_writer.h — writes one profile table, driven by the schema catalogue.
 *
 * The catalogue (src/schema) decides everything about a table's files: column
 * names and order, Parquet types, nullability (required fields are REQUIRED
 * columns, so a missing value is an error rather than a silent null), and for
 * timeline tables DELTA encoding of the time column and the sorting_column
 * declaration that lets readers skip to a time window. Callers only supply values.
 * Dictionary-encoded columns whose values prove mostly distinct (ids, timestamps,
 * checksums) switch to DELTA_BINARY_PACKED for integers, PLAIN otherwise
 * (nxpq_writer_options.dictionary_skip_distinct and delta_fallback).
 *
 * Files: <dir>/<Table>.parquet while the table holds at most max_rows_per_file
 * rows. The first row beyond the limit renames it to <Table>_0.parquet and starts
 * <Table>_1.parquet, and so on, so a table is always either one file or a _0.._k
 * series, never both, and glob("<Table>*.parquet") reads it whole.
 *
 * Usage, per row:
 *     nxpq_writer *w = nx_table_begin_row(t, &err);   // may roll to the next file
 *     nxpq_put_int64(w, field_index, v); ...          // column index == field index
 *     nx_table_end_row(t, &err);
 * then nx_table_writer_close(). The nxpq_writer pointer is valid until the next
 * nx_table_begin_row(). Put errors poison the underlying writer and surface at
 * nx_table_end_row() or close. Every error message names the table and the file.
 */
#ifndef NX_TABLE_WRITER_H
#define NX_TABLE_WRITER_H

#include <stdint.h>

#include "parquet/parquet.h"
#include "schema/schema.h"

/* Per-file row limit used when the caller passes 0 (--max-rows-per-file default). */
#define NX_TABLE_MAX_ROWS_DEFAULT 10000000u
/* The widest DELTA_BINARY_PACKED miniblock a profile table holds: fastparquet
 * (2026.9) decodes up to 28 bits per value and loses bits beyond; wider pages are
 * PLAIN (nxpq_writer_options.delta_max_bit_width, docs/parquet.md). */
#define NX_TABLE_DELTA_MAX_BIT_WIDTH 28

typedef struct nx_table_writer nx_table_writer;

/* Opens catalogue table `table` for writing into directory `dir`. base may be NULL
 * (codec defaults); its metadata, sorting_column and created_by are replaced by the
 * catalogue's. Refuses unknown tables and transient (API-only) tables. */
nx_table_writer *nx_table_writer_open(const char *dir, const char *table, uint64_t max_rows_per_file,
                                      const nxpq_writer_options *base, nx_error *err);

/* The writer for the next row, after rolling to a new file if the current one is
 * full. NULL on error (*err filled; the table writer is then only good for abort). */
nxpq_writer *nx_table_begin_row(nx_table_writer *t, nx_error *err);
int nx_table_end_row(nx_table_writer *t, nx_error *err);
/* Batch form: the writer for up to `want` rows, *fit of which fit in the current
 * file (at least 1 on success); put *fit values per column, then end them. */
nxpq_writer *nx_table_begin_rows(nx_table_writer *t, size_t want, size_t *fit, nx_error *err);
int nx_table_end_rows(nx_table_writer *t, size_t n, nx_error *err);

/* A caller-known dictionary for column `col` (see nxpq_set_dictionary_strings()
 * and _int64() in parquet.h): strs for a STRING column (NULL ptr: null entry),
 * else ints with valid (NULL: all valid) for an INT64/INT32 column. The arrays
 * are copied; the string bytes are referenced and must stay valid until the
 * table is closed. Set before the first row; it applies to every file of the
 * table, and the column then takes values only through nxpq_put_dict_masked(). */
int nx_table_set_dictionary(nx_table_writer *t, size_t col, const nxpq_str *strs, const int64_t *ints,
                            const uint8_t *valid, size_t n, nx_error *err);

/* Finishes the last file and frees t. Returns 0 or -1 (the unfinished file is
 * removed; files already finished stay, for the caller's temporary directory to
 * discard). */
int nx_table_writer_close(nx_table_writer *t, nx_error *err);
/* Stops, removing the unfinished file, and frees t. */
void nx_table_writer_abort(nx_table_writer *t);

const nx_schema_table *nx_table_writer_schema(const nx_table_writer *t);
uint64_t nx_table_writer_rows(const nx_table_writer *t);    /* rows ended, all files */
unsigned nx_table_writer_files(const nx_table_writer *t);   /* files started so far */

/* Writes <dir>/SchemaFields.parquet: one row per (table, field) of the catalogue. */
int nx_write_schema_fields(const char *dir, const nxpq_writer_options *base, nx_error *err);

#endif
