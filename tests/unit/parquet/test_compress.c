/*
 * test_parquet_compress.c — page decompression (src/parquet/compress.c) for every codec
 * the reader accepts. Each page is compressed here by the codec's own library (not by
 * nxprof's writer, which knows fewer codecs), then decompressed by pq_decompress; damaged,
 * truncated and wrongly sized pages must fail with the codec named in the message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <brotli/encode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet/compress.h"
#include "parquet/parquet.h"

enum { PAGE = 100000 };

/* A page that compresses but not trivially: runs, counters and pseudo-random bytes. */
static void fill_page(uint8_t *p, size_t n)
{
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = i % 3000 < 1000 ? (uint8_t)(i / 7) : i % 3000 < 2000 ? 'a' : (uint8_t)(x & 0x0f);
    }
}

/* src compressed with the codec's library into out; returns the compressed size. */
static size_t library_compress(int codec, const uint8_t *src, size_t n, uint8_t *out, size_t cap)
{
    switch (codec) {
    case NXPQ_SNAPPY: {
        size_t len = cap;
        assert_int_equal(snappy_compress((const char *)src, n, (char *)out, &len), SNAPPY_OK);
        return len;
    }
    case NXPQ_GZIP: {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = (Bytef *)(uintptr_t)src;
        zs.avail_in = (uInt)n;
        zs.next_out = out;
        zs.avail_out = (uInt)cap;
        assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
        size_t len = zs.total_out;
        deflateEnd(&zs);
        return len;
    }
    case NXPQ_BROTLI: {
        size_t len = cap;
        assert_true(BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n, src, &len, out));
        return len;
    }
    case NXPQ_ZSTD: {
        size_t len = ZSTD_compress(out, cap, src, n, 3);
        assert_false(ZSTD_isError(len));
        return len;
    }
    case NXPQ_LZ4_RAW: {
        int len = LZ4_compress_default((const char *)src, (char *)out, (int)n, (int)cap);
        assert_true(len > 0);
        return (size_t)len;
    }
    default:
        fail_msg("no library compressor for codec %d", codec);
        return 0;
    }
}

static const int codecs[] = {NXPQ_SNAPPY, NXPQ_GZIP, NXPQ_BROTLI, NXPQ_ZSTD, NXPQ_LZ4_RAW};

static void test_round_trip_every_codec(void **state)
{
    (void)state;
    uint8_t *page = malloc(PAGE), *packed = malloc(2 * PAGE), *back = malloc(PAGE);
    assert_non_null(page), assert_non_null(packed), assert_non_null(back);
    fill_page(page, PAGE);
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        size_t n = library_compress(codecs[i], page, PAGE, packed, 2 * PAGE);
        assert_true(n < PAGE);
        nx_error err = {0};
        memset(back, 0xee, PAGE);
        if (pq_decompress(codecs[i], packed, n, back, PAGE, &err) != 0)
            fail_msg("%s: %s", pq_codec_name(codecs[i]), err.msg);
        assert_memory_equal(back, page, PAGE);
    }
    free(page), free(packed), free(back);
}

static void test_damaged_pages_fail_with_the_codec_named(void **state)
{
    (void)state;
    uint8_t *page = malloc(PAGE), *packed = malloc(2 * PAGE), *back = malloc(PAGE + 16);
    assert_non_null(page), assert_non_null(packed), assert_non_null(back);
    fill_page(page, PAGE);
    static const char *const prefix[] = {"snappy", "gzip", "brotli", "zstd", "lz4"};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        size_t n = library_compress(codecs[i], page, PAGE, packed, 2 * PAGE);
        nx_error err = {0};
        /* truncated */
        err = (nx_error){0};
        assert_int_equal(pq_decompress(codecs[i], packed, n / 2, back, PAGE, &err), -1);
        assert_non_null(strstr(err.msg, prefix[i]));
        /* the header claims more bytes than the page holds */
        err = (nx_error){0};
        assert_int_equal(pq_decompress(codecs[i], packed, n, back, PAGE + 16, &err), -1);
        assert_non_null(strstr(err.msg, prefix[i]));
        /* ... or fewer: the decoder must stop, never write past dst_len */
        err = (nx_error){0};
        assert_int_equal(pq_decompress(codecs[i], packed, n, back, PAGE / 2, &err), -1);
        assert_non_null(strstr(err.msg, prefix[i]));
    }
    free(page), free(packed), free(back);
}

static void test_codec_names(void **state)
{
    (void)state;
    assert_string_equal(pq_codec_name(NXPQ_BROTLI), "BROTLI");
    assert_string_equal(pq_codec_name(NXPQ_LZ4_RAW), "LZ4_RAW");
    /* LZO (3) and the Hadoop-framed LZ4 (5) are refused by name lookup */
    assert_null(pq_codec_name(3));
    assert_null(pq_codec_name(5));
    nx_error err = {0};
    uint8_t b[4] = {0};
    assert_int_equal(pq_decompress(3, b, 4, b, 4, &err), -1);
    assert_non_null(strstr(err.msg, "codec 3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_codec),
        cmocka_unit_test(test_damaged_pages_fail_with_the_codec_named),
        cmocka_unit_test(test_codec_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
