/*
 * reader_internal.h — internal: what the reader's parts share. reader.c opens
 * a file and maps its schema to top-level columns, chunk.c reads one column
 * chunk page by page, scan.c prunes row groups and pages and assembles
 * batches. Nothing here is part of the public API (parquet.h).
 */
#ifndef NX_PARQUET_READER_INTERNAL_H
#define NX_PARQUET_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/format.h"
#include "parquet/parquet.h"
#include "util/arena.h"
#include "util/file_map.h"

/* Limits that keep a hostile or corrupt file from demanding absurd memory.
 * A page's value count cannot be bounded by its size in general: an RLE run
 * of levels or dictionary indices, or a delta block of width 0, encodes
 * millions of values in a few bytes. So pages are capped at a fixed count
 * (values of fixed minimum size are also checked against their bytes, and a
 * decompressed size against what the codec can expand to: chunk.c). Real
 * writers stay far below these (pages of ~1 MiB and ~20,000 values). */
#define PQ_MAX_PAGE_VALUES ((size_t)1 << 24)          /* levels or values in one page */
#define PQ_MAX_PAGE_BYTES ((size_t)1 << 30)           /* one uncompressed page */
#define PQ_MAX_PAGE_STRING_BYTES ((size_t)256 << 20)  /* DELTA_BYTE_ARRAY rebuilt values */
#define PQ_MAX_BATCH_BYTES ((size_t)1 << 30)          /* one array of one batch column */

#define PQ_DEFAULT_BATCH_ROWS 65536

/* One top-level field of the file and how to read it. */
typedef struct pq_column {
    nxpq_column_info info;
    uint32_t leaf;             /* its first leaf: the column chunk index in a row group */
    uint32_t n_leaves;
    int32_t leaf_type;         /* physical type of the leaf (supported columns) */
    uint8_t max_def, max_rep;  /* levels of the leaf */
    uint8_t def_list;          /* lists: definition level of a present (maybe empty) list;
                                  an element exists from def_list + 1 */
    bool stats_signed;         /* INT32/INT64 in signed order: min/max can prune */
    const char *unsupported;   /* NXPQ_UNSUPPORTED: what the column is */
} pq_column;

struct nxpq_reader {
    char *name;                /* for messages */
    const uint8_t *data;       /* the whole file */
    size_t size;
    nx_file_map *map;          /* the file's mapping (data), or NULL */
    uint8_t *owned;            /* read() fallback buffer, or NULL */
    size_t footer_start;       /* column data and page index lie in [4, footer_start) */
    nx_arena arena;            /* footer and schema mapping */
    pq_file_meta meta;
    pq_column *cols;
    size_t n_cols;
    uint32_t n_leaves;
    int64_t *rg_first_row;     /* file-wide index of each row group's first row */
};

/* True once a read of the file's bytes found the file shorter than when it was
 * opened (util/file_map.h): what was decoded since cannot be trusted. */
static inline bool pq_reader_changed(const nxpq_reader *r)
{
    return r->map && nx_file_map_damaged(r->map);
}

/* Byte range of a column chunk's pages, checked against the file. Returns 0,
 * or -1 with a message in msg. */
int pq_chunk_range(const nxpq_reader *r, const pq_column_chunk *cc, size_t *start, size_t *end, nx_error *msg);

/* Decodes a column's page index in row group rg into arena a. Each returns 1
 * when decoded, 0 when the chunk has none, -1 with msg filled when it is
 * corrupt. The offset index is also checked against the row group: pages lie
 * inside the chunk and start at rows below num_rows. */
int pq_load_offset_index(const nxpq_reader *r, uint32_t rg, const pq_column *col, nx_arena *a, pq_offset_index *oi,
                         nx_error *msg);
int pq_load_column_index(const nxpq_reader *r, uint32_t rg, const pq_column *col, nx_arena *a, pq_column_index *ci,
                         nx_error *msg);

/* Fills *err (when not NULL) with "file: column 'x', row group n, page at
 * offset p: message"; col NULL, rg < 0 or page < 0 leave that part out. */
void pq_set_error(nx_error *err, const nxpq_reader *r, const pq_column *col, int64_t rg, int64_t page,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
