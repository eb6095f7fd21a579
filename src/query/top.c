/*
 * top.c — `nxprof top`'s query (see top.h): one scan of the keys and the value
 * columns into group_by.h; for a table whose events nest, also the self time
 * of each row (nesting.h, by its ordinal) and the virtual keys, built per batch
 * as string columns of their own so the group-by sees them like real ones.
 */
#include "query/top.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/thread_label.h"
#include "profile/timeline_rules.h"
#include "query/device_activity.h"
#include "query/engine/profile_kind.h"
#include "schema/schema.h"
#include "query/nki_source.h"
#include "util/json.h"

/* ---------------------------------------------------------------- scan -- */

enum { VIRT_NONE, VIRT_CAT, VIRT_THREAD, VIRT_NKI_FILE, VIRT_NKI_LINE };

/* A virtual key's column for the current batch, built row by row. */
typedef struct virt_col {
    int kind;
    char *data;
    size_t cap;
    uint64_t *offsets;
    uint8_t *valid;
    int64_t *i64;                            /* VIRT_NKI_LINE's values */
    nxpq_column_data col;
} virt_col;

typedef struct scan_plan {
    const char *cols[NX_TOP_MAX_KEYS + 8 + NX_TRACK_MAX_SOURCES];
    size_t n_cols;
    int key_at[NX_TOP_MAX_KEYS];             /* batch column of each real key, or -1 */
    virt_col virt[NX_TOP_MAX_KEYS];
    int dur_at, start_at, end_at, json_at;   /* -1: not projected */
    int pid_at, tid_at, source_at, worker_at; /* the thread label's columns; -1: not projected */
    int rank_at;                             /* worker_gid for the rank filter; -1: no filter */
    int prof_at[3];                          /* name, trace_event_source, extra_attributes_json to tell the
                                                profiler's own rows; [0] -1: they are kept */
    int track_at[NX_TRACK_MAX_SOURCES];
    nx_track_source src;
    nx_track_kind kind;
    int kname_at, pcore_at;                  /* the join with KernelInstructions; -1: not projected */
    nx_nki_source *nki;                      /* opened when a key is joined from it */
} scan_plan;

/* Index of `name` in the projection, added when missing. */
static int want(scan_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_cols; i++)
        if (strcmp(p->cols[i], name) == 0)
            return (int)i;
    p->cols[p->n_cols] = name;
    return (int)p->n_cols++;
}

static nxpq_type column_type(const nx_profile_table *t, const char *name)
{
    int c = nx_profile_table_find_column(t, name);
    return c < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)c)->type;
}

static bool is_int(nxpq_type ty) { return ty == NXPQ_INT32 || ty == NXPQ_INT64; }

static int64_t int_at(const nxpq_column_data *c, size_t r)
{
    return c->type == NXPQ_INT32 ? c->values.i32[r] : c->values.i64[r];
}

static bool present(const nxpq_column_data *c, size_t r) { return !c->valid || c->valid[r]; }

/* Room for `more` bytes after `at` in v's data; -1 when out of memory. */
static int virt_room(virt_col *v, size_t at, size_t more)
{
    if (at + more <= v->cap)
        return 0;
    size_t c = v->cap ? v->cap : 4096;
    while (c < at + more)
        c *= 2;
    char *d = realloc(v->data, c);
    if (!d)
        return -1;
    v->data = d;
    v->cap = c;
    return 0;
}

/* Fills virtual column v for the rows of b. -1 when out of memory. */
/* A framework event's thread label (profile/thread_label.h) into out, or 0
 * when the row is no framework event, its trace named nothing, or the table
 * lacks the columns. */
static size_t thread_label_of_row(const scan_plan *p, const nxpq_batch *b, size_t r, char *out)
{
    if (p->json_at < 0 || p->pid_at < 0 || p->tid_at < 0 || p->source_at < 0)
        return 0;
    nx_thread_label_cols c = {&b->columns[p->json_at], &b->columns[p->source_at], &b->columns[p->pid_at],
                              &b->columns[p->tid_at], p->worker_at >= 0 ? &b->columns[p->worker_at] : NULL};
    return nx_thread_label_of_row(&c, r, out);
}

