/*
 * writer.c — the streaming, column-buffered Parquet writer: the public API,
 * row groups and the file layout (see parquet.h for the contract and
 * writer_internal.h for the data flow).
 *
 * File layout: "PAR1", then per row group every column chunk (dictionary page,
 * data pages), then every ColumnIndex, then every OffsetIndex, then the
 * footer (FileMetaData), its length and "PAR1".
 *
 * Memory is bounded by one row group of raw page buffers (row_group_rows /
 * row_group_bytes) plus the encoded chunks and one dictionary per column.
 */
#include "parquet/parquet.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "nxprof_version.h"
#include "parquet/writer_internal.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nxprof's Parquet writer copies values as they lie in memory: little-endian hosts only"
#endif

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
    if (e == NXPQ_ENCODE_DELTA)
        return MODE_DELTA;
    if (e == NXPQ_ENCODE_PLAIN || c->dict_abandoned)
        return MODE_PLAIN;
    /* Floats rarely repeat exactly and booleans are one bit already. */
    bool dictionary_friendly = c->physical == PQ_BYTE_ARRAY || c->physical == PQ_INT32 || c->physical == PQ_INT64;
    return dictionary_friendly ? MODE_DICT : MODE_PLAIN;
}

static void raw_page_free(raw_page *p)
{
    nx_strbuf_free(&p->def);
    nx_strbuf_free(&p->rep);
    nx_strbuf_free(&p->plain);
    free(p->ints);
    free(p->ids);
    stats_free(&p->stats);
}

static void col_free(col_writer *c)
{
    /* After the pool has stopped a page is open, queued (if the writer was
     * abandoned mid-row-group) or spare; free each once. */
    if (c->open) {
        raw_page_free(c->open);
        free(c->open);
    }
    for (size_t i = 0; i < c->queue_len; i++) {
        raw_page *p = c->queue[(c->queue_head + i) % c->queue_cap];
        raw_page_free(p);
        free(p);
    }
    for (size_t i = 0; i < c->n_spare; i++) {
        raw_page_free(c->spare[i]);
        free(c->spare[i]);
    }
    free(c->queue);
    free(c->spare);
    dict_free(&c->dict);
    caller_dict_free(c->cd);
    nx_strbuf_free(&c->chunk);
    nx_strbuf_free(&c->bounds);
    nx_strbuf_free(&c->dict_page);
    free(c->infos);
    stats_free(&c->chunk_stats);
}

/* ------------------------------------------------------------- options */

void nxpq_writer_options_init(nxpq_writer_options *o)
{
    memset(o, 0, sizeof *o);
    o->codec = NXPQ_ZSTD;
    o->compression_level = 1;
    o->row_group_rows = 1u << 20;
    o->row_group_bytes = 128u << 20;
    o->page_bytes = 1u << 20;
    o->page_rows = 65536;
    o->dictionary_max_bytes = 1u << 20;
    o->delta_max_bit_width = 64;
    o->write_page_index = true;
    o->write_statistics = true;
    o->sorting_column = -1;
    o->threads = 0;
}

static int validate_options(nxpq_writer *w)
{
    const nxpq_writer_options *o = &w->opt;
    if (o->codec != NXPQ_ZSTD && o->codec != NXPQ_SNAPPY && o->codec != NXPQ_UNCOMPRESSED)
        return fail(w, "unsupported compression codec %d for writing (use ZSTD, SNAPPY or UNCOMPRESSED)", o->codec);
    if (o->row_group_rows == 0 || o->row_group_bytes == 0 || o->page_bytes == 0 || o->page_rows == 0)
        return fail(w, "row group and page limits must be positive");
    if (o->delta_max_bit_width < 1 || o->delta_max_bit_width > 64)
        return fail(w, "delta_max_bit_width %d is not in 1..64", o->delta_max_bit_width);
    if (o->sorting_column >= (int)w->n_cols)
        return fail(w, "sorting column %d out of range (%zu columns)", o->sorting_column, w->n_cols);
    if (o->threads < 0)
        return fail(w, "threads must be 0 (automatic) or positive");
    return 0;
}

/* ------------------------------------------------------------- open */

/* Most pages a column may have queued before the caller waits for the
 * encoders: bounds memory when encoding falls behind. */
#define MAX_QUEUED_PAGES 4

/* Gives the column an empty open page: a spare buffer if one is free. */
static int take_page(nxpq_writer *w, col_writer *c)
{
    raw_page *p = NULL;
    if (w->pool_ready)
        pthread_mutex_lock(&w->lock);
    if (c->n_spare)
        p = c->spare[--c->n_spare];
    if (w->pool_ready)
        pthread_mutex_unlock(&w->lock);
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            return fail(w, "out of memory");
        c->n_owned++;
    }
    p->def.len = p->rep.len = p->plain.len = 0;
    p->n_ints = p->n_ids = p->id_bytes = p->rows = p->levels = p->values = 0;
    p->first_row = (int64_t)w->rg_rows;
    stats_reset(&p->stats);
    c->open = p;
    return 0;
}

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
    c->delta = c->mode == MODE_DELTA;
    c->queue = calloc(MAX_QUEUED_PAGES + 2, sizeof *c->queue);
    c->spare = calloc(MAX_QUEUED_PAGES + 3, sizeof *c->spare);
    if (!c->queue || !c->spare)
        return fail(w, "out of memory");
    c->queue_cap = MAX_QUEUED_PAGES + 2;
    c->cap_spare = MAX_QUEUED_PAGES + 3;
    column_chunk_begin(c);
    return take_page(w, c);
}

