/* test_int_ops.c — unit tests of util/int_ops: the three-way compare at the
 * int64 extremes (where a - b would overflow), the qsort form, and floor
 * division for each sign (expected values: Python's //). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "util/int_ops.h"

static void test_cmp(void **state)
{
    (void)state;
    assert_int_equal(nx_cmp_i64(INT64_MIN, INT64_MAX), -1);
    assert_int_equal(nx_cmp_i64(INT64_MAX, INT64_MIN), 1);
    assert_int_equal(nx_cmp_i64(-5, -5), 0);
    int64_t v[] = {3, INT64_MIN, 0, INT64_MAX, -1, 3};
    qsort(v, 6, sizeof *v, nx_qsort_cmp_i64);
    const int64_t want[] = {INT64_MIN, -1, 0, 3, 3, INT64_MAX};
    for (size_t i = 0; i < 6; i++)
        assert_true(v[i] == want[i]);
}

static void test_floor_div(void **state)
{
    (void)state;
    assert_true(nx_floor_div(7, 2) == 3);
    assert_true(nx_floor_div(-7, 2) == -4);
    assert_true(nx_floor_div(7, -2) == -4);
    assert_true(nx_floor_div(-7, -2) == 3);
    assert_true(nx_floor_div(-6, 2) == -3);
    assert_true(nx_floor_div(0, 5) == 0);
    assert_true(nx_floor_div(-1, 1000) == -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_floor_div),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
