/*
 * test_parquet_decode.c — unit tests of the Parquet decoders (src/parquet/decode.c):
 * the examples of Encodings.md byte for byte, round trips against small reference
 * encoders written here from the spec (every bit width, wrapping deltas), and
 * malformed inputs, which must fail with a message and never read out of bounds
 * (the ASan build checks the latter).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/decode.h"

/* ------------------------------------------------------ reference encoders */

typedef struct bytes {
    uint8_t d[1 << 16];
    size_t n;
} bytes;

static void put(bytes *b, uint8_t v)
{
    assert_true(b->n < sizeof b->d);
    b->d[b->n++] = v;
}

static void put_uleb(bytes *b, uint64_t v)
{
    while (v >= 0x80) {
        put(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put(b, (uint8_t)v);
}

static void put_zigzag(bytes *b, int64_t v)
{
    put_uleb(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* Packs n values of bw bits, least significant bit first (the hybrid's order). */
static void put_packed(bytes *b, const uint64_t *v, size_t n, unsigned bw)
{
    size_t start = b->n, bits = n * bw;
    for (size_t i = 0; i < (bits + 7) / 8; i++)
        put(b, 0);
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < bw; k++)
            if ((v[i] >> k) & 1)
                b->d[start + (i * bw + k) / 8] |= (uint8_t)(1u << ((i * bw + k) % 8));
}

/* DELTA_BINARY_PACKED with blocks of 128 values in 4 miniblocks, deltas in
 * wrapping unsigned arithmetic as the spec asks. */
static void put_delta(bytes *b, const int64_t *v, size_t n)
{
    put_uleb(b, 128);
    put_uleb(b, 4);
    put_uleb(b, n);
    put_zigzag(b, n ? v[0] : 0);
    for (size_t start = 1; start < n; start += 128) {
        size_t cnt = n - start < 128 ? n - start : 128;
        uint64_t d[128] = {0};
        int64_t min = INT64_MAX;
        for (size_t i = 0; i < cnt; i++) {
            d[i] = (uint64_t)v[start + i] - (uint64_t)v[start + i - 1];
            min = (int64_t)d[i] < min ? (int64_t)d[i] : min;
        }
        for (size_t i = 0; i < cnt; i++)
            d[i] -= (uint64_t)min;
        put_zigzag(b, min);
        unsigned widths[4] = {0};
        for (size_t i = 0; i < cnt; i++) {
            unsigned w = d[i] ? 64u - (unsigned)__builtin_clzll(d[i]) : 0;
            widths[i / 32] = w > widths[i / 32] ? w : widths[i / 32];
        }
        for (int m = 0; m < 4; m++)
            put(b, (uint8_t)widths[m]);
        for (size_t m = 0; m * 32 < cnt; m++)
            put_packed(b, d + m * 32, 32, widths[m]);
    }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* -------------------------------------------------------- RLE / bit-packed */

/* Encodings.md: 0..7 with bit width 3 bit-pack to 10001000 11000110 11111010. */
static void test_rle_spec_bit_packing(void **state)
{
    (void)state;
    const uint8_t in[] = {0x03 /* 1 group, bit-packed */, 0x88, 0xC6, 0xFA};
    uint32_t out[8];
    nx_error e;
    assert_int_equal(pq_rle_decode(in, sizeof in, 3, out, 8, &e), 0);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(out[i], i);
}

static void test_rle_runs_mixed(void **state)
{
    (void)state;
    /* 100 x 5 as an RLE run (header 200), then a bit-packed group 0..7. */
    const uint8_t in[] = {0xC8, 0x01, 0x05, 0x03, 0x88, 0xC6, 0xFA};
    uint32_t out[108];
    nx_error e;
    assert_int_equal(pq_rle_decode(in, sizeof in, 3, out, 108, &e), 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(out[i], 5);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(out[100 + i], i);
    /* Fewer values than the runs hold is fine. */
    assert_int_equal(pq_rle_decode(in, sizeof in, 3, out, 103, &e), 0);
    assert_int_equal(out[102], 2);
}

static void test_rle_every_bit_width(void **state)
{
    (void)state;
    for (unsigned bw = 0; bw <= 32; bw++) {
        uint64_t v[64];
        uint32_t out[64];
        for (int i = 0; i < 64; i++)
            v[i] = bw ? rnd() & (bw == 32 ? 0xFFFFFFFFu : ((1u << bw) - 1)) : 0;
        bytes b = {.n = 0};
        put_uleb(&b, (64 / 8) << 1 | 1);
        put_packed(&b, v, 64, bw);
        nx_error e;
        assert_int_equal(pq_rle_decode(b.d, b.n, bw, out, 64, &e), 0);
        for (int i = 0; i < 64; i++)
            assert_int_equal(out[i], v[i]);
    }
}

static void test_rle_bit_width_zero(void **state)
{
    (void)state;
    const uint8_t in[] = {0x0A}; /* RLE run of 5, no value bytes at width 0 */
    uint32_t out[5] = {9, 9, 9, 9, 9};
    nx_error e;
    assert_int_equal(pq_rle_decode(in, sizeof in, 0, out, 5, &e), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(out[i], 0);
}

static void test_rle_truncated_final_run(void **state)
{
    (void)state;
    /* One group of width 3 announced, only 2 of its 3 bytes present: the first
     * five values (15 bits) are readable, the sixth is not. */
    const uint8_t in[] = {0x03, 0x88, 0xC6};
    uint32_t out[8];
    nx_error e;
    assert_int_equal(pq_rle_decode(in, sizeof in, 3, out, 5, &e), 0);
    assert_int_equal(out[4], 4);
    assert_int_equal(pq_rle_decode(in, sizeof in, 3, out, 6, &e), -1);
    assert_non_null(strstr(e.msg, "past the end"));
}

static void test_rle_malformed(void **state)
{
    (void)state;
    uint32_t out[16];
    nx_error e;
    const uint8_t no_header[] = {0x80}; /* varint never ends */
    assert_int_equal(pq_rle_decode(no_header, sizeof no_header, 3, out, 1, &e), -1);
    const uint8_t no_value[] = {0x04}; /* RLE run of 2, value byte missing */
    assert_int_equal(pq_rle_decode(no_value, sizeof no_value, 3, out, 2, &e), -1);
    const uint8_t too_wide[] = {0x04, 0x09}; /* 9 does not fit 3 bits */
    assert_int_equal(pq_rle_decode(too_wide, sizeof too_wide, 3, out, 2, &e), -1);
    assert_non_null(strstr(e.msg, "wider"));
    const uint8_t runs_out[] = {0x04, 0x01}; /* 2 values, 3 wanted */
    assert_int_equal(pq_rle_decode(runs_out, sizeof runs_out, 3, out, 3, &e), -1);
    const uint8_t huge_run[] = {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x01}; /* run longer than 2^31 - 1 */
    assert_int_equal(pq_rle_decode(huge_run, sizeof huge_run, 1, out, 1, &e), -1);
    assert_int_equal(pq_rle_decode(runs_out, sizeof runs_out, 33, out, 1, &e), -1);
    assert_int_equal(pq_rle_decode(NULL, 0, 3, out, 0, &e), 0); /* nothing wanted */
}

static void test_levels(void **state)
{
    (void)state;
    /* max level 2 (width 2): RLE 3 x 2, then bit-packed 0,1,2,1,0,1,2,1 */
    bytes b = {.n = 0};
    uint64_t v[8] = {0, 1, 2, 1, 0, 1, 2, 1};
    put_uleb(&b, 3 << 1);
    put(&b, 2);
    put_uleb(&b, 1 << 1 | 1);
    put_packed(&b, v, 8, 2);
    uint8_t out[11];
    nx_error e;
    assert_int_equal(pq_rle_decode_levels(b.d, b.n, 2, out, 11, &e), 0);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[2], 2);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[3 + i], v[i]);
    /* A level above the maximum (3 with max 2, same width) is corrupt. */
    const uint8_t high[] = {0x02, 0x03};
    assert_int_equal(pq_rle_decode_levels(high, sizeof high, 2, out, 1, &e), -1);
    assert_non_null(strstr(e.msg, "above the maximum"));
    b.d[b.n - 1] = 0xFF; /* last packed byte: levels 3 */
    assert_int_equal(pq_rle_decode_levels(b.d, b.n, 2, out, 11, &e), -1);
}

/* Encodings.md, deprecated BIT_PACKED: 0..7 at width 3 are 00000101 00111001 01110111. */
static void test_bit_packed_levels_spec(void **state)
{
    (void)state;
    const uint8_t in[] = {0x05, 0x39, 0x77};
    uint8_t out[8];
    size_t used;
    nx_error e;
    assert_int_equal(pq_bit_packed_levels(in, sizeof in, 7, out, 8, &used, &e), 0);
    assert_int_equal(used, 3);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], i);
    assert_int_equal(pq_bit_packed_levels(in, 2, 7, out, 8, &used, &e), -1);
    assert_int_equal(pq_bit_packed_levels(in, sizeof in, 5, out, 8, &used, &e), -1); /* 6, 7 > 5 */
}

static void test_dict_indices(void **state)
{
    (void)state;
    const uint8_t in[] = {0x03, 0x03, 0x88, 0xC6, 0xFA}; /* width 3, then 0..7 */
    uint32_t out[8];
    nx_error e;
    assert_int_equal(pq_dict_indices(in, sizeof in, 8, out, 8, &e), 0);
    assert_int_equal(out[7], 7);
    assert_int_equal(pq_dict_indices(in, sizeof in, 7, out, 8, &e), -1);
    assert_non_null(strstr(e.msg, "out of range"));
    const uint8_t wide[] = {33, 0x02, 0x00};
    assert_int_equal(pq_dict_indices(wide, sizeof wide, 8, out, 1, &e), -1);
    assert_int_equal(pq_dict_indices(NULL, 0, 8, out, 1, &e), -1);
    assert_int_equal(pq_dict_indices(NULL, 0, 0, out, 0, &e), 0); /* an all-null page */
}

/* ------------------------------------------------------------------- PLAIN */

static void test_plain_fixed(void **state)
{
    (void)state;
    const uint8_t in[] = {0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x80};
    int32_t out[3];
    size_t used;
    nx_error e;
    assert_int_equal(pq_plain_fixed(in, sizeof in, 4, out, 3, &used, &e), 0);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], -1);
    assert_int_equal(out[2], INT32_MIN);
    assert_int_equal(used, 12);
    int64_t o64;
    assert_int_equal(pq_plain_fixed(in, sizeof in, 8, &o64, 1, &used, &e), 0);
    assert_true(o64 == (int64_t)0xFFFFFFFF00000001ull);
    assert_int_equal(pq_plain_fixed(in, sizeof in, 8, out, 2, &used, &e), -1);
    assert_int_equal(pq_plain_fixed(in, sizeof in, 4, out, SIZE_MAX / 2, &used, &e), -1);
}

static void test_plain_bool(void **state)
{
    (void)state;
    const uint8_t in[] = {0x0D, 0x01}; /* 1,0,1,1,0,0,0,0, 1 */
    uint8_t out[9];
    size_t used;
    nx_error e;
    assert_int_equal(pq_plain_bool(in, sizeof in, out, 9, &used, &e), 0);
    const uint8_t want[9] = {1, 0, 1, 1, 0, 0, 0, 0, 1};
    assert_memory_equal(out, want, 9);
    assert_int_equal(used, 2);
    assert_int_equal(pq_plain_bool(in, 1, out, 9, &used, &e), -1);
}

static void test_plain_byte_array(void **state)
{
    (void)state;
    const uint8_t in[] = {2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c'};
    pq_sv out[3];
    size_t used;
    nx_error e;
    assert_int_equal(pq_plain_byte_array(in, sizeof in, out, 3, &used, &e), 0);
    assert_int_equal(out[0].len, 2);
    assert_memory_equal(out[0].ptr, "hi", 2);
    assert_int_equal(out[1].len, 0);
    assert_memory_equal(out[2].ptr, "abc", 3);
    assert_int_equal(used, sizeof in);
    assert_int_equal(pq_plain_byte_array(in, sizeof in - 1, out, 3, &used, &e), -1); /* value cut */
    assert_int_equal(pq_plain_byte_array(in, 8, out, 3, &used, &e), -1);              /* length cut */
    const uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0xFF, 'x'};
    assert_int_equal(pq_plain_byte_array(huge, sizeof huge, out, 1, &used, &e), -1);
}

static void test_rle_bool(void **state)
{
    (void)state;
    const uint8_t in[] = {4, 0, 0, 0, 0x06, 0x01, 0x04, 0x00}; /* length 4: 3 x true, 2 x false */
    uint8_t out[5];
    nx_error e;
    assert_int_equal(pq_rle_bool(in, sizeof in, out, 5, &e), 0);
    const uint8_t want[5] = {1, 1, 1, 0, 0};
    assert_memory_equal(out, want, 5);
    assert_int_equal(pq_rle_bool(in, 3, out, 5, &e), -1);   /* no room for the prefix */
    const uint8_t long_prefix[] = {9, 0, 0, 0, 0x06, 0x01};
    assert_int_equal(pq_rle_bool(long_prefix, sizeof long_prefix, out, 3, &e), -1);
}

/* ------------------------------------------------------------ delta family */

/* Encodings.md example 1: 1..5, block size 8, one miniblock, all deltas 1. */
static void test_delta_spec_example_1(void **state)
{
    (void)state;
    const uint8_t in[] = {8, 1, 5, 2 /* zigzag(1) */, 2 /* min delta zigzag(1) */, 0 /* width */};
    int32_t out[5];
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_binary_packed(in, sizeof in, true, out, 5, &used, &e), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(out[i], i + 1);
    assert_int_equal(used, sizeof in);
}

/* Example 2: 7,5,3,1,2,3,4,5: min delta -2, relative deltas 0,0,0,3,3,3,3 on 2 bits. */
static void test_delta_spec_example_2(void **state)
{
    (void)state;
    const uint8_t in[] = {8, 1, 8, 14 /* zigzag(7) */, 3 /* zigzag(-2) */, 2, 0xC0, 0x3F};
    int64_t out[8];
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_binary_packed(in, sizeof in, false, out, 8, &used, &e), 0);
    const int64_t want[8] = {7, 5, 3, 1, 2, 3, 4, 5};
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(used, sizeof in);
}

