/*
 * nesting_values.h — the depth and self time of every event of a timeline table
 * whose events nest (the rule and the streaming pass: profile/nesting.h).
 *
 * Reading (nx_nesting_open): from the table's timeline index when it is usable
 * (timeline_index.h stores every row's values, written by the same pass), else
 * computed from the table with one scan of its timing and track columns
 * (16 bytes per row in memory), so an index that is missing, stale or of an
 * older version only costs time; the caller is told why it was not used.
 */
#ifndef NX_QUERY_NESTING_VALUES_H
#define NX_QUERY_NESTING_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

/* ------------------------------------------------------------- reading -- */

typedef struct nx_nesting_values nx_nesting_values;

/* The values of every event of `table` of profile_dir (a timeline table whose
 * events nest). 0 (*out set), NX_PROFILE_TABLE_ABSENT, or -1 with err naming
 * the table (unreadable, rows not in start order per track, out of memory).
 * note (note_len bytes, may be NULL) gets why the timeline index was not used,
 * or "" when it was. */
int nx_nesting_open(const char *profile_dir, const char *table, nx_nesting_values **out, char *note,
                    size_t note_len, nx_error *err);
/* Depth and self time of the row at `ordinal` (timeline_rules.h nx_row_ordinal); false
 * for a row without them (null start or end) or no such row. */
bool nx_nesting_get(const nx_nesting_values *v, int64_t ordinal, uint32_t *depth, int64_t *self_ns);
/* 0, or -1 with err naming `table` when the values come from a timeline index
 * whose file changed while it was read (profile/timeline_index.h
 * nx_tlx_changed): what nx_nesting_get answered since cannot be trusted.
 * Callers ask before answering. */
int nx_nesting_check(const nx_nesting_values *v, const char *table, nx_error *err);
void nx_nesting_close(nx_nesting_values *v);

#endif
