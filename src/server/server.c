/*
 * server.c — `nxprof serve`'s HTTP core: libmicrohttpd daemon, request limits,
 * routing, static files, clean shutdown. Endpoint semantics: docs/api.md.
 *
 * Rules enforced before any handler runs, in this order (every one answers JSON
 * {"error": ...}; every response carries the headers nx_api_queue adds):
 *   - a Host that does not name this server -> 421; an Origin that is not this
 *     server's own -> 403 (request_guard.c; GETs included: a browser sends Origin on
 *     cross-origin requests);
 *   - methods: a POST or PUT without "Content-Type: application/json" -> 415 (with
 *     the Origin check above, what keeps another site's page from sending one: a
 *     browser sends that type cross-site only after a CORS preflight, never granted
 *     here); a method no route of the path has -> 405 (routing, below);
 *   - bodies: a request other than POST and PUT with a body (Content-Length > 0
 *     or chunked) -> 413; a POST or PUT with Transfer-Encoding -> 411 (its length must be known before it
 *     is read), a bad Content-Length -> 400, one over NX_SERVER_MAX_BODY (1 MiB) ->
 *     413. These are checked on the headers, before a byte of the body is read
 *     (nx_server_admit); an admitted body is read whole into memory and handed to
 *     the handler (nx_api_req.content);
 *   - a raw request target with a NUL byte, "%00", or a '%' not followed by two hex
 *     digits -> 400 (nx_server_target_error; MHD's URI log callback sees the target
 *     before it is decoded);
 *   - the decoded URL (path plus query parameters) longer than 8192 bytes -> 414;
 *     more than 32 query parameters -> 414; MHD itself answers requests whose header block exceeds the
 *     per-connection memory limit (64 KiB) with 431/413;
 *   - a query parameter given twice (keys compared ignoring ASCII case) -> 400
 *     naming it: every parameter is single-valued;
 *   - percent-decoding (our MHD unescape callback): "%XX" with two hex digits becomes
 *     that byte; %00 (refused above) becomes 0x01, so that even while MHD splits a
 *     refused target a NUL never cuts a string short; '+' is kept (not a space).
 * Keep-alive: a request is answered on MHD's last call, once it is complete (its
 * body read), so the connection stays open for the next (pipelined) request; a
 * request refused on its headers (a body it may not have, or too large) makes MHD
 * close the connection, since its body is never read.
 * Routing on the method and the decoded path, split at '/' (FIXED_ROUTES and
 * PROFILE_ROUTES: one method per route, GET answering HEAD too; a path that has
 * routes, none for the request's method -> 405 with Allow naming theirs):
 *   GET /api/health, /api/profiles, /api/schema, /api/diff, /api/v1/health,
 *   /api/profiles/<name>[/tracks|/timeline|/event|/source|/summary|/usage|/memory|
 *   /counters|/search|/aggregate|/flows|/annotations|/export/<Table>.csv], and
 *   /api/profiles/<name>/<analysis> for each analysis of query/analysis.h's
 *   registry (breakdown, insights, ranks, ...; api_analysis.c), which the
 *   routes above are looked up before;
 *   PUT /api/profiles/<name>/annotations; POST /api/v1/db/<name>/_search; other
 *   /api/... -> 404. <name> may be
 *   <S>/devices/<D> (three segments, a device profile nested in system profile S).
 *   Anything else is a static file (GET and HEAD only): "/" -> /index.html, "/static/<f>" -> asset "/<f>",
 *   "/<f>" -> asset "/<f>" (exact match in the embedded table, web_assets.h),
 *   "/profile/...", "/view/..." and "/compare" -> /index.html (client-side routes);
 *   otherwise 404.
 *   Without an embedded /index.html, "/" serves a placeholder page.
 * The limits and the routing are nx_server_answer (api_internal.h), which MHD's
 * request callback calls with the connection and which tests and the fuzz harness
 * (tests/fuzz/fuzz_http.c) call without one.
 * Threads: MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL with MHD_OPTION_THREAD_POOL_SIZE; handlers
 * share only read-only server state and the mutex-protected tracks cache.
 * Shutdown: SIGINT/SIGTERM are blocked before the daemon starts (so pool threads
 * inherit the mask) and taken with sigwait() in the calling thread, which then stops
 * the daemon (in-flight requests finish or are closed) and frees everything.
 */
