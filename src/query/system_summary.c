/*
 * system_summary.c — the summary of a system profile (see system_summary.h):
 * top.h for the wall time and the operators, one window pass over
 * SystemProfileEvents for the busy time per track, and a few first rows of
 * each device profile's tables.
 */
#include "query/system_summary.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/device_activity.h"
#include "query/engine/nesting_values.h"
#include "profile/profile_layout.h"
#include "profile/profile_table.h"
#include "profile/thread_label.h"
#include "query/top.h"
#include "query/engine/window.h"
#include "util/text.h"

#define EVENTS "SystemProfileEvents"

/* ----------------------------------------------------------- busy time -- */

typedef struct busy_acc {
    char *label;                 /* the track's thread label (profile/thread_label.h), or NULL */
    bool label_read;
    bool open;
    int64_t start, end;              /* the union's current interval */
    int64_t busy, top_level;
    int64_t rows, first, last;       /* all its events (every depth) and their extent */
    int64_t rank;                    /* its rows' worker_gid, -1 when null */
} busy_acc;

static int cmp_busy(const void *pa, const void *pb)
{
    const nx_system_busy *a = pa, *b = pb;
    if (a->busy_ns != b->busy_ns)
        return a->busy_ns > b->busy_ns ? -1 : 1;
    return strcmp(a->track, b->track);
}

/* Adds the open interval to the busy time: false when that does not fit an
 * int64 (start_ts and end_ts of a file written by another tool). */
static bool busy_close(busy_acc *a)
{
    int64_t d;
    bool ok = !a->open || (!__builtin_sub_overflow(a->end, a->start, &d) &&
                           !__builtin_add_overflow(a->busy, d, &a->busy));
    a->open = false;
    return ok;
}

/* Top-level events arrive per track in start order: an interval that starts
 * after the current one ends closes it. NULL, or what is wrong with the
 * event (an end before its start would make the busy time shrink). */
static const char *busy_add(busy_acc *a, int64_t start, int64_t end)
{
    if (end < start)
        return "its end_ts is before its start_ts";
    a->top_level++;
    if (a->open && start <= a->end) {
        if (end > a->end)
            a->end = end;
        return NULL;
    }
    if (!busy_close(a))
        return "the busy time of its thread exceeds the int64 range";
    a->open = true;
    a->start = start;
    a->end = end;
    return NULL;
}

/* The label of a's track from row r of the batch (its first top-level event):
 * false when out of memory. */
static bool read_label(busy_acc *a, const nxpq_batch *b, size_t r)
{
    a->label_read = true;
    nx_thread_label_cols c = {&b->columns[0], &b->columns[1], &b->columns[2], &b->columns[3], &b->columns[4]};
    char buf[NX_THREAD_LABEL_MAX + 1];
    size_t n = nx_thread_label_of_row(&c, r, buf);
    return n == 0 || (a->label = strdup(buf)) != NULL;
}

/* Row r's worker_gid (the batch's column 4 when the label columns are
 * projected), -1 when null or not projected. */
static int64_t row_rank(const nxpq_batch *b, bool labels, size_t r)
{
    if (!labels)
        return -1;
    const nxpq_column_data *c = &b->columns[4];
    if (c->valid && !c->valid[r])
        return -1;
    return c->type == NXPQ_INT32 ? c->values.i32[r] : c->values.i64[r];
}

/* Whether row r (at `depth`) counts toward its track's busy time: on a device
 * (device_activity.h), its kernels, memcpys and memsets at any depth, never
 * the annotations drawn on the device's track (a ProfilerStep there spans the
 * kernels: counting it would count idle time as busy); elsewhere its top-level
 * events. Without the label columns, the top-level rule. */
static bool counts_busy(const nxpq_batch *b, bool labels, size_t r, uint32_t depth)
{
    if (!labels)
        return depth == 0;
    nx_activity_input in;
    nx_activity_input_of(NULL, &b->columns[1], &b->columns[0], r, &in);
    nx_activity a;
    nx_activity_classify(&in, &a);
    return a.device_type == NX_DEVICE_NONE ? depth == 0 : nx_activity_is_busy(a.kind);
}

