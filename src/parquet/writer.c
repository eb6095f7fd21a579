/*
 * writer.c — the streaming, column-buffered Parquet writer (see parquet.h).
 *
 * Data flow per column: put_*() appends levels and values to the current page's
 * buffers and updates page statistics; at a row boundary a full page is encoded
 * (levels RLE, values PLAIN / RLE_DICTIONARY / DELTA_BINARY_PACKED), compressed
 * and appended to the column's chunk buffer. When the row group fills, every
 * column writes its dictionary page (if any) and its buffered data pages to the
 * file, and remembers what the footer and page index need. close() writes all
 * ColumnIndex and OffsetIndex structures, then the footer.
 *
 * Memory is bounded by one row group of encoded, compressed pages plus one
 * dictionary per column.
 */
#include "parquet/parquet.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "nxprof_version.h"
#include "parquet/compress.h"
#include "parquet/encode.h"
#include "parquet/format.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nxprof's Parquet writer copies values as they lie in memory: little-endian hosts only"
#endif

/* ------------------------------------------------------------- statistics */

/* Running min/max/null/NaN counts over a page or a column chunk. */
typedef struct stats_acc {
    bool any;                /* at least one non-null, non-NaN value seen */
    int64_t imin, imax;      /* INT32, INT64, BOOLEAN, LIST_INT64 */
    double dmin, dmax;       /* FLOAT, DOUBLE */
    nx_strbuf smin, smax;    /* STRING, LIST_STRING (owned copies) */
    int64_t nulls, nans;
} stats_acc;

static void stats_reset(stats_acc *s)
{
    s->any = false;
    s->nulls = s->nans = 0;
    s->smin.len = s->smax.len = 0;
}

static void stats_free(stats_acc *s)
{
    nx_strbuf_free(&s->smin);
    nx_strbuf_free(&s->smax);
}

static int bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static void stats_int(stats_acc *s, int64_t v)
{
    if (!s->any) {
        s->any = true;
        s->imin = s->imax = v;
    } else if (v < s->imin) {
        s->imin = v;
    } else if (v > s->imax) {
        s->imax = v;
    }
}

static void stats_double(stats_acc *s, double v)
{
    if (isnan(v)) {
        s->nans++;
        return;
    }
    if (!s->any) {
        s->any = true;
        s->dmin = v == 0 ? -0.0 : v;
        s->dmax = v == 0 ? 0.0 : v;
        return;
    }
    /* Zeros: the spec wants min -0.0 and max +0.0 whenever a zero is the bound. */
    if (v < s->dmin || (v == 0 && s->dmin == 0))
        s->dmin = v == 0 ? -0.0 : v;
    if (v > s->dmax || (v == 0 && s->dmax == 0))
        s->dmax = v == 0 ? 0.0 : v;
}

static void set_bytes(nx_strbuf *b, const void *p, size_t n)
{
    b->len = 0;
    nx_strbuf_append(b, p, n);
}

static void stats_bytes(stats_acc *s, const void *p, size_t n)
{
    if (!s->any) {
        s->any = true;
        set_bytes(&s->smin, p, n);
        set_bytes(&s->smax, p, n);
        return;
    }
    if (bytes_cmp(p, n, s->smin.data, s->smin.len) < 0)
        set_bytes(&s->smin, p, n);
    else if (bytes_cmp(p, n, s->smax.data, s->smax.len) > 0)
        set_bytes(&s->smax, p, n);
}

/* Folds a page's statistics into the chunk's. */
static void stats_merge(stats_acc *chunk, const stats_acc *page, nxpq_type type)
{
    chunk->nulls += page->nulls;
    chunk->nans += page->nans;
    if (!page->any)
        return;
    switch (type) {
    case NXPQ_FLOAT:
    case NXPQ_DOUBLE:
        stats_double(chunk, page->dmin);
        stats_double(chunk, page->dmax);
        break;
    case NXPQ_STRING:
    case NXPQ_LIST_STRING:
        stats_bytes(chunk, page->smin.data, page->smin.len);
        stats_bytes(chunk, page->smax.data, page->smax.len);
        break;
    default:
        stats_int(chunk, page->imin);
        stats_int(chunk, page->imax);
    }
}

/* ------------------------------------------------------------- dictionary */

/* Distinct values of one column chunk, PLAIN-encoded in insertion order, with an
 * open-addressing hash table of entry indices (0 marks an empty slot). */
typedef struct dictionary {
    nx_strbuf plain;         /* the dictionary page body */
    uint32_t *slots;         /* entry index + 1 */
    uint64_t *hashes;        /* per entry, to resize and to compare quickly */
    uint32_t *offsets;       /* per entry: offset of its PLAIN form in plain */
    size_t n_slots, n_entries, cap_entries;
} dictionary;

static void dict_clear(dictionary *d)
{
    d->plain.len = 0;
    if (d->slots)
        memset(d->slots, 0, d->n_slots * sizeof *d->slots);
    d->n_entries = 0;
}

static void dict_free(dictionary *d)
{
    nx_strbuf_free(&d->plain);
    free(d->slots);
    free(d->hashes);
    free(d->offsets);
    memset(d, 0, sizeof *d);
}

static int dict_grow(dictionary *d)
{
    if (d->n_entries == d->cap_entries) {
        size_t cap = d->cap_entries ? d->cap_entries * 2 : 1024;
        uint64_t *h = realloc(d->hashes, cap * sizeof *h);
        if (!h)
            return -1;
        d->hashes = h;
        uint32_t *o = realloc(d->offsets, cap * sizeof *o);
        if (!o)
            return -1;
        d->offsets = o;
        d->cap_entries = cap;
    }
    if ((d->n_entries + 1) * 2 <= d->n_slots)
        return 0;
    size_t n_slots = d->n_slots ? d->n_slots * 2 : 2048;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t e = 0; e < d->n_entries; e++) {
        size_t i = d->hashes[e] & (n_slots - 1);
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = (uint32_t)e + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->n_slots = n_slots;
    return 0;
}

/* Index of the value whose PLAIN form is plain[0..n); inserts it if new.
 * `cmp_off`/`cmp_len` locate the bytes that identify a value inside its PLAIN
 * form (strings skip their 4-byte length). Returns -1 when out of memory. */
static int64_t dict_index(dictionary *d, uint64_t hash, const void *plain, size_t n, size_t key_off)
{
    if (dict_grow(d) != 0)
        return -1;
    size_t mask = d->n_slots - 1;
    size_t i = hash & mask;
    const unsigned char *key = (const unsigned char *)plain + key_off;
    size_t key_len = n - key_off;
    for (;;) {
        uint32_t s = d->slots[i];
        if (!s)
            break;
        uint32_t e = s - 1;
        if (d->hashes[e] == hash) {
            uint32_t off = d->offsets[e];
            uint32_t end = e + 1 < d->n_entries ? d->offsets[e + 1] : (uint32_t)d->plain.len;
            if (end - off == n && memcmp(d->plain.data + off + key_off, key, key_len) == 0)
                return e;
        }
        i = (i + 1) & mask;
    }
    if (d->plain.len + n > UINT32_MAX)
        return -1;
    uint32_t e = (uint32_t)d->n_entries++;
    d->hashes[e] = hash;
    d->offsets[e] = (uint32_t)d->plain.len;
    d->slots[i] = e + 1;
    nx_strbuf_append(&d->plain, plain, n);
    return d->plain.failed ? -1 : (int64_t)e;
}

