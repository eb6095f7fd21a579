/* encode.c — PLAIN booleans, the RLE/bit-packed hybrid and DELTA_BINARY_PACKED.
 * See encode.h and the Parquet Encodings.md for the byte layouts. */
#include "parquet/encode.h"

#include <string.h>

int pq_bit_width(uint64_t max_value)
{
    int w = 0;
    while (max_value) {
        w++;
        max_value >>= 1;
    }
    return w;
}

static void put_uvarint(nx_strbuf *out, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    nx_strbuf_append(out, buf, n);
}

/* Packs n values of `width` bits (<= 32), LSB first, into ceil(n*width/8) bytes. */
static void bitpack32(nx_strbuf *out, const uint32_t *v, size_t n, int width)
{
    size_t bytes = (n * (size_t)width + 7) / 8;
    uint8_t *dst = (uint8_t *)nx_strbuf_reserve(out, bytes + 8);
    if (!dst || width == 0)
        return;
    uint64_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        acc |= (uint64_t)v[i] << bits;
        bits += width;
        if (bits >= 32) {
            uint32_t word = (uint32_t)acc;
            memcpy(dst + o, &word, 4);
            o += 4;
            acc >>= 32;
            bits -= 32;
        }
    }
    while (bits > 0) {
        dst[o++] = (uint8_t)acc;
        acc >>= 8;
        bits -= 8;
    }
    nx_strbuf_commit(out, bytes);
}

/* Packs n values of `width` bits (<= 64), LSB first. */
static void bitpack64(nx_strbuf *out, const uint64_t *v, size_t n, int width)
{
    if (width <= 32) {
        uint32_t tmp[32];
        for (size_t i = 0; i < n; i += 32) {
            size_t k = n - i < 32 ? n - i : 32;
            for (size_t j = 0; j < k; j++)
                tmp[j] = (uint32_t)v[i + j];
            /* 32 values of any width end on a byte boundary, so chunks concatenate. */
            bitpack32(out, tmp, k, width);
        }
        return;
    }
    size_t bytes = (n * (size_t)width + 7) / 8;
    uint8_t *dst = (uint8_t *)nx_strbuf_reserve(out, bytes + 16);
    if (!dst)
        return;
    memset(dst, 0, bytes + 16);
    size_t bitpos = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = width == 64 ? v[i] : v[i] & ((UINT64_C(1) << width) - 1);
        size_t byte = bitpos >> 3;
        int shift = (int)(bitpos & 7);
        /* Spread x over up to 9 bytes starting at dst[byte]. */
        uint64_t lo = x << shift;
        for (int b = 0; b < 8; b++)
            dst[byte + b] |= (uint8_t)(lo >> (8 * b));
        if (shift)
            dst[byte + 8] |= (uint8_t)(x >> (64 - shift));
        bitpos += (size_t)width;
    }
    nx_strbuf_commit(out, bytes);
}

/* Packs n byte-sized values (levels) of `width` bits, LSB first. */
static void bitpack8(nx_strbuf *out, const uint8_t *v, size_t n, int width)
{
    uint32_t tmp[64];
    for (size_t i = 0; i < n; i += 64) {
        size_t k = n - i < 64 ? n - i : 64;
        for (size_t j = 0; j < k; j++)
            tmp[j] = v[i + j];
        bitpack32(out, tmp, k, width); /* 64 values end on a byte boundary */
    }
}

/*
 * The RLE/bit-packed hybrid, written once for 32-bit values (dictionary
 * indices) and once for bytes (levels). Runs of 8 or more equal values become
 * RLE runs; everything else is bit-packed in whole groups of 8 until a run of
 * 8+ starts at a group boundary. Only the very last group may be short: it is
 * padded with zeros, which readers ignore because they know the value count.
 */
/* Length of the run of values equal to v[i] that starts at i. */
static size_t run_u32(const uint32_t *v, size_t i, size_t n)
{
    size_t j = i + 1;
    while (j < n && v[j] == v[i])
        j++;
    return j - i;
}

/* The same for bytes, eight at a time: definition levels are mostly one run
 * as long as the page (a column that is always set). */
static size_t run_u8(const uint8_t *v, size_t i, size_t n)
{
    uint64_t all = 0x0101010101010101ull * v[i], w;
    size_t j = i + 1;
    while (j + 8 <= n) {
        memcpy(&w, v + j, 8);
        if (w != all)
            break;
        j += 8;
    }
    while (j < n && v[j] == v[i])
        j++;
    return j - i;
}

