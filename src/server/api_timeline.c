/*
 * api_timeline.c — GET /api/profiles/<name>/timeline: the sampled events of a window
 * per table and track (src/query/timeline.h computes them), in the compact encoding
 * of docs/api.md, or with format=bin as columnar arrays (query/timeline_bin.h) after a
 * JSON header that is the JSON answer without the tracks' arrays; kept in the response cache.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/timeline.h"
#include "query/timeline_bin.h"
#include "server/api_internal.h"
#include "server/response_cache.h"

#define MAX_TABLES NX_TIMELINE_TABLES

/* One array member of a track: `,"key":[v[i] - base, ...]` over its events [first, first + n). */
static void json_i64_array(nx_strbuf *b, const char *key, const int64_t *v, size_t first, size_t n, int64_t base)
{
    nx_strbuf_printf(b, ",\"%s\":[", key);
    for (size_t i = first; i < first + n; i++) {
        if (i > first)
            nx_strbuf_putc(b, ',');
        nx_json_i128(b, (__int128)v[i] - base);   /* an offset beyond int64 is a decimal string */
    }
    nx_strbuf_putc(b, ']');
}

static void json_track(nx_strbuf *b, const nx_timeline *tl, const nx_timeline_table *t, const nx_timeline_track *tr)
{
    nx_strbuf_puts(b, "{\"track\":");
    nx_json_put_string(b, tr->name, tr->name_len);
    json_i64_array(b, "start", t->start, tr->first, tr->n, tl->start);
    nx_strbuf_puts(b, ",\"dur\":[");
    for (size_t i = tr->first; i < tr->first + tr->n; i++) {
        if (i > tr->first)
            nx_strbuf_putc(b, ',');
        nx_json_i128(b, (__int128)t->end[i] - t->start[i]);
    }
    nx_strbuf_putc(b, ']');
    json_i64_array(b, "ord", t->ordinal, tr->first, tr->n, 0);
    if (t->depth) {
        nx_strbuf_puts(b, ",\"depth\":[");
        for (size_t i = tr->first; i < tr->first + tr->n; i++) {
            if (i > tr->first)
                nx_strbuf_putc(b, ',');
            nx_json_put_i64(b, t->depth[i], true);
        }
        nx_strbuf_putc(b, ']');
    }
    nx_strbuf_puts(b, ",\"labels\":{");
    for (size_t l = 0; l < t->n_labels; l++) {
        if (l)
            nx_strbuf_putc(b, ',');
        nx_json_put_string(b, t->label_names[l], strlen(t->label_names[l]));
        nx_strbuf_puts(b, ":[");
        for (size_t i = tr->first; i < tr->first + tr->n; i++) {
            if (i > tr->first)
                nx_strbuf_putc(b, ',');
            size_t at = i * t->n_labels + l;
            if (t->label_set[at])
                nx_json_put_i64(b, t->label[at], true);
            else
                nx_strbuf_puts(b, t->label_is_string[l] ? "-1" : "null");
        }
        nx_strbuf_putc(b, ']');
    }
    nx_strbuf_puts(b, "}}");
}

/* A track in the binary answer's header: its events are in the arrays that follow. */
static void json_track_head(nx_strbuf *b, const nx_timeline_track *tr)
{
    nx_strbuf_puts(b, "{\"track\":");
    nx_json_put_string(b, tr->name, tr->name_len);
    nx_strbuf_printf(b, ",\"n\":%zu}", tr->n);
}

/* One table's part of the response (docs/api.md); bin: of the binary answer's header. */
static void json_table(nx_strbuf *b, const nx_server_ctx *srv, const nx_timeline *tl, const nx_timeline_table *t,
                       bool bin)
{
    nx_strbuf_puts(b, "{\"table\":");
    nx_json_put_string(b, t->table, strlen(t->table));
    if (t->error) {
        nx_strbuf_puts(b, ",\"error\":");
        nx_api_json_message(srv, b, t->error);
        nx_strbuf_putc(b, '}');
        return;
    }
    nx_strbuf_printf(b, ",\"rows_in_window\":%" PRIu64 ",\"sampled\":%zu,\"label_fields\":[", t->rows_in_window,
                     t->n_events);
    for (size_t l = 0; l < t->n_labels; l++) {
        if (l)
            nx_strbuf_putc(b, ',');
        nx_json_put_string(b, t->label_names[l], strlen(t->label_names[l]));
    }
    nx_strbuf_puts(b, "],\"label_types\":[");
    for (size_t l = 0; l < t->n_labels; l++)
        nx_strbuf_printf(b, "%s\"%s\"", l ? "," : "", t->label_is_string[l] ? "string" : "integer");
    if (bin)
        nx_strbuf_printf(b, "],\"nested\":%s", t->depth ? "true" : "false");
    nx_strbuf_puts(b, bin ? ",\"tracks\":[" : "],\"tracks\":[");
    for (size_t k = 0; k < t->n_tracks; k++) {
        if (k)
            nx_strbuf_putc(b, ',');
        if (bin)
            json_track_head(b, &t->tracks[k]);
        else
            json_track(b, tl, t, &t->tracks[k]);
    }
    nx_strbuf_puts(b, "]}");
}

