/*
 * float_text.c — shortest round-trip text of floats and doubles (float_text.h).
 */
#include "util/float_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t nonfinite(char *buf, double v)
{
    const char *s = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
    size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return n;
}

size_t nx_f32_text(char *buf, float v)
{
    if (!isfinite(v))
        return nonfinite(buf, v);
    int n = 0;
    /* If the shortest round-trip text has <= 6 digits, %.6g prints exactly it
     * (float precision is far finer than a 6-digit step), so start at 6. */
    for (int p = 6; p <= 9; p++) {
        n = snprintf(buf, NX_FLOAT_TEXT_MAX, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    return (size_t)n;
}

size_t nx_f64_text(char *buf, double v)
{
    if (!isfinite(v))
        return nonfinite(buf, v);
    int n = 0;
    /* The same argument with DBL_DIG: a text of <= 15 digits is printed
     * exactly by %.15g (trailing zeros dropped). */
    for (int p = 15; p <= 17; p++) {
        n = snprintf(buf, NX_FLOAT_TEXT_MAX, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return (size_t)n;
}
