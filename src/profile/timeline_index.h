/*
 * timeline_index.h — the timeline index: a per-table sidecar written at processing
 * time that answers a sampled window query (query/engine/window.h's rule) without reading the
 * Parquet files, so a whole-profile timeline costs milliseconds at any size.
 *
 * Why: at full zoom-out every page of a table holds a bucket's winner, so a scan
 * decodes the timing and track columns of every row (4.9M rows per 10M records).
 * The index keeps, per track, the events in start order in blocks of
 * NX_TLX_BLOCK_EVENTS with each block's first/last start, latest end and best
 * event (the rule's winner among its events). A query takes a whole block's best
 * when all of the block's starts fall into one bucket of the window, and decodes
 * the block's events only where a bucket boundary (or the window's edge) cuts
 * through it; superblocks of NX_TLX_SUPER_BLOCKS blocks do the same one level up. The result is exactly the scan's: the same winners (longest, then
 * earliest start, then earliest row), the same in-window count and the same track
 * order (first appearance in file order). It also carries each event's label
 * tuple (nx_timeline_labels), so the viewer's timeline needs no second pass.
 *
 * File: <profile>/.<Table>.nxtl (hidden: `glob("Table*.parquet")`, pyarrow, Spark
 * and DuckDB globs never see it). Little-endian, written by
 * src/profile/timeline_index_writer.c while the table is written:
 *
 *   header (160 bytes)
 *     0   magic "NXTLIDX1"
 *     8   u32 version (7)          12  u32 block_events (NX_TLX_BLOCK_EVENTS)
 *     16  u64 table rows (all files)
 *     24  u64 rows per file (the split limit it was written with; 0 unknown)
 *     32  u32 files                36  u32 tracks
 *     40  u32 labels               44  u32 tuples
 *     48  u32 strings              52  u32 flags (1: labels incomplete, see below)
 *     56  u64 superblocks offset   64  u64 data length (data begins at 128)
 *     72  u64 files offset         80  u64 tracks offset
 *     88  u64 blocks offset        96  u64 labels offset
 *     104 u64 tuples offset        112 u64 strings offset
 *     120 u64 file size
 *     128 u64 nesting offset (0: none)  136 u64 nesting records
 *     144 u64 depth tracks offset (0: none)  152 u64 depth tracks
 *   data (from byte 160): per block, its mini-blocks of NX_TLX_MINI_EVENTS events (the last may
 *     hold fewer): first every mini-block's summary, then every mini-block's
 *     events, all as LEB128 varints. Summary: first start - the block's
 *     first_start, last start - first start, first row - the block's first_row,
 *     then its best event: start - first start, end - start (zigzag), row - first
 *     row, label tuple id; then the byte length of its events. Events: start -
 *     previous start (the mini-block's first start for its first event), end -
 *     start (zigzag), row - previous row (its first row first), label tuple id.
 *     Where a bucket boundary cuts a block, a query takes whole the mini-blocks
 *     that lie in one bucket and decodes only the others' events.
 *   files: per Parquet file of the table in order: u64 size, u64 rows, u32 footer
 *     length, u32 0. A file whose size or footer length differs makes the index
 *     stale (the table was rewritten, e.g. by another tool): it is then not used.
 *     Rows are numbered across the files in order; the files' row counts map a
 *     row to its (file, row in file).
 *   tracks (64 bytes each, in order of first appearance in the table): u32 name
 *     string, u32 0, u64 first block, u64 blocks, i64 longest duration, u64
 *     events, i64 latest end, u64 first superblock, u64 superblocks.
 *   depth tracks (tables whose events nest, else absent, offset 0; 64 bytes
 *     each): a track's events split by sampling level (profile/nesting.h
 *     nx_nesting_level: depths 0 .. NX_NESTING_LEVELS - 2 a level each, every
 *     deeper event in the last level), one depth track per (track, level) that
 *     has events, grouped by track in the tracks' order, levels ascending;
 *     every track has at least one, at most NX_NESTING_LEVELS, and its depth
 *     tracks' events add up to its own. u32 track (its index in tracks), u32
 *     depth (the level's; for the last level the deepest depth of its events,
 *     so the last depth track of a track gives its deepest depth), then as a
 *     track's record from byte 8 (blocks, longest duration,
 *     events, latest end, superblocks). Their blocks, superblocks and event
 *     data are encoded exactly like a track's and lie in the same sections,
 *     after all the tracks' (the writer learns depths only when the table is
 *     finished, so it then decodes each track's blocks in start order and
 *     deals the events out by level). Sampling a nested table walks the depth
 *     tracks, so each level of a call stack gets its own pixel buckets.
 *   blocks (nx_tlx_block, 80 bytes each), grouped by track in start order (the
 *     tracks', then the depth tracks').
 *   superblocks (nx_tlx_super, 80 bytes each), grouped by track: the summary of
 *     each run of NX_TLX_SUPER_BLOCKS blocks, so a whole-profile query reads a
 *     track's small superblock array and only the blocks a bucket boundary cuts.
 *   labels (8 bytes each): u32 name string, u32 kind (0 int, 1 string).
 *   tuples: per tuple, u64 null mask then one i64 per label (the value, or a
 *     string id for string labels).
 *   nesting (tables whose events nest, timeline_rules.h nx_timeline_info.nested; else
 *     absent, offset 0): one nx_tlx_nest (16 bytes: i64 self time in ns, u32
 *     depth, u32 1 when set) per table row, rows numbered across the files as
 *     above; a row without a start or an end has set 0. Depth and self time
 *     are profile/nesting.h's rule, computed per track while the table is
 *     written (the values of an event are final only once the events it may
 *     enclose have passed, so they go to a side file at row x 16 and are copied
 *     in here when the index is finished).
 *   strings: u32 count x (u64 offset, u64 length) then the bytes (to the end
 *     of the file).
 * Point events (SemaphoreUpdate) have end == start.
 *
 * Versions: 4 added the nesting section (and the 16 header bytes before the
 * data); 5 the depth tracks (and 16 more header bytes); 6 folds the depth
 * tracks past NX_NESTING_LEVELS - 2 into one per track; 7 names
 * SystemProfileEvents' thread tracks of ranked rows "rank<N>/..." (their
 * worker_gid is part of the track, timeline_rules.h), so an index of 6 would
 * merge ranks. An index of another version is refused like a malformed one (its
 * `why` says which version it is and that `nxprof index` rebuilds it), so a
 * profile indexed by an older nxprof is scanned until it is re-indexed.
 *
 * A missing, stale or malformed index is never an error for the query: the
 * caller falls back to the scan (sampled_pass.c does; query/engine/nesting_values.h
 * computes depth and self time from the table).
 */
