/*
 * chunk.c — reads one column chunk page by page and turns its levels and
 * values into batch rows. See chunk.h.
 *
 * A page is decoded whole: decompressed (or used in place when uncompressed),
 * repetition and definition levels expanded to one byte each, non-null values
 * decoded to fixed-width bytes or pq_sv string views. Rows are then copied out
 * of it (or, in dictionary form, their dictionary indices: chunk.h). Page sizes, value counts and decompressed sizes are checked against
 * the page, the chunk and the limits in reader_internal.h before anything is
 * allocated.
 */
#include "parquet/chunk.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/compress.h"

/* ------------------------------------------------------------------ buffers */

static int grow(pq_growbuf *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static void growbuf_free(pq_growbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ----------------------------------------------------------------- messages */

__attribute__((format(printf, 3, 4))) static int page_fail(pq_cursor *c, nx_error *err, const char *fmt, ...)
{
    nx_error msg = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg.msg, sizeof msg, fmt, ap);
    va_end(ap);
    pq_set_error(err, c->r, c->col, c->rg, (int64_t)c->pg.offset, "%s", msg.msg);
    return -1;
}

__attribute__((format(printf, 3, 4))) static int chunk_fail(pq_cursor *c, nx_error *err, const char *fmt, ...)
{
    nx_error msg = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg.msg, sizeof msg, fmt, ap);
    va_end(ap);
    pq_set_error(err, c->r, c->col, c->rg, -1, "%s", msg.msg);
    return -1;
}

