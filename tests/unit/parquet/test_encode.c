/*
 * test_parquet_encode.c — the writer's encoders and its error contract.
 *
 * Encoders are checked by round trip through the reader's decoders (decode.h,
 * written separately from the specification) over many shapes of input:
 * every bit width, runs and noise, lengths around group and block boundaries,
 * extreme integers. Then the writer API's promises: type checks, required
 * columns, row completeness, and that a failed file does not stay on disk.
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

#include "parquet/decode.h"
#include "parquet/encode.h"
#include "parquet/parquet.h"
#include "parquet/thrift.h"
#include "parquet/writer_internal.h"
#include "test_rand.h"


/* Values of `width` bits in a mix of long runs, short runs and noise. */
static void fill_pattern(uint32_t *v, size_t n, int width, int shape)
{
    uint32_t mask = width == 32 ? UINT32_MAX : (uint32_t)((1ull << width) - 1);
    for (size_t i = 0; i < n; i++) {
        switch (shape) {
        case 0: v[i] = (uint32_t)next_rand() & mask; break;                     /* noise */
        case 1: v[i] = (uint32_t)(i / 37) & mask; break;                         /* long runs */
        case 2: v[i] = (next_rand() % 5 == 0 ? (uint32_t)next_rand() : 3u) & mask; break; /* mostly one value */
        default: v[i] = (uint32_t)(i % 9 < 3 ? i : 7) & mask;                    /* short runs */
        }
    }
}

static void test_rle_hybrid_round_trip(void **state)
{
    (void)state;
    static const size_t lengths[] = {0, 1, 7, 8, 9, 63, 64, 65, 503, 504, 505, 1000, 4099};
    uint32_t *in = malloc(5000 * sizeof *in), *out = malloc(5000 * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    for (int width = 0; width <= 32; width++)
        for (int shape = 0; shape < 4; shape++)
            for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                size_t n = lengths[li];
                fill_pattern(in, n, width, shape);
                nx_strbuf b = NX_STRBUF_INIT;
                pq_encode_rle_hybrid(&b, in, n, width);
                assert_false(b.failed);
                nx_error e;
                memset(out, 0xAB, n * sizeof *out);
                if (pq_rle_decode((const uint8_t *)b.data, b.len, (unsigned)width, out, n, &e) != 0)
                    fail_msg("width %d shape %d n %zu: %s", width, shape, n, e.msg);
                assert_memory_equal(in, out, n * sizeof *in);
                nx_strbuf_free(&b);
            }
    free(in);
    free(out);
}

static void test_rle_levels_round_trip(void **state)
{
    (void)state;
    uint8_t in[3000], out[3000];
    for (unsigned max = 1; max <= 3; max++)
        for (size_t n = 0; n < sizeof in; n += 97) {
            for (size_t i = 0; i < n; i++)
                in[i] = (uint8_t)(i % 50 < 30 ? max : next_rand() % (max + 1));
            nx_strbuf b = NX_STRBUF_INIT;
            pq_encode_rle_hybrid_u8(&b, in, n, pq_bit_width(max));
            nx_error e;
            assert_int_equal(pq_rle_decode_levels((const uint8_t *)b.data, b.len, max, out, n, &e), 0);
            assert_memory_equal(in, out, n);
            nx_strbuf_free(&b);
        }
}

static void check_delta(const int64_t *v, size_t n)
{
    nx_strbuf b = NX_STRBUF_INIT;
    pq_encode_delta_binary_packed(&b, v, n, false, 64);
    assert_false(b.failed);
    int64_t *out = malloc((n ? n : 1) * sizeof *out);
    assert_non_null(out);
    size_t used = 0;
    nx_error e;
    if (pq_delta_binary_packed((const uint8_t *)b.data, b.len, false, out, n, &used, &e) != 0)
        fail_msg("n %zu: %s", n, e.msg);
    assert_int_equal(used, b.len);
    if (n)
        assert_memory_equal(v, out, n * sizeof *v);
    free(out);
    nx_strbuf_free(&b);
}

