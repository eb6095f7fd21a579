/* track_labels.c — framework thread tracks labelled from their first event (rules in track_labels.h). */
#include "query/track_labels.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/thread_label.h"
#include "query/engine/window.h"

static bool is_thread_track(const nx_track_entry *e)
{
    return e->has_parts && e->pid.ok && e->tid.ok && !e->nc.ok && e->count > 0;
}

/* Row r of the window's batch, when it is a framework event: e's labels and
 * sort keys from it (none when its trace named nothing) and 1; 0 when it is a
 * runtime event (a thread track may hold both); -1 when out of memory. */
static int take_row(nx_track_entry *e, const nxpq_batch *b, size_t r)
{
    const nxpq_column_data *js = &b->columns[0], *src = &b->columns[1];   /* nx_thread_label_columns' order */
    if ((src->valid && !src->valid[r]) || src->offsets[r + 1] - src->offsets[r] != 9 ||
        memcmp(src->data + src->offsets[r], "framework", 9) != 0)
        return 0;
    if (js->valid && !js->valid[r])
        return 1;
    const char *json = js->data + js->offsets[r];
    size_t len = (size_t)(js->offsets[r + 1] - js->offsets[r]);
    char proc[NX_THREAD_PART_MAX], thread[NX_THREAD_PART_MAX];
    if (!nx_thread_label_parts(json, len, e->pid.i, e->tid.i, e->worker.ok ? e->worker.i : -1, proc, thread))
        return 1;
    nx_thread_sort_keys(json, len, e->pid.i, e->tid.i, &e->process_sort, &e->thread_sort);
    e->process_label = strdup(proc);
    e->thread_label = strdup(thread);
    e->labelled = true;
    return e->process_label && e->thread_label ? 1 : -1;
}

/* Track e's first framework event, read through a window: pruned to the
 * track's first start when `first_only` (the cheap, common case: the track
 * starts with a framework event), else over the track's whole extent.
 * 1 found, 0 not found, -1 with err. */
static int label_from(nx_profile_table *t, nx_track_entry *e, bool first_only, nx_error *err)
{
    nx_profile_range at = {.column = "start_ts", .min = e->first_ts, .max = e->first_ts};
    nx_window_options wo = {.start = e->first_ts, .end = first_only ? e->first_ts : e->last_ts,
                            .columns = nx_thread_label_columns, .n_columns = 4, .ranges = first_only ? &at : NULL,
                            .n_ranges = first_only};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        return -1;
    nx_window_batch b;
    int more, got = 0;
    while (got == 0 && (more = nx_window_next(w, &b, err)) > 0) {
        for (size_t k = 0; got == 0 && k < b.n_rows; k++) {
            size_t len;
            const char *name = nx_window_track_name(w, b.track[k], &len);
            if ((first_only && b.start[k] != e->first_ts) || len != e->name_len || memcmp(name, e->name, len) != 0)
                continue;
            got = take_row(e, b.batch, b.rows[k]);
        }
    }
    nx_window_close(w);
    if (got < 0)
        return nx_error_set(err, "SystemProfileEvents: out of memory");
    return got ? 1 : more < 0 ? -1 : 0;
}

static int label_one(nx_profile_table *t, nx_track_entry *e, nx_error *err)
{
    int got = label_from(t, e, true, err);
    return got == 0 ? (label_from(t, e, false, err) < 0 ? -1 : 0) : got < 0 ? -1 : 0;
}

int nx_track_labels_read(const char *profile_dir, nx_track_entry *e, size_t n, nx_error *err)
{
    size_t todo = 0;
    for (size_t i = 0; i < n; i++)
        todo += is_thread_track(&e[i]);
    if (todo == 0)
        return 0;
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, "SystemProfileEvents", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc == 0 && !nx_thread_label_columns_ok(t)) {   /* written by another tool: no labels */
        nx_profile_table_close(t);
        return 0;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (is_thread_track(&e[i]))
            rc = label_one(t, &e[i], err);
    nx_profile_table_close(t);
    return rc;
}
