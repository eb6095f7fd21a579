/*
 * export.c — a timeline table's window as rows for a row writer (see export.h):
 * the layout of the columns, the first pass (sampling or counting), and the row
 * pass; the sampled first pass is sampled_pass.h's (two threads, one per half
 * of the buckets). The unsampled row pass reads the table with two decoding
 * threads (columns split between them, parquet.h nxpq_scan_options.threads)
 * and in dictionary form (string and integer columns as dictionary indices, not
 * per-row copies); the writer formats them (csv_rows.c: its own speed notes).
 */
#include "query/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/engine/sampled_pass.h"
#include "query/engine/window.h"
#include "schema/schema.h"

struct nx_export {
    nx_export_options o;
    nx_profile_table *t;
    const nx_schema_table *schema;
    const char **proj;               /* projected (present, decodable) field names */
    size_t n_proj;
    int *batch_col;                  /* per schema field: batch column index, or -1 (empty) */
    const nxpq_column_data **cells;  /* per schema field: its column in the current batch */
    nx_sampled sampled;              /* sampled: the first pass's result */
    const nx_sample *samples;        /* sampled: the kept events, by ordinal */
    size_t n_samples, next;
    nx_window *w;                    /* the row pass; NULL when it has nothing to read */
    int64_t planned;                 /* rows to write, or -1 while unknown */
    bool truncated;
    uint64_t written;
    nxpq_scan_stats pass0;
    uint32_t *pick;                  /* sampled: the kept rows of the current batch */
    size_t pick_cap;
};

/* ------------------------------------------------------------ first pass -- */

/* Sampling (width > 0: sampled_pass.h) or, with count_first, counting up to
 * max_rows + 1 over the timing columns. */
static int first_pass(nx_export *x, const char *dir, const char *table, nx_error *err)
{
    const nx_export_options *o = &x->o;
    uint64_t rows = 0;
    if (o->width) {
        int rc = nx_sampled_pass(dir, table, o->start, o->end, o->width, &x->sampled, err);
        if (rc != 0)
            return -1;
        x->samples = x->sampled.samples;
        x->n_samples = x->sampled.n;
        x->pass0 = x->sampled.stats;
        rows = x->n_samples;
    } else if (o->count_first) {
        nx_window_options wo = {.start = o->start, .end = o->end};
        nx_window *w = nx_window_open(x->t, &wo, err);
        if (!w)
            return -1;
        nx_window_batch b;
        int rc;
        while ((rc = nx_window_next(w, &b, err)) > 0)
            if ((rows += b.n_rows) > o->max_rows)
                break;
        nx_window_stats(w, &x->pass0);
        nx_window_close(w);
        if (rc < 0)
            return -1;
    } else {
        return 0;
    }
    x->truncated = rows > o->max_rows;
    x->planned = (int64_t)(x->truncated ? o->max_rows : rows);
    return 0;
}

static int layout(nx_export *x, const char *table, nx_error *err)
{
    x->schema = nx_schema_table_find(table);
    size_t n = x->schema ? x->schema->n_fields : 0;
    if (!x->schema || !(x->proj = calloc(n + 1, sizeof *x->proj)) ||
        !(x->batch_col = calloc(n + 1, sizeof *x->batch_col)) || !(x->cells = calloc(n + 1, sizeof *x->cells))) {
        snprintf(err->msg, sizeof err->msg, "%s: %s", table, x->schema ? "out of memory" : "not in the schema catalogue");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = x->schema->fields[i].name;
        int c = nx_profile_table_find_column(x->t, name);
        if (c < 0 || nx_profile_table_column(x->t, (size_t)c)->type == NXPQ_UNSUPPORTED) {
            x->batch_col[i] = -1;
            continue;
        }
        x->batch_col[i] = (int)x->n_proj;
        x->proj[x->n_proj++] = name;
    }
    return 0;
}

int nx_export_open(const char *profile_dir, const char *table, const nx_export_options *o, nx_export **out,
                   nx_error *err)
{
    *out = NULL;
    nx_export *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
        return -1;
    }
    x->o = *o;
    x->planned = -1;
    int rc = nx_profile_table_open(profile_dir, table, &x->t, err);
    if (rc != 0) {
        nx_export_close(x);
        return rc;
    }
    if (layout(x, table, err) != 0 || first_pass(x, profile_dir, table, err) != 0) {
        nx_export_close(x);
        return -1;
    }
    if (!o->width || x->n_samples > 0) {
        /* Unsampled: the batch's columns are decoded on two threads, like its rows
         * are formatted (a sampled row pass decodes whole batches for few rows). */
        nx_window_options wo = {.start = o->start,
                                .end = o->end,
                                .columns = x->proj,
                                .n_columns = x->n_proj,
                                .threads = o->width ? 1 : 2,
                                .dictionary = true};
        if (!(x->w = nx_window_open(x->t, &wo, err))) {
            nx_export_close(x);
            return -1;
        }
    }
    *out = x;
    return 0;
}

