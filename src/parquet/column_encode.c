/*
 * column_encode.c — turns one column's raw pages into an encoded column chunk:
 * dictionary conversion, level and value encoding, compression, page headers,
 * page statistics for the page index and the chunk statistics.
 *
 * Runs on worker threads, one column at a time per thread: it reads the
 * writer's options and touches only its column and its scratch area, never
 * shared writer state. See writer_internal.h for the data flow.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "parquet/compress.h"
#include "parquet/encode.h"
#include "parquet/writer_internal.h"

static int col_fail(col_writer *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int col_fail(col_writer *c, const char *fmt, ...)
{
    int n = snprintf(c->err, sizeof c->err, "column '%s': ", c->spec.name);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof c->err)
        vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void append_u32le(nx_strbuf *b, uint32_t v)
{
    nx_strbuf_append(b, &v, 4);
}

/* Levels, RLE-encoded behind the 4-byte length prefix of data page v1. */
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

static int page_encoding(int mode)
{
    return mode == MODE_DICT ? PQ_ENC_RLE_DICTIONARY : mode == MODE_DELTA ? PQ_ENC_DELTA_BINARY_PACKED : PQ_ENC_PLAIN;
}

static int reserve_scratch(col_writer *c, encode_scratch *s, size_t n)
{
    if (n <= s->cap_values)
        return 0;
    uint64_t *h = realloc(s->hashes, n * sizeof *h);
    if (h)
        s->hashes = h;
    uint32_t *o = h ? realloc(s->voffs, n * sizeof *o) : NULL;
    if (o)
        s->voffs = o;
    uint32_t *x = o ? realloc(s->idx, n * sizeof *x) : NULL;
    if (!x)
        return col_fail(c, "out of memory");
    s->idx = x;
    s->cap_values = n;
    return 0;
}

/* delta_fallback: an integer page that left its dictionary (or never had one)
 * is written DELTA_BINARY_PACKED; ids, timestamps and counters then take a few
 * bits per value instead of 8 bytes, which is also less for the codec to
 * compress. Columns set to PLAIN on purpose stay PLAIN. */
static bool plain_page_as_delta(const nxpq_writer *w, const col_writer *c)
{
    return w->opt.delta_fallback && c->spec.encoding != NXPQ_ENCODE_PLAIN &&
           (c->physical == PQ_INT32 || c->physical == PQ_INT64);
}

/* The PLAIN integers of page p as int64 in s->ints; returns how many, or -1. */
static ptrdiff_t plain_ints(col_writer *c, const raw_page *p, encode_scratch *s)
{
    size_t width = c->physical == PQ_INT32 ? 4 : 8, n = p->plain.len / width;
    if (n == 0)
        return 0; /* a page of nulls */
    if (n > s->cap_ints) {
        int64_t *g = realloc(s->ints, n * sizeof *g);
        if (!g)
            return col_fail(c, "out of memory encoding a page");
        s->ints = g;
        s->cap_ints = n;
    }
    const char *d = p->plain.data;
    if (width == 8) {
        memcpy(s->ints, d, n * 8);
    } else {
        for (size_t i = 0; i < n; i++) {
            int32_t v;
            memcpy(&v, d + 4 * i, 4);
            s->ints[i] = v;
        }
    }
    return (ptrdiff_t)n;
}

/*
 * The n integers of a page appended to body DELTA_BINARY_PACKED, or PLAIN when
 * a miniblock would be wider than delta_max_bit_width: fastparquet (2026.9)
 * reads miniblocks wider than 28 bits wrongly and crashes on some
 * (docs/parquet.md), so profile tables stop there. Returns the page's mode.
 */
