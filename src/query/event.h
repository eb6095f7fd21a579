/*
 * event.h — one row of a profile table, found by its ordinal: every field of
 * the table's schema, in schema order, with its value as the file holds it,
 * and for a timeline table the row's track.
 *
 * Rules:
 *   - the ordinal is profile/timeline_rules.h nx_row_ordinal: (file << 40) | row
 *     in that file of the table (split files in their order);
 *   - fields: the catalogue's fields of the table in order; a field the file
 *     lacks, or holds in a type nxprof does not read, has no value (col -1);
 *   - start_hint (optional): the row's start (the timeline table's start
 *     column, window.h), as the timeline gave it: the file is then read only
 *     over pages whose statistics admit that value; a wrong hint costs a
 *     second read from the start, never a wrong answer;
 *   - track: for a timeline table whose row has a non-null INT64 start, its
 *     track (window.h's rule, found with a one-instant window at that start);
 *     has_track false otherwise, and when the track cannot be read (the table
 *     lacks a column its track rule requires): the row is still answered.
 * Cost: the row alone is read (a one-row selection of the scan: one page of each
 * column where the file has a page index, else its row group). Memory: that row.
 */
#ifndef NX_QUERY_EVENT_H
#define NX_QUERY_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "schema/schema.h"

/* nx_event_read: the table has no row with that ordinal. */
enum { NX_EVENT_NONE = 2 };

typedef struct nx_event {
    const nx_schema_table *schema;   /* the table's fields, in order */
    const nxpq_batch *batch;         /* holds the row: row `row` of batch->columns[col[f]] */
    size_t row;
    int *col;                        /* per schema field: its batch column, -1 without a value */
    bool has_track;
    char *track;                     /* malloc'd, NUL-terminated (track[track_len]) */
    size_t track_len;
    nxpq_reader *reader;             /* private: what batch lives in */
    nxpq_scan *scan;
} nx_event;

/* Reads the row `ordinal` of `table` (a non-transient catalogue table) of
 * profile_dir. 0 (*out filled; nx_event_free it), NX_PROFILE_TABLE_ABSENT,
 * NX_EVENT_NONE, or -1 with err naming the table or file. */
int nx_event_read(const char *profile_dir, const char *table, int64_t ordinal, const int64_t *start_hint,
                  nx_event *out, nx_error *err);
/* nx_event_read reading only the schema fields fields[0..n_fields) (and, for a
 * timeline table, its start column, for the track): the others have no value
 * (col -1). Looking a few values up this way decodes only their columns of the
 * pages read. */
int nx_event_read_fields(const char *profile_dir, const char *table, int64_t ordinal, const int64_t *start_hint,
                         const char *const *fields, size_t n_fields, nx_event *out, nx_error *err);
/* The value of schema field f (< schema->n_fields) as a batch column, NULL when
 * it has none; the row is ev->row. */
const nxpq_column_data *nx_event_field(const nx_event *ev, size_t f);
void nx_event_free(nx_event *ev);

#endif