/* ------------------------------------------------------------- columns */

enum { MODE_PLAIN, MODE_DICT, MODE_DELTA };

typedef struct page_info {      /* what the page index needs about one data page */
    int64_t offset;             /* within the chunk buffer, later within the file */
    int32_t size;               /* header + compressed body */
    int64_t first_row;          /* within the row group */
    bool null_page;
    int64_t nulls, nans;
    pq_bytes min, max;          /* arena copies */
} page_info;

typedef struct chunk_index {    /* one column chunk's page index, kept until close */
    page_info *pages;
    uint32_t n_pages;
    bool write_column_index;    /* false when a page's non-null values were all NaN */
    int32_t boundary_order;
} chunk_index;

typedef struct col_writer {
    nxpq_column_spec spec;
    int physical;               /* PQ_* physical type of the leaf */
    int max_def, max_rep;
    int mode;
    bool fallback_pending;      /* dictionary outgrew its limit; switch at the row end */
    bool dict_abandoned;        /* once fallen back, later chunks start in PLAIN */
    /* current page */
    nx_strbuf def, rep;         /* one byte per level */
    nx_strbuf plain;            /* PLAIN values (booleans: one byte each) */
    int64_t *ints;              /* DELTA values */
    uint32_t *idx;              /* dictionary indices */
    size_t n_vals, cap_vals;    /* entries in ints or idx */
    size_t page_rows, page_levels, page_values;
    int64_t last_idx;           /* previous dictionary index, to skip redundant stats */
    stats_acc page_stats, chunk_stats;
    dictionary dict;
    /* current chunk */
    nx_strbuf chunk;            /* encoded data pages */
    page_info *pages;
    size_t n_pages, cap_pages;
    uint32_t encodings;         /* bit set of PQ_ENC_* used */
    int64_t chunk_values;       /* level entries (num_values of the chunk) */
    int64_t chunk_uncompressed; /* data pages, headers included */
    bool chunk_nan_only_page;
    size_t row_pending;         /* values put since the last end_row(s) */
} col_writer;

struct nxpq_writer {
    char *path;
    FILE *f;
    int64_t pos;
    nxpq_writer_options opt;
    col_writer *cols;
    size_t n_cols;
    uint64_t rows, rg_rows;
    size_t rg_bytes;                  /* buffered bytes in this row group (estimate) */
    nx_arena meta;                    /* footer data: row groups, stats copies, kv */
    pq_row_group *rgs;
    chunk_index *indexes;             /* n_rgs * n_cols */
    size_t n_rgs, cap_rgs;
    pq_kv *kv;
    nx_strbuf scratch, compressed;    /* reused page buffers */
    bool failed;
    char err[512];
};

