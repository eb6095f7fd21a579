/* sampled_pass.c — the two-thread sampled pass (see sampled_pass.h). */
#include "query/engine/sampled_pass.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/nesting.h"
#include "profile/profile_table.h"
#include "profile/timeline_index.h"
#include "query/engine/index_sample.h"
#include "query/engine/nesting_values.h"

/* A half's sampler tracks for a table whose events nest: one per (window
 * track, sampling level: profile/nesting.h nx_nesting_level) seen, numbered in
 * order of first appearance. */
typedef struct depth_keys {
    uint32_t **by_depth;             /* per window track: per level, its key + 1 (0: none yet) */
    uint32_t *n_depths;              /* per window track: entries of by_depth */
    size_t n_tracks;
    uint32_t *track, *depth;         /* per key: window track, level */
    size_t n, cap;
} depth_keys;

/* The key of (track, depth), added when new; -1 when out of memory. */
static int64_t depth_key(depth_keys *k, uint32_t track, uint32_t depth)
{
    if (track >= k->n_tracks) {
        size_t n = (size_t)track + 1 > 2 * k->n_tracks ? (size_t)track + 1 : 2 * k->n_tracks;
        uint32_t **b = realloc(k->by_depth, n * sizeof *b);
        if (b)
            k->by_depth = b;
        uint32_t *c = realloc(k->n_depths, n * sizeof *c);
        if (c)
            k->n_depths = c;
        if (!b || !c)
            return -1;
        memset(b + k->n_tracks, 0, (n - k->n_tracks) * sizeof *b);
        memset(c + k->n_tracks, 0, (n - k->n_tracks) * sizeof *c);
        k->n_tracks = n;
    }
    if (depth >= k->n_depths[track]) {
        size_t n = (size_t)depth + 1 > 2 * (size_t)k->n_depths[track] ? (size_t)depth + 1 : 2 * (size_t)k->n_depths[track];
        uint32_t *d = n <= UINT32_MAX ? realloc(k->by_depth[track], n * sizeof *d) : NULL;
        if (!d)
            return -1;
        memset(d + k->n_depths[track], 0, (n - k->n_depths[track]) * sizeof *d);
        k->by_depth[track] = d;
        k->n_depths[track] = (uint32_t)n;
    }
    uint32_t *slot = &k->by_depth[track][depth];
    if (*slot)
        return *slot - 1;
    if (k->n == k->cap) {
        size_t c = k->cap ? 2 * k->cap : 64;
        uint32_t *t = realloc(k->track, c * sizeof *t);
        if (t)
            k->track = t;
        uint32_t *d = realloc(k->depth, c * sizeof *d);
        if (d)
            k->depth = d;
        if (!t || !d)
            return -1;
        k->cap = c;
    }
    k->track[k->n] = track;
    k->depth[k->n] = depth;
    *slot = (uint32_t)++k->n;
    return (int64_t)k->n - 1;
}

static void depth_keys_free(depth_keys *k)
{
    for (size_t i = 0; i < k->n_tracks; i++)
        free(k->by_depth[i]);
    free(k->by_depth);
    free(k->n_depths);
    free(k->track);
    free(k->depth);
}

typedef struct half_pass {
    const char *dir, *table;
    const nx_nesting_values *nest;   /* a table whose events nest: each row's depth; else NULL */
    depth_keys keys;                 /* with nest: the sampler's tracks */
    int64_t w_start, w_end, from;    /* this half's window; events starting before `from` are the other half's */
    int64_t start, end;              /* the whole window */
    uint32_t width;
    nx_budget *budget;               /* the pass's, shared by the halves */
    nx_profile_table *t;
    nx_window *w;
    nx_sampler *sampler;
    const nx_sample *samples;
    size_t n;
    uint64_t in_window;
    nxpq_scan_stats stats;
    int rc;                          /* 0, NX_PROFILE_TABLE_ABSENT or -1 */
    nx_error err;
} half_pass;

/* The sampler's track of the row at `ord` on window track `track`: (track,
 * level). -1 and h->err when out of memory or the row has no depth. */
static int64_t nest_key(half_pass *h, uint32_t track, int64_t ord)
{
    uint32_t depth;
    int64_t self_ns;
    if (!nx_nesting_get(h->nest, ord, &depth, &self_ns)) {
        nx_error_set(&h->err, "%s: row %lld has no depth", h->table, (long long)ord);
        return -1;
    }
    int64_t key = depth_key(&h->keys, track, nx_nesting_level(depth));
    if (key < 0)
        nx_error_set(&h->err, "%s: out of memory sampling by depth", h->table);
    return key;
}

