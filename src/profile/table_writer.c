/*
 * table_writer.c — schema-driven table files over the Parquet writer: column specs
 * from the catalogue, per-file row limit with T.parquet -> T_0, T_1, ... rolling,
 * and the SchemaFields table, which is the catalogue itself written as rows.
 */
#include "profile/table_writer.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nxprof_version.h"

struct nx_table_writer {
    const nx_schema_table *schema;
    char *dir;
    uint64_t max_rows;
    nxpq_column_spec *cols;
    nxpq_kv kv[2];
    nxpq_writer_options opts;
    nxpq_writer *w;          /* current file; NULL once closed or failed */
    char *path;              /* current file's path */
    unsigned files;          /* files started, the current one included */
    uint64_t rows_in_file;
    uint64_t rows_total;
    bool failed;
    struct table_dict {              /* per column: a caller dictionary, given to every file */
        nxpq_str *strs;
        int64_t *ints;
        uint8_t *valid;
        size_t n;
        bool set;
    } *dicts;                        /* NULL until the first nx_table_set_dictionary() */
};

static int fail_codec(nx_table_writer *t, nx_error *err, const nx_error *codec);

/* Gives column col's dictionary to the current file. */
static int apply_dictionary(nx_table_writer *t, size_t col, nx_error *err)
{
    const struct table_dict *d = &t->dicts[col];
    int rc = d->strs ? nxpq_set_dictionary_strings(t->w, col, d->strs, d->n)
                     : nxpq_set_dictionary_int64(t->w, col, d->ints, d->valid, d->n);
    if (rc != 0) {
        /* the codec keeps the reason; closing reports it and removes the file */
        nx_error e;
        nxpq_writer *w = t->w;
        t->w = NULL;
        nxpq_writer_close(w, &e);
        return fail_codec(t, err, &e);
    }
    return 0;
}

/* Prefixes a codec error (which names the file) with the table it belongs to. */
static int fail_codec(nx_table_writer *t, nx_error *err, const nx_error *codec)
{
    t->failed = true;
    return nx_error_set(err, "table %s: %.400s", t->schema->name, codec->msg);
}

static nxpq_type parquet_type(nx_column_type c)
{
    switch (c) {
    case NX_COL_INT64: return NXPQ_INT64;
    case NX_COL_INT32: return NXPQ_INT32;
    case NX_COL_FLOAT: return NXPQ_FLOAT;
    case NX_COL_DOUBLE: return NXPQ_DOUBLE;
    case NX_COL_STRING: return NXPQ_STRING;
    case NX_COL_BOOLEAN: return NXPQ_BOOLEAN;
    case NX_COL_LIST_INT64: return NXPQ_LIST_INT64;
    case NX_COL_LIST_STRING: return NXPQ_LIST_STRING;
    case NX_COL_OBJECT_LIST: break;
    }
    return NXPQ_UNSUPPORTED;
}

/* The column a timeline table is sorted by: start_ts for interval events, timestamp
 * for point events (SemaphoreUpdate, Throttle, Error carry no start_ts). -1 if none. */
static int time_column(const nx_schema_table *s)
{
    if (strcmp(s->kind, "timeline") != 0)
        return -1;
    int i = nx_schema_field_index(s, "start_ts");
    return i >= 0 ? i : nx_schema_field_index(s, "timestamp");
}

/* Opens file number t->files (0-based) of the table. The first file of a table is
 * <T>.parquet; later ones are <T>_<n>.parquet (the first is renamed to _0 by roll). */
static int open_file(nx_table_writer *t, nx_error *err)
{
    char name[64];
    if (t->files == 0)
        snprintf(name, sizeof name, ".parquet");
    else
        snprintf(name, sizeof name, "_%u.parquet", t->files);
    size_t len = strlen(t->dir) + 1 + strlen(t->schema->name) + strlen(name) + 1;
    char *path = malloc(len);
    if (!path) {
        t->failed = true;
        return nx_error_set(err, "table %s: out of memory", t->schema->name);
    }
    snprintf(path, len, "%s/%s%s", t->dir, t->schema->name, name);
    nx_error e;
    t->w = nxpq_writer_open(path, t->cols, t->schema->n_fields, &t->opts, &e);
    free(t->path);
    t->path = path;
    if (!t->w)
        return fail_codec(t, err, &e);
    t->files++;
    t->rows_in_file = 0;
    for (size_t c = 0; t->dicts && c < t->schema->n_fields; c++)
        if (t->dicts[c].set && apply_dictionary(t, c, err) != 0)
            return -1;
    return 0;
}