static int fail(nxpq_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(nxpq_writer *w, const char *fmt, ...)
{
    if (w->failed)
        return -1;
    w->failed = true;
    int n = snprintf(w->err, sizeof w->err, "%s: ", w->path);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof w->err)
        vsnprintf(w->err + n, sizeof w->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int physical_of(nxpq_type t)
{
    switch (t) {
    case NXPQ_BOOLEAN: return PQ_BOOLEAN;
    case NXPQ_INT32: return PQ_INT32;
    case NXPQ_INT64: case NXPQ_LIST_INT64: return PQ_INT64;
    case NXPQ_FLOAT: return PQ_FLOAT;
    case NXPQ_DOUBLE: return PQ_DOUBLE;
    case NXPQ_STRING: case NXPQ_LIST_STRING: return PQ_BYTE_ARRAY;
    default: return -1;
    }
}

static bool is_list(nxpq_type t)
{
    return t == NXPQ_LIST_INT64 || t == NXPQ_LIST_STRING;
}

/* The mode a fresh column chunk starts in. */
static int initial_mode(const col_writer *c)
{
    nxpq_encoding_pref e = c->spec.encoding;
    bool intlike = c->physical == PQ_INT32 || c->physical == PQ_INT64;
    if (e == NXPQ_ENCODE_DELTA)
        return MODE_DELTA;
    if (e == NXPQ_ENCODE_PLAIN || c->dict_abandoned)
        return MODE_PLAIN;
    /* Floats rarely repeat exactly and booleans are one bit already. */
    return c->physical == PQ_BYTE_ARRAY || intlike ? MODE_DICT : MODE_PLAIN;
}

static void col_free(col_writer *c)
{
    nx_strbuf_free(&c->def);
    nx_strbuf_free(&c->rep);
    nx_strbuf_free(&c->plain);
    nx_strbuf_free(&c->chunk);
    free(c->ints);
    free(c->idx);
    free(c->pages);
    stats_free(&c->page_stats);
    stats_free(&c->chunk_stats);
    dict_free(&c->dict);
}

/* ------------------------------------------------------------- options */

void nxpq_writer_options_init(nxpq_writer_options *o)
{
    memset(o, 0, sizeof *o);
    o->codec = NXPQ_ZSTD;
    o->compression_level = 3;
    o->row_group_rows = 1u << 20;
    o->row_group_bytes = 128u << 20;
    o->page_bytes = 1u << 20;
    o->page_rows = 65536;
    o->dictionary_max_bytes = 1u << 20;
    o->write_page_index = true;
    o->write_statistics = true;
    o->sorting_column = -1;
}

static int validate_options(nxpq_writer *w)
{
    const nxpq_writer_options *o = &w->opt;
    if (o->codec != NXPQ_ZSTD && o->codec != NXPQ_SNAPPY && o->codec != NXPQ_UNCOMPRESSED)
        return fail(w, "unsupported compression codec %d for writing (use ZSTD, SNAPPY or UNCOMPRESSED)", o->codec);
    if (o->row_group_rows == 0 || o->row_group_bytes == 0 || o->page_bytes == 0 || o->page_rows == 0)
        return fail(w, "row group and page limits must be positive");
    if (o->sorting_column >= (int)w->n_cols)
        return fail(w, "sorting column %d out of range (%zu columns)", o->sorting_column, w->n_cols);
    return 0;
}

/* ------------------------------------------------------------- open */

static int setup_column(nxpq_writer *w, col_writer *c, const nxpq_column_spec *spec)
{
    c->spec = *spec;
    if (!spec->name || !spec->name[0])
        return fail(w, "a column has no name");
    c->spec.name = nx_arena_strndup(&w->meta, spec->name, strlen(spec->name));
    if (!c->spec.name)
        return fail(w, "out of memory");
    c->physical = physical_of(spec->type);
    if (c->physical < 0)
        return fail(w, "column '%s': type %d cannot be written", spec->name, (int)spec->type);
    if (spec->encoding == NXPQ_ENCODE_DELTA && c->physical != PQ_INT32 && c->physical != PQ_INT64)
        return fail(w, "column '%s': DELTA encoding needs an integer column", spec->name);
    if (is_list(spec->type)) {
        c->max_rep = 1;
        c->max_def = spec->nullable ? 3 : 2; /* [null list], empty list, null element, element */
    } else {
        c->max_def = spec->nullable ? 1 : 0;
    }
    c->mode = initial_mode(c);
    c->last_idx = -1;
    return 0;
}

nxpq_writer *nxpq_writer_open(const char *path, const nxpq_column_spec *cols, size_t n_cols,
                              const nxpq_writer_options *opts, nxpq_error *err)
{
    nxpq_writer *w = calloc(1, sizeof *w);
    char *p = path ? strdup(path) : NULL;
    if (!w || !p) {
        free(w);
        free(p);
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path ? path : "(null)");
        return NULL;
    }
    w->path = p;
    if (opts)
        w->opt = *opts;
    else
        nxpq_writer_options_init(&w->opt);
    w->n_cols = n_cols;
    w->cols = calloc(n_cols ? n_cols : 1, sizeof *w->cols);
    if (!w->cols)
        fail(w, "out of memory");
    else if (n_cols == 0)
        fail(w, "a Parquet file needs at least one column");
    validate_options(w);
    for (size_t i = 0; i < n_cols && !w->failed; i++)
        setup_column(w, &w->cols[i], &cols[i]);
    for (size_t i = 0; i < n_cols && !w->failed; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(w->cols[i].spec.name, w->cols[j].spec.name) == 0)
                fail(w, "column name '%s' used twice", w->cols[i].spec.name);
    if (!w->failed && w->opt.n_metadata) {
        w->kv = nx_arena_calloc(&w->meta, w->opt.n_metadata, sizeof *w->kv);
        for (size_t i = 0; w->kv && i < w->opt.n_metadata; i++) {
            const nxpq_kv *kv = &w->opt.metadata[i];
            w->kv[i].key = nx_arena_strndup(&w->meta, kv->key, strlen(kv->key));
            w->kv[i].value = kv->value ? nx_arena_strndup(&w->meta, kv->value, strlen(kv->value)) : NULL;
            if (!w->kv[i].key || (kv->value && !w->kv[i].value))
                w->kv = NULL;
        }
        if (!w->kv)
            fail(w, "out of memory");
    }
    const char *created_by = w->opt.created_by ? w->opt.created_by : "nxprof version " NXPROF_VERSION;
    w->opt.created_by = nx_arena_strndup(&w->meta, created_by, strlen(created_by));
    if (!w->failed && !w->opt.created_by)
        fail(w, "out of memory");
    if (!w->failed) {
        w->f = fopen(path, "wb");
        if (!w->f)
            fail(w, "cannot create: %s", strerror(errno));
        else
            setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    }
    if (!w->failed && fwrite("PAR1", 1, 4, w->f) != 4)
        fail(w, "write failed: %s", strerror(errno));
    w->pos = 4;
    if (w->failed) {
        snprintf(err->msg, sizeof err->msg, "%s", w->err);
        nxpq_writer_abort(w);
        return NULL;
    }
    return w;
}

/* ------------------------------------------------------------- pages */

static int write_bytes(nxpq_writer *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return fail(w, "write failed: %s", strerror(errno));
    w->pos += (int64_t)n;
    return 0;
}

static void append_u32le(nx_strbuf *b, uint32_t v)
{
    nx_strbuf_append(b, &v, 4);
}

/* Levels, RLE-encoded with the 4-byte length prefix of data page v1. */
static void encode_levels(nx_strbuf *out, const nx_strbuf *levels, int max_level)
{
    size_t at = out->len;
    append_u32le(out, 0);
    pq_encode_rle_hybrid_u8(out, (const uint8_t *)levels->data, levels->len, pq_bit_width((uint64_t)max_level));
    if (!out->failed) {
        uint32_t len = (uint32_t)(out->len - at - 4);
        memcpy(out->data + at, &len, 4);
    }
}

static void encode_values(col_writer *c, nx_strbuf *body)
{
    switch (c->mode) {
    case MODE_DICT: {
        int width = pq_bit_width(c->dict.n_entries ? c->dict.n_entries - 1 : 0);
        nx_strbuf_putc(body, (char)width);
        pq_encode_rle_hybrid(body, c->idx, c->n_vals, width);
        break;
    }
    case MODE_DELTA:
        pq_encode_delta_binary_packed(body, c->ints, c->n_vals);
        break;
    default:
        if (c->physical == PQ_BOOLEAN)
            pq_encode_plain_bools(body, (const uint8_t *)c->plain.data, c->plain.len);
        else
            nx_strbuf_append(body, c->plain.data, c->plain.len);
    }
}

static int page_encoding(const col_writer *c)
{
    return c->mode == MODE_DICT ? PQ_ENC_RLE_DICTIONARY : c->mode == MODE_DELTA ? PQ_ENC_DELTA_BINARY_PACKED : PQ_ENC_PLAIN;
}

/* Encodes stats bounds as PLAIN bytes (no length prefix for strings). */
static pq_bytes stat_bound(nxpq_writer *w, const col_writer *c, const stats_acc *s, bool max)
{
    pq_bytes b = {NULL, 0};
    unsigned char buf[8];
    const void *src = buf;
    size_t n = 0;
    switch (c->physical) {
    case PQ_BOOLEAN: buf[0] = (unsigned char)(max ? s->imax : s->imin); n = 1; break;
    case PQ_INT32: { int32_t v = (int32_t)(max ? s->imax : s->imin); memcpy(buf, &v, 4); n = 4; break; }
    case PQ_INT64: { int64_t v = max ? s->imax : s->imin; memcpy(buf, &v, 8); n = 8; break; }
    case PQ_FLOAT: { float v = (float)(max ? s->dmax : s->dmin); memcpy(buf, &v, 4); n = 4; break; }
    case PQ_DOUBLE: { double v = max ? s->dmax : s->dmin; memcpy(buf, &v, 8); n = 8; break; }
    default: {
        const nx_strbuf *sb = max ? &s->smax : &s->smin;
        src = sb->data;
        n = sb->len;
    }
    }
    uint8_t *p = nx_arena_alloc(&w->meta, n ? n : 1);
    if (!p) {
        fail(w, "out of memory");
        return b;
    }
    if (n)
        memcpy(p, src, n);
    b.ptr = p;
    b.len = (uint32_t)n;
    return b;
}

static void fill_statistics(nxpq_writer *w, const col_writer *c, const stats_acc *s, pq_statistics *out)
{
    memset(out, 0, sizeof *out);
    out->has_null_count = true;
    out->null_count = s->nulls;
    if (c->physical == PQ_FLOAT || c->physical == PQ_DOUBLE) {
        out->has_nan_count = true;
        out->nan_count = s->nans;
    }
    if (s->any) {
        out->has_min = out->has_max = true;
        out->min_value = stat_bound(w, c, s, false);
        out->max_value = stat_bound(w, c, s, true);
    }
}

static int add_page_info(nxpq_writer *w, col_writer *c, int64_t offset, int32_t size, int64_t first_row)
{
    if (c->n_pages == c->cap_pages) {
        size_t cap = c->cap_pages ? c->cap_pages * 2 : 16;
        page_info *p = realloc(c->pages, cap * sizeof *p);
        if (!p)
            return fail(w, "out of memory");
        c->pages = p;
        c->cap_pages = cap;
    }
    page_info *pi = &c->pages[c->n_pages++];
    memset(pi, 0, sizeof *pi);
    pi->offset = offset;
    pi->size = size;
    pi->first_row = first_row;
    pi->nulls = c->page_stats.nulls;
    pi->nans = c->page_stats.nans;
    pi->null_page = c->page_values == 0;
    if (c->page_values > 0 && !c->page_stats.any)
        c->chunk_nan_only_page = true; /* only NaNs: no valid bounds for the column index */
    if (c->page_stats.any) {
        pi->min = stat_bound(w, c, &c->page_stats, false);
        pi->max = stat_bound(w, c, &c->page_stats, true);
    }
    return w->failed ? -1 : 0;
}

/* Encodes, compresses and appends the current page to the chunk buffer. */
static int flush_page(nxpq_writer *w, col_writer *c)
{
    if (c->page_levels == 0)
        return 0;
    nx_strbuf *body = &w->scratch, *comp = &w->compressed;
    body->len = comp->len = 0;
    if (c->max_rep)
        encode_levels(body, &c->rep, c->max_rep);
    if (c->max_def)
        encode_levels(body, &c->def, c->max_def);
    encode_values(c, body);
    if (body->failed)
        return fail(w, "column '%s': out of memory encoding a page", c->spec.name);
    if (body->len > INT32_MAX)
        return fail(w, "column '%s': a page exceeds 2 GiB; lower page_bytes", c->spec.name);
    char msg[200];
    if (pq_compress(w->opt.codec, w->opt.compression_level, body->data, body->len, comp, msg, sizeof msg) != 0)
        return fail(w, "column '%s': %s", c->spec.name, msg);
    if (comp->len > INT32_MAX)
        return fail(w, "column '%s': a compressed page exceeds 2 GiB", c->spec.name);

    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DATA;
    h.uncompressed_page_size = (int32_t)body->len;
    h.compressed_page_size = (int32_t)comp->len;
    h.has_data_page_header = true;
    h.data_page_header.num_values = (int32_t)c->page_levels;
    h.data_page_header.encoding = page_encoding(c);
    h.data_page_header.definition_level_encoding = PQ_ENC_RLE;
    h.data_page_header.repetition_level_encoding = PQ_ENC_RLE;
    /* With a page index the bounds live there; otherwise put them in the header. */
    if (w->opt.write_statistics && !w->opt.write_page_index) {
        h.data_page_header.has_statistics = true;
        fill_statistics(w, c, &c->page_stats, &h.data_page_header.statistics);
    }
    size_t start = c->chunk.len;
    pq_write_page_header(&c->chunk, &h);
    size_t header_len = c->chunk.len - start;
    nx_strbuf_append(&c->chunk, comp->data, comp->len);
    if (c->chunk.failed)
        return fail(w, "column '%s': out of memory buffering a page", c->spec.name);

    int64_t first_row = (int64_t)(w->rg_rows - c->page_rows);
    if (add_page_info(w, c, (int64_t)start, (int32_t)(header_len + comp->len), first_row) != 0)
        return -1;
    c->encodings |= 1u << page_encoding(c);
    if (c->max_def || c->max_rep)
        c->encodings |= 1u << PQ_ENC_RLE;
    c->chunk_values += (int64_t)c->page_levels;
    c->chunk_uncompressed += (int64_t)(header_len + body->len);
    w->rg_bytes += header_len + comp->len;
    stats_merge(&c->chunk_stats, &c->page_stats, c->spec.type);

    stats_reset(&c->page_stats);
    c->def.len = c->rep.len = c->plain.len = 0;
    c->n_vals = c->page_rows = c->page_levels = c->page_values = 0;
    c->last_idx = -1;
    return 0;
}

/* Rough encoded size of the current page, to decide when it is full. */
static size_t page_size_estimate(const col_writer *c)
{
    size_t levels = (c->page_levels * (size_t)((c->max_def ? 2 : 0) + (c->max_rep ? 1 : 0))) / 8;
    switch (c->mode) {
    case MODE_DICT: return levels + c->n_vals * (size_t)(pq_bit_width(c->dict.n_entries) + 7) / 8;
    case MODE_DELTA: return levels + c->n_vals * 8;
    default: return levels + (c->physical == PQ_BOOLEAN ? c->plain.len / 8 : c->plain.len);
    }
}

/* ------------------------------------------------------------- values */

static int reserve_vals(nxpq_writer *w, col_writer *c, size_t more)
{
    if (c->n_vals + more <= c->cap_vals)
        return 0;
    size_t cap = c->cap_vals ? c->cap_vals : 4096;
    while (cap < c->n_vals + more)
        cap *= 2;
    if (c->mode == MODE_DELTA) {
        int64_t *p = realloc(c->ints, cap * sizeof *p);
        if (!p)
            return fail(w, "out of memory");
        c->ints = p;
    } else {
        uint32_t *p = realloc(c->idx, cap * sizeof *p);
        if (!p)
            return fail(w, "out of memory");
        c->idx = p;
    }
    c->cap_vals = cap;
    return 0;
}

/* Adds a dictionary index, scheduling the PLAIN fallback when the dictionary is full. */
static int push_dict(nxpq_writer *w, col_writer *c, uint64_t hash, const void *plain, size_t n, size_t key_off)
{
    int64_t e = dict_index(&c->dict, hash, plain, n, key_off);
    if (e < 0)
        return fail(w, "column '%s': out of memory growing the dictionary", c->spec.name);
    if (c->dict.plain.len > w->opt.dictionary_max_bytes)
        c->fallback_pending = true;
    if (reserve_vals(w, c, 1) != 0)
        return -1;
    c->idx[c->n_vals++] = (uint32_t)e;
    return 0;
}

/* A 64-bit finalizer (MurmurHash3's fmix64): every input bit affects the low
 * bits that pick a hash slot, so patterned ids (multiples of 1024) spread out. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static int value_int(nxpq_writer *w, col_writer *c, int64_t v)
{
    stats_int(&c->page_stats, v);
    c->page_values++;
    if (c->mode == MODE_DELTA) {
        if (reserve_vals(w, c, 1) != 0)
            return -1;
        c->ints[c->n_vals++] = v;
        return 0;
    }
    int32_t v32 = (int32_t)v;
    const void *plain = c->physical == PQ_INT32 ? (const void *)&v32 : (const void *)&v;
    size_t n = c->physical == PQ_INT32 ? 4 : 8;
    if (c->mode == MODE_DICT)
        return push_dict(w, c, mix64((uint64_t)v), plain, n, 0);
    nx_strbuf_append(&c->plain, plain, n);
    return c->plain.failed ? fail(w, "out of memory") : 0;
}

static int value_bytes(nxpq_writer *w, col_writer *c, const char *s, size_t len)
{
    if (len > INT32_MAX)
        return fail(w, "column '%s': a string of %zu bytes exceeds Parquet's 2 GiB limit", c->spec.name, len);
    c->page_values++;
    if (c->mode == MODE_DICT) {
        /* Build the PLAIN form (length + bytes) in scratch space for lookup. */
        char small[256];
        char *plain = len + 4 <= sizeof small ? small : malloc(len + 4);
        if (!plain)
            return fail(w, "out of memory");
        uint32_t l32 = (uint32_t)len;
        memcpy(plain, &l32, 4);
        if (len)
            memcpy(plain + 4, s, len);
        int rc = push_dict(w, c, XXH3_64bits(s, len), plain, len + 4, 4);
        if (plain != small)
            free(plain);
        if (rc != 0)
            return -1;
        int64_t e = c->idx[c->n_vals - 1];
        if (e != c->last_idx) {
            stats_bytes(&c->page_stats, s, len);
            c->last_idx = e;
        }
        return 0;
    }
    stats_bytes(&c->page_stats, s, len);
    append_u32le(&c->plain, (uint32_t)len);
    nx_strbuf_append(&c->plain, s, len);
    return c->plain.failed ? fail(w, "out of memory") : 0;
}