#define _DEFAULT_SOURCE /* realpath, strndup, dirfd */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "nxprof_version.h"
#include "server/api_internal.h"
#include "server/response_cache.h"
#include "server/server.h"
#include "server/sql_cache.h"
#include "server/web_assets.h"
#include "util/text.h"

/* Connections: epoll, so that open connections cost a socket and 64 KiB at most,
 * never a thread. The limit is the file-descriptor limit (raised to its hard
 * maximum) less a reserve for the files requests open, at most MAX_CONNECTIONS;
 * one client address may hold three quarters of it (with the default 127.0.0.1
 * binding every client is one address: the limit then is what keeps the server
 * answering); a connection idle for CONNECTION_IDLE_S is closed. */
#define MAX_CONNECTIONS 8192u
#define FD_RESERVE 256u
#define CONNECTION_IDLE_S 60
#define MAX_URL 8192
#define MAX_PARAMS 32
#define MAX_SEGMENTS 8

static const char PLACEHOLDER[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>nxprof</title></head>"
    "<body><h1>nxprof</h1><p>This build has no embedded web viewer. The JSON API is available: "
    "<a href=\"/api/profiles\">/api/profiles</a>.</p></body></html>";

/* %XX decoding; %00 -> 0x01 (see the header comment). Never lengthens s. */
size_t nx_server_unescape(char *s)
{
    char *w = s;
    for (const char *p = s; *p; p++) {
        if (*p == '%' && p[1] && p[2]) {
            int hi = p[1] >= '0' && p[1] <= '9' ? p[1] - '0' : (p[1] | 32) >= 'a' && (p[1] | 32) <= 'f' ? (p[1] | 32) - 'a' + 10 : -1;
            int lo = p[2] >= '0' && p[2] <= '9' ? p[2] - '0' : (p[2] | 32) >= 'a' && (p[2] | 32) <= 'f' ? (p[2] | 32) - 'a' + 10 : -1;
            if (hi >= 0 && lo >= 0) {
                int v = hi * 16 + lo;
                *w++ = (char)(v == 0 ? 1 : v);
                p += 2;
                continue;
            }
        }
        *w++ = *p;
    }
    *w = '\0';
    return (size_t)(w - s);
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f');
}

const char *nx_server_target_error(const char *raw)
{
    for (const char *p = raw; (p = strchr(p, '%')) != NULL; p++) {
        if (!is_hex(p[1]) || !is_hex(p[2]))
            return "bad percent-encoding in the request target (a '%' not followed by two hex digits)";
        if (p[1] == '0' && p[2] == '0')
            return "a NUL byte (%00) in the request target";
    }
    return NULL;
}

static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return nx_server_unescape(s);
}

/* The query's parameters, their decoded bytes (a key, '=', a value, '&') and
 * their first MAX_PARAMS keys. */
typedef struct query_size {
    unsigned n;
    size_t bytes;
    const char *keys[MAX_PARAMS];
} query_size;

static enum MHD_Result count_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    query_size *q = cls;
    if (q->n < MAX_PARAMS)
        q->keys[q->n] = key;
    q->n++;
    q->bytes += strlen(key) + 2 + (value ? strlen(value) : 0);
    return MHD_YES;
}

/* A key given twice among q's (at most MAX_PARAMS) keys, or NULL. */
static const char *repeated_key(const query_size *q)
{
    for (unsigned i = 0; i < q->n; i++)
        for (unsigned j = 0; j < i; j++)
            if (strcasecmp(q->keys[i], q->keys[j]) == 0)
                return q->keys[i];
    return NULL;
}

static enum MHD_Result send_asset(nx_api_req *r, const nx_web_asset *a)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(a->length, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", a->content_type);
    enum MHD_Result ret = nx_api_queue(r, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result serve_static(nx_api_req *r, const char *url)
{
    const nx_web_asset *a = NULL;
    if (strcmp(url, "/") == 0 || strncmp(url, "/profile/", 9) == 0 || strncmp(url, "/view/", 6) == 0 ||
        strcmp(url, "/profile") == 0 || strcmp(url, "/view") == 0 || strcmp(url, "/compare") == 0) {
        a = nx_web_asset_find("/index.html");
        if (!a) {
            static const nx_web_asset placeholder = {"/index.html", "text/html; charset=utf-8",
                                                     (const unsigned char *)PLACEHOLDER, sizeof PLACEHOLDER - 1};
            a = &placeholder;
        }
    } else if (strncmp(url, "/static/", 8) == 0) {
        a = nx_web_asset_find(url + 7);
    } else {
        a = nx_web_asset_find(url);
    }
    if (!a)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "not found");
    return send_asset(r, a);
}

/* The connection limit (rule above); raises the soft file-descriptor limit. */
static unsigned connection_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 256;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit up = {rl.rlim_max == RLIM_INFINITY ? MAX_CONNECTIONS + FD_RESERVE : rl.rlim_max, rl.rlim_max};
        if (up.rlim_cur > MAX_CONNECTIONS + FD_RESERVE)
            up.rlim_cur = MAX_CONNECTIONS + FD_RESERVE;
        if (up.rlim_cur > rl.rlim_cur && setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl.rlim_cur = up.rlim_cur;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= MAX_CONNECTIONS + FD_RESERVE)
        return MAX_CONNECTIONS;
    return rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)rl.rlim_cur - FD_RESERVE : (unsigned)rl.rlim_cur / 2;
}

