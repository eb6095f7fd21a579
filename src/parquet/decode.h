/*
 * decode.h — internal: the Parquet encodings, decoding side (Encodings.md).
 *
 * Every decoder works on a bounded byte range [p, p + len) and a value count
 * the caller knows from the page header. Nothing reads outside the range; a
 * malformed input returns -1 with a short message in *e (the caller adds the
 * file, column and page). Decoders that find the end of their own data report
 * the bytes they consumed in *used, so callers can find what follows.
 *
 * Values are little-endian on disk; nxprof targets little-endian hosts (checked
 * at compile time in decode.c), so fixed-width values are copied as they are.
 */
#ifndef NX_PARQUET_DECODE_H
#define NX_PARQUET_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"


/* A byte-array value: points into a page, a dictionary or a scratch buffer. */
typedef struct pq_sv {
    const uint8_t *ptr;
    uint32_t len;
} pq_sv;

/* A growable byte buffer owned by the caller, for decoders whose output does
 * not exist in the input (DELTA_BYTE_ARRAY rebuilds its strings). */
typedef struct pq_scratch {
    uint8_t *data;
    size_t cap;
} pq_scratch;

void pq_scratch_free(pq_scratch *s);

/* ---- RLE / bit-packed hybrid (no length prefix: callers strip it) ---- */

/* Decodes exactly n values of bit_width (0..32) into out. A final bit-packed
 * run may be cut short by the end of the data as long as the values needed
 * are all there. */
int pq_rle_decode(const uint8_t *p, size_t len, unsigned bit_width, uint32_t *out, size_t n, nx_error *e);

/* Levels: as pq_rle_decode, into bytes, and every level must be <= max_level
 * (at most 8 bits wide). */
int pq_rle_decode_levels(const uint8_t *p, size_t len, unsigned max_level, uint8_t *out, size_t n, nx_error *e);

/* The deprecated BIT_PACKED level encoding (most significant bit first, no
 * runs): n levels of as many bits as max_level needs; *used = bytes taken. */
int pq_bit_packed_levels(const uint8_t *p, size_t len, unsigned max_level, uint8_t *out, size_t n, size_t *used,
                         nx_error *e);

/* Dictionary indices of a data page: a bit-width byte then the hybrid. All
 * indices must be < dict_size. n == 0 accepts an empty input. */
int pq_dict_indices(const uint8_t *p, size_t len, uint32_t dict_size, uint32_t *out, size_t n, nx_error *e);

/* ---- PLAIN ---- */

/* n values of `width` bytes each (INT32, INT64, FLOAT, DOUBLE). */
int pq_plain_fixed(const uint8_t *p, size_t len, size_t width, void *out, size_t n, size_t *used, nx_error *e);
/* n booleans, one bit each, least significant bit first; out[i] is 0 or 1. */
int pq_plain_bool(const uint8_t *p, size_t len, uint8_t *out, size_t n, size_t *used, nx_error *e);
/* n byte arrays, each a 4-byte little-endian length then the bytes. */
int pq_plain_byte_array(const uint8_t *p, size_t len, pq_sv *out, size_t n, size_t *used, nx_error *e);

/* RLE-encoded booleans in a data page: 4-byte length prefix, then the hybrid
 * with bit width 1. */
int pq_rle_bool(const uint8_t *p, size_t len, uint8_t *out, size_t n, nx_error *e);

/* ---- delta encodings ---- */

/* DELTA_BINARY_PACKED holding exactly n values, into int32_t (is32) or
 * int64_t out. Arithmetic wraps, as the spec requires. */
int pq_delta_binary_packed(const uint8_t *p, size_t len, bool is32, void *out, size_t n, size_t *used, nx_error *e);

/* DELTA_LENGTH_BYTE_ARRAY: n lengths (delta-packed) then the bytes. */
int pq_delta_length_byte_array(const uint8_t *p, size_t len, pq_sv *out, size_t n, size_t *used, nx_error *e);

/* DELTA_BYTE_ARRAY: n prefix lengths, then n suffixes as
 * DELTA_LENGTH_BYTE_ARRAY; values are rebuilt into *scratch (at most
 * max_bytes in all, so a few bytes cannot expand into gigabytes). */
int pq_delta_byte_array(const uint8_t *p, size_t len, pq_sv *out, size_t n, pq_scratch *scratch, size_t max_bytes,
                        size_t *used, nx_error *e);

/* BYTE_STREAM_SPLIT: `width` streams of n bytes; len must be width * n. */
int pq_byte_stream_split(const uint8_t *p, size_t len, size_t width, void *out, size_t n, nx_error *e);

#endif