static void push_levels(col_writer *c, int def, int rep)
{
    if (c->max_def)
        nx_strbuf_putc(&c->def, (char)def);
    if (c->max_rep)
        nx_strbuf_putc(&c->rep, (char)rep);
    c->page_levels++;
}

/* Checks the writer state and the column's type; returns the column or NULL. */
static col_writer *column_for(nxpq_writer *w, size_t col, nxpq_type type)
{
    if (w->failed)
        return NULL;
    if (col >= w->n_cols) {
        fail(w, "column index %zu out of range (%zu columns)", col, w->n_cols);
        return NULL;
    }
    col_writer *c = &w->cols[col];
    if (c->spec.type != type) {
        fail(w, "column '%s' is %s, not %s", c->spec.name, nxpq_type_name(c->spec.type), nxpq_type_name(type));
        return NULL;
    }
    c->row_pending++;
    return c;
}

int nxpq_put_int64(nxpq_writer *w, size_t col, int64_t v)
{
    col_writer *c = column_for(w, col, NXPQ_INT64);
    if (!c)
        return -1;
    push_levels(c, c->max_def, 0);
    return value_int(w, c, v);
}

int nxpq_put_int32(nxpq_writer *w, size_t col, int32_t v)
{
    col_writer *c = column_for(w, col, NXPQ_INT32);
    if (!c)
        return -1;
    push_levels(c, c->max_def, 0);
    return value_int(w, c, v);
}

