/*
 * json_rows.c — the JSON-rows row writer (row_writer.h): one table as one JSON
 * array of row objects, a row per line:
 *     [
 *     {"track":"qSyncIO","id":1,...},
 *     ...
 *     ]
 * Members: "track" (the CSV's first column, the viewer's track; named apart
 * from Instruction's own timeline_track field so no key repeats), then every
 * schema field in schema order, each a JSON value by json_cell.h's rule; a
 * field the files lack is null. Rows are
 * formatted into a buffer and written to the FILE when it passes 1 MiB, so
 * memory stays one batch's text at most.
 */
#include <stdlib.h>
#include <string.h>

#include "query/engine/json_cell.h"
#include "query/engine/row_writer.h"
#include "util/json.h"
#include "util/strbuf.h"

enum { FLUSH_AT = 1 << 20 };

typedef struct json_rows {
    nx_row_writer base;
    FILE *f;
    nx_strbuf buf;
    const nx_schema_table *schema;
    const char *table;
    size_t rows;
} json_rows;

static int flush(nx_row_writer *base, nx_error *err)
{
    json_rows *x = (json_rows *)base;
    bool ok = !nx_strbuf_failed(&x->buf) && fwrite(x->buf.data, 1, x->buf.len, x->f) == x->buf.len;
    x->buf.len = 0;
    if (ok)
        return 0;
    snprintf(err->msg, sizeof err->msg, "%s: error writing the JSON rows", x->table ? x->table : "export");
    return -1;
}

static int begin_table(nx_row_writer *base, const nx_row_table *t, nx_error *err)
{
    (void)err;
    json_rows *x = (json_rows *)base;
    x->schema = t->schema;
    x->table = t->table;
    x->rows = 0;
    nx_strbuf_puts(&x->buf, "[");
    return 0;
}

static void write_row(json_rows *x, const nx_row_batch *rb, size_t k)
{
    const nx_window_batch *b = rb->b;
    size_t tlen;
    const char *track = nx_window_track_name(rb->w, b->track[k], &tlen);
    nx_strbuf_puts(&x->buf, x->rows++ ? ",\n{\"track\":" : "\n{\"track\":");
    nx_json_put_string(&x->buf, track, tlen);
    for (size_t f = 0; f < x->schema->n_fields; f++) {
        nx_strbuf_putc(&x->buf, ',');
        nx_json_put_cstr(&x->buf, x->schema->fields[f].name);
        nx_strbuf_putc(&x->buf, ':');
        if (rb->cells[f])
            nx_json_cell(&x->buf, rb->cells[f], b->rows[k]);
        else
            nx_strbuf_puts(&x->buf, "null");
    }
    nx_strbuf_putc(&x->buf, '}');
}

static int rows(nx_row_writer *base, const nx_row_batch *rb, nx_error *err)
{
    json_rows *x = (json_rows *)base;
    for (size_t j = 0; j < rb->n; j++) {
        write_row(x, rb, nx_row_batch_k(rb, j));
        if (x->buf.len >= FLUSH_AT && flush(base, err) < 0)
            return -1;
    }
    return 0;
}

static int end_table(nx_row_writer *base, nx_error *err)
{
    (void)err;
    json_rows *x = (json_rows *)base;
    nx_strbuf_puts(&x->buf, x->rows ? "\n]\n" : "]\n");
    return 0;
}

static int finish(nx_row_writer *base, nx_error *err)
{
    return flush(base, err);
}

static void json_free(nx_row_writer *base)
{
    json_rows *x = (json_rows *)base;
    if (!x)
        return;
    nx_strbuf_free(&x->buf);
    free(x);
}

static const nx_row_writer_ops OPS = {begin_table, rows, end_table, flush, finish, json_free};

static nx_row_writer *json_rows_open(const nx_row_target *t, nx_error *err)
{
    json_rows *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err->msg, sizeof err->msg, "JSON export: out of memory");
        return NULL;
    }
    x->base.ops = &OPS;
    x->f = t->f;
    return &x->base;
}

const nx_row_format nx_format_json = {"json", ".json", true, json_rows_open};
