/* test_pb_write.c — the protobuf wire-format writer (util/pb_write.h):
 *   - the byte sequences of the protobuf encoding guide, written out by hand:
 *     field 1 = 150 is 08 96 01; field 2 = "testing" is 12 07 74 65 73 74 69 6e 67;
 *     a negative int64 takes ten bytes; a fixed64 is little-endian; a double
 *     is its IEEE bits;
 *   - nested messages: the padded four-byte length (80 80 80 00 for empty,
 *     the value spread over 7-bit groups), read back by the strict reader
 *     (util/pb_wire.h) at two levels of nesting, and a length past 2^28 - 1
 *     marks the buffer failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/pb_wire.h"
#include "util/pb_write.h"

static void test_guide_bytes(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_pbw_varint(&b, 1, 150);
    static const uint8_t a[] = {0x08, 0x96, 0x01};
    assert_int_equal(b.len, sizeof a);
    assert_memory_equal(b.data, a, sizeof a);
    b.len = 0;
    nx_pbw_bytes(&b, 2, "testing", 7);
    static const uint8_t s[] = {0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'};
    assert_int_equal(b.len, sizeof s);
    assert_memory_equal(b.data, s, sizeof s);
    b.len = 0;
    nx_pbw_varint(&b, 4, (uint64_t)(int64_t)-1);
    static const uint8_t n[] = {0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    assert_int_equal(b.len, sizeof n);
    assert_memory_equal(b.data, n, sizeof n);
    b.len = 0;
    nx_pbw_fixed64(&b, 47, 0x0102030405060708ull);
    static const uint8_t f[] = {0xf9, 0x02, 8, 7, 6, 5, 4, 3, 2, 1};
    assert_int_equal(b.len, sizeof f);
    assert_memory_equal(b.data, f, sizeof f);
    b.len = 0;
    nx_pbw_double(&b, 5, 1.0);
    static const uint8_t d[] = {0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    assert_int_equal(b.len, sizeof d);
    assert_memory_equal(b.data, d, sizeof d);
    assert_false(nx_strbuf_failed(&b));
    nx_strbuf_free(&b);
}

static void test_nested(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    size_t empty = nx_pbw_begin(&b, 3);
    nx_pbw_end(&b, empty);
    static const uint8_t e[] = {0x1a, 0x80, 0x80, 0x80, 0x00};
    assert_int_equal(b.len, sizeof e);
    assert_memory_equal(b.data, e, sizeof e);
    b.len = 0;
    size_t outer = nx_pbw_begin(&b, 1);
    size_t inner = nx_pbw_begin(&b, 11);
    char big[200];
    memset(big, 'x', sizeof big);
    nx_pbw_bytes(&b, 23, big, sizeof big);   /* 204 bytes: the inner length needs two groups */
    nx_pbw_end(&b, inner);
    nx_pbw_varint(&b, 8, 42);
    nx_pbw_end(&b, outer);
    assert_false(nx_strbuf_failed(&b));
    const uint8_t *p = (const uint8_t *)b.data;
    assert_int_equal(p[1], 0x80 | ((b.len - 5) & 0x7f));
    nx_pb_cursor c = nx_pb_cursor_init(b.data, b.len);
    nx_pb_field fl;
    const char *why;
    size_t at;
    assert_int_equal(nx_pb_next(&c, &fl, &why, &at), 1);
    assert_int_equal(fl.number, 1);
    assert_int_equal(fl.len, b.len - 5);
    nx_pb_cursor m = nx_pb_sub(&c, &fl);
    assert_int_equal(nx_pb_next(&m, &fl, &why, &at), 1);
    assert_int_equal(fl.number, 11);
    assert_int_equal(fl.len, 204);
    nx_pb_cursor t = nx_pb_sub(&m, &fl);
    assert_int_equal(nx_pb_next(&t, &fl, &why, &at), 1);
    assert_int_equal(fl.number, 23);
    assert_int_equal(fl.len, 200);
    assert_int_equal(nx_pb_next(&t, &fl, &why, &at), 0);
    assert_int_equal(nx_pb_next(&m, &fl, &why, &at), 1);
    assert_int_equal(fl.number, 8);
    assert_int_equal(fl.u, 42);
    assert_int_equal(nx_pb_next(&m, &fl, &why, &at), 0);
    assert_int_equal(nx_pb_next(&c, &fl, &why, &at), 0);
    nx_strbuf_free(&b);
}

static void test_too_long(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    size_t h = nx_pbw_begin(&b, 1);
    char *blob = calloc(1, 1u << 28);
    assert_non_null(blob);
    nx_strbuf_append(&b, blob, 1u << 28);
    free(blob);
    nx_pbw_end(&b, h);
    assert_true(nx_strbuf_failed(&b));
    nx_strbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_guide_bytes), cmocka_unit_test(test_nested),
                                       cmocka_unit_test(test_too_long)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
