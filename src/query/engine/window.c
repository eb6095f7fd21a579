/*
 * window.c — time-window queries, the track function and pixel sampling (rules
 * in window.h).
 *
 * A query is one profile_table scan with the caller's projection plus the
 * timing and track columns, pruned by ranges that follow exactly from the
 * overlap rule. Per batch it selects the rows inside the window and computes
 * their track ids; track names are interned in an open-addressing hash table
 * (the number of tracks is bounded by the program, never by the event count).
 * No allocation happens per row: per-batch arrays only grow to the largest
 * batch seen.
 *
 * Speed (bench/query): a track name of <= 16 bytes is first looked up in a
 * 16-entry direct-mapped cache keyed by its exact bytes (fixed-size loads that
 * cover every byte, plus the length), so the common case neither hashes nor
 * calls memcmp; the sampler remembers the last bucket's [first, last] start
 * times, so events in start order cost a range check instead of a 128-bit
 * division. Neither changes any result (tests/unit/query/test_row_formats.c checks both
 * against the plain rules). When a batch's track columns all come in dictionary
 * form (nx_window_options.dictionary), a row's track is a function of its
 * entries in those dictionaries: the id is kept per combination of entries
 * (while the combinations number at most COMBO_MAX), so a row costs one table
 * lookup, and names are made only for each combination's first row.
 */
#include "query/engine/window.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ track names -- */

typedef struct track_set {
    char **names;
    size_t *lens;
    size_t n, cap;
    uint32_t *slots;     /* hash table of id + 1 (0 = empty), size mask + 1 (power of 2) */
    uint64_t *hashes;    /* per id */
    size_t mask;
} track_set;

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static void track_set_free(track_set *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->lens);
    free(t->slots);
    free(t->hashes);
}

