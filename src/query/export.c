/*
 * export.c — a timeline table's window as CSV rows (see export.h): the layout of
 * the columns, the first pass (sampling or counting), and the row pass; the
 * sampled first pass is sampled_pass.h's (two threads, one per half of the
 * buckets).
 *
 * Speed of an unsampled export (bench/query, docs/benchmarks.md "query"); none
 * of this changes a byte of the output:
 *   - the row pass reads the table with two decoding threads (columns split
 *     between them, parquet.h nxpq_scan_options.threads) and in dictionary form
 *     (string and integer columns as dictionary indices, not per-row copies);
 *   - a dictionary's cell texts (csv.h nx_csv_dict_text: quoting, guard,
 *     decimal digits) are built once per dictionary when it has at most half as
 *     many entries as the batch has rows, then copied per row; the track names
 *     likewise; other columns are formatted per row;
 *   - a batch's rows are formatted on two threads in chunks of 256 rows, taken
 *     by whichever thread is free, into a ring of 8 memory writers; the calling
 *     thread writes the chunks in row order (write_rows).
 */
#include "query/export.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
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
    nx_csv *chunks;                  /* unsampled: the CHUNK_RING writers of a parallel batch */
    size_t chunks_cap;               /* of them initialised */
    size_t *builds;                  /* fields whose dictionary texts a batch builds */
    atomic_bool *built;              /* per build: done */
    const nx_csv_dict_text **text_of1, **text_of2; /* per thread: texts a chunk uses */
    nx_csv_dict_text lead;           /* unsampled: the track names' cell texts */
    size_t lead_n;                   /* tracks in lead (0: not built) */
    nxpq_str *lead_strs;
    nx_csv_dict_text *texts;         /* per schema field: cell texts of its current dictionary */
    const nx_csv_dict_text **text_of; /* per schema field: &texts[f] when current, else NULL */
};

/* ------------------------------------------------------------ rows -- */

static void write_row(nx_csv *c, const nx_export *x, const nx_csv_dict_text *const *text_of,
                      const nx_window_batch *b, size_t k)
{
    size_t tlen;
    const char *tname = nx_window_track_name(x->w, b->track[k], &tlen);
    nx_csv_text(c, tname, tlen);
    nx_csv_row_cells_text(c, x->cells, text_of, x->schema->n_fields, b->rows[k]);
    nx_csv_end_row(c);
}

/* Readies the cell texts of the batch's dictionary-form columns (csv.h): a
 * dictionary's texts are built when it is first met and reused while it lasts
 * (its row group), for a dictionary of at most half as many entries as the
 * batch has rows, so each text is used twice or more on average (a row group's
 * dictionary can hold a value per row; formatting the entry in the row, from
 * the dictionary value, then costs the same and skips a copy). Lists in
 * x->builds the fields whose texts must be (re)built and points text_of at the
 * texts that will be current; a column without texts is formatted per row from
 * its dictionary: same bytes. */
static size_t plan_texts(nx_export *x, size_t rows)
{
    size_t n = 0;
    for (size_t f = 0; f < x->schema->n_fields; f++) {
        const nxpq_column_data *col = x->cells[f];
        x->text_of[f] = NULL;
        if (!col || !col->dict_index)
            continue;
        if (x->texts[f].id != col->dict_id) {
            if (col->dict_n > rows / 2)
                continue;
            x->builds[n++] = f;
        }
        x->text_of[f] = &x->texts[f];
    }
    return n;
}

/* Builds the texts of field f; on failure the column is formatted per row. */
static void build_texts(nx_export *x, size_t f, bool guard)
{
    if (nx_csv_dict_text_build(&x->texts[f], x->cells[f], guard) < 0)
        x->text_of[f] = NULL;
}

/* plan_texts for a parallel batch: the fields to build get no texts until
 * their build is done (batch_job.built), so chunks formatted meanwhile write
 * those columns per row (same bytes) instead of waiting. */
static void defer_builds(nx_export *x, size_t n_builds)
{
    for (size_t t = 0; t < n_builds; t++)
        x->text_of[x->builds[t]] = NULL;
}

/* Readies x->lead for every track the window has named so far (tracks are
 * few; a batch may add some). 0, or -1: rows are then written one by one. */
static int plan_lead(nx_export *x, bool guard)
{
    size_t n = nx_window_track_count(x->w);
    if (n == x->lead_n && x->lead.id && x->lead.w.guard == guard)
        return 0;
    nxpq_str *g = realloc(x->lead_strs, (n + 1) * sizeof *g);
    if (!g)
        return -1;
    x->lead_strs = g;
    for (size_t t = 0; t < n; t++)
        g[t].ptr = nx_window_track_name(x->w, (uint32_t)t, &g[t].len);
    x->lead_n = 0;
    if (nx_csv_dict_text_build_strings(&x->lead, g, n, guard) < 0)
        return -1;
    x->lead_n = n;
    return 0;
}

