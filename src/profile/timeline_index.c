/* timeline_index.c — opening and reading the timeline index (format in timeline_index.h). */
#include "profile/timeline_index.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/nesting.h"
#include "profile/timeline_rules.h"
#include "util/bytes.h"

int nx_tlx_path(const char *dir, const char *table, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/.%s.nxtl", dir, table);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Whether [off, off + len) lies inside the file after the header, 8-aligned. */
static bool section_ok(const nx_tlx *x, uint64_t off, uint64_t len)
{
    return off >= NX_TLX_HEADER_BYTES && off % 8 == 0 && off <= x->size && len <= x->size - off;
}

bool nx_tlx_string_at(const nx_tlx *x, uint64_t id, const char **s, size_t *len)
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

/* Whether a run's blocks and superblocks lie in their sections. */
static bool run_ok(const nx_tlx *x, const tlx_run *r)
{
    return r->first_block <= x->n_blocks && r->n_blocks <= x->n_blocks - r->first_block && r->max_dur >= 0 &&
           r->n_blocks > 0 && r->events > 0 && r->first_super <= x->n_supers &&
           r->n_supers <= x->n_supers - r->first_super && r->n_supers > 0;
}

/* The depth-track section (header bytes 144..160), when there is one: each
 * run in range, grouped by track in the tracks' order, depths ascending, only
 * a track's last one at or past the fold (profile/nesting.h NX_NESTING_LEVELS,
 * so a track has at most that many), and each track's events the sum of its
 * depth tracks'. */
static bool depth_tracks_ok(nx_tlx *x, const unsigned char *h)
{
    uint64_t off = nx_get_u64(h + 144), n = nx_get_u64(h + 152);
    if (off == 0)
        return n == 0;
    if (n > UINT64_MAX / sizeof(tlx_depth_track) || !section_ok(x, off, n * sizeof(tlx_depth_track)))
        return false;
    x->has_depth = true;
    x->depth_tracks = (const tlx_depth_track *)(h + off);
    x->n_depth_tracks = n;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        const tlx_depth_track *d = &x->depth_tracks[i];
        const tlx_depth_track *prev = i ? d - 1 : NULL;
        bool in_order = prev ? (d->track == prev->track ? d->depth > prev->depth : d->track == prev->track + 1)
                             : d->track == 0;
        if (!in_order || d->track >= x->n_tracks || !run_ok(x, &d->r))
            return false;
        sum = prev && prev->track == d->track ? sum + d->r.events : d->r.events;
        bool last = i + 1 == n || x->depth_tracks[i + 1].track != d->track;
        if ((last && sum != x->tracks[d->track].r.events) || (!last && d->depth >= NX_NESTING_LEVELS - 1))
            return false;
    }
    return n ? x->depth_tracks[n - 1].track + 1 == x->n_tracks : x->n_tracks == 0;   /* every track has some */
}

/* depth_first: where each track's depth tracks begin (depth_tracks_ok has
 * checked that every track has some, in order). */
static bool depth_index(nx_tlx *x)
{
    if (!x->has_depth)
        return true;
    if (!(x->depth_first = calloc((size_t)x->n_tracks + 1, sizeof *x->depth_first)))
        return false;
    for (uint64_t i = 0; i < x->n_depth_tracks; i++)
        x->depth_first[x->depth_tracks[i].track + 1]++;
    for (uint32_t t = 0; t < x->n_tracks; t++)
        x->depth_first[t + 1] += x->depth_first[t];
    return true;
}

/* The header's sections, each bounds-checked; false (and *why) when malformed.
 * Blocks are checked where a query decodes them (opening touches no block, so it
 * costs the same at any profile size). */
static bool parse(nx_tlx *x, nx_error *why)
{
    const unsigned char *h = x->map;
#define BAD(...) (nx_error_set(why, __VA_ARGS__), false)
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
        if (!run_ok(x, &tr->r) || !nx_tlx_string_at(x, tr->name, &s, &len))
            return BAD("track %u: blocks or name out of range", t);
    }
    if (!depth_tracks_ok(x, h))
        return BAD("depth tracks malformed (out of range, out of order, or not adding up to their tracks)");
    for (uint32_t l = 0; l < x->n_labels; l++) {
        const char *s;
        size_t len;
        if (!nx_tlx_string_at(x, x->labels[2 * l], &s, &len) || x->labels[2 * l + 1] > 1)
            return BAD("label %u malformed", l);
    }
    return true;
