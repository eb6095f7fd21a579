/*
 * api_usage.c — GET /api/profiles/<name>/usage?tables=DmaUsage,HbmUsage,SbufUsage,PsumUsage,
 * CpuUsage,HostMemUsage,SystemProfileHbmUsage,PendingDma&start=S&end=E&width=W: the utilisation lanes
 * of query/usage.h written as JSON (docs/api.md).
 *
 * Parameters: tables (default "DmaUsage,HbmUsage", what the parameter meant before the
 * memory tables existed; unknown or repeated -> 400), start, end, width (1..10000).
 * Each series is {"table", its key columns by name (a number, a string or null), "key"
 * (labelled lanes: the label, or null), "value", "unit", "before" (lanes with one:
 * {"t": timestamp - S, "v": value} or null), "t": [timestamp - S, ...], "v": [value, ...]};
 * offsets that do not fit int64 (windows wider than 2^63 ns) are decimal strings, like
 * every integer beyond 2^53; INT64 values are JSON integers, the others doubles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/usage.h"
#include "server/api_internal.h"

static void json_val(nx_strbuf *b, nx_usage_value v, bool is_int)
{
    if (is_int)
        nx_json_put_i64(b, v.i, true);
    else
        nx_json_put_f64(b, v.f);
}

static void json_series(nx_strbuf *b, const nx_usage_series *s, int64_t start)
{
    const nx_usage_lane *l = s->lane;
    nx_strbuf_puts(b, "{\"table\":");
    nx_json_put_string(b, l->table, strlen(l->table));
    for (size_t j = 0; j < NX_USAGE_MAX_KEYS && l->keys[j]; j++) {
        const nx_usage_key *k = &s->key[j];
        nx_strbuf_printf(b, ",\"%s\":", l->keys[j]);
        if (k->null)
            nx_strbuf_puts(b, "null");
        else if (k->s)
            nx_json_put_string(b, k->s, k->len);
        else
            nx_json_put_i64(b, k->i, true);
    }
    if (s->labelled) {
        nx_strbuf_puts(b, ",\"key\":");
        if (s->label)
            nx_json_put_string(b, s->label, strlen(s->label));
        else
            nx_strbuf_puts(b, "null");
    }
    nx_strbuf_printf(b, ",\"value\":\"%s\",\"unit\":\"%s\"", l->value, l->unit);
    if (l->before) {
        nx_strbuf_puts(b, ",\"before\":");
        if (s->has_before) {
            nx_strbuf_puts(b, "{\"t\":");
            nx_json_i128(b, (__int128)s->before_t - start);
            nx_strbuf_puts(b, ",\"v\":");
            json_val(b, s->before_v, s->is_int);
            nx_strbuf_putc(b, '}');
        } else {
            nx_strbuf_puts(b, "null");
        }
    }
    nx_strbuf_puts(b, ",\"t\":");
    nx_json_time_offsets(b, s->t, s->n, start);
    nx_strbuf_puts(b, ",\"v\":[");
    for (size_t q = 0; q < s->n; q++) {
        if (q)
            nx_strbuf_putc(b, ',');
        json_val(b, s->v[q], s->is_int);
    }
    nx_strbuf_puts(b, "]}");
}

static bool is_usage_table(const char *name) { return nx_usage_lane_find(name) != NULL; }

enum MHD_Result nx_api_usage(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char buf[160]; /* all eight names with commas: 92 bytes */
    const char *list[NX_USAGE_LANES];
    size_t n_list;
    if (nx_api_tables_param(r, "DmaUsage,HbmUsage", is_usage_table,
                            "usage (DmaUsage, HbmUsage, SbufUsage, PsumUsage, CpuUsage, HostMemUsage, "
                            "SystemProfileHbmUsage, PendingDma)",
                            buf, sizeof buf, list, NX_USAGE_LANES, &n_list, &res) < 0)
        return res;
    int64_t start, end, width;
    if (nx_api_window_params(r, 0, &start, &end, &width, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_usage u;
    nx_error err = {0};
    int rc = nx_usage_read(dir, list, n_list, start, end, (uint32_t)width, &u, &err);
    free(dir);
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_api_window_head(&b, start, end, width);
    nx_strbuf_puts(&b, ",\"series\":[");
    for (size_t i = 0; i < u.n; i++) {
        if (i)
            nx_strbuf_putc(&b, ',');
        json_series(&b, &u.series[i], start);
    }
    nx_strbuf_puts(&b, "]}");
    nx_usage_free(&u);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