static int copy_metadata(nxpq_writer *w)
{
    if (w->opt.n_metadata) {
        w->kv = nx_arena_calloc(&w->meta, w->opt.n_metadata, sizeof *w->kv);
        if (!w->kv)
            return fail(w, "out of memory");
        for (size_t i = 0; i < w->opt.n_metadata; i++) {
            const nxpq_kv *kv = &w->opt.metadata[i];
            if (!kv->key)
                return fail(w, "key/value metadata entry %zu has no key", i);
            w->kv[i].key = nx_arena_strndup(&w->meta, kv->key, strlen(kv->key));
            w->kv[i].value = kv->value ? nx_arena_strndup(&w->meta, kv->value, strlen(kv->value)) : NULL;
            if (!w->kv[i].key || (kv->value && !w->kv[i].value))
                return fail(w, "out of memory");
        }
    }
    const char *created_by = w->opt.created_by ? w->opt.created_by : "nxprof version " NXPROF_VERSION;
    w->opt.created_by = nx_arena_strndup(&w->meta, created_by, strlen(created_by));
    return w->opt.created_by ? 0 : fail(w, "out of memory");
}

/* ------------------------------------------------------------- encoding pool */

/* An encoding thread: takes a scheduled column, encodes its queued pages in
 * order, returns their buffers to the column's spares, and lets go of the
 * column when its queue is empty. A column is held by one thread at a time. */
typedef struct pool_worker {
    nxpq_writer *w;
    encode_scratch *scratch;
} pool_worker;

static void *pool_worker_run(void *arg)
{
    nxpq_writer *w = ((pool_worker *)arg)->w;
    encode_scratch *scratch = ((pool_worker *)arg)->scratch;
    free(arg);
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->shutdown && w->jobs_len == 0)
            pthread_cond_wait(&w->work_cv, &w->lock);
        if (w->shutdown)
            break;
        col_writer *c = &w->cols[w->jobs[w->jobs_head]];
        w->jobs_head = (w->jobs_head + 1) % w->n_cols;
        w->jobs_len--;
        while (c->queue_len > 0) {
            raw_page *p = c->queue[c->queue_head];
            c->queue_head = (c->queue_head + 1) % c->queue_cap;
            c->queue_len--;
            pthread_mutex_unlock(&w->lock);
            if (!c->err[0])
                column_page_encode(w, c, p, scratch); /* an error lands in c->err */
            pthread_mutex_lock(&w->lock);
            c->spare[c->n_spare++] = p;
            pthread_cond_broadcast(&w->done_cv);
        }
        c->scheduled = false;
        pthread_cond_broadcast(&w->done_cv);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Encoding threads: as asked, or one per online CPU (at most 8), never more
 * than there are columns. If none can start, pages are encoded inline. */
static int pool_start(nxpq_writer *w)
{
    long n = w->opt.threads;
    if (n == 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        n = n < 1 ? 1 : n;
    }
    if (n > NXPQ_MAX_THREADS)
        n = NXPQ_MAX_THREADS;
    if ((size_t)n > w->n_cols)
        n = (long)w->n_cols;
    w->n_scratch = (size_t)n + 1;
    w->scratch = calloc(w->n_scratch, sizeof *w->scratch);
    w->jobs = calloc(w->n_cols, sizeof *w->jobs);
    if (!w->scratch || !w->jobs)
        return fail(w, "out of memory");
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return fail(w, "cannot create a mutex");
    if (pthread_cond_init(&w->work_cv, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        return fail(w, "cannot create a condition variable");
    }
    if (pthread_cond_init(&w->done_cv, NULL) != 0) {
        pthread_cond_destroy(&w->work_cv);
        pthread_mutex_destroy(&w->lock);
        return fail(w, "cannot create a condition variable");
    }
    w->pool_ready = true;
    for (long t = 0; t < n; t++) {
        pool_worker *pw = malloc(sizeof *pw);
        if (!pw)
            break;
        *pw = (pool_worker){w, &w->scratch[t + 1]};
        if (pthread_create(&w->tids[w->n_threads], NULL, pool_worker_run, pw) != 0) {
            free(pw);
            break;
        }
        w->n_threads++;
    }
    return 0;
}

static void pool_stop(nxpq_writer *w)
{
    if (!w->pool_ready)
        return;
    pthread_mutex_lock(&w->lock);
    w->shutdown = true;
    pthread_cond_broadcast(&w->work_cv);
    pthread_mutex_unlock(&w->lock);
    for (int t = 0; t < w->n_threads; t++)
        pthread_join(w->tids[t], NULL);
    w->n_threads = 0;
    pthread_cond_destroy(&w->done_cv);
    pthread_cond_destroy(&w->work_cv);
    pthread_mutex_destroy(&w->lock);
    w->pool_ready = false;
}

/* Hands the column's open page to the encoders (or encodes it inline without
 * threads). Waits while the column has too many pages queued. */
static int queue_open_page(nxpq_writer *w, col_writer *c)
{
    raw_page *p = c->open;
    c->open = NULL;
    if (w->n_threads == 0) {
        if (!c->err[0])
            column_page_encode(w, c, p, &w->scratch[0]);
        c->spare[c->n_spare++] = p;
        return c->err[0] ? fail(w, "%s", c->err) : 0;
    }
    pthread_mutex_lock(&w->lock);
    while (c->queue_len >= MAX_QUEUED_PAGES)
        pthread_cond_wait(&w->done_cv, &w->lock);
    c->queue[(c->queue_head + c->queue_len) % c->queue_cap] = p;
    c->queue_len++;
    if (!c->scheduled) {
        c->scheduled = true;
        w->jobs[(w->jobs_head + w->jobs_len) % w->n_cols] = (size_t)(c - w->cols);
        w->jobs_len++;
        pthread_cond_signal(&w->work_cv);
    }
    pthread_mutex_unlock(&w->lock);
    return 0;
}

/* Waits until every queued page is encoded; reports the first column error. */
static int pool_drain(nxpq_writer *w)
{
    if (w->n_threads > 0) {
        pthread_mutex_lock(&w->lock);
        for (size_t ci = 0; ci < w->n_cols; ci++) {
            col_writer *c = &w->cols[ci];
            while (c->queue_len > 0 || c->scheduled)
                pthread_cond_wait(&w->done_cv, &w->lock);
        }
        pthread_mutex_unlock(&w->lock);
    }
    for (size_t ci = 0; ci < w->n_cols; ci++)
        if (w->cols[ci].err[0])
            return fail(w, "%s", w->cols[ci].err);
    return 0;
}

nxpq_writer *nxpq_writer_open(const char *path, const nxpq_column_spec *cols, size_t n_cols,
                              const nxpq_writer_options *opts, nx_error *err)
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
    if (!w->failed)
        validate_options(w);
    for (size_t i = 0; i < n_cols && !w->failed; i++)
        setup_column(w, &w->cols[i], &cols[i]);
    for (size_t i = 0; i < n_cols && !w->failed; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(w->cols[i].spec.name, w->cols[j].spec.name) == 0)
                fail(w, "column name '%s' used twice", w->cols[i].spec.name);
    if (!w->failed)
        copy_metadata(w);
    if (!w->failed)
        pool_start(w);
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
        if (err) {
            nx_error_set(err, "%s", w->err);
            snprintf(err->file, sizeof err->file, "%s", w->path);
        }
        nxpq_writer_abort(w);
        return NULL;
    }
    return w;
}