#define DEFINE_RLE_HYBRID(NAME, T, BITPACK, RUN)                                   \
    void NAME(nx_strbuf *out, const T *v, size_t n, int width)                         \
    {                                                                                  \
        const size_t max_groups = 63; /* one-byte bit-packed headers */                \
        size_t value_bytes = ((size_t)width + 7) / 8;                                  \
        size_t i = 0;                                                                  \
        while (i < n) {                                                                \
            size_t r = RUN(v, i, n);                                               \
            if (r >= 8) {                                                              \
                put_uvarint(out, (uint64_t)r << 1);                                    \
                uint8_t val[4];                                                        \
                for (size_t b = 0; b < value_bytes; b++)                               \
                    val[b] = (uint8_t)((uint32_t)v[i] >> (8 * b));                     \
                nx_strbuf_append(out, val, value_bytes);                               \
                i += r;                                                                \
                continue;                                                              \
            }                                                                          \
            size_t start = i, groups = 0;                                              \
            do {                                                                       \
                i = n - i > 8 ? i + 8 : n;                                             \
                groups++;                                                              \
            } while (i < n && groups < max_groups && RUN(v, i, n) < 8);            \
            put_uvarint(out, (uint64_t)groups << 1 | 1);                               \
            size_t count = i - start;                                                  \
            BITPACK(out, v + start, count, width);                                     \
            size_t want = groups * (size_t)width;                                      \
            size_t have = (count * (size_t)width + 7) / 8;                             \
            static const char zeros[32];                                               \
            nx_strbuf_append(out, zeros, want - have);                                 \
        }                                                                              \
    }

DEFINE_RLE_HYBRID(pq_encode_rle_hybrid, uint32_t, bitpack32, run_u32)
DEFINE_RLE_HYBRID(pq_encode_rle_hybrid_u8, uint8_t, bitpack8, run_u8)

void pq_encode_plain_bools(nx_strbuf *out, const uint8_t *values, size_t n)
{
    size_t bytes = (n + 7) / 8;
    uint8_t *dst = (uint8_t *)nx_strbuf_reserve(out, bytes);
    if (!dst)
        return;
    memset(dst, 0, bytes);
    for (size_t i = 0; i < n; i++)
        dst[i >> 3] |= (uint8_t)((values[i] ? 1u : 0u) << (i & 7));
    nx_strbuf_commit(out, bytes);
}

#define DELTA_BLOCK 128
#define DELTA_MINIBLOCKS 4
#define DELTA_MINI (DELTA_BLOCK / DELTA_MINIBLOCKS)

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* The delta from a to b, wrapping at the column's width. */
static int64_t wrapping_delta(int64_t b, int64_t a, bool is32)
{
    if (is32)
        return (int32_t)((uint32_t)b - (uint32_t)a);
    return (int64_t)((uint64_t)b - (uint64_t)a);
}

int pq_encode_delta_binary_packed(nx_strbuf *out, const int64_t *values, size_t n, bool is32, int max_width)
{
    int widest = 0;
    put_uvarint(out, DELTA_BLOCK);
    put_uvarint(out, DELTA_MINIBLOCKS);
    put_uvarint(out, n);
    put_uvarint(out, zigzag(n ? values[0] : 0));
    uint64_t deltas[DELTA_BLOCK];
    for (size_t i = 1; i < n; i += DELTA_BLOCK) {
        size_t k = n - i < DELTA_BLOCK ? n - i : DELTA_BLOCK;
        /* Deltas wrap modulo 2^64 (2^32 for INT32) so extreme values never
         * overflow; readers add them back with the same wraparound. */
        int64_t min_delta = INT64_MAX;
        for (size_t j = 0; j < k; j++) {
            int64_t d = wrapping_delta(values[i + j], values[i + j - 1], is32);
            deltas[j] = (uint64_t)d;
            if (d < min_delta)
                min_delta = d;
        }
        put_uvarint(out, zigzag(min_delta));
        uint8_t widths[DELTA_MINIBLOCKS] = {0};
        size_t minis = (k + DELTA_MINI - 1) / DELTA_MINI;
        for (size_t m = 0; m < minis; m++) {
            uint64_t maxv = 0;
            size_t end = (m + 1) * DELTA_MINI < k ? (m + 1) * DELTA_MINI : k;
            for (size_t j = m * DELTA_MINI; j < end; j++) {
                deltas[j] -= (uint64_t)min_delta;
                if (is32)
                    deltas[j] &= UINT32_MAX;
                if (deltas[j] > maxv)
                    maxv = deltas[j];
            }
            for (size_t j = end; j < (m + 1) * DELTA_MINI; j++)
                deltas[j] = 0; /* padding of the last miniblock */
            widths[m] = (uint8_t)pq_bit_width(maxv);
            if (widths[m] > widest)
                widest = widths[m];
        }
        if (widest > max_width)
            return widest; /* the caller writes the page otherwise: no use packing it */
        nx_strbuf_append(out, widths, DELTA_MINIBLOCKS);
        for (size_t m = 0; m < minis; m++)
            bitpack64(out, deltas + m * DELTA_MINI, DELTA_MINI, widths[m]);
    }
    return widest;
}