static int cmp_rank(const void *pa, const void *pb)
{
    const nx_system_rank *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* out->ranks from the tracks' accumulators: one entry per track with a rank,
 * sorted by rank, then those of one rank merged (n log n in the tracks, however
 * many ranks). -1 with err when out of memory or a rank's busy time exceeds int64. */
static int ranks_from_tracks(const busy_acc *acc, size_t n_acc, nx_system_summary *out, nx_error *err)
{
    if (!(out->ranks = calloc(n_acc + 1, sizeof *out->ranks)))
        return nx_error_set(err, "%s: out of memory", EVENTS);
    size_t n = 0;
    for (size_t i = 0; i < n_acc; i++)
        if (acc[i].rank >= 0 && acc[i].rows > 0)
            out->ranks[n++] = (nx_system_rank){acc[i].rank, acc[i].rows, acc[i].first, acc[i].last, acc[i].busy};
    qsort(out->ranks, n, sizeof *out->ranks, cmp_rank);
    for (size_t i = 0; i < n; i++) {
        const nx_system_rank *t = &out->ranks[i];
        nx_system_rank *x = out->n_ranks ? &out->ranks[out->n_ranks - 1] : NULL;
        if (!x || x->rank != t->rank) {
            out->ranks[out->n_ranks++] = *t;
            continue;
        }
        x->events += t->events;   /* row counts: no overflow */
        if (__builtin_add_overflow(x->busy_ns, t->busy_ns, &x->busy_ns))
            return nx_error_set(err, "%s: the busy time of rank %" PRId64 " exceeds the int64 range", EVENTS,
                                  x->rank);
        x->first_ts = t->first_ts < x->first_ts ? t->first_ts : x->first_ts;
        x->last_ts = t->last_ts > x->last_ts ? t->last_ts : x->last_ts;
    }
    return 0;
}

static int read_busy(const char *dir, const nx_nesting_values *nest, int64_t rank, nx_system_summary *out,
                     nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, EVENTS, &t, err);
    if (rc != 0)
        return rc;
    rc = -1;
    busy_acc *acc = NULL;
    size_t n_acc = 0;
    bool labels = nx_thread_label_columns_ok(t);
    nx_window_options wo = {.start = INT64_MIN, .end = INT64_MAX, .columns = labels ? nx_thread_label_columns : NULL,
                            .n_columns = labels ? NX_THREAD_LABEL_COLUMNS : 0};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        goto done;
    nx_window_batch b;
    int more;
    while ((more = nx_window_next(w, &b, err)) > 0) {
        int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
        for (size_t k = 0; k < b.n_rows; k++) {
            int64_t worker = row_rank(b.batch, labels, b.rows[k]);
            if (rank >= 0 && worker != rank)
                continue;
            uint32_t tr = b.track[k];
            if (tr >= n_acc) {
                size_t n = (size_t)tr + 1;
                busy_acc *g = realloc(acc, n * sizeof *g);
                if (!g)
                    goto oom;
                memset(g + n_acc, 0, (n - n_acc) * sizeof *g);
                acc = g;
                n_acc = n;
            }
            busy_acc *a = &acc[tr];
            if (a->rows++ == 0) {
                a->rank = worker;
                a->first = b.start[k];
                a->last = b.end[k];
            }
            a->first = b.start[k] < a->first ? b.start[k] : a->first;
            a->last = b.end[k] > a->last ? b.end[k] : a->last;
            uint32_t depth;
            int64_t self;
            if (!nx_nesting_get(nest, base + b.rows[k], &depth, &self) ||
                !counts_busy(b.batch, labels, b.rows[k], depth))
                continue;
            if (labels && !acc[tr].label_read && !read_label(&acc[tr], b.batch, b.rows[k]))
                goto oom;
            const char *why = busy_add(&acc[tr], b.start[k], b.end[k]);
            if (why) {
                nx_error_set(err, "%s: row %" PRId64 " (start_ts %" PRId64 ", end_ts %" PRId64 "): %s", EVENTS,
                               base + b.rows[k], b.start[k], b.end[k], why);
                goto done;
            }
        }
    }
    if (more < 0)
        goto done;
    if (!(out->busy = calloc(n_acc + 1, sizeof *out->busy)))
        goto oom;
    for (size_t i = 0; i < n_acc; i++) {
        if (!acc[i].top_level)
            continue;
        size_t len;
        const char *name = nx_window_track_name(w, (uint32_t)i, &len);
        if (!busy_close(&acc[i])) {
            nx_error_set(err, "%s: the busy time of thread %.*s exceeds the int64 range", EVENTS, (int)len, name);
            goto done;
        }
        nx_system_busy *x = &out->busy[out->n_busy];
        if (!(x->track = acc[i].label ? strdup(acc[i].label) : nx_text_dup(name, len)))
            goto oom;
        x->busy_ns = acc[i].busy;
        x->top_level = acc[i].top_level;
        x->percent_of_wall = out->wall_ns ? 100.0 * (double)x->busy_ns / (double)out->wall_ns : 0.0;
        out->n_busy++;
    }
    qsort(out->busy, out->n_busy, sizeof *out->busy, cmp_busy);
    if (ranks_from_tracks(acc, n_acc, out, err) != 0)
        goto done;
    rc = 0;
    goto done;
oom:
    nx_error_set(err, "%s: out of memory", EVENTS);
done:
    for (size_t i = 0; i < n_acc; i++)
        free(acc[i].label);
    free(acc);
    nx_window_close(w);
    nx_profile_table_close(t);
    return rc;
}

