/*
 * diff_totals.c — the device and step totals of a diff side by side (rules in
 * diff.h): each side's query/device_stats.h answer, sorted on the join key, then
 * one merge walk per list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/diff.h"
#include "util/int_ops.h"

/* Whether the key holds the rank: false when neither side has more than one. */
static bool ranks_differ(const nx_device_stats *s)
{
    for (size_t i = 1; i < s->n_devices; i++)
        if (s->devices[i].rank != s->devices[0].rank)
            return true;
    for (size_t i = 0; i < s->n_steps; i++)
        if (s->steps[i].rank != s->steps[0].rank || (s->n_devices && s->steps[i].rank != s->devices[0].rank))
            return true;
    return false;
}

static int dev_cmp(const nx_device_stat *a, const nx_device_stat *b, bool by_rank)
{
    int c = by_rank ? nx_cmp_i64(a->rank, b->rank) : 0;
    if (c == 0)
        c = nx_cmp_i64((int64_t)a->type, (int64_t)b->type);
    return c ? c : nx_cmp_i64(a->index, b->index);
}

static int step_cmp(const nx_step_stat *a, const nx_step_stat *b, bool by_rank)
{
    int c = by_rank ? nx_cmp_i64(a->rank, b->rank) : 0;
    return c ? c : nx_cmp_i64(a->step, b->step);
}

/* qsort's comparators, with the rank in the key (a side's own order always has it:
 * within one side the rank then only groups, whatever the join's key). */
static int dev_sort(const void *x, const void *y)
{
    return dev_cmp(x, y, true);
}

static int step_sort(const void *x, const void *y)
{
    int c = step_cmp(x, y, true);
    return c ? c : nx_cmp_i64(((const nx_step_stat *)x)->start_ns, ((const nx_step_stat *)y)->start_ns);
}

/* qsort, which must not see the NULL of an empty list. */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(v, n, size, cmp);
}

static int join_devices(nx_diff *d, bool by_rank, nx_error *err)
{
    nx_device_stats *a = &d->stats_a, *b = &d->stats_b;
    sort(a->devices, a->n_devices, sizeof *a->devices, dev_sort);
    sort(b->devices, b->n_devices, sizeof *b->devices, dev_sort);
    d->devices = calloc(a->n_devices + b->n_devices + 1, sizeof *d->devices);
    if (!d->devices) {
        snprintf(err->msg, sizeof err->msg, "diff: out of memory joining the devices");
        return -1;
    }
    size_t i = 0, j = 0;
    while (i < a->n_devices || j < b->n_devices) {
        int c = i == a->n_devices ? 1 : j == b->n_devices ? -1 : dev_cmp(&a->devices[i], &b->devices[j], by_rank);
        nx_diff_device *o = &d->devices[d->n_devices++];
        if (c <= 0) {
            o->in_a = true;
            o->a = a->devices[i++];
        }
        if (c >= 0) {
            o->in_b = true;
            o->b = b->devices[j++];
        }
    }
    return 0;
}

static int join_steps(nx_diff *d, bool by_rank, nx_error *err)
{
    nx_device_stats *a = &d->stats_a, *b = &d->stats_b;
    sort(a->steps, a->n_steps, sizeof *a->steps, step_sort);
    sort(b->steps, b->n_steps, sizeof *b->steps, step_sort);
    d->steps = calloc(a->n_steps + b->n_steps + 1, sizeof *d->steps);
    if (!d->steps) {
        snprintf(err->msg, sizeof err->msg, "diff: out of memory joining the steps");
        return -1;
    }
    size_t i = 0, j = 0;
    while (i < a->n_steps || j < b->n_steps) {
        int c = i == a->n_steps ? 1 : j == b->n_steps ? -1 : step_cmp(&a->steps[i], &b->steps[j], by_rank);
        nx_diff_step *o = &d->steps[d->n_steps++];
        if (c <= 0) {
            o->in_a = true;
            o->a = a->steps[i++];
        }
        if (c >= 0) {
            o->in_b = true;
            o->b = b->steps[j++];
        }
    }
    return 0;
}

/* One side's stats; a profile without SystemProfileEvents has none. */
static int read_side(const char *dir, nx_device_stats *s, nx_error *err)
{
    int rc = nx_device_stats_read(dir, -1, s, err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        memset(s, 0, sizeof *s);
        return 0;
    }
    return rc == 0 ? 0 : -1;
}

int nx_diff_totals(const char *a_dir, const char *b_dir, bool system, nx_diff *d, nx_error *err)
{
    if (!system)
        return 0;
    if (read_side(a_dir, &d->stats_a, err) < 0 || read_side(b_dir, &d->stats_b, err) < 0)
        return -1;
    bool by_rank = ranks_differ(&d->stats_a) || ranks_differ(&d->stats_b);
    if (join_devices(d, by_rank, err) < 0 || join_steps(d, by_rank, err) < 0)
        return -1;
    return 0;
}
