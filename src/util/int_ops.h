/*
 * int_ops.h — integer helpers every layer needs, written once: a three-way
 * compare, its qsort form, and division rounding toward minus infinity.
 */
#ifndef NX_UTIL_INT_OPS_H
#define NX_UTIL_INT_OPS_H

#include <stdint.h>

/* -1, 0 or 1 as a < b, a == b, a > b (no subtraction, so no overflow). */
static inline int nx_cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* nx_cmp_i64 of two int64_t elements, for qsort and bsearch. */
static inline int nx_qsort_cmp_i64(const void *a, const void *b)
{
    return nx_cmp_i64(*(const int64_t *)a, *(const int64_t *)b);
}

/* floor(a / b) for b != 0: a bucket index that stays right for negative a
 * (C's division truncates toward zero). */
static inline int64_t nx_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

#endif
