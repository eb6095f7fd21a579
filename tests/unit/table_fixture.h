/* table_fixture.h — small Parquet tables for the unit tests, written cell by cell from
 * text: each cell is the value's text (parsed as the column's type: integers, floats,
 * "true"/"false", strings as they are) or NULL for a null. */
#ifndef NX_TEST_TABLE_FIXTURE_H
#define NX_TEST_TABLE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/parquet.h"

typedef struct fx_col {
    const char *name;
    nxpq_type type;
} fx_col;

/* dir/<file> with columns cols[0..n_cols) (all nullable) and rows x n_cols cells, row-major. */
static inline void fx_write(const char *dir, const char *file, const fx_col *cols, size_t n_cols,
                            const char *const *cells, size_t rows)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    nxpq_column_spec spec[16];
    assert_true(n_cols <= 16);
    for (size_t c = 0; c < n_cols; c++) {
        spec[c] = (nxpq_column_spec){.name = cols[c].name, .type = cols[c].type, .nullable = true};
    }
    nx_error err = {0};
    nxpq_writer *w = nxpq_writer_open(path, spec, n_cols, NULL, &err);
    assert_non_null(w);
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < n_cols; c++) {
            const char *v = cells[r * n_cols + c];
            int rc;
            if (!v)
                rc = nxpq_put_null(w, c);
            else if (spec[c].type == NXPQ_INT64)
                rc = nxpq_put_int64(w, c, strtoll(v, NULL, 10));
            else if (spec[c].type == NXPQ_INT32)
                rc = nxpq_put_int32(w, c, (int32_t)strtol(v, NULL, 10));
            else if (spec[c].type == NXPQ_FLOAT)
                rc = nxpq_put_float(w, c, strtof(v, NULL));
            else if (spec[c].type == NXPQ_DOUBLE)
                rc = nxpq_put_double(w, c, strtod(v, NULL));
            else if (spec[c].type == NXPQ_BOOLEAN)
                rc = nxpq_put_bool(w, c, strcmp(v, "true") == 0);
            else
                rc = nxpq_put_string(w, c, v, strlen(v));
            assert_int_equal(rc, 0);
        }
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

#endif