/* ----------------------------------------------------------- operators -- */

static int read_top(const char *dir, const nx_nesting_values *nest, int64_t rank, bool profiler_rows,
                    nx_system_summary *out, nx_error *err)
{
    static const char *const by[] = {"name"};
    nx_top_options o = {.table = EVENTS, .by = by, .n_by = 1, .nesting = nest, .has_rank = rank >= 0, .rank = rank,
                        .profiler_rows = profiler_rows};
    nx_top r;
    int rc = nx_top_run(dir, &o, &r, err);
    if (rc == NX_TOP_BAD_KEY)
        rc = -1;   /* SystemProfileEvents without a usable name column */
    if (rc != 0)
        return rc;
    out->events = nx_group_by_totals(r.g).count + r.profiler_left_out;
    out->have_wall = r.have_wall;
    out->first_ts = r.first_ts;
    out->last_ts = r.last_ts;
    out->wall_ns = nx_top_wall(&r);
    size_t n = nx_group_by_count(r.g);
    for (size_t i = 0; i < n && i < NX_SYSTEM_TOP_OPERATORS; i++) {
        const nx_group_stats *st = nx_group_by_stats(r.g, i);
        nx_group_key key;
        nx_group_by_key(r.g, i, 0, &key);
        nx_system_operator *x = &out->top[out->n_top];
        *x = (nx_system_operator){.count = st->count,
                                  .sum_ns = st->sum[0],
                                  .self_ns = st->sum[1],
                                  .sum_null = st->n_values[0] == 0,
                                  .self_null = st->n_values[1] == 0};
        if (!key.null && !(x->name = nx_text_dup(key.s, key.len))) {
            nx_top_free(&r);
            return nx_error_set(err, "%s: out of memory", EVENTS);
        }
        out->n_top++;
    }
    nx_top_free(&r);
    return 0;
}

/* ----------------------------------------------------- device profiles -- */

/* One named column of the first row of a table: an integer or a float. */
typedef struct row0_cell {
    const char *name;
    bool ok, is_double;
    int64_t i;
    double f;
} row0_cell;

/* Reads cells of the first row of `table`: each present numeric column's value
 * (ok false when the column is missing, null or of another type). 0,
 * NX_PROFILE_TABLE_ABSENT, or -1 with err. */
