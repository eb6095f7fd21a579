/*
 * test_row0.c — query/row0.h: the first row of a table with a column of every scalar
 * type (values exact in their own type, a null), a list column left out, an empty table
 * (cells, no row), a missing table, and an unreadable file named in the error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/row0.h"
#include "system_fixture.h"
#include "table_fixture.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxrow0-XXXXXX");
    assert_non_null(mkdtemp(dir));
    /* Summary: i32, i64, bool, float, double, string, a list, then a null; two rows. */
    char path[200];
    snprintf(path, sizeof path, "%s/Summary.parquet", dir);
    nxpq_column_spec cols[] = {
        {.name = "a", .type = NXPQ_INT32, .nullable = true},   {.name = "b", .type = NXPQ_INT64, .nullable = true},
        {.name = "c", .type = NXPQ_BOOLEAN, .nullable = true}, {.name = "d", .type = NXPQ_FLOAT, .nullable = true},
        {.name = "e", .type = NXPQ_DOUBLE, .nullable = true},  {.name = "f", .type = NXPQ_STRING, .nullable = true},
        {.name = "g", .type = NXPQ_LIST_INT64, .nullable = true}, {.name = "h", .type = NXPQ_INT64, .nullable = true},
    };
    nx_error err = {0};
    nxpq_writer *w = nxpq_writer_open(path, cols, 8, NULL, &err);
    assert_non_null(w);
    for (int r = 0; r < 2; r++) {
        int64_t list[] = {1, 2};
        assert_int_equal(nxpq_put_int32(w, 0, -7 + r), 0);
        assert_int_equal(nxpq_put_int64(w, 1, INT64_C(1) << 60), 0);
        assert_int_equal(nxpq_put_bool(w, 2, true), 0);
        assert_int_equal(nxpq_put_float(w, 3, 0.1f), 0);
        assert_int_equal(nxpq_put_double(w, 4, 0.1), 0);
        assert_int_equal(nxpq_put_string(w, 5, "x\0y", 3), 0);
        assert_int_equal(nxpq_put_list_int64(w, 6, list, 2), 0);
        assert_int_equal(nxpq_put_null(w, 7), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
    fx_write(dir, "Metadata.parquet", (fx_col[]){{"profile_name", NXPQ_STRING}}, 1, NULL, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static void scalar_types(void **state)
{
    (void)state;
    nx_row0 r;
    nx_error err = {0};
    assert_int_equal(nx_row0_read(dir, "Summary", &r, &err), 0);
    assert_true(r.present && r.has_row);
    assert_int_equal(r.rows, 2);
    assert_int_equal(r.n, 7); /* the list column g is left out */
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "h"};
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(r.cells[i].name, names[i]);
    assert_null(nx_row0_field(&r, "g"));
    assert_int_equal(nx_row0_field(&r, "a")->i, -7);
    assert_int_equal(nx_row0_field(&r, "a")->type, NXPQ_INT32);
    assert_int_equal(nx_row0_field(&r, "b")->i, INT64_C(1) << 60);
    assert_int_equal(nx_row0_field(&r, "c")->i, 1);
    assert_true(nx_row0_field(&r, "d")->f == (double)0.1f); /* the float exactly */
    assert_true(nx_row0_field(&r, "e")->f == 0.1);
    const nx_cell *f = nx_row0_field(&r, "f");
    assert_int_equal(f->len, 3);
    assert_memory_equal(f->s, "x\0y", 4);
    assert_true(nx_row0_field(&r, "h")->null);
    for (size_t i = 0; i + 1 < r.n; i++)
        assert_false(r.cells[i].null);
    nx_row0_free(&r);
}

static void empty_missing_unreadable(void **state)
{
    (void)state;
    nx_row0 r;
    nx_error err = {0};
    assert_int_equal(nx_row0_read(dir, "Metadata", &r, &err), 0);
    assert_true(r.present);
    assert_false(r.has_row);
    assert_int_equal(r.n, 1);
    assert_true(r.cells[0].null);
    nx_row0_free(&r);
    assert_int_equal(nx_row0_read(dir, "OpcodeSummary", &r, &err), 0);
    assert_false(r.present);
    assert_int_equal(r.n, 0);
    char path[200];
    snprintf(path, sizeof path, "%s/ExecutionInfo.parquet", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("PAR1 damaged", fp);
    fclose(fp);
    assert_int_equal(nx_row0_read(dir, "ExecutionInfo", &r, &err), -1);
    assert_non_null(strstr(err.msg, "ExecutionInfo"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_types),
        cmocka_unit_test(empty_missing_unreadable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
