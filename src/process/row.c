/*
 * row.c — catalogue rows, buffered column by column and handed to the Parquet
 * writer in batches (see row.h).
 *
 * Each column keeps a value array of its kind (int64 for both integer widths,
 * double for both float widths, a byte for booleans, an (offset, length) pair
 * into the batch's arena for strings, an (offset, count) pair into the item
 * arrays for lists) and a validity byte per row. Validity starts at 0 for the
 * whole capacity, so a column nobody put is a null without any per-row work; the
 * codec refuses a null in a required column, which is how a missing required
 * value surfaces.
 */
#include "process/row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/program_file.h"

typedef enum { KIND_INT, KIND_NUM, KIND_BOOL, KIND_STR, KIND_LIST_INT, KIND_LIST_STR } col_kind;

struct nx_row_column {
    col_kind kind;
    uint8_t *valid;
    union {
        int64_t *i;
        double *d;
        uint8_t *b;
        nxpq_str *s;                             /* strings: into the arena or the caller's */
        struct span { uint64_t off, len; } *l;   /* lists: items in ints / strs */
    } v;
};

static col_kind kind_of(nx_column_type t)
{
    switch (t) {
    case NX_COL_INT64:
    case NX_COL_INT32: return KIND_INT;
    case NX_COL_FLOAT:
    case NX_COL_DOUBLE: return KIND_NUM;
    case NX_COL_BOOLEAN: return KIND_BOOL;
    case NX_COL_LIST_INT64: return KIND_LIST_INT;
    case NX_COL_LIST_STRING: return KIND_LIST_STR;
    default: return KIND_STR;
    }
}

static size_t value_size(col_kind k)
{
    switch (k) {
    case KIND_INT: return sizeof(int64_t);
    case KIND_NUM: return sizeof(double);
    case KIND_BOOL: return 1;
    case KIND_STR: return sizeof(nxpq_str);
    default: return sizeof(struct span);
    }
}

/* Grows every column to cap rows; new validity bytes are 0 (null). */
static int grow(nx_row *r, size_t cap)
{
    for (size_t c = 0; c < r->s->n_fields; c++) {
        nx_row_column *col = &r->cols[c];
        uint8_t *valid = realloc(col->valid, cap);
        if (!valid)
            return -1;
        memset(valid + r->cap, 0, cap - r->cap);
        col->valid = valid;
        void *v = realloc(col->v.i, cap * value_size(col->kind));
        if (!v)
            return -1;
        col->v.i = v;
    }
    r->cap = cap;
    return 0;
}

int nx_row_open(nx_row *r, const nx_table_dest *dest, const char *table, nxpq_error *err)
{
    memset(r, 0, sizeof *r);
    r->tw = nx_table_writer_open(dest->dir, table, dest->max_rows, dest->base, err);
    if (!r->tw)
        return -1;
    r->s = nx_table_writer_schema(r->tw);
    r->cols = calloc(r->s->n_fields, sizeof *r->cols);
    if (r->cols) {
        for (size_t c = 0; c < r->s->n_fields; c++)
            r->cols[c].kind = kind_of(r->s->fields[c].column_type);
        if (grow(r, 16) == 0)
            return 0;
    }
    nx_row_discard(r);
    snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
    return -1;
}

static nxpq_error *codec_fail(nx_row *r, nxpq_error *err, const char *what)
{
    snprintf(err->msg, sizeof err->msg, "%s: %s", r->s->name, what);
    return err;
}

static void arena_reset(nx_row *r);

