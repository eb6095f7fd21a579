/*
 * encode.h — internal: the value and level encodings the writer produces
 * (Encodings.md): PLAIN, the RLE/bit-packed hybrid, DELTA_BINARY_PACKED.
 * All append to an nx_strbuf; allocation failure shows as out->failed.
 */
#ifndef NX_PARQUET_ENCODE_H
#define NX_PARQUET_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/* Smallest bit width that holds max_value (0 for 0). */
int pq_bit_width(uint64_t max_value);

/* RLE/bit-packed hybrid of n values, each < 2^width (width 0..32), without a
 * length prefix or bit-width byte; callers add those where the page format asks. */
void pq_encode_rle_hybrid(nx_strbuf *out, const uint32_t *values, size_t n, int width);
/* Same over byte-sized values (definition/repetition levels). */
void pq_encode_rle_hybrid_u8(nx_strbuf *out, const uint8_t *values, size_t n, int width);

/* DELTA_BINARY_PACKED (block 128 values, 4 miniblocks) of n values. INT32
 * columns pass their values widened with is32 set: deltas then wrap at 32
 * bits, so miniblocks never need more than 32 bits (readers such as Arrow
 * reject wider ones in INT32 columns). Returns the widest miniblock's bit width;
 * when that exceeds max_width (1..64) it stops at the first such block, leaving
 * a partial stream in out for the caller to discard. */
int pq_encode_delta_binary_packed(nx_strbuf *out, const int64_t *values, size_t n, bool is32, int max_width);

/* PLAIN booleans: bit-packed, least significant bit first. */
void pq_encode_plain_bools(nx_strbuf *out, const uint8_t *values, size_t n);

#endif
