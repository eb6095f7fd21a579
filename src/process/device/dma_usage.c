/*
 * dma_usage.c — bucketed DMA throughput series for DmaUsage and HbmUsage (rules in
 * dma_usage.h and docs/processing.md).
 *
 * A short packet (the usual case: DMA packets last microseconds) is split over
 * the few buckets it covers at once, into a ring of the next NX_USAGE_RING
 * buckets. A longer one would cost O(duration / W) that way, so it goes into a
 * piecewise-constant rate instead: it adds bytes/(end-start) to the rate at its
 * start and removes it at its end (a min-heap of the ends of those packets);
 * integrating the rate up to each bucket boundary gives the same proportional-
 * overlap share in O(log n). All series share the
 * open bucket index, so closing bucket b for every series at once keeps the table
 * in time order; a run of idle buckets (no packet in flight anywhere) is skipped
 * in one step. A "last empty bucket before activity" zero sample is only known
 * when the next active bucket closes, so finished samples wait one bucket in a
 * reorder heap.
 */
#include "process/device/dma_usage.h"
#include "util/int_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct usage_sample {
    unsigned pcore;
    double throughput;               /* bytes per second */
    int64_t total;
} usage_sample;

static size_t ring_at(int64_t bucket)
{
    int64_t m = bucket % NX_USAGE_RING;
    return (size_t)(m < 0 ? m + NX_USAGE_RING : m);
}

int nx_usage_open(nx_usage *u, const nx_table_dest *dest, const char *table, nx_error *err)
{
    memset(u, 0, sizeof *u);
    u->table = table;
    nx_reorder_init(&u->q, sizeof(usage_sample));
    if (nx_row_open(&u->r, dest, table, err) != 0)
        return -1;
    u->c_ts = nx_row_col(&u->r, "timestamp");
    u->c_thr = nx_row_col(&u->r, "current_throughput");
    u->c_total = nx_row_col(&u->r, "total_transfer_bytes");
    u->c_pcore = nx_row_col(&u->r, "pcore_idx");
    return 0;
}

static void heap_pop(nx_usage_series *s)
{
    nx_usage_active last = s->heap[--s->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->n)
            break;
        if (c + 1 < s->n && s->heap[c + 1].end < s->heap[c].end)
            c++;
        if (s->heap[c].end >= last.end)
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->n > 0)
        s->heap[i] = last;
}

static int heap_push(nx_usage_series *s, int64_t end, double rate)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        nx_usage_active *h = realloc(s->heap, cap * sizeof *h);
        if (!h)
            return -1;
        s->heap = h;
        s->cap = cap;
    }
    size_t i = s->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (s->heap[up].end <= end)
            break;
        s->heap[i] = s->heap[up];
        i = up;
    }
    s->heap[i] = (nx_usage_active){end, rate};
    return 0;
}

/* Counts the bytes of the packets in flight up to time t. */
static void accumulate(nx_usage_series *s, int64_t t)
{
    while (s->cursor < t) {
        int64_t next = t;
        if (s->n > 0 && s->heap[0].end < next)
            next = s->heap[0].end;
        s->bucket_bytes += s->rate * (double)(next - s->cursor);
        s->cursor = next;
        while (s->n > 0 && s->heap[0].end <= s->cursor) {
            s->rate -= s->heap[0].rate;
            heap_pop(s);
        }
        if (s->n == 0)
            s->rate = 0;     /* no drift survives an idle moment */
        if (s->n == 0 && next == s->cursor && next < t)
            s->cursor = t;   /* idle until t: nothing more to count */
    }
}

static int push_sample(nx_usage *u, int64_t bucket, unsigned pcore, double bytes, double total, nx_error *err)
{
    usage_sample x = {pcore, bytes * 1e9 / NX_USAGE_BUCKET_NS, (int64_t)llround(total)};
    if (nx_reorder_push(&u->q, bucket * NX_USAGE_BUCKET_NS, &x) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", u->table);
        return -1;
    }
    return 0;
}

static int write_ready(nx_usage *u, int64_t watermark, nx_error *err)
{
    while (nx_reorder_ready(&u->q, watermark)) {
        const usage_sample *x = nx_reorder_top(&u->q);
        if (nx_row_begin(&u->r, err) != 0)
            return -1;
        nx_row_i64(&u->r, u->c_ts, nx_reorder_top_key(&u->q));
        nx_row_num(&u->r, u->c_thr, x->throughput);
        nx_row_i64(&u->r, u->c_total, x->total);
        nx_row_i64(&u->r, u->c_pcore, x->pcore);
        if (nx_row_end(&u->r, err) != 0)
            return -1;
        if (u->summary &&
            nx_usage_summary_add(u->summary, nx_reorder_top_key(&u->q), x->pcore, x->throughput, x->total, err) != 0)
            return -1;
        nx_reorder_pop(&u->q);
    }
    return 0;
}

