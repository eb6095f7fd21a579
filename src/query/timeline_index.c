/* timeline_index.c — reading the timeline index and sampling from it (see timeline_index.h). */
#include "query/timeline_index.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/window.h"
#include "util/bytes.h"

static const struct {
    const char *table;
    const char *labels[NX_TLX_MAX_LABELS + 1];
} LABELS[] = {
    {"Instruction", {"opcode", "hlo_name", "raw_framework_id", "framework_name", NULL}},
    {"DmaPacketAggregated", {"transfer_bytes", "queue_type", NULL}},
    {"DmaPacket", {"transfer_bytes", NULL}},
    {"CcInstruction", {"description", NULL}},
    {"CcOp", {"operation", NULL}},
    {"SemaphoreUpdate", {"value", NULL}},
    {"SystemProfileEvents", {"name", "trace_event_source", NULL}},
};

const char *const *nx_timeline_labels(const char *table)
{
    for (size_t i = 0; i < sizeof LABELS / sizeof LABELS[0]; i++)
        if (strcmp(LABELS[i].table, table) == 0)
            return LABELS[i].labels;
    return NULL;
}

int nx_tlx_path(const char *dir, const char *table, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/.%s.nxtl", dir, table);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

typedef struct tlx_track {
    uint32_t name, reserved;
    uint64_t first_block, n_blocks;
    int64_t max_dur;
    uint64_t events;
    int64_t max_end;
    uint64_t first_super, n_supers;
} tlx_track;

struct nx_tlx {
    const unsigned char *map;
    size_t size;
    uint64_t rows;
    uint64_t *file_first;           /* per file: the table row of its first row (n_files + 1) */
    uint32_t n_files, n_tracks, n_labels, n_tuples, n_strings, flags;
    const unsigned char *data;
    uint64_t data_len;
    const unsigned char *files;     /* per file: size, rows, footer length (24 bytes) */
    const tlx_track *tracks;
    const nx_tlx_block *blocks;
    uint64_t n_blocks;
    const nx_tlx_super *supers;
    uint64_t n_supers;
    const uint32_t *labels;         /* per label: name string, kind */
    const int64_t *tuples;          /* per tuple: null mask, then n_labels values */
    const uint64_t *strings;        /* per string: offset, length into string_bytes */
    const char *string_bytes;
    uint64_t string_bytes_len;
    const nx_tlx_nest *nest;        /* per table row, or NULL */
};

/* Whether [off, off + len) lies inside the file after the header, 8-aligned. */
static bool section_ok(const nx_tlx *x, uint64_t off, uint64_t len)
{
    return off >= NX_TLX_HEADER_BYTES && off % 8 == 0 && off <= x->size && len <= x->size - off;
}

static bool string_at(const nx_tlx *x, uint64_t id, const char **s, size_t *len)
{
    if (id >= x->n_strings)
        return false;
    uint64_t off = x->strings[2 * id], n = x->strings[2 * id + 1];
    if (off > x->string_bytes_len || n > x->string_bytes_len - off)
        return false;
    *s = x->string_bytes + off;
    *len = (size_t)n;
    return true;
}

/* The header's sections, each bounds-checked; false (and *why) when malformed.
 * Blocks are checked where a query decodes them (opening touches no block, so it
 * costs the same at any profile size). */
static bool parse(nx_tlx *x, char *why, size_t why_len)
{
    const unsigned char *h = x->map;
#define BAD(...) (snprintf(why, why_len, __VA_ARGS__), false)
    if (x->size < NX_TLX_HEADER_BYTES || memcmp(h, NX_TLX_MAGIC, 8) != 0)
        return BAD("not a timeline index (size %zu or magic)", x->size);
    if (nx_get_u32(h + 8) != NX_TLX_VERSION)
        return BAD("version %u, this nxprof reads version %u (`nxprof index PROFILE_DIR` rebuilds it)",
                   nx_get_u32(h + 8), NX_TLX_VERSION);
    if (nx_get_u32(h + 12) != NX_TLX_BLOCK_EVENTS)
        return BAD("block size %u, expected %u", nx_get_u32(h + 12), NX_TLX_BLOCK_EVENTS);
    x->rows = nx_get_u64(h + 16);
    x->n_files = nx_get_u32(h + 32);
    x->n_tracks = nx_get_u32(h + 36);
    x->n_labels = nx_get_u32(h + 40);
    x->n_tuples = nx_get_u32(h + 44);
    uint64_t data_off = NX_TLX_HEADER_BYTES, supers_off = nx_get_u64(h + 56), files_off = nx_get_u64(h + 72),
             tracks_off = nx_get_u64(h + 80), blocks_off = nx_get_u64(h + 88), labels_off = nx_get_u64(h + 96), tuples_off = nx_get_u64(h + 104),
             strings_off = nx_get_u64(h + 112);
    x->n_strings = nx_get_u32(h + 48);
    x->flags = nx_get_u32(h + 52);
    x->data_len = nx_get_u64(h + 64);
    if (nx_get_u64(h + 120) != x->size)
        return BAD("size %zu, header says %llu (truncated?)", x->size, (unsigned long long)nx_get_u64(h + 120));
    if (x->n_files == 0 || x->n_labels > NX_TLX_MAX_LABELS)
        return BAD("header: %u files, %u labels", x->n_files, x->n_labels);
    if (!section_ok(x, data_off, x->data_len) || !section_ok(x, files_off, (uint64_t)x->n_files * 24) ||
        !section_ok(x, tracks_off, (uint64_t)x->n_tracks * sizeof(tlx_track)) || blocks_off > supers_off ||
        !section_ok(x, blocks_off, supers_off - blocks_off) || (supers_off - blocks_off) % sizeof(nx_tlx_block) ||
        supers_off > labels_off || !section_ok(x, supers_off, labels_off - supers_off) ||
        (labels_off - supers_off) % sizeof(nx_tlx_super) ||
        !section_ok(x, labels_off, (uint64_t)x->n_labels * 8) ||
        !section_ok(x, tuples_off, (uint64_t)x->n_tuples * (1 + x->n_labels) * 8) ||
        !section_ok(x, strings_off, (uint64_t)x->n_strings * 16))
        return BAD("a section lies outside the file");
    x->data = h + data_off;
    x->files = h + files_off;
    x->tracks = (const tlx_track *)(h + tracks_off);
    x->blocks = (const nx_tlx_block *)(h + blocks_off);
    x->n_blocks = (supers_off - blocks_off) / sizeof(nx_tlx_block);
    x->supers = (const nx_tlx_super *)(h + supers_off);
    x->n_supers = (labels_off - supers_off) / sizeof(nx_tlx_super);
    x->labels = (const uint32_t *)(h + labels_off);
    x->tuples = (const int64_t *)(h + tuples_off);
    x->strings = (const uint64_t *)(h + strings_off);
    x->string_bytes = (const char *)h + strings_off + (uint64_t)x->n_strings * 16;
    x->string_bytes_len = x->size - (strings_off + (uint64_t)x->n_strings * 16);
    uint64_t nest_off = nx_get_u64(h + 128), nest_n = nx_get_u64(h + 136);
    if (nest_off) {
        if (nest_n != x->rows || nest_n > UINT64_MAX / sizeof(nx_tlx_nest) ||
            !section_ok(x, nest_off, nest_n * sizeof(nx_tlx_nest)))
            return BAD("nesting section of %llu records lies outside the file or does not match %llu rows",
                       (unsigned long long)nest_n, (unsigned long long)x->rows);
        x->nest = (const nx_tlx_nest *)(h + nest_off);
    }
    for (uint32_t t = 0; t < x->n_tracks; t++) {
        const tlx_track *tr = &x->tracks[t];
        const char *s;
        size_t len;
        if (tr->first_block > x->n_blocks || tr->n_blocks > x->n_blocks - tr->first_block ||
            !string_at(x, tr->name, &s, &len) || tr->max_dur < 0 || tr->n_blocks == 0 || tr->events == 0 ||
            tr->first_super > x->n_supers || tr->n_supers > x->n_supers - tr->first_super || tr->n_supers == 0)
            return BAD("track %u: blocks or name out of range", t);
    }
    for (uint32_t l = 0; l < x->n_labels; l++) {
        const char *s;
        size_t len;
        if (!string_at(x, x->labels[2 * l], &s, &len) || x->labels[2 * l + 1] > 1)
            return BAD("label %u malformed", l);
    }
    return true;
#undef BAD
}

/* Whether the table's Parquet files are the ones the index was written for:
 * same names, sizes, footer lengths and row counts. */
static bool matches_files(const nx_tlx *x, const char *dir, const char *table, char *why,
                          size_t why_len)
{
    char path[4096];
    struct stat st;
    uint64_t rows = 0;
    for (uint32_t i = 0; i <= x->n_files; i++) {
        bool one = x->n_files == 1;
        if (i == x->n_files) {   /* no further file of the table */
            snprintf(path, sizeof path, "%s/%s_%u.parquet", dir, table, one ? 0u : i);
            if (stat(path, &st) == 0 || (!one && (snprintf(path, sizeof path, "%s/%s.parquet", dir, table),
                                                   stat(path, &st) == 0)))
                return snprintf(why, why_len, "stale: %s exists", path), false;
            break;
        }
        if (one)
            snprintf(path, sizeof path, "%s/%s.parquet", dir, table);
        else
            snprintf(path, sizeof path, "%s/%s_%u.parquet", dir, table, i);
        const unsigned char *f = x->files + (size_t)i * 24;
        uint64_t size = nx_get_u64(f), n = nx_get_u64(f + 8);
        unsigned char tail[8];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        bool ok = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == size && size >= 8 &&
                  pread(fd, tail, 8, (off_t)(size - 8)) == 8 && nx_get_u32(tail) == nx_get_u32(f + 16) &&
                  memcmp(tail + 4, "PAR1", 4) == 0;
        if (fd >= 0)
            close(fd);
        if (!ok)
            return snprintf(why, why_len, "stale: %s differs from the indexed file", path), false;
        rows += n;
    }
    if (rows != x->rows)
        return snprintf(why, why_len, "files hold %llu rows, the index %llu", (unsigned long long)rows,
                        (unsigned long long)x->rows),
               false;
    return true;
}

static void tlx_unmap(nx_tlx *x)
{
    if (x->map)
        munmap((void *)x->map, x->size);
    free(x->file_first);
    free(x);
}

/* Open indexes are shared (a server queries the same profile again and again):
 * each maps once, its pages stay mapped between queries, and only the check of
 * the Parquet files is repeated. An entry is the index file's identity; a
 * re-published profile has new files, so new identities. */
#define CACHE_SLOTS 16
static struct cached {
    nx_tlx *x;
    char path[4096];
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    unsigned refs;
    uint64_t used;
} cache[CACHE_SLOTS];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const struct cached *c, const char *path, const struct stat *st)
{
    return c->x && c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
           c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
           strcmp(c->path, path) == 0;
}