/* ------------------------------------------------------------- values */

/* Appends n bytes to a page buffer; the common case is one bounds check and a copy. */
static inline int buf_append(nxpq_writer *w, nx_strbuf *b, const void *p, size_t n)
{
    if (b->cap - b->len > n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        return 0;
    }
    nx_strbuf_append(b, p, n);
    return b->failed ? fail(w, "out of memory buffering a page") : 0;
}

static inline raw_page *open_raw(col_writer *c)
{
    return c->open;
}

/* Room for `need` elements in a page's growing array (doubling from 4096). */
static int page_reserve(nxpq_writer *w, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    void *x = realloc(*arr, c * elem);
    if (!x)
        return fail(w, "out of memory");
    *arr = x;
    *cap = c;
    return 0;
}

static int value_int(nxpq_writer *w, col_writer *c, int64_t v)
{
    raw_page *p = open_raw(c);
    stats_int(&p->stats, v);
    p->values++;
    if (c->delta) {
        if (page_reserve(w, (void **)&p->ints, &p->cap_ints, p->n_ints + 1, sizeof *p->ints) != 0)
            return -1;
        p->ints[p->n_ints++] = v;
        return 0;
    }
    if (c->physical == PQ_INT32) {
        int32_t v32 = (int32_t)v;
        return buf_append(w, &p->plain, &v32, 4);
    }
    return buf_append(w, &p->plain, &v, 8);
}

/* Strings go into the page PLAIN-encoded (length + bytes); dictionary pages
 * are converted when the row group is encoded. */
static int value_bytes(nxpq_writer *w, col_writer *c, const char *s, size_t len)
{
    if (len > INT32_MAX)
        return fail(w, "column '%s': a string of %zu bytes exceeds Parquet's 2 GiB limit", c->spec.name, len);
    raw_page *p = open_raw(c);
    p->values++;
    uint32_t l32 = (uint32_t)len;
    if (buf_append(w, &p->plain, &l32, 4) != 0)
        return -1;
    return buf_append(w, &p->plain, s, len);
}

static inline void push_levels(col_writer *c, int def, int rep)
{
    raw_page *p = open_raw(c);
    if (c->max_def) {
        if (p->def.cap - p->def.len > 1)
            p->def.data[p->def.len++] = (char)def;
        else
            nx_strbuf_putc(&p->def, (char)def);
    }
    if (c->max_rep)
        nx_strbuf_putc(&p->rep, (char)rep);
    p->levels++;
}

/* Column col of a writer that has not failed; NULL (failing it) otherwise. */
static col_writer *column_at(nxpq_writer *w, size_t col)
{
    if (w->failed)
        return NULL;
    if (col >= w->n_cols) {
        fail(w, "column index %zu out of range (%zu columns)", col, w->n_cols);
        return NULL;
    }
    return &w->cols[col];
}