static int delta_or_plain(const nxpq_writer *w, const col_writer *c, nx_strbuf *body, const int64_t *v, size_t n)
{
    size_t at = body->len;
    bool is32 = c->physical == PQ_INT32;
    if (pq_encode_delta_binary_packed(body, v, n, is32, w->opt.delta_max_bit_width) <= w->opt.delta_max_bit_width)
        return MODE_DELTA;
    body->len = at;
    for (size_t i = 0; i < n; i++) {
        int32_t v32 = (int32_t)v[i];
        nx_strbuf_append(body, is32 ? (const void *)&v32 : (const void *)&v[i], is32 ? 4 : 8);
    }
    return MODE_PLAIN;
}

/* Hashes every PLAIN value of the page and records where each starts. */
static void hash_page_values(const col_writer *c, const raw_page *p, encode_scratch *s)
{
    const char *data = p->plain.data;
    size_t off = 0;
    for (size_t i = 0; i < p->values; i++) {
        s->voffs[i] = (uint32_t)off;
        if (c->physical == PQ_BYTE_ARRAY) {
            uint32_t len;
            memcpy(&len, data + off, 4);
            s->hashes[i] = XXH3_64bits(data + off + 4, len);
            off += 4 + (size_t)len;
        } else if (c->physical == PQ_INT32) {
            int32_t v;
            memcpy(&v, data + off, 4);
            s->hashes[i] = pq_mix64((uint64_t)(int64_t)v);
            off += 4;
        } else {
            uint64_t v;
            memcpy(&v, data + off, 8);
            s->hashes[i] = pq_mix64(v);
            off += 8;
        }
    }
}

/*
 * Converts the page's PLAIN values into dictionary indices (s->idx). Returns 1
 * when the dictionary would outgrow its limit: the entries this page added are
 * dropped, the page stays PLAIN and so does the rest of the chunk. Hashing the
 * whole page first lets the probe loop prefetch slots ahead, which is what
 * keeps large dictionaries fast.
 */
static int dict_encode_page(const nxpq_writer *w, col_writer *c, const raw_page *p, encode_scratch *s)
{
    size_t n = p->values;
    dictionary *d = &c->dict;
    if (reserve_scratch(c, s, n) != 0)
        return -1;
    if (dict_reserve(d, 1) != 0)
        return col_fail(c, "out of memory growing the dictionary");
    hash_page_values(c, p, s);
    size_t entries_before = d->n_entries, bytes_before = d->plain.len;
    bool ints = c->physical == PQ_INT32 || c->physical == PQ_INT64;
    for (size_t i = 0; i < n; i++) {
        if (i + 8 < n)
            __builtin_prefetch(&d->slots[s->hashes[i + 8] & (d->n_slots - 1)]);
        size_t off = s->voffs[i];
        size_t end = i + 1 < n ? s->voffs[i + 1] : p->plain.len;
        if (ints && i && s->hashes[i] == s->hashes[i - 1]) {
            s->idx[i] = s->idx[i - 1];   /* runs are common (pcore, block id, sizes) */
            continue;
        }
        const char *v = p->plain.data + off;
        int64_t e = ints ? dict_lookup_int(d, s->hashes[i], v, (uint32_t)(end - off))
                         : dict_lookup(d, s->hashes[i], v, (uint32_t)(end - off));
        if (e < 0)
            return col_fail(c, "out of memory growing the dictionary");
        s->idx[i] = (uint32_t)e;
        if (d->plain.len > w->opt.dictionary_max_bytes) {
            d->n_entries = entries_before;
            d->plain.len = bytes_before;
            /* The table may still hold slots of dropped entries; it is not
             * consulted again in this chunk and is cleared for the next. */
            c->mode = MODE_PLAIN;
            return 1;
        }
    }
    /* dictionary_skip_distinct: mostly distinct values (ids, timestamps,
     * checksums) gain nothing from a dictionary but a copy of every value plus
     * an index, and hashing them is the costliest step of the writer. Once a
     * chunk has seen enough values and more than half were new, its later
     * pages (and the column's later chunks, see reset_encoder() in writer.c)
     * are PLAIN; pages already encoded keep the dictionary. */
    c->dict_values += n;
    if (w->opt.dictionary_skip_distinct && c->dict_values >= DICT_JUDGE_VALUES && d->n_entries * 2 > c->dict_values)
        c->mode = MODE_PLAIN;
    return 0;
}