static int read_row0(const char *dir, const char *table, row0_cell *cells, size_t n, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, table, &t, err);
    if (rc != 0)
        return rc;
    const char *cols[8];
    size_t at[8], n_cols = 0;
    for (size_t i = 0; i < n && n_cols < 8; i++) {
        int c = nx_profile_table_find_column(t, cells[i].name);
        nxpq_type ty = c < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)c)->type;
        cells[i].ok = false;
        if (ty != NXPQ_INT32 && ty != NXPQ_INT64 && ty != NXPQ_FLOAT && ty != NXPQ_DOUBLE)
            continue;
        at[n_cols] = i;
        cols[n_cols++] = cells[i].name;
    }
    rc = 0;
    if (n_cols == 0)
        goto done;
    nx_profile_scan_options so = {.columns = cols, .n_columns = n_cols, .batch_rows = 16};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    const nxpq_batch *b;
    int more = s ? nx_profile_scan_next(s, &b, err) : -1;
    for (size_t j = 0; more > 0 && j < n_cols; j++) {
        const nxpq_column_data *c = &b->columns[j];
        row0_cell *x = &cells[at[j]];
        if (c->valid && !c->valid[0])
            continue;
        x->ok = true;
        switch (c->type) {
        case NXPQ_INT32: x->i = c->values.i32[0]; x->f = (double)x->i; break;
        case NXPQ_INT64: x->i = c->values.i64[0]; x->f = (double)x->i; break;
        case NXPQ_FLOAT: x->f = c->values.f32[0]; break;
        default: x->f = c->values.f64[0]; x->is_double = true; break;
        }
    }
    nx_profile_scan_close(s);
    rc = more < 0 ? -1 : 0;
done:
    nx_profile_table_close(t);
    return rc;
}

static nx_opt_f64 opt(const row0_cell *c) { return (nx_opt_f64){c->ok, c->is_double, c->f}; }

/* Fills d from its device profile's tables; a problem becomes d->error. -1 only
 * when out of memory. */
static int read_device(nx_system_device *d)
{
    nx_error err = {0};
    char why[700] = "";
    struct stat st;
    if (stat(d->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, sizeof why, "device profile '%s' not found", d->name);
        goto fail;
    }
    row0_cell meta[] = {{"num_physical_cores", false, false, 0, 0}};
    int rc = read_row0(d->dir, "Metadata", meta, 1, &err);
    if (rc != 0) {
        snprintf(why, sizeof why, "device profile '%s': %s", d->name, rc > 0 ? "no Metadata table" : err.msg);
        goto fail;
    }
    d->cores_ok = meta[0].ok;
    d->physical_cores = meta[0].i;
    row0_cell sum[] = {{"total_time", false, false, 0, 0},
                       {"mfu_estimated_percent", false, false, 0, 0},
                       {"hfu_estimated_percent", false, false, 0, 0},
                       {"mbu_estimated_percent", false, false, 0, 0},
                       {"cc_op_active_time", false, false, 0, 0}};
    rc = read_row0(d->dir, "Summary", sum, 5, &err);
    if (rc < 0) {
        snprintf(why, sizeof why, "device profile '%s': %s", d->name, err.msg);
        goto fail;
    }
    d->total_time_s = opt(&sum[0]);
    d->mfu = opt(&sum[1]);
    d->hfu = opt(&sum[2]);
    d->mbu = opt(&sum[3]);
    d->cc_active_s = opt(&sum[4]);
    nx_profile_table *t = NULL;
    rc = nx_profile_table_open(d->dir, "ExecutionInfo", &t, &err);
    if (rc < 0) {
        snprintf(why, sizeof why, "device profile '%s': %s", d->name, err.msg);
        goto fail;
    }
    d->executions = t ? nx_profile_table_num_rows(t) : 0;
    nx_profile_table_close(t);
    return 0;
fail:
    d->cores_ok = false;
    d->executions = 0;
    d->total_time_s = d->mfu = d->hfu = d->mbu = d->cc_active_s = (nx_opt_f64){false, false, 0};
    return (d->error = strdup(why)) ? 0 : -1;
}

