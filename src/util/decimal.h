/*
 * decimal.h — integers as decimal text, as printf's "%" PRId64 writes them, without
 * printf (~2,000 instructions a call; this is ~60). Used where integers are most of
 * the output: CSV export cells and the roll-ups' interval arrays.
 */
#ifndef NX_DECIMAL_H
#define NX_DECIMAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NX_I64_TEXT_MAX 20   /* "-9223372036854775808" */

/* Number of decimal digits of u (1..20). */
static inline unsigned nx_digits_u64(uint64_t u)
{
    unsigned d = 1;
    for (;;) {
        if (u < 10)
            return d;
        if (u < 100)
            return d + 1;
        if (u < 1000)
            return d + 2;
        if (u < 10000)
            return d + 3;
        u /= 10000;
        d += 4;
    }
}

/* Writes v forward into out (at least NX_I64_TEXT_MAX bytes, not NUL-terminated);
 * returns the length. The digit count comes first so the digits go straight to
 * their place: eight at a time in 32-bit arithmetic, two per table lookup. */
static inline size_t nx_i64_text(char *out, int64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        out[n++] = '-';
        u = 0 - u;
    }
    unsigned d = nx_digits_u64(u);
    char *p = out + n + d;
    while (u >= 100000000) {
        uint32_t lo = (uint32_t)(u % 100000000);
        u /= 100000000;
        for (int k = 0; k < 4; k++, lo /= 100) {
            p -= 2;
            memcpy(p, pairs + 2 * (lo % 100), 2);
        }
    }
    uint32_t x = (uint32_t)u;
    while (x >= 100) {
        p -= 2;
        memcpy(p, pairs + 2 * (x % 100), 2);
        x /= 100;
    }
    if (x >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * x, 2);
    } else {
        *--p = (char)('0' + x);
    }
    return n + d;
}

#endif