static void test_delta_round_trip_wrapping(void **state)
{
    (void)state;
    enum { N = 1000 };
    static int64_t v[N], out[N];
    for (int i = 0; i < N; i++)
        v[i] = i % 97 == 0 ? (i % 2 ? INT64_MIN : INT64_MAX) : (int64_t)rnd() >> (i % 60);
    static bytes b;
    b.n = 0;
    put_delta(&b, v, N);
    put(&b, 0xAB); /* what follows the encoded values */
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_binary_packed(b.d, b.n, false, out, N, &used, &e), 0);
    assert_memory_equal(out, v, sizeof v);
    assert_int_equal(used, b.n - 1);
    /* INT32: the same arithmetic modulo 2^32. */
    static int32_t o32[N];
    for (int i = 0; i < N; i++)
        v[i] = (int32_t)rnd();
    b.n = 0;
    put_delta(&b, v, N);
    assert_int_equal(pq_delta_binary_packed(b.d, b.n, true, o32, N, &used, &e), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(o32[i], (int32_t)v[i]);
}

static void test_delta_sizes(void **state)
{
    (void)state;
    int64_t v[300] = {0}, out[300];
    for (size_t n = 0; n <= 300; n += (n < 5 ? 1 : 37)) {
        for (size_t i = 0; i < n; i++)
            v[i] = (int64_t)(i * i) - 1000;
        bytes b = {.n = 0};
        put_delta(&b, v, n);
        size_t used;
        nx_error e;
        assert_int_equal(pq_delta_binary_packed(b.d, b.n, false, out, n, &used, &e), 0);
        assert_memory_equal(out, v, n * sizeof v[0]);
        assert_int_equal(used, b.n);
    }
}