static int track_set_grow_table(track_set *t)
{
    size_t size = t->slots ? (t->mask + 1) * 2 : 64;
    uint32_t *slots = calloc(size, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t id = 0; id < t->n; id++) {
        size_t p = t->hashes[id] & (size - 1);
        while (slots[p])
            p = (p + 1) & (size - 1);
        slots[p] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* Id of the track named s[0..len), adding it when new; -1 on out of memory. */
static int64_t track_intern(track_set *t, const char *s, size_t len)
{
    uint64_t h = hash_bytes(s, len);
    if (t->slots) {
        for (size_t p = h & t->mask;; p = (p + 1) & t->mask) {
            uint32_t e = t->slots[p];
            if (!e)
                break;
            size_t id = e - 1;
            if (t->hashes[id] == h && t->lens[id] == len && memcmp(t->names[id], s, len) == 0)
                return (int64_t)id;
        }
    }
    if ((t->n + 1) * 2 > (t->slots ? t->mask + 1 : 0) && track_set_grow_table(t) < 0)
        return -1;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 16;
        char **nn = realloc(t->names, ncap * sizeof *nn);
        if (!nn)
            return -1;
        t->names = nn;
        size_t *nl = realloc(t->lens, ncap * sizeof *nl);
        if (!nl)
            return -1;
        t->lens = nl;
        uint64_t *nh = realloc(t->hashes, ncap * sizeof *nh);
        if (!nh)
            return -1;
        t->hashes = nh;
        t->cap = ncap;
    }
    char *copy = nx_text_dup(s, len);
    if (!copy)
        return -1;
    size_t id = t->n++;
    t->names[id] = copy;
    t->lens[id] = len;
    t->hashes[id] = h;
    size_t p = h & t->mask;
    while (t->slots[p])
        p = (p + 1) & t->mask;
    t->slots[p] = (uint32_t)id + 1;
    return (int64_t)id;
}

/* ------------------------------------------------------------------ query -- */

enum { MAX_EXTRA = 2 + NX_TRACK_MAX_SOURCES, TRACK_CACHE_BITS = 4, COMBO_MAX = 1 << 16 };

/* Track ids by dictionary entries: ids[sum of entry_k * stride[k]] = id + 1 (0:
 * not seen yet), valid for the dictionaries dict_id[k] of sizes radix[k]. */
typedef struct combo_table {
    uint64_t dict_id[NX_TRACK_MAX_SOURCES];
    size_t radix[NX_TRACK_MAX_SOURCES], stride[NX_TRACK_MAX_SOURCES];
    uint32_t *ids;
    size_t cap;
    bool valid;
} combo_table;

/* A cached short track name: its short_key() words, len + 1 (0 = empty slot), id. */
typedef struct track_cache_entry {
    uint64_t k0, k1;
    uint32_t len, id;
} track_cache_entry;

struct nx_window {
    nx_profile_table *t;
    const nx_timeline_info *info;
    int64_t start, end;
    nx_profile_scan *scan;
    const char **cols;      /* full projection */
    size_t n_cols;
    int start_i, end_i;     /* batch column indices (end_i < 0: point table) */
    nx_track_source source;  /* the track rule's columns */
    int track_col[NX_TRACK_MAX_SOURCES];   /* batch column of each source (-1: absent) */
    track_set tracks;
    track_cache_entry cache[1 << TRACK_CACHE_BITS];
    combo_table combo;
    uint32_t *rows, *track_ids;
    int64_t *starts, *ends;
    size_t buf_cap;
};

/* Index of `name` in the projection, appending it when missing. */
static int want_column(nx_window *w, const char *name)
{
    for (size_t i = 0; i < w->n_cols; i++)
        if (strcmp(w->cols[i], name) == 0)
            return (int)i;
    w->cols[w->n_cols] = name;
    return (int)w->n_cols++;
}

static bool is_int_type(nxpq_type ty) { return ty == NXPQ_INT32 || ty == NXPQ_INT64; }

/* Checks that `name` exists with an acceptable type. 1 present, 0 absent, -1 wrong type. */
static int check_column(nx_window *w, const char *name, bool integer, nx_error *err)
{
    int c = nx_profile_table_find_column(w->t, name);
    if (c < 0)
        return 0;
    nxpq_type ty = nx_profile_table_column(w->t, (size_t)c)->type;
    if (integer ? !is_int_type(ty) : ty != NXPQ_STRING) {
        const char *what = nx_profile_table_column(w->t, (size_t)c)->unsupported;
        nx_error_set(err, "%s: column '%s' is %s%s, expected %s", w->info->table, name,
                       what ? what : nxpq_type_name(ty), what ? " (not read by nxprof)" : "",
                       integer ? "an integer" : "a string");
        return -1;
    }
    return 1;
}

void nx_window_close(nx_window *w)
{
    if (!w)
        return;
    nx_profile_scan_close(w->scan);
    track_set_free(&w->tracks);
    free(w->cols);
    free(w->rows);
    free(w->track_ids);
    free(w->starts);
    free(w->ends);
    free(w->combo.ids);
    free(w);
}

nx_window *nx_window_open(nx_profile_table *t, const nx_window_options *o, nx_error *err)
{
    const char *tname = nx_profile_table_name(t);
    const nx_timeline_info *info = nx_timeline_find(tname);
    if (!info) {
        nx_error_set(err, "%s: not a timeline table (no timing/track rule)", tname);
        return NULL;
    }
    if (o->start > o->end) {
        nx_error_set(err, "%s: window end %lld is before its start %lld", tname, (long long)o->end,
                (long long)o->start);
        return NULL;
    }
    nx_window *w = calloc(1, sizeof *w);
    if (!w || !(w->cols = calloc(o->n_columns + MAX_EXTRA, sizeof *w->cols))) {
        nx_error_set(err, "%s: out of memory starting a window query", tname);
        free(w);
        return NULL;
    }
    w->t = t;
    w->info = info;
    w->start = o->start;
    w->end = o->end;
    for (size_t i = 0; i < o->n_columns; i++)
        w->cols[w->n_cols++] = o->columns[i];

    /* Timing columns must exist and be integers. */
    const char *timing[2] = {info->start_column, info->end_column};
    for (int i = 0; i < 2; i++) {
        if (!timing[i])
            continue;
        int rc = check_column(w, timing[i], true, err);
        if (rc == 0)
            nx_error_set(err, "%s: has no '%s' column", tname, timing[i]);
        if (rc <= 0)
            goto fail;
    }
    w->start_i = want_column(w, info->start_column);
    w->end_i = info->end_column ? want_column(w, info->end_column) : -1;

    /* Track source columns (window.h); a missing required one is an error, the
     * others fall back as the rule says. */
    w->source = nx_track_sources(info->track);
    for (size_t k = 0; k < w->source.n; k++) {
        int rc = check_column(w, w->source.col[k], w->source.is_int[k], err);
        if (rc < 0)
            goto fail;
        if (rc == 0 && w->source.required[k]) {
            nx_error_set(err, "%s: has no '%s' column for its track", tname, w->source.col[k]);
            goto fail;
        }
        w->track_col[k] = rc ? want_column(w, w->source.col[k]) : -1;
    }

    if (o->n_ranges > NX_WINDOW_MAX_RANGES) {
        nx_error_set(err, "%s: a window query takes at most %d more ranges", tname, NX_WINDOW_MAX_RANGES);
        goto fail;
    }
    nx_profile_range more[NX_PROFILE_MAX_MORE_RANGES];
    size_t n_more = 0;
    if (info->end_column)
        more[n_more++] = (nx_profile_range){info->end_column, o->start, INT64_MAX};
    for (size_t i = 0; i < o->n_ranges; i++)
        more[n_more++] = o->ranges[i];
    nx_profile_scan_options so = {
        .columns = w->cols,
        .n_columns = w->n_cols,
        .range_column = info->start_column,
        .range_min = info->end_column ? INT64_MIN : o->start,
        .range_max = o->end,
        .batch_rows = o->batch_rows,
        .threads = o->threads,
        .dictionary = o->dictionary,
        .more_ranges = n_more ? more : NULL,
        .n_more_ranges = n_more,
        .rows_begin = o->rows_begin,
        .rows_end = o->rows_end,
    };
    w->scan = nx_profile_scan_open(t, &so, err);
    if (!w->scan)
        goto fail;
    return w;
fail:
    nx_window_close(w);
    return NULL;
}

static inline uint32_t load32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t load64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* A key that, together with len (<= 16), identifies s[0..len) exactly: loads that
 * cover every byte (overlapping when len is not a power of two), never reading
 * outside the string, with fixed-size loads only (a variable memcpy is slow here). */
static inline void short_key(const char *s, size_t len, uint64_t *k0, uint64_t *k1)
{
    if (len >= 8) {
        *k0 = load64(s);
        *k1 = load64(s + len - 8);
    } else if (len >= 4) {
        *k0 = load32(s) | (uint64_t)load32(s + len - 4) << 32;
        *k1 = 0;
    } else if (len > 0) {
        *k0 = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << 8 |
              (uint64_t)(unsigned char)s[len - 1] << 16;
        *k1 = 0;
    } else {
        *k0 = *k1 = 0;
    }
}

static int ensure_buffers(nx_window *w, size_t n)
{
    if (n <= w->buf_cap)
        return 0;
    uint32_t *r = realloc(w->rows, n * sizeof *r);
    if (!r)
        return -1;
    w->rows = r;
    uint32_t *tr = realloc(w->track_ids, n * sizeof *tr);
    if (!tr)
        return -1;
    w->track_ids = tr;
    int64_t *st = realloc(w->starts, n * sizeof *st);
    if (!st)
        return -1;
    w->starts = st;
    int64_t *en = realloc(w->ends, n * sizeof *en);
    if (!en)
        return -1;
    w->ends = en;
    w->buf_cap = n;
    return 0;
}

/* The track id of row i of batch b (the rule of timeline_rules.h, interned); -1 when
 * out of memory. */
static int64_t row_track(nx_window *w, const nxpq_batch *b, size_t i)
{
    char buf[NX_TRACK_BUF];
    size_t tlen;
    const char *ts = nx_track_of_row(w->info->track, &w->source, b, w->track_col, i, buf, &tlen);
    /* Track names are few and short: a name of <= 16 bytes is looked up in a
     * small direct-mapped cache by its exact-bytes key (no hashing, no memcmp);
     * others, and misses, go to the interning table. */
    track_cache_entry *ce16 = NULL;
    uint64_t k0 = 0, k1 = 0;
    if (tlen <= 16) {
        short_key(ts, tlen, &k0, &k1);
        uint64_t h = (k0 ^ (k1 * 0x9E3779B97F4A7C15ull) ^ tlen) * 0xff51afd7ed558ccdull;
        ce16 = &w->cache[h >> (64 - TRACK_CACHE_BITS)];
        if (ce16->len == tlen + 1 && ce16->k0 == k0 && ce16->k1 == k1)
            return ce16->id;
    }
    int64_t got = track_intern(&w->tracks, ts, tlen);
    if (got >= 0 && ce16)
        *ce16 = (track_cache_entry){k0, k1, (uint32_t)tlen + 1, (uint32_t)got};
    return got;
}

static bool all_null(const nxpq_column_data *c, size_t n)
{
    if (!c->valid)
        return n == 0;
    for (size_t i = 0; i < n; i++)
        if (c->valid[i])
            return false;
    return true;
}

/* Readies w->combo for batch b, filling idx[k] with each present source's entry
 * indices (NULL for an absent source, or one null in every row). false when some
 * source column is not in dictionary form (nor all null), the combinations would be too many, or out of memory (the
 * rows then take row_track). */
static bool combo_ready(nx_window *w, const nxpq_batch *b, const uint32_t **idx)
{
    combo_table *c = &w->combo;
    size_t radix[NX_TRACK_MAX_SOURCES], size = 1;
    uint64_t dict[NX_TRACK_MAX_SOURCES];
    bool same = c->valid;
    for (size_t k = 0; k < w->source.n; k++) {
        const nxpq_column_data *col = w->track_col[k] >= 0 ? &b->columns[w->track_col[k]] : NULL;
        if (col && !col->dict_index) {
            if (!all_null(col, b->n_rows))
                return false;
            col = NULL; /* all null: as an absent column, by the track rule */
        }
        radix[k] = col ? col->dict_n + 1 : 1; /* entry dict_n: null */
        dict[k] = col ? col->dict_id : 0;
        idx[k] = col ? col->dict_index : NULL;
        if (radix[k] > COMBO_MAX / size)
            return false;
        same = same && c->radix[k] == radix[k] && c->dict_id[k] == dict[k];
        size *= radix[k];
    }
    if (same)
        return true;
    if (size > c->cap) {
        uint32_t *ids = realloc(c->ids, size * sizeof *ids);
        if (!ids)
            return false;
        c->ids = ids;
        c->cap = size;
    }
    memset(c->ids, 0, size * sizeof *c->ids);
    for (size_t k = 0, stride = 1; k < w->source.n; k++) {
        c->radix[k] = radix[k];
        c->dict_id[k] = dict[k];
        c->stride[k] = stride;
        stride *= radix[k];
    }
    c->valid = true;
    return true;
}

int nx_window_next(nx_window *w, nx_window_batch *out, nx_error *err)
{
    const nxpq_batch *b;
    int rc = nx_profile_scan_next(w->scan, &b, err);
    if (rc <= 0)
        return rc;
    if (b->n_rows > UINT32_MAX) {
        nx_error_set(err, "%s: batch of %zu rows is too large", w->info->table, b->n_rows);
        return -1;
    }
    if (ensure_buffers(w, b->n_rows) < 0) {
        nx_error_set(err, "%s: out of memory in a window query", w->info->table);
        return -1;
    }
    const nxpq_column_data *cs = &b->columns[w->start_i];
    const nxpq_column_data *ce = w->end_i >= 0 ? &b->columns[w->end_i] : NULL;
    size_t n = 0;
    const uint32_t *idx[NX_TRACK_MAX_SOURCES];
    bool combo = combo_ready(w, b, idx);
    for (size_t i = 0; i < b->n_rows; i++) {
        int64_t s, e;
        if (!nx_column_int(cs, i, &s))
            continue;
        if (ce) {
            if (!nx_column_int(ce, i, &e) || e < w->start || s > w->end)
                continue;
        } else {
            if (s < w->start || s > w->end)
                continue;
            e = s;
        }
        uint32_t *slot = NULL;
        if (combo) {
            size_t key = 0;
            for (size_t k = 0; k < w->source.n; k++)
                if (idx[k])
                    key += idx[k][i] * w->combo.stride[k];
            slot = &w->combo.ids[key];
        }
        uint32_t id;
        if (slot && *slot) {
            id = *slot - 1;
        } else {
            int64_t got = row_track(w, b, i);
            if (got < 0) {
                nx_error_set(err, "%s: out of memory interning track names", w->info->table);
                return -1;
            }
            id = (uint32_t)got;
            if (slot)
                *slot = id + 1;
        }
        w->rows[n] = (uint32_t)i;
        w->starts[n] = s;
        w->ends[n] = e;
        w->track_ids[n] = id;
        n++;
    }
    *out = (nx_window_batch){.batch = b,
                             .n_rows = n,
                             .rows = w->rows,
                             .start = w->starts,
                             .end = w->ends,
                             .track = w->track_ids,
                             .file = nx_profile_scan_file(w->scan)};
    return 1;
}

void nx_window_stats(const nx_window *w, nxpq_scan_stats *out) { nx_profile_scan_get_stats(w->scan, out); }

size_t nx_window_track_count(const nx_window *w) { return w->tracks.n; }

const char *nx_window_track_name(const nx_window *w, uint32_t id, size_t *len)
{
    if (id >= w->tracks.n) {
        if (len)
            *len = 0;
        return "";
    }
    if (len)
        *len = w->tracks.lens[id];
    return w->tracks.names[id];
}

/* --------------------------------------------------------------- sampling -- */

typedef struct slot {
    int64_t start, end, ordinal; /* ordinal < 0: empty */
    uint32_t tag;
} slot;

struct nx_sampler {
    int64_t start, end;
    uint32_t width;
    unsigned __int128 len; /* end - start + 1 */
    bool narrow;           /* (len + 1) * width fits 64 bits: the bucket arithmetic needs no 128-bit division */
    /* The last bucket computed and its start times [cache_lo, cache_hi): events come
     * in start order, so consecutive events nearly always share a bucket, and the
     * 128-bit division is done only when a boundary is crossed. */
    uint32_t cache_b;
    int64_t cache_lo, cache_hi;
    slot **tracks;         /* per track id: width slots, or NULL until seen */
    size_t n_tracks;
    size_t n_rows;         /* slot rows allocated */
    nx_budget *budget;     /* NULL: none (nx_sampler_set_budget) */
    bool over_budget;      /* a row was refused by the budget */
    nx_sample *result;
};

nx_sampler *nx_sampler_new(int64_t start, int64_t end, uint32_t width, nx_error *err)
{
    if (width == 0 || start > end) {
        nx_error_set(err, "sampling needs width >= 1 and start <= end");
        return NULL;
    }
    nx_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        nx_error_set(err, "out of memory creating a sampler");
        return NULL;
    }
    s->start = start;
    s->end = end;
    s->width = width;
    s->len = (unsigned __int128)((__int128)end - (__int128)start) + 1;
    s->narrow = s->len < UINT64_MAX / width;   /* len + 1 <= UINT64_MAX / width */
    s->cache_lo = 1; /* empty cache: lo > hi */
    s->cache_hi = 0;
    return s;
}