/* Checks the writer state and the column's type; returns the column or NULL. */
static col_writer *column_for(nxpq_writer *w, size_t col, nxpq_type type)
{
    col_writer *c = column_at(w, col);
    if (!c)
        return NULL;
    if (c->spec.type != type) {
        fail(w, "column '%s' is %s, not %s", c->spec.name, nxpq_type_name(c->spec.type), nxpq_type_name(type));
        return NULL;
    }
    if (c->cd) {
        fail(w, "column '%s' has a caller dictionary: put indices (nxpq_put_dict_masked)", c->spec.name);
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
    raw_page *p = open_raw(c);
    stats_double(&p->stats, v);
    p->values++;
    return buf_append(w, &p->plain, plain, n);
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
    raw_page *p = open_raw(c);
    stats_int(&p->stats, v);
    p->values++;
    char b = v ? 1 : 0;
    return buf_append(w, &p->plain, &b, 1);
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
    col_writer *c = column_at(w, col);
    if (!c)
        return -1;
    if (!c->spec.nullable)
        return fail(w, "column '%s' is required: null at row %llu", c->spec.name, (unsigned long long)w->rows);
    c->row_pending++;
    push_levels(c, 0, 0);
    open_raw(c)->stats.nulls++; /* a null list too: its leaf slot is below max_def */
    return 0;
}

/* Definition level of an empty list; +1 a null element, +2 a present one. */
static int list_base(const col_writer *c)
{
    return c->spec.nullable ? 1 : 0;
}

/* An empty list has no element, so its leaf slot counts as a null in the
 * statistics, as Arrow and parquet-mr count it (every slot below max_def). */
static void push_empty_list(col_writer *c)
{
    push_levels(c, list_base(c), 0);
    open_raw(c)->stats.nulls++;
}

int nxpq_put_list_int64(nxpq_writer *w, size_t col, const int64_t *items, size_t n)
{
    col_writer *c = column_for(w, col, NXPQ_LIST_INT64);
    if (!c)
        return -1;
    if (n == 0) {
        push_empty_list(c);
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
        push_empty_list(c);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!items[i].ptr) {
            push_levels(c, list_base(c) + 1, i ? 1 : 0);
            open_raw(c)->stats.nulls++;
            continue;
        }
        push_levels(c, list_base(c) + 2, i ? 1 : 0);
        if (value_bytes(w, c, items[i].ptr, items[i].len) != 0)
            return -1;
    }
    return 0;
}

/* Checks a batch put and reserves its row count; NULL when it may not go ahead. */
static col_writer *column_for_batch(nxpq_writer *w, size_t col, nxpq_type type, size_t n)
{
    col_writer *c = column_for(w, col, type);
    if (c) {
        c->row_pending--; /* column_for() counted one value; the batch has n */
        c->row_pending += n;
    }
    return c;
}

/* Definition levels of n present values. */
static int push_present_levels(nxpq_writer *w, col_writer *c, size_t n)
{
    raw_page *p = open_raw(c);
    p->levels += n;
    if (!c->max_def)
        return 0;
    char *d = nx_strbuf_reserve(&p->def, n);
    if (!d)
        return fail(w, "out of memory buffering a page");
    memset(d, c->max_def, n);
    nx_strbuf_commit(&p->def, n);
    return 0;
}

int nxpq_put_int64_array(nxpq_writer *w, size_t col, const int64_t *v, size_t n)
{
    col_writer *c = column_for_batch(w, col, NXPQ_INT64, n);
    if (!c || push_present_levels(w, c, n) != 0)
        return -1;
    raw_page *p = open_raw(c);
    if (n == 0)
        return 0;
    int64_t lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    stats_int(&p->stats, lo);
    stats_int(&p->stats, hi);
    p->values += n;
    if (!c->delta)
        return buf_append(w, &p->plain, v, n * sizeof *v);
    if (page_reserve(w, (void **)&p->ints, &p->cap_ints, p->n_ints + n, sizeof *p->ints) != 0)
        return -1;
    memcpy(p->ints + p->n_ints, v, n * sizeof *v);
    p->n_ints += n;
    return 0;
}

int nxpq_put_double_array(nxpq_writer *w, size_t col, const double *v, size_t n)
{
    col_writer *c = column_for_batch(w, col, NXPQ_DOUBLE, n);
    if (!c || push_present_levels(w, c, n) != 0)
        return -1;
    raw_page *p = open_raw(c);
    for (size_t i = 0; i < n; i++)
        stats_double(&p->stats, v[i]);
    p->values += n;
    return buf_append(w, &p->plain, v, n * sizeof *v);
}

int nxpq_put_string_array(nxpq_writer *w, size_t col, const nxpq_str *v, size_t n)
{
    col_writer *c = column_for_batch(w, col, NXPQ_STRING, n);
    if (!c)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].ptr) {
            if (!c->spec.nullable)
                return fail(w, "column '%s' is required: null at row %llu", c->spec.name,
                            (unsigned long long)(w->rows + i));
            push_levels(c, 0, 0);
            open_raw(c)->stats.nulls++;
            continue;
        }
        push_levels(c, c->max_def, 0);
        if (value_bytes(w, c, v[i].ptr, v[i].len) != 0)
            return -1;
    }
    return 0;
}

/* A null in column c, with the required-column check batch callers need. */
static int value_null(nxpq_writer *w, col_writer *c, size_t row_in_batch)
{
    if (!c->spec.nullable)
        return fail(w, "column '%s' is required: null at row %llu", c->spec.name,
                    (unsigned long long)(w->rows + row_in_batch));
    push_levels(c, 0, 0);
    open_raw(c)->stats.nulls++;
    return 0;
}

static col_writer *column_for_masked(nxpq_writer *w, size_t col, nxpq_type a, nxpq_type b, size_t n)
{
    col_writer *c = column_at(w, col);
    if (!c)
        return NULL;
    if (c->spec.type != a && c->spec.type != b) {
        fail(w, "column '%s' is %s, not %s", c->spec.name, nxpq_type_name(c->spec.type), nxpq_type_name(a));
        return NULL;
    }
    if (c->cd) {
        fail(w, "column '%s' has a caller dictionary: put indices (nxpq_put_dict_masked)", c->spec.name);
        return NULL;
    }
    c->row_pending += n;
    return c;
}

