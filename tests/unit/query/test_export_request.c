/* test_export_request.c — the one export request (query/export_request.h):
 *   - times: whole ns and every unit, fractions that make whole ns, +T, and the
 *     refusals (fractional ns, unknown units, a bare '+', a sign, int64 overflow,
 *     too many digits), each against the value computed here by hand;
 *   - defaults (width 1920, max rows 1,000,000, the six default tables) and the
 *     limits (width 1..1048576, max rows >= 1) with messages naming the option as
 *     the front end spells it (CLI and URL names);
 *   - tables: known, unknown, repeated, empty items, too long;
 *   - check: missing ends, end before start (absolute, both relative), width
 *     with no sampling, the unsamplable whole int64 window; no sampling sets
 *     width 0;
 *   - resolve: +T against a profile's Metadata span written here, out of range,
 *     end before start once resolved, a profile without Metadata.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "parquet/parquet.h"
#include "query/export_request.h"

static const nx_export_names URL = {"start", "end", "width", "sampled=0", "max_rows"};

static void test_times(void **state)
{
    (void)state;
    static const struct { const char *text; int64_t ns; bool rel; } OK[] = {
        {"0", 0, false},           {"1500", 1500, false},      {"1500ns", 1500, false},
        {"1.5us", 1500, false},    {"2ms", 2000000, false},    {"0.25s", 250000000, false},
        {"+2ms", 2000000, true},   {"+0", 0, true},            {"9223372036854775807", INT64_MAX, false},
        {"9223372036.854775807s", INT64_MAX, false},           {"0.001us", 1, false},
    };
    for (size_t i = 0; i < sizeof OK / sizeof OK[0]; i++) {
        int64_t v = -1;
        bool rel = !OK[i].rel;
        assert_int_equal(nx_export_parse_time(OK[i].text, &v, &rel), 0);
        assert_true(v == OK[i].ns);
        assert_int_equal(rel, OK[i].rel);
    }
    static const char *const BAD[] = {"", "+", "-5", "1.5", "1.5ns", "10xs", "1.", ".5", "1e3",
                                      "9223372036854775808", "9223372037s", "1 ms", "00000000000000000000000000001"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        int64_t v;
        bool rel;
        assert_int_equal(nx_export_parse_time(BAD[i], &v, &rel), -1);
    }
}

static void test_defaults_and_limits(void **state)
{
    (void)state;
    nx_export_request r;
    char msg[NX_EXPORT_MSG];
    nx_export_request_init(&r, &nx_export_cli_names);
    assert_int_equal(r.width, 1920);
    assert_true(r.max_rows == 1000000);
    assert_int_equal(r.n_tables, 6);
    assert_false(r.named);
    assert_string_equal(r.tables[0], "Instruction");
    assert_string_equal(r.tables[5], "SystemProfileEvents");
    assert_int_equal(nx_export_request_set_width(&r, 1048576, msg), 0);
    assert_int_equal(r.width, 1048576);
    assert_int_equal(nx_export_request_set_width(&r, 1048577, msg), -1);
    assert_non_null(strstr(msg, "--width"));
    assert_int_equal(nx_export_request_set_width(&r, 0, msg), -1);
    assert_int_equal(nx_export_request_set_max_rows(&r, 0, msg), -1);
    assert_non_null(strstr(msg, "--max-rows"));
    assert_int_equal(nx_export_request_set_max_rows(&r, INT64_MAX, msg), 0);
    nx_export_request_init(&r, &URL);
    assert_int_equal(nx_export_request_set_max_rows(&r, -3, msg), -1);
    assert_non_null(strstr(msg, "max_rows"));
    assert_int_equal(nx_export_request_set_time(&r, true, "soon", msg), -1);
    assert_non_null(strstr(msg, "bad end 'soon'"));
}

static void test_tables(void **state)
{
    (void)state;
    nx_export_request r;
    char msg[NX_EXPORT_MSG];
    nx_export_request_init(&r, &nx_export_cli_names);
    assert_int_equal(nx_export_request_set_tables(&r, "CcOp,Instruction", msg), 0);
    assert_true(r.named);
    assert_int_equal(r.n_tables, 2);
    assert_string_equal(r.tables[0], "CcOp");
    assert_string_equal(r.tables[1], "Instruction");
    assert_int_equal(nx_export_request_set_tables(&r, "Instruction,Nope", msg), -1);
    assert_non_null(strstr(msg, "unknown table 'Nope'"));
    assert_int_equal(nx_export_request_set_tables(&r, "Summary", msg), -1);
    assert_int_equal(nx_export_request_set_tables(&r, "DmaPacket,DmaPacket", msg), -1);
    assert_non_null(strstr(msg, "twice"));
    assert_int_equal(nx_export_request_set_tables(&r, "Instruction,", msg), -1);
    assert_int_equal(nx_export_request_set_tables(&r, "", msg), -1);
    char longlist[600];
    memset(longlist, 'a', sizeof longlist - 1);
    longlist[sizeof longlist - 1] = '\0';
    assert_int_equal(nx_export_request_set_tables(&r, longlist, msg), -1);
}

static void test_check(void **state)
{
    (void)state;
    nx_export_request r;
    char msg[NX_EXPORT_MSG];
    nx_export_request_init(&r, &nx_export_cli_names);
    assert_int_equal(nx_export_request_check(&r, msg), -1);
    assert_non_null(strstr(msg, "--start is required"));
    assert_int_equal(nx_export_request_set_time(&r, false, "10", msg), 0);
    assert_int_equal(nx_export_request_check(&r, msg), -1);
    assert_non_null(strstr(msg, "--end is required"));
    assert_int_equal(nx_export_request_set_time(&r, true, "9", msg), 0);
    assert_int_equal(nx_export_request_check(&r, msg), -1);
    assert_non_null(strstr(msg, "--end is before --start"));
    assert_int_equal(nx_export_request_set_time(&r, true, "+1ms", msg), 0);
    assert_int_equal(nx_export_request_check(&r, msg), 0);   /* mixed kinds: known once resolved */
    assert_int_equal(nx_export_request_set_time(&r, false, "+2ms", msg), 0);
    assert_int_equal(nx_export_request_check(&r, msg), -1);
    assert_int_equal(nx_export_request_set_width(&r, 10, msg), 0);
    nx_export_request_set_no_sample(&r);
    assert_int_equal(nx_export_request_set_time(&r, false, "0", msg), 0);
    assert_int_equal(nx_export_request_set_time(&r, true, "5", msg), 0);
    assert_int_equal(nx_export_request_check(&r, msg), -1);
    assert_non_null(strstr(msg, "--width and --no-sample exclude each other"));
    nx_export_request_init(&r, &URL);
    nx_export_request_set_ns(&r, false, INT64_MIN);
    nx_export_request_set_ns(&r, true, INT64_MAX);
    assert_int_equal(nx_export_request_check(&r, msg), -1);
    assert_non_null(strstr(msg, "too wide"));
    nx_export_request_set_no_sample(&r);
    assert_int_equal(nx_export_request_check(&r, msg), 0);
    assert_int_equal(r.width, 0);
}

