/*
 * csv_rows.c — the CSV row writer (row_writer.h): a header row, then each row
 * as csv.h formats it, the bytes of docs/query.md.
 *
 * Speed of an unsampled export (bench/query, docs/benchmarks.md "query"); none
 * of this changes a byte of the output:
 *   - a dictionary's cell texts (csv.h nx_csv_dict_text: quoting, guard,
 *     decimal digits) are built once per dictionary when it has at most half as
 *     many entries as the batch has rows, then copied per row; the track names
 *     likewise; other columns are formatted per row;
 *   - a batch's rows are formatted on two threads in chunks of 256 rows, taken
 *     by whichever thread is free, into a ring of 8 memory writers; the calling
 *     thread writes the chunks in row order (write_rows).
 * Sampled batches (a few picked rows) are formatted row by row.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "query/engine/csv.h"
#include "query/engine/row_writer.h"

typedef struct csv_rows {
    nx_row_writer base;
    nx_csv out;
    const char *table;
    const nx_schema_table *schema;
    const nx_window *w;              /* the current batch's (track names) */
    const nxpq_column_data *const *cells; /* per schema field: its column in the current batch */
    nx_csv *chunks;                  /* the CHUNK_RING writers of a parallel batch */
    size_t chunks_cap;               /* of them initialised */
    size_t *builds;                  /* fields whose dictionary texts a batch builds */
    atomic_bool *built;              /* per build: done */
    const nx_csv_dict_text **text_of1, **text_of2; /* per thread: texts a chunk uses */
    nx_csv_dict_text lead;           /* the track names' cell texts */
    size_t lead_n;                   /* tracks in lead (0: not built) */
    const nx_window *lead_w;         /* the window lead was built for */
    nxpq_str *lead_strs;
    nx_csv_dict_text *texts;         /* per schema field: cell texts of its current dictionary */
    const nx_csv_dict_text **text_of; /* per schema field: &texts[f] when current, else NULL */
} csv_rows;


static void write_row(nx_csv *c, const csv_rows *x, const nx_csv_dict_text *const *text_of,
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
static size_t plan_texts(csv_rows *x, size_t rows)
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
static void build_texts(csv_rows *x, size_t f, bool guard)
{
    if (nx_csv_dict_text_build(&x->texts[f], x->cells[f], guard) < 0)
        x->text_of[f] = NULL;
}

/* plan_texts for a parallel batch: the fields to build get no texts until
 * their build is done (batch_job.built), so chunks formatted meanwhile write
 * those columns per row (same bytes) instead of waiting. */
static void defer_builds(csv_rows *x, size_t n_builds)
{
    for (size_t t = 0; t < n_builds; t++)
        x->text_of[x->builds[t]] = NULL;
}

/* Readies x->lead for every track the window has named so far (tracks are
 * few; a batch may add some). 0, or -1: rows are then written one by one. */
static int plan_lead(csv_rows *x, bool guard)
{
    size_t n = nx_window_track_count(x->w);
    if (n == x->lead_n && x->lead.id && x->lead.w.guard == guard && x->lead_w == x->w)
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
    x->lead_w = x->w;
    return 0;
}

/* Rows from .. to-1 of the batch into c: the many-rows path when the track
 * texts are ready, else row by row (same bytes). */
static void format_rows(const csv_rows *x, const nx_csv_dict_text *const *text_of, nx_csv *c,
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
    csv_rows *x;
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
    csv_rows *x = j->x;
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
static int ensure_chunks(csv_rows *x, bool guard)
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
static void write_rows(csv_rows *x, nx_csv *csv, const nx_window_batch *b, size_t n)
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


/* ------------------------------------------------------------ the writer -- */

static void free_texts(csv_rows *x)
{
    for (size_t f = 0; x->texts && f < x->schema->n_fields; f++)
        nx_csv_dict_text_free(&x->texts[f]);
    free(x->texts);
    free(x->text_of);
    free(x->builds);
    free(x->built);
    free(x->text_of1);
    free(x->text_of2);
    x->texts = NULL;
    x->text_of = x->text_of1 = x->text_of2 = NULL;
    x->builds = NULL;
    x->built = NULL;
}

static int begin_table(nx_row_writer *base, const nx_row_table *t, nx_error *err)
{
    csv_rows *x = (csv_rows *)base;
    free_texts(x);
    x->table = t->table;
    x->schema = t->schema;
    x->lead_n = 0;
    size_t n = t->schema->n_fields + 1;
    if (!(x->texts = calloc(n, sizeof *x->texts)) || !(x->text_of = calloc(n, sizeof *x->text_of)) ||
        !(x->builds = calloc(n, sizeof *x->builds)) || !(x->built = calloc(n, sizeof *x->built)) ||
        !(x->text_of1 = calloc(n, sizeof *x->text_of1)) || !(x->text_of2 = calloc(n, sizeof *x->text_of2))) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", t->table);
        return -1;
    }
    nx_csv_plain(&x->out, "timeline_track", 14);
    for (size_t i = 0; i < t->schema->n_fields; i++)
        nx_csv_plain(&x->out, t->schema->fields[i].name, strlen(t->schema->fields[i].name));
    nx_csv_end_row(&x->out);
    return 0;
}

static int rows(nx_row_writer *base, const nx_row_batch *rb, nx_error *err)
{
    (void)err;
    csv_rows *x = (csv_rows *)base;
    x->w = rb->w;
    x->cells = rb->cells;
    if (!rb->pick) {
        write_rows(x, &x->out, rb->b, rb->n);
        return 0;
    }
    for (size_t j = 0; j < rb->n; j++)
        write_row(&x->out, x, NULL, rb->b, rb->pick[j]);
    return 0;
}

static int end_table(nx_row_writer *base, nx_error *err)
{
    (void)base;
    (void)err;
    return 0;
}

static int flush(nx_row_writer *base, nx_error *err)
{
    csv_rows *x = (csv_rows *)base;
    if (nx_csv_flush(&x->out) == 0)
        return 0;
    snprintf(err->msg, sizeof err->msg, "%s: error writing the CSV", x->table ? x->table : "export");
    return -1;
}

static int finish(nx_row_writer *base, nx_error *err)
{
    return flush(base, err);
}

static void csv_free(nx_row_writer *base)
{
    csv_rows *x = (csv_rows *)base;
    if (!x)
        return;
    for (size_t k = 0; k < x->chunks_cap; k++)
        nx_csv_finish(&x->chunks[k]);
    free(x->chunks);
    nx_csv_dict_text_free(&x->lead);
    free(x->lead_strs);
    free_texts(x);
    nx_csv_finish(&x->out);
    free(x);
}

static const nx_row_writer_ops OPS = {begin_table, rows, end_table, flush, finish, csv_free};

static nx_row_writer *csv_rows_open(const nx_row_target *t, nx_error *err)
{
    csv_rows *x = calloc(1, sizeof *x);
    if (!x || nx_csv_init(&x->out, t->f) < 0) {
        free(x);
        snprintf(err->msg, sizeof err->msg, "CSV export: out of memory");
        return NULL;
    }
    x->base.ops = &OPS;
    return &x->base;
}

const nx_row_format nx_format_csv = {"csv", ".csv", true, csv_rows_open};
