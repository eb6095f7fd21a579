/* test_json.c — unit tests of util/json: string escaping (control bytes,
 * invalid UTF-8), numbers and top-level member scanning. Expected texts are written out
 * by hand from the rules in json.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

static void expect_escaped(const char *in, size_t len, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_json_put_string(&b, in, len);
    assert_false(nx_strbuf_failed(&b));
    assert_string_equal(b.data, want);
    /* The fixed-buffer form writes the same bytes. */
    char *out = malloc(NX_JSON_ESCAPE_MAX * len + 2);
    assert_non_null(out);
    size_t n = nx_json_escape(out, in, len);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
    free(out);
    nx_strbuf_free(&b);
}

static void test_put_i64(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_json_put_i64(&b, INT64_C(9007199254740991), true);    /* 2^53 - 1: a number */
    nx_strbuf_putc(&b, ' ');
    nx_json_put_i64(&b, INT64_C(9007199254740992), true);    /* 2^53: a string */
    nx_strbuf_putc(&b, ' ');
    nx_json_put_i64(&b, INT64_MIN, true);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_i64(&b, INT64_MIN, false);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_i64(&b, -7, true);
    assert_string_equal(b.data, "9007199254740991 \"9007199254740992\" \"-9223372036854775808\" "
                                "-9223372036854775808 -7");
    nx_strbuf_free(&b);
    nx_json_put_i64_member(&b, "a_ns", INT64_C(9007199254740992), true);
    nx_json_put_i64_member(&b, "b", INT64_C(9007199254740992), false);
    nx_json_put_i64_member(&b, "c", INT64_C(-9007199254740991), true);
    assert_string_equal(b.data, ",\"a_ns\":\"9007199254740992\",\"b\":9007199254740992,\"c\":-9007199254740991");
    nx_strbuf_free(&b);
}

/* Floats: shortest round-trip text (Python's repr, numpy's float32 repr), non-finite as null. */
static void test_put_floats(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_json_put_f64(&b, 0.1);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_f64(&b, 1e300);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_f64(&b, NAN);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_f64(&b, -INFINITY);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_f32(&b, 0.1f);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_f32(&b, 1.0f / 3);
    nx_strbuf_putc(&b, ' ');
    nx_json_put_f32(&b, INFINITY);
    nx_json_put_f64_member(&b, "r", 0.30000000000000004);
    nx_json_put_f64_member(&b, "n", NAN);
    assert_false(nx_strbuf_failed(&b));
    assert_string_equal(b.data, "0.1 1e+300 null null 0.1 0.33333334 null,\"r\":0.30000000000000004,\"n\":null");
    nx_strbuf_free(&b);
    /* The printf-side forms give the same texts. */
    char t[NX_FLOAT_TEXT_MAX];
    assert_string_equal(nx_json_f64_text(t, 0.8), "0.8");
    assert_string_equal(nx_json_f64_text(t, INFINITY), "null");
    assert_string_equal(nx_json_f32_text(t, 3.4028235e38f), "3.4028235e+38");
    assert_string_equal(nx_json_f32_text(t, NAN), "null");
}

