/* strbuf.c — see strbuf.h. */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool strbuf_reserve(nx_strbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > (size_t)-1 - b->len - 1) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > (size_t)-1 / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void nx_strbuf_append(nx_strbuf *b, const void *data, size_t n)
{
    if (!strbuf_reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void nx_strbuf_puts(nx_strbuf *b, const char *s)
{
    nx_strbuf_append(b, s, strlen(s));
}

void nx_strbuf_putc(nx_strbuf *b, char c)
{
    nx_strbuf_append(b, &c, 1);
}

void nx_strbuf_printf(nx_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!strbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *nx_strbuf_reserve(nx_strbuf *b, size_t extra)
{
    return strbuf_reserve(b, extra) ? b->data + b->len : NULL;
}

void nx_strbuf_commit(nx_strbuf *b, size_t n)
{
    b->len += n;
    b->data[b->len] = '\0';
}

bool nx_strbuf_failed(const nx_strbuf *b)
{
    return b->failed;
}

char *nx_strbuf_detach(nx_strbuf *b)
{
    if (b->failed) {
        nx_strbuf_free(b);
        return NULL;
    }
    if (!b->data && !strbuf_reserve(b, 0))
        return NULL;
    if (b->len == 0)
        b->data[0] = '\0';
    char *p = b->data;
    *b = (nx_strbuf)NX_STRBUF_INIT;
    return p;
}

void nx_strbuf_free(nx_strbuf *b)
{
    free(b->data);
    *b = (nx_strbuf)NX_STRBUF_INIT;
}
