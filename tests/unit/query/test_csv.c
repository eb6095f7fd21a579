/* test_csv.c — src/query/engine/csv.h value rules (integers, shortest round-trip floats,
 * RFC 4180 quoting, empty vs null, JSON lists, the formula-injection guard) and
 * src/query/engine/window.h sampling rules (bucket arithmetic, longest / earliest start /
 * earliest row), with expected texts written out by hand; and its fast paths against
 * the plain rules: nx_csv_row_cells (one row of many columns) writes byte for byte what
 * nx_csv_cell writes column by column (every type, nulls, hostile strings, lists, absent
 * columns); a memory-mode writer appended to a file writer (the two-thread export) gives
 * the bytes of a single writer, also past the 256 KiB buffer; the two-digits-at-a-time
 * integer formatter equals "%lld" at every power-of-ten boundary and the extremes. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <inttypes.h>

#include <cmocka.h>

#include "query/engine/csv.h"
#include "profile/profile_table.h"
#include "query/engine/window.h"

#include "csv_memory.h"
#include "test_rand.h"

/* Finishes and checks the whole output. */
static void mem_expect(mem *m, const char *want)
{
    char *got = mem_close(m);
    assert_string_equal(got, want);
    free(got);
}

static void test_numbers(void **state)
{
    (void)state;
    mem m;
    mem_open(&m);
    nx_csv_i64(&m.c, 0);
    nx_csv_i64(&m.c, -42);
    nx_csv_i64(&m.c, INT64_MIN);
    nx_csv_i64(&m.c, INT64_MAX);
    nx_csv_end_row(&m.c);
    nx_csv_f32(&m.c, 0.1f);
    nx_csv_f32(&m.c, 1.0f / 3.0f);
    nx_csv_f32(&m.c, 7211267584.0f);
    nx_csv_f32(&m.c, -2.5f);
    nx_csv_f32(&m.c, 16777216.0f);
    nx_csv_end_row(&m.c);
    nx_csv_f64(&m.c, 0.1);
    nx_csv_f64(&m.c, 1.0 / 3.0);
    nx_csv_f64(&m.c, 1e300);
    nx_csv_f64(&m.c, (double)NAN);
    nx_csv_f64(&m.c, -(double)INFINITY);
    nx_csv_bool(&m.c, true);
    nx_csv_bool(&m.c, false);
    nx_csv_null(&m.c);
    nx_csv_end_row(&m.c);
    mem_expect(&m, "0,-42,-9223372036854775808,9223372036854775807\n"
                   "0.1,0.33333334,7.2112676e+09,-2.5,16777216\n"
                   "0.1,0.3333333333333333,1e+300,nan,-inf,true,false,\n");
}

static void text(nx_csv *c, const char *s) { nx_csv_text(c, s, strlen(s)); }

static void test_quoting_and_guard(void **state)
{
    (void)state;
    mem m;
    mem_open(&m);
    text(&m.c, "a,b");
    text(&m.c, "say \"hi\"");
    text(&m.c, "l1\nl2");
    text(&m.c, "cr\rx");
    text(&m.c, "");
    nx_csv_null(&m.c);
    text(&m.c, "plain");
    nx_csv_end_row(&m.c);
    text(&m.c, "=1+2");
    text(&m.c, "+cmd");
    text(&m.c, "-2+3");
    text(&m.c, "@SUM(A1)");
    text(&m.c, "\tx");
    text(&m.c, "\rx");
    text(&m.c, "=a,b");
    nx_csv_end_row(&m.c);
    text(&m.c, "-42");
    text(&m.c, "+1.5e3");
    text(&m.c, "-.5");     /* not a plain number by the rule: guarded */
    text(&m.c, "-1e");     /* neither */
    text(&m.c, "'x");
    text(&m.c, "x=1");
    nx_csv_plain(&m.c, "=header", 7); /* plain fields are never guarded */
    nx_csv_end_row(&m.c);
    m.c.guard = false;
    text(&m.c, "=1+2");
    nx_csv_end_row(&m.c);
    mem_expect(&m, "\"a,b\",\"say \"\"hi\"\"\",\"l1\nl2\",\"cr\rx\",\"\",,plain\n"
                   "'=1+2,'+cmd,'-2+3,'@SUM(A1),'\tx,\"'\rx\",\"'=a,b\"\n"
                   "-42,+1.5e3,'-.5,'-1e,'x,x=1,=header\n"
                   "=1+2\n");
}

