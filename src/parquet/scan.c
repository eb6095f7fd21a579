/*
 * scan.c — scanning a Parquet file: projection, pruning and batches.
 *
 * For each row group the scan first asks the column chunk statistics of every
 * range column whether the group can hold a matching row; then, where the
 * range column has a page index, it keeps only the row intervals of pages
 * whose [min, max] can match (intersecting over all ranges). Every projected
 * column is then read through a pq_cursor that loads only the pages holding
 * kept rows and slices them to those rows, so all columns of a batch cover the
 * same contiguous rows. Without a page index the whole row group is kept.
 * A row selection (rows_begin, rows_end) keeps only those rows of the file
 * before the ranges are applied, so looking one row up reads one page of
 * each projected column.
 *
 * Threads (nxpq_scan_options.threads > 1): a batch's columns are decoded on
 * that many threads, each taking the next undone column; the batch is the same
 * as a one-thread scan's, and the first error met (by any thread) is reported.
 *
 * Dictionary form (nxpq_scan_options.dictionary): set per cursor for the
 * column types parquet.h lists; chunk.h says when a batch column gets it.
 *
 * Statistics: pages_total counts the data pages of the projected columns in
 * the row groups that survive row-group pruning (from the offset index, or,
 * without one, the pages whose headers were met); pages_read those decoded.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/chunk.h"

/* Below PARALLEL_MIN_ROWS rows per batch the columns are read on the calling
 * thread only: starting threads costs more than decoding a few rows. */
enum { PARALLEL_MIN_ROWS = 4096, MAX_THREADS = 8 };

typedef struct pq_ival {
    int64_t lo, hi; /* rows [lo, hi) of a row group */
} pq_ival;

typedef struct pq_ivec {
    pq_ival *v;
    size_t n, cap;
} pq_ivec;

struct nxpq_scan {
    nxpq_reader *r;
    size_t n_proj;
    const pq_column **proj;
    nxpq_range *ranges;
    size_t n_ranges;
    int64_t rows_begin, rows_end;   /* the file's rows asked for; rows_end 0: all */
    size_t batch_rows;
    size_t threads;         /* decoding threads per batch (>= 1) */
    pq_cursor *cursors;
    pq_colbuf *bufs;
    nxpq_column_data *cols;
    nxpq_batch batch;
    uint32_t next_rg, rg;   /* the next row group to prepare; the current one */
    pq_ivec keep, tmp;      /* kept row intervals of the current row group */
    size_t iv_pos;          /* the interval being emitted */
    int64_t iv_row;         /* its next row */
    nx_arena idx_arena;     /* page indexes of the current row group */
    nxpq_scan_stats stats;
    bool failed;
    nx_error error;
};

/* ------------------------------------------------------------- intervals */

static int ivec_push(pq_ivec *iv, int64_t lo, int64_t hi)
{
    if (iv->n && iv->v[iv->n - 1].hi == lo) { /* adjacent: merge */
        iv->v[iv->n - 1].hi = hi;
        return 0;
    }
    if (iv->n == iv->cap) {
        size_t cap = iv->cap ? iv->cap * 2 : 16;
        pq_ival *v = realloc(iv->v, cap * sizeof *v);
        if (!v)
            return -1;
        iv->v = v;
        iv->cap = cap;
    }
    iv->v[iv->n++] = (pq_ival){lo, hi};
    return 0;
}

/* a = a ∩ b, both sorted and disjoint; out is scratch. */
static int ivec_intersect(pq_ivec *a, const pq_ivec *b, pq_ivec *out)
{
    out->n = 0;
    for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
        int64_t lo = a->v[i].lo > b->v[j].lo ? a->v[i].lo : b->v[j].lo;
        int64_t hi = a->v[i].hi < b->v[j].hi ? a->v[i].hi : b->v[j].hi;
        if (lo < hi && ivec_push(out, lo, hi) < 0)
            return -1;
        if (a->v[i].hi < b->v[j].hi)
            i++;
        else
            j++;
    }
    pq_ivec t = *a;
    *a = *out;
    *out = t;
    return 0;
}

/* --------------------------------------------------------------- pruning */

/* A min or max statistic of an INT32/INT64 column, if it has the right size. */
static bool stat_int(const pq_column *col, pq_bytes b, int64_t *v)
{
    if (col->leaf_type == PQ_INT32 && b.len == 4) {
        int32_t x;
        memcpy(&x, b.ptr, 4);
        *v = x;
        return true;
    }
    if (col->leaf_type == PQ_INT64 && b.len == 8) {
        memcpy(v, b.ptr, 8);
        return true;
    }
    return false;
}