/* The KernelInstructions row of row r of an Instruction batch, or NULL. */
static const nx_nki_line *nki_line_of_row(const scan_plan *p, const nxpq_batch *b, size_t r)
{
    const nxpq_column_data *name = &b->columns[p->kname_at], *core = &b->columns[p->pcore_at];
    if (!present(name, r))
        return NULL;
    return nx_nki_source_find(p->nki, present(core, r), present(core, r) ? int_at(core, r) : 0,
                              name->data + name->offsets[r], (size_t)(name->offsets[r + 1] - name->offsets[r]));
}

/* line_number joined from KernelInstructions: an INT64 column. */
static int virt_fill_line(virt_col *v, const scan_plan *p, const nxpq_batch *b)
{
    size_t n = b->n_rows;
    int64_t *i = realloc(v->i64, (n ? n : 1) * sizeof *i);
    if (i)
        v->i64 = i;
    uint8_t *va = realloc(v->valid, n ? n : 1);
    if (va)
        v->valid = va;
    if (!i || !va)
        return -1;
    for (size_t r = 0; r < n; r++) {
        const nx_nki_line *l = nki_line_of_row(p, b, r);
        v->valid[r] = l && l->has_line;
        v->i64[r] = v->valid[r] ? l->line : 0;
    }
    v->col = (nxpq_column_data){.type = NXPQ_INT64, .valid = v->valid, .values.i64 = v->i64};
    return 0;
}

static int virt_fill(virt_col *v, const scan_plan *p, const nxpq_batch *b)
{
    if (v->kind == VIRT_NKI_LINE)
        return virt_fill_line(v, p, b);
    size_t n = b->n_rows;
    const nxpq_column_data *js = p->json_at >= 0 ? &b->columns[p->json_at] : NULL;
    uint64_t *o = realloc(v->offsets, (n + 1) * sizeof *o);
    if (o)
        v->offsets = o;
    uint8_t *va = realloc(v->valid, n ? n : 1);
    if (va)
        v->valid = va;
    if (!o || !va)
        return -1;
    size_t at = 0;
    for (size_t r = 0; r < n; r++) {
        v->offsets[r] = at;
        bool ok = false;
        if (v->kind == VIRT_CAT) {
            size_t len = js && present(js, r) ? (size_t)(js->offsets[r + 1] - js->offsets[r]) : 0;
            if (virt_room(v, at, len) != 0)
                return -1;
            ok = js && present(js, r) && nx_json_string_member(js->data + js->offsets[r], len, "cat", v->data, v->cap, &at);
        } else if (v->kind == VIRT_NKI_FILE) {
            const nx_nki_line *l = nki_line_of_row(p, b, r);
            ok = l && l->file;
            if (virt_room(v, at, ok ? l->file_len : 0) != 0)
                return -1;
            if (ok) {
                memcpy(v->data + at, l->file, l->file_len);
                at += l->file_len;
            }
        } else {
            char buf[NX_TRACK_BUF > NX_THREAD_LABEL_MAX + 1 ? NX_TRACK_BUF : NX_THREAD_LABEL_MAX + 1];
            size_t len = thread_label_of_row(p, b, r, buf);
            const char *name = len ? buf : nx_track_of_row(p->kind, &p->src, b, p->track_at, r, buf, &len);
            if (virt_room(v, at, len) != 0)
                return -1;
            memcpy(v->data + at, name, len);
            at += len;
            ok = true;
        }
        v->valid[r] = ok;
    }
    v->offsets[n] = at;
    if (virt_room(v, at, 1) != 0)   /* data is never NULL, even for empty names */
        return -1;
    v->col = (nxpq_column_data){.type = NXPQ_STRING, .valid = v->valid, .offsets = v->offsets, .data = v->data};
    return 0;
}

/* Whether the schema's table has a column `name` that top can group by: then a
 * profile file without it, or with another type, is a data problem (a profile
 * written by another tool, or damaged), not a usage error. */
static bool schema_key(const char *table, const char *name)
{
    const nx_schema_table *st = nx_schema_table_find(table);
    const nx_schema_field *f = st ? nx_schema_field_find(st, name) : NULL;
    return f && (f->column_type == NX_COL_INT64 || f->column_type == NX_COL_INT32 ||
                 f->column_type == NX_COL_STRING || f->column_type == NX_COL_BOOLEAN);
}

/* file_path and line_number on a table that has neither but has the join's
 * columns (Instruction): joined from KernelInstructions (nki_source.h). */
static int joined_kind(const nx_profile_table *t, const char *name)
{
    if (column_type(t, "kernel_instruction_name") != NXPQ_STRING || !is_int(column_type(t, "pcore_idx")))
        return VIRT_NONE;
    return strcmp(name, "file_path") == 0 ? VIRT_NKI_FILE : strcmp(name, "line_number") == 0 ? VIRT_NKI_LINE : VIRT_NONE;
}

