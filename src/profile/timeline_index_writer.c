/* timeline_index_writer.c — the timeline index, written beside its table (see
 * timeline_index_writer.h; the format is profile/timeline_index.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED */
#include "profile/timeline_index_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/nesting.h"
#include "profile/timeline_index.h"
#include "profile/timeline_rules.h"
#include "util/bytes.h"

/* Label tuples kept before the labels are declared incomplete (flag 1): a label
 * with a value per event (an id, say) would otherwise grow without bound. */
#define MAX_TUPLES (1u << 20)
#define FLAG_LABELS_INCOMPLETE 1u
/* Rows of nesting records gathered before a write (1 MiB). */
#define NEST_WINDOW 65536u

/* What a track's or a depth track's record and sections get: its finished
 * blocks and superblocks (superblocks' first_block counts within the run until
 * the file is finished). */
typedef struct wrun {
    int64_t max_dur, max_end;
    uint64_t n_events;
    nx_tlx_block *blocks;
    size_t n_blocks, cap_blocks;
    nx_tlx_super *supers;
    size_t n_supers, cap_supers;
} wrun;

/* A run being built: a track of the table, or at finish a depth track. */
typedef struct wtrack {
    uint32_t name;                   /* string id */
    uint32_t id;                     /* its place in the writer's tracks (the nesting pass's track) */
    wrun r;
    nx_tlx_block cur;                /* the block being filled */
    int64_t prev_start;
    uint64_t prev_row;
    /* The mini-block being filled (timeline_index.h): its events go to ev, its
     * summary to sum when it is full. */
    int64_t mini_first, mini_last, mini_best_start, mini_best_end;
    uint64_t mini_first_row, mini_best_row;
    uint32_t mini_best_tuple, mini_n;
    size_t mini_ev_at;               /* where its events begin in ev */
    size_t sum_len, ev_len;
    unsigned char sum[NX_TLX_BLOCK_EVENTS / NX_TLX_MINI_EVENTS * 80];
    unsigned char ev[NX_TLX_BLOCK_EVENTS * 40];
    nx_tlx_super sup;                /* the superblock being filled */
} wtrack;

typedef struct wdepth {              /* a finished depth track */
    uint32_t track, depth;
    wrun r;
} wdepth;

typedef struct strtab {              /* interned strings, ids dense from 0 */
    char *bytes;
    size_t len, cap;
    uint64_t *ent;                   /* per string: offset, length */
    uint32_t *track;                 /* per string: track index + 1, or 0 */
    size_t n, cap_ent, cap_track;
    uint32_t *slots;                 /* open addressing: id + 1, 0 empty */
    size_t n_slots;
} strtab;

struct nx_tlx_writer {
    char path[4096], tmp[4200], dir[4096];   /* written as tmp, renamed to path when finished */
    /* Tables whose events nest: the nesting pass (profile/nesting.h) hands each
     * row's depth and self time over out of order, so they go to a side file
     * at row x 16, copied into the index when it is finished. */
    nx_nesting *nest;
    char nest_tmp[4300];
    int nest_fd;                     /* -1: none */
    bool nest_failed;                /* a write to the side file failed */
    /* Records arrive nearly in row order (a row waits only for its nested
     * rows), so they gather in a window of NEST_WINDOW rows from win_lo,
     * written with one pwrite when a row beyond it comes (rows [win_lo,
     * win_hi) are filled, holes zero as in the file); a row below win_lo is
     * written alone. One pwrite per record cost a system call per row. */
    nx_tlx_nest *win;
    uint64_t win_lo, win_hi;
    const nx_schema_table *s;
    FILE *f;
    uint64_t data_len, rows, rows_per_file;
    bool broken;                     /* events out of start order: no index */
    nx_track_kind kind;
    int start_f, end_f;              /* field indices; -1 none */
    int src_f[NX_TRACK_MAX_SOURCES]; /* the track sources' field indices; -1 none */
    nx_track_source src;
    int label_f[NX_TLX_MAX_LABELS];
    uint32_t label_name[NX_TLX_MAX_LABELS], label_str[NX_TLX_MAX_LABELS];
    uint32_t n_labels, flags;
    wtrack **tracks;
    size_t n_tracks, cap_tracks;
    wdepth *depths;                  /* tables whose events nest: the depth tracks, built at finish */
    size_t n_depths, cap_depths;
    strtab st;
    int64_t *tuples;                 /* per tuple: null mask, n_labels values */
    size_t n_tuples, cap_tuples;
    /* When every label column is keyed by the same keys, a row's tuple is a
     * function of its key: per key, its tuple id + 1 (0: not seen yet). */
    uint32_t *key_tuple;
    size_t n_key_tuple;
    uint32_t *tslots;
    size_t n_tslots;
};

/* ------------------------------------------------------------ interning -- */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = mix(h ^ v);
        p += 8;
        n -= 8;
    }
    uint64_t v = 0;
    memcpy(&v, p, n);
    return mix(h ^ v);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int slots_rehash(uint32_t **slots, size_t *n_slots, size_t n, uint64_t (*hash_of)(const void *, size_t),
                        const void *ctx)
{
    size_t ns = *n_slots ? *n_slots * 2 : 256;
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (!sl)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t h = (size_t)hash_of(ctx, i) & (ns - 1);
        while (sl[h])
            h = (h + 1) & (ns - 1);
        sl[h] = (uint32_t)i + 1;
    }
    free(*slots);
    *slots = sl;
    *n_slots = ns;
    return 0;
}

