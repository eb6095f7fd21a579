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

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/timeline_index_writer.h"
#include "profile/timeline_index.h"
#include "profile/timeline_rules.h"
#include "util/handoff.h"
#include "util/run_control.h"

/* KIND_KEYED: a column whose value is a function of the row key (nx_row_keyed_*):
 * puts store nothing; the flush hands the batch's keys to the codec, which
 * holds the column's values as a dictionary. */
typedef enum { KIND_INT, KIND_NUM, KIND_BOOL, KIND_STR, KIND_LIST_INT, KIND_LIST_STR, KIND_KEYED } col_kind;

/* Per field of a table with keyed columns: the caller's values per key (strs
 * or ints), and whether the timeline index reads the field, in which case the
 * flush spells the values out for it. */
struct nx_row_keyed {
    const nxpq_str *strs;
    const int64_t *ints;
    size_t n;
    unsigned slot;                   /* which of the row's keys it reads */
    bool index_reads;
};

#define BLOCK_BYTES 65536

typedef struct arena_block {         /* string bytes of a batch; blocks never move */
    struct arena_block *next;
    size_t len, cap;
    char data[];
} arena_block;

typedef struct nx_row_column {
    col_kind kind;
    uint8_t *valid;
    union {
        int64_t *i;
        double *d;
        uint8_t *b;
        nxpq_str *s;                             /* strings: into the arena or the caller's */
        struct span { uint64_t off, len; } *l;   /* lists: items in ints / strs */
    } v;
} nx_row_column;

struct nx_row_batch {
    nx_row_column *cols;             /* per field */
    size_t n, cap;                   /* rows in the batch; capacity of the column arrays */
    arena_block *arena_first, *arena;   /* string bytes; arena: the current block */
    int64_t *ints;                   /* integer list items */
    size_t ints_len, ints_cap;
    nxpq_str *strs;                  /* string list items */
    size_t strs_len, strs_cap;
    nxpq_str *scratch;               /* flush: one column's strings */
    uint32_t *keys[NX_ROW_KEYS];     /* per key slot, per row: nx_row_key() */
    uint8_t *key_valid[NX_ROW_KEYS]; /* per key slot, per row: 1 once nx_row_key() set it */
    const struct nx_row_keyed *keyed;   /* per field, the nx_row's; NULL: no keyed column */
    nx_tlx_column *view;             /* flush: the columns as the timeline index reads them */
};

/* The background flush (util/handoff.h): a full batch goes to the table's own
 * thread, which owns it until it is idle again; the caller never touches the
 * table writer meanwhile. */
