/* test_error.c — util/error.h: the message with its location, the location kept
 * apart, prefixes, and the codec's and the capture readers' errors through it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "capture/capture_util.h"
#include "parquet/parquet.h"
#include "util/error.h"

static void set_has_no_location(void **state)
{
    (void)state;
    nx_error e;
    memset(&e, 'x', sizeof e);
    assert_int_equal(nx_error_set(&e, "bad %s %d", "thing", 7), -1);
    assert_string_equal(e.msg, "bad thing 7");
    assert_string_equal(e.file, "");
    assert_string_equal(e.field, "");
    assert_true(e.where == NX_ERROR_NOWHERE);
}

static void at_names_each_part(void **state)
{
    (void)state;
    nx_error e = {0};
    nx_error_at(&e, "trace.bin", "kind", "offset", 96, "record kind %d is unknown", 9);
    assert_string_equal(e.msg, "trace.bin: kind: offset 96: record kind 9 is unknown");
    assert_string_equal(e.file, "trace.bin");
    assert_string_equal(e.field, "kind");
    assert_true(e.where == 96);
    nx_error_at(&e, "x.tsv", NULL, "line", 3, "too few columns");
    assert_string_equal(e.msg, "x.tsv: line 3: too few columns");
    assert_string_equal(e.field, "");
    nx_error_at(&e, NULL, "duration", NULL, NX_ERROR_NOWHERE, "negative");
    assert_string_equal(e.msg, "duration: negative");
    assert_string_equal(e.file, "");
}

static void prefix_keeps_location_and_cuts(void **state)
{
    (void)state;
    nx_error e = {0};
    nx_error_at(&e, "a.parquet", "ts", "offset", 4, "bad page");
    nx_error_prefix(&e, "profile %s", "p1");
    assert_string_equal(e.msg, "profile p1: a.parquet: ts: offset 4: bad page");
    assert_string_equal(e.file, "a.parquet");
    assert_true(e.where == 4);
    char long_text[600];
    memset(long_text, 'y', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    nx_error_set(&e, "%s", long_text);
    assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
    nx_error_prefix(&e, "pre");
    assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
    assert_memory_equal(e.msg, "pre: yyy", 8);
}

static void null_error_is_accepted(void **state)
{
    (void)state;
    assert_int_equal(nx_error_set(NULL, "x"), -1);
    assert_int_equal(nx_error_at(NULL, "f", NULL, NULL, NX_ERROR_NOWHERE, "x"), -1);
    assert_int_equal(nx_error_prefix(NULL, "x"), -1);
}

static void capture_errors_carry_their_file_and_offset(void **state)
{
    (void)state;
    nx_error e = {0};
    nx_cap_fail_at(&e, "dev.trace", 128, "truncated record");
    assert_string_equal(e.msg, "dev.trace: offset 128: truncated record");
    assert_string_equal(e.file, "dev.trace");
    assert_true(e.where == 128);
}

static void codec_errors_carry_their_file(void **state)
{
    (void)state;
    static const unsigned char junk[] = "PAR1 this is not a parquet file PAR1";
    nx_error e = {0};
    nxpq_reader *r = nxpq_reader_open_memory(junk, sizeof junk - 1, "junk.parquet", &e);
    assert_null(r);
    assert_non_null(strstr(e.msg, "junk.parquet"));
    assert_string_equal(e.file, "junk.parquet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_has_no_location),
        cmocka_unit_test(at_names_each_part),
        cmocka_unit_test(prefix_keeps_location_and_cuts),
        cmocka_unit_test(null_error_is_accepted),
        cmocka_unit_test(capture_errors_carry_their_file_and_offset),
        cmocka_unit_test(codec_errors_carry_their_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