/* Checks the keys against the table and lays out the projection. */
static int plan(scan_plan *p, const nx_profile_table *t, const nx_top_options *o, const nx_top *out,
                nxpq_type *types, nx_error *err)
{
    memset(p, 0, sizeof *p);
    p->dur_at = p->start_at = p->end_at = p->json_at = -1;
    p->pid_at = p->tid_at = p->source_at = p->worker_at = p->rank_at = -1;
    p->prof_at[0] = p->prof_at[1] = p->prof_at[2] = -1;
    p->kname_at = p->pcore_at = -1;
    if (!o->profiler_rows && strcmp(o->table, "SystemProfileEvents") == 0 &&
        column_type(t, "name") == NXPQ_STRING && column_type(t, "trace_event_source") == NXPQ_STRING) {
        p->prof_at[0] = want(p, "name");
        p->prof_at[1] = want(p, "trace_event_source");
        if (column_type(t, "extra_attributes_json") == NXPQ_STRING)
            p->prof_at[2] = want(p, "extra_attributes_json");
    }
    if (o->has_rank) {
        if (!is_int(column_type(t, "worker_gid"))) {
            nx_error_set(err, "--rank: table %s has no integer column worker_gid", o->table);
            return NX_TOP_BAD_KEY;
        }
        p->rank_at = want(p, "worker_gid");
    }
    const nx_timeline_info *info = nx_timeline_find(o->table);
    for (size_t k = 0; k < o->n_by; k++) {
        const char *name = o->by[k];
        p->key_at[k] = -1;
        if (nx_profile_table_find_column(t, name) >= 0) {
            types[k] = column_type(t, name);
            if (types[k] != NXPQ_INT32 && types[k] != NXPQ_INT64 && types[k] != NXPQ_STRING &&
                types[k] != NXPQ_BOOLEAN) {
                if (schema_key(o->table, name))
                    return nx_error_set(err, "%s: column '%s' is %s, not the schema's type (a profile written "
                                               "by another tool, or damaged)",
                                          nx_profile_table_file_path(t, 0), name, nxpq_type_name(types[k]));
                nx_error_set(err, "--by column '%s' of %s is %s; use integer or string columns", name, o->table,
                               nxpq_type_name(types[k]));
                return NX_TOP_BAD_KEY;
            }
            p->key_at[k] = want(p, name);
            continue;
        }
        p->virt[k].kind = joined_kind(t, name);
        if (p->virt[k].kind == VIRT_NONE && out->self)
            p->virt[k].kind = strcmp(name, "cat") == 0 ? VIRT_CAT : strcmp(name, "thread") == 0 ? VIRT_THREAD : VIRT_NONE;
        if (p->virt[k].kind == VIRT_NONE && schema_key(o->table, name))
            return nx_error_set(err, "%s has no column '%s', which the schema's %s has (a profile written by "
                                       "another tool, or damaged)",
                                  nx_profile_table_file_path(t, 0), name, o->table);
        if (p->virt[k].kind == VIRT_NONE) {
            nx_error_set(err, "table %s has no column '%s'%s", o->table, name,
                           out->self ? " (nor is it one of the virtual keys cat, thread)" : "");
            return NX_TOP_BAD_KEY;
        }
        types[k] = p->virt[k].kind == VIRT_NKI_LINE ? NXPQ_INT64 : NXPQ_STRING;
        if (p->virt[k].kind == VIRT_NKI_FILE || p->virt[k].kind == VIRT_NKI_LINE) {
            p->kname_at = want(p, "kernel_instruction_name");
            p->pcore_at = want(p, "pcore_idx");
        }
        if (p->virt[k].kind == VIRT_CAT && column_type(t, "extra_attributes_json") == NXPQ_STRING)
            p->json_at = want(p, "extra_attributes_json");
        if (p->virt[k].kind == VIRT_THREAD) {
            p->kind = info->track;
            p->src = nx_track_sources(info->track);
            for (size_t s = 0; s < p->src.n; s++) {
                nxpq_type ty = column_type(t, p->src.col[s]);
                p->track_at[s] = (p->src.is_int[s] ? is_int(ty) : ty == NXPQ_STRING) ? want(p, p->src.col[s]) : -1;
            }
            if (info->track == NX_TRACK_SYSTEM && column_type(t, "extra_attributes_json") == NXPQ_STRING &&
                column_type(t, "trace_event_source") == NXPQ_STRING && is_int(column_type(t, "process_id")) &&
                is_int(column_type(t, "thread_id"))) {   /* framework threads by their names */
                p->json_at = want(p, "extra_attributes_json");
                p->source_at = want(p, "trace_event_source");
                p->pid_at = want(p, "process_id");
                p->tid_at = want(p, "thread_id");
                p->worker_at = is_int(column_type(t, "worker_gid")) ? want(p, "worker_gid") : -1;
            }
        }
    }
    if (out->value == NX_TOP_DURATION)
        p->dur_at = want(p, "duration_ns");
    if (out->value == NX_TOP_SPAN || (out->self && is_int(column_type(t, "start_ts")) && is_int(column_type(t, "end_ts")))) {
        p->start_at = want(p, "start_ts");
        p->end_at = want(p, "end_ts");
    }
    return 0;
}