/* Whether [min, max] (as statistics bytes) can meet the range. */
static bool may_match(const pq_column *col, pq_bytes min, pq_bytes max, const nxpq_range *rg)
{
    int64_t lo, hi;
    if (!stat_int(col, min, &lo) || !stat_int(col, max, &hi))
        return true;
    return hi >= rg->min && lo <= rg->max;
}

static bool row_group_may_match(const nxpq_scan *s, uint32_t g)
{
    for (size_t i = 0; i < s->n_ranges; i++) {
        const nxpq_range *rg = &s->ranges[i];
        const pq_column *col = &s->r->cols[rg->column];
        const pq_column_meta *m = &s->r->meta.row_groups[g].columns[col->leaf].meta;
        if (rg->min > rg->max)
            return false;
        if (col->stats_signed && m->has_statistics && m->statistics.has_min && m->statistics.has_max &&
            !may_match(col, m->statistics.min_value, m->statistics.max_value, rg))
            return false;
    }
    return true;
}

__attribute__((format(printf, 5, 6))) static int scan_fail(nxpq_scan *s, nx_error *err, const pq_column *col,
                                                           int64_t rg, const char *fmt, ...)
{
    nx_error msg = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg.msg, sizeof msg, fmt, ap);
    va_end(ap);
    pq_set_error(err, s->r, col, rg, -1, "%s", msg.msg);
    return -1;
}

/* Keeps, of the current intervals, the rows of pages whose min/max on the
 * range column can match (null pages never can). */
static int prune_pages(nxpq_scan *s, uint32_t g, const nxpq_range *rg, nx_error *err)
{
    const pq_column *col = &s->r->cols[rg->column];
    pq_column_index ci;
    pq_offset_index oi;
    nx_error msg = {0};
    if (!col->stats_signed)
        return 0;
    int rc = pq_load_column_index(s->r, g, col, &s->idx_arena, &ci, &msg);
    if (rc > 0)
        rc = pq_load_offset_index(s->r, g, col, &s->idx_arena, &oi, &msg);
    if (rc < 0)
        return scan_fail(s, err, col, g, "%s", msg.msg);
    if (rc == 0)
        return 0;
    if (ci.n_pages != oi.n_pages)
        return scan_fail(s, err, col, g, "%s", "the column index and offset index count different pages");
    pq_ivec pages = {NULL, 0, 0};
    int64_t rows = s->r->meta.row_groups[g].num_rows;
    rc = 0;
    for (uint32_t i = 0; i < ci.n_pages && rc == 0; i++) {
        if (ci.null_pages[i] || !may_match(col, ci.min_values[i], ci.max_values[i], rg))
            continue;
        int64_t hi = i + 1 < oi.n_pages ? oi.pages[i + 1].first_row_index : rows;
        rc = ivec_push(&pages, oi.pages[i].first_row_index, hi);
    }
    if (rc == 0)
        rc = ivec_intersect(&s->keep, &pages, &s->tmp);
    free(pages.v);
    if (rc < 0)
        return scan_fail(s, err, col, g, "%s", "out of memory");
    return 0;
}

/* Decides which rows of row group g to read and readies the cursors. */
static int prepare_row_group(nxpq_scan *s, uint32_t g, nx_error *err)
{
    int64_t rows = s->r->meta.row_groups[g].num_rows;
    s->keep.n = 0;
    s->iv_pos = 0;
    s->rg = g;
    if (rows == 0 || !row_group_may_match(s, g))
        return 0;
    int64_t lo = 0, hi = rows;
    if (s->rows_end > 0) {   /* the asked rows, relative to the group */
        int64_t first = s->r->rg_first_row[g];
        lo = s->rows_begin > first ? s->rows_begin - first : 0;
        hi = s->rows_end - first < rows ? s->rows_end - first : rows;
        if (lo >= hi)
            return 0;
    }
    nx_arena_free(&s->idx_arena);
    if (ivec_push(&s->keep, lo, hi) < 0)
        return scan_fail(s, err, NULL, g, "%s", "out of memory");
    for (size_t i = 0; i < s->n_ranges && s->keep.n; i++)
        if (prune_pages(s, g, &s->ranges[i], err) < 0)
            return -1;
    if (s->keep.n == 0)
        return 0;
    s->stats.row_groups_read++;
    for (size_t j = 0; j < s->n_proj; j++)
        if (pq_cursor_begin(&s->cursors[j], s->r, s->proj[j], g, err) < 0)
            return -1;
    s->iv_row = s->keep.v[0].lo;
    return 0;
}

/* ------------------------------------------------------------------- open */