#ifndef NX_QUERY_TIMELINE_INDEX_H
#define NX_QUERY_TIMELINE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/timeline_rules.h"
#include "util/file_map.h"

#define NX_TLX_MAGIC "NXTLIDX1"
#define NX_TLX_VERSION 7u
#define NX_TLX_BLOCK_EVENTS 128u
#define NX_TLX_MINI_EVENTS 16u
#define NX_TLX_SUPER_BLOCKS 16u
#define NX_TLX_HEADER_BYTES 160u

/* What a query needs of a run of events in start order (a block or a superblock). */
typedef struct nx_tlx_summary {
    int64_t first_start, last_start, max_end;
    int64_t best_start, best_end;     /* the run's winner by the sampling rule */
    uint64_t first_row, best_row;     /* rows across the table's files */
    uint32_t best_tuple, n_events;
} nx_tlx_summary;

typedef struct nx_tlx_block {
    nx_tlx_summary s;
    uint64_t data_off;                /* from the data section's start */
    uint32_t data_len, reserved;
} nx_tlx_block;

/* One row's entry of the nesting section. */
typedef struct nx_tlx_nest {
    int64_t self_ns;
    uint32_t depth;
    uint32_t set;                     /* 1: the row has values */
} nx_tlx_nest;

typedef struct nx_tlx_super {         /* NX_TLX_SUPER_BLOCKS consecutive blocks of a track */
    nx_tlx_summary s;
    uint64_t first_block;             /* index into the blocks section */
    uint32_t n_blocks, reserved;
} nx_tlx_super;

