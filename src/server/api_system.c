/*
 * api_system.c — GET /api/profiles/<name>/summary of a system profile (docs/api.md):
 * the answers of query/system_summary.h (wall time, busy time per track, the top
 * operators, one entry per DeviceProfileList row with facts read from that device
 * profile's tables) written as JSON. This file only formats: every value comes from
 * nx_system_summary_read, and the name a device profile is served under from
 * nx_api_device_open_name (the listing's rule).
 *
 * The fields and their names are those of `nxprof summary --format json` on a system
 * profile (src/cli/cmd_summary.c), less "profile" (a path), "dir" and
 * "percent_of_wall", plus each device profile's "open"; "devices" and "steps" are
 * query/device_stats.h's own writer's, with integers beyond 2^53 as strings. A
 * system profile without SystemProfileEvents answers with no events, a null wall,
 * empty lists and null device_profiles.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query/device_stats.h"
#include "query/system_summary.h"
#include "server/api_internal.h"

static void json_opt_i64(nx_strbuf *b, bool ok, int64_t v)
{
    if (ok)
        nx_json_put_i64(b, v, true);
    else
        nx_strbuf_puts(b, "null");
}

static void json_opt_f64(nx_strbuf *b, const nx_opt_f64 *x)
{
    if (!x->ok)
        nx_strbuf_puts(b, "null");
    else if (x->is_double)
        nx_json_put_f64(b, x->v);
    else
        nx_json_put_f32(b, (float)x->v);
}

static void json_opt_str(nx_strbuf *b, const char *s)
{
    if (s)
        nx_json_put_string(b, s, strlen(s));
    else
        nx_strbuf_puts(b, "null");
}

/* Appends the device profiles array (null without a DeviceProfileList). -1 when out
 * of memory. */
static int devices_json(nx_api_req *r, const char *name, const char *dir, const nx_system_summary *s, nx_strbuf *b)
{
    if (!s->have_device_list) {
        nx_strbuf_puts(b, "null");
        return 0;
    }
    nx_strbuf_putc(b, '[');
    for (size_t i = 0; i < s->n_devices; i++) {
        const nx_system_device *d = &s->devices[i];
        char *open = NULL;
        if (nx_api_device_open_name(r->srv, name, dir, d->name, d->dir, &open) < 0)
            return -1;
        nx_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        json_opt_str(b, d->name);
        nx_strbuf_puts(b, ",\"open\":");
        json_opt_str(b, open);
        free(open);
        nx_strbuf_puts(b, ",\"nc_id\":");
        json_opt_i64(b, d->nc_id_ok, d->nc_id);
        nx_strbuf_puts(b, ",\"physical_cores\":");
        json_opt_i64(b, d->cores_ok, d->physical_cores);
        nx_strbuf_puts(b, ",\"total_time_s\":");
        json_opt_f64(b, &d->total_time_s);
        nx_strbuf_puts(b, ",\"executions\":");
        json_opt_i64(b, !d->error, d->executions); /* an unreadable device profile has no count */
        static const char *const keys[] = {"mfu_estimated_percent", "hfu_estimated_percent", "mbu_estimated_percent",
                                           "cc_op_active_time_s"};
        const nx_opt_f64 *vals[] = {&d->mfu, &d->hfu, &d->mbu, &d->cc_active_s};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            nx_strbuf_printf(b, ",\"%s\":", keys[k]);
            json_opt_f64(b, vals[k]);
        }
        nx_strbuf_puts(b, ",\"error\":");
        if (d->error)
            nx_api_json_message(r->srv, b, d->error);
        else
            nx_strbuf_puts(b, "null");
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_putc(b, ']');
    return 0;
}

enum MHD_Result nx_api_system_summary(nx_api_req *r, const char *name, const char *dir, int64_t rank,
                                      bool profiler_rows)
{
    nx_system_summary s;
    nx_error err = {0};
    memset(&s, 0, sizeof s);
    int rc = nx_system_summary_read_rows(dir, rank, profiler_rows, &s, &err);
    if (rc < 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    bool have = rc == 0;
    nx_device_stats ds;
    if (nx_device_stats_read(dir, rank, &ds, &err) < 0) {
        if (have)
            nx_system_summary_free(&s);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    }
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"kind\":\"system\",\"rank\":");
    json_opt_i64(&b, rank >= 0, rank);
    nx_strbuf_printf(&b, ",\"events\":%" PRId64 ",\"wall\":", have ? s.events : 0);
    if (have && s.have_wall) {
        nx_strbuf_puts(&b, "{\"first_ts\":");
        nx_json_put_i64(&b, s.first_ts, true);
        nx_strbuf_puts(&b, ",\"last_ts\":");
        nx_json_put_i64(&b, s.last_ts, true);
        nx_strbuf_puts(&b, ",\"duration_ns\":");
        nx_json_put_i64(&b, s.wall_ns, true);
        nx_strbuf_putc(&b, '}');
    } else {
        nx_strbuf_puts(&b, "null");
    }
    nx_strbuf_puts(&b, ",\"threads\":[");
    for (size_t i = 0; have && i < s.n_busy; i++) {
        nx_strbuf_puts(&b, i ? ",{\"thread\":" : "{\"thread\":");
        json_opt_str(&b, s.busy[i].track);
        nx_strbuf_puts(&b, ",\"busy_ns\":");
        nx_json_put_i64(&b, s.busy[i].busy_ns, true);
        nx_strbuf_puts(&b, ",\"top_level_events\":");
        nx_json_put_i64(&b, s.busy[i].top_level, true);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "],\"ranks\":[");
    for (size_t i = 0; have && i < s.n_ranks; i++) {
        const nx_system_rank *k = &s.ranks[i];
        nx_strbuf_printf(&b, "%s{\"rank\":%" PRId64 ",\"events\":%" PRId64 ",\"first_ts\":", i ? "," : "", k->rank,
                         k->events);
        nx_json_put_i64(&b, k->first_ts, true);
        nx_strbuf_puts(&b, ",\"last_ts\":");
        nx_json_put_i64(&b, k->last_ts, true);
        nx_strbuf_puts(&b, ",\"busy_ns\":");
        nx_json_put_i64(&b, k->busy_ns, true);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "],\"top_operators\":[");
    for (size_t i = 0; have && i < s.n_top; i++) {
        const nx_system_operator *o = &s.top[i];
        nx_strbuf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        json_opt_str(&b, o->name);
        nx_strbuf_puts(&b, ",\"count\":");
        nx_json_put_i64(&b, o->count, true);
        nx_strbuf_puts(&b, ",\"sum_duration_ns\":");
        json_opt_i64(&b, !o->sum_null, o->sum_ns);
        nx_strbuf_puts(&b, ",\"sum_self_ns\":");
        json_opt_i64(&b, !o->self_null, o->self_ns);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "],");
    nx_device_stats_json(&ds, true, &b);
    nx_device_stats_free(&ds);
    nx_strbuf_puts(&b, ",\"device_profiles\":");
    if (have)
        rc = devices_json(r, name, dir, &s, &b);
    else
        nx_strbuf_puts(&b, "null");
    nx_strbuf_puts(&b, ",\"note\":");
    json_opt_str(&b, have && s.note[0] ? s.note : NULL);
    nx_strbuf_putc(&b, '}');
    if (have)
        nx_system_summary_free(&s);
    if (rc < 0) {
        nx_strbuf_free(&b);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