static void test_cells_and_lists(void **state)
{
    (void)state;
    /* Two rows: a LIST<INT64> [1,-2] / null, a LIST<STRING> ["a\"b",null] / [],
     * an INT32 7 / null, a STRING "=x" / "y". */
    static const int64_t li[] = {1, -2};
    static const uint64_t li_off[] = {0, 2, 2};
    static const uint8_t row_valid[] = {1, 0};
    static const char ls_data[] = "a\"b";
    static const uint64_t ls_off[] = {0, 3, 3};
    static const uint8_t ls_elem_valid[] = {1, 0};
    static const uint64_t ls_list[] = {0, 2, 2};
    static const int32_t i32[] = {7, 0};
    static const char s_data[] = "=xy";
    static const uint64_t s_off[] = {0, 2, 3};
    nxpq_column_data cols[4] = {
        {.type = NXPQ_LIST_INT64, .valid = row_valid, .values.i64 = li, .list_offsets = li_off},
        {.type = NXPQ_LIST_STRING, .data = ls_data, .offsets = ls_off, .list_offsets = ls_list,
         .element_valid = ls_elem_valid},
        {.type = NXPQ_INT32, .valid = row_valid, .values.i32 = i32},
        {.type = NXPQ_STRING, .data = s_data, .offsets = s_off},
    };
    mem m;
    mem_open(&m);
    for (size_t r = 0; r < 2; r++) {
        for (size_t c = 0; c < 4; c++)
            nx_csv_cell(&m.c, &cols[c], r);
        nx_csv_end_row(&m.c);
    }
    mem_expect(&m, "\"[1,-2]\",\"[\"\"a\\\"\"b\"\",null]\",7,'=x\n"
                   ",[],,y\n");
}

static void test_buckets(void **state)
{
    (void)state;
    nx_error err;
    /* Window [100, 199]: L = 100, width 10 -> buckets of 10 ns. */
    nx_sampler *s = nx_sampler_new(100, 199, 10, &err);
    assert_non_null(s);
    assert_int_equal(nx_sampler_bucket(s, 50), 0);   /* clamped */
    assert_int_equal(nx_sampler_bucket(s, 100), 0);
    assert_int_equal(nx_sampler_bucket(s, 109), 0);
    assert_int_equal(nx_sampler_bucket(s, 110), 1);
    assert_int_equal(nx_sampler_bucket(s, 199), 9);
    assert_int_equal(nx_sampler_bucket(s, 500), 9);  /* clamped */
    nx_sampler_free(s);
    /* Window wider than int64 arithmetic allows without care. */
    s = nx_sampler_new(INT64_MIN, INT64_MAX, 1920, &err);
    assert_non_null(s);
    assert_int_equal(nx_sampler_bucket(s, INT64_MIN), 0);
    assert_int_equal(nx_sampler_bucket(s, INT64_MAX), 1919);
    assert_int_equal(nx_sampler_bucket(s, 0), 960);
    nx_sampler_free(s);
    /* Width larger than the window: 3 ns over 7 buckets -> 0, 2, 4. */
    s = nx_sampler_new(0, 2, 7, &err);
    assert_int_equal(nx_sampler_bucket(s, 0), 0);
    assert_int_equal(nx_sampler_bucket(s, 1), 2);
    assert_int_equal(nx_sampler_bucket(s, 2), 4);
    nx_sampler_free(s);
}