static int set_projection(nxpq_scan *s, const nxpq_scan_options *o, nx_error *err)
{
    const nxpq_reader *r = s->r;
    size_t n = 0;
    if (!o->columns && o->n_columns)
        return scan_fail(s, err, NULL, -1, "%s", "n_columns is set but columns is NULL");
    if (!o->columns) {
        for (size_t i = 0; i < r->n_cols; i++)
            n += r->cols[i].info.type != NXPQ_UNSUPPORTED;
    } else {
        n = o->n_columns;
    }
    s->proj = calloc(n ? n : 1, sizeof *s->proj);
    s->cursors = calloc(n ? n : 1, sizeof *s->cursors);
    s->bufs = calloc(n ? n : 1, sizeof *s->bufs);
    s->cols = calloc(n ? n : 1, sizeof *s->cols);
    if (!s->proj || !s->cursors || !s->bufs || !s->cols)
        return scan_fail(s, err, NULL, -1, "%s", "out of memory");
    for (size_t i = 0, k = 0; k < n; i++) {
        size_t c = o->columns ? o->columns[i] : i;
        if (c >= r->n_cols)
            return scan_fail(s, err, NULL, -1, "projected column index %zu is out of range (%zu columns)", c,
                             r->n_cols);
        if (r->cols[c].info.type == NXPQ_UNSUPPORTED) {
            if (!o->columns)
                continue;
            return scan_fail(s, err, &r->cols[c], -1, "its type (%s) is not supported by this reader",
                             r->cols[c].unsupported);
        }
        nxpq_type t = r->cols[c].info.type;
        s->cursors[k].dict_out =
            o->dictionary && !r->cols[c].max_rep && (t == NXPQ_STRING || t == NXPQ_INT32 || t == NXPQ_INT64);
        s->proj[k++] = &r->cols[c];
    }
    s->n_proj = n;
    return 0;
}

static int set_ranges(nxpq_scan *s, const nxpq_scan_options *o, nx_error *err)
{
    if (!o->n_ranges)
        return 0;
    if (!o->ranges)
        return scan_fail(s, err, NULL, -1, "%s", "n_ranges is set but ranges is NULL");
    s->ranges = malloc(o->n_ranges * sizeof *s->ranges);
    if (!s->ranges)
        return scan_fail(s, err, NULL, -1, "%s", "out of memory");
    for (size_t i = 0; i < o->n_ranges; i++) {
        size_t c = o->ranges[i].column;
        if (c >= s->r->n_cols)
            return scan_fail(s, err, NULL, -1, "range column index %zu is out of range (%zu columns)", c,
                             s->r->n_cols);
        nxpq_type t = s->r->cols[c].info.type;
        if (t != NXPQ_INT32 && t != NXPQ_INT64)
            return scan_fail(s, err, &s->r->cols[c], -1, "a range needs an INT32 or INT64 column, not %s",
                             nxpq_type_name(t));
        s->ranges[i] = o->ranges[i];
    }
    s->n_ranges = o->n_ranges;
    return 0;
}

nxpq_scan *nxpq_scan_open(nxpq_reader *r, const nxpq_scan_options *opts, nx_error *err)
{
    static const nxpq_scan_options defaults = {0};
    const nxpq_scan_options *o = opts ? opts : &defaults;
    nxpq_scan *s = calloc(1, sizeof *s);
    if (!s) {
        pq_set_error(err, r, NULL, -1, -1, "out of memory");
        return NULL;
    }
    s->r = r;
    s->batch_rows = o->batch_rows ? o->batch_rows : PQ_DEFAULT_BATCH_ROWS;
    if (o->rows_end > 0) {
        s->rows_begin = o->rows_begin > 0 ? o->rows_begin : 0;
        s->rows_end = o->rows_end;
        if (s->rows_begin >= s->rows_end)   /* nothing asked: an empty scan */
            s->next_rg = r->meta.n_row_groups;
    }
    s->threads = o->threads < 1 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : (size_t)o->threads;
    s->stats.row_groups_total = r->meta.n_row_groups;
    if (set_projection(s, o, err) < 0 || set_ranges(s, o, err) < 0) {
        nxpq_scan_close(s);
        return NULL;
    }
    return s;
}

/* ----------------------------------------------------------------- batches */

/* Reads rows [a, a + k) of projected column j into its batch column. */
static int fill_column(nxpq_scan *s, size_t j, int64_t a, size_t k, nx_error *err)
{
    pq_colbuf_reset(&s->bufs[j]);
    if (pq_cursor_seek(&s->cursors[j], a, err) < 0 || pq_cursor_take(&s->cursors[j], k, &s->bufs[j], err) < 0)
        return -1;
    if (pq_colbuf_finish(&s->bufs[j], s->proj[j], &s->cols[j]) < 0)
        return scan_fail(s, err, s->proj[j], s->rg, "%s", "out of memory for a batch");
    return 0;
}