/* The API's routes (rules in the header): a fixed path, or a profile's path with
 * the profile's name in place of its <name> segment(s), and one method each (GET
 * also answers HEAD). A path with no route for the request's method is a 405 that
 * lists those it has. */
typedef struct fixed_route {
    const char *method, *path; /* path after "/api/" */
    enum MHD_Result (*fn)(nx_api_req *r);
} fixed_route;
typedef struct profile_route {
    const char *method, *prefix, *leaf; /* /api/<prefix>/<name>[/<leaf>]; leaf NULL: none */
    enum MHD_Result (*fn)(nx_api_req *r, const char *name);
} profile_route;

static const fixed_route FIXED_ROUTES[] = {
    {"GET", "health", nx_api_health},   {"GET", "schema", nx_api_schema},       {"GET", "diff", nx_api_diff},
    {"GET", "profiles", nx_api_profiles}, {"GET", "v1/health", nx_api_v1_health},
};
static const profile_route PROFILE_ROUTES[] = {
    {"GET", "profiles", NULL, nx_api_profile},
    {"GET", "profiles", "tracks", nx_api_tracks},
    {"GET", "profiles", "timeline", nx_api_timeline},
    {"GET", "profiles", "event", nx_api_event},
    {"GET", "profiles", "summary", nx_api_summary},
    {"GET", "profiles", "usage", nx_api_usage},
    {"GET", "profiles", "memory", nx_api_memory},
    {"GET", "profiles", "counters", nx_api_counters},
    {"GET", "profiles", "search", nx_api_search},
    {"GET", "profiles", "aggregate", nx_api_aggregate},
    {"GET", "profiles", "flows", nx_api_flows},
    {"GET", "profiles", "source", nx_api_source},
    {"GET", "profiles", "annotations", nx_api_annotations_get},
    {"PUT", "profiles", "annotations", nx_api_annotations_put},
    {"POST", "v1/db", "_search", nx_api_v1_search},
};

static bool method_is(const char *route_method, const char *method)
{
    return strcmp(route_method, method) == 0 || (strcmp(route_method, "GET") == 0 && strcmp(method, "HEAD") == 0);
}