static void test_escapes_specials_and_controls(void **state)
{
    (void)state;
    expect_escaped("a\"b\\c\nd\te\rf", 11, "\"a\\\"b\\\\c\\nd\\te\\rf\"");
    expect_escaped("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
    expect_escaped("a\0b", 3, "\"a\\u0000b\"");
    expect_escaped("", 0, "\"\"");
    expect_escaped("/", 1, "\"/\"");
}

static void test_valid_utf8_is_copied(void **state)
{
    (void)state;
    /* é (2 bytes), € (3), U+1F600 (4), U+10FFFF (the last code point) */
    expect_escaped("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", 13,
                   "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
}

static void test_invalid_utf8_becomes_replacement(void **state)
{
    (void)state;
    expect_escaped("a\xffz", 3, "\"a\\ufffdz\"");                 /* never valid */
    expect_escaped("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");          /* overlong '/' */
    expect_escaped("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");  /* surrogate U+D800 */
    expect_escaped("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");   /* above U+10FFFF */
    expect_escaped("x\xe2\x82", 3, "\"x\\ufffd\\ufffd\"");        /* cut at the end */
    expect_escaped("\xe2(", 2, "\"\\ufffd(\"");                   /* the next byte read afresh */
    expect_escaped("\x80\xc3\xa9", 3, "\"\\ufffd\xc3\xa9\"");     /* stray continuation, then é */
}

static void test_escape_char_reports_bytes_used(void **state)
{
    (void)state;
    char out[NX_JSON_ESCAPE_MAX];
    size_t used;
    assert_int_equal(nx_json_escape_char("\xe2\x82\xac!", 4, out, &used), 3);
    assert_int_equal(used, 3);
    assert_int_equal(nx_json_escape_char("\xe2\x82", 2, out, &used), 6);
    assert_int_equal(used, 1);
    assert_memory_equal(out, "\\ufffd", 6);
}

static void expect_member(const char *js, const char *key, const char *want)
{
    const char *v = NULL;
    size_t n = 0;
    bool got = nx_json_member(js, strlen(js), key, &v, &n);
    if (!want) {
        assert_false(got);
        return;
    }
    assert_true(got);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(v, want, n);
}

static void test_member_values(void **state)
{
    (void)state;
    const char *js = "{\"a\":1,\"s\":\"x,\\\"}\",\"o\":{\"stream\":7,\"l\":[1,{\"b\":2}]},\"n\":null,\"stream\":-3.5e2}";
    expect_member(js, "a", "1");
    expect_member(js, "s", "\"x,\\\"}\"");
    expect_member(js, "o", "{\"stream\":7,\"l\":[1,{\"b\":2}]}");
    expect_member(js, "n", "null");
    expect_member(js, "stream", "-3.5e2");     /* the top level's, not the nested one */
    expect_member(js, "b", NULL);
    expect_member(" { \"k\" : [ 1 , 2 ] , \"z\" : true } ", "k", "[ 1 , 2 ]");
    expect_member(" { \"k\" : [ 1 , 2 ] , \"z\" : true } ", "z", "true");
    expect_member("[1,2]", "k", NULL);
    expect_member("{\"k\":", "k", NULL);
    expect_member("{\"k\":\"open", "k", NULL);
    expect_member("{\"k\":{\"a\":1", "k", NULL);
}

/* Every top-level member in order, nested ones skipped; a malformed tail ends the walk. */
static void test_members_in_order(void **state)
{
    (void)state;
    const char *js = " { \"a\" : 1 , \"o\":{\"x\":[1,\"}\"]},\"s\":\"q\\\"\" , \"z\":true, \"bad\": } ";
    const char *want[][2] = {{"a", "1"}, {"o", "{\"x\":[1,\"}\"]}"}, {"s", "\"q\\\"\""}, {"z", "true"}};
    nx_json_iter it;
    const char *k, *v;
    size_t kl, vl, n = 0;
    assert_true(nx_json_members_begin(&it, js, strlen(js)));
    while (nx_json_members_next(&it, &k, &kl, &v, &vl)) {
        assert_true(n < 4);
        assert_int_equal(kl, strlen(want[n][0]));
        assert_memory_equal(k, want[n][0], kl);
        assert_int_equal(vl, strlen(want[n][1]));
        assert_memory_equal(v, want[n][1], vl);
        n++;
    }
    assert_int_equal(n, 4);
    assert_false(nx_json_members_begin(&it, "[1]", 3));
    assert_true(nx_json_members_begin(&it, "{}", 2));
    assert_false(nx_json_members_next(&it, &k, &kl, &v, &vl));
}

static void test_string_member_decodes(void **state)
{
    (void)state;
    char out[64];
    size_t n = 0;
    const char *js = "{\"cat\":\"a\\u00e9\\n\\ud83d\\ude00\\ud800\"}";
    assert_true(nx_json_string_member(js, strlen(js), "cat", out, sizeof out, &n));
    assert_int_equal(n, 1 + 2 + 1 + 4 + 3);
    assert_memory_equal(out, "a\xc3\xa9\n\xf0\x9f\x98\x80\xef\xbf\xbd", n);
    n = 0;
    assert_false(nx_json_string_member("{\"cat\":7}", 9, "cat", out, sizeof out, &n));
    assert_false(nx_json_string_member("{\"cat\":\"\\x\"}", 12, "cat", out, sizeof out, &n));
    n = 60;
    assert_false(nx_json_string_member("{\"cat\":\"abcdef\"}", 16, "cat", out, sizeof out, &n));
    assert_int_equal(n, 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_i64),
        cmocka_unit_test(test_put_floats),
        cmocka_unit_test(test_escapes_specials_and_controls),
        cmocka_unit_test(test_valid_utf8_is_copied),
        cmocka_unit_test(test_invalid_utf8_becomes_replacement),
        cmocka_unit_test(test_escape_char_reports_bytes_used),
        cmocka_unit_test(test_member_values),
        cmocka_unit_test(test_members_in_order),
        cmocka_unit_test(test_string_member_decodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