/* Column-parallel decoding (nxpq_scan_options.threads): every thread takes the
 * next undone column from a shared counter until none is left, so uneven
 * columns balance out. Columns share nothing but the read-only file bytes and
 * footer; each cursor and batch column belongs to one thread at a time. */
typedef struct fill_share {
    nxpq_scan *s;
    int64_t a;
    size_t k;
    atomic_size_t next;
    atomic_bool failed;
} fill_share;

typedef struct fill_worker {
    fill_share *sh;
    pthread_t th;
    int rc;
    nx_error err;
} fill_worker;

static void *fill_columns(void *arg)
{
    fill_worker *w = arg;
    fill_share *sh = w->sh;
    w->rc = 0;
    for (;;) {
        size_t j = atomic_fetch_add(&sh->next, 1);
        if (j >= sh->s->n_proj || atomic_load(&sh->failed))
            break;
        if (fill_column(sh->s, j, sh->a, sh->k, &w->err) < 0) {
            w->rc = -1;
            atomic_store(&sh->failed, true);
            break;
        }
    }
    return NULL;
}

static int fill_batch(nxpq_scan *s, nx_error *err)
{
    const pq_ival *iv = &s->keep.v[s->iv_pos];
    int64_t a = s->iv_row;
    size_t k = (uint64_t)(iv->hi - a) < s->batch_rows ? (size_t)(iv->hi - a) : s->batch_rows;
    size_t nt = s->threads < s->n_proj ? s->threads : s->n_proj;
    if (nt > 1 && k >= PARALLEL_MIN_ROWS) {
        fill_share sh = {.s = s, .a = a, .k = k};
        atomic_init(&sh.next, 0);
        atomic_init(&sh.failed, false);
        fill_worker w[MAX_THREADS];
        size_t started = 1;
        for (size_t t = 0; t < nt; t++)
            w[t].sh = &sh;
        for (; started < nt; started++)
            if (pthread_create(&w[started].th, NULL, fill_columns, &w[started]) != 0)
                break; /* fewer threads: the others take more columns */
        fill_columns(&w[0]);
        int rc = w[0].rc;
        if (rc < 0)
            *err = w[0].err;
        for (size_t t = 1; t < started; t++) {
            pthread_join(w[t].th, NULL);
            if (rc == 0 && w[t].rc < 0) {
                rc = -1;
                *err = w[t].err;
            }
        }
        if (rc < 0)
            return -1;
    } else {
        for (size_t j = 0; j < s->n_proj; j++)
            if (fill_column(s, j, a, k, err) < 0)
                return -1;
    }
    s->batch.n_rows = k;
    s->batch.first_row = s->r->rg_first_row[s->rg] + a;
    s->batch.n_columns = s->n_proj;
    s->batch.columns = s->cols;
    s->iv_row += (int64_t)k;
    if (s->iv_row >= iv->hi && ++s->iv_pos < s->keep.n)
        s->iv_row = s->keep.v[s->iv_pos].lo;
    return 0;
}

int nxpq_scan_next(nxpq_scan *s, const nxpq_batch **out, nx_error *err)
{
    nx_error local;
    if (!err)
        err = &local;
    if (s->failed) {
        *err = s->error;
        return -1;
    }
    while (s->iv_pos >= s->keep.n) {
        if (s->next_rg >= s->r->meta.n_row_groups)
            return 0;
        if (prepare_row_group(s, s->next_rg++, err) < 0)
            goto failed;
    }
    if (fill_batch(s, err) < 0)
        goto failed;
    if (pq_reader_changed(s->r))
        goto failed;
    *out = &s->batch;
    return 1;
failed:
    if (pq_reader_changed(s->r))   /* whatever failed, the file under it changed */
        pq_set_error(err, s->r, NULL, -1, -1, NX_FILE_MAP_CHANGED);
    s->failed = true;
    s->error = *err;
    return -1;
}

void nxpq_scan_get_stats(const nxpq_scan *s, nxpq_scan_stats *out)
{
    *out = s->stats;
    for (size_t j = 0; j < s->n_proj; j++) {
        out->pages_total += s->cursors[j].pages_seen;
        out->pages_read += s->cursors[j].pages_read;
    }
}

void nxpq_scan_close(nxpq_scan *s)
{
    if (!s)
        return;
    for (size_t j = 0; s->cursors && s->bufs && j < s->n_proj; j++) {
        pq_cursor_free(&s->cursors[j]);
        pq_colbuf_free(&s->bufs[j]);
    }
    free(s->proj);
    free(s->cursors);
    free(s->bufs);
    free(s->cols);
    free(s->ranges);
    free(s->keep.v);
    free(s->tmp.v);
    nx_arena_free(&s->idx_arena);
    free(s);
}