/*
 * Caller dictionaries: the page holds distinct ids. Each id is mapped to its
 * entry in the chunk's dictionary; an id the chunk has not used yet appends its
 * PLAIN form to c->dict (first-use order, as hashing would have found it).
 * Returns 1 when the dictionary would outgrow its limit: the entries this page
 * added are dropped and the page, and the rest of the chunk, go PLAIN, exactly
 * as dict_encode_page() does.
 */
static int caller_dict_encode_page(const nxpq_writer *w, col_writer *c, const raw_page *p, encode_scratch *s)
{
    caller_dict *cd = c->cd;
    dictionary *d = &c->dict;
    if (reserve_scratch(c, s, p->n_ids) != 0)
        return -1;
    size_t entries_before = d->n_entries, bytes_before = d->plain.len;
    const char *src = cd->distinct.plain.data;
    for (size_t i = 0; i < p->n_ids; i++) {
        uint32_t id = p->ids[i];
        uint32_t e1 = cd->chunk1[id];
        if (!e1) {
            /* cap_entries is the number of distinct values: no growth needed */
            uint32_t e = (uint32_t)d->n_entries++;
            d->offsets[e] = (uint32_t)d->plain.len;
            nx_strbuf_append(&d->plain, src + cd->distinct.offsets[id], cd->plain_len[id]);
            if (d->plain.failed)
                return col_fail(c, "out of memory growing the dictionary");
            cd->used[e] = id;
            cd->chunk1[id] = e1 = e + 1;
            if (d->plain.len > w->opt.dictionary_max_bytes) {
                for (size_t k = entries_before; k < d->n_entries; k++)
                    cd->chunk1[cd->used[k]] = 0;
                d->n_entries = entries_before;
                d->plain.len = bytes_before;
                c->mode = MODE_PLAIN;
                return 1;
            }
        }
        s->idx[i] = e1 - 1;
    }
    /* the same judgement as dict_encode_page(), so both give the same file */
    c->dict_values += p->n_ids;
    if (w->opt.dictionary_skip_distinct && c->dict_values >= DICT_JUDGE_VALUES && d->n_entries * 2 > c->dict_values)
        c->mode = MODE_PLAIN;
    return 0;
}

/* A caller-dictionary page written PLAIN: its values spelled out into p->plain
 * (integer statistics too; strings get theirs from the PLAIN bytes later). */
/* Counts the PLAIN bytes of one INT32 or INT64 value v in the statistics. */
static void stats_plain_int(const col_writer *c, stats_acc *st, const char *v)
{
    if (c->physical == PQ_INT32) {
        int32_t x;
        memcpy(&x, v, 4);
        stats_int(st, x);
    } else if (c->physical == PQ_INT64) {
        int64_t x;
        memcpy(&x, v, 8);
        stats_int(st, x);
    }
}

static int caller_dict_expand_page(col_writer *c, raw_page *p)
{
    const caller_dict *cd = c->cd;
    const char *src = cd->distinct.plain.data;
    p->plain.len = 0;
    for (size_t i = 0; i < p->n_ids; i++) {
        uint32_t id = p->ids[i];
        const char *v = src + cd->distinct.offsets[id];
        nx_strbuf_append(&p->plain, v, cd->plain_len[id]);
        stats_plain_int(c, &p->stats, v);
    }
    return p->plain.failed ? col_fail(c, "out of memory encoding a page") : 0;
}

/* Page min/max of a string column: over the distinct dictionary entries the
 * page uses, or over every value of a PLAIN page. Integer columns come here
 * only with a caller dictionary (hashed ones count at put time). */