#undef BAD
}

/* Whether the table's Parquet files are the ones the index was written for:
 * same names, sizes, footer lengths and row counts. */
static bool matches_files(const nx_tlx *x, const char *dir, const char *table, nx_error *why)
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
                return nx_error_set(why, "stale: %s exists", path), false;
            break;
        }
        if (one)
            snprintf(path, sizeof path, "%s/%s.parquet", dir, table);
        else
            snprintf(path, sizeof path, "%s/%s_%u.parquet", dir, table, i);
        const unsigned char *f = x->files + (size_t)i * 24;
        uint64_t size = nx_get_u64(f), n = nx_get_u64(f + 8);
        unsigned char tail[8];
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size && size >= 8 &&
                  pread(fd, tail, 8, (off_t)(size - 8)) == 8 && nx_get_u32(tail) == nx_get_u32(f + 16) &&
                  memcmp(tail + 4, "PAR1", 4) == 0;
        if (fd >= 0)
            close(fd);
        if (!ok)
            return nx_error_set(why, "stale: %s differs from the indexed file", path), false;
        rows += n;
    }
    if (rows != x->rows)
        return nx_error_set(why, "files hold %llu rows, the index %llu", (unsigned long long)rows,
                        (unsigned long long)x->rows),
               false;
    return true;
}

static void tlx_unmap(nx_tlx *x)
{
    nx_file_map_close(x->file);
    free(x->file_first);
    free(x->depth_first);
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
    return c->x && !nx_tlx_changed(c->x) && c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
           c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
           strcmp(c->path, path) == 0;
}

/* Checks the index x maps (parse) and fills file_first: 0 (*out = x), else x is
 * released and 1 (malformed, *why) or -1 (out of memory). */
static int tlx_check(nx_tlx *x, nx_tlx **out, nx_error *why)
{
    bool parsed = parse(x, why);
    if (nx_tlx_changed(x))
        nx_error_set(why, "%s", NX_FILE_MAP_CHANGED);
    if (!parsed || nx_tlx_changed(x)) {
        tlx_unmap(x);
        return 1;
    }
    if (!(x->file_first = calloc((size_t)x->n_files + 1, sizeof *x->file_first)) || !depth_index(x)) {
        tlx_unmap(x);
        return -1;
    }
    /* The files' rows must add up to the index's rows (nx_tlx_nesting indexes the
     * nesting section, one record per row, by them). */
    bool wrapped = false;
    for (uint32_t i = 0; i < x->n_files; i++)
        wrapped |= __builtin_add_overflow(x->file_first[i], nx_get_u64(x->files + (size_t)i * 24 + 8),
                                          &x->file_first[i + 1]);
    if (wrapped || x->file_first[x->n_files] != x->rows) {
        if (wrapped)
            nx_error_set(why, "its files' row counts exceed 2^64");
        else
            nx_error_set(why, "its files hold %llu rows, the index %llu",
                     (unsigned long long)x->file_first[x->n_files], (unsigned long long)x->rows);
        tlx_unmap(x);
        return 1;
    }
    *out = x;
    return 0;
}

/* Maps and checks the index file open at fd. */
static int tlx_map(int fd, const struct stat *st, const char *path, nx_tlx **out, nx_error *why)
{
    if (st->st_size < (off_t)NX_TLX_HEADER_BYTES)
        return nx_error_set(why, "%s: too short", path), 1;
    nx_tlx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    x->size = (size_t)st->st_size;
    if (!(x->file = nx_file_map_open(fd, x->size))) {
        free(x);
        return nx_error_set(why, "%s: cannot map: %s", path, strerror(errno)), 1;
    }
    x->map = nx_file_map_data(x->file);
    return tlx_check(x, out, why);
}