/* The JSON response body, or the binary one's header (bin); *errors: whether some table failed. */
static void json_timeline(nx_strbuf *b, const nx_server_ctx *srv, const nx_timeline *tl, bool bin, bool *errors)
{
    nx_strbuf_puts(b, "{\"start\":");
    nx_json_put_i64(b, tl->start, true);
    nx_strbuf_puts(b, ",\"end\":");
    nx_json_put_i64(b, tl->end, true);
    nx_strbuf_printf(b, ",\"width\":%u,\"strings\":[", tl->width);
    for (size_t i = 0; i < tl->n_strings; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        nx_json_put_string(b, tl->strings[i], tl->string_len[i]);
    }
    nx_strbuf_puts(b, "],\"tables\":[");
    *errors = false;
    for (size_t i = 0; i < tl->n_tables; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        json_table(b, srv, tl, &tl->tables[i], bin);
        *errors |= tl->tables[i].error != NULL;
    }
    nx_strbuf_puts(b, "]}");
}

static bool is_timeline_table(const char *name)
{
    return nx_timeline_find(name) != NULL;
}

/* The answer in JSON, or binary (bin); *errors: whether some table failed. */
static void encode(nx_strbuf *b, const nx_server_ctx *srv, const nx_timeline *tl, bool bin, bool *errors)
{
    if (!bin) {
        json_timeline(b, srv, tl, false, errors);
        return;
    }
    nx_strbuf head = NX_STRBUF_INIT;
    json_timeline(&head, srv, tl, true, errors);
    if (nx_strbuf_failed(&head))
        b->failed = true;
    else
        nx_timeline_bin(b, tl, head.data, head.len);
    nx_strbuf_free(&head);
}

#define BIN_TYPE "application/octet-stream"
#define JSON_TYPE "application/json; charset=utf-8"

enum MHD_Result nx_api_timeline(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    const char *tables_s = nx_api_param(r, "tables");
    if (!tables_s)
        tables_s = "Instruction";
    const char *format = nx_api_param(r, "format");
    if (format && strcmp(format, "json") != 0 && strcmp(format, "bin") != 0)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "format: json or bin, not %s", format);
    bool bin = format && strcmp(format, "bin") == 0;
    char tbuf[256];
    const char *tables[MAX_TABLES];
    size_t n_tables;
    if (nx_api_tables_param(r, "Instruction", is_timeline_table, "timeline", tbuf, sizeof tbuf, tables, MAX_TABLES,
                            &n_tables, &res) < 0)
        return res;
    int64_t start, end, width;
    if (nx_api_window_params(r, 0, &start, &end, &width, &res) < 0)
        return res;
    if (start == INT64_MIN && end == INT64_MAX)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "the window is too wide");
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    /* A zoomed-out window scans most of the table: the viewer's whole-profile view
     * (and any view it returns to) is answered from the cache the second time. */
    char key[512];
    snprintf(key, sizeof key, "timeline|%s|%" PRId64 "|%" PRId64 "|%" PRId64 "|%s", tables_s, start, end, width,
             bin ? "bin" : "json");
    char *fp = nx_response_cache_fingerprint(dir); /* NULL: not cacheable */
    nx_strbuf b = NX_STRBUF_INIT;
    if (fp && nx_response_cache_get(dir, fp, key, &b)) {
        free(fp);
        free(dir);
        return nx_api_body(r, MHD_HTTP_OK, &b, bin ? BIN_TYPE : JSON_TYPE);
    }
    nx_timeline tl;
    nx_error err = {0};
    int rc = nx_timeline_query(dir, tables, n_tables, start, end, (uint32_t)width, &tl, &err);
    if (rc != 0) {
        free(fp);
        free(dir);
        /* Over budget: the server is fine, this request asks too much of it. */
        return nx_api_query_failed(r, rc, &err);
    }
    bool errors;
    encode(&b, r->srv, &tl, bin, &errors);
    nx_timeline_free(&tl);
    /* An answer with a failed table is not kept: the table may be readable next time. */
    if (fp && !errors && !b.failed)
        nx_response_cache_put(dir, fp, key, b.data, b.len);
    free(fp);
    free(dir);
    return nx_api_body(r, MHD_HTTP_OK, &b, bin ? BIN_TYPE : JSON_TYPE);
}