static void *half_pass_run(void *arg)
{
    half_pass *h = arg;
    h->rc = nx_profile_table_open(h->dir, h->table, &h->t, &h->err);
    if (h->rc != 0)
        return NULL;
    h->rc = -1;
    nx_window_options wo = {.start = h->w_start, .end = h->w_end};
    if (!(h->w = nx_window_open(h->t, &wo, &h->err)) ||
        !(h->sampler = nx_sampler_new(h->start, h->end, h->width, &h->err)))
        return NULL;
    nx_sampler_set_budget(h->sampler, h->budget);
    nx_window_batch b;
    int rc;
    while ((rc = nx_window_next(h->w, &b, &h->err)) > 0) {
        int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
        for (size_t k = 0; k < b.n_rows; k++) {
            if (b.start[k] < h->from)
                continue;
            h->in_window++;
            int64_t ord = base + b.rows[k], key = b.track[k];
            if (h->nest && (key = nest_key(h, b.track[k], ord)) < 0)
                return NULL;
            if (nx_sampler_offer(h->sampler, (uint32_t)key, b.start[k], b.end[k], ord, 0, &h->err) < 0) {
                if (nx_sampler_over_budget(h->sampler))
                    h->rc = NX_QUERY_OVER_BUDGET;
                return NULL;
            }
        }
    }
    if (rc < 0)
        return NULL;
    nx_window_stats(h->w, &h->stats);
    h->samples = nx_sampler_result(h->sampler, &h->n, &h->err);
    if (h->n == SIZE_MAX)
        return NULL;
    h->rc = 0;
    return NULL;
}

static void half_pass_free(half_pass *h)
{
    depth_keys_free(&h->keys);
    nx_sampler_free(h->sampler);
    nx_window_close(h->w);
    nx_profile_table_close(h->t);
}

/* The depth of a kept event of sampling level `level`: the level's, or for
 * the level that folds the deeper depths the event's own. False when the row
 * has none. */
static bool sample_depth(const nx_nesting_values *nest, uint32_t level, int64_t ordinal, uint32_t *depth)
{
    int64_t self_ns;
    *depth = level;
    return level < NX_NESTING_LEVELS - 1 || nx_nesting_get(nest, ordinal, depth, &self_ns);
}

/* The merged id of name (added when new); -1 when out of memory. */
static int64_t track_id(nx_sampled *s, size_t *cap, const char *name, size_t len)
{
    for (size_t i = 0; i < s->n_tracks; i++)
        if (s->name_len[i] == len && memcmp(s->names[i], name, len) == 0)
            return (int64_t)i;
    if (s->n_tracks == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        char **n = realloc(s->names, c * sizeof *n);
        if (n)
            s->names = n;
        size_t *l = realloc(s->name_len, c * sizeof *l);
        if (l)
            s->name_len = l;
        if (!n || !l)
            return -1;
        *cap = c;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, name, len);
    copy[len] = '\0';
    s->names[s->n_tracks] = copy;
    s->name_len[s->n_tracks] = len;
    return (int64_t)s->n_tracks++;
}

/* Maps half h's track ids to merged ids, in h's order of first appearance. */
static int map_tracks(nx_sampled *s, size_t *cap, const half_pass *h, uint32_t **map)
{
    size_t n = nx_window_track_count(h->w);
    *map = calloc(n + 1, sizeof **map);
    if (!*map)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *name = nx_window_track_name(h->w, (uint32_t)i, &len);
        int64_t id = track_id(s, cap, name, len);
        if (id < 0)
            return -1;
        (*map)[i] = (uint32_t)id;
    }
    return 0;
}

/* The pass from the table's timeline index: 0 and *out, 1 when there is none
 * (absent, stale or malformed: the scan then answers), NX_QUERY_OVER_BUDGET
 * (the scan would need as much), -1 on out of memory. */
static int indexed_pass(const char *profile_dir, const char *table, int64_t start, int64_t end, uint32_t width,
                        bool nested, nx_budget *budget, nx_sampled *out, nx_error *err)
{
    const char *off = getenv("NXPROF_NO_TIMELINE_INDEX");
    if (off && strcmp(off, "1") == 0)
        return 1;
    nx_tlx *x;
    int rc = nx_tlx_open(profile_dir, table, &x, NULL);
    if (rc != 0)
        return rc < 0 ? (nx_error_set(err, "%s: out of memory", table), -1) : 1;
    rc = nx_tlx_sample(x, start, end, width, nested, budget, out, err);
    if (rc != 0) {
        nx_tlx_close(x);
        return rc == NX_QUERY_OVER_BUDGET ? rc : 1;
    }
    out->index = x;
    return 0;
}

