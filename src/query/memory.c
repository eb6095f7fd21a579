/*
 * memory.c — the SBUF half of the Memory view's answer (memory.h): a sampled
 * pass picks the allocations to draw, a second pass over the same window reads
 * their fields, and adjacent partitions of one allocation merge into one
 * rectangle. Two passes keep memory at the sampler's slots plus the kept rows,
 * never the window's rows.
 */
#include "query/memory.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/engine/budget.h"
#include "query/engine/window.h"
#include "util/int_ops.h"
#include "util/text.h"

/* The second pass's columns, in this order (the window appends its own after them). */
enum { C_PARTITION, C_START_ADDR, C_END_ADDR, C_PCORE, C_BLOCK, C_SOURCE, C_OPCODE, C_OPERANDS, C_QUEUE,
       C_TENSOR, C_HLO, N_COLS };
static const char *const COLS[N_COLS] = {"partition",  "start_address", "end_address", "pcore_idx",
                                         "block_id",   "op_source_type", "opcode",     "operands",
                                         "queue_name", "tensor_name",   "hlo_name"};

/* The columns of COLS the table has (a file without an optional column reads it as null). */
static size_t present_columns(nx_profile_table *t, const char **cols, int *at)
{
    size_t n = 0;
    for (size_t c = 0; c < N_COLS; c++) {
        at[c] = -1;
        if (nx_profile_table_find_column(t, COLS[c]) >= 0) {
            at[c] = (int)n;
            cols[n++] = COLS[c];
        }
    }
    return n;
}

static nx_window *open_window(nx_profile_table *t, int64_t start, int64_t end, const char **cols, size_t n,
                              nx_error *err)
{
    nx_window_options o = {.start = start, .end = end, .columns = cols, .n_columns = n};
    return nx_window_open(t, &o, err);
}

/* Pass 1: the sampler over the window, by partition. Also counts the window's rows
 * and finds its highest partition. */
static int sample(nx_profile_table *t, nx_memory *m, int64_t start, int64_t end, nx_sampler *s, nx_error *err)
{
    const char *cols[1] = {"partition"};
    nx_window *w = open_window(t, start, end, cols, 1, err);
    if (!w)
        return -1;
    nx_window_batch b;
    int rc;
    while ((rc = nx_window_next(w, &b, err)) > 0) {
        for (size_t k = 0; k < b.n_rows; k++) {
            int64_t p = 0;
            nx_column_int(&b.batch->columns[0], b.rows[k], &p); /* the track rule requires it non-null */
            if (p + 1 > m->partitions)
                m->partitions = p + 1;
        }
        m->in_window += b.n_rows;
        if (nx_sampler_add(s, &b, err) < 0) {
            rc = nx_sampler_over_budget(s) ? NX_QUERY_OVER_BUDGET : -1;
            break;
        }
    }
    nx_window_close(w);
    return rc;
}

static int dup_str(const nxpq_column_data *c, size_t i, char **out)
{
    const char *s;
    size_t len;
    *out = NULL;
    if (!c || !nx_column_str(c, i, &s, &len))
        return 0;
    return (*out = nx_text_dup(s, len)) ? 0 : -1;
}

static const char *owner_of(const nx_memory_rect *r)
{
    const char *order[4] = {r->tensor_name, r->hlo_name, r->opcode, r->queue_name};
    for (int i = 0; i < 4; i++)
        if (order[i] && order[i][0])
            return order[i];
    return "";
}

