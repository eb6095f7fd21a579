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
 *
 * Dictionary form (pq_cursor.dict_out, for STRING, INT32 and INT64 columns
 * without repetition): rows of dictionary-encoded pages are appended as their
 * uint32 dictionary indices instead of copies of the values, and the batch
 * column describes the chunk's dictionary (nxpq_column_data.dict_index). A batch
 * column is in dictionary form only when every row it got came from a
 * dictionary-encoded page of the same chunk (a batch never spans row groups);
 * when a PLAIN page (a writer's fallback after its dictionary filled up) meets
 * rows already taken as indices, those rows are converted to values and the
 * batch column continues as values. Either way the rows mean the same.
 */
#ifndef NX_PARQUET_CHUNK_H
#define NX_PARQUET_CHUNK_H

#include "parquet/decode.h"
#include "parquet/reader_internal.h"
#include "util/error.h"

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
    bool dict;               /* rows are uint32 dictionary indices in vals (see above) */
    const void *dict_vals;   /* dict: the chunk's decoded dictionary (pq_cursor.dict_vals) */
    const nxpq_str *dict_strs;
    uint32_t dict_n;
    uint64_t dict_id;
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
    size_t n_vals;            /* non-null values in the page */
    bool dict;                /* values are dictionary indices in pq_cursor.idx (dict_out) */
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

    bool dict_out;            /* hand out dictionary indices (see above); set before begin */
    bool has_dict;
    uint32_t dict_n;
    uint64_t dict_id;         /* process-wide number of the loaded dictionary */
    pq_growbuf dict_strs;     /* dict_out strings: the dictionary as nxpq_str */
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
int pq_cursor_begin(pq_cursor *c, const nxpq_reader *r, const pq_column *col, uint32_t rg, nx_error *err);
/* Moves to the start of row `row` (within the row group, not before the
 * current position). */
int pq_cursor_seek(pq_cursor *c, int64_t row, nx_error *err);
/* Appends the next n rows to out. */
int pq_cursor_take(pq_cursor *c, size_t n, pq_colbuf *out, nx_error *err);
void pq_cursor_free(pq_cursor *c);

#endif