/* <dir>/.<table>.nxtl into buf; -1 when it does not fit. */
int nx_tlx_path(const char *dir, const char *table, char *buf, size_t cap);

typedef struct nx_tlx nx_tlx;

/* Opens the index of `table` when it is present and matches the table's files.
 * 0 and *out; 1 when there is no usable index (*why, when given, says why:
 * absent, stale or malformed); -1 when out of memory. Handles are shared: the
 * last 16 indexes opened stay mapped between calls (keyed by the file's
 * identity, so a re-published profile is opened afresh; the table's files are
 * checked on every open), and any number of threads may query one handle.
 * nx_tlx_close releases it. */
int nx_tlx_open(const char *profile_dir, const char *table, nx_tlx **out, nx_error *why);
void nx_tlx_close(nx_tlx *x);
/* The same checks over an index held in memory (tests, the fuzz harness): `data`
 * (8-byte aligned, caller-owned, outliving the handle) of `size` bytes; when
 * profile_dir is not NULL it must also match `table`'s files there, as nx_tlx_open
 * requires. Never shared or cached; nx_tlx_close releases the handle, not data.
 * Returns as nx_tlx_open. */
int nx_tlx_open_buffer(const void *data, size_t size, const char *profile_dir, const char *table, nx_tlx **out,
                       nx_error *why);

/* True once a read of x found its file shorter than when it was opened
 * (truncated in place: util/file_map.h): nothing read from x since can be
 * trusted, and the next nx_tlx_open maps the file afresh. Callers ask this
 * before answering from what they read. */
bool nx_tlx_changed(const nx_tlx *x);

/* Whether every event's labels are stored (false when the table had more than
 * 2^20 distinct label tuples: the caller then reads labels from the table). */
bool nx_tlx_labels_complete(const nx_tlx *x);
/* The tracks of the table, in order of first appearance: name (not
 * NUL-terminated, valid until nx_tlx_close), events, earliest start, latest end. */
size_t nx_tlx_track_count(const nx_tlx *x);
void nx_tlx_track_info(const nx_tlx *x, size_t i, const char **name, size_t *len, uint64_t *events, int64_t *first,
                       int64_t *last);
/* The deepest depth of track i's events (a table whose events nest: its depth
 * tracks): true and *depth; false when the index has no depth tracks. */
bool nx_tlx_track_max_depth(const nx_tlx *x, size_t i, uint32_t *depth);
/* Labels stored in the index, by name; -1 when the index has no such label. */
int nx_tlx_label_find(const nx_tlx *x, const char *name);
bool nx_tlx_label_is_string(const nx_tlx *x, int label);
/* Value of label `label` in tuple `tuple`: false when null. Strings point into
 * the index (valid until nx_tlx_close) and are not NUL-terminated. */
bool nx_tlx_label_value(const nx_tlx *x, uint32_t tuple, int label, int64_t *iv, const char **s, size_t *len);

/* Whether the index holds the nesting section (a table whose events nest). */
bool nx_tlx_has_nesting(const nx_tlx *x);
/* The depth and self time of the row at `ordinal` (timeline_rules.h nx_row_ordinal):
 * false when the index has no nesting section, no such row, or none for it. */
bool nx_tlx_nesting(const nx_tlx *x, int64_t ordinal, uint32_t *depth, int64_t *self_ns);

