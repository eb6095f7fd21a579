/* nesting_values.c — the depth and self time of a table's events, from its timeline index or computed (see nesting_values.h). */
#include "query/engine/nesting_values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/nesting.h"
#include "profile/profile_table.h"
#include "profile/timeline_index.h"
#include "util/file_map.h"
#include "query/engine/window.h"

/* An event on a track's stack: it may still enclose a later event. */
/* ------------------------------------------------------------- reading -- */

struct nx_nesting_values {
    nx_tlx *index;                   /* the index answers, or: */
    nx_tlx_nest *rows;               /* per table row, computed */
    int64_t *file_first;             /* per file: its first row's number (n_files + 1) */
    size_t n_files;
};

static int store(void *ctx, uint64_t row, uint32_t depth, int64_t self_ns)
{
    nx_nesting_values *v = ctx;
    v->rows[row] = (nx_tlx_nest){self_ns, depth, 1};
    return 0;
}

/* The values from one scan of the table's timing and track columns. */
static int compute(nx_nesting_values *v, nx_profile_table *t, nx_error *err)
{
    const char *table = nx_profile_table_name(t);
    int64_t rows = nx_profile_table_num_rows(t);
    v->n_files = nx_profile_table_file_count(t);
    v->rows = calloc(rows > 0 ? (size_t)rows : 1, sizeof *v->rows);
    v->file_first = calloc(v->n_files + 1, sizeof *v->file_first);
    nx_nesting *n = nx_nesting_new(store, v);
    if (!v->rows || !v->file_first || !n) {
        nx_nesting_free(n);
        return nx_error_set(err, "%s: out of memory for the depth and self time of %lld rows", table,
                              (long long)rows);
    }
    for (size_t f = 0; f < v->n_files; f++)
        v->file_first[f + 1] = v->file_first[f] + nx_profile_table_file_rows(t, f);
    int rc = -1;
    nx_window_options wo = {.start = INT64_MIN, .end = INT64_MAX};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        goto done;
    nx_window_batch b;
    int more;
    while ((more = nx_window_next(w, &b, err)) > 0) {
        int64_t base = v->file_first[b.file] + b.batch->first_row;
        for (size_t k = 0; k < b.n_rows; k++) {
            int64_t row = base + b.rows[k];
            if (b.file >= v->n_files || row >= v->file_first[b.file + 1]) {
                nx_error_set(err, "%s: file %zu holds more rows than its footer says", table, b.file);
                goto done;
            }
            int a = nx_nesting_add(n, b.track[k], b.start[k], b.end[k], (uint64_t)row);
            if (a > 0) {
                nx_error_set(err, "%s: row %lld starts before the previous event of its track or ends before it "
                                    "starts; depth and self time need each track in start order",
                               table, (long long)row);
                goto done;
            }
            if (a < 0) {
                nx_error_set(err, "%s: out of memory computing depth and self time", table);
                goto done;
            }
        }
    }
    if (more < 0)
        goto done;
    if (nx_nesting_finish(n) != 0) {
        nx_error_set(err, "%s: out of memory computing depth and self time", table);
        goto done;
    }
    rc = 0;
done:
    nx_window_close(w);
    nx_nesting_free(n);
    return rc;
}

int nx_nesting_open(const char *profile_dir, const char *table, nx_nesting_values **out, char *note,
                    size_t note_len, nx_error *err)
{
    *out = NULL;
    nx_error why = {0};
    const nx_timeline_info *info = nx_timeline_find(table);
    if (!info || !info->nested)
        return nx_error_set(err, "%s: not a table whose events nest (no depth or self time)", table);
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, table, &t, err);
    if (rc != 0)
        return rc;
    nx_nesting_values *v = calloc(1, sizeof *v);
    if (!v) {
        nx_profile_table_close(t);
        return nx_error_set(err, "%s: out of memory", table);
    }
    /* NXPROF_NO_TIMELINE_INDEX=1 forces the scan, as for sampling (sampled_pass.h). */
    const char *off = getenv("NXPROF_NO_TIMELINE_INDEX");
    bool no_index = off && strcmp(off, "1") == 0;
    nx_tlx *x = NULL;
    int irc = no_index ? 1 : nx_tlx_open(profile_dir, table, &x, &why);
    if (irc < 0) {
        rc = nx_error_set(err, "%s: out of memory opening its timeline index", table);
    } else if (irc == 0 && nx_tlx_has_nesting(x)) {
        v->index = x;
        x = NULL;
    } else {
        if (irc == 0)
            snprintf(why.msg, sizeof why, "it holds no depth and self time");
        else if (no_index)
            snprintf(why.msg, sizeof why, "NXPROF_NO_TIMELINE_INDEX=1");
        rc = compute(v, t, err);
    }
    nx_tlx_close(x);
    nx_profile_table_close(t);
    if (rc != 0) {
        nx_nesting_close(v);
        return -1;
    }
    if (note)
        snprintf(note, note_len, "%s", why.msg);
    *out = v;
    return 0;
}

bool nx_nesting_get(const nx_nesting_values *v, int64_t ordinal, uint32_t *depth, int64_t *self_ns)
{
    if (v->index)
        return nx_tlx_nesting(v->index, ordinal, depth, self_ns);
    size_t file = (size_t)((uint64_t)ordinal >> 40);
    int64_t row = ordinal & ((INT64_C(1) << 40) - 1);
    if (ordinal < 0 || file >= v->n_files || row >= v->file_first[file + 1] - v->file_first[file])
        return false;
    const nx_tlx_nest *e = &v->rows[v->file_first[file] + row];
    if (!e->set)
        return false;
    *depth = e->depth;
    *self_ns = e->self_ns;
    return true;
}

int nx_nesting_check(const nx_nesting_values *v, const char *table, nx_error *err)
{
    if (v && v->index && nx_tlx_changed(v->index))
        return nx_error_set(err, "%s: timeline index: %s", table, NX_FILE_MAP_CHANGED);
    return 0;
}

void nx_nesting_close(nx_nesting_values *v)
{
    if (!v)
        return;
    nx_tlx_close(v->index);
    free(v->rows);
    free(v->file_first);
    free(v);
}