static void test_delta_unused_miniblock_widths(void **state)
{
    (void)state;
    /* Two values in a block of 4 miniblocks: the three unused widths may hold
     * anything (here 0xFF) and their miniblocks are absent. */
    bytes b = {.n = 0};
    put_uleb(&b, 128);
    put_uleb(&b, 4);
    put_uleb(&b, 2);
    put_zigzag(&b, 10);
    put_zigzag(&b, 5);
    put(&b, 0);
    put(&b, 0xFF);
    put(&b, 0xFF);
    put(&b, 0xFF);
    int64_t out[2];
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_binary_packed(b.d, b.n, false, out, 2, &used, &e), 0);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 15);
}

static void test_delta_malformed(void **state)
{
    (void)state;
    int64_t out[8];
    size_t used;
    nx_error e;
    const uint8_t truncated[] = {8, 1};
    assert_int_equal(pq_delta_binary_packed(truncated, sizeof truncated, false, out, 1, &used, &e), -1);
    const uint8_t zero_block[] = {0, 1, 1, 0};
    assert_int_equal(pq_delta_binary_packed(zero_block, sizeof zero_block, false, out, 1, &used, &e), -1);
    const uint8_t odd_mini[] = {12, 1, 1, 0}; /* 12 values per miniblock: not whole groups */
    assert_int_equal(pq_delta_binary_packed(odd_mini, sizeof odd_mini, false, out, 1, &used, &e), -1);
    const uint8_t count[] = {8, 1, 5, 2, 2, 0};
    assert_int_equal(pq_delta_binary_packed(count, sizeof count, false, out, 4, &used, &e), -1);
    assert_non_null(strstr(e.msg, "expected 4"));
    const uint8_t wide[] = {8, 1, 2, 0, 0, 65};
    assert_int_equal(pq_delta_binary_packed(wide, sizeof wide, false, out, 2, &used, &e), -1);
    const uint8_t short_mini[] = {8, 1, 3, 0, 0, 8, 1, 2}; /* width 8 needs 8 bytes */
    assert_int_equal(pq_delta_binary_packed(short_mini, sizeof short_mini, false, out, 3, &used, &e), -1);
    const uint8_t no_widths[] = {0x80, 0x01, 4, 2, 0, 0, 0}; /* 1 of 4 width bytes */
    assert_int_equal(pq_delta_binary_packed(no_widths, sizeof no_widths, false, out, 2, &used, &e), -1);
    const uint8_t huge_block[] = {0x80, 0x80, 0x80, 0x80, 0x01, 1, 2, 0, 0, 0};
    assert_int_equal(pq_delta_binary_packed(huge_block, sizeof huge_block, false, out, 2, &used, &e), -1);
}