/* 405 naming the methods a path has (allow: "GET, HEAD", "POST", ...). */
static enum MHD_Result method_not_allowed(nx_api_req *r, const char *allow)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"error\":");
    char msg[96];
    snprintf(msg, sizeof msg, "method not allowed (%s only)", allow);
    nx_json_put_cstr(&b, msg);
    nx_strbuf_puts(&b, "}");
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        return MHD_NO;
    }
    size_t len = b.len;
    if (!r->conn && r->body)
        nx_strbuf_append(r->body, b.data, len);
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, nx_strbuf_detach(&b), free);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
    MHD_add_response_header(resp, "Allow", allow);
    enum MHD_Result ret = nx_api_queue(r, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Appends a route's method (GET as "GET, HEAD") to the Allow list `allow`. */
static void allow_add(char *allow, size_t cap, const char *method)
{
    size_t n = strlen(allow);
    snprintf(allow + n, cap - n, "%s%s", n ? ", " : "", strcmp(method, "GET") == 0 ? "GET, HEAD" : method);
}

/* The fixed route for path (after "/api/") and method, or a 405 when the path has
 * only others; *found false (nothing queued) when no route has that path. */
static enum MHD_Result route_fixed(nx_api_req *r, const char *method, const char *path, bool *found)
{
    char allow[64] = "";
    for (size_t i = 0; i < sizeof FIXED_ROUTES / sizeof FIXED_ROUTES[0]; i++) {
        if (strcmp(FIXED_ROUTES[i].path, path) != 0)
            continue;
        if (method_is(FIXED_ROUTES[i].method, method))
            return *found = true, FIXED_ROUTES[i].fn(r);
        allow_add(allow, sizeof allow, FIXED_ROUTES[i].method);
    }
    *found = allow[0] != '\0';
    return *found ? method_not_allowed(r, allow) : MHD_NO;
}

/* A profile route's path: /api/<prefix>/<name>[/<leaf>], the name one segment or
 * "<S>/devices/<D>" (a nested device profile, api_internal.h), whose segments lie
 * in one buffer: restoring their two slashes joins them. *at = the name's segment;
 * false when the path has no profile prefix. */
static bool profile_path(char **seg, size_t *n, size_t *at, const char **prefix)
{
    if (*n >= 3 && strcmp(seg[1], "profiles") == 0)
        *at = 2, *prefix = "profiles";
    else if (*n >= 4 && strcmp(seg[1], "v1") == 0 && strcmp(seg[2], "db") == 0)
        *at = 3, *prefix = "v1/db";
    else
        return false;
    size_t a = *at;
    if (*n >= a + 3 && strcmp(seg[a + 1], NX_LAYOUT_DEVICES_DIR) == 0) {
        seg[a + 1][-1] = '/';
        seg[a + 2][-1] = '/';
        memmove(&seg[a + 1], &seg[a + 3], (*n - a - 3) * sizeof *seg);
        *n -= 2;
    }
    return true;
}

static enum MHD_Result route_profile(nx_api_req *r, const char *method, char **seg, size_t n, bool *found)
{
    size_t at;
    const char *prefix;
    *found = false;
    if (!profile_path(seg, &n, &at, &prefix))
        return MHD_NO;
    const char *name = seg[at], *leaf = n > at + 1 ? seg[at + 1] : NULL;
    if (n == at + 3 && strcmp(prefix, "profiles") == 0 && strcmp(leaf, "export") == 0) {
        *found = true;
        return method_is("GET", method) ? nx_api_export(r, name, seg[at + 2]) : method_not_allowed(r, "GET, HEAD");
    }
    char allow[64] = "";
    for (size_t i = 0; n <= at + 2 && i < sizeof PROFILE_ROUTES / sizeof PROFILE_ROUTES[0]; i++) {
        const profile_route *pr = &PROFILE_ROUTES[i];
        if (strcmp(pr->prefix, prefix) != 0 || (pr->leaf == NULL) != (leaf == NULL) ||
            (leaf && strcmp(pr->leaf, leaf) != 0))
            continue;
        if (method_is(pr->method, method))
            return *found = true, pr->fn(r, name);
        allow_add(allow, sizeof allow, pr->method);
    }
    /* No route takes the leaf: an analysis may (GET only, as each route is one method). */
    if (allow[0] == '\0' && leaf && n == at + 2 && strcmp(prefix, "profiles") == 0) {
        const nx_analysis *a = nx_analysis_find(leaf);
        if (a) {
            *found = true;
            return method_is("GET", method) ? nx_api_analysis(r, a, name) : method_not_allowed(r, "GET, HEAD");
        }
    }
    *found = allow[0] != '\0';
    return *found ? method_not_allowed(r, allow) : MHD_NO;
}

static enum MHD_Result route_api(nx_api_req *r, const char *method, const char *path, char **seg, size_t n)
{
    /* seg[0] == "api"; path is the URL after "/api/" */
    bool found;
    enum MHD_Result ret = route_fixed(r, method, path, &found);
    if (found)
        return ret;
    ret = route_profile(r, method, seg, n, &found);
    if (found)
        return ret;
    return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no such API endpoint");
}

/* The query's size (rule above), from the connection or the request's own list. */
static void query_size_of(nx_api_req *r, query_size *q)
{
    if (r->conn) {
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, count_arg, q);
        return;
    }
    for (size_t i = 0; i < r->n_params; i++)
        count_arg(q, MHD_GET_ARGUMENT_KIND, r->params[i].key, r->params[i].value);
}

bool nx_server_method_has_body(const char *method)
{
    return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0;
}

