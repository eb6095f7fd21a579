/*
 * group_by.h — streaming GROUP BY with count(*) and up to NX_GROUP_SUMS
 * sum(<int64 value>)s, fed batch by batch from a scan; memory is proportional
 * to the number of distinct groups, never to the number of rows.
 *
 * Semantics (those of SQL, so results equal DuckDB's
 *   SELECT k1.., count(*), sum(v1), sum(v2) FROM t GROUP BY k1.. ):
 *   - keys are INT32, INT64, BOOLEAN or STRING columns; a null key value is its
 *     own group value (all nulls of a key compare equal);
 *   - count counts every row of the group;
 *   - each sum adds its non-null values only; a group whose values are all null
 *     has a null sum (n_values[j] == 0); a sum beyond int64 is an error, not a
 *     wrap;
 *   - without value columns (n_sums == 0) only counts are kept.
 * Order after nx_group_by_sort(g, by):
 *   1. sum `by` descending (groups with a null sum last), or count descending
 *      when by < 0 or no values were added;
 *   2. ties: the key columns ascending, left to right: integers numerically,
 *      strings by unsigned bytes (shorter prefix first), nulls after values —
 *      i.e. ORDER BY <sum> DESC NULLS LAST, k1 ASC NULLS LAST, k2 ... in SQL.
 * The order is total (two groups never have equal keys), so output is deterministic.
 */
#ifndef NX_QUERY_GROUP_BY_H
#define NX_QUERY_GROUP_BY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

typedef struct nx_group_by nx_group_by;

typedef struct nx_group_key {
    bool null;
    nxpq_type type;       /* the key column's type */
    int64_t i;            /* INT32, INT64 and BOOLEAN (0/1) values */
    const char *s;        /* STRING: bytes (not NUL-terminated), valid while the group_by lives */
    size_t len;
} nx_group_key;

#define NX_GROUP_SUMS 3

typedef struct nx_group_stats {
    int64_t count;                       /* rows */
    int64_t sum[NX_GROUP_SUMS];          /* per value column: sum of the non-null values (0 when none) */
    int64_t n_values[NX_GROUP_SUMS];     /* per value column: non-null values summed */
} nx_group_stats;

/* One value column of a batch: n_rows int64 values, valid NULL = all present
 * (0 = null). */
typedef struct nx_group_values {
    const int64_t *v;
    const uint8_t *valid;
} nx_group_values;

/* key_types: the n_keys key column types (n_keys >= 1). NULL and err on failure. */
nx_group_by *nx_group_by_new(const nxpq_type *key_types, size_t n_keys, nx_error *err);
void nx_group_by_free(nx_group_by *g);

/* Adds n_rows rows. keys[k] is key column k of the batch (its type must be
 * key_types[k]); values: n_sums (<= NX_GROUP_SUMS, the same in every call)
 * value columns, sum j adding values[j]; n_sums 0 for count-only. Returns 0,
 * or -1 with err (out of memory, sum overflow). */
int nx_group_by_add(nx_group_by *g, const nxpq_column_data *const *keys, const nx_group_values *values,
                    size_t n_sums, size_t n_rows, nx_error *err);
/* nx_group_by_add of the rows r with keep[r] != 0 only (keep NULL: all), as
 * a WHERE clause before the GROUP BY: the others count nowhere, totals included. */
int nx_group_by_add_kept(nx_group_by *g, const nxpq_column_data *const *keys, const nx_group_values *values,
                         size_t n_sums, size_t n_rows, const uint8_t *keep, nx_error *err);

size_t nx_group_by_count(const nx_group_by *g);
/* Totals over all rows added. */
nx_group_stats nx_group_by_totals(const nx_group_by *g);
/* Sorts the groups (rules above): by sum `by`, or by count when by < 0. */
int nx_group_by_sort(nx_group_by *g, int by, nx_error *err);
/* Group at rank i (sorted order after nx_group_by_sort, else first-seen order). */
const nx_group_stats *nx_group_by_stats(const nx_group_by *g, size_t i);
void nx_group_by_key(const nx_group_by *g, size_t i, size_t k, nx_group_key *out);

#endif