void nx_sampler_free(nx_sampler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_tracks; i++)
        free(s->tracks[i]);
    nx_budget_give(s->budget, (uint64_t)s->n_rows * s->width * sizeof(slot));
    free(s->tracks);
    free(s->result);
    free(s);
}

void nx_sampler_set_budget(nx_sampler *s, nx_budget *b)
{
    s->budget = b;
}

bool nx_sampler_over_budget(const nx_sampler *s)
{
    return s->over_budget;
}

uint32_t nx_sampler_bucket(const nx_sampler *s, int64_t ts)
{
    if (ts < s->start)
        ts = s->start;
    if (ts > s->end)
        ts = s->end;
    unsigned __int128 off = (unsigned __int128)((__int128)ts - (__int128)s->start);
    if (s->narrow)
        return (uint32_t)((uint64_t)off * s->width / (uint64_t)s->len);
    return (uint32_t)(off * s->width / s->len);
}

/* Start offset (from s->start) of bucket b's first ns: the least off with
 * floor(off * width / len) >= b, i.e. ceil(b * len / width). */
static unsigned __int128 bucket_first(const nx_sampler *s, uint64_t b)
{
    if (s->narrow)   /* b <= width: b * len + width - 1 < (len + 1) * width */
        return ((uint64_t)b * (uint64_t)s->len + s->width - 1) / s->width;
    return ((unsigned __int128)b * s->len + s->width - 1) / s->width;
}