static int put_floating(nxpq_writer *w, col_writer *c, double v, const void *plain, size_t n)
{
    push_levels(c, c->max_def, 0);
    stats_double(&c->page_stats, v);
    c->page_values++;
    nx_strbuf_append(&c->plain, plain, n);
    return c->plain.failed ? fail(w, "out of memory") : 0;
}

int nxpq_put_float(nxpq_writer *w, size_t col, float v)
{
    col_writer *c = column_for(w, col, NXPQ_FLOAT);
    return c ? put_floating(w, c, v, &v, 4) : -1;
}

int nxpq_put_double(nxpq_writer *w, size_t col, double v)
{
    col_writer *c = column_for(w, col, NXPQ_DOUBLE);
    return c ? put_floating(w, c, v, &v, 8) : -1;
}

int nxpq_put_bool(nxpq_writer *w, size_t col, bool v)
{
    col_writer *c = column_for(w, col, NXPQ_BOOLEAN);
    if (!c)
        return -1;
    push_levels(c, c->max_def, 0);
    stats_int(&c->page_stats, v);
    c->page_values++;
    nx_strbuf_putc(&c->plain, v ? 1 : 0);
    return c->plain.failed ? fail(w, "out of memory") : 0;
}

int nxpq_put_string(nxpq_writer *w, size_t col, const char *s, size_t len)
{
    col_writer *c = column_for(w, col, NXPQ_STRING);
    if (!c)
        return -1;
    push_levels(c, c->max_def, 0);
    return value_bytes(w, c, s, len);
}

int nxpq_put_null(nxpq_writer *w, size_t col)
{
    if (w->failed)
        return -1;
    if (col >= w->n_cols)
        return fail(w, "column index %zu out of range (%zu columns)", col, w->n_cols);
    col_writer *c = &w->cols[col];
    if (!c->spec.nullable)
        return fail(w, "column '%s' is required: null at row %llu", c->spec.name, (unsigned long long)w->rows);
    c->row_pending++;
    push_levels(c, 0, 0);
    c->page_stats.nulls++;
    return 0;
}

/* Level of an empty list, of a null element and of a present element. */
static int list_base(const col_writer *c)
{
    return c->spec.nullable ? 1 : 0;
}

int nxpq_put_list_int64(nxpq_writer *w, size_t col, const int64_t *items, size_t n)
{
    col_writer *c = column_for(w, col, NXPQ_LIST_INT64);
    if (!c)
        return -1;
    if (n == 0) {
        push_levels(c, list_base(c), 0);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        push_levels(c, list_base(c) + 2, i ? 1 : 0);
        if (value_int(w, c, items[i]) != 0)
            return -1;
    }
    return 0;
}

int nxpq_put_list_string(nxpq_writer *w, size_t col, const nxpq_str *items, size_t n)
{
    col_writer *c = column_for(w, col, NXPQ_LIST_STRING);
    if (!c)
        return -1;
    if (n == 0) {
        push_levels(c, list_base(c), 0);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!items[i].ptr) {
            push_levels(c, list_base(c) + 1, i ? 1 : 0);
            c->page_stats.nulls++;
            continue;
        }
        push_levels(c, list_base(c) + 2, i ? 1 : 0);
        if (value_bytes(w, c, items[i].ptr, items[i].len) != 0)
            return -1;
    }
    return 0;
}

int nxpq_put_int64_array(nxpq_writer *w, size_t col, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (nxpq_put_int64(w, col, v[i]) != 0)
            return -1;
    return 0;
}

int nxpq_put_double_array(nxpq_writer *w, size_t col, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (nxpq_put_double(w, col, v[i]) != 0)
            return -1;
    return 0;
}

