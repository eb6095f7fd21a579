/*
 * timeline_index_internal.h — an opened timeline index as its readers see it:
 * the mapped file's sections (format in timeline_index.h). For the code that
 * walks the index's blocks (query/index_sample.c) and the reader itself; all
 * other code uses timeline_index.h.
 */
#ifndef NX_PROFILE_TIMELINE_INDEX_INTERNAL_H
#define NX_PROFILE_TIMELINE_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/timeline_index.h"

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
    bool borrowed;                  /* map is the caller's buffer (nx_tlx_open_buffer), not mapped */
};

/* String `id` of the index; false when out of range (the file is checked at open). */
bool nx_tlx_string_at(const nx_tlx *x, uint64_t id, const char **s, size_t *len);

#endif