/* Definition levels of a masked batch of a flat column; returns the present count. */
static int masked_levels(nxpq_writer *w, col_writer *c, const uint8_t *valid, size_t n, size_t *present)
{
    raw_page *p = open_raw(c);
    p->levels += n;
    if (valid && !memchr(valid, 0, n))
        valid = NULL;   /* all present: the common case, handled without per-value tests */
    size_t nv = n;
    if (valid) {
        nv = 0;
        for (size_t i = 0; i < n; i++)
            nv += valid[i] != 0;
    }
    if (nv < n && !c->spec.nullable) {
        size_t i = 0;
        while (valid[i])
            i++;
        return fail(w, "column '%s' is required: null at row %llu", c->spec.name,
                    (unsigned long long)(w->rows + i));
    }
    p->stats.nulls += (int64_t)(n - nv);
    if (c->max_def) {
        char *d = nx_strbuf_reserve(&p->def, n);
        if (!d)
            return fail(w, "out of memory buffering a page");
        if (!valid)
            memset(d, c->max_def, n);
        else
            for (size_t i = 0; i < n; i++)
                d[i] = valid[i] ? (char)c->max_def : 0;
        nx_strbuf_commit(&p->def, n);
    }
    *present = nv;
    return 0;
}

int nxpq_put_int64_masked(nxpq_writer *w, size_t col, const int64_t *v, const uint8_t *valid, size_t n)
{
    col_writer *c = column_for_masked(w, col, NXPQ_INT64, NXPQ_INT32, n);
    size_t nv = 0;
    if (!c || masked_levels(w, c, valid, n, &nv) != 0)
        return -1;
    raw_page *p = open_raw(c);
    bool narrow = c->spec.type == NXPQ_INT32;
    if (nv == n)
        valid = NULL;   /* no null: the chunks below are plain slices of v */
    /* Present values are gathered in chunks: min/max once per chunk, one append. */
    int64_t chunk[512];
    int32_t chunk32[512];
    size_t i = 0;
    while (i < n) {
        size_t k = 0;
        const int64_t *src = chunk;
        if (!valid) {
            k = n - i < 512 ? n - i : 512;
            src = v + i;
            i += k;
        } else {
            for (; i < n && k < 512; i++)
                if (valid[i])
                    chunk[k++] = v[i];
        }
        if (k == 0)
            continue;
        int64_t lo = src[0], hi = src[0];
        for (size_t j = 1; j < k; j++) {
            lo = src[j] < lo ? src[j] : lo;
            hi = src[j] > hi ? src[j] : hi;
        }
        if (narrow && (lo < INT32_MIN || hi > INT32_MAX))
            return fail(w, "column '%s': a value near row %llu does not fit INT32", c->spec.name,
                        (unsigned long long)(w->rows + i));
        stats_int(&p->stats, lo);
        stats_int(&p->stats, hi);
        p->values += k;
        int rc;
        if (c->delta) {
            if (page_reserve(w, (void **)&p->ints, &p->cap_ints, p->n_ints + k, sizeof *p->ints) != 0)
                return -1;
            memcpy(p->ints + p->n_ints, src, k * sizeof *src);
            p->n_ints += k;
            rc = 0;
        } else if (narrow) {
            for (size_t j = 0; j < k; j++)
                chunk32[j] = (int32_t)src[j];
            rc = buf_append(w, &p->plain, chunk32, k * sizeof *chunk32);
        } else {
            rc = buf_append(w, &p->plain, src, k * sizeof *src);
        }
        if (rc != 0)
            return -1;
    }
    (void)nv;
    return 0;
}