/* Per-batch value arrays: the span (NX_TOP_SPAN) and the self times. */
typedef struct value_bufs {
    int64_t *span, *self;
    uint8_t *span_ok, *self_ok, *keep, *group_keep;
    size_t cap;
} value_bufs;

static int bufs_reserve(value_bufs *v, size_t n)
{
    if (n <= v->cap)
        return 0;
    int64_t *a = realloc(v->span, n * sizeof *a);
    if (a)
        v->span = a;
    int64_t *b = realloc(v->self, n * sizeof *b);
    if (b)
        v->self = b;
    uint8_t *c = realloc(v->span_ok, n);
    if (c)
        v->span_ok = c;
    uint8_t *d = realloc(v->self_ok, n);
    if (d)
        v->self_ok = d;
    uint8_t *k = realloc(v->keep, n);
    if (k)
        v->keep = k;
    uint8_t *g = realloc(v->group_keep, n);
    if (g)
        v->group_keep = g;
    if (!a || !b || !c || !d || !k || !g)
        return -1;
    v->cap = n;
    return 0;
}

/* Durations, spans and self times are never negative in a profile nxprof
 * writes; one that is (a file written by another tool) is an error naming its
 * row, never a negative answer. That also keeps every partial sum of the
 * groups within the checked totals (nx_top_rest). The self times, last of
 * vals when self, are named as such. */
static int times_not_negative(const nx_group_values *vals, size_t n_sums, size_t n, bool self, const char *table,
                              int64_t base, nx_error *err)
{
    for (size_t j = 0; j < n_sums; j++) {
        for (size_t r = 0; r < n; r++) {
            if ((!vals[j].valid || vals[j].valid[r]) && vals[j].v[r] < 0)
                return nx_error_set(err, "%s: row %" PRId64 ": %s %" PRId64 " is negative", table,
                                      base + (int64_t)r, self && j == n_sums - 1 ? "self time" : "duration",
                                      vals[j].v[r]);
        }
    }
    return 0;
}

/* The --rank filter of one batch: keep[r] = 1 for the rows whose worker_gid
 * is rank, 0 for the others (null included); returns keep. */
static const uint8_t *rank_rows(const nxpq_column_data *worker, size_t n, int64_t rank, uint8_t *keep)
{
    for (size_t r = 0; r < n; r++)
        keep[r] = present(worker, r) && int_at(worker, r) == rank;
    return keep;
}

/* The rows the groups count: those `keep` keeps (NULL: all) that are not the
 * profiler's own (device_activity.h), counted in *left_out; returns out. */
static const uint8_t *not_profiler_rows(const scan_plan *p, const nxpq_batch *b, const uint8_t *keep, uint8_t *out,
                                        int64_t *left_out)
{
    for (size_t r = 0; r < b->n_rows; r++) {
        nx_activity_input in;
        nx_activity_input_of(&b->columns[p->prof_at[0]], &b->columns[p->prof_at[1]],
                             p->prof_at[2] >= 0 ? &b->columns[p->prof_at[2]] : NULL, r, &in);
        nx_activity a;
        nx_activity_classify(&in, &a);
        out[r] = (!keep || keep[r]) && !a.profiler;
        *left_out += (!keep || keep[r]) && a.profiler;
    }
    return out;
}