/* ------------------------------------------------ the opened index's sections --
 * An opened timeline index as the code that walks its blocks sees it (the reader,
 * the writer, which reads its blocks back to build the depth tracks, and the
 * query engine's sampler, query/engine/index_sample.c): the mapped file's sections, and
 * the decoding of a block's events. Other code needs only the functions above. */

/* A run of events in start order: a track's, or a depth track's (bytes 8..64
 * of their records). */
typedef struct tlx_run {
    uint64_t first_block, n_blocks;  /* into the blocks section */
    int64_t max_dur;
    uint64_t events;
    int64_t max_end;
    uint64_t first_super, n_supers;  /* into the superblocks section */
} tlx_run;

typedef struct tlx_track {
    uint32_t name, reserved;
    tlx_run r;
} tlx_track;

typedef struct tlx_depth_track {
    uint32_t track, depth;           /* its track (index into tracks) and the events' depth */
    tlx_run r;
} tlx_depth_track;

_Static_assert(sizeof(tlx_track) == 64 && sizeof(tlx_depth_track) == 64, "track records are 64 bytes");

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
    /* Tables whose events nest: the depth tracks, grouped by track (track t's
     * are [depth_first[t], depth_first[t + 1])); has_depth false otherwise. */
    bool has_depth;
    const tlx_depth_track *depth_tracks;
    uint64_t n_depth_tracks;
    uint64_t *depth_first;          /* n_tracks + 1, or NULL */
    nx_file_map *file;              /* the mapping of map, or NULL: the caller's buffer (nx_tlx_open_buffer) */
};

/* String `id` of the index; false when out of range (the file is checked at open). */
bool nx_tlx_string_at(const nx_tlx *x, uint64_t id, const char **s, size_t *len);

/* ------------------------------------------------------- block decoding -- */

/* One mini-block of a block, its summary decoded (timeline_index.h's order). */
typedef struct nx_tlx_mini {
    int64_t first, last, best_start, best_end;
    uint64_t first_row, best_row, best_tuple;
    const unsigned char *events, *events_end;   /* its events' bytes */
    uint32_t n;                                 /* its events */
} nx_tlx_mini;

#define NX_TLX_BLOCK_MINIS (NX_TLX_BLOCK_EVENTS / NX_TLX_MINI_EVENTS)

/* The mini-blocks of block k, whose bytes are data[k->data_off, + k->data_len)
 * of a data section of data_len bytes, into m (NX_TLX_BLOCK_MINIS); their count,
 * or 0 when the block is malformed (out of the section, event count, varints,
 * lengths). Rows and tuple ids are not checked against the index's counts. */
uint32_t nx_tlx_block_minis(const unsigned char *data, uint64_t data_len, const nx_tlx_block *k, nx_tlx_mini *m);

/* A LEB128 varint at *p (before end) into *v; false when it runs past end or
 * beyond 64 bits. Inline: block decoding is the hot loop of a query. */
static inline bool nx_tlx_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    if (*p < end && **p < 0x80) {   /* most deltas fit one byte */
        *v = *(*p)++;
        return true;
    }
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

static inline int64_t nx_tlx_unzigzag(uint64_t z)
{
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* The next event of a mini-block: *q walks its bytes (from m->events up to
 * m->events_end); *start and *row hold the previous event's (m->first and
 * m->first_row before the first event) and get this one's. False when malformed. */
static inline bool nx_tlx_event_next(const unsigned char **q, const unsigned char *qe, int64_t *start, uint64_t *row,
                                     int64_t *end, uint64_t *tuple)
{
    uint64_t ds, dz, dr;
    if (!nx_tlx_varint(q, qe, &ds) || !nx_tlx_varint(q, qe, &dz) || !nx_tlx_varint(q, qe, &dr) ||
        !nx_tlx_varint(q, qe, tuple))
        return false;
    *start = (int64_t)((uint64_t)*start + ds);
    *row += dr;
    *end = (int64_t)((uint64_t)*start + (uint64_t)nx_tlx_unzigzag(dz));
    return true;
}

#endif