static int read_devices(const char *dir, nx_system_summary *out, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, "DeviceProfileList", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    out->have_device_list = true;
    rc = -1;
    int64_t rows = nx_profile_table_num_rows(t);
    nx_profile_scan *s = NULL;
    if (nx_profile_table_find_column(t, "device_profile_name") < 0 ||
        nx_profile_table_column(t, (size_t)nx_profile_table_find_column(t, "device_profile_name"))->type !=
            NXPQ_STRING) {
        nx_error_set(err, "DeviceProfileList: no device_profile_name string column");
        goto done;
    }
    int nc = nx_profile_table_find_column(t, "nc_id");
    nxpq_type nct = nc < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)nc)->type;
    bool have_nc = nct == NXPQ_INT64 || nct == NXPQ_INT32;
    if (!(out->devices = calloc(rows > 0 ? (size_t)rows : 1, sizeof *out->devices)))
        goto oom;
    const char *cols[] = {"device_profile_name", "nc_id"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = have_nc ? 2 : 1};
    if (!(s = nx_profile_scan_open(t, &so, err)))
        goto done;
    const nxpq_batch *b;
    int more;
    while ((more = nx_profile_scan_next(s, &b, err)) > 0) {
        const nxpq_column_data *cn = &b->columns[0];
        for (size_t r = 0; r < b->n_rows && out->n_devices < (size_t)rows; r++) {
            nx_system_device *d = &out->devices[out->n_devices++];
            bool named = !cn->valid || cn->valid[r];
            d->name = named ? nx_text_dup(cn->data + cn->offsets[r], (size_t)(cn->offsets[r + 1] - cn->offsets[r]))
                            : strdup("");
            if (!d->name)
                goto oom;
            if (have_nc) {
                const nxpq_column_data *ci = &b->columns[1];
                d->nc_id_ok = !ci->valid || ci->valid[r];
                d->nc_id = ci->type == NXPQ_INT32 ? ci->values.i32[r] : ci->values.i64[r];
            }
            nx_error derr = {0};
            if (!(d->dir = nx_device_profile_dir(dir, d->name, &derr))) {
                if (!(d->error = strdup(derr.msg)))
                    goto oom;
                continue;
            }
            if (read_device(d) != 0)
                goto oom;
        }
    }
    rc = more < 0 ? -1 : 0;
    goto done;
oom:
    nx_error_set(err, "DeviceProfileList: out of memory");
done:
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    return rc;
}

/* ---------------------------------------------------------------- read -- */

int nx_system_summary_read(const char *dir, int64_t rank, nx_system_summary *out, nx_error *err)
{
    return nx_system_summary_read_rows(dir, rank, false, out, err);
}

int nx_system_summary_read_rows(const char *dir, int64_t rank, bool profiler_rows, nx_system_summary *out,
                                nx_error *err)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    nx_nesting_values *nest = NULL;
    int rc = nx_nesting_open(dir, EVENTS, &nest, out->note, sizeof out->note, err);
    if (rc != 0)
        return rc;
    if ((rc = read_top(dir, nest, rank, profiler_rows, out, err)) != 0 || (rc = read_busy(dir, nest, rank, out, err)) != 0 ||
        (rc = read_devices(dir, out, err)) != 0)
        rc = rc > 0 ? -1 : rc;   /* the table was there a moment ago */
    if (rc == 0)
        rc = nx_nesting_check(nest, EVENTS, err);
    nx_nesting_close(nest);
    if (rc != 0)
        nx_system_summary_free(out);
    return rc;
}

void nx_system_summary_free(nx_system_summary *s)
{
    for (size_t i = 0; i < s->n_busy; i++)
        free(s->busy[i].track);
    free(s->busy);
    free(s->ranks);
    for (size_t i = 0; i < s->n_top; i++)
        free(s->top[i].name);
    for (size_t i = 0; i < s->n_devices; i++) {
        free(s->devices[i].name);
        free(s->devices[i].dir);
        free(s->devices[i].error);
    }
    free(s->devices);
    memset(s, 0, sizeof *s);
}