static int aggregate(nx_top *out, nx_profile_table *t, scan_plan *p, const nx_nesting_values *nest,
                     const nx_top_options *o, nx_error *err)
{
    size_t n_by = o->n_by;
    const char *table = o->table;
    int64_t rank = o->rank;
    nx_profile_scan_options so = {.columns = p->cols, .n_columns = p->n_cols};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    if (!s)
        return -1;
    value_bufs vb = {0};
    int rc = -1;
    const nxpq_batch *b;
    int more;
    while ((more = nx_profile_scan_next(s, &b, err)) > 0) {
        size_t n = b->n_rows;
        const nxpq_column_data *keys[NX_TOP_MAX_KEYS];
        for (size_t k = 0; k < n_by; k++) {
            if (p->key_at[k] >= 0) {
                keys[k] = &b->columns[p->key_at[k]];
                continue;
            }
            if (virt_fill(&p->virt[k], p, b) != 0)
                goto oom;
            keys[k] = &p->virt[k].col;
        }
        if (bufs_reserve(&vb, n) != 0)
            goto oom;
        nx_group_values vals[NX_GROUP_SUMS];
        size_t n_sums = 0;
        const nxpq_column_data *st = p->start_at >= 0 ? &b->columns[p->start_at] : NULL;
        const nxpq_column_data *en = p->end_at >= 0 ? &b->columns[p->end_at] : NULL;
        int64_t base = nx_row_ordinal(nx_profile_scan_file(s), b->first_row);
        if (out->value == NX_TOP_DURATION) {
            vals[n_sums++] = (nx_group_values){b->columns[p->dur_at].values.i64, b->columns[p->dur_at].valid};
        } else if (out->value == NX_TOP_SPAN) {
            for (size_t r = 0; r < n; r++) {
                vb.span_ok[r] = present(st, r) && present(en, r);
                if (vb.span_ok[r] && __builtin_sub_overflow(int_at(en, r), int_at(st, r), &vb.span[r])) {
                    nx_error_set(err, "%s: row %" PRId64 ": end_ts - start_ts exceeds the int64 range", table,
                                   base + (int64_t)r);
                    goto done;
                }
            }
            vals[n_sums++] = (nx_group_values){vb.span, vb.span_ok};
        } else if (out->self) {
            memset(vb.span_ok, 0, n);   /* nothing summed: sum[0] is null, self time stays sum[1] */
            vals[n_sums++] = (nx_group_values){vb.span, vb.span_ok};
        }
        if (out->self) {
            for (size_t r = 0; r < n; r++) {
                uint32_t depth;
                vb.self_ok[r] = nx_nesting_get(nest, base + (int64_t)r, &depth, &vb.self[r]);
            }
            vals[n_sums++] = (nx_group_values){vb.self, vb.self_ok};
        }
        if (times_not_negative(vals, n_sums, n, out->self, table, base, err) != 0)
            goto done;
        const uint8_t *keep = p->rank_at >= 0 ? rank_rows(&b->columns[p->rank_at], n, rank, vb.keep) : NULL;
        const uint8_t *group_keep = p->prof_at[0] >= 0 ? not_profiler_rows(p, b, keep, vb.group_keep, &out->profiler_left_out)
                                                         : keep;
        if (nx_group_by_add_kept(out->g, keys, vals, n_sums, n, group_keep, err) != 0) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            nx_error_set(err, "%s: %s (rows %" PRId64 " to %" PRId64 ")", table, why, base,
                           base + (int64_t)n - 1);   /* name the table and where */
            goto done;
        }
        for (size_t r = 0; out->self && st && en && r < n; r++) {
            if (!present(st, r) || !present(en, r) || (keep && !keep[r]))
                continue;
            int64_t a = int_at(st, r), e = int_at(en, r);
            if (!out->have_wall || a < out->first_ts)
                out->first_ts = a;
            if (!out->have_wall || e > out->last_ts)
                out->last_ts = e;
            out->have_wall = true;
        }
    }
    rc = more < 0 ? -1 : 0;
    int64_t wall;
    if (rc == 0 && out->have_wall && __builtin_sub_overflow(out->last_ts, out->first_ts, &wall))
        rc = nx_error_set(err, "%s: the wall time from the first start_ts (%" PRId64 ") to the last end_ts (%" PRId64
                            ") exceeds the int64 range", table, out->first_ts, out->last_ts);
    goto done;
oom:
    nx_error_set(err, "%s: out of memory", table);
done:
    free(vb.span);
    free(vb.self);
    free(vb.span_ok);
    free(vb.self_ok);
    free(vb.keep);
    free(vb.group_keep);
    nx_profile_scan_close(s);
    return rc;
}