/* Fills r from row i of the second pass's batch; -1 and err on a bad row or out of memory. */
static int fill_rect(nx_memory_rect *r, const nx_window_batch *b, size_t k, const int *at, const char *file,
                     nx_error *err)
{
    const nxpq_batch *x = b->batch;
    size_t i = b->rows[k];
    const nxpq_column_data *c[N_COLS];
    for (size_t j = 0; j < N_COLS; j++)
        c[j] = at[j] >= 0 ? &x->columns[at[j]] : NULL;
    int64_t row = x->first_row + (int64_t)i;
    r->start = b->start[k];
    r->end = b->end[k];
    nx_column_int(c[C_PARTITION], i, &r->partition_lo);
    r->partition_hi = r->partition_lo;
    bool sa = c[C_START_ADDR] && nx_column_int(c[C_START_ADDR], i, &r->start_address);
    bool ea = c[C_END_ADDR] && nx_column_int(c[C_END_ADDR], i, &r->end_address);
    if (!sa || !ea || r->partition_lo < 0 || r->end_address < r->start_address) {
        nx_error_set(err, "%s: row %lld: %s", file, (long long)row,
                       !sa || !ea              ? "null or missing start_address/end_address"
                       : r->partition_lo < 0 ? "negative partition"
                                               : "end_address below start_address");
        return -1;
    }
    r->has_pcore_idx = c[C_PCORE] && nx_column_int(c[C_PCORE], i, &r->pcore_idx);
    r->has_block_id = c[C_BLOCK] && nx_column_int(c[C_BLOCK], i, &r->block_id);
    if (dup_str(c[C_SOURCE], i, &r->op_source_type) < 0 || dup_str(c[C_OPCODE], i, &r->opcode) < 0 ||
        dup_str(c[C_OPERANDS], i, &r->operands) < 0 || dup_str(c[C_QUEUE], i, &r->queue_name) < 0 ||
        dup_str(c[C_TENSOR], i, &r->tensor_name) < 0 || dup_str(c[C_HLO], i, &r->hlo_name) < 0 ||
        !(r->owner = strdup(owner_of(r)))) {
        nx_error_set(err, "%s: out of memory reading row %lld", file, (long long)row);
        return -1;
    }
    r->ordinal = nx_row_ordinal(b->file, row);
    return 0;
}

/* Pass 2: the kept rows' fields, walking the kept ordinals (ascending) beside the
 * window's rows (ascending too: file order). */
static int read_kept(nx_profile_table *t, nx_memory *m, int64_t start, int64_t end, const nx_sample *kept,
                     size_t n_kept, nx_error *err)
{
    const char *cols[N_COLS];
    int at[N_COLS];
    size_t n = present_columns(t, cols, at);
    nx_window *w = open_window(t, start, end, cols, n, err);
    if (!w)
        return -1;
    nx_window_batch b;
    size_t next = 0;
    int rc = 0;
    while (next < n_kept && (rc = nx_window_next(w, &b, err)) > 0) {
        const char *file = nx_profile_table_file_path(t, b.file);
        for (size_t k = 0; k < b.n_rows && next < n_kept; k++) {
            if (nx_row_ordinal(b.file, b.batch->first_row + b.rows[k]) != kept[next].ordinal)
                continue;
            if (fill_rect(&m->rects[m->n_rects++], &b, k, at, file, err) < 0) {
                nx_window_close(w);
                return -1;
            }
            next++;
        }
    }
    nx_window_close(w);
    if (next < n_kept && rc >= 0) {
        nx_error_set(err, "SbufAllocation: changed while read (%zu of %zu sampled rows found)", next, n_kept);
        return -1;
    }
    return next < n_kept ? -1 : 0;
}

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

/* Equal except for the partition: the same allocation in another partition. */
static int cmp_alloc(const nx_memory_rect *a, const nx_memory_rect *b)
{
    int c;
    if ((c = nx_cmp_i64(a->has_pcore_idx, b->has_pcore_idx)) ||
        (a->has_pcore_idx && (c = nx_cmp_i64(a->pcore_idx, b->pcore_idx))) || (c = nx_cmp_i64(a->start, b->start)) ||
        (c = nx_cmp_i64(a->end, b->end)) || (c = nx_cmp_i64(a->start_address, b->start_address)) ||
        (c = nx_cmp_i64(a->end_address, b->end_address)) || (c = nx_cmp_i64(a->has_block_id, b->has_block_id)) ||
        (a->has_block_id && (c = nx_cmp_i64(a->block_id, b->block_id))))
        return c;
    const char *as[6] = {a->op_source_type, a->opcode, a->operands, a->queue_name, a->tensor_name, a->hlo_name};
    const char *bs[6] = {b->op_source_type, b->opcode, b->operands, b->queue_name, b->tensor_name, b->hlo_name};
    for (int i = 0; i < 6; i++)
        if ((c = cmp_str(as[i], bs[i])))
            return c;
    return 0;
}