static uint64_t string_hash(const void *ctx, size_t i)
{
    const strtab *t = ctx;
    return hash_bytes(t->bytes + t->ent[2 * i], (size_t)t->ent[2 * i + 1]);
}

/* The id of s[0..len), added when new; -1 when out of memory. */
static int64_t string_id(strtab *t, const char *s, size_t len)
{
    if (2 * (t->n + 1) > t->n_slots && slots_rehash(&t->slots, &t->n_slots, t->n, string_hash, t) != 0)
        return -1;
    uint64_t h = hash_bytes(s, len);
    size_t k = (size_t)h & (t->n_slots - 1);
    for (; t->slots[k]; k = (k + 1) & (t->n_slots - 1)) {
        uint32_t id = t->slots[k] - 1;
        if (t->ent[2 * id + 1] == len && memcmp(t->bytes + t->ent[2 * id], s, len) == 0)
            return id;
    }
    if (grow((void **)&t->bytes, &t->cap, t->len + len + 1, 1) != 0 ||
        grow((void **)&t->ent, &t->cap_ent, 2 * (t->n + 1), sizeof *t->ent) != 0 ||
        grow((void **)&t->track, &t->cap_track, t->n + 1, sizeof *t->track) != 0)
        return -1;
    memcpy(t->bytes + t->len, s, len);
    t->ent[2 * t->n] = t->len;
    t->ent[2 * t->n + 1] = len;
    t->track[t->n] = 0;
    t->len += len;
    t->slots[k] = (uint32_t)t->n + 1;
    return (int64_t)t->n++;
}

static uint64_t tuple_hash(const void *ctx, size_t i)
{
    const nx_tlx_writer *w = ctx;
    const int64_t *v = w->tuples + i * (1 + w->n_labels);
    uint64_t h = 0;
    for (uint32_t l = 0; l <= w->n_labels; l++)
        h = mix(h ^ (uint64_t)v[l]);
    return h;
}

/* The id of tuple v (null mask and values), added when new; -1 out of memory. */
static int64_t tuple_id(nx_tlx_writer *w, const int64_t *v)
{
    size_t width = 1 + w->n_labels;
    if (2 * (w->n_tuples + 1) > w->n_tslots &&
        slots_rehash(&w->tslots, &w->n_tslots, w->n_tuples, tuple_hash, w) != 0)
        return -1;
    uint64_t h = 0;
    for (size_t l = 0; l < width; l++)
        h = mix(h ^ (uint64_t)v[l]);
    size_t k = (size_t)h & (w->n_tslots - 1);
    for (; w->tslots[k]; k = (k + 1) & (w->n_tslots - 1)) {
        uint32_t id = w->tslots[k] - 1;
        if (memcmp(w->tuples + (size_t)id * width, v, width * sizeof *v) == 0)
            return id;
    }
    if (w->n_tuples >= MAX_TUPLES) {
        w->flags |= FLAG_LABELS_INCOMPLETE;
        return 0;
    }
    size_t cap = w->cap_tuples;
    if (grow((void **)&w->tuples, &cap, (w->n_tuples + 1) * width, sizeof *w->tuples) != 0)
        return -1;
    w->cap_tuples = cap;
    memcpy(w->tuples + w->n_tuples * width, v, width * sizeof *v);
    w->tslots[k] = (uint32_t)w->n_tuples + 1;
    return (int64_t)w->n_tuples++;
}

/* ------------------------------------------------------------ events -- */

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Appends the finished mini-block's summary (timeline_index.h's order). */
static void mini_finish(wtrack *t)
{
    if (t->mini_n == 0)
        return;
    unsigned char *p = t->sum + t->sum_len;
    p = put_varint(p, (uint64_t)t->mini_first - (uint64_t)t->cur.s.first_start);
    p = put_varint(p, (uint64_t)t->mini_last - (uint64_t)t->mini_first);
    p = put_varint(p, t->mini_first_row - t->cur.s.first_row);
    p = put_varint(p, (uint64_t)t->mini_best_start - (uint64_t)t->mini_first);
    p = put_varint(p, zigzag((int64_t)((uint64_t)t->mini_best_end - (uint64_t)t->mini_best_start)));
    p = put_varint(p, t->mini_best_row - t->mini_first_row);
    p = put_varint(p, t->mini_best_tuple);
    p = put_varint(p, t->ev_len - t->mini_ev_at);
    t->sum_len = (size_t)(p - t->sum);
    t->mini_n = 0;
}

static bool longer(int64_t start, int64_t end, int64_t bs, int64_t be);

static int super_finish(wtrack *t)
{
    if (t->sup.n_blocks == 0)
        return 0;
    if (grow((void **)&t->r.supers, &t->r.cap_supers, t->r.n_supers + 1, sizeof *t->r.supers) != 0)
        return -1;
    t->r.supers[t->r.n_supers++] = t->sup;
    t->sup.n_blocks = 0;
    return 0;
}

