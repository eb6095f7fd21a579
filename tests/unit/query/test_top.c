/*
 * test_top.c — what query/top.h answers around its groups: the percent of a group, of
 * the groups past a limit and of the totals (summed durations, counts, self time over
 * the wall time), the groups a limit shows, and `nxprof top`'s default table and keys.
 *
 * Tables (values chosen so every percent is worked out by hand below):
 *   Instruction (engine, duration_ns): tensor 10, 30; vector 60; scalar 0 -> sums 40, 60, 0 of 100;
 *   Flow (dependency_type only, nothing to sum): data x3, sync x1 -> counts of 4;
 *   SystemProfileEvents: "step" [0, 100] holding "mm" [10, 30] and "mm" [40, 50] on one
 *   thread -> self step 70, mm 30, wall 100.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/top.h"
#include "system_fixture.h"
#include "table_fixture.h"

static char dir[64], sys_dir[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxtop-XXXXXX");
    assert_non_null(mkdtemp(dir));
    fx_write(dir, "Instruction.parquet", (fx_col[]){{"engine", NXPQ_STRING}, {"duration_ns", NXPQ_INT64}}, 2,
             (const char *const[]){"tensor", "10", "vector", "60", "tensor", "30", "scalar", "0"}, 4);
    fx_write(dir, "Flow.parquet", (fx_col[]){{"dependency_type", NXPQ_STRING}}, 1,
             (const char *const[]){"data", "sync", "data", "data"}, 4);
    snprintf(sys_dir, sizeof sys_dir, "%s/sys", dir);
    static const sys_event ev[] = {
        {0, 100, "framework", NX_ABSENT, "i-1", 1, 1, "step", NULL},
        {10, 30, "framework", NX_ABSENT, "i-1", 1, 1, "mm", NULL},
        {40, 50, "framework", NX_ABSENT, "i-1", 1, 1, "mm", NULL},
    };
    write_events(sys_dir, ev, 3, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static void run(const char *d, const char *table, const char *by, nx_top *r)
{
    nx_error err = {0};
    nx_top_options o = {.table = table, .by = (const char *[]){by}, .n_by = 1};
    assert_int_equal(nx_top_run(d, &o, r, &err), 0);
}

static void near(double got, double want) { assert_true(fabs(got - want) < 1e-9); }

static void percent_of_sums(void **state)
{
    (void)state;
    nx_top r;
    run(dir, "Instruction", "engine", &r);
    assert_int_equal(r.value, NX_TOP_DURATION);
    assert_int_equal(nx_group_by_count(r.g), 3); /* vector 60, tensor 40, scalar 0 */
    near(nx_top_percent(&r, nx_group_by_stats(r.g, 0)), 60.0);
    near(nx_top_percent(&r, nx_group_by_stats(r.g, 1)), 40.0);
    nx_group_stats tot = nx_group_by_totals(r.g);
    near(nx_top_percent(&r, &tot), 100.0);
    assert_int_equal(nx_top_shown(&r, 0), 3);
    assert_int_equal(nx_top_shown(&r, 1), 1);
    assert_int_equal(nx_top_shown(&r, 3), 3);
    assert_int_equal(nx_top_shown(&r, 99), 3);
    nx_group_stats rest = nx_top_rest(&r, 1); /* tensor and scalar */
    assert_int_equal(rest.count, 3);
    assert_int_equal(rest.sum[0], 40);
    assert_int_equal(rest.n_values[0], 3);
    near(nx_top_percent(&r, &rest), 40.0);
    rest = nx_top_rest(&r, 3);
    assert_int_equal(rest.count, 0);
    near(nx_top_percent(&r, &rest), 0.0);
    assert_int_equal(nx_top_wall(&r), 0); /* not a nesting table */
    nx_top_free(&r);
}

static void percent_of_counts(void **state)
{
    (void)state;
    nx_top r;
    run(dir, "Flow", "dependency_type", &r);
    assert_int_equal(r.value, NX_TOP_COUNT);
    near(nx_top_percent(&r, nx_group_by_stats(r.g, 0)), 75.0); /* data: 3 of 4 */
    near(nx_top_percent(&r, nx_group_by_stats(r.g, 1)), 25.0);
    nx_top_free(&r);
}

static void percent_of_wall(void **state)
{
    (void)state;
    nx_top r;
    run(sys_dir, "SystemProfileEvents", "name", &r);
    assert_true(r.self);
    assert_int_equal(nx_top_wall(&r), 100);
    near(nx_top_percent(&r, nx_group_by_stats(r.g, 0)), 70.0); /* step: 100 - 20 - 10 */
    near(nx_top_percent(&r, nx_group_by_stats(r.g, 1)), 30.0);
    nx_group_stats tot = nx_group_by_totals(r.g);
    near(nx_top_percent(&r, &tot), 100.0);
    nx_top_free(&r);
}

static void defaults(void **state)
{
    (void)state;
    assert_string_equal(nx_top_default_table(dir), "Instruction");
    assert_string_equal(nx_top_default_table(sys_dir), "SystemProfileEvents");
    assert_string_equal(nx_top_default_by("SystemProfileEvents"), "name");
    assert_string_equal(nx_top_default_by("Instruction"), "engine,opcode");
    assert_string_equal(nx_top_default_by("DmaPacket"), "engine,opcode");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percent_of_sums),
        cmocka_unit_test(percent_of_counts),
        cmocka_unit_test(percent_of_wall),
        cmocka_unit_test(defaults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
