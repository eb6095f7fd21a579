/*
 * decode.c — the Parquet encodings, decoding side: PLAIN, the RLE/bit-packed
 * hybrid (levels, booleans, dictionary indices), the deprecated BIT_PACKED
 * levels, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and
 * BYTE_STREAM_SPLIT. See decode.h for the contract; Encodings.md for formats.
 *
 * Every read is preceded by a bounds check against the caller's range, and
 * every size computed from input is checked for overflow before use.
 */
#include "parquet/decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nxprof's Parquet decoder copies little-endian values as they are: it needs a little-endian host"
#endif

/* The spec caps a run at 2^31 - 1 values; a longer header is corrupt. */
#define MAX_RUN_VALUES ((uint64_t)INT32_MAX)
/* DELTA_BINARY_PACKED block sizes are 128 or a few multiples in practice; a
 * cap keeps the per-miniblock arithmetic far from overflow. */
#define MAX_DELTA_BLOCK ((uint64_t)1 << 24)

__attribute__((format(printf, 2, 3))) static int fail(nx_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nx_error_vset(e, fmt, ap);
    va_end(ap);
    return -1;
}

void pq_scratch_free(pq_scratch *s)
{
    free(s->data);
    s->data = NULL;
    s->cap = 0;
}

/* Bits needed to store max_value (0 for 0). */
static unsigned bit_width(uint64_t max_value)
{
    return max_value ? 64u - (unsigned)__builtin_clzll(max_value) : 0u;
}

/* A read position inside the caller's range. */
typedef struct cur {
    const uint8_t *p, *end;
} cur;

static size_t left(const cur *c)
{
    return (size_t)(c->end - c->p);
}

/* ULEB128, at most 64 bits. */
static bool get_uleb(cur *c, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end)
            return false;
        uint8_t b = *c->p++;
        if (shift == 63 && (b & 0x7e))
            return false; /* bits beyond the 64th */
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1)); /* unsigned: wraps instead of overflowing */
}

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}

/* Unpacks 8 values of bw bits (0..64), packed least significant bit first,
 * from exactly bw bytes at in. Widths up to 8 fit one 64-bit load; wider ones
 * go through a zero-padded copy so that every 8-byte load stays in bounds. */
static void unpack8(const uint8_t *in, unsigned bw, uint64_t out[8])
{
    if (bw == 0) {
        memset(out, 0, 8 * sizeof out[0]);
        return;
    }
    uint64_t mask = bw == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bw) - 1;
    if (bw <= 8) {
        uint64_t w = load_le(in, bw);
        for (unsigned i = 0; i < 8; i++)
            out[i] = (w >> (i * bw)) & mask;
        return;
    }
    uint8_t buf[72];
    memcpy(buf, in, bw);
    memset(buf + bw, 0, 8); /* the last load reads up to 8 bytes past the group */
    for (unsigned i = 0; i < 8; i++) {
        unsigned bit = i * bw, byte = bit >> 3, sh = bit & 7;
        uint64_t v = load_le(buf + byte, 8) >> sh;
        if (sh && bw + sh > 64)
            v |= (uint64_t)buf[byte + 8] << (64 - sh);
        out[i] = v & mask;
    }
}

/* ------------------------------------------------- RLE / bit-packed hybrid */

typedef struct rle_run {
    bool packed;
    uint64_t count;          /* values in the run */
    uint64_t value;          /* RLE runs */
    const uint8_t *data;     /* bit-packed runs: groups of 8 values, bw bytes each */
    size_t avail;            /* bit-packed bytes actually present */
} rle_run;