/* ------------------------------------------------------------- row groups */

static int add_row_group(nxpq_writer *w)
{
    if (w->n_rgs == w->cap_rgs) {
        size_t cap = w->cap_rgs ? w->cap_rgs * 2 : 8;
        pq_row_group *r = realloc(w->rgs, cap * sizeof *r);
        if (!r)
            return fail(w, "out of memory");
        w->rgs = r;
        chunk_index *ci = realloc(w->indexes, cap * w->n_cols * sizeof *ci);
        if (!ci)
            return fail(w, "out of memory");
        w->indexes = ci;
        w->cap_rgs = cap;
    }
    if (w->n_rgs >= INT16_MAX)
        return fail(w, "more than %d row groups; raise row_group_rows", INT16_MAX);
    pq_row_group *rg = &w->rgs[w->n_rgs];
    memset(rg, 0, sizeof *rg);
    rg->columns = nx_arena_calloc(&w->meta, w->n_cols, sizeof *rg->columns);
    if (!rg->columns)
        return fail(w, "out of memory");
    rg->n_columns = (uint32_t)w->n_cols;
    return 0;
}

/* Writes the chunk's dictionary page (if the chunk used one) to the file. */
static int write_dictionary_page(nxpq_writer *w, col_writer *c, int64_t *uncompressed)
{
    nx_strbuf *comp = &w->compressed;
    comp->len = 0;
    char msg[200];
    const dictionary *d = &c->dict;
    if (d->plain.len > INT32_MAX)
        return fail(w, "column '%s': dictionary exceeds 2 GiB", c->spec.name);
    if (pq_compress(w->opt.codec, w->opt.compression_level, d->plain.data, d->plain.len, comp, msg, sizeof msg) != 0)
        return fail(w, "column '%s': %s", c->spec.name, msg);
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DICTIONARY;
    h.uncompressed_page_size = (int32_t)d->plain.len;
    h.compressed_page_size = (int32_t)comp->len;
    h.has_dictionary_page_header = true;
    h.dictionary_page_header.num_values = (int32_t)d->n_entries;
    h.dictionary_page_header.encoding = PQ_ENC_PLAIN;
    nx_strbuf *hdr = &w->scratch;
    hdr->len = 0;
    pq_write_page_header(hdr, &h);
    if (hdr->failed)
        return fail(w, "out of memory");
    *uncompressed = (int64_t)(hdr->len + d->plain.len);
    if (write_bytes(w, hdr->data, hdr->len) != 0 || write_bytes(w, comp->data, comp->len) != 0)
        return -1;
    return 0;
}

static int32_t boundary_order(const col_writer *c, const page_info *p, uint32_t n);

static int encodings_list(nxpq_writer *w, col_writer *c, pq_column_meta *m)
{
    uint32_t n = 0;
    for (int e = 0; e < 32; e++)
        n += (c->encodings >> e) & 1;
    m->encodings = nx_arena_calloc(&w->meta, n ? n : 1, sizeof *m->encodings);
    if (!m->encodings)
        return fail(w, "out of memory");
    for (int e = 0; e < 32; e++)
        if ((c->encodings >> e) & 1)
            m->encodings[m->n_encodings++] = e;
    return 0;
}

static const char *const LIST_PATH_TAIL[] = {"list", "element"};

/* Writes one column's chunk (dictionary page, then data pages) and records its metadata. */
static int write_column_chunk(nxpq_writer *w, size_t ci, pq_column_chunk *cc, chunk_index *idx)
{
    col_writer *c = &w->cols[ci];
    if (flush_page(w, c) != 0)
        return -1;
    pq_column_meta *m = &cc->meta;
    int64_t start = w->pos, dict_uncompressed = 0;
    bool has_dict = c->dict.n_entries > 0 && (c->encodings & (1u << PQ_ENC_RLE_DICTIONARY));
    if (has_dict) {
        if (write_dictionary_page(w, c, &dict_uncompressed) != 0)
            return -1;
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset = start;
        c->encodings |= 1u << PQ_ENC_PLAIN; /* the dictionary page's encoding */
    }
    int64_t data_start = w->pos;
    if (write_bytes(w, c->chunk.data, c->chunk.len) != 0)
        return -1;
    m->type = c->physical;
    m->codec = w->opt.codec;
    m->num_values = c->chunk_values;
    m->total_uncompressed_size = c->chunk_uncompressed + dict_uncompressed;
    m->total_compressed_size = w->pos - start;
    m->data_page_offset = data_start;
    if (encodings_list(w, c, m) != 0)
        return -1;
    bool list = is_list(c->spec.type);
    m->n_path = list ? 3 : 1;
    m->path_in_schema = nx_arena_calloc(&w->meta, m->n_path, sizeof *m->path_in_schema);
    if (!m->path_in_schema)
        return fail(w, "out of memory");
    m->path_in_schema[0] = c->spec.name;
    if (list) {
        m->path_in_schema[1] = LIST_PATH_TAIL[0];
        m->path_in_schema[2] = LIST_PATH_TAIL[1];
    }
    if (w->opt.write_statistics) {
        m->has_statistics = true;
        fill_statistics(w, c, &c->chunk_stats, &m->statistics);
    }
    cc->file_offset = 0; /* deprecated field; 0 as the spec asks */

    /* Page index: page offsets become file offsets; the arrays move to the arena. */
    idx->n_pages = (uint32_t)c->n_pages;
    idx->pages = nx_arena_calloc(&w->meta, c->n_pages ? c->n_pages : 1, sizeof *idx->pages);
    if (!idx->pages)
        return fail(w, "out of memory");
    for (size_t p = 0; p < c->n_pages; p++) {
        idx->pages[p] = c->pages[p];
        idx->pages[p].offset += data_start;
    }
    idx->write_column_index = w->opt.write_page_index && !c->chunk_nan_only_page;
    idx->boundary_order = boundary_order(c, idx->pages, idx->n_pages);

    /* Reset for the next row group. */
    c->chunk.len = 0;
    c->n_pages = 0;
    c->encodings = 0;
    c->chunk_values = c->chunk_uncompressed = 0;
    c->chunk_nan_only_page = false;
    stats_reset(&c->chunk_stats);
    if (c->mode == MODE_PLAIN && !c->dict_abandoned && c->dict.n_entries)
        c->dict_abandoned = true; /* fell back in this chunk: high cardinality */
    dict_clear(&c->dict);
    c->mode = initial_mode(c);
    return w->failed ? -1 : 0;
}