/* Maps and checks the index file open at fd. */
static int tlx_map(int fd, const struct stat *st, const char *path, nx_tlx **out, char *why, size_t why_len)
{
    if (st->st_size < (off_t)NX_TLX_HEADER_BYTES)
        return snprintf(why, why_len, "%s: too short", path), 1;
    nx_tlx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    x->size = (size_t)st->st_size;
    void *m = mmap(NULL, x->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        free(x);
        return snprintf(why, why_len, "%s: cannot map: %s", path, strerror(errno)), 1;
    }
    x->map = m;
    if (!parse(x, why, why_len)) {
        tlx_unmap(x);
        return 1;
    }
    if (!(x->file_first = calloc((size_t)x->n_files + 1, sizeof *x->file_first))) {
        tlx_unmap(x);
        return -1;
    }
    for (uint32_t i = 0; i < x->n_files; i++)   /* sums past the table's rows fail matches_files */
        x->file_first[i + 1] = x->file_first[i] + nx_get_u64(x->files + (size_t)i * 24 + 8);
    *out = x;
    return 0;
}

int nx_tlx_open(const char *profile_dir, const char *table, nx_tlx **out, char *why, size_t why_len)
{
    char path[4096], scratch[256];
    if (!why) {
        why = scratch;
        why_len = sizeof scratch;
    }
    *out = NULL;
    if (nx_tlx_path(profile_dir, table, path, sizeof path) != 0)
        return snprintf(why, why_len, "path too long"), 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return snprintf(why, why_len, "%s: %s", path, strerror(errno)), 1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return snprintf(why, why_len, "%s: %s", path, strerror(errno)), 1;
    }
    nx_tlx *x = NULL;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS && !x; i++)
        if (same_file(&cache[i], path, &st)) {
            x = cache[i].x;
            cache[i].refs++;
            cache[i].used = ++cache_clock;
        }
    pthread_mutex_unlock(&cache_lock);
    if (!x) {
        int rc = tlx_map(fd, &st, path, &x, why, why_len);
        if (rc != 0) {
            close(fd);
            return rc;
        }
        pthread_mutex_lock(&cache_lock);
        int victim = -1;
        for (int i = 0; i < CACHE_SLOTS; i++) {
            if (!cache[i].x) {
                victim = i;
                break;
            }
            if (cache[i].refs == 0 && (victim < 0 || cache[i].used < cache[victim].used))
                victim = i;   /* the least recently used of those nobody holds */
        }
        if (victim >= 0) {   /* else every slot is in use: x stays private */
            if (cache[victim].x)
                tlx_unmap(cache[victim].x);
            cache[victim] = (struct cached){.x = x, .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
                                            .mtime = st.st_mtim, .refs = 1, .used = ++cache_clock};
            snprintf(cache[victim].path, sizeof cache[victim].path, "%s", path);
        }
        pthread_mutex_unlock(&cache_lock);
    }
    close(fd);
    /* The table's files are checked on every open: another tool may have rewritten them. */
    if (!matches_files(x, profile_dir, table, why, why_len)) {
        nx_tlx_close(x);
        return 1;
    }
    *out = x;
    return 0;
}