struct nx_row_flusher {
    nx_handoff h;
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

/* ------------------------------------------------------------ batches -- */

static void batch_free(nx_row_batch *b, size_t n_fields)
{
    if (!b)
        return;
    if (b->cols) {
        for (size_t c = 0; c < n_fields; c++) {
            free(b->cols[c].valid);
            free(b->cols[c].v.i);
        }
        free(b->cols);
    }
    for (arena_block *k = b->arena_first, *next; k; k = next) {
        next = k->next;
        free(k);
    }
    free(b->ints);
    free(b->strs);
    free(b->scratch);
    for (unsigned k = 0; k < NX_ROW_KEYS; k++) {
        free(b->keys[k]);
        free(b->key_valid[k]);
    }
    free(b->view);
    free(b);
}

/* Grows every column to cap rows; new validity bytes are 0 (null). */
static int batch_grow(nx_row_batch *b, const nx_schema_table *s, size_t cap)
{
    for (size_t c = 0; c < s->n_fields; c++) {
        nx_row_column *col = &b->cols[c];
        uint8_t *valid = realloc(col->valid, cap);
        if (!valid)
            return -1;
        memset(valid + b->cap, 0, cap - b->cap);
        col->valid = valid;
        void *v = realloc(col->v.i, cap * value_size(col->kind));
        if (!v)
            return -1;
        col->v.i = v;
    }
    for (unsigned k = 0; k < NX_ROW_KEYS; k++) {
        uint32_t *keys = realloc(b->keys[k], cap * sizeof *keys);
        if (!keys)
            return -1;
        b->keys[k] = keys;
        uint8_t *kv = realloc(b->key_valid[k], cap);
        if (!kv)
            return -1;
        memset(kv + b->cap, 0, cap - b->cap);
        b->key_valid[k] = kv;
    }
    b->cap = cap;
    return 0;
}

static nx_row_batch *batch_new(const nx_schema_table *s, size_t cap)
{
    nx_row_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->cols = calloc(s->n_fields, sizeof *b->cols);
    if (b->cols) {
        for (size_t c = 0; c < s->n_fields; c++)
            b->cols[c].kind = kind_of(s->fields[c].column_type);
        if (batch_grow(b, s, cap) == 0)
            return b;
    }
    batch_free(b, s->n_fields);
    return NULL;
}

/* Empties a flushed batch, keeping its memory. */
static void batch_reset(nx_row_batch *b, size_t n_fields)
{
    for (size_t c = 0; c < n_fields; c++)
        memset(b->cols[c].valid, 0, b->n);
    for (unsigned k = 0; k < NX_ROW_KEYS; k++)
        memset(b->key_valid[k], 0, b->n);
    b->n = 0;
    b->arena = b->arena_first;
    if (b->arena)
        b->arena->len = 0;
    b->ints_len = 0;
    b->strs_len = 0;
}

/* Hands the batch's rows to the codec, file by file, and empties it. Runs on
 * the caller's thread or on the table's flush thread, never both at once. */
static int batch_flush(nx_row_batch *b, nx_table_writer *tw, nx_tlx_writer *tlx, const nx_schema_table *s,
                       nx_error *err)
{
    size_t done = 0;
    if ((!b->scratch && !(b->scratch = malloc(b->cap * sizeof *b->scratch))) ||
        (tlx && !b->view && !(b->view = calloc(s->n_fields, sizeof *b->view)))) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", s->name);
        return -1;
    }
    if (tlx) {
        for (size_t c = 0; c < s->n_fields; c++) {
            nx_row_column *col = &b->cols[c];
            col_kind k = col->kind;
            const struct nx_row_keyed *keyed_by = NULL;
            if (k == KIND_KEYED && b->keyed[c].index_reads) {
                /* The column arrays (sized for the field's own kind) take the values. */
                const struct nx_row_keyed *kc = &b->keyed[c];
                for (size_t i = 0; i < b->n; i++) {
                    uint32_t key = b->keys[kc->slot][i];
                    if (!b->key_valid[kc->slot][i] || key >= kc->n)
                        continue;   /* null; a key past the values fails in the codec */
                    if (kc->strs) {
                        col->v.s[i] = kc->strs[key];
                        col->valid[i] = kc->strs[key].ptr != NULL;
                    } else {
                        col->v.i[i] = kc->ints[key];
                        col->valid[i] = kc->ints[key] != NX_ABSENT;
                    }
                }
                k = kc->strs ? KIND_STR : KIND_INT;
                keyed_by = kc;
            }
            b->view[c] = (nx_tlx_column){.i = k == KIND_INT ? col->v.i : NULL,
                                         .s = k == KIND_STR ? col->v.s : NULL,
                                         .valid = col->valid,
                                         .keys = keyed_by ? b->keys[keyed_by->slot] : NULL,
                                         .key_valid = keyed_by ? b->key_valid[keyed_by->slot] : NULL,
                                         .n_keys = keyed_by ? keyed_by->n : 0};
        }
        if (nx_tlx_writer_add(tlx, b->view, b->n, err) != 0)
            return -1;
    }
    while (done < b->n) {
        size_t fit;
        nxpq_writer *w = nx_table_begin_rows(tw, b->n - done, &fit, err);
        if (!w)
            return -1;
        for (size_t c = 0; c < s->n_fields; c++) {
            nx_row_column *col = &b->cols[c];
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
                for (size_t i = 0; i < fit; i++) {
                    b->scratch[i].ptr = valid[i] ? col->v.s[done + i].ptr : NULL;
                    b->scratch[i].len = valid[i] ? col->v.s[done + i].len : 0;
                }
                nxpq_put_string_array(w, c, b->scratch, fit);
                break;
            case KIND_KEYED:
                nxpq_put_dict_masked(w, c, b->keys[b->keyed[c].slot] + done, b->key_valid[b->keyed[c].slot] + done, fit);
                break;
            case KIND_LIST_INT:
            case KIND_LIST_STR:
                for (size_t i = 0; i < fit; i++) {
                    const struct span *sp = &col->v.l[done + i];
                    if (!valid[i])
                        nxpq_put_null(w, c);
                    else if (col->kind == KIND_LIST_INT)
                        nxpq_put_list_int64(w, c, b->ints + sp->off, sp->len);
                    else
                        nxpq_put_list_string(w, c, b->strs + sp->off, sp->len);
                }
                break;
            }
        }
        /* Put failures poison the codec writer; ending the rows reports them. */
        if (nx_table_end_rows(tw, fit, err) != 0)
            return -1;
        done += fit;
    }
    batch_reset(b, s->n_fields);
    return 0;
}