static int flush_row_group(nxpq_writer *w)
{
    if (w->rg_rows == 0)
        return 0;
    if (add_row_group(w) != 0)
        return -1;
    pq_row_group *rg = &w->rgs[w->n_rgs];
    int64_t start = w->pos, uncompressed = 0;
    for (size_t ci = 0; ci < w->n_cols; ci++) {
        if (write_column_chunk(w, ci, &rg->columns[ci], &w->indexes[w->n_rgs * w->n_cols + ci]) != 0)
            return -1;
        uncompressed += rg->columns[ci].meta.total_uncompressed_size;
    }
    rg->num_rows = (int64_t)w->rg_rows;
    rg->total_byte_size = uncompressed;
    rg->has_file_offset = true;
    rg->file_offset = start;
    rg->has_total_compressed_size = true;
    rg->total_compressed_size = w->pos - start;
    if (w->opt.sorting_column >= 0) {
        rg->sorting_columns = nx_arena_calloc(&w->meta, 1, sizeof *rg->sorting_columns);
        if (!rg->sorting_columns)
            return fail(w, "out of memory");
        rg->sorting_columns[0].column_idx = w->opt.sorting_column;
        rg->n_sorting_columns = 1;
    }
    w->n_rgs++;
    w->rg_rows = 0;
    w->rg_bytes = 0;
    return 0;
}

int nxpq_end_rows(nxpq_writer *w, size_t n)
{
    if (w->failed)
        return -1;
    for (size_t i = 0; i < w->n_cols; i++) {
        col_writer *c = &w->cols[i];
        if (c->row_pending != n)
            return fail(w, "row %llu: column '%s' got %zu value(s), expected %zu",
                        (unsigned long long)w->rows, c->spec.name, c->row_pending, n);
    }
    w->rows += n;
    w->rg_rows += n;
    size_t buffered = w->rg_bytes;
    for (size_t i = 0; i < w->n_cols; i++) {
        col_writer *c = &w->cols[i];
        c->row_pending = 0;
        c->page_rows += n;
        size_t est = page_size_estimate(c);
        if (c->fallback_pending || c->page_rows >= w->opt.page_rows || est >= w->opt.page_bytes) {
            if (flush_page(w, c) != 0)
                return -1;
            if (c->fallback_pending) {
                c->fallback_pending = false;
                c->mode = MODE_PLAIN;
            }
        }
        buffered += est;
    }
    if (w->rg_rows >= w->opt.row_group_rows || buffered >= w->opt.row_group_bytes)
        return flush_row_group(w);
    return 0;
}

int nxpq_end_row(nxpq_writer *w)
{
    return nxpq_end_rows(w, 1);
}

uint64_t nxpq_writer_rows(const nxpq_writer *w)
{
    return w->rows;
}

/* ------------------------------------------------------------- page index + footer */

/* ASCENDING/DESCENDING when every page's bounds are ordered that way. */
static int32_t boundary_order(const col_writer *c, const page_info *p, uint32_t n)
{
    bool asc = true, desc = true;
    const page_info *prev = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (p[i].null_page)
            continue;
        if (prev) {
            int cmin, cmax;
            if (c->physical == PQ_BYTE_ARRAY) {
                cmin = bytes_cmp(prev->min.ptr, prev->min.len, p[i].min.ptr, p[i].min.len);
                cmax = bytes_cmp(prev->max.ptr, prev->max.len, p[i].max.ptr, p[i].max.len);
            } else {
                double a, b, x, y;
                int64_t ia = 0, ib = 0, ix = 0, iy = 0;
                float fa, fb, fx, fy;
                switch (c->physical) {
                case PQ_FLOAT:
                    memcpy(&fa, prev->min.ptr, 4); memcpy(&fb, p[i].min.ptr, 4);
                    memcpy(&fx, prev->max.ptr, 4); memcpy(&fy, p[i].max.ptr, 4);
                    a = fa; b = fb; x = fx; y = fy;
                    break;
                case PQ_DOUBLE:
                    memcpy(&a, prev->min.ptr, 8); memcpy(&b, p[i].min.ptr, 8);
                    memcpy(&x, prev->max.ptr, 8); memcpy(&y, p[i].max.ptr, 8);
                    break;
                default:
                    memcpy(&ia, prev->min.ptr, prev->min.len); memcpy(&ib, p[i].min.ptr, p[i].min.len);
                    memcpy(&ix, prev->max.ptr, prev->max.len); memcpy(&iy, p[i].max.ptr, p[i].max.len);
                    if (c->physical == PQ_INT32) {
                        ia = (int32_t)ia; ib = (int32_t)ib; ix = (int32_t)ix; iy = (int32_t)iy;
                    }
                    a = 0; b = 0; x = 0; y = 0;
                }
                if (c->physical == PQ_FLOAT || c->physical == PQ_DOUBLE) {
                    cmin = (a > b) - (a < b);
                    cmax = (x > y) - (x < y);
                } else {
                    cmin = (ia > ib) - (ia < ib);
                    cmax = (ix > iy) - (ix < iy);
                }
            }
            if (cmin > 0 || cmax > 0)
                asc = false;
            if (cmin < 0 || cmax < 0)
                desc = false;
        }
        prev = &p[i];
    }
    return asc ? PQ_BOUNDARY_ASCENDING : desc ? PQ_BOUNDARY_DESCENDING : PQ_BOUNDARY_UNORDERED;
}

static int write_column_index(nxpq_writer *w, const col_writer *c, const chunk_index *idx, pq_column_chunk *cc)
{
    uint32_t n = idx->n_pages;
    pq_column_index ci;
    memset(&ci, 0, sizeof ci);
    ci.n_pages = n;
    ci.null_pages = nx_arena_calloc(&w->meta, n ? n : 1, sizeof *ci.null_pages);
    ci.min_values = nx_arena_calloc(&w->meta, n ? n : 1, sizeof *ci.min_values);
    ci.max_values = nx_arena_calloc(&w->meta, n ? n : 1, sizeof *ci.max_values);
    ci.null_counts = nx_arena_calloc(&w->meta, n ? n : 1, sizeof *ci.null_counts);
    ci.nan_counts = nx_arena_calloc(&w->meta, n ? n : 1, sizeof *ci.nan_counts);
    if (!ci.null_pages || !ci.min_values || !ci.max_values || !ci.null_counts || !ci.nan_counts)
        return fail(w, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        ci.null_pages[i] = idx->pages[i].null_page;
        ci.min_values[i] = idx->pages[i].min;
        ci.max_values[i] = idx->pages[i].max;
        ci.null_counts[i] = idx->pages[i].nulls;
        ci.nan_counts[i] = idx->pages[i].nans;
    }
    ci.boundary_order = idx->boundary_order;
    ci.has_null_counts = true;
    ci.has_nan_counts = c->physical == PQ_FLOAT || c->physical == PQ_DOUBLE;
    nx_strbuf *b = &w->scratch;
    b->len = 0;
    pq_write_column_index(b, &ci);
    if (b->failed)
        return fail(w, "out of memory");
    cc->has_column_index = true;
    cc->column_index_offset = w->pos;
    cc->column_index_length = (int32_t)b->len;
    return write_bytes(w, b->data, b->len);
}

