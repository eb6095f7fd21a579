/* test_strmap.c — the string-keyed map (util/strmap.h): 20,000 keys (decimal
 * texts and binary keys holding NUL bytes, which differ only after the NUL)
 * put and found again with their values across many growths, absent keys not
 * found, prefixes of keys told apart, and the empty key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/strmap.h"

static void test_many(void **state)
{
    (void)state;
    nx_strmap m = {0};
    char k[32];
    uint64_t v;
    for (uint64_t i = 0; i < 10000; i++) {
        int n = snprintf(k, sizeof k, "%llu", (unsigned long long)i);
        assert_false(nx_strmap_get(&m, k, (size_t)n, &v));
        assert_int_equal(nx_strmap_put(&m, k, (size_t)n, i * 3), 0);
        char bin[6] = {'t', 0, (char)(i & 0xff), (char)(i >> 8), 0, 'x'};
        assert_int_equal(nx_strmap_put(&m, bin, sizeof bin, i + 1000000), 0);
    }
    assert_int_equal(m.n, 20000);
    for (uint64_t i = 0; i < 10000; i++) {
        int n = snprintf(k, sizeof k, "%llu", (unsigned long long)i);
        assert_true(nx_strmap_get(&m, k, (size_t)n, &v));
        assert_int_equal(v, i * 3);
        char bin[6] = {'t', 0, (char)(i & 0xff), (char)(i >> 8), 0, 'x'};
        assert_true(nx_strmap_get(&m, bin, sizeof bin, &v));
        assert_int_equal(v, i + 1000000);
        assert_false(nx_strmap_get(&m, bin, sizeof bin - 1, &v));
    }
    assert_false(nx_strmap_get(&m, "10000", 5, &v));
    assert_false(nx_strmap_get(&m, "", 0, &v));
    assert_int_equal(nx_strmap_put(&m, "", 0, 7), 0);
    assert_true(nx_strmap_get(&m, "", 0, &v));
    assert_int_equal(v, 7);
    nx_strmap_free(&m);
    assert_false(nx_strmap_get(&m, "1", 1, &v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_many)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