static void test_winners(void **state)
{
    (void)state;
    nx_error err;
    nx_sampler *s = nx_sampler_new(0, 99, 2, &err); /* buckets [0,49], [50,99] */
    assert_non_null(s);
    /* track 0, bucket 0: longest wins (ordinal 2, duration 30). */
    assert_int_equal(nx_sampler_offer(s, 0, 10, 20, 1, 0, &err), 0);
    assert_int_equal(nx_sampler_offer(s, 0, 12, 42, 2, 0, &err), 0);
    assert_int_equal(nx_sampler_offer(s, 0, 5, 25, 3, 0, &err), 0);
    /* track 0, bucket 1: equal durations, earliest start wins (ordinal 5). */
    assert_int_equal(nx_sampler_offer(s, 0, 60, 70, 4, 0, &err), 0);
    assert_int_equal(nx_sampler_offer(s, 0, 55, 65, 5, 0, &err), 0);
    /* track 1, bucket 0: full tie, earliest row wins (ordinal 6), whatever the offer order. */
    assert_int_equal(nx_sampler_offer(s, 1, 0, 0, 7, 0, &err), 0);
    assert_int_equal(nx_sampler_offer(s, 1, 0, 0, 6, 0, &err), 0);
    /* track 1: an event before the window falls in bucket 0 and is longest. */
    assert_int_equal(nx_sampler_offer(s, 1, -50, 10, 8, 0, &err), 0);
    size_t n;
    const nx_sample *r = nx_sampler_result(s, &n, &err);
    assert_int_equal(n, 3);
    assert_int_equal(r[0].ordinal, 2);
    assert_int_equal(r[1].ordinal, 5);
    assert_int_equal(r[2].ordinal, 8);
    assert_int_equal(r[2].track, 1);
    assert_int_equal(r[1].bucket, 1);
    nx_sampler_free(s);
}

static void test_timelines(void **state)
{
    (void)state;
    assert_int_equal(nx_timeline_count(), NX_TIMELINE_TABLES);
    assert_int_equal(nx_timeline_count(), 9);
    const nx_timeline_info *i = nx_timeline_find("SemaphoreUpdate");
    assert_non_null(i);
    assert_string_equal(i->start_column, "timestamp");
    assert_null(i->end_column);
    assert_null(nx_timeline_find("Summary"));
    assert_int_equal(nx_timeline_find("DmaPacket")->track, NX_TRACK_DMA);
    const nx_timeline_info *sys = nx_timeline_find("SystemProfileEvents");
    assert_non_null(sys);
    assert_int_equal(sys->track, NX_TRACK_SYSTEM);
    assert_true(sys->nested);
    assert_false(nx_timeline_find("Instruction")->nested);
    assert_int_equal(nx_timeline_find("CoreBarriers")->track, NX_TRACK_ENGINE);
    assert_string_equal(nx_timeline_find("CoreBarriers")->end_column, "end_ts");
    assert_int_equal(nx_timeline_find("SbufAllocation")->track, NX_TRACK_PARTITION);
}

static void test_row_cells_equal_cells(void **state)
{
    (void)state;
    enum { ROWS = 4 };
    static const uint8_t valid[ROWS] = {1, 0, 1, 1};
    static const int64_t i64[ROWS] = {INT64_MIN, 0, -1, 1234567890123};
    static const int32_t i32[ROWS] = {INT32_MIN, 5, 0, 99};
    static const float f32[ROWS] = {0.1f, 0, 7211267584.0f, -2.5f};
    static const double f64[ROWS] = {1.0 / 3.0, 0, 1e300, -0.0};
    static const uint8_t bools[ROWS] = {1, 0, 0, 1};
    static const char sdata[] = "plaina,b\"q\"=1+2-42line\nend";
    static const uint64_t soff[ROWS + 1] = {0, 5, 8, 11, 14};
    static const char sdata2[] = "line\nend@x";
    static const uint64_t soff2[ROWS + 1] = {0, 8, 8, 10, 10};
    static const int64_t li[] = {1, -2, 3};
    static const uint64_t li_list[ROWS + 1] = {0, 2, 2, 3, 3};
    nxpq_column_data cols[] = {
        {.type = NXPQ_INT64, .valid = valid, .values.i64 = i64},
        {.type = NXPQ_INT32, .values.i32 = i32},
        {.type = NXPQ_FLOAT, .valid = valid, .values.f32 = f32},
        {.type = NXPQ_DOUBLE, .values.f64 = f64},
        {.type = NXPQ_BOOLEAN, .valid = valid, .values.b = bools},
        {.type = NXPQ_STRING, .data = sdata, .offsets = soff},
        {.type = NXPQ_STRING, .valid = valid, .data = sdata2, .offsets = soff2},
        {.type = NXPQ_LIST_INT64, .valid = valid, .values.i64 = li, .list_offsets = li_list},
        {.type = NXPQ_UNSUPPORTED},
    };
    enum { NC = sizeof cols / sizeof cols[0] };
    /* Field order with an absent column (NULL) in the middle and at the end. */
    const nxpq_column_data *ptrs[NC + 2];
    size_t k = 0;
    for (size_t c = 0; c < NC; c++) {
        ptrs[k++] = &cols[c];
        if (c == 3)
            ptrs[k++] = NULL;
    }
    ptrs[k++] = NULL;

    mem a, b;
    mem_open(&a);
    mem_open(&b);
    for (size_t r = 0; r < ROWS; r++) {
        nx_csv_text(&a.c, "=track", 6); /* a leading field, as export-csv writes */
        for (size_t c = 0; c < k; c++) {
            if (ptrs[c])
                nx_csv_cell(&a.c, ptrs[c], r);
            else
                nx_csv_null(&a.c);
        }
        nx_csv_end_row(&a.c);
        nx_csv_text(&b.c, "=track", 6);
        nx_csv_row_cells(&b.c, ptrs, k, r);
        nx_csv_end_row(&b.c);
    }
    /* A row with only row_cells fields (first field has no separator). */
    nx_csv_row_cells(&b.c, ptrs, k, 0);
    nx_csv_end_row(&b.c);
    for (size_t c = 0; c < k; c++) {
        if (ptrs[c])
            nx_csv_cell(&a.c, ptrs[c], 0);
        else
            nx_csv_null(&a.c);
    }
    nx_csv_end_row(&a.c);
    char *ta = mem_close(&a), *tb = mem_close(&b);
    assert_string_equal(tb, ta);
    /* And a hand-checked spot: row 1 of the INT64 column is null, row 0 is INT64_MIN. */
    assert_non_null(strstr(ta, "'=track,-9223372036854775808,-2147483648,0.1,0.3333333333333333,,true,plain,"));
    free(ta);
    free(tb);
}

