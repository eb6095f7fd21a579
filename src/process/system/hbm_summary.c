/*
 * hbm_summary.c — HbmUsageSummaryByType from the device-memory snapshots (rules
 * in hbm_summary.h).
 */
#include "process/system/hbm_summary.h"

#include <stdlib.h>
#include <string.h>

int nx_hbm_summary_add(nx_hbm_summary *h, const nx_sys_hbm_sample *s)
{
    for (size_t i = 0; i < h->n; i++) {
        nx_sys_hbm_sample *p = &h->peak[i];
        if (p->device_idx == s->device_idx && p->hbm_idx == s->hbm_idx) {
            if (s->total_bytes > p->total_bytes)
                *p = *s;
            return 0;
        }
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 8;
        nx_sys_hbm_sample *p = realloc(h->peak, cap * sizeof *p);
        if (!p)
            return -1;
        h->peak = p, h->cap = cap;
    }
    h->peak[h->n++] = *s;
    return 0;
}

static int cmp_hbm(const void *a, const void *b)
{
    const nx_sys_hbm_sample *x = a, *y = b;
    if (x->device_idx != y->device_idx)
        return x->device_idx < y->device_idx ? -1 : 1;
    return (x->hbm_idx > y->hbm_idx) - (x->hbm_idx < y->hbm_idx);
}

int nx_hbm_summary_write(nx_hbm_summary *h, const nx_table_dest *dest, unsigned *tables, nx_error *err)
{
    if (h->n == 0)
        return 0;
    qsort(h->peak, h->n, sizeof *h->peak, cmp_hbm);
    nx_row r;
    if (nx_row_open(&r, dest, "HbmUsageSummaryByType", err) != 0)
        return -1;
    size_t c_dev = nx_row_col(&r, "neuron_device_idx"), c_nc = nx_row_col(&r, "neuroncore_idx"),
           c_type = nx_row_col(&r, "usage_type"), c_bytes = nx_row_col(&r, "usage_bytes");
    for (size_t i = 0; i < h->n; i++)
        for (unsigned c = 0; c < NX_HBM_CATEGORY_COUNT; c++) {
            if (h->peak[i].bytes[c] <= 0)
                continue;
            const char *col = nx_sys_hbm_column(c);
            if (nx_row_begin(&r, err) != 0)
                goto fail;
            nx_row_i64(&r, c_dev, h->peak[i].device_idx);
            nx_row_i64(&r, c_nc, h->peak[i].hbm_idx);
            nx_row_strn(&r, c_type, col, strlen(col) - strlen("_bytes"));   /* every column ends "_bytes" */
            nx_row_i64(&r, c_bytes, h->peak[i].bytes[c]);
            if (nx_row_end(&r, err) != 0)
                goto fail;
        }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

void nx_hbm_summary_free(nx_hbm_summary *h)
{
    free(h->peak);
    memset(h, 0, sizeof *h);
}