static int next_run(cur *c, unsigned bw, rle_run *r, nx_error *e)
{
    uint64_t h;
    if (!get_uleb(c, &h))
        return fail(e, "truncated RLE run header");
    r->packed = h & 1;
    if (r->packed) {
        uint64_t groups = h >> 1;
        if (groups > MAX_RUN_VALUES / 8)
            return fail(e, "bit-packed run of %llu groups is too long", (unsigned long long)groups);
        uint64_t bytes = groups * bw;
        r->count = groups * 8;
        r->data = c->p;
        /* A final run may be cut short; pq_rle_* check the values they use. */
        r->avail = bytes < left(c) ? (size_t)bytes : left(c);
        c->p += r->avail;
        return 0;
    }
    r->count = h >> 1;
    if (r->count > MAX_RUN_VALUES)
        return fail(e, "RLE run of %llu values is too long", (unsigned long long)r->count);
    size_t nbytes = (bw + 7) / 8;
    if (left(c) < nbytes)
        return fail(e, "RLE run value past the end of the data");
    r->value = load_le(c->p, nbytes);
    c->p += nbytes;
    if (bw < 64 && (r->value >> bw))
        return fail(e, "RLE run value %llu wider than %u bits", (unsigned long long)r->value, bw);
    return 0;
}

static int packed_check(const rle_run *r, unsigned bw, size_t take, nx_error *e)
{
    uint64_t need = ((uint64_t)take * bw + 7) / 8;
    if (need > r->avail)
        return fail(e, "bit-packed run past the end of the data");
    return 0;
}

/* Group g of a checked bit-packed run; the last group may be partly present. */
static void packed_group(const rle_run *r, unsigned bw, size_t g, uint64_t out[8])
{
    size_t off = g * bw;
    if (off + bw <= r->avail) {
        unpack8(r->data + off, bw, out);
        return;
    }
    uint8_t tmp[32] = {0}; /* hybrid widths are at most 32 */
    memcpy(tmp, r->data + off, r->avail - off);
    unpack8(tmp, bw, out);
}

int pq_rle_decode(const uint8_t *p, size_t len, unsigned bit_width, uint32_t *out, size_t n, nx_error *e)
{
    if (bit_width > 32)
        return fail(e, "RLE bit width %u exceeds 32", bit_width);
    cur c = {p, p + len};
    size_t done = 0;
    while (done < n) {
        rle_run r;
        if (next_run(&c, bit_width, &r, e) < 0)
            return -1;
        size_t take = r.count < n - done ? (size_t)r.count : n - done;
        if (!r.packed) {
            for (size_t i = 0; i < take; i++)
                out[done + i] = (uint32_t)r.value;
        } else {
            if (packed_check(&r, bit_width, take, e) < 0)
                return -1;
            uint64_t v[8];
            for (size_t i = 0; i < take; i += 8) {
                packed_group(&r, bit_width, i / 8, v);
                for (size_t k = 0; k < 8 && i + k < take; k++)
                    out[done + i + k] = (uint32_t)v[k];
            }
        }
        done += take;
    }
    return 0;
}

int pq_rle_decode_levels(const uint8_t *p, size_t len, unsigned max_level, uint8_t *out, size_t n, nx_error *e)
{
    if (max_level > 255)
        return fail(e, "level %u does not fit a byte", max_level);
    unsigned bw = bit_width(max_level);
    cur c = {p, p + len};
    size_t done = 0;
    while (done < n) {
        rle_run r;
        if (next_run(&c, bw, &r, e) < 0)
            return -1;
        size_t take = r.count < n - done ? (size_t)r.count : n - done;
        if (!r.packed) {
            if (r.value > max_level)
                return fail(e, "level %llu above the maximum %u", (unsigned long long)r.value, max_level);
            memset(out + done, (int)r.value, take);
        } else {
            if (packed_check(&r, bw, take, e) < 0)
                return -1;
            uint64_t v[8];
            for (size_t i = 0; i < take; i += 8) {
                packed_group(&r, bw, i / 8, v);
                for (size_t k = 0; k < 8 && i + k < take; k++) {
                    if (v[k] > max_level)
                        return fail(e, "level %llu above the maximum %u", (unsigned long long)v[k], max_level);
                    out[done + i + k] = (uint8_t)v[k];
                }
            }
        }
        done += take;
    }
    return 0;
}