/* INT32 deltas wrap at 32 bits: no miniblock may be wider than 32 bits. */
static void check_delta32(const int32_t *v, size_t n)
{
    int64_t wide[300];
    for (size_t i = 0; i < n; i++)
        wide[i] = v[i];
    nx_strbuf b = NX_STRBUF_INIT;
    pq_encode_delta_binary_packed(&b, wide, n, true, 64);
    int32_t out[300];
    size_t used;
    nx_error e;
    if (pq_delta_binary_packed((const uint8_t *)b.data, b.len, true, out, n, &used, &e) != 0)
        fail_msg("n %zu: %s", n, e.msg);
    assert_memory_equal(v, out, n * sizeof *v);
    /* Walk the blocks (header: 4 varints; per block: min delta varint, 4 width
     * bytes, then the miniblocks in use) and check every width. */
    const uint8_t *q = (const uint8_t *)b.data;
    size_t at = 0;
    for (int k = 0; k < 4; k++)
        while (q[at++] & 0x80)
            ;
    for (size_t left = n ? n - 1 : 0; left > 0;) {
        while (q[at++] & 0x80)
            ;
        const uint8_t *widths = q + at;
        at += 4;
        size_t in_block = left < 128 ? left : 128;
        for (size_t m = 0; m * 32 < in_block; m++) {
            assert_true(widths[m] <= 32);
            at += (size_t)widths[m] * 4; /* 32 values of width bits */
        }
        left -= in_block;
    }
    assert_int_equal(at, b.len);
    nx_strbuf_free(&b);
}

static void test_delta_int32_wraps(void **state)
{
    (void)state;
    int32_t v[300];
    for (size_t i = 0; i < 300; i++)
        v[i] = i % 2 ? INT32_MIN : INT32_MAX;
    check_delta32(v, 300);
    for (size_t i = 0; i < 300; i++)
        v[i] = (int32_t)next_rand();
    check_delta32(v, 300);
    v[0] = INT32_MIN;
    v[1] = INT32_MAX;
    check_delta32(v, 2);
}

