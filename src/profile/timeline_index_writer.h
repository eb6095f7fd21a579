/*
 * timeline_index_writer.h — writes a timeline table's index (profile/timeline_index.h,
 * which documents the file) while the table itself is written.
 *
 * row.c drives it: every batch of rows goes to nx_tlx_writer_add() in table order
 * before the codec gets it, and nx_tlx_writer_close() runs after the table's
 * Parquet files are closed, because the index records their sizes and footers.
 * Memory: one block of encoded events per track plus 80 bytes per block of
 * NX_TLX_BLOCK_EVENTS events; event data streams to the file. A table whose
 * events nest (SystemProfileEvents) also runs profile/nesting.h's pass over its
 * tracks (a stack per track) and writes each row's depth and self time to a
 * side file (`<index>.tmp-<pid>.nest`, 16 bytes per row) that is copied into
 * the index when it is finished and then removed. Its depth tracks are built
 * when it is finished: track by track, the events are read back from the
 * blocks already written (the file is mapped) and dealt out by sampling level (profile/nesting.h nx_nesting_level; the side
 * file is mapped), one block builder per level of the track at a time (about
 * 6 KiB each, at most NX_NESTING_LEVELS whatever the nesting), plus 80 bytes
 * per block of the depth tracks.
 *
 * The index is an accelerator, never the truth: when a track's events are not in
 * start order (a table written unsorted) or one ends before it starts, the writer
 * gives up quietly and removes the file; queries then scan the table.
 */
#ifndef NX_PROCESS_TIMELINE_INDEX_WRITER_H
#define NX_PROCESS_TIMELINE_INDEX_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "schema/schema.h"

/* One column of a batch of rows: integer values or strings (by the field's
 * type) and a validity byte per row. A keyed column (process/row.h) also
 * gives its rows' keys: its value is a function of the key (one of n_keys),
 * which lets the index remember the labels per key. */
typedef struct nx_tlx_column {
    const int64_t *i;
    const nxpq_str *s;
    const uint8_t *valid;
    const uint32_t *keys;            /* NULL: not keyed */
    const uint8_t *key_valid;        /* per row: the key is set */
    size_t n_keys;
} nx_tlx_column;

typedef struct nx_tlx_writer nx_tlx_writer;

/* Starts the index of table s in directory dir (rows_per_file: the table's split
 * limit). 0 with *out NULL when the table is not a timeline table (timeline_rules.h), 0
 * and *out, or -1 and err. */
int nx_tlx_writer_open(const char *dir, const nx_schema_table *s, uint64_t rows_per_file, nx_tlx_writer **out,
                       nx_error *err);
/* The next n rows of the table; cols is indexed by the schema's field index. */
int nx_tlx_writer_add(nx_tlx_writer *w, const nx_tlx_column *cols, size_t n, nx_error *err);
/* ok and rows > 0: finishes the file (the table's files must be closed) and
 * renames it into place (it is written under a temporary name, so an index
 * being rebuilt is replaced whole or not at all); else removes it. file_rows:
 * the row count of each of the table's n_files files, or NULL when they were
 * split every rows_per_file rows. Frees w (NULL is fine). */
int nx_tlx_writer_close(nx_tlx_writer *w, bool ok, const uint64_t *file_rows, size_t n_files, nx_error *err);

/* Builds (or rebuilds, replacing it whole) the timeline index of `table` in
 * profile_dir from the table's Parquet files, whoever wrote them
 * (timeline_index_build.c). 0 (*rows: rows indexed), NX_PROFILE_TABLE_ABSENT, or
 * -1 with err. No index is left when the rows are not in start order per track
 * or an event ends before it starts (the writer's rule above): 0 is returned and
 * queries scan the table. */
int nx_tlx_build(const char *profile_dir, const char *table, uint64_t *rows, nx_error *err);

#endif