/* Encodings.md: "Hello", "World", "Foobar", "ABCDEF" as lengths 5,5,6,6 then the bytes. */
static void test_delta_length_byte_array_spec(void **state)
{
    (void)state;
    const int64_t lens[] = {5, 5, 6, 6};
    bytes b = {.n = 0};
    put_delta(&b, lens, 4);
    const char *data = "HelloWorldFoobarABCDEF";
    for (const char *p = data; *p; p++)
        put(&b, (uint8_t)*p);
    pq_sv out[4];
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_length_byte_array(b.d, b.n, out, 4, &used, &e), 0);
    assert_int_equal(used, b.n);
    const char *want[] = {"Hello", "World", "Foobar", "ABCDEF"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(out[i].len, strlen(want[i]));
        assert_memory_equal(out[i].ptr, want[i], out[i].len);
    }
    assert_int_equal(pq_delta_length_byte_array(b.d, b.n - 1, out, 4, &used, &e), -1);
    const int64_t negative[] = {2, -1};
    b.n = 0;
    put_delta(&b, negative, 2);
    put(&b, 'a');
    put(&b, 'b');
    assert_int_equal(pq_delta_length_byte_array(b.d, b.n, out, 2, &used, &e), -1);
}

/* Encodings.md: "axis", "axle", "babble", "babyhood": prefixes 0,2,0,3, suffix
 * lengths 4,2,6,5, suffixes "axislebabbleyhood". */
