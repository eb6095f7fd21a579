/*
 * index_sample.c — the sampled pass (sampled_pass.h) answered from a table's
 * timeline index: per track (per depth track for a table whose events nest),
 * superblocks, blocks and mini-blocks that lie wholly in the window and in one
 * pixel bucket are offered as their stored best event; only the others are
 * decoded (the format is in profile/timeline_index.h). A large table's runs
 * are sampled on up to MAX_GROUPS threads.
 */
#include "query/engine/index_sample.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/nesting.h"
#include "profile/timeline_index.h"
#include "query/engine/window.h"

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

/* Index of the first superblock of run r whose last start is >= from. */
static uint64_t first_super_from(const nx_tlx *x, const tlx_run *r, int64_t from)
{
    uint64_t lo = r->first_super, hi = r->first_super + r->n_supers;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->supers[mid].s.last_start < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One run's pass (a track, or a depth track) over its superblocks, blocks,
 * mini-blocks and events, all visited in start order. */
typedef struct track_pass {
    const nx_tlx *x;
    nx_sampler *sm;
    uint32_t t;                      /* the sampler's track: the run's index among the tracks or depth tracks */
    int64_t start, end;
    uint64_t *in_window, *first_row;
    nx_error *err;
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

/* A run of n in-window events from first_row on; *first_row keeps the least
 * (a track's depth tracks are passed one after another). */
static void run_seen(track_pass *tp, uint64_t first_row, uint64_t n)
{
    if (first_row < *tp->first_row)
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

/* Offers the in-window events of cut block k. False when its data is malformed,
 * or (*rc -1) out of memory. */
static bool block_decode(track_pass *tp, const nx_tlx_block *k, int *rc)
{
    const nx_tlx *x = tp->x;
    nx_tlx_mini m[NX_TLX_BLOCK_MINIS];
    uint32_t n_minis = nx_tlx_block_minis(x->data, x->data_len, k, m);
    uint64_t n_tuples = x->n_tuples ? x->n_tuples : 1;
    if (n_minis == 0)
        return false;
    for (uint32_t j = 0; j < n_minis; j++)
        if (m[j].best_row >= x->rows || m[j].best_tuple >= n_tuples)
            return false;
    bucket_best bb = {0};
    for (uint32_t j = 0; j < n_minis; j++) {
        const nx_tlx_mini *mj = &m[j];
        if (mj->first > tp->end)
            break;
        if (run_whole(tp, mj->first, mj->last)) {
            run_seen(tp, mj->first_row, mj->n);
            if (bucket_add(tp, &bb, mj->first, mj->best_start, mj->best_end, mj->best_row, mj->best_tuple) != 0)
                return *rc = -1, false;
            continue;
        }
        int64_t s = mj->first, en;
        uint64_t row = mj->first_row, tuple;
        const unsigned char *q = mj->events;
        for (uint32_t i = 0; i < mj->n; i++) {
            if (!nx_tlx_event_next(&q, mj->events_end, &s, &row, &en, &tuple) || tuple >= n_tuples || row >= x->rows)
                return false;
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
        nx_error_set(tp->err, "timeline index: track %u: row out of range", tp->t);
        return -1;
    }
    if (k->n_events == 0 || k->n_events > tp->x->rows) {   /* a run holds 1.. events, each a row */
        nx_error_set(tp->err, "timeline index: track %u: a run of %u events", tp->t, k->n_events);
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
                nx_error_set(tp->err, "timeline index: track %u block %llu: malformed event data", tp->t,
                               (unsigned long long)b);
            return -1;
        }
    }
    return 0;
}

/* The pass over run r (a track or a depth track): its superblocks in start
 * order from the first that may reach into the window. 0, or -1 with err. */
static int run_pass(track_pass *tp, const tlx_run *r)
{
    const nx_tlx *x = tp->x;
    /* Events that start before the window reach into it only within the run's longest duration. */
    __int128 reach = (__int128)tp->start - r->max_dur;
    int64_t from = reach < INT64_MIN ? INT64_MIN : (int64_t)reach;
    for (uint64_t u = first_super_from(x, r, from); u < r->first_super + r->n_supers; u++) {
        const nx_tlx_super *sp = &x->supers[u];
        if (sp->s.first_start > tp->end)
            break;
        if (sp->s.max_end < tp->start)
            continue;
        int w = take_whole(tp, &sp->s);
        if (w < 0)
            return -1;
        if (w)
            continue;
        if (sp->first_block < r->first_block || sp->n_blocks > NX_TLX_SUPER_BLOCKS ||
            sp->first_block + sp->n_blocks > r->first_block + r->n_blocks) {
            nx_error_set(tp->err, "timeline index: track %u superblock %llu: blocks out of range", tp->t,
                           (unsigned long long)(u - r->first_super));
            return -1;
        }
        int brc = blocks_pass(tp, sp->first_block, sp->first_block + sp->n_blocks);
        if (brc < 0)
            return -1;
        if (brc > 0)
            break;
    }
    return 0;
}

/* out's track names, in order of first appearance (seen sorted by first row,
 * `used` of them seen in the window); map gets each index track's place. */
static int name_tracks(const nx_tlx *x, const track_seen *seen, size_t used, uint32_t *map, nx_sampled *out)
{
    out->names = calloc(used + 1, sizeof *out->names);
    out->name_len = calloc(used + 1, sizeof *out->name_len);
    if (!out->names || !out->name_len)
        return -1;
    for (size_t i = 0; i < used; i++) {
        const char *s = "";
        size_t len = 0;
        nx_tlx_string_at(x, x->tracks[seen[i].track].name, &s, &len);   /* checked at open */
        if (!(out->names[i] = malloc(len + 1)))
            return -1;
        memcpy(out->names[i], s, len);
        out->names[i][len] = '\0';
        out->name_len[i] = len;
        out->n_tracks++;
        map[seen[i].track] = (uint32_t)i;
    }
    return 0;
}

/* ---------------------------------------------------------- on threads -- */

/* The runs (tracks, or depth tracks) are dealt out in contiguous groups of
 * about equal events, each sampled on its own thread with its own sampler;
 * runs are independent (a run's winners depend on its events alone), so the
 * union of the groups' winners is the one-pass result. */
#define MAX_GROUPS 4
#define GROUP_MIN_EVENTS 250000   /* fewer events per group do not pay for a thread */

typedef struct sample_group {
    const nx_tlx *x;
    nx_budget *budget;               /* the pass's, shared by the groups */
    bool by_depth;
    int64_t start, end;
    uint32_t width;
    uint64_t lo, hi;                 /* its runs */
    nx_sampler *sm;
    uint64_t in_window;
    uint64_t *first_row;             /* per track: its least in-window row in these runs */
    const nx_sample *res;            /* kept events by ordinal; .track is the run */
    size_t n;
    int rc;
    nx_error err;
} sample_group;

static const tlx_run *run_at(const nx_tlx *x, bool by_depth, uint64_t r, uint32_t *track)
{
    *track = by_depth ? x->depth_tracks[r].track : (uint32_t)r;
    return by_depth ? &x->depth_tracks[r].r : &x->tracks[r].r;
}

static void *group_run(void *arg)
{
    sample_group *g = arg;
    g->rc = -1;
    g->sm = nx_sampler_new(g->start, g->end, g->width, &g->err);
    g->first_row = malloc(((size_t)g->x->n_tracks + 1) * sizeof *g->first_row);
    if (!g->sm || !g->first_row) {
        nx_error_set(&g->err, "out of memory sampling from the timeline index");
        return NULL;
    }
    nx_sampler_set_budget(g->sm, g->budget);
    memset(g->first_row, 0xff, ((size_t)g->x->n_tracks + 1) * sizeof *g->first_row);
    for (uint64_t r = g->lo; r < g->hi; r++) {
        uint32_t t;
        const tlx_run *run = run_at(g->x, g->by_depth, r, &t);
        track_pass tp = {g->x, g->sm, (uint32_t)r, g->start, g->end, &g->in_window, &g->first_row[t], &g->err, 1, 0, 0};
        if (run_pass(&tp, run) != 0) {
            if (nx_sampler_over_budget(g->sm))
                g->rc = NX_QUERY_OVER_BUDGET;
            return NULL;
        }
    }
    g->res = nx_sampler_result(g->sm, &g->n, &g->err);
    g->rc = g->n == SIZE_MAX ? -1 : 0;
    return NULL;
}

/* Splits the n_runs runs into groups of about equal events; their count. */
static int make_groups(const nx_tlx *x, bool by_depth, uint64_t n_runs, sample_group *g)
{
    uint64_t total = 0;
    uint32_t t;
    for (uint64_t r = 0; r < n_runs; r++)
        total += run_at(x, by_depth, r, &t)->events;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t want = total / GROUP_MIN_EVENTS;
    int n = (int)(want < 1 ? 1 : want > MAX_GROUPS ? MAX_GROUPS : want);
    if (cpus > 0 && n > cpus)
        n = (int)cpus;
    int k = 0;
    uint64_t acc = 0, r = 0;
    for (; k < n && r < n_runs; k++) {
        g[k].lo = r;
        uint64_t target = total / (uint64_t)n * (uint64_t)(k + 1);
        while (r < n_runs && (k == n - 1 || acc < target))
            acc += run_at(x, by_depth, r++, &t)->events;
        g[k].hi = r;
    }
    return k ? k : 1;   /* no runs: one empty group */
}

/* The depth of a kept event of depth track d: the track's, or for the level
 * that folds the deeper depths (profile/nesting.h) the event's own from the
 * nesting section. False when the index has none for it (malformed). */
static bool sample_depth(const nx_tlx *x, const tlx_depth_track *d, int64_t ordinal, uint32_t *depth)
{
    int64_t self_ns;
    *depth = d->depth;
    return d->depth < NX_NESTING_LEVELS - 1 || nx_tlx_nesting(x, ordinal, depth, &self_ns);
}

/* The groups' kept events merged by ordinal into out (tracks mapped, depths
 * set). 0, or -1 with err when a kept event has no depth. */
static int merge_groups(const nx_tlx *x, bool by_depth, const sample_group *g, int n_groups, const uint32_t *map,
                        nx_sampled *out, nx_error *err)
{
    size_t at[MAX_GROUPS] = {0};
    for (;;) {
        int best = -1;
        for (int k = 0; k < n_groups; k++)
            if (at[k] < g[k].n && (best < 0 || g[k].res[at[k]].ordinal < g[best].res[at[best]].ordinal))
                best = k;
        if (best < 0)
            return 0;
        nx_sample s = g[best].res[at[best]++];
        uint32_t t;
        run_at(x, by_depth, s.track, &t);
        if (by_depth && !sample_depth(x, &x->depth_tracks[s.track], s.ordinal, &out->depth[out->n]))
            return nx_error_set(err, "timeline index: row %lld has no depth", (long long)s.ordinal);
        s.track = map[t];
        out->samples[out->n++] = s;
    }
}

int nx_tlx_sample(const nx_tlx *x, int64_t start, int64_t end, uint32_t width, bool by_depth, nx_budget *budget,
                  nx_sampled *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    if (by_depth && !x->has_depth)
        return nx_error_set(err, "timeline index: no depth tracks");
    sample_group g[MAX_GROUPS];
    memset(g, 0, sizeof g);
    int n_groups = make_groups(x, by_depth, by_depth ? x->n_depth_tracks : x->n_tracks, g);
    pthread_t th[MAX_GROUPS];
    bool threaded[MAX_GROUPS] = {false};
    for (int k = 0; k < n_groups; k++) {
        g[k] = (sample_group){.x = x, .budget = budget, .by_depth = by_depth, .start = start, .end = end, .width = width,
                              .lo = g[k].lo, .hi = g[k].hi};
        threaded[k] = k > 0 && pthread_create(&th[k], NULL, group_run, &g[k]) == 0;
    }
    for (int k = 0; k < n_groups; k++) {
        if (threaded[k])
            pthread_join(th[k], NULL);
        else
            group_run(&g[k]);
    }
    track_seen *seen = calloc(x->n_tracks + 1, sizeof *seen);
    uint32_t *map = calloc(x->n_tracks + 1, sizeof *map);
    size_t n = 0;
    int rc = -1;
    for (int k = 0; k < n_groups; k++) {
        if (g[k].rc != 0) {
            *err = g[k].err;
            rc = g[k].rc;
            goto fail;
        }
        n += g[k].n;
        out->in_window += g[k].in_window;
    }
    if (!seen || !map)
        goto oom;
    /* Track ids in order of first appearance in the file, as a scan numbers them. */
    for (uint32_t t = 0; t < x->n_tracks; t++) {
        seen[t] = (track_seen){UINT64_MAX, t};
        for (int k = 0; k < n_groups; k++)
            if (g[k].first_row[t] < seen[t].first_row)
                seen[t].first_row = g[k].first_row[t];
    }
    qsort(seen, x->n_tracks, sizeof *seen, cmp_seen);
    size_t used = 0;
    while (used < x->n_tracks && seen[used].first_row != UINT64_MAX)
        used++;
    out->samples = malloc((n + 1) * sizeof *out->samples);
    if (by_depth)
        out->depth = malloc((n + 1) * sizeof *out->depth);
    if (!out->samples || (by_depth && !out->depth) || name_tracks(x, seen, used, map, out) != 0)
        goto oom;
    if (merge_groups(x, by_depth, g, n_groups, map, out, err) != 0)
        goto fail;
    if (nx_tlx_changed(x)) {
        nx_error_set(err, "%s", NX_FILE_MAP_CHANGED);
        goto fail;
    }
    rc = 0;
    goto done;
oom:
    nx_error_set(err, "out of memory sampling from the timeline index");
fail:
    nx_sampled_free(out);
done:
    for (int k = 0; k < n_groups; k++) {
        nx_sampler_free(g[k].sm);
        free(g[k].first_row);
    }
    free(map);
    free(seen);
    return rc;
}