/* ------------------------------------------------------------ background flush -- */

static int flush_item(void *ctx, void *item, nx_error *err)
{
    nx_row *r = ctx;
    nx_error e = {0};
    int rc = batch_flush(item, r->tw, r->tlx, r->s, &e);
    if (rc != 0)
        nx_error_set(err, "%s", e.msg);
    return rc;
}

static void discard_item(void *ctx, void *item)
{
    nx_row *r = ctx;
    batch_reset(item, r->s->n_fields);
}

static void flusher_stop(nx_row *r)
{
    if (!r->bg)
        return;
    nx_handoff_stop(&r->bg->h);
    free(r->bg);
    r->bg = NULL;
}

static int flusher_wait(nx_row *r, nx_error *err)
{
    return nx_handoff_wait(&r->bg->h, err);
}

/* The current batch is full: give it to the flush thread and continue in the
 * oldest of the ring, which the give leaves finished (util/handoff.h). */
static int hand_off(nx_row *r, nx_error *err)
{
    if (!r->bg) {
        for (unsigned k = 1; k <= NX_ROW_FLUSH_DEPTH; k++) {
            if (!(r->ring[k] = batch_new(r->s, NX_ROW_BATCH))) {
                snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->s->name);
                return -1;
            }
            for (size_t c = 0; c < r->s->n_fields; c++)   /* keyed columns (nx_row_keyed_*) */
                r->ring[k]->cols[c].kind = r->b->cols[c].kind;
            r->ring[k]->keyed = r->keyed;
        }
        if (!(r->bg = calloc(1, sizeof *r->bg))) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->s->name);
            return -1;
        }
        if (nx_handoff_start(&r->bg->h, NX_ROW_FLUSH_DEPTH, flush_item, discard_item, r) != 0) {
            free(r->bg);
            r->bg = NULL;
            snprintf(err->msg, sizeof err->msg, "%s: cannot start a writer thread", r->s->name);
            return -1;
        }
    }
    if (nx_handoff_give(&r->bg->h, r->b, err) != 0)
        return -1;
    r->cur = (r->cur + 1) % (NX_ROW_FLUSH_DEPTH + 1);
    r->b = r->ring[r->cur];
    return 0;
}

/* ------------------------------------------------------------ rows -- */

int nx_row_open(nx_row *r, const nx_table_dest *dest, const char *table, nx_error *err)
{
    memset(r, 0, sizeof *r);
    r->rows_written = dest->rows_written;
    r->tw = nx_table_writer_open(dest->dir, table, dest->max_rows, dest->base, err);
    if (!r->tw)
        return -1;
    r->s = nx_table_writer_schema(r->tw);
    if (nx_tlx_writer_open(dest->dir, r->s, dest->max_rows ? dest->max_rows : NX_TABLE_MAX_ROWS_DEFAULT, &r->tlx,
                           err) != 0) {
        nx_row_discard(r);
        return -1;
    }
    if ((r->b = r->ring[0] = batch_new(r->s, 16)))
        return 0;
    nx_row_discard(r);
    snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
    return -1;
}

int nx_row_begin(nx_row *r, nx_error *err)
{
    nx_row_batch *b = r->b;
    if (b->n < b->cap)
        return 0;
    if (b->cap < NX_ROW_BATCH) {
        if (batch_grow(b, r->s, b->cap * 4 < NX_ROW_BATCH ? b->cap * 4 : NX_ROW_BATCH) != 0) {
            r->oom = true;
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->s->name);
            return -1;
        }
        return 0;
    }
    return hand_off(r, err);
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
    nx_row_column *col = &r->b->cols[c];
    if (col->kind != k) {
        r->wrong = r->s->fields[c].name;
        return NULL;
    }
    col->valid[r->b->n] = 1;
    return col;
}

void nx_row_i64(nx_row *r, size_t c, int64_t v)
{
    nx_row_column *col = slot(r, c, KIND_INT);
    if (col)
        col->v.i[r->b->n] = v;
}

void nx_row_num(nx_row *r, size_t c, double v)
{
    nx_row_column *col = slot(r, c, KIND_NUM);
    if (col)
        col->v.d[r->b->n] = v;
}

void nx_row_bool(nx_row *r, size_t c, bool v)
{
    nx_row_column *col = slot(r, c, KIND_BOOL);
    if (col)
        col->v.b[r->b->n] = v ? 1 : 0;
}

/* Copies n bytes into the batch's arena, whose blocks never move (rows keep
 * pointers into them until the batch is flushed); NULL when out of memory. */