static void test_delta_byte_array_spec(void **state)
{
    (void)state;
    const int64_t prefix[] = {0, 2, 0, 3}, suffix[] = {4, 2, 6, 5};
    bytes b = {.n = 0};
    put_delta(&b, prefix, 4);
    put_delta(&b, suffix, 4);
    for (const char *p = "axislebabbleyhood"; *p; p++)
        put(&b, (uint8_t)*p);
    pq_sv out[4];
    pq_scratch scratch = {NULL, 0};
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_byte_array(b.d, b.n, out, 4, &scratch, 1 << 20, &used, &e), 0);
    assert_int_equal(used, b.n);
    const char *want[] = {"axis", "axle", "babble", "babyhood"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(out[i].len, strlen(want[i]));
        assert_memory_equal(out[i].ptr, want[i], out[i].len);
    }
    /* The rebuilt values must fit the caller's limit. */
    assert_int_equal(pq_delta_byte_array(b.d, b.n, out, 4, &scratch, 20, &used, &e), -1);
    pq_scratch_free(&scratch);
}

static void test_delta_byte_array_bad_prefix(void **state)
{
    (void)state;
    const int64_t prefix[] = {0, 5}, suffix[] = {2, 1};
    bytes b = {.n = 0};
    put_delta(&b, prefix, 2);
    put_delta(&b, suffix, 2);
    put(&b, 'a');
    put(&b, 'b');
    put(&b, 'c');
    pq_sv out[2];
    pq_scratch scratch = {NULL, 0};
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_byte_array(b.d, b.n, out, 2, &scratch, 1 << 20, &used, &e), -1);
    assert_non_null(strstr(e.msg, "prefix"));
    pq_scratch_free(&scratch);
}

