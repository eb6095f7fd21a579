/*
 * test_budget.c — the query memory budget (query/engine/budget.h) and the sampler's
 * use of it (query/engine/window.h nx_sampler_set_budget): the limit read from
 * NXPROF_QUERY_MEMORY_MIB (a bad value is an error naming it), takes that
 * would pass the limit refused and leave nothing taken, and a sampler that
 * takes 32 bytes per bucket of each track it sees, refuses the track that
 * would pass the limit (saying so), and gives everything back when freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "query/engine/budget.h"
#include "query/engine/window.h"

#define MIB (UINT64_C(1) << 20)

static void test_limit_from_the_environment(void **state)
{
    (void)state;
    nx_budget b;
    nx_error err = {0};
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
    assert_int_equal(nx_budget_init(&b, &err), 0);
    assert_int_equal(b.limit, 256 * MIB);
    setenv("NXPROF_QUERY_MEMORY_MIB", "3", 1);
    assert_int_equal(nx_budget_init(&b, &err), 0);
    assert_int_equal(b.limit, 3 * MIB);
    setenv("NXPROF_QUERY_MEMORY_MIB", "1048576", 1);
    assert_int_equal(nx_budget_init(&b, &err), 0);
    assert_int_equal(b.limit, 1048576 * MIB);
    static const char *const bad[] = {"", "0", "-1", "+5", " 5", "5 ", "5M", "1048577", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("NXPROF_QUERY_MEMORY_MIB", bad[i], 1);
        memset(&err, 0, sizeof err);
        assert_int_equal(nx_budget_init(&b, &err), -1);
        assert_non_null(strstr(err.msg, "NXPROF_QUERY_MEMORY_MIB"));
    }
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
}

static void test_take_and_give(void **state)
{
    (void)state;
    setenv("NXPROF_QUERY_MEMORY_MIB", "1", 1);
    nx_budget b;
    nx_error err = {0};
    assert_int_equal(nx_budget_init(&b, &err), 0);
    assert_true(nx_budget_take(&b, MIB - 10));
    assert_false(nx_budget_take(&b, 11));         /* one byte over: refused, nothing taken */
    assert_true(nx_budget_take(&b, 10));          /* exactly the limit */
    assert_false(nx_budget_take(&b, 1));
    assert_false(nx_budget_take(&b, UINT64_MAX)); /* wraps around: still refused */
    nx_budget_give(&b, MIB);
    assert_int_equal(atomic_load(&b.used), 0);
    assert_true(nx_budget_take(NULL, UINT64_MAX)); /* no budget, no limit */
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
}

static void test_sampler_within_budget(void **state)
{
    (void)state;
    setenv("NXPROF_QUERY_MEMORY_MIB", "1", 1);
    nx_budget b;
    nx_error err = {0};
    assert_int_equal(nx_budget_init(&b, &err), 0);
    /* 10,000 buckets x 32 bytes: three tracks fit in 1 MiB (983,040 bytes), a fourth does not. */
    enum { WIDTH = 10000 };
    nx_sampler *s = nx_sampler_new(0, 999999, WIDTH, &err);
    assert_non_null(s);
    nx_sampler_set_budget(s, &b);
    for (uint32_t t = 0; t < 3; t++) {
        assert_int_equal(nx_sampler_offer(s, t, 100, 200, t, 0, &err), 0);
        assert_int_equal(nx_sampler_offer(s, t, 150, 900, 10 + t, 0, &err), 0);   /* same track: nothing more */
        assert_int_equal(atomic_load(&b.used), (uint64_t)(t + 1) * WIDTH * 32);
    }
    assert_false(nx_sampler_over_budget(s));
    assert_int_equal(nx_sampler_offer(s, 3, 100, 200, 3, 0, &err), -1);
    assert_true(nx_sampler_over_budget(s));
    assert_non_null(strstr(err.msg, "memory budget of 1 MiB"));
    assert_int_equal(atomic_load(&b.used), 3 * WIDTH * 32);   /* the refused track took nothing */
    size_t n;
    const nx_sample *kept = nx_sampler_result(s, &n, &err);
    assert_int_equal(n, 3);   /* per track one bucket (100 ns each): 100 and 150 share bucket 1, the longer kept */
    assert_int_equal(kept[0].ordinal, 10);
    nx_sampler_free(s);
    assert_int_equal(atomic_load(&b.used), 0);
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_from_the_environment),
        cmocka_unit_test(test_take_and_give),
        cmocka_unit_test(test_sampler_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