nx_table_writer *nx_table_writer_open(const char *dir, const char *table, uint64_t max_rows_per_file,
                                      const nxpq_writer_options *base, nx_error *err)
{
    const nx_schema_table *s = nx_schema_table_find(table);
    if (!s) {
        nx_error_set(err, "table %s: not in the schema catalogue", table);
        return NULL;
    }
    if (s->transient) {
        nx_error_set(err, "table %s: transient (computed by the API on request), never written to a profile", table);
        return NULL;
    }
    nx_table_writer *t = calloc(1, sizeof *t);
    if (!t || !(t->dir = strdup(dir)) || !(t->cols = calloc(s->n_fields, sizeof *t->cols))) {
        nx_error_set(err, "table %s: out of memory", table);
        nx_table_writer_abort(t);
        return NULL;
    }
    t->schema = s;
    t->max_rows = max_rows_per_file ? max_rows_per_file : NX_TABLE_MAX_ROWS_DEFAULT;
    int sort_col = time_column(s);
    for (size_t i = 0; i < s->n_fields; i++) {
        const nx_schema_field *f = &s->fields[i];
        nxpq_type ty = parquet_type(f->column_type);
        if (ty == NXPQ_UNSUPPORTED) {
            nx_error_set(err, "table %s: field %s has type '%s', which has no Parquet column form", table, f->name,
                 f->type);
            nx_table_writer_abort(t);
            return NULL;
        }
        t->cols[i] = (nxpq_column_spec){
            .name = f->name,
            .type = ty,
            .nullable = !f->required,
            /* Sorted timestamps delta-encode to a few bits per row, where a dictionary
             * of mostly distinct values would only add overhead. */
            .encoding = (int)i == sort_col ? NXPQ_ENCODE_DELTA : NXPQ_ENCODE_AUTO,
        };
    }
    if (base)
        t->opts = *base;
    else
        nxpq_writer_options_init(&t->opts);
    t->kv[0] = (nxpq_kv){"nxprof_version", NXPROF_VERSION};
    t->kv[1] = (nxpq_kv){"profile_schema_version", NX_SCHEMA_VERSION};
    t->opts.metadata = t->kv;
    t->opts.n_metadata = 2;
    t->opts.sorting_column = sort_col;
    t->opts.created_by = NULL;
    /* Profile tables are full of ids, timestamps and checksums that never repeat. */
    t->opts.dictionary_skip_distinct = true;
    /* ... and those ids and timestamps grow by small steps: deltas, not PLAIN. */
    t->opts.delta_fallback = true;
    /* ... within what every reader decodes (parquet.h, docs/parquet.md). */
    t->opts.delta_max_bit_width = NX_TABLE_DELTA_MAX_BIT_WIDTH;
    if (open_file(t, err) < 0) {
        nx_table_writer_abort(t);
        return NULL;
    }
    return t;
}

/* Closes the full current file and starts the next. The first roll renames
 * <T>.parquet to <T>_0.parquet so the single-file and split forms never coexist. */
static int roll(nx_table_writer *t, nx_error *err)
{
    nx_error e;
    nxpq_writer *w = t->w;
    t->w = NULL;
    if (nxpq_writer_close(w, &e) < 0)
        return fail_codec(t, err, &e);
    if (t->files == 1) {
        size_t len = strlen(t->path) + 3;
        char *to = malloc(len);
        if (!to) {
            t->failed = true;
            return nx_error_set(err, "table %s: out of memory", t->schema->name);
        }
        /* t->path ends in ".parquet"; insert "_0" before it. */
        size_t stem = strlen(t->path) - strlen(".parquet");
        snprintf(to, len, "%.*s_0.parquet", (int)stem, t->path);
        if (rename(t->path, to) < 0) {
            nx_error_set(err, "table %s: cannot rename %s to %s: %s", t->schema->name, t->path, to, strerror(errno));
            free(to);
            t->failed = true;
            return -1;
        }
        free(to);
    }
    return open_file(t, err);
}