/* The body rules (header comment): false after queueing the refusal. */
static bool body_admitted(nx_api_req *r, const nx_http_request *q, enum MHD_Result *result)
{
    bool has_len = q->content_length && strcmp(q->content_length, "0") != 0;
    if (!nx_server_method_has_body(q->method)) {
        if (has_len || q->transfer_encoding)
            return *result = nx_api_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "only a POST or PUT may have a body"), false;
        return true;
    }
    if (q->transfer_encoding)
        return *result = nx_api_error(r, MHD_HTTP_LENGTH_REQUIRED,
                                      "a request body must come with Content-Length (no Transfer-Encoding)"),
               false;
    int64_t len = 0;
    if (q->content_length && (nx_text_i64(q->content_length, &len) != 0 || len < 0))
        return *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "bad Content-Length"), false;
    if ((uint64_t)len > NX_SERVER_MAX_BODY)
        return *result = nx_api_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "a request body is at most %zu bytes (1 MiB)",
                                      NX_SERVER_MAX_BODY),
               false;
    return true;
}

bool nx_server_admit(nx_api_req *r, const nx_http_request *q, enum MHD_Result *result)
{
    if (!nx_server_host_allowed(r->srv, q->host, q->port, q->local_addr))
        /* Neither header is echoed: an answer quotes nothing a foreign page chose. */
        return *result = nx_api_error(r, MHD_HTTP_MISDIRECTED_REQUEST, "the request's Host is not this server "
                                                                       "(nxprof serve --allow-host NAME admits a name)"),
               false;
    if (!nx_server_origin_allowed(r->srv, q->origin, q->port, q->local_addr))
        return *result = nx_api_error(r, MHD_HTTP_FORBIDDEN,
                                      "a cross-origin request is refused (its Origin is not this server)"),
               false;
    r->head = strcmp(q->method, "HEAD") == 0;
    bool body = nx_server_method_has_body(q->method);
    if (body && !nx_server_json_content_type(q->content_type))
        return *result = nx_api_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                                      "a %s must have Content-Type: application/json", q->method),
               false;
    if (!body_admitted(r, q, result))
        return false;
    if (q->target_error)
        return *result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "%s", q->target_error), false;
    return true;
}

enum MHD_Result nx_server_answer(nx_api_req *r, const nx_http_request *q)
{
    enum MHD_Result result;
    if (!nx_server_admit(r, q, &result))
        return result;
    if (!r->content)
        r->content = "", r->content_len = 0;
    const char *url = q->url;
    size_t ulen = strlen(url);
    query_size qs = {0};
    query_size_of(r, &qs);
    if (ulen + qs.bytes > MAX_URL)
        return nx_api_error(r, MHD_HTTP_URI_TOO_LONG, "URL too long (%d bytes at most, path and query)", MAX_URL);
    if (qs.n > MAX_PARAMS)
        return nx_api_error(r, MHD_HTTP_URI_TOO_LONG, "too many query parameters (%d at most)", MAX_PARAMS);
    const char *twice = repeated_key(&qs);
    if (twice)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter '%s' is given more than once", twice);
    if (url[0] != '/')
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "bad request path");
    if (strncmp(url, "/api/", 5) != 0 && strcmp(url, "/api") != 0) {
        if (r->srv->api_only)
            return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no web pages on this port (the API only: /api/...)");
        if (!method_is("GET", q->method))
            return method_not_allowed(r, "GET, HEAD");
        return serve_static(r, url);
    }
    /* Split a copy at '/'; empty segments (//, trailing /) are kept so
     * "/api/profiles//tracks" does not route as something else. */
    char path[MAX_URL + 1];
    memcpy(path, url, ulen + 1);
    char *seg[MAX_SEGMENTS];
    size_t n = 0;
    char *p = path + 1;
    for (;;) {
        if (n == MAX_SEGMENTS)
            return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no such API endpoint");
        seg[n++] = p;
        char *slash = strchr(p, '/');
        if (!slash)
            break;
        *slash = '\0';
        p = slash + 1;
    }
    return route_api(r, q->method, url[4] ? url + 5 : "", seg, n);
}

/* Memory: a request's large buffers (decoded pages, sampled runs, JSON) go back
 * to the allocator when it ends, but glibc keeps freed memory in the arena of the
 * thread that used it, so a server whose threads each once answered a big
 * request holds the sum of their peaks. Returning free memory to the system at
 * most once a second (malloc_trim walks every arena) keeps RSS near what the
 * requests in flight and the caches use. */
static void return_free_memory(void)
{
    static _Atomic int64_t last;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t prev = atomic_load(&last);
    if ((int64_t)now.tv_sec != prev && atomic_compare_exchange_strong(&last, &prev, (int64_t)now.tv_sec))
        malloc_trim(0);
}

/* One request, from MHD's URI log callback (the first MHD says of a request, with
 * its target as received) until it completes. */
