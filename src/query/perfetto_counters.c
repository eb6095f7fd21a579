/*
 * perfetto_counters.c — the counter tracks of the Perfetto export
 * (perfetto_internal.h): the utilisation lanes (usage.h: DMA, HBM, SBUF, PSUM,
 * CPU, host memory, device HBM) and the framework memory and counter lanes
 * (counter_lanes.h), each series a counter track under one top-level
 * "Counters" track, with the points the viewer's lanes are drawn from, at
 * NX_PF_COUNTER_WIDTH buckets over the window (a series' "before" sample, the
 * value in force at the window's start, first). One usage table is read at a
 * time, so memory is that table's series.
 *
 * Names: usage "<lane label> <label>" for a labelled series (CPU, host, device
 * HBM: "CPU (host) average", "Device HBM device 0 hbm 1"), "<lane label> core
 * <pcore_idx>" for the device tables; counter lanes "<lane label> <series>"
 * ("GPU 0 memory allocated").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/counter_lanes.h"
#include "query/perfetto_internal.h"
#include "query/usage.h"
#include "util/pb_write.h"

static void put_point(nx_pftrace *t, uint64_t track, int64_t ts, bool is_int, int64_t i, double d)
{
    nx_pftrace_event_begin(t, ts, NX_PF_COUNTER, track);
    if (is_int)
        nx_pbw_varint(&t->buf, NX_PF_TE_COUNTER_VALUE, (uint64_t)i);
    else
        nx_pbw_double(&t->buf, NX_PF_TE_DOUBLE_COUNTER_VALUE, d);
    nx_pftrace_event_end(t);
}

static uint64_t counter_track(nx_pftrace *t, uint64_t parent, int32_t rank, const char *name, const char *unit)
{
    nx_pftrack d = {.uuid = nx_pftrace_uuid(t), .parent = parent, .name = name, .rank = rank, .counter = true};
    if (unit && strcmp(unit, "bytes") == 0)
        d.unit = NX_PF_UNIT_BYTES;
    else
        d.unit_name = unit;
    nx_pftrace_track(t, &d);
    return d.uuid;
}

static void series_name(const nx_usage_series *s, char *out, size_t cap)
{
    if (s->labelled)
        snprintf(out, cap, "%s %s", s->lane->label, s->label ? s->label : "null");
    else if (s->key[0].null)
        snprintf(out, cap, "%s core null", s->lane->label);
    else
        snprintf(out, cap, "%s core %" PRId64, s->lane->label, s->key[0].i);
}

static int usage_tracks(nx_pftrace *t, uint64_t parent, int32_t *rank, const char *dir, int64_t start, int64_t end,
                        nx_error *err)
{
    for (size_t l = 0; nx_usage_lane_at(l); l++) {
        const char *table = nx_usage_lane_at(l)->table;
        nx_usage u;
        if (nx_usage_read(dir, &table, 1, start, end, NX_PF_COUNTER_WIDTH, &u, err) != 0)
            return -1;
        for (size_t k = 0; k < u.n; k++) {
            const nx_usage_series *s = &u.series[k];
            char name[512];
            series_name(s, name, sizeof name);
            uint64_t track = counter_track(t, parent, (*rank)++, name, s->lane->unit);
            if (s->has_before)
                put_point(t, track, s->before_t, s->is_int, s->before_v.i, s->before_v.f);
            for (size_t p = 0; p < s->n; p++)
                put_point(t, track, s->t[p], s->is_int, s->v[p].i, s->v[p].f);
            if (nx_pftrace_flush(t, false) < 0)
                break;
        }
        nx_usage_free(&u);
        if (t->failed) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory or write error in the Perfetto counters", table);
            return -1;
        }
    }
    return 0;
}

static int framework_tracks(nx_pftrace *t, uint64_t parent, int32_t *rank, const char *dir, int64_t start,
                            int64_t end, nx_error *err)
{
    nx_counter_lanes c;
    int rc = nx_counter_lanes_read(dir, start, end, NX_PF_COUNTER_WIDTH, &c, err);
    if (rc != 0)
        return -1;
    for (size_t l = 0; l < c.n && !t->failed; l++) {
        const nx_counter_lane *lane = &c.lanes[l];
        for (size_t k = 0; k < lane->n_series; k++) {
            const nx_counter_series *s = &lane->series[k];
            char name[640];
            snprintf(name, sizeof name, "%s %s", lane->label, s->name);
            uint64_t track = counter_track(t, parent, (*rank)++, name, nx_counter_kind_at(lane->kind)->unit);
            if (s->has_before)
                put_point(t, track, s->before_t, false, 0, s->before_v);
            for (size_t p = 0; p < s->n; p++)
                put_point(t, track, s->t[p], false, 0, s->v[p]);
            nx_pftrace_flush(t, false);
        }
    }
    nx_counter_lanes_free(&c);
    if (t->failed) {
        snprintf(err->msg, sizeof err->msg, "SystemProfileEvents: out of memory or write error in the Perfetto counters");
        return -1;
    }
    return 0;
}

int nx_pf_counters_write(nx_pftrace *t, const char *profile_dir, int64_t start, int64_t end, nx_error *err)
{
    int64_t first, last;
    nx_error span_err = {0};
    if (start == INT64_MIN || end == INT64_MAX) {   /* an open window: the profile's span bounds the buckets */
        if (nx_profile_span(profile_dir, &first, &last, &span_err) != 0)
            return 0;   /* no Metadata span: no samples table of ours is without one */
        start = start == INT64_MIN ? first : start;
        end = end == INT64_MAX ? last : end;
        if (end < start)
            return 0;
    }
    nx_pftrack root = {.uuid = nx_pftrace_uuid(t), .name = "Counters", .rank = 1000, .ordered_children = true};
    nx_pftrace_track(t, &root);
    int32_t rank = 0;
    if (usage_tracks(t, root.uuid, &rank, profile_dir, start, end, err) < 0 ||
        framework_tracks(t, root.uuid, &rank, profile_dir, start, end, err) < 0)
        return -1;
    return 0;
}