int nx_export_begin(const nx_export *x, nx_row_writer *w, nx_error *err)
{
    nx_row_table t = {.table = x->schema->name, .schema = x->schema, .timeline = nx_timeline_find(x->schema->name)};
    return w->ops->begin_table(w, &t, err);
}

/* The sampled rows of batch b into x->pick (window row indices). -1 when out of
 * memory; else how many; *over set when one is past max_rows. */
static int64_t pick_samples(nx_export *x, const nx_window_batch *b, bool *over)
{
    if (b->n_rows > x->pick_cap) {
        uint32_t *g = realloc(x->pick, b->n_rows * sizeof *g);
        if (!g)
            return -1;
        x->pick = g;
        x->pick_cap = b->n_rows;
    }
    size_t n = 0;
    int64_t base = nx_row_ordinal(b->file, b->batch->first_row);
    for (size_t k = 0; k < b->n_rows && x->next < x->n_samples; k++) {
        int64_t ord = base + b->rows[k];
        while (x->next < x->n_samples && x->samples[x->next].ordinal < ord)
            x->next++;   /* cannot happen with an unchanged file; kept for safety */
        if (x->next == x->n_samples || x->samples[x->next].ordinal != ord)
            continue;
        x->next++;
        if (x->written + n == x->o.max_rows) {
            *over = true;
            break;
        }
        x->pick[n++] = (uint32_t)k;
    }
    return (int64_t)n;
}

int nx_export_next(nx_export *x, nx_row_writer *wr, nx_error *err)
{
    const nx_export_options *o = &x->o;
    if (!x->w || (o->width && x->next == x->n_samples) || (x->written == o->max_rows && x->planned >= 0))
        return 0;
    nx_window_batch b;
    int rc = nx_window_next(x->w, &b, err);
    if (rc <= 0)
        return rc;
    for (size_t f = 0; f < x->schema->n_fields; f++)
        x->cells[f] = x->batch_col[f] < 0 ? NULL : &b.batch->columns[x->batch_col[f]];
    nx_row_batch rb = {.b = &b, .w = x->w, .cells = x->cells};
    bool over = false;
    if (!o->width) {
        rb.n = b.n_rows;
        if (rb.n > o->max_rows - x->written) {   /* a row beyond the limit exists */
            rb.n = (size_t)(o->max_rows - x->written);
            over = true;
        }
    } else {
        int64_t n = pick_samples(x, &b, &over);
        if (n < 0) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", x->schema->name);
            return -1;
        }
        rb.pick = x->pick;
        rb.n = (size_t)n;
    }
    if (rb.n && wr->ops->rows(wr, &rb, err) < 0)
        return -1;
    x->written += rb.n;
    x->truncated |= over;
    return over ? 0 : 1;
}

int64_t nx_export_planned_rows(const nx_export *x)
{
    return x->planned;
}

bool nx_export_truncated(const nx_export *x)
{
    return x->truncated;
}

void nx_export_pages(const nx_export *x, int pass, nxpq_scan_stats *out)
{
    if (pass == 0)
        *out = x->pass0;
    else if (x->w)
        nx_window_stats(x->w, out);
    else
        memset(out, 0, sizeof *out);
}

void nx_export_close(nx_export *x)
{
    if (!x)
        return;
    free(x->pick);
    nx_window_close(x->w);
    nx_sampled_free(&x->sampled);
    nx_profile_table_close(x->t);
    free(x->proj);
    free(x->batch_col);
    free(x->cells);
    free(x);
}

int nx_export_all(nx_export *x, nx_row_writer *w, nx_error *err)
{
    int rc = nx_export_begin(x, w, err);
    if (rc == 0)
        while ((rc = nx_export_next(x, w, err)) > 0)
            ;
    return rc == 0 ? w->ops->end_table(w, err) : -1;
}

/* One table into w (begin, rows, end). 0, or -1 with err; an absent table is 0. */
static int export_one(const char *dir, const char *table, const nx_export_options *o, nx_row_writer *w,
                      nx_error *err)
{
    nx_export *x;
    int rc = nx_export_open(dir, table, o, &x, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    rc = nx_export_all(x, w, err);
    nx_export_close(x);
    return rc;
}

int nx_export_profile(const char *profile_dir, const nx_row_format *format, FILE *f, int64_t start, int64_t end,
                      const char *const *tables, size_t n, char *note, nx_error *err)
{
    note[0] = '\0';
    nx_row_target target = {.f = f, .profile_dir = profile_dir, .start = start, .end = end};
    nx_row_writer *w = format->open(&target, err);
    if (!w)
        return -1;
    nx_export_options o = {.start = start, .end = end, .max_rows = UINT64_MAX};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = export_one(profile_dir, tables[i], &o, w, err);
    if (rc == 0)
        rc = w->ops->finish(w, err);
    memcpy(note, w->note, NX_ROW_NOTE);
    w->ops->free(w);
    return rc;
}