nxpq_writer *nx_table_begin_rows(nx_table_writer *t, size_t want, size_t *fit, nx_error *err)
{
    *fit = 0;
    if (t->failed) {
        nx_error_set(err, "table %s: the writer failed earlier (%s)", t->schema->name, t->path ? t->path : "no file");
        return NULL;
    }
    if (t->rows_in_file >= t->max_rows && roll(t, err) < 0)
        return NULL;
    uint64_t left = t->max_rows - t->rows_in_file;
    *fit = want < left ? want : (size_t)left;
    return t->w;
}

nxpq_writer *nx_table_begin_row(nx_table_writer *t, nx_error *err)
{
    size_t fit;
    return nx_table_begin_rows(t, 1, &fit, err);
}

int nx_table_end_rows(nx_table_writer *t, size_t n, nx_error *err)
{
    if (t->failed || !t->w)
        return nx_error_set(err, "table %s: the writer failed earlier (%s)", t->schema->name,
                    t->path ? t->path : "no file");
    if (nxpq_end_rows(t->w, n) < 0) {
        /* The codec keeps the reason for close; closing also removes the bad file. */
        nx_error e;
        nxpq_writer *w = t->w;
        t->w = NULL;
        nxpq_writer_close(w, &e);
        return fail_codec(t, err, &e);
    }
    t->rows_in_file += n;
    t->rows_total += n;
    return 0;
}

int nx_table_end_row(nx_table_writer *t, nx_error *err)
{
    return nx_table_end_rows(t, 1, err);
}

int nx_table_writer_close(nx_table_writer *t, nx_error *err)
{
    int rc = 0;
    if (t->failed || !t->w) {
        rc = nx_error_set(err, "table %s: the writer failed earlier (%s)", t->schema->name, t->path ? t->path : "no file");
    } else {
        nx_error e;
        nxpq_writer *w = t->w;
        t->w = NULL;
        if (nxpq_writer_close(w, &e) < 0)
            rc = fail_codec(t, err, &e);
    }
    nx_table_writer_abort(t);
    return rc;
}

void nx_table_writer_abort(nx_table_writer *t)
{
    if (!t)
        return;
    if (t->w)
        nxpq_writer_abort(t->w);
    free(t->path);
    free(t->cols);
    free(t->dir);
    for (size_t c = 0; t->dicts && c < t->schema->n_fields; c++) {
        free(t->dicts[c].strs);
        free(t->dicts[c].ints);
        free(t->dicts[c].valid);
    }
    free(t->dicts);
    free(t);
}

int nx_table_set_dictionary(nx_table_writer *t, size_t col, const nxpq_str *strs, const int64_t *ints,
                            const uint8_t *valid, size_t n, nx_error *err)
{
    if (t->failed || !t->w)
        return nx_error_set(err, "table %s: the writer failed earlier (%s)", t->schema->name,
                              t->path ? t->path : "no file");
    if (col >= t->schema->n_fields || t->rows_total > 0 || (t->dicts && t->dicts[col].set))
        return nx_error_set(err, "table %s: a dictionary is set once per column, before the first row",
                              t->schema->name);
    if (!t->dicts && !(t->dicts = calloc(t->schema->n_fields, sizeof *t->dicts)))
        return nx_error_set(err, "table %s: out of memory", t->schema->name);
    struct table_dict *d = &t->dicts[col];
    size_t m = n ? n : 1;
    bool oom;
    if (strs) {
        oom = !(d->strs = malloc(m * sizeof *d->strs));
        if (!oom)
            memcpy(d->strs, strs, n * sizeof *strs);
    } else {
        oom = !(d->ints = malloc(m * sizeof *d->ints)) || (valid && !(d->valid = malloc(m)));
        if (!oom) {
            memcpy(d->ints, ints, n * sizeof *ints);
            if (valid)
                memcpy(d->valid, valid, n);
        }
    }
    if (oom)
        return nx_error_set(err, "table %s: out of memory for the dictionary of %s", t->schema->name,
                              t->schema->fields[col].name);
    d->n = n;
    d->set = true;
    return apply_dictionary(t, col, err);
}

