/*
 * export.c — a timeline table's window as CSV rows (see export.h): the layout of
 * the columns, the first pass (sampling or counting), and the row pass, whose
 * formatting is split over two threads for large unsampled batches; the sampled
 * first pass is sampled_pass.h's (two threads, one per half of the buckets).
 */
#include "query/export.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/profile_table.h"
#include "query/sampled_pass.h"
#include "query/window.h"
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
    nx_csv half;                     /* the second half of a batch, formatted on a thread */
    bool half_open;
};

/* ------------------------------------------------------------ rows -- */

static void write_row(nx_csv *c, const nx_export *x, const nx_window_batch *b, size_t k)
{
    size_t tlen;
    const char *tname = nx_window_track_name(x->w, b->track[k], &tlen);
    nx_csv_text(c, tname, tlen);
    nx_csv_row_cells(c, x->cells, x->schema->n_fields, b->rows[k]);
    nx_csv_end_row(c);
}

typedef struct format_job {
    nx_csv *c;
    const nx_export *x;
    const nx_window_batch *b;
    size_t from, to;
} format_job;

static void *format_rows(void *arg)
{
    const format_job *j = arg;
    for (size_t k = j->from; k < j->to; k++)
        write_row(j->c, j->x, j->b, k);
    return NULL;
}

/* Below this many rows a batch is formatted on one thread (starting a thread
 * costs more than formatting a few rows). */
enum { PARALLEL_MIN_ROWS = 4096 };

/* Writes the first n window rows of batch b in order. Formatting is about half
 * of an unsampled export's time, so the second half of the rows goes to a memory
 * writer on another thread and is appended after the first: the bytes are those
 * of a serial run. Only reads are shared (the batch, the layout, track names). */
static void write_rows(nx_export *x, nx_csv *csv, const nx_window_batch *b, size_t n)
{
    pthread_t th;
    format_job job = {&x->half, x, b, n / 2, n};
    if (x->half_open && n >= PARALLEL_MIN_ROWS && pthread_create(&th, NULL, format_rows, &job) == 0) {
        for (size_t k = 0; k < n / 2; k++)
            write_row(csv, x, b, k);
        pthread_join(th, NULL);
        nx_csv_append(csv, &x->half);
        return;
    }
    for (size_t k = 0; k < n; k++)
        write_row(csv, x, b, k);
}

/* ------------------------------------------------------------ passes -- */

/* ------------------------------------------------------------ first pass -- */

/* Sampling (width > 0: sampled_pass.h) or, with count_first, counting up to
 * max_rows + 1 over the timing columns. */
static int first_pass(nx_export *x, const char *dir, const char *table, nxpq_error *err)
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

static int layout(nx_export *x, const char *table, nxpq_error *err)
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
                   nxpq_error *err)
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
        nx_window_options wo = {.start = o->start, .end = o->end, .columns = x->proj, .n_columns = x->n_proj};
        if (!(x->w = nx_window_open(x->t, &wo, err))) {
            nx_export_close(x);
            return -1;
        }
    }
    /* Unsampled batches are formatted on two threads; without the memory writer
     * (out of memory) on one. */
    if (!o->width && nx_csv_init_memory(&x->half) == 0)
        x->half_open = true;
    *out = x;
    return 0;
}

void nx_export_header(const nx_export *x, nx_csv *csv)
{
    nx_csv_plain(csv, "timeline_track", 14);
    for (size_t i = 0; i < x->schema->n_fields; i++)
        nx_csv_plain(csv, x->schema->fields[i].name, strlen(x->schema->fields[i].name));
    nx_csv_end_row(csv);
}

int nx_export_next(nx_export *x, nx_csv *csv, nxpq_error *err)
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
    if (!o->width) {
        size_t take = b.n_rows;
        if (take > o->max_rows - x->written) {   /* a row beyond the limit exists */
            take = (size_t)(o->max_rows - x->written);
            x->truncated = true;
        }
        write_rows(x, csv, &b, take);
        x->written += take;
        return x->truncated ? 0 : 1;
    }
    int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
    for (size_t k = 0; k < b.n_rows && x->next < x->n_samples; k++) {
        int64_t ord = base + b.rows[k];
        while (x->next < x->n_samples && x->samples[x->next].ordinal < ord)
            x->next++;   /* cannot happen with an unchanged file; kept for safety */
        if (x->next == x->n_samples || x->samples[x->next].ordinal != ord)
            continue;
        x->next++;
        if (x->written == o->max_rows) {
            x->truncated = true;
            return 0;
        }
        write_row(csv, x, &b, k);
        x->written++;
    }
    return 1;
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
    if (x->half_open)
        nx_csv_finish(&x->half);
    nx_window_close(x->w);
    nx_sampled_free(&x->sampled);
    nx_profile_table_close(x->t);
    free(x->proj);
    free(x->batch_col);
    free(x->cells);
    free(x);
}