/* Bytes below this are float noise of the rate sums, not traffic. */
#define NX_USAGE_EPS 1e-6

/* Closes the open bucket of every series and opens the next one. */
static int close_bucket(nx_usage *u, nx_error *err)
{
    int64_t b = u->cur, b_end = (b + 1) * NX_USAGE_BUCKET_NS;
    for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++) {
        nx_usage_series *s = &u->s[p];
        if (!s->started)
            continue;
        accumulate(s, b_end);
        double bytes = s->bucket_bytes + s->ring[ring_at(b)];
        s->bucket_bytes = 0;
        s->ring[ring_at(b)] = 0;
        if (bytes > NX_USAGE_EPS) {
            if (s->in_gap && b - 1 > s->gap_start && push_sample(u, b - 1, p, 0, s->total, err) != 0)
                return -1;
            s->total += bytes;
            s->in_gap = false;
            if (push_sample(u, b, p, bytes, s->total, err) != 0)
                return -1;
        } else if (!s->in_gap) {
            s->in_gap = true;
            s->gap_start = b;
            if (push_sample(u, b, p, 0, s->total, err) != 0)
                return -1;
        }
    }
    u->cur = b + 1;
    return write_ready(u, b * NX_USAGE_BUCKET_NS, err);
}

static bool all_idle(const nx_usage *u)
{
    for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++) {
        const nx_usage_series *s = &u->s[p];
        if (s->started && (s->n > 0 || !s->in_gap || s->bucket_bytes > NX_USAGE_EPS || s->ring_last >= u->cur))
            return false;
    }
    return true;
}

int nx_usage_advance(nx_usage *u, int64_t now, nx_error *err)
{
    if (!u->any)
        return 0;
    while ((u->cur + 1) * NX_USAGE_BUCKET_NS <= now) {
        if (close_bucket(u, err) != 0)
            return -1;
        /* Every series idle and already in a gap: the buckets before `now` are
         * all empty and write nothing, so jump over them. */
        int64_t to = nx_floor_div(now, NX_USAGE_BUCKET_NS);
        if (to > u->cur && all_idle(u))
            u->cur = to;
    }
    return 0;
}

int nx_usage_add(nx_usage *u, unsigned pcore, int64_t start, int64_t end, int64_t bytes, nx_error *err)
{
    if (pcore >= NX_USAGE_MAX_SERIES) {
        snprintf(err->msg, sizeof err->msg, "%s: pcore %u out of range", u->table, pcore);
        return -1;
    }
    if (!u->any) {
        u->any = true;
        u->cur = nx_floor_div(start, NX_USAGE_BUCKET_NS);
    }
    if (nx_usage_advance(u, start, err) != 0)
        return -1;
    nx_usage_series *s = &u->s[pcore];
    if (!s->started) {
        s->started = true;
        s->cursor = start;
        s->ring_last = u->cur - 1;
    }
    accumulate(s, start);
    if (bytes <= 0)
        return 0;
    if (end <= start) {
        s->bucket_bytes += (double)bytes;
        return 0;
    }
    int64_t b0 = nx_floor_div(start, NX_USAGE_BUCKET_NS), b1 = nx_floor_div(end - 1, NX_USAGE_BUCKET_NS);
    if (b1 - u->cur < NX_USAGE_RING) {
        double per_ns = (double)bytes / (double)(end - start);
        for (int64_t b = b0; b <= b1; b++) {
            int64_t lo = b * NX_USAGE_BUCKET_NS > start ? b * NX_USAGE_BUCKET_NS : start;
            int64_t hi = (b + 1) * NX_USAGE_BUCKET_NS < end ? (b + 1) * NX_USAGE_BUCKET_NS : end;
            s->ring[ring_at(b)] += b0 == b1 ? (double)bytes : per_ns * (double)(hi - lo);
        }
        if (b1 > s->ring_last)
            s->ring_last = b1;
        return 0;
    }
    double rate = (double)bytes / (double)(end - start);
    if (heap_push(s, end, rate) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", u->table);
        return -1;
    }
    s->rate += rate;
    return 0;
}

static void free_series(nx_usage *u)
{
    for (unsigned p = 0; p < NX_USAGE_MAX_SERIES; p++)
        free(u->s[p].heap);
    nx_reorder_free(&u->q);
}

int nx_usage_finish(nx_usage *u, unsigned *tables, nx_error *err)
{
    if (u->any) {
        /* Close buckets until every series has drained and written its first empty bucket. */
        while (!all_idle(u)) {
            if (close_bucket(u, err) != 0)
                goto fail;
        }
        if (write_ready(u, INT64_MAX, err) != 0)
            goto fail;
    }
    free_series(u);
    return nx_row_close(&u->r, true, tables, err);
fail:
    free_series(u);
    nx_row_discard(&u->r);
    return -1;
}

void nx_usage_discard(nx_usage *u)
{
    free_series(u);
    nx_row_discard(&u->r);
}
