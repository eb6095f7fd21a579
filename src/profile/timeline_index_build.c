/*
 * timeline_index_build.c — a timeline index (profile/timeline_index.h) built from
 * a table's Parquet files, for profiles `nxprof process` did not write: those of
 * the reference tool or of other writers, and profiles processed before nxprof
 * wrote indexes. The table is scanned once in file order (the timing, track and
 * label columns only) and fed to the same writer `process` uses, so the index
 * is the one processing would have written for the same rows.
 */
#include "profile/timeline_index_writer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_index.h"
#include "profile/timeline_rules.h"

/* One projected column's values in the writer's form (timeline_index_writer.h). */
typedef struct conv {
    int field;                       /* schema field index */
    int64_t *ints;                   /* INT32 widened */
    nxpq_str *strs;
    uint8_t *ones;                   /* validity when the batch has no nulls */
    size_t cap;
} conv;

static int conv_batch(conv *cv, const nxpq_column_data *c, size_t n, nx_tlx_column *out)
{
    if (n > cv->cap) {
        int64_t *i = realloc(cv->ints, n * sizeof *i);
        if (i)
            cv->ints = i;
        nxpq_str *s = realloc(cv->strs, n * sizeof *s);
        if (s)
            cv->strs = s;
        uint8_t *o = realloc(cv->ones, n);
        if (o)
            cv->ones = o;
        if (!i || !s || !o)
            return -1;
        memset(cv->ones, 1, n);
        cv->cap = n;
    }
    *out = (nx_tlx_column){.valid = c->valid ? c->valid : cv->ones};
    if (c->type == NXPQ_INT64) {
        out->i = c->values.i64;
    } else if (c->type == NXPQ_INT32) {
        for (size_t k = 0; k < n; k++)
            cv->ints[k] = c->values.i32[k];
        out->i = cv->ints;
    } else if (c->type == NXPQ_STRING) {
        for (size_t k = 0; k < n; k++)
            cv->strs[k] = (nxpq_str){c->data + c->offsets[k], (size_t)(c->offsets[k + 1] - c->offsets[k])};
        out->s = cv->strs;
    }
    return 0;
}

int nx_tlx_build(const char *profile_dir, const char *table, uint64_t *rows_out, nx_error *err)
{
    *rows_out = 0;
    const nx_timeline_info *info = nx_timeline_find(table);
    const nx_schema_table *s = nx_schema_table_find(table);
    if (!info || !s) {
        nx_error_set(err, "%s is not a timeline table", table);
        return -1;
    }
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, table, &t, err);
    if (rc != 0)
        return rc;
    /* The columns the writer reads: timing, track sources, labels; those the files have. */
    enum { MAX_WANT = 2 + NX_TRACK_MAX_SOURCES + NX_TLX_MAX_LABELS };
    nx_track_source src = nx_track_sources(info->track);
    const char *want[MAX_WANT] = {info->start_column, info->end_column};
    size_t n_want = 2;
    for (size_t k = 0; k < src.n; k++)
        want[n_want++] = src.col[k];
    const char *const *labels = nx_timeline_labels(table);
    for (size_t l = 0; labels && labels[l] && l < NX_TLX_MAX_LABELS; l++)
        want[n_want++] = labels[l];
    const char *proj[MAX_WANT];
    conv cv[MAX_WANT];
    size_t n_proj = 0;
    memset(cv, 0, sizeof cv);
    for (size_t i = 0; i < n_want; i++) {
        int f = want[i] ? nx_schema_field_index(s, want[i]) : -1;
        int c = want[i] ? nx_profile_table_find_column(t, want[i]) : -1;
        bool again = false;   /* a label that is also a track source is projected once */
        for (size_t j = 0; j < n_proj && !again; j++)
            again = cv[j].field == f;
        if (f < 0 || c < 0 || again)
            continue;
        const nxpq_column_info *ci = nx_profile_table_column(t, (size_t)c);
        if (ci->type != NXPQ_INT64 && ci->type != NXPQ_INT32 && ci->type != NXPQ_STRING) {
            /* An index without this column would answer wrongly, not just slowly. */
            nx_error_set(err, "%s: column '%s' is %s, expected an integer or a string", table, want[i],
                           ci->unsupported ? ci->unsupported : nxpq_type_name(ci->type));
            nx_profile_table_close(t);
            return -1;
        }
        cv[n_proj].field = f;
        proj[n_proj++] = want[i];
    }
    nx_tlx_column *view = calloc(s->n_fields, sizeof *view);
    size_t n_files = nx_profile_table_file_count(t);
    uint64_t *file_rows = calloc(n_files + 1, sizeof *file_rows);
    nx_tlx_writer *w = NULL;
    nx_profile_scan *sc = NULL;
    rc = -1;
    if (!view || !file_rows) {
        nx_error_set(err, "%s: out of memory", table);
        goto done;
    }
    if (nx_tlx_writer_open(profile_dir, s, 0, &w, err) != 0)
        goto done;
    nx_profile_scan_options so = {.columns = proj, .n_columns = n_proj};
    if (!(sc = nx_profile_scan_open(t, &so, err)))
        goto done;
    const nxpq_batch *b;
    int more;
    while ((more = nx_profile_scan_next(sc, &b, err)) > 0) {
        memset(view, 0, s->n_fields * sizeof *view);
        for (size_t j = 0; j < n_proj; j++)
            if (conv_batch(&cv[j], &b->columns[j], b->n_rows, &view[cv[j].field]) != 0) {
                nx_error_set(err, "%s: out of memory", table);
                goto done;
            }
        if (nx_tlx_writer_add(w, view, b->n_rows, err) != 0)
            goto done;
        file_rows[nx_profile_scan_file(sc)] += b->n_rows;
        *rows_out += b->n_rows;
    }
    if (more < 0)
        goto done;
    rc = 0;
done:
    nx_profile_scan_close(sc);
    if (nx_tlx_writer_close(w, rc == 0, file_rows, n_files, err) != 0)
        rc = -1;
    nx_profile_table_close(t);
    for (size_t j = 0; j < n_proj; j++) {
        free(cv[j].ints);
        free(cv[j].strs);
        free(cv[j].ones);
    }
    free(view);
    free(file_rows);
    return rc;
}