/* Rows from .. to-1 of the batch into c: the many-rows path when the track
 * texts are ready, else row by row (same bytes). */
static void format_rows(const nx_export *x, const nx_csv_dict_text *const *text_of, nx_csv *c,
                        const nx_window_batch *b, size_t from, size_t to)
{
    if (x->lead_n) {
        nx_csv_rows_text(c, &x->lead, b->track + from, x->cells, text_of, x->schema->n_fields, b->rows + from,
                         to - from);
        return;
    }
    for (size_t r = from; r < to; r++)
        write_row(c, x, text_of, b, r);
}

/* Rows per chunk of a parallel batch, and chunk writers in use at once: chunk
 * k is formatted into writer k % CHUNK_RING, which is free once chunk
 * k - CHUNK_RING has been written. A small ring keeps the text being formatted
 * and then written in cache (a writer per chunk of a whole batch, ~24 MB, made
 * every store miss). */
enum { CHUNK_ROWS = 256, CHUNK_RING = 8 };

/* One parallel batch (write_rows): tasks 0 .. n_builds-1 build dictionary texts,
 * the rest format chunks of CHUNK_ROWS rows. Both threads take the next task
 * from `next`; a chunk uses the texts whose builds are done when it starts
 * (built[t], set after build t; x->text_of is not written meanwhile) and
 * formats the other columns per row. Only the calling thread writes, chunks in
 * order; `lock` guards ready[] (chunk formatted) and `written` (chunks written),
 * `cv` signals a change of either. */
typedef struct batch_job {
    nx_export *x;
    const nx_window_batch *b;
    nx_csv *csv;
    size_t n, n_builds, n_chunks;
    bool guard;
    atomic_size_t next;
    atomic_bool *built;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool ready[CHUNK_RING];   /* by writer: its chunk is formatted, not yet written */
    size_t written;
} batch_job;

/* Calling thread: writes formatted chunks in order until `until` chunks are
 * written (waiting for the helper's) or, with until == 0, while they are ready. */
static void write_chunks(batch_job *j, size_t until)
{
    pthread_mutex_lock(&j->lock);
    for (;;) {
        size_t w = j->written;
        if (w == j->n_chunks || (until ? w >= until : !j->ready[w % CHUNK_RING]))
            break;
        if (!j->ready[w % CHUNK_RING]) {
            pthread_cond_wait(&j->cv, &j->lock);
            continue;
        }
        pthread_mutex_unlock(&j->lock);
        nx_csv_append(j->csv, &j->x->chunks[w % CHUNK_RING]); /* no one else touches this writer now */
        pthread_mutex_lock(&j->lock);
        j->ready[w % CHUNK_RING] = false;
        j->written = w + 1;
        pthread_cond_broadcast(&j->cv);
    }
    pthread_mutex_unlock(&j->lock);
}

/* Runs tasks until none is left; main says whether this is the calling thread. */
static void run_tasks(batch_job *j, const nx_csv_dict_text **text_of, bool main)
{
    nx_export *x = j->x;
    size_t nf = x->schema->n_fields;
    for (;;) {
        size_t t = atomic_fetch_add(&j->next, 1);
        if (t < j->n_builds) {
            size_t f = x->builds[t];
            if (nx_csv_dict_text_build(&x->texts[f], x->cells[f], j->guard) == 0)
                atomic_store(&j->built[t], true);
            continue;
        }
        size_t k = t - j->n_builds;
        if (k >= j->n_chunks)
            return;
        /* Writer k % CHUNK_RING is free once chunk k - CHUNK_RING is written. */
        if (main) {
            if (k >= CHUNK_RING)
                write_chunks(j, k - CHUNK_RING + 1);
        } else {
            pthread_mutex_lock(&j->lock);
            while (j->written + CHUNK_RING <= k)
                pthread_cond_wait(&j->cv, &j->lock);
            pthread_mutex_unlock(&j->lock);
        }
        memcpy(text_of, x->text_of, nf * sizeof *text_of);
        for (size_t b = 0; b < j->n_builds; b++)
            if (atomic_load(&j->built[b]))
                text_of[x->builds[b]] = &x->texts[x->builds[b]];
        size_t from = k * CHUNK_ROWS, to = from + CHUNK_ROWS < j->n ? from + CHUNK_ROWS : j->n;
        format_rows(x, text_of, &x->chunks[k % CHUNK_RING], j->b, from, to);
        pthread_mutex_lock(&j->lock);
        j->ready[k % CHUNK_RING] = true;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->lock);
        if (main)
            write_chunks(j, 0);
    }
}

