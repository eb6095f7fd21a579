/*
 * row0.h — the first row of a profile table, as the tables of one row (Summary,
 * Metadata) are read back: one cell per column of the table that holds a scalar
 * (integer, boolean, float, double or string; lists and types nxprof does not
 * read are left out), in the table's column order, with the value of its first
 * row (split files: the first file's first row). A cell keeps its column's type,
 * so a FLOAT column's value is exactly that float.
 */
#ifndef NX_QUERY_ROW0_H
#define NX_QUERY_ROW0_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

/* One value of a row read back, in its column's type. */
typedef struct nx_cell {
    char *name;         /* the column's name (malloc'd), or NULL where the caller names the cells */
    nxpq_type type;     /* NXPQ_UNSUPPORTED: no such column (always null) */
    bool null;
    int64_t i;          /* INT32, INT64; BOOLEAN as 0/1 */
    double f;           /* FLOAT (exactly), DOUBLE */
    char *s;            /* STRING: malloc'd, NUL-terminated (s[len]) */
    size_t len;
} nx_cell;

typedef struct nx_row0 {
    bool present;       /* the profile has the table */
    bool has_row;       /* ... with at least one row (else every cell is null) */
    int64_t rows;       /* the table's row count */
    nx_cell *cells;
    size_t n;
} nx_row0;

/* Reads the first row of `table` of profile_dir. 0 (*out filled, present false
 * when the profile lacks the table; nx_row0_free it) or -1 with err naming the
 * table or file. */
int nx_row0_read(const char *profile_dir, const char *table, nx_row0 *out, nx_error *err);
/* The cell of column `name`, or NULL when the table has no such scalar column. */
const nx_cell *nx_row0_field(const nx_row0 *r, const char *name);
void nx_row0_free(nx_row0 *r);

/* Whether a column of type t is read into cells (the scalar types above). */
bool nx_cell_type_ok(nxpq_type t);
/* Row r of a scalar batch column into x (its name kept): false when out of memory. */
bool nx_cell_set(nx_cell *x, const nxpq_column_data *col, size_t r);
void nx_cell_free(nx_cell *c);

#endif