/* Adds a finished block's summary to the track's current superblock. */
static int super_add(wtrack *t, const nx_tlx_summary *b)
{
    nx_tlx_summary *s = &t->sup.s;
    if (t->sup.n_blocks == 0) {
        t->sup = (nx_tlx_super){.s = *b, .first_block = t->r.n_blocks - 1};
    } else {
        s->last_start = b->last_start;
        if (b->max_end > s->max_end)
            s->max_end = b->max_end;
        if (longer(b->best_start, b->best_end, s->best_start, s->best_end)) {
            s->best_start = b->best_start;
            s->best_end = b->best_end;
            s->best_row = b->best_row;
            s->best_tuple = b->best_tuple;
        }
        s->n_events += b->n_events;
    }
    return ++t->sup.n_blocks == NX_TLX_SUPER_BLOCKS ? super_finish(t) : 0;
}

static int block_finish(nx_tlx_writer *w, wtrack *t)
{
    if (t->cur.s.n_events == 0)
        return 0;
    mini_finish(t);
    if (grow((void **)&t->r.blocks, &t->r.cap_blocks, t->r.n_blocks + 1, sizeof *t->r.blocks) != 0)
        return -1;
    if (fwrite(t->sum, 1, t->sum_len, w->f) != t->sum_len || (t->ev_len && fwrite(t->ev, 1, t->ev_len, w->f) != t->ev_len))
        return -1;
    t->cur.data_off = w->data_len;
    t->cur.data_len = (uint32_t)(t->sum_len + t->ev_len);
    w->data_len += t->cur.data_len;
    t->r.blocks[t->r.n_blocks++] = t->cur;
    t->cur.s.n_events = 0;
    t->sum_len = t->ev_len = 0;
    return super_add(t, &t->r.blocks[t->r.n_blocks - 1].s);
}

/* Whether event (start, end) beats the incumbent by the sampling rule, given
 * that it comes later in start and row order: only a longer one does. */
static bool longer(int64_t start, int64_t end, int64_t bs, int64_t be)
{
    return (__int128)end - start > (__int128)be - bs;
}

static int event_add(nx_tlx_writer *w, wtrack *t, int64_t start, int64_t end, uint64_t row, uint32_t tuple)
{
    nx_tlx_summary *b = &t->cur.s;
    if (end < start) {   /* a query takes whole blocks as in the window from their starts alone */
        w->broken = true;
        return 0;
    }
    if (b->n_events == 0) {
        if (t->r.n_blocks && start < t->r.blocks[t->r.n_blocks - 1].s.last_start) {
            w->broken = true;
            return 0;
        }
        *b = (nx_tlx_summary){.first_start = start, .last_start = start, .max_end = end, .best_start = start,
                            .best_end = end, .first_row = row, .best_row = row, .best_tuple = tuple};
    } else if (start < t->prev_start) {
        w->broken = true;
        return 0;
    } else if (longer(start, end, b->best_start, b->best_end)) {
        b->best_start = start;
        b->best_end = end;
        b->best_row = row;
        b->best_tuple = tuple;
    }
    if (t->mini_n == 0) {
        t->mini_first = t->mini_best_start = t->prev_start = start;
        t->mini_best_end = end;
        t->mini_first_row = t->mini_best_row = t->prev_row = row;
        t->mini_best_tuple = tuple;
        t->mini_ev_at = t->ev_len;
    } else if (longer(start, end, t->mini_best_start, t->mini_best_end)) {
        t->mini_best_start = start;
        t->mini_best_end = end;
        t->mini_best_row = row;
        t->mini_best_tuple = tuple;
    }
    t->mini_last = start;
    int64_t dur = (int64_t)((uint64_t)end - (uint64_t)start);
    if (dur > t->r.max_dur)
        t->r.max_dur = dur;
    if (t->r.n_events++ == 0 || end > t->r.max_end)
        t->r.max_end = end;
    if (end > b->max_end)
        b->max_end = end;
    b->last_start = start;
    unsigned char *p = t->ev + t->ev_len;
    p = put_varint(p, (uint64_t)start - (uint64_t)t->prev_start);
    p = put_varint(p, zigzag(dur));
    p = put_varint(p, row - t->prev_row);
    p = put_varint(p, tuple);
    t->ev_len = (size_t)(p - t->ev);
    t->prev_start = start;
    t->prev_row = row;
    b->n_events++;
    if (++t->mini_n == NX_TLX_MINI_EVENTS)
        mini_finish(t);
    if (b->n_events == NX_TLX_BLOCK_EVENTS)
        return block_finish(w, t);
    return 0;
}

/* An event of the table: into its track's blocks and, for events that nest, the
 * nesting pass. */
static int event_put(nx_tlx_writer *w, wtrack *t, int64_t start, int64_t end, uint64_t row, uint32_t tuple)
{
    if (event_add(w, t, start, end, row, tuple) != 0)
        return -1;
    if (!w->nest || w->broken)
        return 0;
    int rc = nx_nesting_add(w->nest, t->id, start, end, row);
    if (rc > 0)
        w->broken = true;   /* out of start order: event_add has said so already */
    return rc < 0 || w->nest_failed ? -1 : 0;
}

/* The track of a name (string id), created when new; NULL out of memory. */
static wtrack *track_of(nx_tlx_writer *w, const char *name, size_t len)
{
    int64_t id = string_id(&w->st, name, len);
    if (id < 0)
        return NULL;
    if (w->st.track[id])
        return w->tracks[w->st.track[id] - 1];
    if (grow((void **)&w->tracks, &w->cap_tracks, w->n_tracks + 1, sizeof *w->tracks) != 0)
        return NULL;
    wtrack *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->name = (uint32_t)id;
    t->id = (uint32_t)w->n_tracks;
    w->tracks[w->n_tracks++] = t;
    w->st.track[id] = (uint32_t)w->n_tracks;
    return t;
}

