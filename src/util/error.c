/* error.c — nx_error (error.h). */
#include "util/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void clear_location(nx_error *err)
{
    err->file[0] = '\0';
    err->field[0] = '\0';
    err->where = NX_ERROR_NOWHERE;
}

int nx_error_vset(nx_error *err, const char *fmt, va_list ap)
{
    if (!err)
        return -1;
    clear_location(err);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int nx_error_set(nx_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nx_error_vset(err, fmt, ap);
    va_end(ap);
    return -1;
}

int nx_error_vat(nx_error *err, const char *file, const char *field, const char *where_kind, uint64_t where,
                 const char *fmt, va_list ap)
{
    if (!err)
        return -1;
    clear_location(err);
    if (file)
        snprintf(err->file, sizeof err->file, "%s", file);
    if (field)
        snprintf(err->field, sizeof err->field, "%s", field);
    err->where = where;
    size_t n = 0;
    if (err->file[0])
        n += (size_t)snprintf(err->msg + n, sizeof err->msg - n, "%s: ", err->file);
    if (err->field[0] && n < sizeof err->msg)
        n += (size_t)snprintf(err->msg + n, sizeof err->msg - n, "%s: ", err->field);
    if (where != NX_ERROR_NOWHERE && n < sizeof err->msg)
        n += (size_t)snprintf(err->msg + n, sizeof err->msg - n, "%s %" PRIu64 ": ",
                              where_kind ? where_kind : "offset", where);
    if (n < sizeof err->msg)
        vsnprintf(err->msg + n, sizeof err->msg - n, fmt, ap);
    return -1;
}

int nx_error_at(nx_error *err, const char *file, const char *field, const char *where_kind, uint64_t where,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nx_error_vat(err, file, field, where_kind, where, fmt, ap);
    va_end(ap);
    return -1;
}

int nx_error_prefix(nx_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    size_t plen = strlen(prefix), cap = sizeof err->msg - 1;
    if (plen + 2 >= cap)
        return -1;
    /* The old message moves right (cut at the end) to make room for "<prefix>: ". */
    size_t mlen = strnlen(err->msg, cap);
    if (plen + 2 + mlen > cap)
        mlen = cap - plen - 2;
    memmove(err->msg + plen + 2, err->msg, mlen);
    memcpy(err->msg, prefix, plen);
    memcpy(err->msg + plen, ": ", 2);
    err->msg[plen + 2 + mlen] = '\0';
    return -1;
}
