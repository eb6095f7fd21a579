/* compress.c — page (de)compression through libzstd, snappy-c, zlib, liblz4 and libbrotlidec. See compress.h. */
#include "parquet/compress.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet/parquet.h"

const char *pq_codec_name(int codec)
{
    switch (codec) {
    case NXPQ_UNCOMPRESSED: return "UNCOMPRESSED";
    case NXPQ_SNAPPY: return "SNAPPY";
    case NXPQ_GZIP: return "GZIP";
    case NXPQ_ZSTD: return "ZSTD";
    case NXPQ_BROTLI: return "BROTLI";
    case NXPQ_LZ4_RAW: return "LZ4_RAW";
    default: return NULL;
    }
}

void pq_compressor_free(pq_compressor *pc)
{
    ZSTD_freeCCtx(pc->zstd);
    pc->zstd = NULL;
}

int pq_compress(pq_compressor *pc, int codec, int level, const void *src, size_t n, nx_strbuf *out, nx_error *err)
{
    if (codec == NXPQ_UNCOMPRESSED) {
        nx_strbuf_append(out, src, n);
        if (out->failed)
            goto oom;
        return 0;
    }
    if (codec == NXPQ_ZSTD) {
        size_t cap = ZSTD_compressBound(n);
        char *dst = nx_strbuf_reserve(out, cap);
        if (!dst)
            goto oom;
        if (!pc->zstd && !(pc->zstd = ZSTD_createCCtx()))
            goto oom;
        size_t got = ZSTD_compressCCtx(pc->zstd, dst, cap, src, n, level);
        if (ZSTD_isError(got)) {
            nx_error_set(err, "zstd compression failed: %s", ZSTD_getErrorName(got));
            return -1;
        }
        nx_strbuf_commit(out, got);
        return 0;
    }
    if (codec == NXPQ_SNAPPY) {
        size_t cap = snappy_max_compressed_length(n);
        char *dst = nx_strbuf_reserve(out, cap);
        if (!dst)
            goto oom;
        if (snappy_compress(src, n, dst, &cap) != SNAPPY_OK) {
            nx_error_set(err, "snappy compression failed");
            return -1;
        }
        nx_strbuf_commit(out, cap);
        return 0;
    }
    nx_error_set(err, "the writer does not support compression codec %d", codec);
    return -1;
oom:
    nx_error_set(err, "out of memory compressing a %zu-byte page", n);
    return -1;
}

static int gzip_decompress(const void *src, size_t n, void *dst, size_t dst_len, nx_error *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* 15 + 32: accept gzip or zlib headers, as writers differ. */
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        nx_error_set(err, "gzip: cannot initialise zlib");
        return -1;
    }
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = dst;
    zs.avail_out = (uInt)dst_len;
    int rc = n > UINT32_MAX || dst_len > UINT32_MAX ? Z_BUF_ERROR : inflate(&zs, Z_FINISH);
    size_t got = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || got != dst_len) {
        nx_error_set(err, "gzip: corrupt data or wrong size (%zu of %zu bytes)", got, dst_len);
        return -1;
    }
    return 0;
}

int pq_decompress(int codec, const void *src, size_t n, void *dst, size_t dst_len, nx_error *err)
{
    switch (codec) {
    case NXPQ_UNCOMPRESSED:
        if (n != dst_len) {
            nx_error_set(err, "uncompressed page is %zu bytes, header says %zu", n, dst_len);
            return -1;
        }
        if (n)
            memcpy(dst, src, n);
        return 0;
    case NXPQ_ZSTD: {
        size_t got = ZSTD_decompress(dst, dst_len, src, n);
        if (ZSTD_isError(got) || got != dst_len) {
            nx_error_set(err, "zstd: %s", ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong decompressed size");
            return -1;
        }
        return 0;
    }
    case NXPQ_SNAPPY: {
        size_t want;
        if (snappy_uncompressed_length(src, n, &want) != SNAPPY_OK || want != dst_len) {
            nx_error_set(err, "snappy: corrupt data or wrong size");
            return -1;
        }
        size_t got = dst_len;
        if (snappy_uncompress(src, n, dst, &got) != SNAPPY_OK || got != dst_len) {
            nx_error_set(err, "snappy: corrupt data");
            return -1;
        }
        return 0;
    }
    case NXPQ_GZIP:
        return gzip_decompress(src, n, dst, dst_len, err);
    case NXPQ_BROTLI: {
        /* One-shot: the page header gives the exact size, and the decoder stops at
         * dst_len, so a hostile page cannot make it write or allocate more. */
        size_t got = dst_len;
        if (BrotliDecoderDecompress(n, src, &got, dst) != BROTLI_DECODER_RESULT_SUCCESS || got != dst_len) {
            nx_error_set(err, "brotli: corrupt data or wrong size");
            return -1;
        }
        return 0;
    }
    case NXPQ_LZ4_RAW: {
        if (n > INT32_MAX || dst_len > INT32_MAX) {
            nx_error_set(err, "lz4: page too large");
            return -1;
        }
        int got = LZ4_decompress_safe(src, dst, (int)n, (int)dst_len);
        if (got < 0 || (size_t)got != dst_len) {
            nx_error_set(err, "lz4: corrupt data or wrong size");
            return -1;
        }
        return 0;
    }
    default:
        nx_error_set(err, "unsupported compression codec %d", codec);
        return -1;
    }
}
