/*
 * api_common.c — response helpers, strict parameter parsing, profile-name
 * resolution and JSON value writing for the HTTP API (rules in api_internal.h and
 * docs/api.md).
 *
 * Profile resolution is the one place a request string becomes a file-system path:
 * profile/profile_layout.h nx_layout_find (S and D must pass nx_display_name_validate:
 * no '/', no "..", no control bytes, <= 200 bytes; the server's unescape turns %00
 * into a control byte so it is refused there; symbolic links are followed only while
 * they stay inside the data path). Its answers become HTTP statuses here.
 */
#define _DEFAULT_SOURCE /* realpath, strndup, dirfd */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_layout.h"
#include "query/engine/budget.h"
#include "query/engine/csv.h"
#include "server/api_internal.h"
#include "util/decimal.h"
#include "util/text.h"

enum MHD_Result nx_api_body(nx_api_req *r, unsigned status, nx_strbuf *body, const char *content_type)
{
    if (nx_strbuf_failed(body)) {
        nx_strbuf_free(body);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    size_t len = body->len;
    if (!r->conn && r->body)
        nx_strbuf_append(r->body, body->data ? body->data : "", len);
    char *data = nx_strbuf_detach(body);
    if (!data) { /* empty buffer never appended to */
        data = strdup("");
        len = 0;
        if (!data)
            return MHD_NO;
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, data, free);
    if (!resp) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", content_type);
    enum MHD_Result ret = nx_api_queue(r, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result nx_api_json(nx_api_req *r, unsigned status, nx_strbuf *body)
{
    return nx_api_body(r, status, body, "application/json; charset=utf-8");
}

/* Removes every "<prefix>/" from msg (in place). */
static void cut_prefix(char *msg, const char *prefix)
{
    size_t n = prefix ? strlen(prefix) : 0;
    while (n > 1 && prefix[n - 1] == '/')
        n--;
    if (n < 2)
        return;
    for (char *p = msg; (p = strstr(p, prefix)) != NULL;) {
        if (p[n] != '/') {
            p += n;
            continue;
        }
        memmove(p, p + n + 1, strlen(p + n + 1) + 1);
    }
}

/* Error messages name files relative to the profiles root (or the data path):
 * the absolute location of the data is not the client's business. */
static void redact_paths(const nx_server_ctx *srv, char *msg)
{
    if (!srv)
        return;
    const char *given[2] = {srv->root, srv->data_path};
    for (int i = 0; i < 2; i++) {
        char *real = given[i] ? realpath(given[i], NULL) : NULL;
        cut_prefix(msg, real);
        free(real);
        cut_prefix(msg, given[i]);
    }
}

void nx_api_json_message(const nx_server_ctx *srv, nx_strbuf *b, const char *msg)
{
    size_t n = strlen(msg);
    char *copy = malloc(n + 1);
    if (!copy) {
        nx_json_put_string(b, "out of memory", 13);
        return;
    }
    memcpy(copy, msg, n + 1);
    redact_paths(srv, copy);
    nx_json_put_string(b, copy, strlen(copy));
    free(copy);
}

enum MHD_Result nx_api_error(nx_api_req *r, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    redact_paths(r->srv, msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"error\":");
    nx_json_put_string(&b, msg, strlen(msg));
    nx_strbuf_puts(&b, "}");
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        static const char oom[] = "{\"error\":\"out of memory\"}";
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
        enum MHD_Result ret = nx_api_queue(r, MHD_HTTP_INTERNAL_SERVER_ERROR, resp);
        MHD_destroy_response(resp);
        return ret;
    }
    return nx_api_json(r, status, &b);
}

enum MHD_Result nx_api_queue(nx_api_req *r, unsigned status, struct MHD_Response *resp)
{
    /* On every response, errors and web assets included: nothing is cached or
     * sniffed, no page leaks a referrer, no other site frames the viewer. */
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Content-Security-Policy", "frame-ancestors 'none'");
    if (r->conn)
        return MHD_queue_response(r->conn, status, resp);
    if (r->status)
        return MHD_NO; /* a second response: MHD refuses it too */
    r->status = status;
    return MHD_YES;
}

static bool same_key(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a | 32) : *a, y = *b >= 'A' && *b <= 'Z' ? (char)(*b | 32) : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

const char *nx_api_param(nx_api_req *r, const char *name)
{
    if (r->conn)
        return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
    for (size_t i = 0; i < r->n_params; i++)
        if (same_key(r->params[i].key, name))
            return r->params[i].value;
    return NULL;
}

int nx_api_int_param(nx_api_req *r, const char *name, bool required, int64_t def, int64_t min, int64_t max,
                     int64_t *out, enum MHD_Result *result)
{
    const char *s = nx_api_param(r, name);
    if (!s) {
        if (required) {
            *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter '%s' is required", name);
            return -1;
        }
        *out = def;
        return 0;
    }
    int64_t v;
    if (nx_text_i64(s, &v) < 0) {
        *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter '%s' must be a whole number", name);
        return -1;
    }
    if (v < min || v > max) {
        *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter '%s' must be in %" PRId64 "..%" PRId64, name, min,
                               max);
        return -1;
    }
    *out = v;
    return 0;
}

unsigned nx_api_resolve_profile(const nx_server_ctx *srv, const char *name, char **dir, char *msg, size_t cap)
{
    nx_error err = {0};
    int rc = nx_layout_find(srv->root, name, dir, &err);
    if (rc == 0)
        return 0;
    /* A missing profile and one leading out of the data path get the same answer,
     * so nothing about the outside is revealed. */
    if (rc == NX_LAYOUT_INVALID)
        snprintf(msg, cap, "invalid profile name: %.300s", err.msg);
    else
        snprintf(msg, cap, rc < 0 ? "out of memory" : "no such profile");
    return rc == NX_LAYOUT_INVALID ? MHD_HTTP_BAD_REQUEST
           : rc < 0               ? MHD_HTTP_INTERNAL_SERVER_ERROR
                                  : MHD_HTTP_NOT_FOUND;
}

int nx_api_profile_dir(nx_api_req *r, const char *name, char **dir, enum MHD_Result *result)
{
    char msg[400];
    unsigned status = nx_api_resolve_profile(r->srv, name, dir, msg, sizeof msg);
    if (status == 0)
        return 0;
    /* The message may quote the name; it is JSON-escaped on the way out. */
    *result = nx_api_error(r, status, "%s", msg);
    return -1;
}

/* ------------------------------------------------------------------ JSON -- */

void nx_json_i128(nx_strbuf *b, __int128 v)
{
    if (v >= INT64_MIN && v <= INT64_MAX) {
        nx_json_put_i64(b, (int64_t)v, true);
        return;
    }
    /* Beyond int64, so beyond 2^53: a decimal string, as nx_json_put_i64 writes large values. */
    char tmp[48];
    size_t k = 0;
    unsigned __int128 u = v < 0 ? 0 - (unsigned __int128)v : (unsigned __int128)v;
    do {
        tmp[k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    nx_strbuf_putc(b, '"');
    if (v < 0)
        nx_strbuf_putc(b, '-');
    while (k)
        nx_strbuf_putc(b, tmp[--k]);
    nx_strbuf_putc(b, '"');
}

void nx_json_time_offsets(nx_strbuf *b, const int64_t *t, size_t n, int64_t start)
{
    nx_strbuf_putc(b, '[');
    for (size_t q = 0; q < n; q++) {
        if (q)
            nx_strbuf_putc(b, ',');
        nx_json_i128(b, (__int128)t[q] - start);
    }
    nx_strbuf_putc(b, ']');
}

int nx_api_event_params(nx_api_req *r, int64_t *ordinal, int64_t *hint, const int64_t **start,
                        enum MHD_Result *result)
{
    if (nx_api_int_param(r, "ordinal", true, 0, 0, INT64_MAX, ordinal, result) < 0)
        return -1;
    *start = NULL;
    if (!nx_api_param(r, "start"))
        return 0;
    if (nx_api_int_param(r, "start", false, 0, INT64_MIN, INT64_MAX, hint, result) < 0)
        return -1;
    *start = hint;
    return 0;
}

int nx_api_window_params(nx_api_req *r, int64_t default_width, int64_t *start, int64_t *end, int64_t *width,
                         enum MHD_Result *result)
{
    if (nx_api_int_param(r, "start", true, 0, INT64_MIN, INT64_MAX, start, result) < 0 ||
        nx_api_int_param(r, "end", true, 0, INT64_MIN, INT64_MAX, end, result) < 0 ||
        nx_api_int_param(r, "width", default_width == 0, default_width, 1, NX_API_MAX_WIDTH, width, result) < 0)
        return -1;
    if (*end < *start) {
        *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "'end' is before 'start'");
        return -1;
    }
    return 0;
}

void nx_api_window_head(nx_strbuf *b, int64_t start, int64_t end, int64_t width)
{
    nx_strbuf_puts(b, "{\"start\":");
    nx_json_put_i64(b, start, true);
    nx_strbuf_puts(b, ",\"end\":");
    nx_json_put_i64(b, end, true);
    nx_strbuf_printf(b, ",\"width\":%" PRId64, width);
}

enum MHD_Result nx_api_query_failed(nx_api_req *r, int rc, const nx_error *err)
{
    return nx_api_error(r, rc == NX_QUERY_OVER_BUDGET ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_INTERNAL_SERVER_ERROR,
                        "%s", err->msg);
}

int nx_api_tables_param(nx_api_req *r, const char *dflt, bool (*known)(const char *name), const char *what,
                        char *buf, size_t bufsize, const char **tables, size_t max, size_t *n,
                        enum MHD_Result *result)
{
    const char *list = nx_api_param(r, "tables");
    if (!list)
        list = dflt;
    *n = 0;
    if (strlen(list) >= bufsize) {
        *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'tables' is too long");
        return -1;
    }
    strcpy(buf, list);
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!known(p)) {
            *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "unknown %s table in 'tables'", what);
            return -1;
        }
        for (size_t i = 0; i < *n; i++)
            if (strcmp(tables[i], p) == 0) {
                *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "table '%s' is named twice", p);
                return -1;
            }
        if (*n == max) {
            *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "too many tables");
            return -1;
        }
        tables[(*n)++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}