static int string_page_stats(col_writer *c, raw_page *p, encode_scratch *s, bool dict_page)
{
    if (!dict_page) {
        const char *data = p->plain.data;
        for (size_t off = 0; off < p->plain.len;) {
            uint32_t len;
            memcpy(&len, data + off, 4);
            stats_bytes(&p->stats, data + off + 4, len);
            off += 4 + (size_t)len;
        }
        return 0;
    }
    const dictionary *d = &c->dict;
    size_t n = d->n_entries;
    if (n == 0)
        return 0; /* an empty dictionary: the page holds only nulls */
    if (n + 8 > s->cap_seen) {
        uint8_t *seen = realloc(s->seen, n + 8);
        if (!seen)
            return col_fail(c, "out of memory");
        s->seen = seen;
        s->cap_seen = n + 8;
    }
    /* A byte per entry, set with a plain store: no branch per value and no
     * read-modify-write chain on a bitmap word (both showed in profiles). */
    memset(s->seen, 0, n + 8);
    for (size_t i = 0; i < p->values; i++)
        s->seen[s->idx[i]] = 1;
    for (size_t e = 0; e < n; e += 8) {
        uint64_t word;
        memcpy(&word, s->seen + e, 8);   /* skip 8 unused entries at a time */
        for (; word; word &= word - 1) {
            const char *v = d->plain.data + d->offsets[e + (size_t)__builtin_ctzll(word) / 8];
            if (c->physical == PQ_INT32 || c->physical == PQ_INT64) {
                stats_plain_int(c, &p->stats, v);
            } else {
                uint32_t len;
                memcpy(&len, v, 4);
                stats_bytes(&p->stats, v + 4, len);
            }
        }
    }
    return 0;
}

pq_bytes stats_bound_plain(const col_writer *c, const stats_acc *st, bool max, unsigned char buf[8])
{
    size_t n = 0;
    switch (c->physical) {
    case PQ_BOOLEAN: buf[0] = (unsigned char)(max ? st->imax : st->imin); n = 1; break;
    case PQ_INT32: { int32_t v = (int32_t)(max ? st->imax : st->imin); memcpy(buf, &v, 4); n = 4; break; }
    case PQ_INT64: { int64_t v = max ? st->imax : st->imin; memcpy(buf, &v, 8); n = 8; break; }
    case PQ_FLOAT: { float v = (float)(max ? st->dmax : st->dmin); memcpy(buf, &v, 4); n = 4; break; }
    case PQ_DOUBLE: { double v = max ? st->dmax : st->dmin; memcpy(buf, &v, 8); n = 8; break; }
    default: {
        const nx_strbuf *sb = max ? &st->smax : &st->smin;
        return (pq_bytes){(const uint8_t *)sb->data, (uint32_t)sb->len};
    }
    }
    return (pq_bytes){buf, (uint32_t)n};
}

static void page_header_statistics(const col_writer *c, const stats_acc *st, pq_statistics *out,
                                   unsigned char minbuf[8], unsigned char maxbuf[8])
{
    memset(out, 0, sizeof *out);
    out->has_null_count = true;
    out->null_count = st->nulls;
    if (c->physical == PQ_FLOAT || c->physical == PQ_DOUBLE) {
        out->has_nan_count = true;
        out->nan_count = st->nans;
    }
    if (st->any) {
        out->has_min = out->has_max = true;
        out->min_value = stats_bound_plain(c, st, false, minbuf);
        out->max_value = stats_bound_plain(c, st, true, maxbuf);
    }
}

/* Appends a stats bound to the column's bounds buffer and returns its offset. */
static uint32_t put_bound(col_writer *c, const stats_acc *st, bool max, uint32_t *len)
{
    unsigned char buf[8];
    pq_bytes b = stats_bound_plain(c, st, max, buf);
    uint32_t off = (uint32_t)c->bounds.len;
    nx_strbuf_append(&c->bounds, b.ptr, b.len);
    *len = b.len;
    return off;
}