/* A profile directory whose Metadata spans [first, last]. */
static void write_metadata(const char *dir, int64_t first, int64_t last)
{
    char path[256];
    snprintf(path, sizeof path, "%s/Metadata.parquet", dir);
    nxpq_column_spec cols[] = {{.name = "first_hw_timestamp", .type = NXPQ_INT64},
                               {.name = "last_hw_timestamp", .type = NXPQ_INT64}};
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, 2, &o, &err);
    assert_non_null(w);
    assert_int_equal(nxpq_put_int64(w, 0, first), 0);
    assert_int_equal(nxpq_put_int64(w, 1, last), 0);
    assert_int_equal(nxpq_end_row(w), 0);
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

static void test_resolve(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-export-request-XXXXXX", empty[] = "/tmp/nxprof-test-export-request-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_non_null(mkdtemp(empty));
    const int64_t first = 1766074687851567794;
    write_metadata(dir, first, first + 5000000);
    nx_export_request r;
    char msg[NX_EXPORT_MSG];
    nx_export_request_init(&r, &nx_export_cli_names);
    assert_int_equal(nx_export_request_set_time(&r, false, "+1us", msg), 0);
    assert_int_equal(nx_export_request_set_time(&r, true, "+2ms", msg), 0);
    assert_int_equal(nx_export_request_check(&r, msg), 0);
    assert_int_equal(nx_export_request_resolve(&r, dir, msg), 0);
    assert_true(r.start == first + 1000 && r.end == first + 2000000);
    assert_int_equal(nx_export_request_resolve(&r, dir, msg), 0);   /* resolved once only */
    assert_true(r.start == first + 1000);
    assert_int_equal(nx_export_request_set_time(&r, false, "+9000000000s", msg), 0);
    assert_int_equal(nx_export_request_resolve(&r, dir, msg), -2);
    assert_non_null(strstr(msg, "out of range"));
    nx_export_request_init(&r, &nx_export_cli_names);
    assert_int_equal(nx_export_request_set_time(&r, false, "+1ms", msg), 0);
    nx_export_request_set_ns(&r, true, first);
    assert_int_equal(nx_export_request_resolve(&r, dir, msg), -2);
    assert_non_null(strstr(msg, "before"));
    assert_int_equal(nx_export_request_set_time(&r, true, "+1ms", msg), 0);
    assert_int_equal(nx_export_request_resolve(&r, empty, msg), -1);
    assert_non_null(strstr(msg, "cannot resolve +T"));
    char path[256];
    snprintf(path, sizeof path, "%s/Metadata.parquet", dir);
    unlink(path);
    rmdir(dir);
    rmdir(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_times),  cmocka_unit_test(test_defaults_and_limits), cmocka_unit_test(test_tables),
        cmocka_unit_test(test_check),  cmocka_unit_test(test_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
