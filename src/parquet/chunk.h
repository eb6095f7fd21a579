/*
 * chunk.h — internal: reading one column chunk, page by page, as rows.
 *
 * A pq_cursor walks a column chunk of one row group. It loads one data page at
 * a time (decompressed, levels and values decoded), so its memory is bounded
 * by the largest page plus the dictionary. With an offset index it jumps
 * straight to the page holding a row; without one it reads pages in order,
 * skipping those it can by their header alone. Rows are appended to a
 * pq_colbuf, the growable arrays behind one column of a batch.
 *
 * A cursor is reused across row groups (pq_cursor_begin) so its buffers are
 * allocated once per scan.
 */
#ifndef NX_PARQUET_CHUNK_H
#define NX_PARQUET_CHUNK_H

#include "parquet/decode.h"
#include "parquet/reader_internal.h"

typedef struct pq_growbuf {
    uint8_t *p;
    size_t len, cap;   /* bytes */
} pq_growbuf;

/* One column of a batch being assembled. */
typedef struct pq_colbuf {
    pq_growbuf valid;        /* uint8 per row */
    pq_growbuf vals;         /* fixed-width values per row, or int64 list elements */
    pq_growbuf offsets;      /* uint64: string rows, or string list elements (n + 1) */
    pq_growbuf data;         /* string bytes */
    pq_growbuf list_offsets; /* uint64 per row, n + 1 */
    pq_growbuf elem_valid;   /* uint8 per list element */
    size_t n_rows, n_elems;
    bool any_null, any_null_elem;
} pq_colbuf;

void pq_colbuf_reset(pq_colbuf *b);
/* Closes the batch column and describes it in *out. Returns 0 or -1 (out of memory). */
int pq_colbuf_finish(pq_colbuf *b, const pq_column *col, nxpq_column_data *out);
void pq_colbuf_free(pq_colbuf *b);

/* Where the cursor stands in its current page. */
typedef struct pq_page {
    size_t n_lv, lv;          /* levels in the page, and the next one to use */
    size_t vpos;              /* the next non-null value to use */
    int64_t end_row;          /* rows started before the end of the page (within the row group) */
    int64_t row;              /* rows started before position lv */
    size_t offset;            /* file offset of the page header, for messages */
    bool loaded;
} pq_page;

typedef struct pq_cursor {
    const nxpq_reader *r;
    const pq_column *col;
    uint32_t rg;
    const pq_column_chunk *cc;
    size_t start, end;        /* the chunk's bytes in the file */
    int64_t rg_rows;
    size_t width;             /* bytes per decoded value */

    bool indexed;             /* an offset index drives page access */
    pq_offset_index oi;
    nx_arena oi_arena;
    uint32_t page_idx;        /* indexed: index of the current page */
    size_t next_pos;          /* sequential: offset of the next page header */
    int64_t next_row;         /* sequential: first row of the next page */

    bool has_dict;
    uint32_t dict_n;
    pq_growbuf dict_buf;      /* decompressed dictionary page */
    pq_growbuf dict_vals;     /* decoded dictionary values */

    bool seq_started;         /* sequential: a data page was met */
    nx_arena hdr_arena;       /* the page header being read */

    pq_page pg;
    pq_growbuf page_buf;      /* decompressed page */
    pq_growbuf def, rep;      /* uint8 levels */
    pq_growbuf vals;          /* decoded values */
    pq_growbuf idx;           /* uint32 dictionary indices */
    pq_scratch scratch;       /* DELTA_BYTE_ARRAY values */

    uint64_t pages_seen, pages_read;  /* data pages: headers met / pages decoded */
} pq_cursor;

/* Starts reading column col in row group rg: checks the chunk's byte range,
 * loads its offset index (if any) and dictionary page (if any). */
int pq_cursor_begin(pq_cursor *c, const nxpq_reader *r, const pq_column *col, uint32_t rg, nxpq_error *err);
/* Moves to the start of row `row` (within the row group, not before the
 * current position). */
int pq_cursor_seek(pq_cursor *c, int64_t row, nxpq_error *err);
/* Appends the next n rows to out. */
int pq_cursor_take(pq_cursor *c, size_t n, pq_colbuf *out, nxpq_error *err);
void pq_cursor_free(pq_cursor *c);

#endif