static void *helper_tasks(void *arg)
{
    batch_job *j = arg;
    run_tasks(j, j->x->text_of2, false);
    return NULL;
}

/* The ring's chunk writers (memory mode, kept for the export). 0 or -1. */
static int ensure_chunks(nx_export *x, bool guard)
{
    if (!x->chunks && !(x->chunks = calloc(CHUNK_RING, sizeof *x->chunks)))
        return -1;
    for (; x->chunks_cap < CHUNK_RING; x->chunks_cap++) {
        if (nx_csv_init_memory(&x->chunks[x->chunks_cap]) < 0) {
            nx_csv_finish(&x->chunks[x->chunks_cap]);
            return -1;
        }
    }
    for (size_t k = 0; k < CHUNK_RING; k++)
        x->chunks[k].guard = guard;
    return 0;
}

/* Below this many rows a batch is formatted on one thread (starting a thread
 * costs more than formatting a few rows). */
enum { PARALLEL_MIN_ROWS = 4096 };

/* Writes the first n window rows of batch b in order (unsampled export).
 * Formatting is most of an export's time, so large batches are formatted on
 * two threads: chunks of rows go to memory writers, taken in turn by whichever
 * thread is free, and the calling thread appends them to csv in row order as
 * they are done: the bytes are those of a serial run. Only reads are shared
 * (the batch, the layout, track names, the dictionary texts once built). */
static void write_rows(nx_export *x, nx_csv *csv, const nx_window_batch *b, size_t n)
{
    size_t n_builds = plan_texts(x, n);
    if (plan_lead(x, csv->guard) < 0)
        x->lead_n = 0;
    size_t n_chunks = (n + CHUNK_ROWS - 1) / CHUNK_ROWS;
    pthread_t th;
    if (n >= PARALLEL_MIN_ROWS && ensure_chunks(x, csv->guard) == 0) {
        batch_job j = {.x = x, .b = b, .csv = csv, .n = n, .n_builds = n_builds, .n_chunks = n_chunks,
                       .guard = csv->guard, .built = x->built};
        atomic_init(&j.next, 0);
        for (size_t t = 0; t < n_builds; t++)
            atomic_init(&j.built[t], false);
        if (pthread_mutex_init(&j.lock, NULL) == 0) {
            if (pthread_cond_init(&j.cv, NULL) == 0) {
                defer_builds(x, n_builds);
                bool helper = pthread_create(&th, NULL, helper_tasks, &j) == 0;
                run_tasks(&j, x->text_of1, true);
                write_chunks(&j, n_chunks);
                if (helper)
                    pthread_join(th, NULL);
                pthread_cond_destroy(&j.cv);
                pthread_mutex_destroy(&j.lock);
                return;
            }
            pthread_mutex_destroy(&j.lock);
        }
    }
    for (size_t i = 0; i < n_builds; i++)
        build_texts(x, x->builds[i], csv->guard);
    format_rows(x, x->text_of, csv, b, 0, n);
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
        !(x->batch_col = calloc(n + 1, sizeof *x->batch_col)) || !(x->cells = calloc(n + 1, sizeof *x->cells)) ||
        !(x->texts = calloc(n + 1, sizeof *x->texts)) || !(x->text_of = calloc(n + 1, sizeof *x->text_of)) ||
        !(x->builds = calloc(n + 1, sizeof *x->builds)) || !(x->built = calloc(n + 1, sizeof *x->built)) ||
        !(x->text_of1 = calloc(n + 1, sizeof *x->text_of1)) || !(x->text_of2 = calloc(n + 1, sizeof *x->text_of2))) {
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
        write_row(csv, x, x->text_of, &b, k);
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
    for (size_t k = 0; k < x->chunks_cap; k++)
        nx_csv_finish(&x->chunks[k]);
    free(x->chunks);
    free(x->builds);
    free(x->built);
    free(x->text_of1);
    free(x->text_of2);
    nx_csv_dict_text_free(&x->lead);
    free(x->lead_strs);
    nx_window_close(x->w);
    nx_sampled_free(&x->sampled);
    nx_profile_table_close(x->t);
    free(x->proj);
    free(x->batch_col);
    free(x->cells);
    for (size_t f = 0; x->texts && f < x->schema->n_fields; f++)
        nx_csv_dict_text_free(&x->texts[f]);
    free(x->texts);
    free(x->text_of);
    free(x);
}
