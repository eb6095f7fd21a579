/*
 * compress.h — internal: page compression through the system libraries
 * (libzstd, snappy's C API, zlib for GZIP, liblz4 for LZ4_RAW, libbrotlidec for BROTLI).
 * Codec numbers are Parquet's CompressionCodec values (nxpq_codec).
 */
#ifndef NX_PARQUET_COMPRESS_H
#define NX_PARQUET_COMPRESS_H

#include <stddef.h>

#include "util/strbuf.h"
#include "util/error.h"

/* Reusable compression state (one per thread): a ZSTD context costs a
 * multi-megabyte allocation, far too much to make per page. Zero-initialise;
 * pq_compressor_free() releases it. */
typedef struct pq_compressor {
    void *zstd;   /* ZSTD_CCtx, created on first use */
} pq_compressor;

/* Appends the compressed form of src[0..n) to out. Writer codecs: UNCOMPRESSED,
 * SNAPPY, ZSTD (level used by ZSTD only). Returns 0, or -1 with err filled. */
int pq_compress(pq_compressor *pc, int codec, int level, const void *src, size_t n, nx_strbuf *out, nx_error *err);
void pq_compressor_free(pq_compressor *pc);

/* Decompresses src[0..n) into exactly dst_len bytes at dst (the page header's
 * uncompressed size). Reader codecs: UNCOMPRESSED, SNAPPY, GZIP, BROTLI, ZSTD, LZ4_RAW.
 * Fails (-1, err filled) if the output would not be exactly dst_len bytes. */
int pq_decompress(int codec, const void *src, size_t n, void *dst, size_t dst_len, nx_error *err);

/* "ZSTD", "SNAPPY", ...; "codec <n>" style text for unknown values is not
 * produced here: returns NULL for codecs this build cannot handle. */
const char *pq_codec_name(int codec);

#endif
