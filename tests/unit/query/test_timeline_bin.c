/* test_timeline_bin.c — src/query/timeline_bin.h: a hand-made timeline answer
 * (a nested table with a string and an integer label and nulls, a failed table,
 * an empty one) encoded, and every byte read back at the offsets the layout
 * gives, with values written out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "query/timeline_bin.h"

static uint64_t le(const char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)(unsigned char)p[i] << (8 * i);
    return v;
}

static double f64_at(const nx_strbuf *b, size_t off)
{
    uint64_t u = le(b->data + off, 8);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void expect_f64s(const nx_strbuf *b, size_t off, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_true(f64_at(b, off + 8 * i) == want[i]);
}

static void test_layout(void **state)
{
    (void)state;
    static const char *const labels[] = {"name", "value"};
    int64_t start[] = {995, 1010, 1500}, end[] = {1095, 1030, 1500}, ord[] = {0, 1, 7};
    uint32_t depth[] = {0, 1, 0};
    /* by event: (string id, integer); 2^53 + 1 is the double 2^53, as JSON.parse reads it */
    int64_t label[] = {0, 5, 0, 0, 1, 9007199254740993};
    uint8_t set[] = {1, 1, 0, 0, 1, 1};
    nx_timeline_table tables[3] = {
        {.table = "SystemProfileEvents", .present = true, .nested = true, .n_labels = 2, .label_names = labels,
         .label_is_string = {true, false}, .n_events = 3, .start = start, .end = end, .ordinal = ord,
         .depth = depth, .label = label, .label_set = set},
        {.table = "DmaPacket", .error = "DmaPacket.parquet: truncated"},
        {.table = "CcOp"},
    };
    nx_timeline tl = {.start = 1000, .end = 2000, .width = 10, .n_tables = 3, .tables = tables};
    nx_strbuf b = NX_STRBUF_INIT;
    nx_timeline_bin(&b, &tl, "{\"h\":1}", 7);
    assert_false(nx_strbuf_failed(&b));
    assert_int_equal(b.len, 144);
    assert_memory_equal(b.data, "NXTB", 4);
    assert_int_equal(le(b.data + 4, 4), 7);
    assert_memory_equal(b.data + 8, "{\"h\":1}\0", 8);   /* header, then one zero to offset 16 */
    expect_f64s(&b, 16, (double[]){-5, 10, 500}, 3);
    expect_f64s(&b, 40, (double[]){100, 20, 0}, 3);
    expect_f64s(&b, 64, (double[]){0, 1, 7}, 3);
    assert_int_equal(le(b.data + 88, 4), 0);
    assert_int_equal(le(b.data + 92, 4), 1);
    assert_int_equal(le(b.data + 96, 4), 0);
    assert_int_equal(le(b.data + 100, 4), 0);          /* padding to 104 */
    assert_int_equal(le(b.data + 104, 4), 0);
    assert_int_equal(le(b.data + 108, 4), 0xffffffffu); /* null string: -1 */
    assert_int_equal(le(b.data + 112, 4), 1);
    assert_int_equal(le(b.data + 116, 4), 0);
    assert_true(f64_at(&b, 120) == 5);
    assert_true(isnan(f64_at(&b, 128)));                /* null integer */
    assert_true(f64_at(&b, 136) == 9007199254740992.0);
    nx_strbuf_free(&b);
}

/* An answer whose tables have no events is the header alone, padded. */
static void test_header_only(void **state)
{
    (void)state;
    nx_timeline_table t = {.table = "Instruction", .present = true};
    nx_timeline tl = {.start = 0, .end = 1, .width = 1, .n_tables = 1, .tables = &t};
    nx_strbuf b = NX_STRBUF_INIT;
    nx_timeline_bin(&b, &tl, "{}", 2);
    assert_false(nx_strbuf_failed(&b));
    assert_int_equal(b.len, 16);
    assert_int_equal(le(b.data + 4, 4), 2);
    assert_memory_equal(b.data + 8, "{}\0\0\0\0\0\0", 8);
    nx_strbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_header_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
