/*
 * test_parquet_delta_limit.c — which pages the writer keeps out of
 * DELTA_BINARY_PACKED (parquet.h): a page of only nulls is PLAIN, and with
 * delta_max_bit_width a page whose miniblocks would be wider is PLAIN, while a
 * narrower page of the same column stays DELTA. Values come back through the
 * reader; the chunk's encodings are read from the footer; the encoder's answer
 * (the widest miniblock, early when over a limit) is checked against deltas of
 * known width.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parquet/encode.h"
#include "parquet/format.h"
#include "parquet/parquet.h"
#include "parquet/reader_internal.h"

#define PAGE 128   /* rows per page */

enum { C_MIXED, C_NULLS, N_COLS };

/* Row i of column C_MIXED: page 0 steps by 1 (0-bit miniblocks); page 1 steps
 * by 0 and 2^29 - 1 in turn (29-bit miniblocks); page 2 by 0 and 2^28 - 1
 * (28-bit miniblocks). */
static int64_t mixed(int64_t i)
{
    if (i < PAGE)
        return i;
    if (i < 2 * PAGE)
        return (i - PAGE + 1) / 2 * ((INT64_C(1) << 29) - 1);
    return (i - 2 * PAGE + 1) / 2 * ((INT64_C(1) << 28) - 1);
}

/* The set of PQ_ENC_* of column `col` in row group 0, as a bit set. */
static unsigned chunk_encodings(const nxpq_reader *r, size_t col)
{
    const pq_column_meta *m = &r->meta.row_groups[0].columns[col].meta;
    unsigned set = 0;
    for (uint32_t i = 0; i < m->n_encodings; i++)
        set |= 1u << m->encodings[i];
    return set;
}

/* Writes the file with the given limit; returns the chunk encodings of both columns
 * after checking every value read back. */
static void write_and_check(int max_width, unsigned *mixed_enc, unsigned *nulls_enc)
{
    char path[] = "/tmp/nxpq_delta_limitXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const nxpq_column_spec spec[N_COLS] = {{"mixed", NXPQ_INT64, false, NXPQ_ENCODE_DELTA},
                                           {"nulls", NXPQ_INT64, true, NXPQ_ENCODE_DELTA}};
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.page_rows = PAGE;
    o.delta_max_bit_width = max_width;
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, spec, N_COLS, &o, &err);
    assert_non_null(w);
    for (int64_t i = 0; i < 3 * PAGE; i++) {
        assert_int_equal(nxpq_put_int64(w, C_MIXED, mixed(i)), 0);
        assert_int_equal(nxpq_put_null(w, C_NULLS), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    if (nxpq_writer_close(w, &err) != 0)
        fail_msg("%s", err.msg);

    nxpq_reader *r = nxpq_reader_open(path, &err);
    assert_non_null(r);
    const size_t cols[] = {C_MIXED, C_NULLS};
    nxpq_scan_options so = {.columns = cols, .n_columns = N_COLS, .batch_rows = 1000};
    nxpq_scan *s = nxpq_scan_open(r, &so, &err);
    assert_non_null(s);
    const nxpq_batch *b;
    int64_t rows = 0;
    while (nxpq_scan_next(s, &b, &err) == 1)
        for (size_t i = 0; i < b->n_rows; i++, rows++) {
            assert_int_equal(b->columns[0].values.i64[i], mixed(b->first_row + (int64_t)i));
            assert_false(b->columns[1].valid && b->columns[1].valid[i]);
        }
    assert_int_equal(rows, 3 * PAGE);
    nxpq_scan_close(s);
    *mixed_enc = chunk_encodings(r, C_MIXED);
    *nulls_enc = chunk_encodings(r, C_NULLS);
    nxpq_reader_close(r);
    unlink(path);
}

static void test_pages_kept_out_of_delta(void **state)
{
    (void)state;
    const unsigned delta = 1u << PQ_ENC_DELTA_BINARY_PACKED, plain = 1u << PQ_ENC_PLAIN, rle = 1u << PQ_ENC_RLE;
    unsigned m, n;
    write_and_check(64, &m, &n);          /* no limit: every page with values is DELTA */
    assert_int_equal(m, delta);
    assert_int_equal(n, plain | rle);     /* only nulls: PLAIN pages, RLE levels */
    write_and_check(28, &m, &n);          /* page 1 (29 bits) PLAIN, pages 0 and 2 DELTA */
    assert_int_equal(m, delta | plain);
    assert_int_equal(n, plain | rle);
    write_and_check(29, &m, &n);
    assert_int_equal(m, delta);
}

static void test_widest_miniblock(void **state)
{
    (void)state;
    int64_t v[300];
    for (int width = 0; width <= 64; width++) {
        /* deltas lo and hi alternate, hi - lo = 2^width - 1: the widest miniblock
         * needs exactly `width` bits */
        uint64_t lo = 0, hi = (UINT64_C(1) << (width % 64)) - 1;
        if (width == 64) {   /* deltas INT64_MIN and INT64_MAX: the full range */
            lo = UINT64_C(1) << 63;
            hi = lo - 1;
        }
        uint64_t x = 0;
        for (size_t i = 0; i < 300; i++)
            v[i] = (int64_t)(x += i % 2 ? hi : lo);
        nx_strbuf b = NX_STRBUF_INIT;
        assert_int_equal(pq_encode_delta_binary_packed(&b, v, 300, false, 64), width);
        size_t whole = b.len;
        nx_strbuf_free(&b);
        /* over a lower limit it stops early: the same answer, less written */
        if (width > 1) {
            assert_int_equal(pq_encode_delta_binary_packed(&b, v, 300, false, width - 1), width);
            assert_true(b.len < whole);
            nx_strbuf_free(&b);
        }
    }
    nx_strbuf b = NX_STRBUF_INIT;
    assert_int_equal(pq_encode_delta_binary_packed(&b, v, 0, false, 64), 0);   /* no values: no miniblock */
    nx_strbuf_free(&b);
}

static void test_option_checked(void **state)
{
    (void)state;
    const nxpq_column_spec spec = {"x", NXPQ_INT64, false, NXPQ_ENCODE_DELTA};
    static const int bad[] = {0, -1, 65};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        nxpq_writer_options o;
        nxpq_writer_options_init(&o);
        o.delta_max_bit_width = bad[i];
        nx_error err;
        nxpq_writer *w = nxpq_writer_open("/tmp/nxpq_delta_limit_never", &spec, 1, &o, &err);
        assert_null(w);
        assert_non_null(strstr(err.msg, "delta_max_bit_width"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_kept_out_of_delta),
        cmocka_unit_test(test_widest_miniblock),
        cmocka_unit_test(test_option_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
