/* event.c — one row of a profile table by its ordinal (rules in event.h). */
#include "query/event.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/engine/window.h"
#include "util/text.h"

#define ORD_ROW_MASK ((INT64_C(1) << 40) - 1)

static void release(nx_event *ev)
{
    nxpq_scan_close(ev->scan);
    nxpq_reader_close(ev->reader);
    ev->scan = NULL;
    ev->reader = NULL;
    ev->batch = NULL;
}

void nx_event_free(nx_event *ev)
{
    release(ev);
    free(ev->col);
    free(ev->track);
    memset(ev, 0, sizeof *ev);
}

const nxpq_column_data *nx_event_field(const nx_event *ev, size_t f)
{
    return f < ev->schema->n_fields && ev->col[f] >= 0 ? &ev->batch->columns[ev->col[f]] : NULL;
}

/* Which schema fields a read takes: fields[0..n) and the start column, or all (fields NULL). */
typedef struct field_set {
    const char *const *fields;
    size_t n;
    const char *start_col;
} field_set;

static bool wanted(const field_set *fs, const char *name)
{
    if (!fs->fields || (fs->start_col && strcmp(name, fs->start_col) == 0))
        return true;
    for (size_t i = 0; i < fs->n; i++)
        if (strcmp(fs->fields[i], name) == 0)
            return true;
    return false;
}

/* Finds row `row` of the file at `path` (the wanted schema columns the file has),
 * reading only pages that admit hint for hint_col when hint is given. 0 (the
 * batch kept in ev), NX_EVENT_NONE, or -1 with err. */
static int find_row(nx_event *ev, const char *path, int64_t row, const field_set *fs, const char *hint_col,
                    const int64_t *hint, nx_error *err)
{
    const nx_schema_table *st = ev->schema;
    if (!(ev->reader = nxpq_reader_open(path, err)))
        return -1;
    size_t *proj = calloc(st->n_fields + 1, sizeof *proj);
    if (!proj) {
        release(ev);
        return nx_error_set(err, "%s: out of memory", st->name);
    }
    size_t np = 0;
    for (size_t i = 0; i < st->n_fields; i++) {
        int c = wanted(fs, st->fields[i].name) ? nxpq_reader_find_column(ev->reader, st->fields[i].name) : -1;
        ev->col[i] = -1;
        if (c >= 0 && nxpq_reader_column(ev->reader, (size_t)c)->type != NXPQ_UNSUPPORTED) {
            ev->col[i] = (int)np;
            proj[np++] = (size_t)c;
        }
    }
    nxpq_range range;
    nxpq_scan_options so = {.columns = proj, .n_columns = np, .batch_rows = 1, .rows_begin = row, .rows_end = row + 1};
    int hc = hint && hint_col ? nxpq_reader_find_column(ev->reader, hint_col) : -1;
    if (hc >= 0) {
        range = (nxpq_range){(size_t)hc, *hint, *hint};
        so.ranges = &range;
        so.n_ranges = 1;
    }
    int rc = NX_EVENT_NONE;
    if (row < nxpq_reader_num_rows(ev->reader) && np > 0) {
        ev->scan = nxpq_scan_open(ev->reader, &so, err);
        const nxpq_batch *b;
        int more = ev->scan ? 1 : -1;
        while (more > 0 && !ev->batch && (more = nxpq_scan_next(ev->scan, &b, err)) > 0) {
            if (b->first_row > row)
                break;
            if (row < b->first_row + (int64_t)b->n_rows) {
                ev->batch = b;
                ev->row = (size_t)(row - b->first_row);
            }
        }
        rc = ev->batch ? 0 : more < 0 ? -1 : NX_EVENT_NONE;
    }
    free(proj);
    if (rc != 0)
        release(ev);
    return rc;
}

/* The row's start (schema field `col`), when the row holds it as a non-null INT64. */
static bool row_start(const nx_event *ev, const char *col, int64_t *start)
{
    int f = nx_schema_field_index(ev->schema, col);
    const nxpq_column_data *c = f >= 0 ? nx_event_field(ev, (size_t)f) : NULL;
    if (!c || c->type != NXPQ_INT64 || (c->valid && !c->valid[ev->row]))
        return false;
    *start = c->values.i64[ev->row];
    return true;
}

/* The track of the row `ordinal` of timeline table t, which starts at `start`: a
 * one-instant window at its start holds it. A table whose track cannot be read
 * (its track columns missing) leaves has_track false; -1 only when out of memory. */
static int find_track(nx_event *ev, nx_profile_table *t, int64_t ordinal, int64_t start)
{
    nx_error werr = {0};
    nx_window_options wo = {.start = start, .end = start};
    nx_window *w = nx_window_open(t, &wo, &werr);
    nx_window_batch wb;
    const char *name = NULL;
    size_t len = 0;
    while (w && !name && nx_window_next(w, &wb, &werr) > 0) {
        int64_t base = nx_row_ordinal(wb.file, wb.batch->first_row);
        for (size_t k = 0; k < wb.n_rows && !name; k++)
            if (base + wb.rows[k] == ordinal)
                name = nx_window_track_name(w, wb.track[k], &len);
    }
    int rc = 0;
    if (name) {
        if ((ev->track = nx_text_dup(name, len))) {
            ev->track_len = len;
            ev->has_track = true;
        } else {
            rc = -1;
        }
    }
    nx_window_close(w);
    return rc;
}

int nx_event_read(const char *profile_dir, const char *table, int64_t ordinal, const int64_t *start_hint,
                  nx_event *out, nx_error *err)
{
    return nx_event_read_fields(profile_dir, table, ordinal, start_hint, NULL, 0, out, err);
}

int nx_event_read_fields(const char *profile_dir, const char *table, int64_t ordinal, const int64_t *start_hint,
                         const char *const *fields, size_t n_fields, nx_event *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    const nx_schema_table *st = nx_schema_table_find(table);
    if (!st || st->transient)
        return nx_error_set(err, "%s: not a table of the profile schema", table);
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, table, &t, err);
    if (rc != 0)
        return rc;
    out->schema = st;
    if (!(out->col = calloc(st->n_fields + 1, sizeof *out->col))) {
        nx_profile_table_close(t);
        return nx_error_set(err, "%s: out of memory", table);
    }
    size_t file = (size_t)(ordinal >> 40);
    const nx_timeline_info *ti = nx_timeline_find(table);
    const char *col = ti ? ti->start_column : NULL;
    field_set fs = {fields, n_fields, col};
    rc = NX_EVENT_NONE;
    if (ordinal >= 0 && file < nx_profile_table_file_count(t)) {
        const char *path = nx_profile_table_file_path(t, file);
        rc = find_row(out, path, ordinal & ORD_ROW_MASK, &fs, col, start_hint, err);
        if (rc == NX_EVENT_NONE && start_hint)
            rc = find_row(out, path, ordinal & ORD_ROW_MASK, &fs, col, NULL, err);
    }
    int64_t start;
    if (rc == 0 && ti && row_start(out, col, &start) && find_track(out, t, ordinal, start) < 0)
        rc = nx_error_set(err, "%s: out of memory", table);
    nx_profile_table_close(t);
    if (rc != 0)
        nx_event_free(out);
    return rc;
}