int nxpq_put_double_masked(nxpq_writer *w, size_t col, const double *v, const uint8_t *valid, size_t n)
{
    col_writer *c = column_for_masked(w, col, NXPQ_DOUBLE, NXPQ_FLOAT, n);
    if (!c)
        return -1;
    bool narrow = c->spec.type == NXPQ_FLOAT;
    for (size_t i = 0; i < n; i++) {
        if (valid && !valid[i]) {
            if (value_null(w, c, i) != 0)
                return -1;
            continue;
        }
        int rc;
        if (narrow) {
            float f = (float)v[i];
            rc = put_floating(w, c, f, &f, 4);
        } else {
            rc = put_floating(w, c, v[i], &v[i], 8);
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

int nxpq_put_bool_masked(nxpq_writer *w, size_t col, const uint8_t *v, const uint8_t *valid, size_t n)
{
    col_writer *c = column_for_masked(w, col, NXPQ_BOOLEAN, NXPQ_BOOLEAN, n);
    if (!c)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (valid && !valid[i]) {
            if (value_null(w, c, i) != 0)
                return -1;
            continue;
        }
        push_levels(c, c->max_def, 0);
        raw_page *p = open_raw(c);
        char b = v[i] ? 1 : 0;
        stats_int(&p->stats, b);
        p->values++;
        if (buf_append(w, &p->plain, &b, 1) != 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- caller dictionaries */

void caller_dict_free(caller_dict *cd)
{
    if (!cd)
        return;
    free(cd->canon);
    dict_free(&cd->distinct);
    free(cd->plain_len);
    free(cd->chunk1);
    free(cd->used);
    free(cd);
}

/* The column a dictionary may be set on now; NULL (writer failed) otherwise. */
static col_writer *column_for_dictionary(nxpq_writer *w, size_t col, bool strings, size_t n)
{
    col_writer *c = column_at(w, col);
    if (!c)
        return NULL;
    nxpq_type t = c->spec.type;
    if (strings ? t != NXPQ_STRING : t != NXPQ_INT64 && t != NXPQ_INT32) {
        fail(w, "column '%s' is %s: no %s dictionary", c->spec.name, nxpq_type_name(t), strings ? "string" : "integer");
        return NULL;
    }
    if (c->delta || c->cd || w->rows > 0 || c->row_pending > 0 || c->open->levels > 0) {
        fail(w, "column '%s': a dictionary is set once, before the first row, on a column not DELTA-encoded",
             c->spec.name);
        return NULL;
    }
    if (n >= CD_WIDE) {
        fail(w, "column '%s': too many dictionary entries (%zu)", c->spec.name, n);
        return NULL;
    }
    return c;
}

/* Merges the entries (strings: sv; ints: iv with valid) into distinct values
 * and installs the dictionary on column c. */
static int set_dictionary(nxpq_writer *w, col_writer *c, const nxpq_str *sv, const int64_t *iv,
                          const uint8_t *valid, size_t n)
{
    caller_dict *cd = calloc(1, sizeof *cd);
    if (!cd || !(cd->canon = malloc((n ? n : 1) * sizeof *cd->canon)) || dict_reserve(&cd->distinct, n ? n : 1) != 0) {
        caller_dict_free(cd);
        return fail(w, "out of memory for the dictionary of column '%s'", c->spec.name);
    }
    cd->n_keys = n;
    dictionary *d = &cd->distinct;
    nx_strbuf tmp = NX_STRBUF_INIT;
    bool narrow = c->spec.type == NXPQ_INT32;
    for (size_t k = 0; k < n; k++) {
        const void *plain;
        uint32_t len;
        uint64_t hash;
        int64_t v64 = 0;
        int32_t v32 = 0;
        if (sv) {
            if (!sv[k].ptr) {
                cd->canon[k] = (cd_key){CD_NULL, 0};
                continue;
            }
            if (sv[k].len > INT32_MAX) {
                nx_strbuf_free(&tmp);
                caller_dict_free(cd);
                return fail(w, "column '%s': a string of %zu bytes exceeds Parquet's 2 GiB limit", c->spec.name,
                            sv[k].len);
            }
            uint32_t l32 = (uint32_t)sv[k].len;
            tmp.len = 0;
            nx_strbuf_append(&tmp, &l32, 4);
            nx_strbuf_append(&tmp, sv[k].ptr, sv[k].len);
            if (tmp.failed)
                break;
            plain = tmp.data;
            len = (uint32_t)tmp.len;
            hash = XXH3_64bits(plain, len);
        } else {
            if (valid && !valid[k]) {
                cd->canon[k] = (cd_key){CD_NULL, 0};
                continue;
            }
            v64 = iv[k];
            if (narrow && (v64 < INT32_MIN || v64 > INT32_MAX)) {
                cd->canon[k] = (cd_key){CD_WIDE, 0};
                continue;
            }
            v32 = (int32_t)v64;
            plain = narrow ? (const void *)&v32 : (const void *)&v64;
            len = narrow ? 4 : 8;
            hash = pq_mix64(narrow ? (uint64_t)(int64_t)v32 : (uint64_t)v64);
        }
        int64_t e = dict_lookup(d, hash, plain, len);
        if (e < 0)
            break;
        cd->canon[k] = (cd_key){(uint32_t)e, len};
    }
    bool oom = tmp.failed || d->plain.failed;
    nx_strbuf_free(&tmp);
    /* The hash slots were only for merging; the encoder maps ids, never hashes. */
    free(d->slots);
    d->slots = NULL;
    d->n_slots = 0;
    size_t nd = d->n_entries ? d->n_entries : 1;
    if (!oom) {
        cd->plain_len = malloc(nd * sizeof *cd->plain_len);
        cd->chunk1 = calloc(nd, sizeof *cd->chunk1);
        cd->used = malloc(nd * sizeof *cd->used);
        /* The chunk dictionary never holds more entries than there are distinct values. */
        uint32_t *offs = realloc(c->dict.offsets, nd * sizeof *offs);
        if (offs) {
            c->dict.offsets = offs;
            c->dict.cap_entries = nd;
        }
        oom = !cd->plain_len || !cd->chunk1 || !cd->used || !offs;
    }
    if (oom) {
        caller_dict_free(cd);
        return fail(w, "out of memory for the dictionary of column '%s'", c->spec.name);
    }
    for (size_t e = 0; e < d->n_entries; e++)
        cd->plain_len[e] = (e + 1 < d->n_entries ? d->offsets[e + 1] : (uint32_t)d->plain.len) - d->offsets[e];
    c->cd = cd;
    return 0;
}

int nxpq_set_dictionary_strings(nxpq_writer *w, size_t col, const nxpq_str *v, size_t n)
{
    col_writer *c = column_for_dictionary(w, col, true, n);
    return c ? set_dictionary(w, c, v, NULL, NULL, n) : -1;
}

int nxpq_set_dictionary_int64(nxpq_writer *w, size_t col, const int64_t *v, const uint8_t *valid, size_t n)
{
    col_writer *c = column_for_dictionary(w, col, false, n);
    return c ? set_dictionary(w, c, NULL, v, valid, n) : -1;
}

/* Per value: a bounds check, a table load and two stores; the values
 * themselves are looked at only once per chunk, when the encoder first meets
 * their distinct id. */
int nxpq_put_dict_masked(nxpq_writer *w, size_t col, const uint32_t *idx, const uint8_t *valid, size_t n)
{
    col_writer *c = column_at(w, col);
    if (!c)
        return -1;
    const caller_dict *cd = c->cd;
    if (!cd)
        return fail(w, "column '%s' has no caller dictionary (nxpq_set_dictionary_*)", c->spec.name);
    if (valid && !memchr(valid, 0, n))
        valid = NULL;   /* the common case: no per-value test */
    c->row_pending += n;
    raw_page *p = open_raw(c);
    if (page_reserve(w, (void **)&p->ids, &p->cap_ids, p->n_ids + n, sizeof *p->ids) != 0)
        return -1;
    char *def = NULL;
    if (c->max_def && !(def = nx_strbuf_reserve(&p->def, n)))
        return fail(w, "out of memory buffering a page");
    uint32_t *ids = p->ids + p->n_ids;
    const cd_key *canon = cd->canon;
    size_t k = 0, bytes = 0, n_keys = cd->n_keys;
    if (def)
        memset(def, c->max_def, n);   /* nulls are the exception; they reset theirs */
    for (size_t i = 0; i < n; i++) {
        cd_key kk = {CD_NULL, 0};
        if (!valid || valid[i]) {
            if (idx[i] >= n_keys)
                return fail(w, "column '%s': dictionary index %u at row %llu is past the last entry (%zu entries)",
                            c->spec.name, idx[i], (unsigned long long)(w->rows + i), n_keys);
            kk = canon[idx[i]];
        }
        ids[k] = kk.id;   /* kept only when it is a value (k advances) */
        if (kk.id < CD_WIDE) {
            bytes += kk.len;
            k++;
            continue;
        }
        if (kk.id == CD_WIDE)
            return fail(w, "column '%s': a value near row %llu does not fit INT32", c->spec.name,
                        (unsigned long long)(w->rows + i));
        if (!def)
            return fail(w, "column '%s' is required: null at row %llu", c->spec.name,
                        (unsigned long long)(w->rows + i));
        def[i] = 0;
    }
    if (def)
        nx_strbuf_commit(&p->def, n);
    p->levels += n;
    p->values += k;
    p->n_ids += k;
    p->id_bytes += bytes;
    p->stats.nulls += (int64_t)(n - k);
    return 0;
}

/* ------------------------------------------------------------- row groups */

static int write_bytes(nxpq_writer *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return fail(w, "write failed: %s", strerror(errno));
    w->pos += (int64_t)n;
    return 0;
}

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

static pq_bytes arena_bytes(nxpq_writer *w, const col_writer *c, uint32_t off, uint32_t len)
{
    pq_bytes b = {NULL, 0};
    uint8_t *p = nx_arena_alloc(&w->meta, len ? len : 1);
    if (!p) {
        fail(w, "out of memory");
        return b;
    }
    if (len)
        memcpy(p, c->bounds.data + off, len);
    b.ptr = p;
    b.len = len;
    return b;
}

/* A chunk statistics bound, copied into the footer's arena. */
static pq_bytes stats_bound(nxpq_writer *w, const col_writer *c, const stats_acc *s, bool max)
{
    unsigned char buf[8];
    pq_bytes src = stats_bound_plain(c, s, max, buf), b = {NULL, 0};
    uint8_t *p = nx_arena_alloc(&w->meta, src.len ? src.len : 1);
    if (!p) {
        fail(w, "out of memory");
        return b;
    }
    if (src.len)
        memcpy(p, src.ptr, src.len);
    b.ptr = p;
    b.len = src.len;
    return b;
}

static void fill_statistics(nxpq_writer *w, const col_writer *c, pq_statistics *out)
{
    const stats_acc *s = &c->chunk_stats;
    memset(out, 0, sizeof *out);
    out->has_null_count = true;
    out->null_count = s->nulls;
    if (c->physical == PQ_FLOAT || c->physical == PQ_DOUBLE) {
        out->has_nan_count = true;
        out->nan_count = s->nans;
    }
    if (s->any) {
        out->has_min = out->has_max = true;
        out->min_value = stats_bound(w, c, s, false);
        out->max_value = stats_bound(w, c, s, true);
    }
}

static int32_t boundary_order(const col_writer *c, const page_info *p, uint32_t n);
static const char *const LIST_PATH_TAIL[] = {"list", "element"};

/* Writes one encoded column chunk and records its metadata and page index. */
static int write_column_chunk(nxpq_writer *w, col_writer *c, pq_column_chunk *cc, chunk_index *idx)
{
    pq_column_meta *m = &cc->meta;
    int64_t start = w->pos;
    if (c->has_dict_page) {
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset = start;
        if (write_bytes(w, c->dict_page.data, c->dict_page.len) != 0)
            return -1;
    }
    int64_t data_start = w->pos;
    if (write_bytes(w, c->chunk.data, c->chunk.len) != 0)
        return -1;
    m->type = c->physical;
    m->codec = w->opt.codec;
    m->num_values = c->chunk_values;
    m->total_uncompressed_size = c->chunk_uncompressed + c->dict_uncompressed;
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
        fill_statistics(w, c, &m->statistics);
    }
    cc->file_offset = 0; /* deprecated field; 0 as the specification asks */

    /* Page index entries move to the arena, with file offsets. */
    idx->n_pages = (uint32_t)c->n_infos;
    idx->pages = nx_arena_calloc(&w->meta, c->n_infos ? c->n_infos : 1, sizeof *idx->pages);
    if (!idx->pages)
        return fail(w, "out of memory");
    for (size_t i = 0; i < c->n_infos; i++) {
        page_info *pi = &idx->pages[i];
        *pi = c->infos[i];
        pi->offset += data_start;
        if (pi->has_bounds) {
            pi->min = arena_bytes(w, c, pi->min_off, pi->min_len);
            pi->max = arena_bytes(w, c, pi->max_off, pi->max_len);
        } else {
            pi->min = pi->max = arena_bytes(w, c, 0, 0);
        }
    }
    idx->write_column_index = w->opt.write_page_index && w->opt.write_statistics && !c->nan_only_page;
    idx->boundary_order = boundary_order(c, idx->pages, idx->n_pages);
    return w->failed ? -1 : 0;
}

/* After its chunk is written: a fresh dictionary and mode for the next chunk. */
static void reset_encoder(col_writer *c)
{
    int first_mode = initial_mode(c);
    if (first_mode == MODE_DICT && c->mode == MODE_PLAIN)
        c->dict_abandoned = true; /* fell back in this chunk: high cardinality */
    if (c->cd)
        for (size_t e = 0; e < c->dict.n_entries; e++)
            c->cd->chunk1[c->cd->used[e]] = 0;
    dict_clear(&c->dict);
    c->mode = initial_mode(c);
}

/* Writes the row group whose encoding has finished. */
static int write_encoded_row_group(nxpq_writer *w)
{
    if (add_row_group(w) != 0)
        return -1;
    pq_row_group *rg = &w->rgs[w->n_rgs];
    int64_t start = w->pos, uncompressed = 0;
    for (size_t ci = 0; ci < w->n_cols; ci++) {
        col_writer *c = &w->cols[ci];
        if (write_column_chunk(w, c, &rg->columns[ci], &w->indexes[w->n_rgs * w->n_cols + ci]) != 0)
            return -1;
        uncompressed += rg->columns[ci].meta.total_uncompressed_size;
        reset_encoder(c);
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
    return 0;
}

/*
 * Ends the row group: queues the last pages, waits for the encoders to drain,
 * then writes every column chunk (dictionary page, data pages) in column order
 * and readies the columns for the next row group.
 */
static int flush_row_group(nxpq_writer *w)
{
    if (w->rg_rows == 0)
        return 0;
    for (size_t ci = 0; ci < w->n_cols; ci++) {
        col_writer *c = &w->cols[ci];
        if (c->open->levels > 0 && queue_open_page(w, c) != 0)
            return -1;
    }
    if (pool_drain(w) != 0)
        return -1;
    for (size_t ci = 0; ci < w->n_cols; ci++) {
        col_writer *c = &w->cols[ci];
        if (column_chunk_finish(w, c, &w->scratch[0]) != 0)
            return fail(w, "%s", c->err);
    }
    if (write_encoded_row_group(w) != 0)
        return -1;
    w->rg_rows = 0;
    w->rg_bytes = 0;
    for (size_t ci = 0; ci < w->n_cols; ci++) {
        col_writer *c = &w->cols[ci];
        column_chunk_begin(c);
        if (c->open)
            c->open->first_row = 0; /* an empty page carries over */
        else if (take_page(w, c) != 0)
            return -1;
    }
    return 0;
}

/* Raw bytes the open page holds, to decide when it is full. */
static size_t raw_page_bytes(const col_writer *c, const raw_page *p)
{
    size_t levels = (p->def.len + p->rep.len) / 8;
    if (c->cd)
        return levels + p->id_bytes;   /* what the PLAIN values would take: the same page cuts */
    if (c->delta)
        return levels + p->n_ints * 8;
    return levels + (c->physical == PQ_BOOLEAN ? p->plain.len / 8 : p->plain.len);
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
        raw_page *p = open_raw(c);
        p->rows += n;
        size_t bytes = raw_page_bytes(c, p);
        if (p->rows >= w->opt.page_rows || bytes >= w->opt.page_bytes) {
            w->rg_bytes += bytes;
            if (queue_open_page(w, c) != 0 || take_page(w, c) != 0)
                return -1;
        } else {
            buffered += bytes;
        }
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

/* Compares two PLAIN-encoded bounds in the column's order. */
static int bound_cmp(int physical, pq_bytes a, pq_bytes b)
{
    switch (physical) {
    case PQ_BYTE_ARRAY:
        return pq_bytes_cmp(a.ptr, a.len, b.ptr, b.len);
    case PQ_FLOAT: {
        float x, y;
        memcpy(&x, a.ptr, 4);
        memcpy(&y, b.ptr, 4);
        return (x > y) - (x < y);
    }
    case PQ_DOUBLE: {
        double x, y;
        memcpy(&x, a.ptr, 8);
        memcpy(&y, b.ptr, 8);
        return (x > y) - (x < y);
    }
    case PQ_INT32: {
        int32_t x, y;
        memcpy(&x, a.ptr, 4);
        memcpy(&y, b.ptr, 4);
        return (x > y) - (x < y);
    }
    case PQ_INT64: {
        int64_t x, y;
        memcpy(&x, a.ptr, 8);
        memcpy(&y, b.ptr, 8);
        return (x > y) - (x < y);
    }
    default:
        return (a.ptr[0] > b.ptr[0]) - (a.ptr[0] < b.ptr[0]);
    }
}

/* ASCENDING/DESCENDING when the non-null pages' bounds are ordered that way. */
static int32_t boundary_order(const col_writer *c, const page_info *p, uint32_t n)
{
    bool asc = true, desc = true;
    const page_info *prev = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!p[i].has_bounds)
            continue;
        if (prev) {
            int cmin = bound_cmp(c->physical, prev->min, p[i].min);
            int cmax = bound_cmp(c->physical, prev->max, p[i].max);
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
    nx_strbuf *b = &w->tmp;
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
    nx_strbuf *b = &w->tmp;
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
    nx_strbuf *b = &w->tmp;
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
    pool_stop(w);
    for (size_t i = 0; i < w->n_cols && w->cols; i++)
        col_free(&w->cols[i]);
    free(w->cols);
    free(w->rgs);
    free(w->indexes);
    for (size_t t = 0; w->scratch && t < w->n_scratch; t++)
        encode_scratch_free(&w->scratch[t]);
    free(w->scratch);
    free(w->jobs);
    nx_strbuf_free(&w->tmp);
    nx_arena_free(&w->meta);
    free(w->path);
    free(w);
}

int nxpq_writer_close(nxpq_writer *w, nx_error *err)
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
        if (err) {
            nx_error_set(err, "%s", w->err);
            snprintf(err->file, sizeof err->file, "%s", w->path);
        }
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