/* An expansion bomb: a 1000-byte value repeated by prefix 50,000 times. */
static void test_delta_byte_array_expansion_is_capped(void **state)
{
    (void)state;
    enum { N = 50000 };
    static int64_t prefix[N], suffix[N];
    suffix[0] = 1000;
    for (int i = 1; i < N; i++)
        prefix[i] = 1000;
    static bytes b;
    b.n = 0;
    put_delta(&b, prefix, N);
    put_delta(&b, suffix, N);
    for (int i = 0; i < 1000; i++)
        put(&b, 'x');
    static pq_sv out[N];
    pq_scratch scratch = {NULL, 0};
    size_t used;
    nx_error e;
    assert_int_equal(pq_delta_byte_array(b.d, b.n, out, N, &scratch, 1 << 20, &used, &e), -1);
    assert_non_null(strstr(e.msg, "expand"));
    assert_true(scratch.cap < (1 << 20));
    pq_scratch_free(&scratch);
}

/* Encodings.md: floats AABBCCDD 00112233 A3B4C5D6 split into AA00A3 BB11B4 CC22C5 DD33D6. */
static void test_byte_stream_split_spec(void **state)
{
    (void)state;
    const uint8_t in[] = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4, 0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
    const uint8_t want[] = {0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33, 0xA3, 0xB4, 0xC5, 0xD6};
    uint8_t out[12];
    nx_error e;
    assert_int_equal(pq_byte_stream_split(in, sizeof in, 4, out, 3, &e), 0);
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(pq_byte_stream_split(in, sizeof in, 8, out, 1, &e), -1);
    assert_int_equal(pq_byte_stream_split(in, sizeof in - 1, 4, out, 3, &e), -1);
    double d[2] = {1.5, -2.25}, back[2];
    uint8_t split[16];
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 2; i++)
            split[k * 2 + i] = ((const uint8_t *)d)[i * 8 + k];
    assert_int_equal(pq_byte_stream_split(split, sizeof split, 8, back, 2, &e), 0);
    assert_true(back[0] == 1.5 && back[1] == -2.25);
}

/* Outcome tally of the garbage test: each decoder answers 0, or -1 with a message. */
typedef struct garbage_tally {
    unsigned ok, failed;
} garbage_tally;

/* Whether rc keeps the decoders' contract (0, or -1 naming the problem in e); counted. */
static bool garbage_outcome(int rc, nx_error *e, garbage_tally *t)
{
    if (rc == 0) {
        t->ok++;
    } else {
        assert_int_equal(rc, -1);
        assert_true(e->msg[0] != '\0');
        t->failed++;
    }
    e->msg[0] = '\0';
    return rc == 0;
}

/* Every value of a byte-array answer lies inside the input it was decoded from. */
static void assert_inside(const pq_sv *sv, size_t n, const uint8_t *in, size_t len)
{
    for (size_t i = 0; i < n; i++)
        assert_true(sv[i].ptr >= in && sv[i].ptr + sv[i].len <= in + len);
}

/* Random bytes into every decoder: errors are fine, crashes are not, and whatever
 * a decoder accepts keeps its contract (levels and indices in range, booleans 0 or
 * 1, values and `used` inside the input). Both answers must occur: garbage is
 * rejected sometimes and accepted sometimes (BYTE_STREAM_SPLIT accepts exactly the
 * inputs whose length is a multiple of the width). */