/* Hands rows [0, r->n) to the codec, file by file, and empties the batch. */
static int flush(nx_row *r, nxpq_error *err)
{
    size_t done = 0;
    nxpq_str *strs = NULL;
    while (done < r->n) {
        size_t fit;
        nxpq_writer *w = nx_table_begin_rows(r->tw, r->n - done, &fit, err);
        if (!w)
            goto fail;
        for (size_t c = 0; c < r->s->n_fields; c++) {
            nx_row_column *col = &r->cols[c];
            const uint8_t *valid = col->valid + done;
            switch (col->kind) {
            case KIND_INT:
                nxpq_put_int64_masked(w, c, col->v.i + done, valid, fit);
                break;
            case KIND_NUM:
                nxpq_put_double_masked(w, c, col->v.d + done, valid, fit);
                break;
            case KIND_BOOL:
                nxpq_put_bool_masked(w, c, col->v.b + done, valid, fit);
                break;
            case KIND_STR:
                if (!strs && !(strs = malloc(r->cap * sizeof *strs))) {
                    codec_fail(r, err, "out of memory");
                    goto fail;
                }
                for (size_t i = 0; i < fit; i++) {
                    strs[i].ptr = valid[i] ? col->v.s[done + i].ptr : NULL;
                    strs[i].len = valid[i] ? col->v.s[done + i].len : 0;
                }
                nxpq_put_string_array(w, c, strs, fit);
                break;
            case KIND_LIST_INT:
            case KIND_LIST_STR:
                for (size_t i = 0; i < fit; i++) {
                    const struct span *sp = &col->v.l[done + i];
                    if (!valid[i])
                        nxpq_put_null(w, c);
                    else if (col->kind == KIND_LIST_INT)
                        nxpq_put_list_int64(w, c, r->ints + sp->off, sp->len);
                    else
                        nxpq_put_list_string(w, c, r->strs + sp->off, sp->len);
                }
                break;
            }
        }
        /* Put failures poison the codec writer; ending the rows reports them. */
        if (nx_table_end_rows(r->tw, fit, err) != 0)
            goto fail;
        done += fit;
    }
    free(strs);
    for (size_t c = 0; c < r->s->n_fields; c++)
        memset(r->cols[c].valid, 0, r->n);
    r->n = 0;
    arena_reset(r);
    r->ints_len = 0;
    r->strs_len = 0;
    return 0;
fail:
    free(strs);
    return -1;
}

int nx_row_begin(nx_row *r, nxpq_error *err)
{
    if (r->n < r->cap)
        return 0;
    if (r->cap < NX_ROW_BATCH) {
        if (grow(r, r->cap * 4 < NX_ROW_BATCH ? r->cap * 4 : NX_ROW_BATCH) != 0) {
            r->oom = true;
            codec_fail(r, err, "out of memory");
            return -1;
        }
        return 0;
    }
    return flush(r, err);
}

size_t nx_row_col(nx_row *r, const char *name)
{
    int c = nx_schema_field_index(r->s, name);
    if (c < 0) {
        r->missing = name;
        return SIZE_MAX;
    }
    return (size_t)c;
}

/* The column c if it exists and holds values of kind k; else notes the problem. */
static nx_row_column *slot(nx_row *r, size_t c, col_kind k)
{
    if (c >= r->s->n_fields)
        return NULL;   /* nx_row_col() noted the name */
    nx_row_column *col = &r->cols[c];
    if (col->kind != k) {
        r->wrong = r->s->fields[c].name;
        return NULL;
    }
    col->valid[r->n] = 1;
    return col;
}

void nx_row_i64(nx_row *r, size_t c, int64_t v)
{
    nx_row_column *col = slot(r, c, KIND_INT);
    if (col)
        col->v.i[r->n] = v;
}

void nx_row_num(nx_row *r, size_t c, double v)
{
    nx_row_column *col = slot(r, c, KIND_NUM);
    if (col)
        col->v.d[r->n] = v;
}

void nx_row_bool(nx_row *r, size_t c, bool v)
{
    nx_row_column *col = slot(r, c, KIND_BOOL);
    if (col)
        col->v.b[r->n] = v ? 1 : 0;
}

/* Copies n bytes into the arena, whose blocks never move (rows keep pointers
 * into them until the batch is flushed); NULL when out of memory. */
static const char *arena_put(nx_row *r, const char *s, size_t n)
{
    nx_row_block *b = r->arena;
    if (!b || b->cap - b->len < n) {
        size_t cap = n > NX_ROW_BLOCK ? n : NX_ROW_BLOCK;
        if (b && b->next && b->next->cap >= n) {   /* a block kept from an earlier batch */
            b = b->next;
            b->len = 0;
        } else {
            nx_row_block *nb = malloc(sizeof *nb + cap);
            if (!nb) {
                r->oom = true;
                return NULL;
            }
            nb->cap = cap;
            nb->len = 0;
            nb->next = b ? b->next : NULL;
            if (b)
                b->next = nb;
            else
                r->arena_first = nb;
            b = nb;
        }
        r->arena = b;
    }
    char *at = b->data + b->len;
    memcpy(at, s, n);
    b->len += n;
    return at;
}

/* Empties the arena, keeping its blocks for the next batch. */
static void arena_reset(nx_row *r)
{
    r->arena = r->arena_first;
    if (r->arena)
        r->arena->len = 0;
}