static void test_memory_append(void **state)
{
    (void)state;
    mem a, b;
    mem_open(&a);
    mem_open(&b);
    nx_csv half;
    assert_int_equal(nx_csv_init_memory(&half), 0);
    for (int round = 0; round < 3; round++) {
        /* 20000 rows per round (about 600 KB): first half direct, second half via memory. */
        for (int r = 0; r < 20000; r++) {
            nx_csv *dst = r < 10000 ? &b.c : &half;
            char txt[32];
            int n = snprintf(txt, sizeof txt, "=r%d,\"%d", r, round);
            nx_csv_i64(&a.c, r * 7919LL - 5);
            nx_csv_text(&a.c, txt, (size_t)n);
            nx_csv_end_row(&a.c);
            nx_csv_i64(dst, r * 7919LL - 5);
            nx_csv_text(dst, txt, (size_t)n);
            nx_csv_end_row(dst);
        }
        assert_int_equal(nx_csv_append(&b.c, &half), 0);
        assert_int_equal(half.len, 0);
    }
    assert_int_equal(nx_csv_finish(&half), 0);
    char *ta = mem_close(&a), *tb = mem_close(&b);
    assert_true(strlen(ta) > 3 * 256 * 1024);
    assert_string_equal(tb, ta);
    free(ta);
    free(tb);
}

static void test_integers(void **state)
{
    (void)state;
    mem m;
    mem_open(&m);
    char want[8192];
    size_t w = 0;
    int64_t p = 1;
    for (int e = 0; e <= 18; e++, p = e <= 18 ? p * 10 : p) {   /* 10^18 is the last power in int64 */
        int64_t vals[] = {p - 1, p, p + 1, -(p - 1), -p, -(p + 1)};
        for (size_t i = 0; i < 6; i++) {
            nx_csv_i64(&m.c, vals[i]);
            w += (size_t)snprintf(want + w, sizeof want - w, "%s%" PRId64, i ? "," : "", vals[i]);
        }
        nx_csv_end_row(&m.c);
        want[w++] = '\n';
    }
    nx_csv_i64(&m.c, INT64_MAX);
    nx_csv_i64(&m.c, INT64_MIN);
    nx_csv_end_row(&m.c);
    w += (size_t)snprintf(want + w, sizeof want - w, "%" PRId64 ",%" PRId64 "\n", INT64_MAX, INT64_MIN);
    char *got = mem_close(&m);
    assert_string_equal(got, want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),      cmocka_unit_test(test_quoting_and_guard),
        cmocka_unit_test(test_cells_and_lists), cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_winners),      cmocka_unit_test(test_timelines),
        cmocka_unit_test(test_row_cells_equal_cells), cmocka_unit_test(test_memory_append),
        cmocka_unit_test(test_integers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