void nx_sampler_bucket_range(const nx_sampler *s, uint32_t b, int64_t *lo, int64_t *hi)
{
    *lo = b == 0 ? INT64_MIN : (int64_t)((__int128)s->start + (__int128)bucket_first(s, b));
    *hi = b + 1 >= s->width ? INT64_MAX : (int64_t)((__int128)s->start + (__int128)bucket_first(s, (uint64_t)b + 1) - 1);
}

/* nx_sampler_bucket through the one-bucket cache (same result, fewer divisions). */
static inline uint32_t bucket_cached(nx_sampler *s, int64_t ts)
{
    if (ts >= s->cache_lo && ts < s->cache_hi)
        return s->cache_b;
    uint32_t b = nx_sampler_bucket(s, ts);
    /* Bucket b holds the (clamped) starts [start + first(b), start + first(b + 1)); the
     * cache keeps only the part that needs no clamping. */
    unsigned __int128 lo = bucket_first(s, b), hi = bucket_first(s, (uint64_t)b + 1);
    s->cache_b = b;
    s->cache_lo = (int64_t)((__int128)s->start + (__int128)lo);
    __int128 h = (__int128)s->start + (__int128)hi; /* <= end + 1, may exceed INT64_MAX */
    s->cache_hi = h > INT64_MAX ? INT64_MAX : (int64_t)h;
    return b;
}