int nx_tlx_open(const char *profile_dir, const char *table, nx_tlx **out, nx_error *why)
{
    char path[4096];
    *out = NULL;
    if (nx_tlx_path(profile_dir, table, path, sizeof path) != 0)
        return nx_error_set(why, "path too long"), 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return nx_error_set(why, "%s: %s", path, errno == ELOOP ? "a symbolic link (not followed)" : strerror(errno)), 1;
    struct stat st;
    const char *bad = fstat(fd, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
    if (bad) {
        close(fd);
        return nx_error_set(why, "%s: %s", path, bad), 1;
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
        int rc = tlx_map(fd, &st, path, &x, why);
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
    if (!matches_files(x, profile_dir, table, why)) {
        nx_tlx_close(x);
        return 1;
    }
    *out = x;
    return 0;
}

int nx_tlx_open_buffer(const void *data, size_t size, const char *profile_dir, const char *table, nx_tlx **out,
                       nx_error *why)
{
    *out = NULL;
    if ((uintptr_t)data % 8 != 0)
        return nx_error_set(why, "buffer not 8-byte aligned"), 1;
    nx_tlx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    x->map = data;
    x->size = size;
    int rc = tlx_check(x, &x, why);
    if (rc != 0)
        return rc;
    if (profile_dir && !matches_files(x, profile_dir, table, why)) {
        tlx_unmap(x);
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

bool nx_tlx_changed(const nx_tlx *x)
{
    return x->file && nx_file_map_damaged(x->file);
}

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
    nx_tlx_string_at(x, tr->name, name, len);   /* checked at open */
    *events = tr->r.events;
    *first = x->blocks[tr->r.first_block].s.first_start;
    *last = tr->r.max_end;
}

bool nx_tlx_track_max_depth(const nx_tlx *x, size_t i, uint32_t *depth)
{
    if (!x->has_depth || !x->depth_first || i >= x->n_tracks || x->depth_first[i] == x->depth_first[i + 1])
        return false;
    *depth = x->depth_tracks[x->depth_first[i + 1] - 1].depth;   /* depths ascend per track */
    return true;
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
        if (nx_tlx_string_at(x, x->labels[2 * l], &s, &len) && len == strlen(name) && memcmp(s, name, len) == 0)
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
        return v >= 0 && nx_tlx_string_at(x, (uint64_t)v, s, len);
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

/* ------------------------------------------------------- block decoding -- */

uint32_t nx_tlx_block_minis(const unsigned char *data, uint64_t data_len, const nx_tlx_block *k, nx_tlx_mini *m)
{
    if (k->data_off > data_len || k->data_len > data_len - k->data_off || k->s.n_events > NX_TLX_BLOCK_EVENTS ||
        k->s.n_events == 0)
        return 0;
    const unsigned char *p = data + k->data_off, *e = p + k->data_len;
    uint32_t n_minis = (k->s.n_events + NX_TLX_MINI_EVENTS - 1) / NX_TLX_MINI_EVENTS;
    uint64_t len[NX_TLX_BLOCK_MINIS];
    for (uint32_t j = 0; j < n_minis; j++) {
        uint64_t v[8];
        for (int f = 0; f < 8; f++)
            if (!nx_tlx_varint(&p, e, &v[f]))
                return 0;
        m[j].first = (int64_t)((uint64_t)k->s.first_start + v[0]);
        m[j].last = (int64_t)((uint64_t)m[j].first + v[1]);
        m[j].first_row = k->s.first_row + v[2];
        m[j].best_start = (int64_t)((uint64_t)m[j].first + v[3]);
        m[j].best_end = (int64_t)((uint64_t)m[j].best_start + (uint64_t)nx_tlx_unzigzag(v[4]));
        m[j].best_row = m[j].first_row + v[5];
        m[j].best_tuple = v[6];
        m[j].n = j + 1 < n_minis ? NX_TLX_MINI_EVENTS : k->s.n_events - j * NX_TLX_MINI_EVENTS;
        len[j] = v[7];
    }
    for (uint32_t j = 0; j < n_minis; j++) {
        if (len[j] > (uint64_t)(e - p))
            return 0;
        m[j].events = p;
        m[j].events_end = p += len[j];
    }
    return n_minis;
}