static void test_garbage_never_crashes(void **state)
{
    (void)state;
    static uint8_t in[512];
    static uint32_t u32[4096];
    static uint8_t u8[4096];
    static int64_t i64[4096];
    static pq_sv sv[4096];
    pq_scratch scratch = {NULL, 0};
    garbage_tally t = {0, 0};
    nx_error e = {0};
    for (int round = 0; round < 2000; round++) {
        size_t len = rnd() % sizeof in, n = rnd() % 4096, used = 0;
        for (size_t i = 0; i < len; i++)
            in[i] = (uint8_t)rnd();
        unsigned width = (unsigned)(rnd() % 33), max_level = (unsigned)(rnd() % 4);
        if (garbage_outcome(pq_rle_decode(in, len, width, u32, n, &e), &e, &t) && width < 32)
            for (size_t i = 0; i < n; i++)
                assert_true(u32[i] < (UINT32_C(1) << width));
        if (garbage_outcome(pq_rle_decode_levels(in, len, max_level, u8, n, &e), &e, &t))
            for (size_t i = 0; i < n; i++)
                assert_true(u8[i] <= max_level);
        if (garbage_outcome(pq_bit_packed_levels(in, len, 3, u8, n, &used, &e), &e, &t)) {
            assert_true(used <= len);
            for (size_t i = 0; i < n; i++)
                assert_true(u8[i] <= 3);
        }
        if (garbage_outcome(pq_dict_indices(in, len, 100, u32, n, &e), &e, &t))
            for (size_t i = 0; i < n; i++)
                assert_true(u32[i] < 100);
        if (garbage_outcome(pq_rle_bool(in, len, u8, n, &e), &e, &t))
            for (size_t i = 0; i < n; i++)
                assert_true(u8[i] <= 1);
        if (garbage_outcome(pq_plain_byte_array(in, len, sv, n, &used, &e), &e, &t)) {
            assert_true(used <= len);
            assert_inside(sv, n, in, len);
        }
        if (garbage_outcome(pq_delta_binary_packed(in, len, round % 2, i64, n % 512, &used, &e), &e, &t))
            assert_true(used <= len);
        if (garbage_outcome(pq_delta_length_byte_array(in, len, sv, n % 512, &used, &e), &e, &t)) {
            assert_true(used <= len);
            assert_inside(sv, n % 512, in, len);
        }
        if (garbage_outcome(pq_delta_byte_array(in, len, sv, n % 512, &scratch, 1 << 16, &used, &e), &e, &t))
            assert_true(used <= len);
        /* len / 8 values of 8 bytes: accepted exactly when nothing is left over. */
        assert_int_equal(garbage_outcome(pq_byte_stream_split(in, len, 8, i64, len / 8, &e), &e, &t),
                         len % 8 == 0);
    }
    pq_scratch_free(&scratch);
    assert_true(t.ok > 0 && t.failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rle_spec_bit_packing),
        cmocka_unit_test(test_rle_runs_mixed),
        cmocka_unit_test(test_rle_every_bit_width),
        cmocka_unit_test(test_rle_bit_width_zero),
        cmocka_unit_test(test_rle_truncated_final_run),
        cmocka_unit_test(test_rle_malformed),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_bit_packed_levels_spec),
        cmocka_unit_test(test_dict_indices),
        cmocka_unit_test(test_plain_fixed),
        cmocka_unit_test(test_plain_bool),
        cmocka_unit_test(test_plain_byte_array),
        cmocka_unit_test(test_rle_bool),
        cmocka_unit_test(test_delta_spec_example_1),
        cmocka_unit_test(test_delta_spec_example_2),
        cmocka_unit_test(test_delta_round_trip_wrapping),
        cmocka_unit_test(test_delta_sizes),
        cmocka_unit_test(test_delta_unused_miniblock_widths),
        cmocka_unit_test(test_delta_malformed),
        cmocka_unit_test(test_delta_length_byte_array_spec),
        cmocka_unit_test(test_delta_byte_array_spec),
        cmocka_unit_test(test_delta_byte_array_bad_prefix),
        cmocka_unit_test(test_delta_byte_array_expansion_is_capped),
        cmocka_unit_test(test_byte_stream_split_spec),
        cmocka_unit_test(test_garbage_never_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
