/* error.c — nxpq_error_set (parquet.h). */
#include <stdarg.h>
#include <stdio.h>

#include "parquet/parquet.h"

int nxpq_error_set(nxpq_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}
