/*
 * pending_dma.c — PendingDma change points from the DMA transfers (rules in
 * pending_dma.h). Each transfer queues its start and its end in a time-keyed
 * heap; a change point at time t is final once a transfer starting after t
 * arrives (transfers come in start order, and an end is never before its start).
 */
#include "process/device/pending_dma.h"

#include <stdio.h>
#include <string.h>

typedef struct change {
    uint8_t pcore;
    int8_t delta;
} change;

int nx_pending_open(nx_pending_dma *p, const nx_table_dest *dest, nx_error *err)
{
    memset(p, 0, sizeof *p);
    nx_reorder_init(&p->q, sizeof(change));
    if (nx_row_open(&p->r, dest, "PendingDma", err) != 0)
        return -1;
    p->c_ts = nx_row_col(&p->r, "timestamp");
    p->c_value = nx_row_col(&p->r, "value");
    p->c_pcore = nx_row_col(&p->r, "pcore_idx");
    return 0;
}

/* Writes every change point at or before `watermark`, one instant at a time. */
static int write_ready(nx_pending_dma *p, int64_t watermark, nx_error *err)
{
    while (nx_reorder_ready(&p->q, watermark)) {
        int64_t t = nx_reorder_top_key(&p->q);
        int64_t net[NX_USAGE_MAX_SERIES] = {0};
        while (nx_reorder_size(&p->q) > 0 && nx_reorder_top_key(&p->q) == t) {
            const change *c = nx_reorder_top(&p->q);
            net[c->pcore] += c->delta;
            nx_reorder_pop(&p->q);
        }
        for (unsigned k = 0; k < NX_USAGE_MAX_SERIES; k++) {
            if (net[k] == 0)
                continue;
            p->count[k] += net[k];
            if (nx_row_begin(&p->r, err) != 0)
                return -1;
            nx_row_i64(&p->r, p->c_ts, t);
            nx_row_i64(&p->r, p->c_value, p->count[k]);
            nx_row_i64(&p->r, p->c_pcore, k);
            if (nx_row_end(&p->r, err) != 0)
                return -1;
        }
    }
    return 0;
}

int nx_pending_add(nx_pending_dma *p, unsigned pcore, int64_t start, int64_t end, nx_error *err)
{
    if (pcore >= NX_USAGE_MAX_SERIES) {
        snprintf(err->msg, sizeof err->msg, "PendingDma: pcore %u out of range", pcore);
        return -1;
    }
    if (start > INT64_MIN && write_ready(p, start - 1, err) != 0)
        return -1;
    if (end <= start)
        return 0;   /* in flight for no time: no change point */
    change up = {(uint8_t)pcore, +1}, down = {(uint8_t)pcore, -1};
    if (nx_reorder_push(&p->q, start, &up) != 0 || nx_reorder_push(&p->q, end, &down) != 0) {
        snprintf(err->msg, sizeof err->msg, "PendingDma: out of memory");
        return -1;
    }
    return 0;
}

int nx_pending_finish(nx_pending_dma *p, unsigned *tables, nx_error *err)
{
    int rc = write_ready(p, INT64_MAX, err);
    nx_reorder_free(&p->q);
    return nx_row_finish(&p->r, rc, tables, err);
}

void nx_pending_discard(nx_pending_dma *p)
{
    nx_reorder_free(&p->q);
    nx_row_discard(&p->r);
}
