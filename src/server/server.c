/*
 * server.c — `nxprof serve`'s HTTP core: libmicrohttpd daemon, request limits,
 * routing, static files, clean shutdown. Endpoint semantics: docs/api.md.
 *
 * Rules enforced before any handler runs, in this order (every one answers JSON
 * {"error": ...}; every response carries the headers nx_api_queue adds):
 *   - a Host that does not name this server -> 421; an Origin that is not this
 *     server's own -> 403 (request_guard.c; GETs included: a browser sends Origin on
 *     cross-origin requests);
 *   - methods: a POST without "Content-Type: application/json" -> 415 (a POST
 *     handler gets that check, and the Origin check, from here); then GET and HEAD
 *     only, as no handler takes a POST yet: anything else -> 405 with
 *     "Allow: GET, HEAD";
 *   - a request with a body (Content-Length > 0 or chunked) -> 413;
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
 * Keep-alive: a request without a body is answered on MHD's second call, when it
 * is complete, so the connection stays open for the next (pipelined) request; a
 * request answered on the first call (a body, a method other than GET and HEAD)
 * makes MHD close the connection, since its body is never read.
 * Routing on the decoded path, split at '/':
 *   /api/health, /api/profiles, /api/schema, /api/diff, /api/profiles/<name>[/tracks|/timeline|
 *   /event|/summary|/usage|/counters|/breakdown|/search|/aggregate|/flows|/export/<Table>.csv]; other
 *   /api/... -> 404. <name> may be <S>/devices/<D> (three segments, a device
 *   profile nested in system profile S).
 *   Anything else is a static file: "/" -> /index.html, "/static/<f>" -> asset "/<f>",
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
#include "server/web_assets.h"

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

static enum MHD_Result route_api(nx_api_req *r, char **seg, size_t n)
{
    /* seg[0] == "api" */
    if (n == 2 && strcmp(seg[1], "health") == 0)
        return nx_api_health(r);
    if (n == 2 && strcmp(seg[1], "schema") == 0)
        return nx_api_schema(r);
    if (n == 2 && strcmp(seg[1], "diff") == 0)
        return nx_api_diff(r);
    if (n >= 2 && strcmp(seg[1], "profiles") == 0) {
        if (n == 2)
            return nx_api_profiles(r);
        if (n >= 5 && strcmp(seg[3], NX_LAYOUT_DEVICES_DIR) == 0) {
            /* A nested device profile: "<S>/devices/<D>" is one name (api_internal.h).
             * The segments lie in one buffer; restoring their two slashes joins them. */
            seg[3][-1] = '/';
            seg[4][-1] = '/';
            memmove(&seg[3], &seg[5], (n - 5) * sizeof *seg);
            n -= 2;
        }
        const char *name = seg[2];
        if (n == 3)
            return nx_api_profile(r, name);
        if (n == 4 && strcmp(seg[3], "tracks") == 0)
            return nx_api_tracks(r, name);
        if (n == 4 && strcmp(seg[3], "timeline") == 0)
            return nx_api_timeline(r, name);
        if (n == 4 && strcmp(seg[3], "event") == 0)
            return nx_api_event(r, name);
        if (n == 4 && strcmp(seg[3], "summary") == 0)
            return nx_api_summary(r, name);
        if (n == 4 && strcmp(seg[3], "insights") == 0)
            return nx_api_insights(r, name);
        if (n == 4 && strcmp(seg[3], "ranks") == 0)
            return nx_api_ranks(r, name);
        if (n == 4 && strcmp(seg[3], "usage") == 0)
            return nx_api_usage(r, name);
        if (n == 4 && strcmp(seg[3], "counters") == 0)
            return nx_api_counters(r, name);
        if (n == 4 && strcmp(seg[3], "breakdown") == 0)
            return nx_api_breakdown(r, name);
        if (n == 4 && strcmp(seg[3], "search") == 0)
            return nx_api_search(r, name);
        if (n == 4 && strcmp(seg[3], "aggregate") == 0)
            return nx_api_aggregate(r, name);
        if (n == 4 && strcmp(seg[3], "flows") == 0)
            return nx_api_flows(r, name);
        if (n == 5 && strcmp(seg[3], "export") == 0)
            return nx_api_export(r, name, seg[4]);
    }
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