static const char *arena_put(nx_row *r, const char *s, size_t n)
{
    nx_row_batch *bt = r->b;
    arena_block *b = bt->arena;
    if (!b || b->cap - b->len < n) {
        size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        if (b && b->next && b->next->cap >= n) {   /* a block kept from an earlier batch */
            b = b->next;
            b->len = 0;
        } else {
            arena_block *nb = malloc(sizeof *nb + cap);
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
                bt->arena_first = nb;
            b = nb;
        }
        bt->arena = b;
    }
    char *at = b->data + b->len;
    memcpy(at, s, n);
    b->len += n;
    return at;
}

static int64_t *ints_reserve(nx_row *r, size_t n)
{
    nx_row_batch *b = r->b;
    if (b->ints_cap - b->ints_len < n) {
        size_t cap = b->ints_cap ? b->ints_cap : 256;
        while (cap - b->ints_len < n)
            cap *= 2;
        int64_t *v = realloc(b->ints, cap * sizeof *v);
        if (!v) {
            r->oom = true;
            return NULL;
        }
        b->ints = v;
        b->ints_cap = cap;
    }
    int64_t *at = b->ints + b->ints_len;
    b->ints_len += n;
    return at;
}

void nx_row_strn(nx_row *r, size_t c, const char *s, size_t len)
{
    nx_row_column *col = slot(r, c, KIND_STR);
    if (!col)
        return;
    const char *at = arena_put(r, s, len);
    col->v.s[r->b->n].ptr = at ? at : "";
    col->v.s[r->b->n].len = at ? len : 0;
}

void nx_row_str_ref(nx_row *r, size_t c, const char *s, size_t len)
{
    nx_row_column *col = slot(r, c, KIND_STR);
    if (col) {
        col->v.s[r->b->n].ptr = s;
        col->v.s[r->b->n].len = len;
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
    col->v.l[r->b->n].off = (uint64_t)(at - r->b->ints);
    col->v.l[r->b->n].len = n;
}

void nx_row_list_str(nx_row *r, size_t c, const char *const *v, size_t n)
{
    nx_row_column *col = slot(r, c, KIND_LIST_STR);
    if (!col)
        return;
    nx_row_batch *b = r->b;
    if (b->strs_cap - b->strs_len < n) {
        size_t cap = b->strs_cap ? b->strs_cap : 64;
        while (cap - b->strs_len < n)
            cap *= 2;
        nxpq_str *x = realloc(b->strs, cap * sizeof *x);
        if (!x) {
            r->oom = true;
            return;
        }
        b->strs = x;
        b->strs_cap = cap;
    }
    col->v.l[b->n].off = b->strs_len;
    col->v.l[b->n].len = n;
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(v[k]);
        const char *at = arena_put(r, v[k], len);
        b->strs[b->strs_len].ptr = at ? at : "";
        b->strs[b->strs_len].len = at ? len : 0;
        b->strs_len++;
    }
}

/* Whether the table's timeline index (timeline_index_writer.c) reads `field`:
 * the timing columns, the track's source columns and the labels. */
static bool index_reads(const nx_schema_table *s, const char *field)
{
    const nx_timeline_info *info = nx_timeline_find(s->name);
    if (!info)
        return false;
    if (strcmp(info->start_column, field) == 0 || (info->end_column && strcmp(info->end_column, field) == 0))
        return true;
    nx_track_source src = nx_track_sources(info->track);
    for (size_t k = 0; k < src.n; k++)
        if (strcmp(src.col[k], field) == 0)
            return true;
    const char *const *labels = nx_timeline_labels(s->name);
    for (size_t l = 0; labels && labels[l]; l++)
        if (strcmp(labels[l], field) == 0)
            return true;
    return false;
}

/* Keyed columns: the dictionary goes to the table writer (every file of the
 * table gets it); the column is marked so puts to it are refused and the flush
 * hands over keys instead of values. Only before the first row. */
