/* text.c — small helpers on strings (text.h). */
#include "util/text.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

char *nx_text_dup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

int nx_text_i64(const char *s, int64_t *out)
{
    if (!s)
        return -1;
    bool neg = *s == '-';
    const char *p = s + neg;
    if (*p < '0' || *p > '9')
        return -1;
    if (*p == '0' && (p[1] != '\0' || neg))
        return -1; /* "0" only: no leading zeros, no "-0" */
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (lim - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return 0;
}