/* Whether event a beats the incumbent b (window.h: longest, then earliest start,
 * then earliest row). */
static inline bool beats(int64_t as, int64_t ae, int64_t ao, const slot *b)
{
    __int128 da = (__int128)ae - as, db = (__int128)b->end - b->start;
    if (da != db)
        return da > db;
    if (as != b->start)
        return as < b->start;
    return ao < b->ordinal;
}

/* The slot row of `track`, allocated (all empty) when the track is first seen. */
static slot *track_slots(nx_sampler *s, uint32_t track, nx_error *err)
{
    if (track >= s->n_tracks) {
        size_t n = (size_t)track + 1;
        slot **g = realloc(s->tracks, n * sizeof *g);
        if (!g) {
            nx_error_set(err, "out of memory sampling");
            return NULL;
        }
        for (size_t i = s->n_tracks; i < n; i++)
            g[i] = NULL;
        s->tracks = g;
        s->n_tracks = n;
    }
    slot *row = s->tracks[track];
    if (!row) {
        uint64_t bytes = (uint64_t)s->width * sizeof *row;
        if (!nx_budget_take(s->budget, bytes)) {
            s->over_budget = true;
            nx_error_set(err,
                           "sampling needs more than the query memory budget of %llu MiB (%u pixel buckets for each of "
                           "more than %zu tracks and depth levels): narrow the window, lower the width or ask for "
                           "fewer tables",
                           (unsigned long long)(s->budget->limit >> 20), s->width, s->n_rows);
            return NULL;
        }
        row = malloc((size_t)bytes);
        if (!row) {
            nx_budget_give(s->budget, bytes);
            nx_error_set(err, "out of memory sampling (%u buckets)", s->width);
            return NULL;
        }
        s->n_rows++;
        for (uint32_t i = 0; i < s->width; i++)
            row[i].ordinal = -1;
        s->tracks[track] = row;
    }
    return row;
}