static const char *encoding_name(int e)
{
    static const char *const names[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                        "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                        "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
    return e >= 0 && e < (int)(sizeof names / sizeof names[0]) ? names[e] : "unknown";
}

static const char *type_name(int t)
{
    static const char *const names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                        "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

/* Bytes one decoded value takes in a page or dictionary. */
static size_t value_width(int32_t type)
{
    switch (type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32:
    case PQ_FLOAT: return 4;
    case PQ_INT64:
    case PQ_DOUBLE: return 8;
    default: return sizeof(pq_sv);
    }
}

/* ------------------------------------------------------------- page headers */

/* Reads the header at pos; *body is where the page's bytes start. The page
 * must end inside the chunk. */
static int read_header(pq_cursor *c, size_t pos, pq_page_header *h, size_t *body, nx_error *err)
{
    c->pg.offset = pos;
    if (pos >= c->end)
        return page_fail(c, err, "page header past the end of the column chunk");
    nxth_reader tr;
    nxth_reader_init(&tr, c->r->data + pos, c->end - pos, pos);
    pq_read_page_header(&tr, &c->hdr_arena, h);
    nx_arena_free(&c->hdr_arena); /* page statistics are not used */
    if (tr.failed)
        return page_fail(c, err, "bad page header: %s", tr.error);
    size_t hl = nxth_reader_pos(&tr);
    if ((size_t)h->compressed_page_size > c->end - pos - hl)
        return page_fail(c, err, "page of %d bytes runs past the end of the column chunk", h->compressed_page_size);
    *body = pos + hl;
    return 0;
}

/* How much each codec can expand its input at most (snappy ~21x, deflate
 * 1032x, LZ4 ~255x, zstd RLE blocks 32768x), so a page header cannot make
 * us allocate more than its compressed bytes could ever produce. */
static uint64_t max_expansion(int codec)
{
    switch (codec) {
    case NXPQ_SNAPPY: return 32;
    case NXPQ_GZIP: return 1040;
    case NXPQ_LZ4_RAW: return 256;
    default: return 32768;
    }
}

/* The n page bytes at src as out_len uncompressed bytes: used in place when
 * not compressed, else decompressed into dst. */
static int page_bytes(pq_cursor *c, pq_growbuf *dst, const uint8_t *src, size_t n, size_t out_len, bool compressed,
                      const uint8_t **out, nx_error *err)
{
    int codec = compressed ? c->cc->meta.codec : NXPQ_UNCOMPRESSED;
    if (codec == NXPQ_UNCOMPRESSED || (n == 0 && out_len == 0)) {
        if (n != out_len)
            return page_fail(c, err, "page holds %zu bytes, its header says %zu uncompressed", n, out_len);
        *out = src;
        return 0;
    }
    if (out_len > PQ_MAX_PAGE_BYTES || out_len > (uint64_t)n * max_expansion(codec) + 64)
        return page_fail(c, err, "page claims %zu uncompressed bytes from %zu compressed", out_len, n);
    if (grow(dst, out_len ? out_len : 1) < 0)
        return page_fail(c, err, "out of memory for a %zu-byte page", out_len);
    nx_error why;
    if (pq_decompress(codec, src, n, dst->p, out_len, &why) < 0)
        return page_fail(c, err, "%s", why.msg);
    *out = dst->p;
    return 0;
}

/* ------------------------------------------------------------------- values */

static int plain_values(int32_t type, size_t width, const uint8_t *p, size_t len, void *out, size_t n, nx_error *e)
{
    size_t used;
    if (type == PQ_BOOLEAN)
        return pq_plain_bool(p, len, out, n, &used, e);
    if (type == PQ_BYTE_ARRAY)
        return pq_plain_byte_array(p, len, out, n, &used, e);
    return pq_plain_fixed(p, len, width, out, n, &used, e);
}

/* out[i] = dict[idx[i]], for the widths value_width() produces. */
static void gather(uint8_t *out, const uint8_t *dict, const uint32_t *idx, size_t n, size_t width)
{
    switch (width) {
    case 1:
        for (size_t i = 0; i < n; i++)
            out[i] = dict[idx[i]];
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            memcpy(out + i * 4, dict + (size_t)idx[i] * 4, 4);
        break;
    case 8:
        for (size_t i = 0; i < n; i++)
            memcpy(out + i * 8, dict + (size_t)idx[i] * 8, 8);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            memcpy(out + i * width, dict + (size_t)idx[i] * width, width);
    }
}

static int dict_values(pq_cursor *c, const uint8_t *p, size_t len, size_t n, nx_error *err)
{
    /* A page of nulls needs no dictionary; writers omit it for all-null chunks. */
    if (n == 0) {
        c->pg.dict = c->dict_out && c->has_dict;
        return 0;
    }
    if (!c->has_dict)
        return page_fail(c, err, "dictionary-encoded page, but the column chunk has no dictionary page");
    if (grow(&c->idx, n * sizeof(uint32_t) + 1) < 0)
        return page_fail(c, err, "out of memory for %zu dictionary indices", n);
    nx_error e;
    if (pq_dict_indices(p, len, c->dict_n, (uint32_t *)c->idx.p, n, &e) < 0)
        return page_fail(c, err, "%s", e.msg);
    if (c->dict_out) { /* the rows take the indices; pq_cursor_take gathers only if it must */
        c->pg.dict = true;
        return 0;
    }
    gather(c->vals.p, c->dict_vals.p, (const uint32_t *)c->idx.p, n, c->width);
    return 0;
}

static bool encoding_fits(int enc, int32_t t)
{
    switch (enc) {
    case PQ_ENC_RLE: return t == PQ_BOOLEAN;
    case PQ_ENC_DELTA_BINARY_PACKED: return t == PQ_INT32 || t == PQ_INT64;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: return t == PQ_BYTE_ARRAY;
    case PQ_ENC_BYTE_STREAM_SPLIT: return t == PQ_INT32 || t == PQ_INT64 || t == PQ_FLOAT || t == PQ_DOUBLE;
    case PQ_ENC_PLAIN:
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: return true;
    default: return false;
    }
}

/* The most values len bytes can hold in encodings where each value takes a
 * minimum of bytes. Runs (RLE, dictionary indices, delta blocks of width 0)
 * have no such bound; PQ_MAX_PAGE_VALUES caps them. */
static size_t max_values(int enc, int32_t t, size_t width, size_t len)
{
    if (enc == PQ_ENC_PLAIN && t == PQ_BOOLEAN)
        return len > SIZE_MAX / 8 ? SIZE_MAX : len * 8;
    if (enc == PQ_ENC_PLAIN && t == PQ_BYTE_ARRAY)
        return len / 4;
    if (enc == PQ_ENC_PLAIN || enc == PQ_ENC_BYTE_STREAM_SPLIT)
        return len / width;
    return SIZE_MAX;
}

/* Decodes the n non-null values of a data page into c->vals. */
static int decode_values(pq_cursor *c, int enc, const uint8_t *p, size_t len, size_t n, nx_error *err)
{
    int32_t t = c->col->leaf_type;
    if (!encoding_fits(enc, t))
        return page_fail(c, err, "encoding %s (%d) is not supported for %s values", encoding_name(enc), enc,
                         type_name(t));
    if (n > max_values(enc, t, c->width, len))
        return page_fail(c, err, "%zu %s values cannot fit in %zu bytes", n, encoding_name(enc), len);
    if (grow(&c->vals, n * c->width + 1) < 0)
        return page_fail(c, err, "out of memory for %zu values", n);
    void *out = c->vals.p;
    size_t used;
    nx_error e;
    int rc;
    switch (enc) {
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: return dict_values(c, p, len, n, err);
    case PQ_ENC_RLE: rc = pq_rle_bool(p, len, out, n, &e); break;
    case PQ_ENC_DELTA_BINARY_PACKED: rc = pq_delta_binary_packed(p, len, t == PQ_INT32, out, n, &used, &e); break;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: rc = pq_delta_length_byte_array(p, len, out, n, &used, &e); break;
    case PQ_ENC_DELTA_BYTE_ARRAY:
        rc = pq_delta_byte_array(p, len, out, n, &c->scratch, PQ_MAX_PAGE_STRING_BYTES, &used, &e);
        break;
    case PQ_ENC_BYTE_STREAM_SPLIT: rc = pq_byte_stream_split(p, len, c->width, out, n, &e); break;
    default: rc = plain_values(t, c->width, p, len, out, n, &e);
    }
    if (rc < 0)
        return page_fail(c, err, "%s values: %s", encoding_name(enc), e.msg);
    return 0;
}

/* --------------------------------------------------------------- dictionary */

static int load_dictionary(pq_cursor *c, const pq_page_header *h, size_t body, nx_error *err)
{
    const pq_dictionary_page_header *dh = &h->dictionary_page_header;
    if (dh->encoding != PQ_ENC_PLAIN && dh->encoding != PQ_ENC_PLAIN_DICTIONARY)
        return page_fail(c, err, "dictionary page encoding %s (%d) is not supported", encoding_name(dh->encoding),
                         dh->encoding);
    size_t n = (size_t)dh->num_values;
    if (n > PQ_MAX_PAGE_VALUES)
        return page_fail(c, err, "dictionary of %zu values exceeds this reader's limit of %zu", n,
                         PQ_MAX_PAGE_VALUES);
    const uint8_t *p;
    if (page_bytes(c, &c->dict_buf, c->r->data + body, (size_t)h->compressed_page_size,
                   (size_t)h->uncompressed_page_size, true, &p, err) < 0)
        return -1;
    /* A batch's dictionary strings outlive the check of the file's mapping made
     * when the batch is handed out, so they never point into the mapping. */
    if (p != c->dict_buf.p && h->uncompressed_page_size > 0) {
        if (grow(&c->dict_buf, (size_t)h->uncompressed_page_size) < 0)
            return page_fail(c, err, "out of memory for a %d-byte dictionary", h->uncompressed_page_size);
        memcpy(c->dict_buf.p, p, (size_t)h->uncompressed_page_size);
        p = c->dict_buf.p;
    }
    if (n > max_values(PQ_ENC_PLAIN, c->col->leaf_type, c->width, (size_t)h->uncompressed_page_size))
        return page_fail(c, err, "a dictionary of %zu values cannot fit in %d bytes", n, h->uncompressed_page_size);
    if (grow(&c->dict_vals, n * c->width + 1) < 0)
        return page_fail(c, err, "out of memory for a dictionary of %zu values", n);
    nx_error e;
    if (plain_values(c->col->leaf_type, c->width, p, (size_t)h->uncompressed_page_size, c->dict_vals.p, n, &e) < 0)
        return page_fail(c, err, "dictionary values: %s", e.msg);
    if (c->dict_out && c->col->leaf_type == PQ_BYTE_ARRAY) {
        if (grow(&c->dict_strs, n * sizeof(nxpq_str) + 1) < 0)
            return page_fail(c, err, "out of memory for a dictionary of %zu values", n);
        const pq_sv *sv = (const pq_sv *)c->dict_vals.p;
        nxpq_str *out = (nxpq_str *)c->dict_strs.p;
        for (size_t i = 0; i < n; i++)
            out[i] = (nxpq_str){(const char *)sv[i].ptr, sv[i].len};
    }
    static atomic_uint_fast64_t dict_ids;
    c->dict_id = atomic_fetch_add(&dict_ids, 1) + 1;
    c->has_dict = true;
    c->dict_n = (uint32_t)n;
    return 0;
}

/* ------------------------------------------------------------- data pages */

static uint32_t load_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* One level section of a v1 page at *p, which moves past it. */
static int v1_levels(pq_cursor *c, int enc, unsigned max, const uint8_t **p, const uint8_t *end, uint8_t *out,
                     size_t n, const char *what, nx_error *err)
{
    size_t len = (size_t)(end - *p), used;
    nx_error e;
    if (enc == PQ_ENC_RLE) {
        if (len < 4 || load_le32(*p) > len - 4)
            return page_fail(c, err, "%s levels run past the end of the page", what);
        used = 4 + load_le32(*p);
        if (pq_rle_decode_levels(*p + 4, used - 4, max, out, n, &e) < 0)
            return page_fail(c, err, "%s levels: %s", what, e.msg);
    } else if (enc == PQ_ENC_BIT_PACKED) {
        if (pq_bit_packed_levels(*p, len, max, out, n, &used, &e) < 0)
            return page_fail(c, err, "%s levels: %s", what, e.msg);
    } else {
        return page_fail(c, err, "%s level encoding %s (%d) is not supported", what, encoding_name(enc), enc);
    }
    *p += used;
    return 0;
}

/* Where a page's values lie once its levels are decoded. */
typedef struct page_values {
    const uint8_t *p;
    size_t len;
    int encoding;
} page_values;

/* DATA_PAGE: the whole page is compressed; levels carry a length prefix. */
static int v1_sections(pq_cursor *c, const pq_page_header *h, size_t body, size_t n, page_values *v,
                       nx_error *err)
{
    const pq_data_page_header *dh = &h->data_page_header;
    const uint8_t *p;
    if (page_bytes(c, &c->page_buf, c->r->data + body, (size_t)h->compressed_page_size,
                   (size_t)h->uncompressed_page_size, true, &p, err) < 0)
        return -1;
    const uint8_t *end = p + h->uncompressed_page_size;
    if (c->col->max_rep &&
        v1_levels(c, dh->repetition_level_encoding, c->col->max_rep, &p, end, c->rep.p, n, "repetition", err) < 0)
        return -1;
    if (c->col->max_def &&
        v1_levels(c, dh->definition_level_encoding, c->col->max_def, &p, end, c->def.p, n, "definition", err) < 0)
        return -1;
    v->p = p;
    v->len = (size_t)(end - p);
    v->encoding = dh->encoding;
    return 0;
}

/* DATA_PAGE_V2: levels come first, uncompressed and without length prefixes;
 * only the values may be compressed. */
static int v2_sections(pq_cursor *c, const pq_page_header *h, size_t body, size_t n, page_values *v,
                       nx_error *err)
{
    const pq_data_page_header_v2 *dh = &h->data_page_header_v2;
    const uint8_t *b = c->r->data + body;
    size_t rl = (size_t)dh->repetition_levels_byte_length, dl = (size_t)dh->definition_levels_byte_length;
    nx_error e;
    if (c->col->max_rep && pq_rle_decode_levels(b, rl, c->col->max_rep, c->rep.p, n, &e) < 0)
        return page_fail(c, err, "repetition levels: %s", e.msg);
    if (c->col->max_def && pq_rle_decode_levels(b + rl, dl, c->col->max_def, c->def.p, n, &e) < 0)
        return page_fail(c, err, "definition levels: %s", e.msg);
    if (page_bytes(c, &c->page_buf, b + rl + dl, (size_t)h->compressed_page_size - rl - dl,
                   (size_t)h->uncompressed_page_size - rl - dl, dh->is_compressed, &v->p, err) < 0)
        return -1;
    v->len = (size_t)h->uncompressed_page_size - rl - dl;
    v->encoding = dh->encoding;
    return 0;
}

static size_t count_level(const uint8_t *lv, size_t n, uint8_t want)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += lv[i] == want;
    return k;
}

/* Checks where the decoded page's rows start and sets the page position. */
static int place_page(pq_cursor *c, size_t n, int64_t first_row, nx_error *err)
{
    bool repeated = c->col->max_rep > 0;
    int64_t rows = repeated ? (int64_t)count_level(c->rep.p, n, 0) : (int64_t)n;
    /* Only pages read in order may continue the previous page's last row. */
    if (repeated && n && c->rep.p[0] != 0 && (c->indexed || !c->seq_started))
        return page_fail(c, err, "page does not start at a row boundary");
    if (c->indexed) {
        const pq_offset_index *oi = &c->oi;
        int64_t next = c->page_idx + 1 < oi->n_pages ? oi->pages[c->page_idx + 1].first_row_index : c->rg_rows;
        if (rows != next - first_row)
            return page_fail(c, err, "page holds %lld rows, the offset index says %lld", (long long)rows,
                             (long long)(next - first_row));
    }
    c->pg.n_lv = n;
    c->pg.lv = c->pg.vpos = 0;
    c->pg.row = first_row;
    c->pg.end_row = first_row + rows;
    c->pg.loaded = true;
    c->seq_started = true;
    c->pages_read++;
    return 0;
}

static int decode_page(pq_cursor *c, const pq_page_header *h, size_t body, int64_t first_row, nx_error *err)
{
    bool v2 = h->type == PQ_PAGE_DATA_V2;
    size_t n = (size_t)(v2 ? h->data_page_header_v2.num_values : h->data_page_header.num_values);
    c->pg.loaded = false;
    if (n > PQ_MAX_PAGE_VALUES)
        return page_fail(c, err, "page holds %zu values, more than this reader's limit of %zu", n,
                         PQ_MAX_PAGE_VALUES);
    if (grow(&c->def, n + 1) < 0 || grow(&c->rep, n + 1) < 0)
        return page_fail(c, err, "out of memory for %zu levels", n);
    c->pg.dict = false;
    page_values v = {NULL, 0, PQ_ENC_PLAIN};
    if ((v2 ? v2_sections(c, h, body, n, &v, err) : v1_sections(c, h, body, n, &v, err)) < 0)
        return -1;
    size_t n_vals = c->col->max_def ? count_level(c->def.p, n, c->col->max_def) : n;
    c->pg.n_vals = n_vals;
    if (decode_values(c, v.encoding, v.p, v.len, n_vals, err) < 0)
        return -1;
    return place_page(c, n, first_row, err);
}

/* Rows a data page holds, when its header alone tells (columns without
 * repetition: one value per row); -1 otherwise. */
static int64_t header_rows(const pq_cursor *c, const pq_page_header *h)
{
    if (c->col->max_rep)
        return -1;
    return h->type == PQ_PAGE_DATA_V2 ? h->data_page_header_v2.num_values : h->data_page_header.num_values;
}

/* Sequential mode: reads headers up to the next data page and decodes it, or
 * skips it when its header shows it ends at or before row skip_before.
 * Returns 1 with a page loaded, 0 at the end of the chunk, -1 on error. */
static int seq_next(pq_cursor *c, int64_t skip_before, nx_error *err)
{
    while (c->next_pos < c->end) {
        pq_page_header h;
        size_t body = 0;
        if (read_header(c, c->next_pos, &h, &body, err) < 0)
            return -1;
        c->next_pos = body + (size_t)h.compressed_page_size;
        if (h.type == PQ_PAGE_DICTIONARY)
            return page_fail(c, err, "dictionary page after the first page of the column chunk");
        if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2)
            continue; /* index pages and page types from the future */
        c->pages_seen++;
        int64_t rows = header_rows(c, &h);
        if (rows >= 0 && rows <= skip_before - c->next_row) {
            c->next_row += rows;
            c->seq_started = true;
            continue;
        }
        if (decode_page(c, &h, body, c->next_row, err) < 0)
            return -1;
        c->next_row = c->pg.end_row;
        return 1;
    }
    return 0;
}

