/* test_framework_kinds.c — unit tests of process/system/framework_kinds.c: what each
 * kind of Chrome event becomes (attributes JSON, async track ids, id text, flow
 * keys, the args members a slice's row uses). Expected texts are written out by hand from the rules in
 * system_events.c's header comment; the async track id is computed here with
 * XXH3's one-shot call over the whole key, not the streaming one the code uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "process/system/system_internal.h"

static nx_chrome_text text(const char *s)
{
    return (nx_chrome_text){.s = s, .len = s ? strlen(s) : 0};
}

static nx_chrome_ref num(int64_t v)
{
    return (nx_chrome_ref){.kind = NX_CHROME_REF_NUMBER, .num = v};
}

static nx_chrome_ref str(const char *s)
{
    return (nx_chrome_ref){.kind = NX_CHROME_REF_STRING, .str = text(s)};
}

static void expect_attrs(const nx_chrome_event *ev, const char *id, const char *thread_name, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_fw_attrs(&b, ev, id, thread_name);
    assert_false(nx_strbuf_failed(&b));
    assert_string_equal(b.data, want);
    nx_strbuf_free(&b);
}

static void test_slices_have_no_ph(void **state)
{
    (void)state;
    nx_chrome_event x = {.ph = 'X', .cat = text("kernel"), .pid = str("Spans"), .tid = num(7),
                         .args = text("{\"a\":1}"), .flow_out = true, .id = num(3)};
    expect_attrs(&x, "3", NULL, "{\"cat\":\"kernel\",\"pid\":\"Spans\",\"flow_out\":true,\"args\":{\"a\":1}}");
    nx_chrome_event b = {.ph = 'B', .tid = str("main"), .args_too_large = true, .flow_in = true};
    expect_attrs(&b, NULL, NULL, "{\"tid\":\"main\",\"flow_in\":true,\"args_truncated\":true}");
    nx_chrome_event bare = {.ph = 'X'};
    expect_attrs(&bare, NULL, NULL, "{}");
}

static void test_other_kinds_start_with_ph(void **state)
{
    (void)state;
    nx_chrome_event i = {.ph = 'i', .cat = text("cpu_instant_event"), .s = text("t"), .pid = num(1), .tid = num(2),
                         .args = text("{\"Bytes\":-5}")};
    expect_attrs(&i, NULL, NULL, "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"args\":{\"Bytes\":-5}}");
    nx_chrome_event f = {.ph = 'f', .cat = text("ac2g"), .bp = text("e"), .id = num(42)};
    expect_attrs(&f, "42", NULL, "{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":\"42\",\"bp\":\"e\"}");
    /* A phase that needs escaping is still one JSON string. */
    nx_chrome_event q = {.ph = '"'};
    expect_attrs(&q, NULL, NULL, "{\"ph\":\"\\\"\"}");
}

static void test_async_rows_keep_their_tid_and_track_name(void **state)
{
    (void)state;
    nx_chrome_event b = {.ph = 'b', .cat = text("net"), .tid = num(9), .id = str("0x1")};
    expect_attrs(&b, "0x1", "load", "{\"ph\":\"b\",\"cat\":\"net\",\"tid\":9,\"id\":\"0x1\",\"thread_name\":\"load\"}");
    nx_chrome_event n = {.ph = 'n', .tid = str("io")};
    expect_attrs(&n, NULL, "x\"y", "{\"ph\":\"n\",\"tid\":\"io\",\"thread_name\":\"x\\\"y\"}");
}

static void test_async_track_is_the_documented_hash(void **state)
{
    (void)state;
    const char key[] = "async\x1fnet\x1fload";
    int64_t want = -1 - (int64_t)(XXH3_64bits(key, sizeof key - 1) >> 1);
    assert_int_equal(nx_fw_async_track("net", "load"), want);
    assert_true(nx_fw_async_track("", "") < 0);
    assert_true(nx_fw_async_track("net", "load") != nx_fw_async_track("netl", "oad"));
    assert_true(nx_fw_async_key("a", "1") != nx_fw_async_key("a", "2"));
}

static void test_id_text(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_chrome_ref n = num(-12), s = str("0xff"), e = str(""), none = {0};
    assert_string_equal(nx_fw_ref_text(&n, &b), "-12");
    assert_string_equal(nx_fw_ref_text(&s, &b), "0xff");
    assert_string_equal(nx_fw_ref_text(&e, &b), "");
    assert_null(nx_fw_ref_text(&none, &b));
    assert_false(nx_strbuf_failed(&b));
    nx_strbuf_free(&b);
}