static int write_offset_index(nxpq_writer *w, const chunk_index *idx, pq_column_chunk *cc)
{
    pq_offset_index oi;
    oi.n_pages = idx->n_pages;
    oi.pages = nx_arena_calloc(&w->meta, idx->n_pages ? idx->n_pages : 1, sizeof *oi.pages);
    if (!oi.pages)
        return fail(w, "out of memory");
    for (uint32_t i = 0; i < idx->n_pages; i++) {
        oi.pages[i].offset = idx->pages[i].offset;
        oi.pages[i].compressed_page_size = idx->pages[i].size;
        oi.pages[i].first_row_index = idx->pages[i].first_row;
    }
    nx_strbuf *b = &w->scratch;
    b->len = 0;
    pq_write_offset_index(b, &oi);
    if (b->failed)
        return fail(w, "out of memory");
    cc->has_offset_index = true;
    cc->offset_index_offset = w->pos;
    cc->offset_index_length = (int32_t)b->len;
    return write_bytes(w, b->data, b->len);
}

static int write_page_indexes(nxpq_writer *w)
{
    if (!w->opt.write_page_index)
        return 0;
    for (size_t r = 0; r < w->n_rgs; r++)
        for (size_t c = 0; c < w->n_cols; c++) {
            const chunk_index *idx = &w->indexes[r * w->n_cols + c];
            if (idx->write_column_index && write_column_index(w, &w->cols[c], idx, &w->rgs[r].columns[c]) != 0)
                return -1;
        }
    for (size_t r = 0; r < w->n_rgs; r++)
        for (size_t c = 0; c < w->n_cols; c++)
            if (write_offset_index(w, &w->indexes[r * w->n_cols + c], &w->rgs[r].columns[c]) != 0)
                return -1;
    return 0;
}

/* Root, then per column either one leaf or the 3-level LIST group. */
static int build_schema(nxpq_writer *w, pq_file_meta *m)
{
    size_t n = 1;
    for (size_t i = 0; i < w->n_cols; i++)
        n += is_list(w->cols[i].spec.type) ? 3 : 1;
    pq_schema_element *s = nx_arena_calloc(&w->meta, n, sizeof *s);
    if (!s)
        return fail(w, "out of memory");
    s[0].name = "schema";
    s[0].num_children = (int32_t)w->n_cols;
    size_t k = 1;
    for (size_t i = 0; i < w->n_cols; i++) {
        const col_writer *c = &w->cols[i];
        pq_schema_element *leaf;
        if (is_list(c->spec.type)) {
            pq_schema_element *g = &s[k++], *rep = &s[k++];
            g->name = c->spec.name;
            g->has_repetition = true;
            g->repetition = c->spec.nullable ? PQ_OPTIONAL : PQ_REQUIRED;
            g->num_children = 1;
            g->has_converted_type = true;
            g->converted_type = PQ_CONVERTED_LIST;
            g->logical_type = PQ_LOGICAL_LIST;
            rep->name = LIST_PATH_TAIL[0];
            rep->has_repetition = true;
            rep->repetition = PQ_REPEATED;
            rep->num_children = 1;
            leaf = &s[k++];
            leaf->name = LIST_PATH_TAIL[1];
            leaf->repetition = PQ_OPTIONAL;
        } else {
            leaf = &s[k++];
            leaf->name = c->spec.name;
            leaf->repetition = c->spec.nullable ? PQ_OPTIONAL : PQ_REQUIRED;
        }
        leaf->has_repetition = true;
        leaf->has_type = true;
        leaf->type = c->physical;
        if (c->physical == PQ_BYTE_ARRAY) {
            leaf->has_converted_type = true;
            leaf->converted_type = PQ_CONVERTED_UTF8;
            leaf->logical_type = PQ_LOGICAL_STRING;
        }
    }
    m->schema = s;
    m->n_schema = (uint32_t)n;
    return 0;
}

static int write_footer(nxpq_writer *w)
{
    pq_file_meta m;
    memset(&m, 0, sizeof m);
    m.version = 1;
    if (build_schema(w, &m) != 0)
        return -1;
    m.num_rows = (int64_t)w->rows;
    m.row_groups = w->rgs;
    m.n_row_groups = (uint32_t)w->n_rgs;
    m.kv = w->kv;
    m.n_kv = (uint32_t)w->opt.n_metadata;
    m.created_by = w->opt.created_by;
    m.n_column_orders = w->opt.write_statistics ? (uint32_t)w->n_cols : 0;
    nx_strbuf *b = &w->scratch;
    b->len = 0;
    pq_write_file_meta(b, &m);
    if (b->failed || b->len > UINT32_MAX)
        return fail(w, "out of memory writing the footer");
    uint32_t len = (uint32_t)b->len;
    if (write_bytes(w, b->data, b->len) != 0 || write_bytes(w, &len, 4) != 0 || write_bytes(w, "PAR1", 4) != 0)
        return -1;
    return 0;
}

static void writer_free(nxpq_writer *w)
{
    for (size_t i = 0; i < w->n_cols && w->cols; i++)
        col_free(&w->cols[i]);
    free(w->cols);
    free(w->rgs);
    free(w->indexes);
    nx_strbuf_free(&w->scratch);
    nx_strbuf_free(&w->compressed);
    nx_arena_free(&w->meta);
    free(w->path);
    free(w);
}

int nxpq_writer_close(nxpq_writer *w, nxpq_error *err)
{
    for (size_t i = 0; i < w->n_cols && !w->failed; i++)
        if (w->cols[i].row_pending)
            fail(w, "close with an unfinished row (column '%s' has values after the last end_row)",
                 w->cols[i].spec.name);
    if (!w->failed)
        flush_row_group(w);
    if (!w->failed)
        write_page_indexes(w);
    if (!w->failed)
        write_footer(w);
    if (!w->failed && fflush(w->f) != 0)
        fail(w, "write failed: %s", strerror(errno));
    if (w->f && fclose(w->f) != 0 && !w->failed)
        fail(w, "close failed: %s", strerror(errno));
    w->f = NULL;
    int rc = 0;
    if (w->failed) {
        if (err)
            snprintf(err->msg, sizeof err->msg, "%s", w->err);
        unlink(w->path);
        rc = -1;
    }
    writer_free(w);
    return rc;
}

void nxpq_writer_abort(nxpq_writer *w)
{
    if (!w)
        return;
    if (w->f) {
        fclose(w->f);
        unlink(w->path);
    }
    writer_free(w);
}

const char *nxpq_type_name(nxpq_type t)
{
    switch (t) {
    case NXPQ_BOOLEAN: return "BOOLEAN";
    case NXPQ_INT32: return "INT32";
    case NXPQ_INT64: return "INT64";
    case NXPQ_FLOAT: return "FLOAT";
    case NXPQ_DOUBLE: return "DOUBLE";
    case NXPQ_STRING: return "STRING";
    case NXPQ_LIST_INT64: return "LIST<INT64>";
    case NXPQ_LIST_STRING: return "LIST<STRING>";
    default: return "UNSUPPORTED";
    }
}
