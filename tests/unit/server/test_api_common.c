/* test_server_json.c — the API's JSON values (server/api_internal.h): strings stay
 * valid JSON whatever their bytes (UTF-8 kept, every other byte >= 0x80 written as
 * \ufffd; fuzz_http found raw request bytes quoted into error messages), and
 * differences beyond int64 are decimal strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/api_internal.h"

static void str_is(const char *in, size_t len, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_json_put_string(&b, in, len);
    assert_false(nx_strbuf_failed(&b));
    nx_strbuf_putc(&b, '\0');
    assert_string_equal(b.data, want);
    nx_strbuf_free(&b);
}

#define STR_IS(lit, want) str_is(lit, sizeof lit - 1, want)

static void strings(void **state)
{
    (void)state;
    STR_IS("plain \"q\" \\ \n\t\r\x01\x7f", "\"plain \\\"q\\\" \\\\ \\n\\t\\r\\u0001\\u007f\"");
    STR_IS("\0x", "\"\\u0000x\"");
    /* UTF-8 of every length is kept, the largest code point included. */
    STR_IS("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"");
    /* Anything else: one \ufffd per byte that starts no sequence. */
    STR_IS("\xff", "\"\\ufffd\"");
    STR_IS("a\x80z", "\"a\\ufffdz\"");                       /* lone continuation byte */
    STR_IS("\xc0\x80", "\"\\ufffd\\ufffd\"");                /* overlong NUL */
    STR_IS("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");     /* overlong '/' */
    STR_IS("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");     /* a surrogate */
    STR_IS("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */
    STR_IS("\xf5\x80", "\"\\ufffd\\ufffd\"");
    STR_IS("\xe2\x82", "\"\\ufffd\\ufffd\"");                /* cut short at the end */
    STR_IS("\xe2\x82x", "\"\\ufffd\\ufffdx\"");              /* cut short before ASCII */
    STR_IS("%2\xa1\xcd\x9a\xff\xff", "\"%2\\ufffd\xcd\x9a\\ufffd\\ufffd\""); /* fuzz_http's input */
}

static void i128_is(__int128 v, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_json_i128(&b, v);
    nx_strbuf_putc(&b, '\0');
    assert_string_equal(b.data, want);
    nx_strbuf_free(&b);
}

static void wide_integers(void **state)
{
    (void)state;
    i128_is(0, "0");
    i128_is(-120, "-120");
    i128_is(INT64_C(9007199254740991), "9007199254740991");
    i128_is(INT64_C(9007199254740992), "\"9007199254740992\"");
    i128_is(INT64_MAX, "\"9223372036854775807\"");
    i128_is((__int128)INT64_MAX + 1, "\"9223372036854775808\"");
    i128_is((__int128)INT64_MAX - INT64_MIN, "\"18446744073709551615\"");
    i128_is((__int128)INT64_MIN - INT64_MAX, "\"-18446744073709551615\"");
    /* The timeline offset fuzz_http found: an event at 1766144804577183210 in a window
     * starting at INT64_MIN. */
    i128_is((__int128)INT64_C(1766144804577183210) - INT64_MIN, "\"10989516841431959018\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings),
        cmocka_unit_test(wide_integers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
