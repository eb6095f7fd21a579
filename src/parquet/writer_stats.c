/* writer_stats.c — running statistics for pages and column chunks: min/max in
 * the column's sort order (signed integers, IEEE floats without NaN, unsigned
 * bytes for strings), null and NaN counts. See writer_internal.h. */
#include <math.h>
#include <string.h>

#include "parquet/writer_internal.h"

void stats_reset(stats_acc *s)
{
    s->any = false;
    s->nulls = s->nans = 0;
    s->smin.len = s->smax.len = 0;
}

void stats_free(stats_acc *s)
{
    nx_strbuf_free(&s->smin);
    nx_strbuf_free(&s->smax);
}

int pq_bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

void stats_int(stats_acc *s, int64_t v)
{
    if (!s->any) {
        s->any = true;
        s->imin = s->imax = v;
    } else if (v < s->imin) {
        s->imin = v;
    } else if (v > s->imax) {
        s->imax = v;
    }
}

/* NaN is counted, never a bound. A zero bound is written -0.0 as a minimum and
 * +0.0 as a maximum, as the specification asks, so readers never miss a zero
 * of the other sign. */
void stats_double(stats_acc *s, double v)
{
    if (isnan(v)) {
        s->nans++;
        return;
    }
    if (!s->any) {
        s->any = true;
        s->dmin = v == 0 ? -0.0 : v;
        s->dmax = v == 0 ? 0.0 : v;
        return;
    }
    if (v < s->dmin)
        s->dmin = v == 0 ? -0.0 : v;
    if (v > s->dmax)
        s->dmax = v == 0 ? 0.0 : v;
}

static void set_bytes(nx_strbuf *b, const void *p, size_t n)
{
    b->len = 0;
    nx_strbuf_append(b, p, n);
}

void stats_bytes(stats_acc *s, const void *p, size_t n)
{
    if (!s->any) {
        s->any = true;
        set_bytes(&s->smin, p, n);
        set_bytes(&s->smax, p, n);
        return;
    }
    if (pq_bytes_cmp(p, n, s->smin.data, s->smin.len) < 0)
        set_bytes(&s->smin, p, n);
    else if (pq_bytes_cmp(p, n, s->smax.data, s->smax.len) > 0)
        set_bytes(&s->smax, p, n);
}

void stats_merge(stats_acc *into, const stats_acc *from, nxpq_type type)
{
    into->nulls += from->nulls;
    into->nans += from->nans;
    if (!from->any)
        return;
    switch (type) {
    case NXPQ_FLOAT:
    case NXPQ_DOUBLE:
        stats_double(into, from->dmin);
        stats_double(into, from->dmax);
        break;
    case NXPQ_STRING:
    case NXPQ_LIST_STRING:
        stats_bytes(into, from->smin.data, from->smin.len);
        stats_bytes(into, from->smax.data, from->smax.len);
        break;
    default:
        stats_int(into, from->imin);
        stats_int(into, from->imax);
    }
}