static int add_page_info(col_writer *c, const raw_page *p, size_t offset, size_t size)
{
    if (c->n_infos == c->cap_infos) {
        size_t cap = c->cap_infos ? c->cap_infos * 2 : 16;
        page_info *pi = realloc(c->infos, cap * sizeof *pi);
        if (!pi)
            return col_fail(c, "out of memory");
        c->infos = pi;
        c->cap_infos = cap;
    }
    page_info *pi = &c->infos[c->n_infos++];
    memset(pi, 0, sizeof *pi);
    pi->offset = (int64_t)offset;
    pi->size = (int32_t)size;
    pi->first_row = p->first_row;
    pi->nulls = p->stats.nulls;
    pi->nans = p->stats.nans;
    pi->null_page = p->values == 0;
    if (p->values > 0 && !p->stats.any)
        c->nan_only_page = true; /* only NaNs: no valid bounds for the column index */
    if (p->stats.any) {
        pi->has_bounds = true;
        pi->min_off = put_bound(c, &p->stats, false, &pi->min_len);
        pi->max_off = put_bound(c, &p->stats, true, &pi->max_len);
    }
    return c->bounds.failed ? col_fail(c, "out of memory") : 0;
}

/* Encodes one raw page into a data page appended to the chunk buffer. */
int column_page_encode(const nxpq_writer *w, col_writer *c, raw_page *p, encode_scratch *s)
{
    int mode = c->mode;
    if (mode == MODE_DICT && p->values == 0)
        mode = MODE_PLAIN; /* nothing to look up; a dictionary page may never be written */
    if (mode == MODE_DICT) {
        if ((c->cd ? caller_dict_encode_page(w, c, p, s) : dict_encode_page(w, c, p, s)) < 0)
            return -1;
        mode = c->mode;
    }
    if (c->cd && mode != MODE_DICT && caller_dict_expand_page(c, p) != 0)
        return -1;
    if ((c->physical == PQ_BYTE_ARRAY || (c->cd && mode == MODE_DICT)) &&
        string_page_stats(c, p, s, mode == MODE_DICT) != 0)
        return -1;
    nx_strbuf *body = &s->body, *comp = &s->comp;
    body->len = comp->len = 0;
    if (c->max_rep)
        encode_levels(body, &p->rep, c->max_rep);
    if (c->max_def)
        encode_levels(body, &p->def, c->max_def);
    if (mode == MODE_DICT) {
        int width = pq_bit_width(c->dict.n_entries ? c->dict.n_entries - 1 : 0);
        nx_strbuf_putc(body, (char)width);
        pq_encode_rle_hybrid(body, s->idx, p->values, width);
    } else if (p->values == 0) {
        /* Only nulls: PLAIN, no value bytes, as pyarrow and DuckDB write them.
         * fastparquet (2026.9) crashes reading a DELTA_BINARY_PACKED page of no
         * values, whoever wrote it (docs/parquet.md). */
        mode = MODE_PLAIN;
    } else if (c->delta) {
        mode = delta_or_plain(w, c, body, p->ints, p->n_ints);
    } else if (plain_page_as_delta(w, c)) {
        ptrdiff_t n = plain_ints(c, p, s);
        if (n < 0)
            return -1;
        mode = delta_or_plain(w, c, body, s->ints, (size_t)n);
    } else if (c->physical == PQ_BOOLEAN) {
        pq_encode_plain_bools(body, (const uint8_t *)p->plain.data, p->plain.len);
    } else {
        nx_strbuf_append(body, p->plain.data, p->plain.len);
    }
    if (body->failed)
        return col_fail(c, "out of memory encoding a page");
    if (body->len > INT32_MAX)
        return col_fail(c, "a page exceeds 2 GiB; lower page_bytes");
    nx_error why;
    if (pq_compress(&s->compressor, w->opt.codec, w->opt.compression_level, body->data, body->len, comp, &why) != 0)
        return col_fail(c, "%s", why.msg);
    if (comp->len > INT32_MAX)
        return col_fail(c, "a compressed page exceeds 2 GiB");

    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DATA;
    h.uncompressed_page_size = (int32_t)body->len;
    h.compressed_page_size = (int32_t)comp->len;
    h.has_data_page_header = true;
    h.data_page_header.num_values = (int32_t)p->levels;
    h.data_page_header.encoding = page_encoding(mode);
    h.data_page_header.definition_level_encoding = PQ_ENC_RLE;
    h.data_page_header.repetition_level_encoding = PQ_ENC_RLE;
    unsigned char minbuf[8], maxbuf[8];
    if (w->opt.write_statistics && !w->opt.write_page_index) {
        /* Without a page index the page bounds travel in the page header. */
        h.data_page_header.has_statistics = true;
        page_header_statistics(c, &p->stats, &h.data_page_header.statistics, minbuf, maxbuf);
    }
    size_t start = c->chunk.len;
    pq_write_page_header(&c->chunk, &h);
    size_t header_len = c->chunk.len - start;
    nx_strbuf_append(&c->chunk, comp->data, comp->len);
    if (c->chunk.failed)
        return col_fail(c, "out of memory buffering a page");
    if (add_page_info(c, p, start, header_len + comp->len) != 0)
        return -1;
    c->encodings |= 1u << page_encoding(mode);
    if (c->max_def || c->max_rep)
        c->encodings |= 1u << PQ_ENC_RLE;
    c->chunk_values += (int64_t)p->levels;
    c->chunk_uncompressed += (int64_t)(header_len + body->len);
    stats_merge(&c->chunk_stats, &p->stats, c->spec.type);
    return 0;
}

