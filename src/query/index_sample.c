/*
 * index_sample.c — the sampled pass (sampled_pass.h) answered from a table's
 * timeline index: per track, superblocks, blocks and mini-blocks that lie wholly
 * in the window and in one pixel bucket are offered as their stored best event;
 * only the others are decoded (the format is in profile/timeline_index.h).
 */
#include "query/index_sample.h"

#include <stdlib.h>
#include <string.h>

#include "profile/timeline_index_internal.h"
#include "query/window.h"


static bool varint_slow(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char c = *(*p)++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* Most deltas fit one byte. */
static inline bool varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    if (*p < end && **p < 0x80) {
        *v = *(*p)++;
        return true;
    }
    return varint_slow(p, end, v);
}

static int64_t ordinal_of(const nx_tlx *x, uint64_t row)
{
    if (x->n_files == 1)
        return (int64_t)row;
    uint32_t lo = 0, hi = x->n_files - 1;   /* the last file whose first row is <= row */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (x->file_first[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    return nx_row_ordinal(lo, (int64_t)(row - x->file_first[lo]));
}

/* Per track: the first in-window row (for the track order) and its in-window count. */
typedef struct track_seen {
    uint64_t first_row;
    uint32_t track;
} track_seen;

static int cmp_seen(const void *a, const void *b)
{
    uint64_t x = ((const track_seen *)a)->first_row, y = ((const track_seen *)b)->first_row;
    return x < y ? -1 : x > y;
}

/* Index of the first superblock of track tr whose last start is >= from. */
static uint64_t first_super_from(const nx_tlx *x, const tlx_track *tr, int64_t from)
{
    uint64_t lo = tr->first_super, hi = tr->first_super + tr->n_supers;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->supers[mid].s.last_start < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One track's pass over its superblocks, blocks, mini-blocks and events, all
 * visited in start order. */
typedef struct track_pass {
    const nx_tlx *x;
    nx_sampler *sm;
    uint32_t t;
    int64_t start, end;
    uint64_t *in_window, *first_row;
    nxpq_error *err;
    /* The bucket of the starts last looked at and its starts [lo, hi]: in start
     * order a bucket is computed (a 128-bit division) once, not per run or event. */
    int64_t lo, hi;
    uint32_t b;
} track_pass;

static inline uint32_t bucket_of(track_pass *tp, int64_t ts)
{
    if (ts < tp->lo || ts > tp->hi) {
        tp->b = nx_sampler_bucket(tp->sm, ts);
        nx_sampler_bucket_range(tp->sm, tp->b, &tp->lo, &tp->hi);
    }
    return tp->b;
}

/* Whether the run of starts [first, last] lies in the window and in one bucket
 * (then all its events are in the window: none ends before it starts). */
static bool run_whole(track_pass *tp, int64_t first, int64_t last)
{
    if (first < tp->start || last > tp->end)
        return false;
    bucket_of(tp, first);
    return last <= tp->hi;
}

static void run_seen(track_pass *tp, uint64_t first_row, uint64_t n)
{
    if (*tp->first_row == UINT64_MAX)
        *tp->first_row = first_row;
    *tp->in_window += n;
}

/* Inside a cut block, candidates (events, or mini-blocks' bests) come in start
 * order; per bucket only the best is offered to the sampler (the rule's winner:
 * the longest, and on a tie the earlier, since candidates come in start and row
 * order). */
typedef struct bucket_best {
    bool have;
    uint32_t b;
    int64_t bs, be;
    __int128 bd;
    uint64_t brow, btuple;
} bucket_best;

static int bucket_flush(track_pass *tp, bucket_best *bb)
{
    if (bb->have && nx_sampler_offer(tp->sm, tp->t, bb->bs, bb->be, ordinal_of(tp->x, bb->brow), (uint32_t)bb->btuple,
                                     tp->err) < 0)
        return -1;
    bb->have = false;
    return 0;
}

/* A candidate in the bucket of `key` (its start, or its mini-block's first start). */
static int bucket_add(track_pass *tp, bucket_best *bb, int64_t key, int64_t s, int64_t e, uint64_t row,
                      uint64_t tuple)
{
    uint32_t kb = bucket_of(tp, key);
    if (bb->have && kb != bb->b && bucket_flush(tp, bb) != 0)
        return -1;
    bb->b = kb;
    if (!bb->have || (__int128)e - s > bb->bd) {
        bb->have = true;
        bb->bs = s, bb->be = e, bb->bd = (__int128)e - s, bb->brow = row, bb->btuple = tuple;
    }
    return 0;
}

typedef struct mini {
    int64_t first, last, best_start, best_end;
    uint64_t first_row, best_row, best_tuple, len;
} mini;

static int64_t unzigzag(uint64_t z)
{
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* Offers the in-window events of cut block k. False when its data is malformed,
 * or (*rc -1) out of memory. */
static bool block_decode(track_pass *tp, const nx_tlx_block *k, int *rc)
{
    const nx_tlx *x = tp->x;
    if (k->data_off > x->data_len || k->data_len > x->data_len - k->data_off || k->s.n_events > NX_TLX_BLOCK_EVENTS ||
        k->s.n_events == 0)
        return false;
    const unsigned char *p = x->data + k->data_off, *e = p + k->data_len;
    uint32_t n_minis = (k->s.n_events + NX_TLX_MINI_EVENTS - 1) / NX_TLX_MINI_EVENTS;
    mini m[NX_TLX_BLOCK_EVENTS / NX_TLX_MINI_EVENTS];
    for (uint32_t j = 0; j < n_minis; j++) {
        uint64_t v[8];
        for (int f = 0; f < 8; f++)
            if (!varint(&p, e, &v[f]))
                return false;
        m[j].first = (int64_t)((uint64_t)k->s.first_start + v[0]);
        m[j].last = (int64_t)((uint64_t)m[j].first + v[1]);
        m[j].first_row = k->s.first_row + v[2];
        m[j].best_start = (int64_t)((uint64_t)m[j].first + v[3]);
        m[j].best_end = (int64_t)((uint64_t)m[j].best_start + (uint64_t)unzigzag(v[4]));
        m[j].best_row = m[j].first_row + v[5];
        m[j].best_tuple = v[6];
        m[j].len = v[7];
        if (m[j].best_row >= x->rows || v[6] >= (x->n_tuples ? x->n_tuples : 1))
            return false;
    }
    bucket_best bb = {0};
    for (uint32_t j = 0; j < n_minis; j++) {
        const mini *mj = &m[j];
        uint32_t n = j + 1 < n_minis ? NX_TLX_MINI_EVENTS : k->s.n_events - j * NX_TLX_MINI_EVENTS;
        if (mj->len > (uint64_t)(e - p))
            return false;
        const unsigned char *q = p, *qe = p + mj->len;
        p = qe;
        if (mj->first > tp->end)
            break;
        if (run_whole(tp, mj->first, mj->last)) {
            run_seen(tp, mj->first_row, n);
            if (bucket_add(tp, &bb, mj->first, mj->best_start, mj->best_end, mj->best_row, mj->best_tuple) != 0)
                return *rc = -1, false;
            continue;
        }
        int64_t s = mj->first;
        uint64_t row = mj->first_row;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t ds, dz, dr, tuple;
            if (!varint(&q, qe, &ds) || !varint(&q, qe, &dz) || !varint(&q, qe, &dr) || !varint(&q, qe, &tuple) ||
                tuple >= (x->n_tuples ? x->n_tuples : 1))
                return false;
            s = (int64_t)((uint64_t)s + ds);
            row += dr;
            if (row >= x->rows)
                return false;
            int64_t en = (int64_t)((uint64_t)s + (uint64_t)unzigzag(dz));
            if (s > tp->end)
                break;
            if (en < tp->start)
                continue;
            run_seen(tp, row, 1);
            if (bucket_add(tp, &bb, s, s, en, row, tuple) != 0)
                return *rc = -1, false;
        }
    }
    if (bucket_flush(tp, &bb) != 0)
        return *rc = -1, false;
    return true;
}

/* A run of events lying wholly in the window and in one bucket is offered as
 * its best event: returns 1 then, 0 when the run must be looked into, -1 on error. */
static int take_whole(track_pass *tp, const nx_tlx_summary *k)
{
    if (k->best_row >= tp->x->rows || k->first_row >= tp->x->rows) {
        nxpq_error_set(tp->err, "timeline index: track %u: row out of range", tp->t);
        return -1;
    }
    if (k->n_events == 0 || k->n_events > tp->x->rows) {   /* a run holds 1.. events, each a row */
        nxpq_error_set(tp->err, "timeline index: track %u: a run of %u events", tp->t, k->n_events);
        return -1;
    }
    if (!run_whole(tp, k->first_start, k->last_start))
        return 0;
    run_seen(tp, k->first_row, k->n_events);
    return nx_sampler_offer(tp->sm, tp->t, k->best_start, k->best_end, ordinal_of(tp->x, k->best_row), k->best_tuple,
                            tp->err) < 0 ? -1 : 1;
}

/* Blocks [b, b_end) of a cut superblock; 1 when past the window, 0, or -1. */
static int blocks_pass(track_pass *tp, uint64_t b, uint64_t b_end)
{
    for (; b < b_end; b++) {
        const nx_tlx_block *k = &tp->x->blocks[b];
        if (k->s.first_start > tp->end)
            return 1;
        if (k->s.max_end < tp->start)
            continue;
        int w = take_whole(tp, &k->s);
        if (w < 0)
            return -1;
        if (w)
            continue;
        int drc = 0;
        if (!block_decode(tp, k, &drc)) {
            if (drc == 0)
                nxpq_error_set(tp->err, "timeline index: track %u block %llu: malformed event data", tp->t,
                               (unsigned long long)b);
            return -1;
        }
    }
    return 0;
}

int nx_tlx_sample(const nx_tlx *x, int64_t start, int64_t end, uint32_t width, nx_sampled *out, nxpq_error *err)
{
    memset(out, 0, sizeof *out);
    nx_sampler *sm = nx_sampler_new(start, end, width, err);
    track_seen *seen = calloc(x->n_tracks + 1, sizeof *seen);
    int rc = -1;
    if (!sm || !seen)
        goto oom;
    for (uint32_t t = 0; t < x->n_tracks; t++) {
        const tlx_track *tr = &x->tracks[t];
        seen[t] = (track_seen){UINT64_MAX, t};
        track_pass tp = {x, sm, t, start, end, &out->in_window, &seen[t].first_row, err, 1, 0, 0};
        /* Events that start before the window reach into it only within the track's longest duration. */
        __int128 reach = (__int128)start - tr->max_dur;
        int64_t from = reach < INT64_MIN ? INT64_MIN : (int64_t)reach;
        for (uint64_t u = first_super_from(x, tr, from); u < tr->first_super + tr->n_supers; u++) {
            const nx_tlx_super *sp = &x->supers[u];
            if (sp->s.first_start > end)
                break;
            if (sp->s.max_end < start)
                continue;
            int w = take_whole(&tp, &sp->s);
            if (w < 0)
                goto fail;
            if (w)
                continue;
            if (sp->first_block < tr->first_block || sp->n_blocks > NX_TLX_SUPER_BLOCKS ||
                sp->first_block + sp->n_blocks > tr->first_block + tr->n_blocks) {
                nxpq_error_set(err, "timeline index: track %u superblock %llu: blocks out of range", t,
                               (unsigned long long)(u - tr->first_super));
                goto fail;
            }
            int brc = blocks_pass(&tp, sp->first_block, sp->first_block + sp->n_blocks);
            if (brc < 0)
                goto fail;
            if (brc > 0)
                break;
        }
    }
    size_t n;
    const nx_sample *r = nx_sampler_result(sm, &n, err);
    if (n == SIZE_MAX)
        goto fail;
    /* Track ids in order of first appearance in the file, as a scan numbers them. */
    qsort(seen, x->n_tracks, sizeof *seen, cmp_seen);
    uint32_t *map = calloc(x->n_tracks + 1, sizeof *map);
    if (!map)
        goto oom;
    size_t used = 0;
    while (used < x->n_tracks && seen[used].first_row != UINT64_MAX)
        used++;
    out->names = calloc(used + 1, sizeof *out->names);
    out->name_len = calloc(used + 1, sizeof *out->name_len);
    out->samples = malloc((n + 1) * sizeof *out->samples);
    if (!out->names || !out->name_len || !out->samples) {
        free(map);
        goto oom;
    }
    for (size_t i = 0; i < used; i++) {
        const char *s = "";
        size_t len = 0;
        nx_tlx_string_at(x, x->tracks[seen[i].track].name, &s, &len);   /* checked at open */
        if (!(out->names[i] = malloc(len + 1))) {
            free(map);
            goto oom;
        }
        memcpy(out->names[i], s, len);
        out->names[i][len] = '\0';
        out->name_len[i] = len;
        out->n_tracks++;
        map[seen[i].track] = (uint32_t)i;
    }
    for (size_t i = 0; i < n; i++) {
        out->samples[i] = r[i];
        out->samples[i].track = map[r[i].track];
    }
    out->n = n;
    free(map);
    rc = 0;
    goto done;
oom:
    nxpq_error_set(err, "out of memory sampling from the timeline index");
fail:
    nx_sampled_free(out);
done:
    free(seen);
    nx_sampler_free(sm);
    return rc;
}

/* --------------------------------------------------------------- labels -- */