static bool get_str(const nx_tlx_column *c, size_t i, const char **s, size_t *len)
{
    if (!c->s || !c->valid[i])
        return false;
    *s = c->s[i].ptr;
    *len = c->s[i].len;
    return true;
}

static bool get_int(const nx_tlx_column *c, size_t i, int64_t *v)
{
    if (!c->i || !c->valid[i])
        return false;
    *v = c->i[i];
    return true;
}

/* The keys every label column of this batch is keyed by, when they all share
 * one key array (*keys NULL otherwise); sizes the per-key memo. -1: out of memory. */
static int labels_keyed(nx_tlx_writer *w, const nx_tlx_column *cols, const uint32_t **keys, const uint8_t **key_valid)
{
    const nx_tlx_column *first = &cols[w->label_f[0]];
    for (uint32_t l = 0; l < w->n_labels; l++) {
        const nx_tlx_column *c = &cols[w->label_f[l]];
        if (!c->keys || c->keys != first->keys || c->n_keys != first->n_keys)
            return 0;
    }
    if (first->n_keys > w->n_key_tuple) {
        uint32_t *m = realloc(w->key_tuple, first->n_keys * sizeof *m);
        if (!m)
            return -1;
        memset(m + w->n_key_tuple, 0, (first->n_keys - w->n_key_tuple) * sizeof *m);
        w->key_tuple = m;
        w->n_key_tuple = first->n_keys;
    }
    *keys = first->keys;
    *key_valid = first->key_valid;
    return 0;
}

int nx_tlx_writer_add(nx_tlx_writer *w, const nx_tlx_column *cols, size_t n, nx_error *err)
{
    if (!w || w->broken) {
        if (w)
            w->rows += n;
        return 0;
    }
    /* Within one batch a string's address identifies it (program strings are
     * shared, copied ones live in the batch until it is flushed), so label strings
     * are looked up by address first; the cache lives for this batch only. */
    struct {
        const char *p;
        size_t len;
        int64_t id;
    } seen[64];
    memset(seen, 0, sizeof seen);
    const uint32_t *keys = NULL;
    const uint8_t *key_valid = NULL;
    if (w->n_labels && labels_keyed(w, cols, &keys, &key_valid) != 0)
        goto oom;
    /* One-entry cache: consecutive rows mostly share a track. */
    wtrack *last_t = NULL;
    const char *last_name = NULL;
    size_t last_len = 0;
    for (size_t i = 0; i < n && !w->broken; i++) {
        uint64_t row = w->rows + i;
        int64_t start, end;
        if (!get_int(&cols[w->start_f], i, &start))
            continue;   /* never kept by a window query */
        if (w->end_f >= 0) {
            if (!get_int(&cols[w->end_f], i, &end))
                continue;
        } else {
            end = start;
        }
        nx_track_values v;
        for (size_t k = 0; k < w->src.n; k++) {
            const nx_tlx_column *c = w->src_f[k] >= 0 ? &cols[w->src_f[k]] : NULL;
            v.ok[k] = c && (w->src.is_int[k] ? get_int(c, i, &v.i[k]) : get_str(c, i, &v.s[k], &v.len[k]));
        }
        char buf[NX_TRACK_BUF];
        size_t len;
        const char *name = nx_track_name(w->kind, &v, buf, &len);
        wtrack *t = last_t;
        if (!t || name == buf || !last_name || len != last_len || (name != last_name && memcmp(name, last_name, len) != 0)) {
            if (!(t = track_of(w, name, len)))
                goto oom;
            last_t = t;
            last_name = name == buf ? NULL : name;
            last_len = len;
        }
        uint32_t *memo = keys && key_valid[i] && keys[i] < w->n_key_tuple ? &w->key_tuple[keys[i]] : NULL;
        if (memo && *memo) {
            if (event_put(w, t, start, end, row, *memo - 1) != 0)
                goto oom;
            continue;
        }
        int64_t tuple[1 + NX_TLX_MAX_LABELS] = {0};
        for (uint32_t l = 0; l < w->n_labels; l++) {
            const nx_tlx_column *c = &cols[w->label_f[l]];
            const char *s;
            size_t sl;
            bool ok;
            if (w->label_str[l]) {
                ok = get_str(c, i, &s, &sl);
                if (ok) {
                    size_t h = ((uintptr_t)s >> 3 ^ (uintptr_t)s >> 11) & 63;
                    if (seen[h].p != s || seen[h].len != sl) {
                        seen[h].p = s;
                        seen[h].len = sl;
                        if ((seen[h].id = string_id(&w->st, s, sl)) < 0) {
                            seen[h].p = NULL;
                            goto oom;
                        }
                    }
                    tuple[1 + l] = seen[h].id;
                }
            } else {
                ok = get_int(c, i, &tuple[1 + l]);
            }
            if (!ok)
                tuple[0] |= (int64_t)1 << l;
        }
        int64_t id = tuple_id(w, tuple);
        if (id < 0 || event_put(w, t, start, end, row, (uint32_t)id) != 0)
            goto oom;
        if (memo)
            *memo = (uint32_t)id + 1;
    }
    w->rows += n;
    return 0;
oom:
    nx_error_set(err, "%s: timeline index %s: out of memory or write error", w->s->name, w->path);
    return -1;
}