/* The chunk's dictionary page (header + compressed body) into c->dict_page. */
static int encode_dictionary_page(const nxpq_writer *w, col_writer *c, encode_scratch *s)
{
    const dictionary *d = &c->dict;
    nx_strbuf *comp = &s->comp;
    comp->len = 0;
    if (d->plain.len > INT32_MAX)
        return col_fail(c, "dictionary exceeds 2 GiB");
    nx_error why;
    if (pq_compress(&s->compressor, w->opt.codec, w->opt.compression_level, d->plain.data, d->plain.len, comp, &why) != 0)
        return col_fail(c, "%s", why.msg);
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DICTIONARY;
    h.uncompressed_page_size = (int32_t)d->plain.len;
    h.compressed_page_size = (int32_t)comp->len;
    h.has_dictionary_page_header = true;
    h.dictionary_page_header.num_values = (int32_t)d->n_entries;
    h.dictionary_page_header.encoding = PQ_ENC_PLAIN;
    c->dict_page.len = 0;
    pq_write_page_header(&c->dict_page, &h);
    c->dict_uncompressed = (int64_t)(c->dict_page.len + d->plain.len);
    nx_strbuf_append(&c->dict_page, comp->data, comp->len);
    if (c->dict_page.failed)
        return col_fail(c, "out of memory");
    c->has_dict_page = true;
    c->encodings |= 1u << PQ_ENC_PLAIN; /* the dictionary page's encoding */
    return 0;
}

void column_chunk_begin(col_writer *c)
{
    c->chunk.len = c->bounds.len = 0;
    c->n_infos = 0;
    c->encodings = 0;
    c->chunk_values = c->chunk_uncompressed = c->dict_uncompressed = 0;
    c->nan_only_page = c->has_dict_page = false;
    c->dict_values = 0;
    stats_reset(&c->chunk_stats);
}

int column_chunk_finish(const nxpq_writer *w, col_writer *c, encode_scratch *s)
{
    if (c->dict.n_entries > 0 && (c->encodings & (1u << PQ_ENC_RLE_DICTIONARY)))
        return encode_dictionary_page(w, c, s);
    return 0;
}

void encode_scratch_free(encode_scratch *s)
{
    nx_strbuf_free(&s->body);
    nx_strbuf_free(&s->comp);
    free(s->hashes);
    free(s->voffs);
    free(s->idx);
    free(s->ints);
    free(s->seen);
    pq_compressor_free(&s->compressor);
    memset(s, 0, sizeof *s);
}