/* Indexed mode: loads page k of the offset index. */
static int idx_load(pq_cursor *c, uint32_t k, nx_error *err)
{
    const pq_page_location *loc = &c->oi.pages[k];
    pq_page_header h;
    size_t body = 0;
    c->pg.loaded = false;
    if (read_header(c, (size_t)loc->offset, &h, &body, err) < 0)
        return -1;
    if (body + (size_t)h.compressed_page_size - (size_t)loc->offset != (size_t)loc->compressed_page_size)
        return page_fail(c, err, "page size differs from the offset index");
    if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2)
        return page_fail(c, err, "the offset index points at a page that is not a data page");
    c->page_idx = k;
    return decode_page(c, &h, body, loc->first_row_index, err);
}

/* Indexed mode: the last page starting at or before row. */
static uint32_t idx_find(const pq_cursor *c, int64_t row)
{
    uint32_t lo = 0, hi = c->oi.n_pages;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->oi.pages[mid].first_row_index <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The page after the current one: 1 loaded, 0 none left, -1 error. */
static int next_page(pq_cursor *c, nx_error *err)
{
    if (!c->indexed)
        return seq_next(c, -1, err);
    uint32_t k = c->pg.loaded ? c->page_idx + 1 : 0;
    if (k >= c->oi.n_pages)
        return 0;
    return idx_load(c, k, err) < 0 ? -1 : 1;
}

/* ------------------------------------------------------------------ cursor */

int pq_cursor_begin(pq_cursor *c, const nxpq_reader *r, const pq_column *col, uint32_t rg, nx_error *err)
{
    nx_error msg = {0};
    c->r = r;
    c->col = col;
    c->rg = rg;
    c->cc = &r->meta.row_groups[rg].columns[col->leaf];
    c->rg_rows = r->meta.row_groups[rg].num_rows;
    c->width = value_width(col->leaf_type);
    c->has_dict = c->indexed = c->seq_started = false;
    c->pg.loaded = false;
    c->pg.offset = 0;
    c->hdr_arena.block_size = 4096;
    nx_arena_free(&c->oi_arena);
    if (!pq_codec_name(c->cc->meta.codec))
        return chunk_fail(c, err, "compression codec %d is not supported", c->cc->meta.codec);
    if (pq_chunk_range(r, c->cc, &c->start, &c->end, &msg) < 0)
        return chunk_fail(c, err, "%s", msg.msg);
    int rc = pq_load_offset_index(r, rg, col, &c->oi_arena, &c->oi, &msg);
    if (rc < 0)
        return chunk_fail(c, err, "%s", msg.msg);
    c->indexed = rc == 1;
    c->pages_seen += c->indexed ? c->oi.n_pages : 0;
    c->next_pos = c->start;
    c->next_row = 0;
    if (c->start >= c->end)
        return 0;
    /* A dictionary page, if any, comes first; the offset index lists only data pages. */
    pq_page_header h;
    size_t body = 0;
    if (read_header(c, c->start, &h, &body, err) < 0)
        return -1;
    if (h.type != PQ_PAGE_DICTIONARY)
        return 0;
    c->next_pos = body + (size_t)h.compressed_page_size;
    return load_dictionary(c, &h, body, err);
}

/* Moves inside the loaded page to the start of row (which starts in it). */
static void walk_to(pq_cursor *c, int64_t row)
{
    pq_page *pg = &c->pg;
    const uint8_t *def = c->def.p, *rep = c->rep.p;
    uint8_t maxd = c->col->max_def;
    if (!c->col->max_rep) {
        size_t k = (size_t)(row - pg->row);
        pg->vpos += maxd ? count_level(def + pg->lv, k, maxd) : k;
        pg->lv += k;
        pg->row = row;
        return;
    }
    for (; pg->lv < pg->n_lv; pg->lv++) {
        if (rep[pg->lv] == 0) {
            if (pg->row == row)
                return;
            pg->row++;
        }
        pg->vpos += def[pg->lv] == maxd;
    }
}

int pq_cursor_seek(pq_cursor *c, int64_t row, nx_error *err)
{
    if (row >= c->rg_rows)
        return chunk_fail(c, err, "row %lld is past the row group's %lld rows", (long long)row,
                          (long long)c->rg_rows);
    if (c->pg.loaded && row < c->pg.row)
        return chunk_fail(c, err, "cannot go back to row %lld", (long long)row);
    while (!c->pg.loaded || row >= c->pg.end_row) {
        int rc = c->indexed ? (idx_load(c, idx_find(c, row), err) < 0 ? -1 : 1) : seq_next(c, row, err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return chunk_fail(c, err, "column chunk ends before row %lld of %lld", (long long)row,
                              (long long)c->rg_rows);
    }
    walk_to(c, row);
    return 0;
}

/* ------------------------------------------------------------ batch output */

void pq_colbuf_reset(pq_colbuf *b)
{
    b->valid.len = b->vals.len = b->offsets.len = b->data.len = b->list_offsets.len = b->elem_valid.len = 0;
    b->n_rows = b->n_elems = 0;
    b->any_null = b->any_null_elem = b->dict = false;
}

void pq_colbuf_free(pq_colbuf *b)
{
    growbuf_free(&b->valid);
    growbuf_free(&b->vals);
    growbuf_free(&b->offsets);
    growbuf_free(&b->data);
    growbuf_free(&b->list_offsets);
    growbuf_free(&b->elem_valid);
}

/* Room for `extra` more bytes in a batch array, within the batch limit. */
static int reserve(pq_cursor *c, pq_growbuf *b, size_t extra, nx_error *err)
{
    if (extra > PQ_MAX_BATCH_BYTES - b->len)
        return chunk_fail(c, err, "one batch would need more than %zu MiB for this column; use smaller batches",
                          PQ_MAX_BATCH_BYTES >> 20);
    if (grow(b, b->len + extra) < 0)
        return chunk_fail(c, err, "out of memory for a batch");
    return 0;
}

static void push_u64(pq_growbuf *b, uint64_t v)
{
    memcpy(b->p + b->len, &v, 8);
    b->len += 8;
}

static void copy_value(uint8_t *dst, const uint8_t *src, size_t w)
{
    switch (w) {
    case 1: *dst = *src; break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8);
    }
}

/* A string value (row or list element): its start offset, then its bytes. */
static int push_string(pq_cursor *c, pq_colbuf *out, const pq_sv *sv, nx_error *err)
{
    if (sv && reserve(c, &out->data, sv->len, err) < 0)
        return -1;
    push_u64(&out->offsets, out->data.len);
    if (sv && sv->len) {
        memcpy(out->data.p + out->data.len, sv->ptr, sv->len);
        out->data.len += sv->len;
    }
    return 0;
}

/* Rows of a nullable or string column, value by value. */
static int append_each(pq_cursor *c, size_t k, size_t w, pq_colbuf *out, nx_error *err)
{
    pq_page *pg = &c->pg;
    uint8_t maxd = c->col->max_def;
    const uint8_t *def = c->def.p + pg->lv;
    bool strings = c->col->info.type == NXPQ_STRING;
    for (size_t i = 0; i < k; i++) {
        bool present = !maxd || def[i] == maxd;
        if (maxd)
            out->valid.p[out->valid.len++] = present;
        out->any_null |= !present;
        if (strings) {
            if (push_string(c, out, present ? (const pq_sv *)c->vals.p + pg->vpos : NULL, err) < 0)
                return -1;
        } else {
            uint8_t *dst = out->vals.p + out->vals.len;
            if (present)
                copy_value(dst, c->vals.p + pg->vpos * w, w);
            else
                memset(dst, 0, w);
            out->vals.len += w;
        }
        pg->vpos += present;
    }
    return 0;
}

/* Dictionary form: the next k rows as their indices (null rows get index
 * dict_n, one past the last entry, and valid 0: parquet.h). */
static int append_indices(pq_cursor *c, size_t k, pq_colbuf *out, nx_error *err)
{
    pq_page *pg = &c->pg;
    uint8_t maxd = c->col->max_def;
    if ((maxd && reserve(c, &out->valid, k, err) < 0) || reserve(c, &out->vals, k * 4, err) < 0)
        return -1;
    uint32_t *dst = (uint32_t *)(out->vals.p + out->vals.len);
    const uint32_t *src = (const uint32_t *)c->idx.p + pg->vpos;
    if (!maxd || pg->n_vals == pg->n_lv) { /* no null in the page */
        if (maxd) {
            memset(out->valid.p + out->valid.len, 1, k);
            out->valid.len += k;
        }
        memcpy(dst, src, k * 4);
        pg->vpos += k;
    } else if (pg->n_vals == 0) { /* only nulls */
        memset(out->valid.p + out->valid.len, 0, k);
        out->valid.len += k;
        out->any_null = true;
        for (size_t i = 0; i < k; i++)
            dst[i] = c->dict_n;
    } else {
        const uint8_t *def = c->def.p + pg->lv;
        uint8_t *valid = out->valid.p + out->valid.len;
        size_t v = 0;
        bool any_null = false;
        for (size_t i = 0; i < k; i++) {
            bool present = def[i] == maxd;
            valid[i] = present;
            any_null |= !present;
            dst[i] = present ? src[v] : c->dict_n;
            v += present;
        }
        out->valid.len += k;
        out->any_null |= any_null;
        pg->vpos += v;
    }
    out->vals.len += k * 4;
    pg->lv += k;
    pg->row += (int64_t)k;
    out->n_rows += k;
    return 0;
}

/* The loaded page's values as values (gathered from the dictionary), for a
 * batch column that holds values. */
static void page_to_values(pq_cursor *c)
{
    gather(c->vals.p, c->dict_vals.p, (const uint32_t *)c->idx.p, c->pg.n_vals, c->width);
    c->pg.dict = false;
}

/* Converts the rows a batch column holds as indices into values (chunk.h). */
static int colbuf_to_values(pq_cursor *c, pq_colbuf *out, nx_error *err)
{
    size_t n = out->n_rows;
    uint32_t *idx = malloc(n * 4 + 4); /* at most once per batch and column, on a dictionary fallback */
    if (!idx)
        return chunk_fail(c, err, "out of memory for a batch");
    memcpy(idx, out->vals.p, n * 4);
    const uint8_t *valid = c->col->max_def ? out->valid.p : NULL;
    out->dict = false;
    out->vals.len = 0;
    int rc = 0;
    if (c->col->info.type == NXPQ_STRING) {
        const pq_sv *dict = (const pq_sv *)c->dict_vals.p;
        rc = reserve(c, &out->offsets, n * 8, err);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = push_string(c, out, !valid || valid[i] ? &dict[idx[i]] : NULL, err);
    } else if ((rc = reserve(c, &out->vals, n * c->width, err)) == 0) {
        for (size_t i = 0; i < n; i++) {
            uint8_t *dst = out->vals.p + i * c->width;
            if (!valid || valid[i])
                copy_value(dst, c->dict_vals.p + (size_t)idx[i] * c->width, c->width);
            else
                memset(dst, 0, c->width);
        }
        out->vals.len = n * c->width;
    }
    free(idx);
    return rc;
}

/* Appends the next k levels of a column without repetition: one row each.
 * Required fixed-width values are copied in one go. */
static int append_scalars(pq_cursor *c, size_t k, pq_colbuf *out, nx_error *err)
{
    pq_page *pg = &c->pg;
    if (pg->dict) {
        if (out->n_rows == 0 && !out->dict) {
            out->dict = true;
            out->dict_vals = c->dict_vals.p;
            out->dict_strs = (const nxpq_str *)c->dict_strs.p;
            out->dict_n = c->dict_n;
            out->dict_id = c->dict_id;
        }
        if (out->dict)
            return append_indices(c, k, out, err);
        page_to_values(c);
    } else if (out->dict && colbuf_to_values(c, out, err) < 0) {
        return -1;
    }
    uint8_t maxd = c->col->max_def;
    bool strings = c->col->info.type == NXPQ_STRING;
    size_t w = strings ? 8 : c->width;
    if ((maxd && reserve(c, &out->valid, k, err) < 0) || reserve(c, strings ? &out->offsets : &out->vals, k * w, err))
        return -1;
    if (maxd && pg->n_vals == 0) { /* a page of nulls: no values to look at */
        memset(out->valid.p + out->valid.len, 0, k);
        out->valid.len += k;
        out->any_null = true;
        if (strings) {
            for (size_t i = 0; i < k; i++)
                push_u64(&out->offsets, out->data.len);
        } else {
            memset(out->vals.p + out->vals.len, 0, k * w);
            out->vals.len += k * w;
        }
    } else if (maxd && !strings && pg->n_vals == pg->n_lv) { /* no null: as a required column */
        memset(out->valid.p + out->valid.len, 1, k);
        out->valid.len += k;
        memcpy(out->vals.p + out->vals.len, c->vals.p + pg->vpos * w, k * w);
        out->vals.len += k * w;
        pg->vpos += k;
    } else if (maxd || strings) {
        if (append_each(c, k, w, out, err) < 0)
            return -1;
    } else {
        memcpy(out->vals.p + out->vals.len, c->vals.p + pg->vpos * w, k * w);
        out->vals.len += k * w;
        pg->vpos += k;
    }
    pg->lv += k;
    pg->row += (int64_t)k;
    out->n_rows += k;
    return 0;
}

/* One list element: present values come from the page, null ones are 0/"". */
static int push_element(pq_cursor *c, pq_colbuf *out, bool present, nx_error *err)
{
    pq_page *pg = &c->pg;
    out->elem_valid.p[out->elem_valid.len++] = present;
    out->any_null_elem |= !present;
    out->n_elems++;
    if (c->col->info.type == NXPQ_LIST_STRING)
        return push_string(c, out, present ? (const pq_sv *)c->vals.p + pg->vpos++ : NULL, err);
    int64_t v = 0;
    if (present)
        memcpy(&v, c->vals.p + 8 * pg->vpos++, 8);
    memcpy(out->vals.p + out->vals.len, &v, 8);
    out->vals.len += 8;
    return 0;
}

/* Room for every row and element the rest of the page could add. */
static int reserve_list(pq_cursor *c, pq_colbuf *out, size_t levels, nx_error *err)
{
    pq_growbuf *elems = c->col->info.type == NXPQ_LIST_STRING ? &out->offsets : &out->vals;
    if (reserve(c, &out->list_offsets, levels * 8, err) < 0 || reserve(c, &out->valid, levels, err) < 0 ||
        reserve(c, &out->elem_valid, levels, err) < 0 || reserve(c, elems, levels * 8, err) < 0)
        return -1;
    return 0;
}

/* Levels of a list page handled per reservation of batch space, so a batch
 * of few rows does not reserve room for a whole large page. */
#define LIST_CHUNK 4096

/* Appends levels of a list column from the loaded page until its end or the
 * start of row n of this take (*taken counts the rows begun). A row starts
 * at repetition level 0; definition levels below def_list mean a null list,
 * def_list an empty one, above it an element (null below max_def). */
static int append_list(pq_cursor *c, size_t n, size_t *taken, pq_colbuf *out, nx_error *err)
{
    pq_page *pg = &c->pg;
    const pq_column *col = c->col;
    while (pg->lv < pg->n_lv) {
        size_t stop = pg->n_lv - pg->lv < LIST_CHUNK ? pg->n_lv : pg->lv + LIST_CHUNK;
        if (reserve_list(c, out, stop - pg->lv, err) < 0)
            return -1;
        for (; pg->lv < stop; pg->lv++) {
            uint8_t d = c->def.p[pg->lv], r = c->rep.p[pg->lv];
            if (r == 0) {
                if (*taken == n)
                    return 0;
                push_u64(&out->list_offsets, out->n_elems);
                out->valid.p[out->valid.len++] = d >= col->def_list;
                out->any_null |= d < col->def_list;
                out->n_rows++;
                pg->row++;
                (*taken)++;
            } else if (*taken == 0 || d <= col->def_list) {
                return page_fail(c, err, "repeated value at level %u without a list to belong to", d);
            }
            if (d > col->def_list && push_element(c, out, d == col->max_def, err) < 0)
                return -1;
        }
    }
    return 0;
}

int pq_cursor_take(pq_cursor *c, size_t n, pq_colbuf *out, nx_error *err)
{
    size_t taken = 0;
    for (;;) {
        pq_page *pg = &c->pg;
        if (pg->loaded && pg->lv < pg->n_lv) {
            if (c->col->max_rep) {
                if (append_list(c, n, &taken, out, err) < 0)
                    return -1;
                if (pg->lv < pg->n_lv)
                    return 0; /* stopped at the start of the row after the last */
                continue;
            }
            size_t k = n - taken < pg->n_lv - pg->lv ? n - taken : pg->n_lv - pg->lv;
            if (k == 0)
                return 0;
            if (append_scalars(c, k, out, err) < 0)
                return -1;
            taken += k;
            continue;
        }
        /* The page is used up. Pages read in order may continue the last row
         * on the next page, so a list column looks at the next one. */
        if (taken == n && (!c->col->max_rep || c->indexed))
            return 0;
        int rc = next_page(c, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (taken == n)
                return 0;
            return chunk_fail(c, err, "column chunk ends before the row group's %lld rows",
                              (long long)c->rg_rows);
        }
    }
}

void pq_cursor_free(pq_cursor *c)
{
    growbuf_free(&c->dict_buf);
    growbuf_free(&c->dict_vals);
    growbuf_free(&c->dict_strs);
    growbuf_free(&c->page_buf);
    growbuf_free(&c->def);
    growbuf_free(&c->rep);
    growbuf_free(&c->vals);
    growbuf_free(&c->idx);
    pq_scratch_free(&c->scratch);
    nx_arena_free(&c->oi_arena);
    nx_arena_free(&c->hdr_arena);
}

/* ------------------------------------------------------------------ finish */

static int close_offsets(pq_growbuf *b, uint64_t end)
{
    if (grow(b, b->len + 8) < 0)
        return -1;
    push_u64(b, end);
    return 0;
}

int pq_colbuf_finish(pq_colbuf *b, const pq_column *col, nxpq_column_data *o)
{
    memset(o, 0, sizeof *o);
    /* Every array handed out is non-NULL, even when empty. */
    if (grow(&b->vals, 8) < 0 || grow(&b->data, 1) < 0 || grow(&b->elem_valid, 1) < 0)
        return -1;
    o->type = col->info.type;
    o->valid = b->any_null ? b->valid.p : NULL;
    if (b->dict) {
        o->dict_index = (const uint32_t *)b->vals.p;
        o->dict_n = b->dict_n;
        o->dict_values.b = b->dict_vals;
        o->dict_strs = b->dict_strs;
        o->dict_id = b->dict_id;
        return 0;
    }
    o->values.b = b->vals.p;
    bool lists = col->info.type == NXPQ_LIST_INT64 || col->info.type == NXPQ_LIST_STRING;
    bool strings = col->info.type == NXPQ_STRING || col->info.type == NXPQ_LIST_STRING;
    if (lists) {
        if (close_offsets(&b->list_offsets, b->n_elems) < 0)
            return -1;
        o->list_offsets = (const uint64_t *)b->list_offsets.p;
        o->element_valid = b->any_null_elem ? b->elem_valid.p : NULL;
    }
    if (strings) {
        if (close_offsets(&b->offsets, b->data.len) < 0)
            return -1;
        o->offsets = (const uint64_t *)b->offsets.p;
        o->data = (const char *)b->data.p;
    }
    return 0;
}