/* The keys of ev's flow list, split at NX_FW_FLOW_SEP and joined with '|' to compare. */
static void expect_flows(const nx_chrome_event *ev, const char *id, const char *want)
{
    nx_strbuf list = NX_STRBUF_INIT, scratch = NX_STRBUF_INIT;
    nx_fw_slice_args args;
    nx_fw_slice_args_find(ev, &args);
    nx_fw_flows(&list, ev, &args, id, &scratch);
    assert_false(nx_strbuf_failed(&list) || nx_strbuf_failed(&scratch));
    char *got = calloc(list.len + 1, 1);
    assert_non_null(got);
    for (size_t k = 0; k < list.len; k++)
        got[k] = list.data[k] == NX_FW_FLOW_SEP ? '|' : list.data[k];
    assert_string_equal(got, want);
    free(got);
    nx_strbuf_free(&list);
    nx_strbuf_free(&scratch);
}

static void test_flow_keys(void **state)
{
    (void)state;
    nx_chrome_event launch = {.ph = 'X', .cat = text("cuda_runtime"), .args = text("{\"correlation\":42}"),
                              .bind_id = num(9)};
    expect_flows(&launch, NULL, "42|cuda_runtime:9");
    nx_chrome_event own = {.ph = 'B', .args = text("{\"flow_id\":\"7\",\"correlation\":1}")};
    expect_flows(&own, NULL, "7");
    nx_chrome_event bound = {.ph = 'X', .bind_id = str("0x9")};
    expect_flows(&bound, NULL, ":0x9");
    nx_chrome_event s = {.ph = 's', .cat = text("ac2g"), .args = text("{\"correlation\":5}")};
    expect_flows(&s, "42", "ac2g:42");
    expect_flows(&s, NULL, "");
    nx_chrome_event i = {.ph = 'i', .args = text("{\"correlation\":5}")};
    expect_flows(&i, "1", "");
    /* The separator inside a category or id cannot split a key. */
    nx_chrome_event odd = {.ph = 't', .cat = text("a\x1f" "b")};
    expect_flows(&odd, "c\x1f", "a\xef\xbf\xbd" "b:c\xef\xbf\xbd");
}

/* The member found for each key of a slice's args ("-" when none), as "stream,flow_id,correlation". */
static void expect_args(const char *args, const char *want)
{
    nx_chrome_event ev = {.ph = 'X', .args = text(args)};
    nx_fw_slice_args a;
    nx_fw_slice_args_find(&ev, &a);
    char got[256];
    snprintf(got, sizeof got, "%.*s,%.*s,%.*s", a.stream ? (int)a.stream_len : 1, a.stream ? a.stream : "-",
             a.flow_id ? (int)a.flow_id_len : 1, a.flow_id ? a.flow_id : "-",
             a.correlation ? (int)a.correlation_len : 1, a.correlation ? a.correlation : "-");
    assert_string_equal(got, want);
}

/* Only top-level members count: a key's name as a value or inside a nested
 * object passes the quick look for the quoted names but is not a member. */
static void test_slice_args_lookup(void **state)
{
    (void)state;
    expect_args("{\"Input Dims\":[[2,3]],\"Ev Idx\":2}", "-,-,-");
    expect_args("{\"stream\" : 7,\"correlation\":\"c9\",\"flow_id\":null}", "7,-,c9");
    expect_args("{\"name\":\"stream\",\"x\":{\"flow_id\":1,\"correlation\":2}}", "-,-,-");
    expect_args("{\"streams\":1,\"correlation_id\":2,\"flow\":3}", "-,-,-");
    expect_args("{\"a\":1,\"flow_id\":[1],\"correlation\":5,\"correlation\":6}", "-,-,5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices_have_no_ph),
        cmocka_unit_test(test_other_kinds_start_with_ph),
        cmocka_unit_test(test_async_rows_keep_their_tid_and_track_name),
        cmocka_unit_test(test_async_track_is_the_documented_hash),
        cmocka_unit_test(test_id_text),
        cmocka_unit_test(test_flow_keys),
        cmocka_unit_test(test_slice_args_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