typedef struct request_state {
    const char *target;         /* the raw target, in MHD's buffer */
    size_t target_len;          /* its length up to the first NUL */
    const char *target_error;   /* nx_server_target_error's verdict */
    bool headers_seen;          /* the handler has been called once */
    char *content;              /* a POST's or PUT's body: content_len of content_cap bytes, then a NUL */
    size_t content_len, content_cap;
} request_state;

static void *request_begins(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    request_state *st = calloc(1, sizeof *st);
    if (st) {
        st->target = uri;
        st->target_len = strlen(uri);
        st->target_error = nx_server_target_error(uri);
    }
    return st; /* NULL (out of memory): the handler drops the connection */
}

static void request_ends(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)conn;
    (void)why;
    request_state *st = *con_cls;
    if (st)
        free(st->content);
    free(*con_cls);
    *con_cls = NULL;
}

/* Whether the raw target held a NUL byte, which cut it short as a C string. MHD
 * 0.9.75 ends the target where the version begins ("<target> HTTP/1.1", the space
 * made a NUL) and hands the handler the same buffer, decoded in place: the version
 * then starts right after the target's first NUL unless the target held one. Where
 * the layout differs (no version, another buffer) nothing is concluded. */
static bool target_had_nul(const request_state *st, const char *url, const char *version)
{
    return url == st->target && version && *version && version > url + st->target_len + 1 &&
           version - url <= MAX_URL * 8;
}

/* The port MHD listens on and the address the connection arrived at (text, into
 * addr; "" when unknown). */
static unsigned local_side(struct MHD_Connection *conn, char *addr, size_t cap)
{
    addr[0] = '\0';
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (ci && getsockname(ci->connect_fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, (socklen_t)cap);
        } else if (ss.ss_family == AF_INET6) {
            const struct in6_addr *a6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
            if (IN6_IS_ADDR_V4MAPPED(a6))
                inet_ntop(AF_INET, &a6->s6_addr[12], addr, (socklen_t)cap);
            else
                inet_ntop(AF_INET6, a6, addr, (socklen_t)cap);
        }
    }
    const union MHD_ConnectionInfo *di = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);
    const union MHD_DaemonInfo *port = di ? MHD_get_daemon_info(di->daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    return port ? port->port : 0;
}

/* The request's header fields and connection facts, for nx_server_admit and nx_server_answer. */
static void request_of(struct MHD_Connection *conn, const request_state *st, const char *url, const char *method,
                       const char *version, char *local, size_t cap, nx_http_request *q)
{
    *q = (nx_http_request){
        .method = method,
        .url = url,
        .target_error = target_had_nul(st, url, version) ? "a NUL byte in the request target" : st->target_error,
        .host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host"),
        .origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin"),
        .content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
        .content_length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length"),
        .transfer_encoding = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding"),
    };
    q->port = local_side(conn, local, cap);
    q->local_addr = local[0] ? local : NULL;
}

/* The first call, headers only: a POST or PUT is admitted (nx_server_admit) before its
 * body is read, and its buffer made for Content-Length bytes (at most
 * NX_SERVER_MAX_BODY; MHD delivers exactly that many). MHD_YES with nothing queued:
 * answer on a later call; otherwise the refusal is queued. */
static enum MHD_Result request_headers(request_state *st, const nx_http_request *q, nx_api_req *r)
{
    if (!nx_server_method_has_body(q->method))
        return MHD_YES; /* answered once complete; nx_server_answer refuses a body */
    enum MHD_Result result;
    if (!nx_server_admit(r, q, &result))
        return result;
    int64_t len = 0;
    if (q->content_length)
        nx_text_i64(q->content_length, &len); /* admitted: valid and <= NX_SERVER_MAX_BODY */
    st->content = calloc((size_t)len + 1, 1);
    if (!st->content)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    st->content_cap = (size_t)len;
    return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
    request_state *st = *con_cls;
    if (!st)
        return MHD_NO;
    char local[INET6_ADDRSTRLEN];
    nx_http_request q;
    request_of(conn, st, url, method, version, local, sizeof local, &q);
    nx_api_req r = {.conn = conn, .srv = cls};
    if (!st->headers_seen) {
        /* Headers only. A request is answered once MHD holds it complete: a response
         * queued now makes MHD close the connection (a refusal, whose body is never
         * read). A GET with a body is refused now, before the body is read. */
        st->headers_seen = true;
        bool body = (q.content_length && strcmp(q.content_length, "0") != 0) || q.transfer_encoding;
        if (nx_server_method_has_body(method))
            return request_headers(st, &q, &r);
        if (!body && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0))
            return MHD_YES;
    } else if (*upload_data_size) {
        /* Body bytes: MHD sends no more than Content-Length, the buffer's size. */
        size_t n = *upload_data_size < st->content_cap - st->content_len ? *upload_data_size
                                                                          : st->content_cap - st->content_len;
        if (n)
            memcpy(st->content + st->content_len, upload_data, n);
        st->content_len += n;
        *upload_data_size = 0;
        return MHD_YES;
    }
    r.content = st->content;
    r.content_len = st->content_len;
    enum MHD_Result rc = nx_server_answer(&r, &q);
    return_free_memory();
    return rc;
}