void nx_tlx_close(nx_tlx *x)
{
    if (!x)
        return;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].x == x) {
            cache[i].refs--;
            pthread_mutex_unlock(&cache_lock);
            return;
        }
    pthread_mutex_unlock(&cache_lock);
    tlx_unmap(x);
}

/* ------------------------------------------------------------ sampling -- */

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
        string_at(x, x->tracks[seen[i].track].name, &s, &len);   /* checked at open */
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

size_t nx_tlx_track_count(const nx_tlx *x)
{
    return x->n_tracks;
}

void nx_tlx_track_info(const nx_tlx *x, size_t i, const char **name, size_t *len, uint64_t *events, int64_t *first,
                       int64_t *last)
{
    const tlx_track *tr = &x->tracks[i];
    *name = "";
    *len = 0;
    string_at(x, tr->name, name, len);   /* checked at open */
    *events = tr->events;
    *first = x->blocks[tr->first_block].s.first_start;
    *last = tr->max_end;
}

bool nx_tlx_labels_complete(const nx_tlx *x)
{
    return !(x->flags & 1u);
}

int nx_tlx_label_find(const nx_tlx *x, const char *name)
{
    for (uint32_t l = 0; l < x->n_labels; l++) {
        const char *s;
        size_t len;
        if (string_at(x, x->labels[2 * l], &s, &len) && len == strlen(name) && memcmp(s, name, len) == 0)
            return (int)l;
    }
    return -1;
}