/* ------------------------------------------------------------ open/close -- */

/* Why the last I/O call failed, for messages (a short write sets no errno). */
static const char *io_reason(void)
{
    return errno ? strerror(errno) : "short write";
}

/* Writes recs[0..n) at row `row` of the side file: false on failure. */
static bool nest_write(nx_tlx_writer *w, const nx_tlx_nest *recs, uint64_t row, uint64_t n)
{
    if (row > (uint64_t)INT64_MAX / sizeof *recs - n ||
        pwrite(w->nest_fd, recs, n * sizeof *recs, (off_t)(row * sizeof *recs)) != (ssize_t)(n * sizeof *recs)) {
        w->nest_failed = true;
        return false;
    }
    return true;
}

/* The window's filled rows to the side file; the window emptied. */
static int nest_flush(nx_tlx_writer *w)
{
    uint64_t n = w->win_hi - w->win_lo;
    if (n && !nest_write(w, w->win, w->win_lo, n))
        return -1;
    memset(w->win, 0, n * sizeof *w->win);
    w->win_hi = w->win_lo;
    return 0;
}

/* The nesting pass's output: the row's record at row x 16 of the side file,
 * through the window. */
static int nest_emit(void *ctx, uint64_t row, uint32_t depth, int64_t self_ns)
{
    nx_tlx_writer *w = ctx;
    nx_tlx_nest rec = {self_ns, depth, 1};
    if (row < w->win_lo)
        return nest_write(w, &rec, row, 1) ? 0 : -1;
    if (row - w->win_lo >= NEST_WINDOW) {
        if (nest_flush(w) != 0)
            return -1;
        w->win_lo = w->win_hi = row;
    }
    w->win[row - w->win_lo] = rec;
    if (row >= w->win_hi)
        w->win_hi = row + 1;
    return 0;
}