static void test_delta_round_trip(void **state)
{
    (void)state;
    static const size_t lengths[] = {0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 1000, 4097};
    int64_t *v = malloc(4097 * sizeof *v);
    assert_non_null(v);
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
        size_t n = lengths[li];
        int64_t ts = 1766072156592459482LL;
        for (size_t i = 0; i < n; i++)
            v[i] = ts += (int64_t)(next_rand() % 1000);            /* sorted timestamps */
        check_delta(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (int64_t)next_rand();                           /* full-width noise */
        check_delta(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = i % 2 ? INT64_MIN : INT64_MAX;                  /* deltas that wrap */
        check_delta(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = 42;                                             /* zero-width miniblocks */
        check_delta(v, n);
    }
    free(v);
}

static void test_plain_bools_round_trip(void **state)
{
    (void)state;
    uint8_t in[1000], out[1000];
    for (size_t n = 0; n <= sizeof in; n += 37) {
        for (size_t i = 0; i < n; i++)
            in[i] = (uint8_t)(next_rand() & 1);
        nx_strbuf b = NX_STRBUF_INIT;
        pq_encode_plain_bools(&b, in, n);
        assert_int_equal(b.len, (n + 7) / 8);
        size_t used;
        nx_error e;
        assert_int_equal(pq_plain_bool((const uint8_t *)b.data, b.len, out, n, &used, &e), 0);
        assert_memory_equal(in, out, n);
        nx_strbuf_free(&b);
    }
}

static void test_thrift_round_trip(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nxth_writer w;
    nxth_writer_init(&w, &b);
    nxth_struct_begin(&w);
    nxth_field_i32(&w, 1, -7);
    nxth_field_i64(&w, 2, INT64_MIN);
    nxth_field_string(&w, 20, "hello");   /* a long jump in field ids */
    nxth_field_bool(&w, 21, true);
    nxth_field_list_begin(&w, 22, NXTH_I64, 20);
    for (int i = 0; i < 20; i++)
        nxth_list_i64(&w, i * 1000003LL);
    nxth_struct_end(&w);

    nxth_reader r;
    nxth_reader_init(&r, b.data, b.len, 0);
    nxth_read_struct_begin(&r);
    int16_t id;
    uint8_t t;
    assert_true(nxth_read_field(&r, &id, &t));
    assert_int_equal(id, 1);
    assert_int_equal(nxth_read_i32(&r, t), -7);
    assert_true(nxth_read_field(&r, &id, &t));
    assert_int_equal(nxth_read_i64(&r, t), INT64_MIN);
    assert_true(nxth_read_field(&r, &id, &t));
    assert_int_equal(id, 20);
    uint32_t len;
    const uint8_t *s = nxth_read_binary(&r, t, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "hello", 5);
    assert_true(nxth_read_field(&r, &id, &t));
    assert_true(nxth_read_bool(&r, t, false));
    assert_true(nxth_read_field(&r, &id, &t));
    uint8_t et;
    assert_int_equal(nxth_read_list_begin(&r, t, &et), 20);
    for (int i = 0; i < 20; i++)
        assert_int_equal(nxth_read_i64(&r, et), i * 1000003LL);
    assert_false(nxth_read_field(&r, &id, &t));
    assert_false(r.failed);
    assert_int_equal(nxth_reader_pos(&r), b.len);

    /* Truncation anywhere is an error, never a read past the end. */
    for (size_t cut = 0; cut < b.len; cut++) {
        nxth_reader_init(&r, b.data, cut, 100);
        nxth_skip(&r, NXTH_STRUCT);
        assert_true(r.failed);
        assert_non_null(strstr(r.error, "offset"));
    }
    nx_strbuf_free(&b);
}

static void test_dictionary_lookup(void **state)
{
    (void)state;
    dictionary d;
    memset(&d, 0, sizeof d);
    assert_int_equal(dict_reserve(&d, 1), 0);
    /* Many entries force several table growths; each value keeps its index. */
    for (int64_t round = 0; round < 2; round++)
        for (int64_t v = 0; v < 20000; v++) {
            int64_t x = v * 1024;   /* patterned keys must still spread over the slots */
            int64_t e = dict_lookup(&d, pq_mix64((uint64_t)x), &x, 8);
            assert_int_equal(e, v);
        }
    assert_int_equal(d.n_entries, 20000);
    assert_int_equal(d.plain.len, 20000 * 8);
    dict_clear(&d);
    int64_t x = 5;
    assert_int_equal(dict_lookup(&d, pq_mix64(5), &x, 8), 0);
    dict_free(&d);
}

static char tmp_path[64];

static nxpq_writer *open_small(nxpq_column_spec *cols, size_t n)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/nxprof-test-%d.parquet", (int)getpid());
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(tmp_path, cols, n, NULL, &err);
    assert_non_null(w);
    return w;
}

static void test_writer_errors(void **state)
{
    (void)state;
    nxpq_column_spec cols[] = {
        {"id", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
        {"name", NXPQ_STRING, true, NXPQ_ENCODE_AUTO},
    };
    nx_error err;

    /* Wrong type for the column. */
    nxpq_writer *w = open_small(cols, 2);
    assert_int_equal(nxpq_put_string(w, 0, "x", 1), -1);
    assert_int_equal(nxpq_put_int64(w, 0, 1), -1); /* poisoned after a failure */
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "column 'id' is INT64, not STRING"));
    assert_int_equal(access(tmp_path, F_OK), -1); /* the partial file is gone */

    /* Null in a required column. */
    w = open_small(cols, 2);
    assert_int_equal(nxpq_put_null(w, 0), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "required"));

    /* A row missing a column. */
    w = open_small(cols, 2);
    assert_int_equal(nxpq_put_int64(w, 0, 1), 0);
    assert_int_equal(nxpq_end_row(w), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "column 'name' got 0 value(s), expected 1"));

    /* Unfinished row at close. */
    w = open_small(cols, 2);
    assert_int_equal(nxpq_put_int64(w, 0, 1), 0);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "unfinished row"));

    /* Bad specs are refused at open. */
    nxpq_column_spec dup[] = {{"a", NXPQ_INT64, false, NXPQ_ENCODE_AUTO}, {"a", NXPQ_INT64, false, NXPQ_ENCODE_AUTO}};
    assert_null(nxpq_writer_open(tmp_path, dup, 2, NULL, &err));
    assert_non_null(strstr(err.msg, "used twice"));
    nxpq_column_spec delta_str[] = {{"s", NXPQ_STRING, false, NXPQ_ENCODE_DELTA}};
    assert_null(nxpq_writer_open(tmp_path, delta_str, 1, NULL, &err));
    assert_non_null(strstr(err.msg, "DELTA encoding needs an integer column"));
    assert_null(nxpq_writer_open("/nonexistent-dir/x.parquet", cols, 2, NULL, &err));
    assert_non_null(strstr(err.msg, "cannot create"));

    /* A good file closes cleanly and has rows. */
    w = open_small(cols, 2);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(nxpq_put_int64(w, 0, i), 0);
        assert_int_equal(i % 3 ? nxpq_put_string(w, 1, "abc", 3) : nxpq_put_null(w, 1), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_rows(w), 10);
    assert_int_equal(nxpq_writer_close(w, &err), 0);
    assert_int_equal(access(tmp_path, F_OK), 0);
    unlink(tmp_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rle_hybrid_round_trip),
        cmocka_unit_test(test_rle_levels_round_trip),
        cmocka_unit_test(test_delta_round_trip),
        cmocka_unit_test(test_delta_int32_wraps),
        cmocka_unit_test(test_plain_bools_round_trip),
        cmocka_unit_test(test_thrift_round_trip),
        cmocka_unit_test(test_dictionary_lookup),
        cmocka_unit_test(test_writer_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
