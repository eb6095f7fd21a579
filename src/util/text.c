/* text.c — small helpers on counted strings (text.h). */
#include "util/text.h"

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
