/* test_text.c — unit tests of util/text: nx_text_dup copies exactly n bytes
 * (a NUL inside kept, nothing past n read) and terminates the copy; nx_text_i64
 * takes one spelling per int64, the bounds included, and refuses the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

static void test_copies_n_bytes(void **state)
{
    (void)state;
    const char src[] = {'a', 'b', '\0', 'c', 'd', 'e'};
    char *d = nx_text_dup(src, 4);
    assert_non_null(d);
    assert_memory_equal(d, "ab\0c", 4);
    assert_int_equal(d[4], '\0');
    free(d);
    /* A prefix of a longer text, no NUL in the source range. */
    d = nx_text_dup("track-name", 5);
    assert_non_null(d);
    assert_string_equal(d, "track");
    free(d);
}

static void test_empty(void **state)
{
    (void)state;
    char *d = nx_text_dup("", 0);
    assert_non_null(d);
    assert_string_equal(d, "");
    free(d);
}

static void test_i64(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t v;
    } ok[] = {{"0", 0}, {"7", 7}, {"-5", -5}, {"1000", 1000},
              {"9223372036854775807", INT64_MAX}, {"-9223372036854775808", INT64_MIN}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = 42;
        assert_int_equal(nx_text_i64(ok[i].s, &v), 0);
        assert_true(v == ok[i].v);
    }
    static const char *const bad[] = {"", "-", "007", "-0", "+1", "1x", " 1", "1 ", "0x10", "1.0",
                                      "9223372036854775808", "-9223372036854775809", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 42;
        assert_int_equal(nx_text_i64(bad[i], &v), -1);
        assert_true(v == 42);
    }
    int64_t v;
    assert_int_equal(nx_text_i64(NULL, &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_n_bytes),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_i64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