static int keyed(nx_row *r, unsigned slot, size_t c, const nxpq_str *strs, const int64_t *ints, size_t n,
                 nx_error *err)
{
    if (c >= r->s->n_fields)
        return nx_error_set(err, "%s: the catalogue has no field %s", r->s->name, r->missing ? r->missing : "?");
    if (slot >= NX_ROW_KEYS)
        return nx_error_set(err, "%s: key slot %u of field %s past NX_ROW_KEYS", r->s->name, slot,
                              r->s->fields[c].name);
    col_kind want = strs ? KIND_STR : KIND_INT;
    if (r->b->cols[c].kind != want || r->rows > 0 || r->b->n > 0 || r->bg || n > UINT32_MAX)
        return nx_error_set(err, "%s: field %s cannot be keyed (%s)", r->s->name, r->s->fields[c].name,
                              r->b->cols[c].kind != want ? "not of that type, or keyed already" : "rows were written");
    if (!r->keyed && !(r->keyed = calloc(r->s->n_fields, sizeof *r->keyed)))
        return nx_error_set(err, "%s: out of memory", r->s->name);
    uint8_t *valid = NULL;
    if (ints) {
        if (!(valid = malloc(n ? n : 1)))
            return nx_error_set(err, "%s: out of memory", r->s->name);
        for (size_t k = 0; k < n; k++)
            valid[k] = ints[k] != NX_ABSENT;
    }
    int rc = nx_table_set_dictionary(r->tw, c, strs, ints, valid, n, err);
    free(valid);
    if (rc != 0)
        return rc;
    r->keyed[c] = (struct nx_row_keyed){strs, ints, n, slot, r->tlx && index_reads(r->s, r->s->fields[c].name)};
    r->b->keyed = r->keyed;
    r->b->cols[c].kind = KIND_KEYED;
    return 0;
}

int nx_row_keyed_str(nx_row *r, unsigned slot, size_t c, const nxpq_str *v, size_t n, nx_error *err)
{
    return keyed(r, slot, c, v, NULL, n, err);
}

int nx_row_keyed_i64(nx_row *r, unsigned slot, size_t c, const int64_t *v, size_t n, nx_error *err)
{
    return keyed(r, slot, c, NULL, v, n, err);
}

void nx_row_key(nx_row *r, unsigned slot, uint32_t key)
{
    if (slot >= NX_ROW_KEYS) {
        r->wrong = "(a row key slot past NX_ROW_KEYS)";
        return;
    }
    r->b->keys[slot][r->b->n] = key;
    r->b->key_valid[slot][r->b->n] = 1;
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

int nx_row_end(nx_row *r, nx_error *err)
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
    /* Every sink and table writes through here: a stop request is seen within
     * 64Ki rows, whatever phase is writing them. */
    int stopped = (r->rows & 0xFFFF) == 0xFFFF ? nx_run_stopped() : 0;
    if (stopped) {
        nx_run_stopped_message(stopped, err);
        return -1;
    }
    r->b->n++;
    r->rows++;
    return 0;
}

uint64_t nx_row_count(const nx_row *r)
{
    return r->rows;
}

static void release(nx_row *r)
{
    flusher_stop(r);
    nx_error ignored;
    nx_tlx_writer_close(r->tlx, false, NULL, 0, &ignored);   /* an index not finished is removed */
    if (r->s) {
        for (unsigned k = 0; k <= NX_ROW_FLUSH_DEPTH; k++)
            batch_free(r->ring[k], r->s->n_fields);
    }
    free(r->keyed);
    memset(r, 0, sizeof *r);
}

int nx_row_close(nx_row *r, bool ok, unsigned *tables, nx_error *err)
{
    int rc = 0;
    if (r->tw) {
        if (ok && r->rows > 0) {
            rc = r->bg ? flusher_wait(r, err) : 0;
            int stopped = rc == 0 ? nx_run_stopped() : 0;
            if (stopped) {   /* closing flushes and indexes: not worth it now */
                nx_run_stopped_message(stopped, err);
                rc = -1;
            }
            if (rc == 0)
                rc = batch_flush(r->b, r->tw, r->tlx, r->s, err);
            flusher_stop(r);
            if (rc == 0) {
                rc = nx_table_writer_close(r->tw, err);
                /* The index records the closed files' sizes, so it is finished last. */
                if (rc == 0)
                    rc = nx_tlx_writer_close(r->tlx, true, NULL, 0, err);
                r->tlx = NULL;
                if (rc == 0) {
                    (*tables)++;
                    if (r->rows_written)
                        atomic_fetch_add(r->rows_written, r->rows);
                }
            } else {
                nx_table_writer_abort(r->tw);
            }
        } else {
            flusher_stop(r);   /* the thread may be flushing: stop it before the writer goes */
            nx_table_writer_abort(r->tw);
        }
    }
    release(r);
    return rc;
}

void nx_row_discard(nx_row *r)
{
    unsigned ignored = 0;
    nx_error e;
    nx_row_close(r, false, &ignored, &e);
}

int nx_row_finish(nx_row *r, int rc, unsigned *tables, nx_error *err)
{
    if (rc == 0)
        return nx_row_close(r, true, tables, err);
    nx_row_discard(r);
    return rc;
}