int pq_bit_packed_levels(const uint8_t *p, size_t len, unsigned max_level, uint8_t *out, size_t n, size_t *used,
                         nx_error *e)
{
    unsigned bw = bit_width(max_level);
    if (bw > 8)
        return fail(e, "level %u does not fit a byte", max_level);
    if (n > (SIZE_MAX - 7) / 8)
        return fail(e, "too many levels");
    size_t bytes = (n * bw + 7) / 8;
    if (bytes > len)
        return fail(e, "BIT_PACKED levels need %zu bytes, %zu present", bytes, len);
    size_t bit = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        for (unsigned j = 0; j < bw; j++, bit++)
            v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1u);
        if (v > max_level)
            return fail(e, "level %u above the maximum %u", v, max_level);
        out[i] = (uint8_t)v;
    }
    *used = bytes;
    return 0;
}

int pq_dict_indices(const uint8_t *p, size_t len, uint32_t dict_size, uint32_t *out, size_t n, nx_error *e)
{
    if (n == 0)
        return 0;
    if (len < 1)
        return fail(e, "dictionary indices missing their bit width");
    if (p[0] > 32)
        return fail(e, "dictionary index bit width %u exceeds 32", p[0]);
    if (pq_rle_decode(p + 1, len - 1, p[0], out, n, e) < 0)
        return -1;
    uint32_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = out[i] > max ? out[i] : max;
    if (max >= dict_size)
        return fail(e, "dictionary index %u out of range (dictionary has %u entries)", max, dict_size);
    return 0;
}

/* ------------------------------------------------------------------ PLAIN */

int pq_plain_fixed(const uint8_t *p, size_t len, size_t width, void *out, size_t n, size_t *used, nx_error *e)
{
    if (width && n > len / width)
        return fail(e, "%zu values of %zu bytes need more than the %zu bytes present", n, width, len);
    if (n)
        memcpy(out, p, n * width);
    *used = n * width;
    return 0;
}

int pq_plain_bool(const uint8_t *p, size_t len, uint8_t *out, size_t n, size_t *used, nx_error *e)
{
    size_t bytes = n / 8 + (n % 8 != 0);
    if (bytes > len)
        return fail(e, "%zu booleans need %zu bytes, %zu present", n, bytes, len);
    for (size_t i = 0; i < n; i++)
        out[i] = (p[i >> 3] >> (i & 7)) & 1;
    *used = bytes;
    return 0;
}

int pq_plain_byte_array(const uint8_t *p, size_t len, pq_sv *out, size_t n, size_t *used, nx_error *e)
{
    cur c = {p, p + len};
    for (size_t i = 0; i < n; i++) {
        if (left(&c) < 4)
            return fail(e, "byte array %zu: length past the end of the data", i);
        uint64_t l = load_le(c.p, 4);
        c.p += 4;
        if (l > left(&c))
            return fail(e, "byte array %zu: %llu bytes run past the end of the data", i, (unsigned long long)l);
        out[i].ptr = c.p;
        out[i].len = (uint32_t)l;
        c.p += l;
    }
    *used = (size_t)(c.p - p);
    return 0;
}

int pq_rle_bool(const uint8_t *p, size_t len, uint8_t *out, size_t n, nx_error *e)
{
    if (len < 4)
        return fail(e, "RLE booleans missing their length prefix");
    uint64_t l = load_le(p, 4);
    if (l > len - 4)
        return fail(e, "RLE boolean length %llu runs past the end of the data", (unsigned long long)l);
    return pq_rle_decode_levels(p + 4, (size_t)l, 1, out, n, e);
}

/* ----------------------------------------------------------- delta family */

typedef struct delta_header {
    uint64_t block, minis, per_mini, total, first;
} delta_header;