static int cmp_merge(const void *x, const void *y)
{
    const nx_memory_rect *a = x, *b = y;
    int c = cmp_alloc(a, b);
    return c ? c : nx_cmp_i64(a->partition_lo, b->partition_lo);
}

static int cmp_answer(const void *x, const void *y)
{
    const nx_memory_rect *a = x, *b = y;
    int c;
    if ((c = nx_cmp_i64(a->start, b->start)) || (c = nx_cmp_i64(a->partition_lo, b->partition_lo)) ||
        (c = nx_cmp_i64(a->start_address, b->start_address)))
        return c;
    return nx_cmp_i64(a->ordinal, b->ordinal);
}

static void rect_free(nx_memory_rect *r)
{
    free(r->owner);
    free(r->op_source_type);
    free(r->opcode);
    free(r->operands);
    free(r->queue_name);
    free(r->tensor_name);
    free(r->hlo_name);
}

/* Merges the rows of one allocation in adjacent partitions (memory.h). */
static void merge(nx_memory *m)
{
    if (m->n_rects < 2)
        return;
    qsort(m->rects, m->n_rects, sizeof *m->rects, cmp_merge);
    size_t out = 0;
    for (size_t i = 1; i < m->n_rects; i++) {
        nx_memory_rect *last = &m->rects[out], *r = &m->rects[i];
        if (r->partition_lo == last->partition_hi + 1 && cmp_alloc(last, r) == 0) {
            last->partition_hi = r->partition_hi;
            rect_free(r);
        } else {
            m->rects[++out] = *r;
        }
    }
    m->n_rects = out + 1;
    qsort(m->rects, m->n_rects, sizeof *m->rects, cmp_answer);
}

static int read_sbuf(const char *dir, nx_memory *m, int64_t start, int64_t end, uint32_t width, nx_error *err)
{
    nx_profile_table *t;
    int rc = nx_profile_table_open(dir, "SbufAllocation", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    m->has_sbuf = true;
    nx_budget budget;
    nx_sampler *s = NULL;
    if (nx_budget_init(&budget, err) < 0 || !(s = nx_sampler_new(start, end, width, err))) {
        nx_profile_table_close(t);
        return -1;
    }
    nx_sampler_set_budget(s, &budget);
    rc = sample(t, m, start, end, s, err);
    size_t n = 0;
    const nx_sample *kept = rc == 0 ? nx_sampler_result(s, &n, err) : NULL;
    if (n == SIZE_MAX)
        rc = -1;
    if (rc == 0 && n && !(m->rects = calloc(n, sizeof *m->rects))) {
        nx_error_set(err, "SbufAllocation: out of memory for %zu rectangles", n);
        rc = -1;
    }
    m->kept = rc == 0 ? n : 0;
    if (rc == 0 && n)
        rc = read_kept(t, m, start, end, kept, n, err);
    nx_sampler_free(s);
    nx_profile_table_close(t);
    if (rc == 0)
        merge(m);
    return rc;
}

int nx_memory_read(const char *profile_dir, int64_t start, int64_t end, uint32_t width, nx_memory *out,
                   nx_error *err)
{
    memset(out, 0, sizeof *out);
    out->partitions = NX_SBUF_PARTITIONS;
    int rc = read_sbuf(profile_dir, out, start, end, width, err);
    if (rc == 0)
        rc = nx_memory_read_hbm(profile_dir, out, err);
    if (rc != 0)
        nx_memory_free(out);
    return rc;
}

void nx_memory_free(nx_memory *m)
{
    for (size_t i = 0; i < m->n_rects; i++)
        rect_free(&m->rects[i]);
    free(m->rects);
    for (size_t i = 0; i < m->n_hbm; i++)
        free(m->hbm[i].usage_type);
    free(m->hbm);
    memset(m, 0, sizeof *m);
}