/* libmicrohttpd's messages, at most LOG_BURST per LOG_PERIOD_S seconds: clients
 * that hang up mid-request each cause one, and a flood of them must neither fill
 * the log nor block the server on a full stderr pipe. The count of the messages
 * left out is printed with the next one let through. */
#define LOG_BURST 20
#define LOG_PERIOD_S 10
static void log_error(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static time_t period;
    static unsigned shown;
    static unsigned long dropped;
    pthread_mutex_lock(&lock);
    time_t now = time(NULL);
    if (now - period >= LOG_PERIOD_S) {
        period = now;
        shown = 0;
    }
    if (shown < LOG_BURST) {
        shown++;
        if (dropped)
            fprintf(stderr, "nxprof serve: (%lu messages left out)\n", dropped);
        dropped = 0;
        fputs("nxprof serve: ", stderr);
        vfprintf(stderr, fmt, ap);
    } else {
        dropped++;
    }
    pthread_mutex_unlock(&lock);
}

/* The listening address: bind (an IPv4 or IPv6 literal) and port into *a; -1 when
 * bind is neither. */
typedef struct listen_addr {
    struct sockaddr_storage ss;
    bool v6;
} listen_addr;

static int listen_addr_of(const char *bind, unsigned port, listen_addr *a)
{
    memset(a, 0, sizeof *a);
    struct sockaddr_in *sa4 = (struct sockaddr_in *)&a->ss;
    struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)&a->ss;
    if (inet_pton(AF_INET, bind, &sa4->sin_addr) == 1) {
        sa4->sin_family = AF_INET;
        sa4->sin_port = htons((uint16_t)port);
        return 0;
    }
    memset(a, 0, sizeof *a);
    if (inet_pton(AF_INET6, bind, &sa6->sin6_addr) == 1) {
        sa6->sin6_family = AF_INET6;
        sa6->sin6_port = htons((uint16_t)port);
        a->v6 = true;
        return 0;
    }
    return -1;
}

/* One listener: a daemon on bind:port answering with ctx, conns connections at
 * most. NULL when it cannot listen. */
static struct MHD_Daemon *start_listener(const char *bind, unsigned port, unsigned threads, unsigned conns,
                                         nx_server_ctx *ctx)
{
    listen_addr a;
    if (listen_addr_of(bind, port, &a) != 0)
        return NULL;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (a.v6 ? MHD_USE_IPv6 : 0);
    return MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, handle, ctx, MHD_OPTION_EXTERNAL_LOGGER, log_error, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a.ss, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONNECTION_IDLE_S, MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        conns - conns / 4, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_URI_LOG_CALLBACK,
        request_begins, NULL, MHD_OPTION_NOTIFY_COMPLETED, request_ends, NULL, MHD_OPTION_END);
}

static unsigned bound_port(struct MHD_Daemon *d, unsigned asked)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : asked;
}

/* The lines nxprof prints once listening (docs/api.md): the first one, which tests
 * parse, names the UI port (the API port with --disable-ui). */
static void print_urls(const nx_server_options *o, const char *bind, unsigned ui_port, unsigned api_port, FILE *out)
{
    bool v6 = strchr(bind, ':') != NULL;
    const char *l = v6 ? "[" : "", *r = v6 ? "]" : "";
    if (o->disable_ui) {
        fprintf(out, "nxprof: serving %s at http://%s%s%s:%u/ (API only, no web pages)\n", o->data_path, l, bind, r,
                api_port);
        fflush(out);
        return;
    }
    fprintf(out, "nxprof: serving %s at http://%s%s%s:%u/\n", o->data_path, l, bind, r, ui_port);
    if (api_port)
        fprintf(out, "nxprof: query API at http://%s%s%s:%u/api/v1/\n", l, bind, r, api_port);
    if (o->open_profile) {
        /* The name percent-encoded (RFC 3986 unreserved bytes kept), as the viewer's
         * /profile/<name> route decodes it. */
        fprintf(out, "nxprof: open http://%s%s%s:%u/profile/", l, bind, r, ui_port);
        for (const unsigned char *p = (const unsigned char *)o->open_profile; *p; p++) {
            if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                *p == '.' || *p == '_' || *p == '~')
                fputc(*p, out);
            else
                fprintf(out, "%%%02X", *p);
        }
        fputc('\n', out);
    }
    fflush(out);
}

