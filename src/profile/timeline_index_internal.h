/*
 * timeline_index_internal.h — an opened timeline index as its readers see it:
 * the mapped file's sections (format in timeline_index.h), and the decoding of
 * a block's events. For the code that walks the index's blocks
 * (query/index_sample.c), the reader and the writer (which reads its blocks
 * back to build the depth tracks); all other code uses timeline_index.h.
 */
#ifndef NX_PROFILE_TIMELINE_INDEX_INTERNAL_H
#define NX_PROFILE_TIMELINE_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/timeline_index.h"
#include "util/file_map.h"

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
