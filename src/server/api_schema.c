/*
 * api_schema.c — GET /api/schema (docs/api.md): the schema catalogue document of
 * `nxprof schema --format json` with one more top-level member, "viewer": what the
 * web viewer needs to know of the tables, written from the rules that hold it, so the
 * viewer never copies them:
 *   - "groups": profile/timeline_rules.h nx_timeline_group_at, in drawing order;
 *   - "timelines": per timeline table in drawing order (nx_timeline_view_at) its kind
 *     ("interval", or "point" without an end column), "nested", timing columns, group,
 *     track suffix, label fields (nx_timeline_labels) with their type ("string" or
 *     "integer"), colour_by, whether the export dialog offers it and under what name,
 *     search_fields and aggregate_by (the default first);
 *   - "usage": query/usage.h's lanes in drawing order;
 *   - "counter_lanes": the lane kinds of /counters (query/counter_lanes.h), in
 *     drawing order, with their unit and fixed series;
 *   - "limits": "max_width", the largest width= of the windowed endpoints
 *     (NX_API_MAX_WIDTH);
 *   - "names": "devices_dir", the folder of a system profile that holds its device
 *     profiles, so a nested device profile is named "<S>/<devices_dir>/<D>"
 *     (profile/profile_layout.h NX_LAYOUT_DEVICES_DIR).
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_layout.h"
#include "profile/timeline_rules.h"
#include "query/counter_lanes.h"
#include "query/usage.h"
#include "schema/schema_emit.h"
#include "server/api_internal.h"

static void json_cstr(nx_strbuf *b, const char *s)
{
    if (s)
        nx_json_put_string(b, s, strlen(s));
    else
        nx_strbuf_puts(b, "null");
}

/* A JSON array of names[0..n). */
static void json_names(nx_strbuf *b, const char *const *names, size_t n)
{
    nx_strbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        json_cstr(b, names[i]);
    }
    nx_strbuf_putc(b, ']');
}

static size_t count_names(const char *const *names)
{
    size_t n = 0;
    while (names && names[n])
        n++;
    return n;
}

static void json_timeline(nx_strbuf *b, const nx_timeline_view *v)
{
    const nx_timeline_info *ti = nx_timeline_find(v->table);
    nx_strbuf_puts(b, "{\"table\":");
    json_cstr(b, v->table);
    nx_strbuf_printf(b, ",\"kind\":\"%s\",\"nested\":%s,\"start\":", ti->end_column ? "interval" : "point",
                     ti->nested ? "true" : "false");
    json_cstr(b, ti->start_column);
    nx_strbuf_puts(b, ",\"end\":");
    json_cstr(b, ti->end_column);
    nx_strbuf_puts(b, ",\"group\":");
    json_cstr(b, nx_timeline_group_at(v->group)->id);
    nx_strbuf_puts(b, ",\"track_suffix\":");
    json_cstr(b, v->track_suffix);
    nx_strbuf_puts(b, ",\"labels\":[");
    const char *const *labels = nx_timeline_labels(v->table);
    for (size_t i = 0; labels && labels[i]; i++) {
        nx_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        json_cstr(b, labels[i]);
        nx_strbuf_printf(b, ",\"type\":\"%s\"}", nx_timeline_label_is_string(v->table, labels[i]) ? "string" : "integer");
    }
    nx_strbuf_puts(b, "],\"colour_by\":");
    json_names(b, v->colour_by, count_names(v->colour_by));
    nx_strbuf_printf(b, ",\"export\":%s,\"export_label\":", v->export_label ? "true" : "false");
    json_cstr(b, v->export_label);
    const char *fields[NX_TIMELINE_MAX_FIELDS];
    nx_strbuf_puts(b, ",\"search_fields\":");
    json_names(b, fields, nx_timeline_search_fields(v->table, fields, NX_TIMELINE_MAX_FIELDS));
    nx_strbuf_puts(b, ",\"aggregate_by\":");
    json_names(b, fields, nx_timeline_aggregate_fields(v->table, fields, NX_TIMELINE_MAX_FIELDS));
    nx_strbuf_putc(b, '}');
}

static void json_viewer(nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"groups\":[");
    for (size_t g = 0; g < NX_TIMELINE_GROUPS; g++) {
        const nx_timeline_group *gr = nx_timeline_group_at(g);
        nx_strbuf_puts(b, g ? ",{\"id\":" : "{\"id\":");
        json_cstr(b, gr->id);
        nx_strbuf_puts(b, ",\"label\":");
        json_cstr(b, gr->label);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_puts(b, "],\n    \"timelines\":[");
    for (size_t i = 0; i < NX_TIMELINE_TABLES; i++) {
        nx_strbuf_puts(b, i ? ",\n      " : "\n      ");
        json_timeline(b, nx_timeline_view_at(i));
    }
    nx_strbuf_puts(b, "],\n    \"usage\":[");
    for (size_t i = 0; i < NX_USAGE_LANES; i++) {
        const nx_usage_lane *l = nx_usage_lane_at(i);
        nx_strbuf_puts(b, i ? ",\n      {\"table\":" : "\n      {\"table\":");
        json_cstr(b, l->table);
        nx_strbuf_puts(b, ",\"lane\":");
        json_cstr(b, l->lane);
        nx_strbuf_puts(b, ",\"label\":");
        json_cstr(b, l->label);
        nx_strbuf_puts(b, ",\"unit\":");
        json_cstr(b, l->unit);
        nx_strbuf_printf(b, ",\"gauge\":%s,\"series_what\":", l->gauge ? "true" : "false");
        json_cstr(b, l->series_what);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_puts(b, "],\n    \"counter_lanes\":[");
    for (nx_counter_kind k = NX_COUNTER_MEMORY; k <= NX_COUNTER_COUNTER; k++) {
        const nx_counter_kind_info *ki = nx_counter_kind_at(k);
        nx_strbuf_puts(b, k ? ",\n      {\"kind\":" : "\n      {\"kind\":");
        json_cstr(b, ki->kind);
        nx_strbuf_puts(b, ",\"unit\":");
        json_cstr(b, ki->unit);
        nx_strbuf_puts(b, ",\"gauge\":true,\"series\":");
        json_names(b, ki->series, count_names(ki->series));
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_printf(b, "],\n    \"limits\":{\"max_width\":%d},\n    \"names\":{\"devices_dir\":",
                     NX_API_MAX_WIDTH);
    json_cstr(b, NX_LAYOUT_DEVICES_DIR);
    nx_strbuf_puts(b, "}}");
}

enum MHD_Result nx_api_schema(nx_api_req *r)
{
    char *doc = nx_schema_to_json();
    if (!doc)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    /* The document is one object: "viewer" goes before its closing brace. */
    const char *close = strrchr(doc, '}');
    size_t body = close ? (size_t)(close - doc) : 0;
    while (body > 0 && (doc[body - 1] == '\n' || doc[body - 1] == ' '))
        body--;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_append(&b, doc, body);
    free(doc);
    if (!close) {
        nx_strbuf_free(&b);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "the schema document is not a JSON object");
    }
    nx_strbuf_puts(&b, ",\n  \"viewer\": ");
    json_viewer(&b);
    nx_strbuf_puts(&b, "\n}\n");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