/* The UI listener (NULL with --disable-ui) and the API listener (NULL when the UI
 * port serves it too: the same port, or the default API port taken by another
 * program, which is a warning; an --api-port given that cannot be had is an error).
 * 0, or -1 after saying why on stderr. */
static int start_listeners(const nx_server_options *o, const char *bind, nx_server_ctx *ui, nx_server_ctx *api,
                           struct MHD_Daemon **ui_d, struct MHD_Daemon **api_d)
{
    unsigned threads = o->threads ? o->threads : 4;
    bool two = !o->disable_ui && (o->api_port != o->port || o->port == 0);
    unsigned conns = connection_limit() / (two ? 2 : 1); /* the listeners share the descriptors */
    *ui_d = *api_d = NULL;
    if (!o->disable_ui && !(*ui_d = start_listener(bind, o->port, threads, conns, ui))) {
        fprintf(stderr, "nxprof serve: cannot listen on %s port %u (in use, or not allowed)\n", bind, o->port);
        return -1;
    }
    if (!o->disable_ui && !two)
        return 0;
    if (!(*api_d = start_listener(bind, o->api_port, threads, conns, api))) {
        if (o->disable_ui || o->api_port_given) {
            fprintf(stderr, "nxprof serve: cannot listen on %s port %u for the query API (in use, or not allowed)\n",
                    bind, o->api_port);
            return -1;
        }
        fprintf(stderr, "nxprof serve: port %u is taken: the query API (/api/v1) is served on port %u only\n",
                o->api_port, bound_port(*ui_d, o->port));
    }
    return 0;
}

int nx_server_run(const nx_server_options *o, FILE *out)
{
    const char *bind = o->bind ? o->bind : "127.0.0.1";
    listen_addr probe;
    if (listen_addr_of(bind, 0, &probe) != 0) {
        fprintf(stderr, "nxprof serve: --bind '%s' is not an IPv4 or IPv6 address\n", bind);
        return 1;
    }
    nx_server_ctx ctx = {0};
    nx_error err = {0};
    ctx.data_path = strdup(o->data_path);
    if (!ctx.data_path || nx_data_path_root(o->data_path, &ctx.root, &err) < 0) {
        fprintf(stderr, "nxprof serve: %s\n", ctx.data_path ? err.msg : "out of memory");
        free(ctx.data_path);
        return 1;
    }
    ctx.bind = bind;
    ctx.allow_hosts = o->allow_hosts;
    ctx.n_allow_hosts = o->n_allow_hosts;
    ctx.query_timeout_s = o->query_timeout_s;
    ctx.max_rows = o->max_rows;
    nx_server_ctx api_ctx = ctx;
    api_ctx.api_only = true;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &set, &old);
    signal(SIGPIPE, SIG_IGN);

    struct MHD_Daemon *ui_d, *api_d;
    int rc = start_listeners(o, bind, &ctx, &api_ctx, &ui_d, &api_d) == 0 ? 0 : 1;
    if (rc == 0) {
        print_urls(o, bind, ui_d ? bound_port(ui_d, o->port) : 0, api_d ? bound_port(api_d, o->api_port) : 0, out);
        int sig = 0;
        while (sigwait(&set, &sig) != 0)
            ;
        fprintf(stderr, "nxprof serve: stopping (signal %d)\n", sig);
    }
    if (ui_d)
        MHD_stop_daemon(ui_d);
    if (api_d)
        MHD_stop_daemon(api_d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    nx_response_cache_clear();
    nx_sql_cache_clear();
    free(ctx.data_path);
    free(ctx.root);
    return rc;
}

enum MHD_Result nx_api_health(nx_api_req *r)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"ok\":true,\"version\":");
    nx_json_put_string(&b, NXPROF_VERSION, strlen(NXPROF_VERSION));
    nx_strbuf_puts(&b, "}");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