int nx_tlx_writer_open(const char *dir, const nx_schema_table *s, uint64_t rows_per_file, nx_tlx_writer **out,
                       nx_error *err)
{
    *out = NULL;
    const nx_timeline_info *info = nx_timeline_find(s->name);
    if (!info)
        return 0;
    nx_tlx_writer *w = calloc(1, sizeof *w);
    if (!w) {
        nx_error_set(err, "%s: out of memory", s->name);
        return -1;
    }
    w->s = s;
    w->rows_per_file = rows_per_file;
    w->kind = info->track;
    w->src = nx_track_sources(info->track);
    w->start_f = nx_schema_field_index(s, info->start_column);
    w->end_f = info->end_column ? nx_schema_field_index(s, info->end_column) : -1;
    for (size_t k = 0; k < w->src.n; k++)
        w->src_f[k] = nx_schema_field_index(s, w->src.col[k]);
    w->nest_fd = -1;
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    if (w->start_f < 0 || (info->end_column && w->end_f < 0)) {
        free(w);
        return 0;   /* the catalogue lacks the timing: nothing to index */
    }
    const char *const *labels = nx_timeline_labels(s->name);
    for (size_t l = 0; labels && labels[l] && w->n_labels < NX_TLX_MAX_LABELS; l++) {
        int f = nx_schema_field_index(s, labels[l]);
        if (f < 0)
            continue;   /* derived (framework_name) */
        nx_column_type ct = s->fields[f].column_type;
        bool is_str = ct == NX_COL_STRING, is_int = ct == NX_COL_INT64 || ct == NX_COL_INT32;
        if (!is_str && !is_int)
            continue;
        int64_t id = string_id(&w->st, labels[l], strlen(labels[l]));
        if (id < 0)
            goto oom;
        w->label_f[w->n_labels] = f;
        w->label_name[w->n_labels] = (uint32_t)id;
        w->label_str[w->n_labels++] = is_str;
    }
    errno = 0;
    if (nx_tlx_path(dir, s->name, w->path, sizeof w->path) != 0 ||
        snprintf(w->tmp, sizeof w->tmp, "%s.tmp-%ld", w->path, (long)getpid()) >= (int)sizeof w->tmp ||
        !(w->f = fopen(w->tmp, "w+b"))) {
        nx_error_set(err, "%s: cannot create its timeline index in %s: %s", s->name, dir, io_reason());
        nx_tlx_writer_close(w, false, NULL, 0, err);
        return -1;
    }
    if (info->nested) {
        snprintf(w->nest_tmp, sizeof w->nest_tmp, "%s.nest", w->tmp);
        if (!(w->nest = nx_nesting_new(nest_emit, w)) || !(w->win = calloc(NEST_WINDOW, sizeof *w->win)))
            goto oom;
        if ((w->nest_fd = open(w->nest_tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
            nx_error_set(err, "%s: cannot create %s: %s", s->name, w->nest_tmp, io_reason());
            nx_tlx_writer_close(w, false, NULL, 0, err);
            return -1;
        }
    }
    static const unsigned char zero[NX_TLX_HEADER_BYTES];
    if (fwrite(zero, 1, sizeof zero, w->f) != sizeof zero)
        goto io;
    *out = w;
    return 0;
io:
    nx_error_set(err, "%s: cannot write %s: %s", s->name, w->path, io_reason());
    nx_tlx_writer_close(w, false, NULL, 0, err);
    return -1;
oom:
    nx_error_set(err, "%s: out of memory", s->name);
    nx_tlx_writer_close(w, false, NULL, 0, err);
    return -1;
}

/* Pads the file to a multiple of 8 and returns the offset reached. */
static uint64_t align8(FILE *f, bool *ok)
{
    long at = ftell(f);
    static const unsigned char zero[8];
    if (at < 0) {
        *ok = false;
        return 0;
    }
    size_t pad = (size_t)((8 - at % 8) % 8);
    if (pad && fwrite(zero, 1, pad, f) != pad)
        *ok = false;
    return (uint64_t)at + pad;
}

static bool write_all(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n;
}

/* Per Parquet file of the table: size, rows, footer length. file_rows: each
 * file's rows, or NULL for files of rows_per_file rows (the last one fewer). */
static bool write_files(nx_tlx_writer *w, uint32_t n_files, const uint64_t *file_rows)
{
    for (uint32_t i = 0; i < n_files; i++) {
        char path[4200];
        if (n_files == 1)
            snprintf(path, sizeof path, "%s/%s.parquet", w->dir, w->s->name);
        else
            snprintf(path, sizeof path, "%s/%s_%u.parquet", w->dir, w->s->name, i);
        FILE *f = fopen(path, "rb");
        unsigned char rec[24] = {0}, tail[8];
        struct stat st;
        bool ok = f && fstat(fileno(f), &st) == 0 && st.st_size >= 8 && fseek(f, -8, SEEK_END) == 0 &&
                  fread(tail, 1, 8, f) == 8;
        if (f)
            fclose(f);
        if (!ok)
            return false;
        uint64_t rows = file_rows ? file_rows[i] : w->rows - (uint64_t)i * w->rows_per_file;
        nx_put_u64(rec, (uint64_t)st.st_size);
        nx_put_u64(rec + 8, file_rows || rows < w->rows_per_file ? rows : w->rows_per_file);
        memcpy(rec + 16, tail, 4);
        if (!write_all(w->f, rec, sizeof rec))
            return false;
    }
    return true;
}

/* The nesting section: the side file's records, then zeros up to one record
 * per row (rows the pass never saw: no start or end). */
static bool write_nesting(nx_tlx_writer *w)
{
    uint64_t need = w->rows * sizeof(nx_tlx_nest), done = 0;
    unsigned char buf[1 << 16];
    while (done < need) {
        size_t want = need - done < sizeof buf ? (size_t)(need - done) : sizeof buf;
        ssize_t got = pread(w->nest_fd, buf, want, (off_t)done);
        if (got < 0)
            return false;
        if (got == 0) {   /* past the side file's end: rows without values */
            memset(buf, 0, want);
            got = (ssize_t)want;
        }
        if (!write_all(w->f, buf, (size_t)got))
            return false;
        done += (uint64_t)got;
    }
    return true;
}

/* ---------------------------------------------------------- depth tracks -- */

/* The builder of sampling level `level` (< NX_NESTING_LEVELS) in pool, allocated when new; NULL out of memory. */
static wtrack *level_builder(wtrack **pool, uint32_t level)
{
    if (!pool[level])
        pool[level] = calloc(1, sizeof(wtrack));
    return pool[level];
}

/* The index file being written and the nesting side file, mapped read-only to
 * be read back. Pages read are dropped from the process every DROP_BLOCKS
 * blocks (they stay in the page cache): a track's rows are spread over the
 * whole side file, so without that a profile of N events would hold about
 * 16 N bytes of it resident (1.1 GiB at 71M events). */
typedef struct read_back {
    const unsigned char *file, *nest;
    uint64_t file_len, nest_len;
} read_back;

enum { DROP_BLOCKS = 64 };

static void drop_pages(const read_back *rb)
{
    if (rb->file)
        madvise((void *)rb->file, (size_t)rb->file_len, MADV_DONTNEED);
    if (rb->nest)
        madvise((void *)rb->nest, (size_t)rb->nest_len, MADV_DONTNEED);
}

/* Deals track t's events out by sampling level (profile/nesting.h
 * nx_nesting_level): decodes its blocks (the data section after the header of
 * rb->file) in start order, adds each event to the builder of its level (each
 * row's depth from rb->nest), then finishes the builders, levels ascending,
 * into depth tracks. A level's depth track carries its depth; the last
 * level's, which folds every deeper depth, the deepest of its events. At most
 * NX_NESTING_LEVELS builders, however deep the nesting. False on out of
 * memory, a write error or a record missing. */
static bool depth_split(nx_tlx_writer *w, uint32_t t, const read_back *rb, wtrack **pool)
{
    uint32_t deepest = 0;
    const wrun *tr = &w->tracks[t]->r;
    const unsigned char *data = rb->file + NX_TLX_HEADER_BYTES;
    uint64_t data_len = rb->file_len - NX_TLX_HEADER_BYTES, n_nest = rb->nest_len / sizeof(nx_tlx_nest);
    const nx_tlx_nest *nest = (const nx_tlx_nest *)rb->nest;
    for (size_t b = 0; b < tr->n_blocks; b++) {
        if (b % DROP_BLOCKS == DROP_BLOCKS - 1)
            drop_pages(rb);
        nx_tlx_mini m[NX_TLX_BLOCK_MINIS];
        uint32_t n_minis = nx_tlx_block_minis(data, data_len, &tr->blocks[b], m);
        if (n_minis == 0)
            return false;
        for (uint32_t j = 0; j < n_minis; j++) {
            int64_t start = m[j].first, end;
            uint64_t row = m[j].first_row, tuple;
            const unsigned char *q = m[j].events;
            for (uint32_t i = 0; i < m[j].n; i++) {
                if (!nx_tlx_event_next(&q, m[j].events_end, &start, &row, &end, &tuple) || row >= n_nest ||
                    nest[row].set != 1)
                    return false;
                uint32_t depth = nest[row].depth;
                wtrack *d = level_builder(pool, nx_nesting_level(depth));
                if (!d || event_add(w, d, start, end, row, (uint32_t)tuple) != 0 || w->broken)
                    return false;
                if (depth > deepest)
                    deepest = depth;
            }
        }
    }
    for (uint32_t level = 0; level < NX_NESTING_LEVELS; level++) {
        wtrack *d = pool[level];
        if (!d || d->r.n_events == 0)
            continue;
        if (block_finish(w, d) != 0 || super_finish(d) != 0 ||
            grow((void **)&w->depths, &w->cap_depths, w->n_depths + 1, sizeof *w->depths) != 0)
            return false;
        uint32_t depth = level == NX_NESTING_LEVELS - 1 ? deepest : level;
        w->depths[w->n_depths++] = (wdepth){t, depth, d->r};
        memset(d, 0, sizeof *d);   /* its run now belongs to the depth track */
    }
    return true;
}

/* Maps [0, len) of fd read-only (NULL when len is 0 or on failure). */
static const unsigned char *map_fd(int fd, uint64_t len)
{
    if (len == 0 || len > SIZE_MAX)
        return NULL;
    void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* The depth tracks of every track (timeline_index.h), once the nesting pass is
 * finished and every track's blocks are written: the tracks' data is read back
 * from the file being written, each row's depth from the side file. */
static bool build_depth_tracks(nx_tlx_writer *w)
{
    struct stat st;
    if (fflush(w->f) != 0 || fstat(w->nest_fd, &st) != 0)
        return false;
    uint64_t data_len = w->data_len, map_len = NX_TLX_HEADER_BYTES + data_len, nest_len = (uint64_t)st.st_size;
    const unsigned char *file = map_fd(fileno(w->f), map_len);
    const unsigned char *nest = map_fd(w->nest_fd, nest_len);
    read_back rb = {file, nest, map_len, nest_len};
    wtrack *pool[NX_NESTING_LEVELS] = {NULL};
    bool ok = w->n_tracks == 0 || (file && nest);
    for (uint32_t t = 0; t < w->n_tracks && ok; t++) {
        ok = depth_split(w, t, &rb, pool);
        drop_pages(&rb);
    }
    for (uint32_t d = 0; d < NX_NESTING_LEVELS; d++) {
        if (pool[d]) {
            free(pool[d]->r.blocks);
            free(pool[d]->r.supers);
        }
        free(pool[d]);
    }
    if (file)
        munmap((void *)file, (size_t)map_len);
    if (nest)
        munmap((void *)nest, (size_t)nest_len);
    return ok;
}

/* A run's record (the tracks and depth tracks sections): a and b, then the
 * run from byte 8. Its superblocks are pointed at its blocks' place in the
 * blocks section; *first and *first_super advance past its blocks and superblocks. */
static bool write_run(FILE *f, uint32_t a, uint32_t b, wrun *r, uint64_t *first, uint64_t *first_super)
{
    unsigned char rec[64] = {0};
    nx_put_u32(rec, a);
    nx_put_u32(rec + 4, b);
    nx_put_u64(rec + 8, *first);
    nx_put_u64(rec + 16, r->n_blocks);
    nx_put_u64(rec + 24, (uint64_t)r->max_dur);
    nx_put_u64(rec + 32, r->n_events);
    nx_put_u64(rec + 40, (uint64_t)r->max_end);
    nx_put_u64(rec + 48, *first_super);
    nx_put_u64(rec + 56, r->n_supers);
    for (size_t k = 0; k < r->n_supers; k++)
        r->supers[k].first_block += *first;
    *first += r->n_blocks;
    *first_super += r->n_supers;
    return write_all(f, rec, sizeof rec);
}

static bool finish_file(nx_tlx_writer *w, const uint64_t *file_rows, size_t n_file_rows)
{
    bool ok = true;
    for (size_t t = 0; t < w->n_tracks && ok; t++)
        ok = block_finish(w, w->tracks[t]) == 0 && super_finish(w->tracks[t]) == 0;
    if (!ok || (w->nest && (nx_nesting_finish(w->nest) != 0 || nest_flush(w) != 0 || w->nest_failed ||
                                 !build_depth_tracks(w))))
        return false;
    uint64_t data_len = w->data_len;
    uint32_t n_files = file_rows ? (uint32_t)n_file_rows
                       : w->rows <= w->rows_per_file ? 1
                                                     : (uint32_t)((w->rows + w->rows_per_file - 1) / w->rows_per_file);
    uint64_t files_off = align8(w->f, &ok);
    ok = ok && write_files(w, n_files, file_rows);
    uint64_t tracks_off = align8(w->f, &ok), first = 0, first_super = 0;
    for (size_t t = 0; t < w->n_tracks && ok; t++)
        ok = write_run(w->f, w->tracks[t]->name, 0, &w->tracks[t]->r, &first, &first_super);
    uint64_t depths_off = w->nest ? align8(w->f, &ok) : 0;
    for (size_t d = 0; d < w->n_depths && ok; d++)
        ok = write_run(w->f, w->depths[d].track, w->depths[d].depth, &w->depths[d].r, &first, &first_super);
    uint64_t blocks_off = align8(w->f, &ok);
    for (size_t t = 0; t < w->n_tracks && ok; t++)
        ok = write_all(w->f, w->tracks[t]->r.blocks, w->tracks[t]->r.n_blocks * sizeof(nx_tlx_block));
    for (size_t d = 0; d < w->n_depths && ok; d++)
        ok = write_all(w->f, w->depths[d].r.blocks, w->depths[d].r.n_blocks * sizeof(nx_tlx_block));
    uint64_t supers_off = align8(w->f, &ok);
    for (size_t t = 0; t < w->n_tracks && ok; t++)
        ok = write_all(w->f, w->tracks[t]->r.supers, w->tracks[t]->r.n_supers * sizeof(nx_tlx_super));
    for (size_t d = 0; d < w->n_depths && ok; d++)
        ok = write_all(w->f, w->depths[d].r.supers, w->depths[d].r.n_supers * sizeof(nx_tlx_super));
    uint64_t labels_off = align8(w->f, &ok);
    for (uint32_t l = 0; l < w->n_labels && ok; l++) {
        uint32_t rec[2] = {w->label_name[l], w->label_str[l]};
        ok = write_all(w->f, rec, sizeof rec);
    }
    uint64_t tuples_off = align8(w->f, &ok);
    ok = ok && write_all(w->f, w->tuples, w->n_tuples * (1 + w->n_labels) * sizeof *w->tuples);
    uint64_t nest_off = w->nest ? align8(w->f, &ok) : 0;
    ok = ok && (!w->nest || write_nesting(w));
    uint64_t strings_off = align8(w->f, &ok);
    ok = ok && write_all(w->f, w->st.ent, w->st.n * 2 * sizeof *w->st.ent) && write_all(w->f, w->st.bytes, w->st.len);
    long size = ftell(w->f);
    if (!ok || size < 0)
        return false;
    unsigned char h[NX_TLX_HEADER_BYTES] = {0};
    memcpy(h, NX_TLX_MAGIC, 8);
    nx_put_u32(h + 8, NX_TLX_VERSION);
    nx_put_u32(h + 12, NX_TLX_BLOCK_EVENTS);
    nx_put_u64(h + 16, w->rows);
    nx_put_u64(h + 24, w->rows_per_file);
    nx_put_u32(h + 32, n_files);
    nx_put_u32(h + 36, (uint32_t)w->n_tracks);
    nx_put_u32(h + 40, w->n_labels);
    nx_put_u32(h + 44, (uint32_t)w->n_tuples);
    nx_put_u32(h + 48, (uint32_t)w->st.n);
    nx_put_u32(h + 52, w->flags);
    nx_put_u64(h + 56, supers_off);
    nx_put_u64(h + 64, data_len);
    nx_put_u64(h + 72, files_off);
    nx_put_u64(h + 80, tracks_off);
    nx_put_u64(h + 88, blocks_off);
    nx_put_u64(h + 96, labels_off);
    nx_put_u64(h + 104, tuples_off);
    nx_put_u64(h + 112, strings_off);
    nx_put_u64(h + 120, (uint64_t)size);
    nx_put_u64(h + 128, nest_off);
    nx_put_u64(h + 136, w->nest ? w->rows : 0);
    nx_put_u64(h + 144, depths_off);
    nx_put_u64(h + 152, w->n_depths);
    return fseek(w->f, 0, SEEK_SET) == 0 && write_all(w->f, h, sizeof h);
}

int nx_tlx_writer_close(nx_tlx_writer *w, bool ok, const uint64_t *file_rows, size_t n_files, nx_error *err)
{
    if (!w)
        return 0;
    int rc = 0;
    bool keep = ok && w->rows > 0 && !w->broken && w->f;
    errno = 0;
    if (keep && !finish_file(w, file_rows, n_files)) {
        nx_error_set(err, "%s: cannot write its timeline index %s: %s", w->s->name, w->path, io_reason());
        keep = false;
        rc = -1;
    }
    if (w->f && fclose(w->f) != 0 && keep) {
        nx_error_set(err, "%s: cannot write its timeline index %s: %s", w->s->name, w->path, io_reason());
        keep = false;
        rc = -1;
    }
    if (keep && rename(w->tmp, w->path) != 0) {
        nx_error_set(err, "%s: cannot rename its timeline index into %s: %s", w->s->name, w->path, io_reason());
        keep = false;
        rc = -1;
    }
    if (!keep && w->tmp[0])
        unlink(w->tmp);
    if (w->nest_fd >= 0) {
        close(w->nest_fd);
        unlink(w->nest_tmp);
    }
    nx_nesting_free(w->nest);
    free(w->win);
    for (size_t t = 0; t < w->n_tracks; t++) {
        free(w->tracks[t]->r.blocks);
        free(w->tracks[t]->r.supers);
        free(w->tracks[t]);
    }
    free(w->tracks);
    for (size_t d = 0; d < w->n_depths; d++) {
        free(w->depths[d].r.blocks);
        free(w->depths[d].r.supers);
    }
    free(w->depths);
    free(w->st.bytes);
    free(w->st.ent);
    free(w->st.track);
    free(w->st.slots);
    free(w->tuples);
    free(w->tslots);
    free(w->key_tuple);
    free(w);
    return rc;
}