const nx_schema_table *nx_table_writer_schema(const nx_table_writer *t) { return t->schema; }
uint64_t nx_table_writer_rows(const nx_table_writer *t) { return t->rows_total; }
unsigned nx_table_writer_files(const nx_table_writer *t) { return t->files; }

/* ------------------------------------------------------------ SchemaFields -- */

/* SchemaFields columns, looked up by name so the catalogue's order is the only
 * order that matters. */
enum {
    SF_TABLE_NAME, SF_TABLE_DESC, SF_FIELD_NAME, SF_FIELD_DESC, SF_EXAMPLE, SF_TYPE, SF_REQUIRED,
    SF_FORMAT, SF_UNIT, SF_MIN, SF_MAX, SF_ENUM, SF_N
};
static const char *const sf_names[SF_N] = {
    "table_name", "table_description", "field_name", "field_description", "field_example", "field_type",
    "field_required", "field_format", "field_unit", "field_minimum", "field_maximum", "field_enum_values"};

/* A text value; "" or NULL becomes null where the column is optional (the
 * catalogue's "not given"), and stays "" where the column is required. */
static int put_text(nxpq_writer *w, const nx_schema_table *s, int col, const char *v)
{
    if ((!v || !*v) && !s->fields[col].required)
        return nxpq_put_null(w, (size_t)col);
    return nxpq_put_string(w, (size_t)col, v ? v : "", v ? strlen(v) : 0);
}

static int put_bound(nxpq_writer *w, int col, double v)
{
    return isnan(v) ? nxpq_put_null(w, (size_t)col) : nxpq_put_float(w, (size_t)col, (float)v);
}

int nx_write_schema_fields(const char *dir, const nxpq_writer_options *base, nx_error *err)
{
    nx_table_writer *t = nx_table_writer_open(dir, "SchemaFields", 0, base, err);
    if (!t)
        return -1;
    const nx_schema_table *s = t->schema;
    int col[SF_N];
    for (int i = 0; i < SF_N; i++)
        if ((col[i] = nx_schema_field_index(s, sf_names[i])) < 0) {
            nx_error_set(err, "table SchemaFields: the catalogue has no field %s", sf_names[i]);
            nx_table_writer_abort(t);
            return -1;
        }
    size_t n = nx_schema_fields_row_count();
    for (size_t i = 0; i < n; i++) {
        nx_schema_fields_row r;
        if (nx_schema_fields_row_build(i, &r) < 0) {
            nx_error_set(err, "table SchemaFields: cannot build row %zu: %s", i, strerror(errno));
            nx_table_writer_abort(t);
            return -1;
        }
        nxpq_writer *w = nx_table_begin_row(t, err);
        /* Put failures poison the codec writer; nx_table_end_row reports them. */
        if (w) {
            put_text(w, s, col[SF_TABLE_NAME], r.table_name);
            put_text(w, s, col[SF_TABLE_DESC], r.table_description);
            put_text(w, s, col[SF_FIELD_NAME], r.field_name);
            put_text(w, s, col[SF_FIELD_DESC], r.field_description);
            put_text(w, s, col[SF_EXAMPLE], r.field_example);
            put_text(w, s, col[SF_TYPE], r.field_type);
            nxpq_put_bool(w, (size_t)col[SF_REQUIRED], r.field_required);
            put_text(w, s, col[SF_FORMAT], r.field_format);
            put_text(w, s, col[SF_UNIT], r.field_unit);
            put_bound(w, col[SF_MIN], r.field_minimum);
            put_bound(w, col[SF_MAX], r.field_maximum);
            put_text(w, s, col[SF_ENUM], r.field_enum_values);
        }
        free(r.field_enum_values);
        if (!w || nx_table_end_row(t, err) < 0) {
            nx_table_writer_abort(t);
            return -1;
        }
    }
    return nx_table_writer_close(t, err);
}