/* 405 for every method but GET and HEAD (no handler takes another yet). */
static enum MHD_Result method_not_allowed(nx_api_req *r)
{
    static const char msg[] = "{\"error\":\"method not allowed (GET and HEAD only)\"}";
    struct MHD_Response *resp = MHD_create_response_from_buffer(sizeof msg - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
    MHD_add_response_header(resp, "Allow", "GET, HEAD");
    if (!r->conn && r->body)
        nx_strbuf_append(r->body, msg, sizeof msg - 1);
    enum MHD_Result ret = nx_api_queue(r, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result nx_server_answer(nx_api_req *r, const nx_http_request *q)
{
    const char *url = q->url;
    if (!nx_server_host_allowed(r->srv, q->host, q->port, q->local_addr))
        /* Neither header is echoed: an answer quotes nothing a foreign page chose. */
        return nx_api_error(r, MHD_HTTP_MISDIRECTED_REQUEST,
                            "the request's Host is not this server (nxprof serve --allow-host NAME admits a name)");
    if (!nx_server_origin_allowed(r->srv, q->origin, q->port, q->local_addr))
        return nx_api_error(r, MHD_HTTP_FORBIDDEN, "a cross-origin request is refused (its Origin is not this server)");
    r->head = strcmp(q->method, "HEAD") == 0;
    if (strcmp(q->method, "POST") == 0 && !nx_server_json_content_type(q->content_type))
        return nx_api_error(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "a POST must have Content-Type: application/json");
    if (strcmp(q->method, "GET") != 0 && !r->head)
        return method_not_allowed(r);
    if ((q->content_length && strcmp(q->content_length, "0") != 0) || q->transfer_encoding)
        return nx_api_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "requests must not have a body");
    if (q->target_error)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "%s", q->target_error);
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
    if (strncmp(url, "/api/", 5) != 0 && strcmp(url, "/api") != 0)
        return serve_static(r, url);
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
    return route_api(r, seg, n);
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
    (void)upload_data;
    request_state *st = *con_cls;
    if (!st)
        return MHD_NO;
    const char *content_length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    const char *transfer_encoding = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
    if (!st->headers_seen) {
        st->headers_seen = true;
        /* Headers only. A request without a body is answered on the next call, once
         * MHD holds it complete: a response queued now makes MHD close the
         * connection. A body is refused now, before it is read. */
        bool body = (content_length && strcmp(content_length, "0") != 0) || transfer_encoding;
        if (!body && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0))
            return MHD_YES;
    } else if (*upload_data_size) {
        *upload_data_size = 0; /* not reached: a request with a body is answered on the first call */
        return MHD_YES;
    }
    char local[INET6_ADDRSTRLEN];
    nx_http_request q = {
        .method = method,
        .url = url,
        .target_error = target_had_nul(st, url, version) ? "a NUL byte in the request target" : st->target_error,
        .host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host"),
        .origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin"),
        .content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
        .content_length = content_length,
        .transfer_encoding = transfer_encoding,
    };
    q.port = local_side(conn, local, sizeof local);
    q.local_addr = local[0] ? local : NULL;
    nx_api_req r = {.conn = conn, .srv = cls};
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

int nx_server_run(const nx_server_options *o, FILE *out)
{
    const char *bind = o->bind ? o->bind : "127.0.0.1";
    struct sockaddr_in sa4;
    struct sockaddr_in6 sa6;
    struct sockaddr *sa;
    bool v6 = false;
    memset(&sa4, 0, sizeof sa4);
    memset(&sa6, 0, sizeof sa6);
    if (inet_pton(AF_INET, bind, &sa4.sin_addr) == 1) {
        sa4.sin_family = AF_INET;
        sa4.sin_port = htons((uint16_t)o->port);
        sa = (struct sockaddr *)&sa4;
    } else if (inet_pton(AF_INET6, bind, &sa6.sin6_addr) == 1) {
        sa6.sin6_family = AF_INET6;
        sa6.sin6_port = htons((uint16_t)o->port);
        sa = (struct sockaddr *)&sa6;
        v6 = true;
    } else {
        fprintf(stderr, "nxprof serve: --bind '%s' is not an IPv4 or IPv6 address\n", bind);
        return 1;
    }

    nx_server_ctx ctx = {0};
    nxpq_error err = {{0}};
    ctx.data_path = strdup(o->data_path);
    if (!ctx.data_path || nx_data_path_root(o->data_path, &ctx.root, &err) < 0) {
        fprintf(stderr, "nxprof serve: %s\n", ctx.data_path ? err.msg : "out of memory");
        free(ctx.data_path);
        return 1;
    }
    ctx.bind = bind;
    ctx.allow_hosts = o->allow_hosts;
    ctx.n_allow_hosts = o->n_allow_hosts;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &set, &old);
    signal(SIGPIPE, SIG_IGN);

    unsigned threads = o->threads ? o->threads : 4;
    unsigned conns = connection_limit();
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, handle, &ctx, MHD_OPTION_EXTERNAL_LOGGER, log_error, NULL,
        MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_THREAD_POOL_SIZE,
        threads, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONNECTION_IDLE_S, MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        conns - conns / 4, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_URI_LOG_CALLBACK,
        request_begins, NULL, MHD_OPTION_NOTIFY_COMPLETED, request_ends, NULL, MHD_OPTION_END);
    int rc = 0;
    if (!d) {
        fprintf(stderr, "nxprof serve: cannot listen on %s port %u (in use, or not allowed)\n", bind, o->port);
        rc = 1;
    } else {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        unsigned port = info ? info->port : o->port;
        const char *host_l = v6 ? "[" : "", *host_r = v6 ? "]" : "";
        fprintf(out, "nxprof: serving %s at http://%s%s%s:%u/\n", o->data_path, host_l, bind, host_r, port);
        if (o->open_profile) {
            /* The name percent-encoded (RFC 3986 unreserved bytes kept), as the viewer's
             * /profile/<name> route decodes it. */
            fprintf(out, "nxprof: open http://%s%s%s:%u/profile/", host_l, bind, host_r, port);
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
        int sig = 0;
        while (sigwait(&set, &sig) != 0)
            ;
        fprintf(stderr, "nxprof serve: stopping (signal %d)\n", sig);
        MHD_stop_daemon(d);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    nx_response_cache_clear();
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
