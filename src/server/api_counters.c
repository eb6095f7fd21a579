/*
 * api_counters.c — GET /api/profiles/<name>/counters?start=S&end=E&width=W: the
 * framework counter lanes of query/counter_lanes.h (memory per device, Chrome
 * counters) written as JSON (docs/api.md).
 *
 * Parameters: start, end, width (1..10000), all required. Each lane is {"kind"
 * ("memory" or "counter"), "label", "worker_gid", then "device_type" and
 * "device_id" (memory) or "process_id" and "name" (counter), "unit" ("bytes" or
 * null), "series": [{"name", "before": {"t": timestamp - S, "v"} or null, "t":
 * [timestamp - S, ...], "v": [value, ...]}]}; key parts are numbers or null,
 * offsets beyond 2^53 decimal strings (nx_json_i128), values doubles.
 * Over the query memory budget -> 503, any other failure -> 500, naming the table.
 */
#include <stdlib.h>
#include <string.h>

#include "query/counter_lanes.h"
#include "server/api_internal.h"

static void json_key(nx_strbuf *b, const char *name, nx_counter_key k)
{
    nx_strbuf_printf(b, ",\"%s\":", name);
    if (k.null)
        nx_strbuf_puts(b, "null");
    else
        nx_json_put_i64(b, k.v, true);
}

static void json_series(nx_strbuf *b, const nx_counter_series *s, int64_t start)
{
    nx_strbuf_puts(b, "{\"name\":");
    nx_json_put_cstr(b, s->name);
    nx_strbuf_puts(b, ",\"before\":");
    if (s->has_before) {
        nx_strbuf_puts(b, "{\"t\":");
        nx_json_i128(b, (__int128)s->before_t - start);
        nx_strbuf_puts(b, ",\"v\":");
        nx_json_put_f64(b, s->before_v);
        nx_strbuf_putc(b, '}');
    } else {
        nx_strbuf_puts(b, "null");
    }
    nx_strbuf_puts(b, ",\"t\":");
    nx_json_time_offsets(b, s->t, s->n, start);
    nx_strbuf_puts(b, ",\"v\":[");
    for (size_t q = 0; q < s->n; q++) {
        if (q)
            nx_strbuf_putc(b, ',');
        nx_json_put_f64(b, s->v[q]);
    }
    nx_strbuf_puts(b, "]}");
}

static void json_lane(nx_strbuf *b, const nx_counter_lane *l, int64_t start)
{
    const nx_counter_kind_info *k = nx_counter_kind_at(l->kind);
    nx_strbuf_puts(b, "{\"kind\":");
    nx_json_put_cstr(b, k->kind);
    nx_strbuf_puts(b, ",\"label\":");
    nx_json_put_cstr(b, l->label);
    json_key(b, "worker_gid", l->worker_gid);
    if (l->kind == NX_COUNTER_MEMORY) {
        json_key(b, "device_type", l->device_type);
        json_key(b, "device_id", l->device_id);
    } else {
        json_key(b, "process_id", l->process_id);
        nx_strbuf_puts(b, ",\"name\":");
        nx_json_put_cstr(b, l->name);
    }
    nx_strbuf_puts(b, ",\"unit\":");
    if (k->unit)
        nx_json_put_cstr(b, k->unit);
    else
        nx_strbuf_puts(b, "null");
    nx_strbuf_puts(b, ",\"series\":[");
    for (size_t s = 0; s < l->n_series; s++) {
        if (s)
            nx_strbuf_putc(b, ',');
        json_series(b, &l->series[s], start);
    }
    nx_strbuf_puts(b, "]}");
}

enum MHD_Result nx_api_counters(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    int64_t start, end, width;
    if (nx_api_window_params(r, 0, &start, &end, &width, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_counter_lanes c;
    nx_error err = {0};
    int rc = nx_counter_lanes_read(dir, start, end, (uint32_t)width, &c, &err);
    free(dir);
    if (rc != 0)
        return nx_api_query_failed(r, rc, &err);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_api_window_head(&b, start, end, width);
    nx_strbuf_puts(&b, ",\"lanes\":[");
    for (size_t i = 0; i < c.n; i++) {
        nx_strbuf_puts(&b, i ? ",\n" : "\n");
        json_lane(&b, &c.lanes[i], start);
    }
    nx_strbuf_puts(&b, "]}");
    nx_counter_lanes_free(&c);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