static int64_t *ints_reserve(nx_row *r, size_t n)
{
    if (r->ints_cap - r->ints_len < n) {
        size_t cap = r->ints_cap ? r->ints_cap : 256;
        while (cap - r->ints_len < n)
            cap *= 2;
        int64_t *v = realloc(r->ints, cap * sizeof *v);
        if (!v) {
            r->oom = true;
            return NULL;
        }
        r->ints = v;
        r->ints_cap = cap;
    }
    int64_t *at = r->ints + r->ints_len;
    r->ints_len += n;
    return at;
}

void nx_row_strn(nx_row *r, size_t c, const char *s, size_t len)
{
    nx_row_column *col = slot(r, c, KIND_STR);
    if (!col)
        return;
    const char *at = arena_put(r, s, len);
    col->v.s[r->n].ptr = at ? at : "";
    col->v.s[r->n].len = at ? len : 0;
}

void nx_row_str_ref(nx_row *r, size_t c, const char *s, size_t len)
{
    nx_row_column *col = slot(r, c, KIND_STR);
    if (col) {
        col->v.s[r->n].ptr = s;
        col->v.s[r->n].len = len;
    }
}

void nx_row_str(nx_row *r, size_t c, const char *s)
{
    nx_row_strn(r, c, s, strlen(s));
}

void nx_row_list_i64(nx_row *r, size_t c, const int64_t *v, size_t n)
{
    nx_row_column *col = slot(r, c, KIND_LIST_INT);
    if (!col)
        return;
    int64_t *at = ints_reserve(r, n);
    if (!at)
        return;
    if (n)
        memcpy(at, v, n * sizeof *v);
    col->v.l[r->n].off = (uint64_t)(at - r->ints);
    col->v.l[r->n].len = n;
}

void nx_row_list_str(nx_row *r, size_t c, const char *const *v, size_t n)
{
    nx_row_column *col = slot(r, c, KIND_LIST_STR);
    if (!col)
        return;
    if (r->strs_cap - r->strs_len < n) {
        size_t cap = r->strs_cap ? r->strs_cap : 64;
        while (cap - r->strs_len < n)
            cap *= 2;
        nxpq_str *x = realloc(r->strs, cap * sizeof *x);
        if (!x) {
            r->oom = true;
            return;
        }
        r->strs = x;
        r->strs_cap = cap;
    }
    col->v.l[r->n].off = r->strs_len;
    col->v.l[r->n].len = n;
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(v[k]);
        const char *at = arena_put(r, v[k], len);
        r->strs[r->strs_len].ptr = at ? at : "";
        r->strs[r->strs_len].len = at ? len : 0;
        r->strs_len++;
    }
}

void nx_row_opt_i64(nx_row *r, size_t c, int64_t v)
{
    if (v != NX_ABSENT)
        nx_row_i64(r, c, v);
}

void nx_row_opt_str(nx_row *r, size_t c, const char *s)
{
    if (s && *s)
        nx_row_str(r, c, s);
}

int nx_row_end(nx_row *r, nxpq_error *err)
{
    if (r->missing) {
        snprintf(err->msg, sizeof err->msg, "%s: the catalogue has no field %s", r->s->name, r->missing);
        return -1;
    }
    if (r->wrong) {
        snprintf(err->msg, sizeof err->msg, "%s: field %s was given a value of another type", r->s->name,
                 r->wrong);
        return -1;
    }
    if (r->oom) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->s->name);
        return -1;
    }
    r->n++;
    return 0;
}

uint64_t nx_row_count(const nx_row *r)
{
    return r->tw ? nx_table_writer_rows(r->tw) + r->n : 0;
}

static void release(nx_row *r)
{
    if (r->cols) {
        for (size_t c = 0; c < r->s->n_fields; c++) {
            free(r->cols[c].valid);
            free(r->cols[c].v.i);
        }
        free(r->cols);
    }
    for (nx_row_block *b = r->arena_first, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(r->ints);
    free(r->strs);
    memset(r, 0, sizeof *r);
}

int nx_row_close(nx_row *r, bool ok, unsigned *tables, nxpq_error *err)
{
    int rc = 0;
    if (r->tw) {
        if (ok && nx_row_count(r) > 0) {
            rc = flush(r, err);
            if (rc == 0) {
                rc = nx_table_writer_close(r->tw, err);
                if (rc == 0)
                    (*tables)++;
            } else {
                nx_table_writer_abort(r->tw);
            }
        } else {
            nx_table_writer_abort(r->tw);
        }
    }
    release(r);
    return rc;
}

void nx_row_discard(nx_row *r)
{
    unsigned ignored = 0;
    nxpq_error e;
    nx_row_close(r, false, &ignored, &e);
}