static int delta_header_read(cur *c, delta_header *h, nx_error *e)
{
    if (!get_uleb(c, &h->block) || !get_uleb(c, &h->minis) || !get_uleb(c, &h->total) || !get_uleb(c, &h->first))
        return fail(e, "truncated DELTA_BINARY_PACKED header");
    /* The spec wants blocks of 128k values and miniblocks of 32k; its own
     * examples use 8, so any multiple of 8 (whole bit-packed groups) is read. */
    if (h->block == 0 || h->block > MAX_DELTA_BLOCK || h->minis == 0 || h->block % h->minis ||
        (h->block / h->minis) % 8)
        return fail(e, "DELTA_BINARY_PACKED block of %llu values in %llu miniblocks is invalid",
                    (unsigned long long)h->block, (unsigned long long)h->minis);
    h->per_mini = h->block / h->minis;
    return 0;
}

static void store(void *out, bool is32, size_t i, uint64_t v)
{
    if (is32)
        ((int32_t *)out)[i] = (int32_t)(uint32_t)v;
    else
        ((int64_t *)out)[i] = (int64_t)v;
}

/* One miniblock: adds up to `want` deltas to *value, storing from index *done. */
static int delta_miniblock(cur *c, const delta_header *h, unsigned bw, uint64_t min_delta, uint64_t *value,
                           bool is32, void *out, size_t *done, size_t n, nx_error *e)
{
    if (bw > 64)
        return fail(e, "DELTA_BINARY_PACKED miniblock bit width %u exceeds 64", bw);
    size_t bytes = (size_t)(h->per_mini / 8 * bw);
    if (bytes > left(c))
        return fail(e, "DELTA_BINARY_PACKED miniblock past the end of the data");
    uint64_t d[8];
    for (uint64_t g = 0; g < h->per_mini / 8 && *done < n; g++) {
        unpack8(c->p + g * bw, bw, d);
        for (unsigned k = 0; k < 8 && *done < n; k++) {
            *value += min_delta + d[k];
            store(out, is32, (*done)++, *value);
        }
    }
    c->p += bytes;
    return 0;
}

int pq_delta_binary_packed(const uint8_t *p, size_t len, bool is32, void *out, size_t n, size_t *used, nx_error *e)
{
    cur c = {p, p + len};
    delta_header h = {0};
    if (delta_header_read(&c, &h, e) < 0)
        return -1;
    if (h.total != n)
        return fail(e, "DELTA_BINARY_PACKED holds %llu values, expected %zu", (unsigned long long)h.total, n);
    uint64_t value = unzigzag(h.first);
    size_t done = 0;
    if (n)
        store(out, is32, done++, value);
    while (done < n) {
        uint64_t mdz;
        if (!get_uleb(&c, &mdz))
            return fail(e, "truncated DELTA_BINARY_PACKED block header");
        uint64_t min_delta = unzigzag(mdz);
        if (left(&c) < h.minis)
            return fail(e, "DELTA_BINARY_PACKED bit widths past the end of the data");
        const uint8_t *widths = c.p;
        c.p += h.minis;
        /* Miniblocks past the last value have a width byte but no body. */
        for (uint64_t m = 0; m < h.minis && done < n; m++)
            if (delta_miniblock(&c, &h, widths[m], min_delta, &value, is32, out, &done, n, e) < 0)
                return -1;
    }
    *used = (size_t)(c.p - p);
    return 0;
}

/* Lengths of n byte arrays, decoded into a temporary array the caller frees. */
static int32_t *delta_lengths(const uint8_t *p, size_t len, size_t n, size_t *used, nx_error *e)
{
    if (n > SIZE_MAX / sizeof(int32_t)) {
        fail(e, "too many values");
        return NULL;
    }
    int32_t *lens = malloc(n ? n * sizeof *lens : 1);
    if (!lens) {
        fail(e, "out of memory for %zu lengths", n);
        return NULL;
    }
    if (pq_delta_binary_packed(p, len, true, lens, n, used, e) < 0) {
        free(lens);
        return NULL;
    }
    return lens;
}