int nx_sampled_pass(const char *profile_dir, const char *table, int64_t start, int64_t end, uint32_t width,
                    nx_sampled *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    const nx_timeline_info *info = nx_timeline_find(table);
    bool nested = info && info->nested;
    nx_budget budget;
    if (nx_budget_init(&budget, err) != 0)
        return -1;
    int irc = indexed_pass(profile_dir, table, start, end, width, nested, &budget, out, err);
    if (irc <= 0)
        return irc;
    nx_nesting_values *nest = NULL;
    if (nested) {
        int nrc = nx_nesting_open(profile_dir, table, &nest, NULL, 0, err);
        if (nrc != 0)
            return nrc;
    }
    /* Split at the first ns of bucket width/2: the least offset with
     * floor(off * width / len) >= width/2. One half only when there is no room. */
    unsigned __int128 len = (unsigned __int128)((__int128)end - (__int128)start) + 1;
    bool split = width >= 2 && len > width;
    unsigned __int128 off = split ? ((unsigned __int128)(width / 2) * len + width - 1) / width : len;
    int64_t mid = split ? (int64_t)((__int128)start + (__int128)off) : end;
    half_pass h[2] = {
        {.dir = profile_dir, .table = table, .w_start = start, .w_end = split ? mid - 1 : end, .from = INT64_MIN},
        {.dir = profile_dir, .table = table, .w_start = mid, .w_end = end, .from = mid},
    };
    for (int i = 0; i < 2; i++) {
        h[i].start = start;
        h[i].end = end;
        h[i].width = width;
        h[i].nest = nest;
        h[i].budget = &budget;
    }
    pthread_t th;
    bool threaded = split && pthread_create(&th, NULL, half_pass_run, &h[1]) == 0;
    half_pass_run(&h[0]);
    if (threaded)
        pthread_join(th, NULL);
    else if (split)
        half_pass_run(&h[1]);
    int rc = h[0].rc != 0 ? h[0].rc : split ? h[1].rc : 0;
    uint32_t *map[2] = {NULL, NULL};
    size_t cap = 0;
    if (rc != 0) {
        *err = h[0].rc != 0 ? h[0].err : h[1].err;
        goto done;
    }
    if ((rc = nx_nesting_check(nest, table, err)) != 0)
        goto done;
    rc = -1;
    int halves = split ? 2 : 1;
    for (int i = 0; i < halves; i++)
        if (map_tracks(out, &cap, &h[i], &map[i]) != 0)
            goto oom;
    size_t na = h[0].n, nb = split ? h[1].n : 0;
    if (!(out->samples = malloc((na + nb + 1) * sizeof *out->samples)) ||
        (nest && !(out->depth = malloc((na + nb + 1) * sizeof *out->depth))))
        goto oom;
    size_t a = 0, b = 0;
    while (a < na || b < nb) {
        bool take_a = b == nb || (a < na && h[0].samples[a].ordinal < h[1].samples[b].ordinal);
        const half_pass *hp = &h[take_a ? 0 : 1];
        nx_sample x = take_a ? h[0].samples[a++] : h[1].samples[b++];
        uint32_t wt = nest ? hp->keys.track[x.track] : x.track;   /* the half's window track */
        if (nest && !sample_depth(nest, hp->keys.depth[x.track], x.ordinal, &out->depth[out->n])) {
            nx_error_set(err, "%s: row %lld has no depth", table, (long long)x.ordinal);
            goto done;
        }
        x.track = map[take_a ? 0 : 1][wt];
        out->samples[out->n++] = x;
    }
    out->in_window = h[0].in_window + (split ? h[1].in_window : 0);
    out->stats = h[0].stats;
    if (split) {   /* over both halves: a row group or page at the split is read by both */
        out->stats.row_groups_read += h[1].stats.row_groups_read;
        out->stats.row_groups_total += h[1].stats.row_groups_total;
        out->stats.pages_read += h[1].stats.pages_read;
        out->stats.pages_total += h[1].stats.pages_total;
    }
    rc = 0;
    goto done;
oom:
    snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
done:
    free(map[0]);
    free(map[1]);
    half_pass_free(&h[0]);
    half_pass_free(&h[1]);
    nx_nesting_close(nest);
    if (rc != 0)
        nx_sampled_free(out);
    return rc;
}