int nx_sampler_offer(nx_sampler *s, uint32_t track, int64_t start, int64_t end, int64_t ordinal, uint32_t tag,
                     nx_error *err)
{
    slot *row = track < s->n_tracks && s->tracks[track] ? s->tracks[track] : track_slots(s, track, err);
    if (!row)
        return -1;
    slot *sl = &row[bucket_cached(s, start)];
    if (sl->ordinal < 0 || beats(start, end, ordinal, sl))
        *sl = (slot){start, end, ordinal, tag};
    return 0;
}

int nx_sampler_add(nx_sampler *s, const nx_window_batch *b, nx_error *err)
{
    int64_t base = nx_row_ordinal(b->file, b->batch->first_row);
    for (size_t k = 0; k < b->n_rows; k++) {
        uint32_t track = b->track[k];
        slot *row = track < s->n_tracks && s->tracks[track] ? s->tracks[track] : track_slots(s, track, err);
        if (!row)
            return -1;
        int64_t st = b->start[k], en = b->end[k], ord = base + b->rows[k];
        slot *sl = &row[bucket_cached(s, st)];
        if (sl->ordinal < 0 || beats(st, en, ord, sl))
            *sl = (slot){st, en, ord, 0};
    }
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    int64_t x = ((const nx_sample *)a)->ordinal, y = ((const nx_sample *)b)->ordinal;
    return x < y ? -1 : x > y;
}

const nx_sample *nx_sampler_result(nx_sampler *s, size_t *n, nx_error *err)
{
    size_t count = 0;
    for (size_t t = 0; t < s->n_tracks; t++)
        if (s->tracks[t])
            for (uint32_t i = 0; i < s->width; i++)
                count += s->tracks[t][i].ordinal >= 0;
    *n = 0;
    free(s->result);
    s->result = NULL;
    if (count == 0)
        return NULL;
    s->result = malloc(count * sizeof *s->result);
    if (!s->result) {
        nx_error_set(err, "out of memory collecting %zu samples", count);
        *n = SIZE_MAX;
        return NULL;
    }
    size_t k = 0;
    for (size_t t = 0; t < s->n_tracks; t++) {
        if (!s->tracks[t])
            continue;
        for (uint32_t i = 0; i < s->width; i++) {
            const slot *sl = &s->tracks[t][i];
            if (sl->ordinal >= 0)
                s->result[k++] = (nx_sample){(uint32_t)t, i, sl->start, sl->end, sl->ordinal, sl->tag};
        }
    }
    qsort(s->result, count, sizeof *s->result, cmp_sample);
    *n = count;
    return s->result;
}