int pq_delta_length_byte_array(const uint8_t *p, size_t len, pq_sv *out, size_t n, size_t *used, nx_error *e)
{
    size_t off;
    int32_t *lens = delta_lengths(p, len, n, &off, e);
    if (!lens)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (lens[i] < 0 || (size_t)lens[i] > len - off) {
            fail(e, "byte array %zu: length %d invalid or past the end of the data", i, lens[i]);
            free(lens);
            return -1;
        }
        out[i].ptr = p + off;
        out[i].len = (uint32_t)lens[i];
        off += (size_t)lens[i];
    }
    free(lens);
    *used = off;
    return 0;
}

/* Total size of the rebuilt values, checking each prefix against the value
 * before it. */
static int dba_total(const int32_t *prefix, const pq_sv *suffix, size_t n, size_t max_bytes, size_t *total,
                     nx_error *e)
{
    uint64_t sum = 0, prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (prefix[i] < 0 || (uint64_t)prefix[i] > prev)
            return fail(e, "value %zu: prefix length %d longer than the previous value (%llu)", i, prefix[i],
                        (unsigned long long)prev);
        uint64_t vlen = (uint64_t)prefix[i] + suffix[i].len;
        if (vlen > UINT32_MAX)
            return fail(e, "value %zu is longer than 4 GiB", i);
        sum += vlen;
        if (sum > max_bytes)
            return fail(e, "DELTA_BYTE_ARRAY values expand past %zu bytes", max_bytes);
        prev = vlen;
    }
    *total = (size_t)sum;
    return 0;
}

static int scratch_reserve(pq_scratch *s, size_t n, nx_error *e)
{
    if (n <= s->cap)
        return 0;
    uint8_t *d = realloc(s->data, n);
    if (!d)
        return fail(e, "out of memory for %zu bytes of values", n);
    s->data = d;
    s->cap = n;
    return 0;
}

int pq_delta_byte_array(const uint8_t *p, size_t len, pq_sv *out, size_t n, pq_scratch *scratch, size_t max_bytes,
                        size_t *used, nx_error *e)
{
    size_t off, tail = 0, total = 0;
    int32_t *prefix = delta_lengths(p, len, n, &off, e);
    if (!prefix)
        return -1;
    int rc = pq_delta_length_byte_array(p + off, len - off, out, n, &tail, e);
    if (rc == 0)
        rc = dba_total(prefix, out, n, max_bytes, &total, e);
    if (rc == 0)
        rc = scratch_reserve(scratch, total, e);
    if (rc == 0) {
        uint8_t *dst = scratch->data;
        const uint8_t *prev = NULL;
        for (size_t i = 0; i < n; i++) {
            size_t pl = (size_t)prefix[i], sl = out[i].len;
            if (pl)
                memcpy(dst, prev, pl);
            if (sl)
                memcpy(dst + pl, out[i].ptr, sl);
            out[i].ptr = dst;
            out[i].len = (uint32_t)(pl + sl);
            prev = dst;
            dst += pl + sl;
        }
        *used = off + tail;
    }
    free(prefix);
    return rc;
}

int pq_byte_stream_split(const uint8_t *p, size_t len, size_t width, void *out, size_t n, nx_error *e)
{
    if (width == 0 || n > SIZE_MAX / width || len != n * width)
        return fail(e, "BYTE_STREAM_SPLIT data is %zu bytes, expected %zu values of %zu bytes", len, n, width);
    uint8_t *dst = out;
    for (size_t k = 0; k < width; k++) {
        const uint8_t *stream = p + k * n;
        for (size_t i = 0; i < n; i++)
            dst[i * width + k] = stream[i];
    }
    return 0;
}
