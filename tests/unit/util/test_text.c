/* test_text.c — unit tests of util/text: nx_text_dup copies exactly n bytes
 * (a NUL inside kept, nothing past n read) and terminates the copy. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_n_bytes),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
