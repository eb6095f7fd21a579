/* test_strbuf.c — unit tests of the growable buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static void test_append_grows(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    for (int i = 0; i < 1000; i++)
        nx_strbuf_printf(&b, "%d,", i);
    assert_false(nx_strbuf_failed(&b));
    assert_int_equal(strncmp(b.data, "0,1,2,", 6), 0);
    assert_int_equal(b.len, strlen(b.data));
    char *s = nx_strbuf_detach(&b);
    assert_non_null(s);
    assert_null(b.data);
    assert_string_equal(s + strlen(s) - 4, "999,");
    free(s);
}

static void test_empty_detach_is_empty_string(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    char *s = nx_strbuf_detach(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_grows),
        cmocka_unit_test(test_empty_detach_is_empty_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