bool nx_tlx_label_is_string(const nx_tlx *x, int label)
{
    return x->labels[2 * label + 1] == 1;
}

bool nx_tlx_label_value(const nx_tlx *x, uint32_t tuple, int label, int64_t *iv, const char **s, size_t *len)
{
    if (tuple >= x->n_tuples)
        return false;
    const int64_t *t = x->tuples + (size_t)tuple * (1 + x->n_labels);
    if ((uint64_t)t[0] >> label & 1)
        return false;
    int64_t v = t[1 + label];
    if (nx_tlx_label_is_string(x, label))
        return v >= 0 && string_at(x, (uint64_t)v, s, len);
    *iv = v;
    return true;
}

/* -------------------------------------------------------------- nesting -- */

bool nx_tlx_has_nesting(const nx_tlx *x)
{
    return x->nest != NULL;
}

bool nx_tlx_nesting(const nx_tlx *x, int64_t ordinal, uint32_t *depth, int64_t *self_ns)
{
    uint64_t file = (uint64_t)ordinal >> 40, row = (uint64_t)ordinal & ((UINT64_C(1) << 40) - 1);
    if (!x->nest || ordinal < 0 || file >= x->n_files || row >= x->file_first[file + 1] - x->file_first[file])
        return false;
    const nx_tlx_nest *e = &x->nest[x->file_first[file] + row];
    if (e->set != 1)
        return false;
    *depth = e->depth;
    *self_ns = e->self_ns;
    return true;
}