int nx_top_run(const char *profile_dir, const nx_top_options *o, nx_top *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    if (o->n_by == 0 || o->n_by > NX_TOP_MAX_KEYS)
        return nx_error_set(err, "top: 1 to %d key columns, not %zu", NX_TOP_MAX_KEYS, o->n_by);
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, o->table, &t, err);
    if (rc != 0)
        return rc;
    const nx_timeline_info *info = nx_timeline_find(o->table);
    out->self = info && info->nested;
    out->rows = nx_profile_table_num_rows(t);
    out->files = nx_profile_table_file_count(t);
    out->value = column_type(t, "duration_ns") == NXPQ_INT64                           ? NX_TOP_DURATION
                 : is_int(column_type(t, "start_ts")) && is_int(column_type(t, "end_ts")) ? NX_TOP_SPAN
                                                                                          : NX_TOP_COUNT;
    scan_plan *p = calloc(1, sizeof *p);
    nxpq_type types[NX_TOP_MAX_KEYS];
    nx_nesting_values *own = NULL;
    const nx_nesting_values *nest = o->nesting;
    if (!p) {
        rc = nx_error_set(err, "%s: out of memory", o->table);
        goto done;
    }
    if ((rc = plan(p, t, o, out, types, err)) != 0)
        goto done;
    if (p->kname_at >= 0 && (rc = nx_nki_source_open(profile_dir, &p->nki, err)) != 0)
        goto done;
    if (out->self && !nest) {
        rc = nx_nesting_open(profile_dir, o->table, &own, out->note, sizeof out->note, err);
        if (rc != 0) {
            rc = -1;
            goto done;
        }
        nest = own;
    }
    rc = -1;
    if (!(out->g = nx_group_by_new(types, o->n_by, err)) || aggregate(out, t, p, nest, o, err) != 0 ||
        nx_nesting_check(nest, o->table, err) != 0)
        goto done;
    int by = out->self ? 1 : out->value == NX_TOP_COUNT ? -1 : 0;
    rc = nx_group_by_sort(out->g, by, err);
done:
    if (p)
        for (size_t k = 0; k < NX_TOP_MAX_KEYS; k++) {
            free(p->virt[k].data);
            free(p->virt[k].offsets);
            free(p->virt[k].valid);
            free(p->virt[k].i64);
        }
    if (p)
        nx_nki_source_close(p->nki);
    free(p);
    nx_nesting_close(own);
    nx_profile_table_close(t);
    if (rc != 0) {
        nx_group_by_free(out->g);
        out->g = NULL;
    }
    return rc;
}

void nx_top_free(nx_top *t)
{
    nx_group_by_free(t->g);
    t->g = NULL;
}

/* nx_top_run checked that the difference fits. */
int64_t nx_top_wall(const nx_top *t) { return t->have_wall ? t->last_ts - t->first_ts : 0; }

static double pct(int64_t part, int64_t total) { return total ? 100.0 * (double)part / (double)total : 0.0; }

double nx_top_percent(const nx_top *t, const nx_group_stats *st)
{
    if (t->self)
        return pct(st->sum[1], nx_top_wall(t));
    nx_group_stats tot = nx_group_by_totals(t->g);
    return t->value != NX_TOP_COUNT ? pct(st->sum[0], tot.sum[0]) : pct(st->count, tot.count);
}

size_t nx_top_shown(const nx_top *t, uint64_t limit)
{
    size_t n = nx_group_by_count(t->g);
    return limit == 0 || limit > n ? n : (size_t)limit;
}

/* The groups' sums fit (group_by checks each and the totals) and none is
 * negative (times_not_negative), so every sum of some of them fits too. */
nx_group_stats nx_top_rest(const nx_top *t, size_t from)
{
    nx_group_stats o = {0};
    for (size_t i = from; i < nx_group_by_count(t->g); i++) {
        const nx_group_stats *st = nx_group_by_stats(t->g, i);
        o.count += st->count;
        for (int j = 0; j < NX_GROUP_SUMS; j++) {
            o.sum[j] += st->sum[j];
            o.n_values[j] += st->n_values[j];
        }
    }
    return o;
}

const char *nx_top_default_table(const char *profile_dir)
{
    return nx_profile_is_system(profile_dir) ? "SystemProfileEvents" : "Instruction";
}

const char *nx_top_default_by(const char *table)
{
    return strcmp(table, "SystemProfileEvents") == 0 ? "name" : "engine,opcode";
}
