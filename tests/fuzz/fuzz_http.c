/*
 * fuzz_http.c — libFuzzer harness for the HTTP API's request handling: the
 * server's limits, percent-decoding, routing, parameter validation, profile name
 * resolution and every handler (src/server/, docs/api.md), over the fixture's data
 * path (fuzz_fixture.h: a system profile, two device profiles, a system profile
 * with nested device profiles, and a damaged copy of a device profile).
 *
 * No socket and no libmicrohttpd connection: the request is answered by
 * nx_server_answer (api_internal.h), the function MHD's request callback calls,
 * with the query parameters given as a list. An input is a request line, as a
 * client would send it, then optional header lines:
 *
 *   GET /api/profiles/tiny-nd0-nc0/timeline?tables=Instruction&start=0&end=9&width=5 HTTP/1.1
 *   Content-Length: 0
 *
 * The method is the text before the first space (no space: GET and the whole
 * line is the target); the target ends at the next space or the line's end. It is
 * split as libmicrohttpd 0.9.75 splits it: the path before the first '?' is
 * decoded with the server's unescape callback (nx_server_unescape); the query is
 * cut at each '&' into key[=value] pairs, '+' becoming a space, then each key and
 * value decoded with the same callback; a key without '=' has no value. The raw
 * target is checked first (nx_server_target_error), as MHD's URI log callback does.
 * Of the headers, Host, Origin, Content-Type, Content-Length and Transfer-Encoding
 * are passed on (names matched ignoring case); what follows the first blank line
 * ("\n\n" or "\r\n\r\n") is the request's body, whatever Content-Length says (the
 * server's callback hands over exactly Content-Length bytes; the limits on the
 * header are nx_server_admit's, which the harness reaches through nx_server_answer). The server listens on 127.0.0.1 port
 * 3001 and the connection arrived there; "fuzz.example" is an --allow-host name. A
 * NUL byte ends the request.
 *
 * Invariants: exactly one response, its status one of those docs/api.md lists
 * (200, 400, 403, 404, 405, 408, 411, 413, 414, 415, 421; 500 only from the damaged profile, named
 * in the path or, for /api/diff, in a parameter); every API
 * response body (except a CSV export's) is valid JSON (yajl's tree parser), an
 * error body an object with a string "error"; in timeline and usage responses
 * every event or sample time (the window's start plus its offset) is a time of the
 * fixture and every duration fits within it (so an offset that wrapped is caught
 * even without UBSan); no body names the fixture's absolute directory more often than the request did (a
 * parameter name the answer quotes may hold it).
 *
 * NXFUZZ_VERBOSE=1 in the environment prints each request's status and the start
 * of its body on stderr (replay_http FILE... shows what an input does).
 *
 * Seeds: tests/fuzz/corpus/http/ (tests/fuzz/make_corpus.sh).
 */
#define _GNU_SOURCE /* memmem */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "fuzz_fixture.h"
#include "server/api_internal.h"
#include "server/response_cache.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PARAMS 256

static nx_server_ctx ctx;
static const char *const allow_hosts[] = {"fuzz.example"};
#define PORT 3001
#define LOCAL_ADDR "127.0.0.1"
static char root[4096];
static __int128 t_lo, t_hi;
static bool json_int(yajl_val v, __int128 *out);
static yajl_val member(yajl_val obj, const char *key);
static bool verbose;   /* NXFUZZ_VERBOSE=1: each request's status and the start of its body on stderr */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(root, sizeof root, "%s/profiles/global", nxfuzz_data_path());
    ctx.data_path = (char *)nxfuzz_data_path();
    ctx.root = root;
    ctx.bind = LOCAL_ADDR;
    ctx.allow_hosts = allow_hosts;
    ctx.n_allow_hosts = 1;
    ctx.query_timeout_s = 1; /* the query API's SQL: a slow query costs a second, not 30 */
    ctx.max_rows = 1000;
    verbose = getenv("NXFUZZ_VERBOSE") != NULL;
    /* The fixture's time bounds, from its own listing. */
    nx_strbuf body = NX_STRBUF_INIT;
    nx_api_req r = {.srv = &ctx, .body = &body};
    nx_http_request q = {.method = "GET", .url = "/api/profiles", .port = PORT, .local_addr = LOCAL_ADDR};
    nx_server_answer(&r, &q);
    char errbuf[256];
    nx_strbuf_putc(&body, '\0');
    yajl_val doc = r.status == 200 ? yajl_tree_parse(body.data, errbuf, sizeof errbuf) : NULL;
    yajl_val list = member(doc, "profiles");
    t_lo = (__int128)1 << 100;
    t_hi = -t_lo;
    for (size_t i = 0; list && YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
        __int128 a, b;
        if (json_int(member(list->u.array.values[i], "first_ts"), &a) &&
            json_int(member(list->u.array.values[i], "last_ts"), &b)) {
            t_lo = a < t_lo ? a : t_lo;
            t_hi = b > t_hi ? b : t_hi;
        }
    }
    NXFUZZ_CHECK(t_lo <= t_hi);
    t_lo -= (__int128)60 * 1000000000;
    t_hi += (__int128)60 * 1000000000;
    yajl_tree_free(doc);
    nx_strbuf_free(&body);
    nx_response_cache_clear();
    return 0;
}

static bool same_name(const char *a, size_t n, const char *b)
{
    if (strlen(b) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] | 32) : a[i];
        char y = b[i] >= 'A' && b[i] <= 'Z' ? (char)(b[i] | 32) : b[i];
        if (x != y)
            return false;
    }
    return true;
}

/* libmicrohttpd's MHD_unescape_plus. */
static void unescape_plus(char *s)
{
    for (; *s; s++)
        if (*s == '+')
            *s = ' ';
}

/* Splits the query (in place) into params as MHD_parse_arguments_ does. */
static size_t parse_query(char *q, nx_api_kv *params)
{
    size_t n = 0;
    while (q && *q && n < MAX_PARAMS) {
        char *amp = strchr(q, '&');
        if (amp)
            *amp++ = '\0';
        char *eq = strchr(q, '=');
        if (eq)
            *eq++ = '\0';
        unescape_plus(q);
        nx_server_unescape(q);
        if (eq) {
            unescape_plus(eq);
            nx_server_unescape(eq);
        }
        params[n++] = (nx_api_kv){q, eq};
        q = amp;
    }
    return n;
}

/* The earliest and latest timestamps of the fixture's profiles (from /api/profiles),
 * widened by a minute (t_lo, t_hi): every event and sample time a response implies
 * lies inside. */

/* An integer of a response (a JSON number, or a decimal string beyond 2^53). */
static bool json_int(yajl_val v, __int128 *out)
{
    const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : YAJL_IS_NUMBER(v) ? YAJL_GET_NUMBER(v) : NULL;
    if (!s || !*s)
        return false;
    bool neg = *s == '-';
    __int128 r = 0;
    for (s += neg; *s; s++) {
        if (*s < '0' || *s > '9' || r > ((__int128)1 << 100))
            return false;
        r = r * 10 + (*s - '0');
    }
    *out = neg ? -r : r;
    return true;
}

static yajl_val member(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    return obj && YAJL_IS_OBJECT(obj) ? yajl_tree_get(obj, path, yajl_t_any) : NULL;
}

/* Every time offset in a timeline or usage response, added to the window's start,
 * is a time of the fixture; every duration fits between its first and last. */
static void check_times(yajl_val doc)
{
    __int128 start, t, d;
    if (!json_int(member(doc, "start"), &start))
        return;
    yajl_val tables = member(doc, "tables"), series = member(doc, "series");
    for (size_t i = 0; tables && YAJL_IS_ARRAY(tables) && i < tables->u.array.len; i++) {
        yajl_val tracks = member(tables->u.array.values[i], "tracks");
        for (size_t j = 0; tracks && YAJL_IS_ARRAY(tracks) && j < tracks->u.array.len; j++) {
            yajl_val st = member(tracks->u.array.values[j], "start"), du = member(tracks->u.array.values[j], "dur");
            NXFUZZ_CHECK(st && du && YAJL_IS_ARRAY(st) && YAJL_IS_ARRAY(du) && st->u.array.len == du->u.array.len);
            for (size_t k = 0; k < st->u.array.len; k++) {
                NXFUZZ_CHECK(json_int(st->u.array.values[k], &t) && json_int(du->u.array.values[k], &d));
                NXFUZZ_CHECK(start + t >= t_lo && start + t <= t_hi && d >= 0 && d <= t_hi - t_lo);
            }
        }
    }
    for (size_t i = 0; series && YAJL_IS_ARRAY(series) && i < series->u.array.len; i++) {
        yajl_val ts = member(series->u.array.values[i], "t"), before = member(series->u.array.values[i], "before");
        for (size_t k = 0; ts && YAJL_IS_ARRAY(ts) && k < ts->u.array.len; k++) {
            NXFUZZ_CHECK(json_int(ts->u.array.values[k], &t));
            NXFUZZ_CHECK(start + t >= t_lo && start + t <= t_hi);
        }
        if (before && YAJL_IS_OBJECT(before)) {
            NXFUZZ_CHECK(json_int(member(before, "t"), &t));
            NXFUZZ_CHECK(start + t >= t_lo && start + t <= t_hi);
        }
    }
}

static void check_json(const char *body, size_t len, bool error)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return;
    memcpy(copy, body, len);
    copy[len] = '\0';
    char errbuf[256];
    yajl_val v = strlen(copy) == len ? yajl_tree_parse(copy, errbuf, sizeof errbuf) : NULL;
    if (!v)
        fprintf(stderr, "response body is not JSON: %.300s\n", copy);
    NXFUZZ_CHECK(v != NULL);
    if (error) {
        const char *path[] = {"error", NULL};
        NXFUZZ_CHECK(YAJL_IS_OBJECT(v) && YAJL_IS_STRING(yajl_tree_get(v, path, yajl_t_string)));
    } else {
        check_times(v);
    }
    yajl_tree_free(v);
    free(copy);
}

/* How many times `needle` occurs in the n bytes at p (which may hold NULs). */
static size_t occurrences(const void *p, size_t n, const char *needle)
{
    size_t count = 0, k = strlen(needle);
    for (const char *at = p, *end = at + n; k && (at = memmem(at, (size_t)(end - at), needle, k)); at += k)
        count++;
    return count;
}

/* Whether the request names the damaged profile: in its path, or in a parameter's
 * value (/api/diff takes its profiles as parameters a and b). */
static bool names_broken(const char *target, const nx_api_kv *params, size_t n)
{
    if (strstr(target, "broken"))
        return true;
    for (size_t i = 0; i < n; i++)
        if (params[i].value && strstr(params[i].value, "broken"))
            return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx.root)
        LLVMFuzzerInitialize(NULL, NULL);
    size_t len = strnlen((const char *)data, size);
    char *req = malloc(len + 1);
    if (!req)
        return 0;
    memcpy(req, data, len);
    req[len] = '\0';

    /* Request line, then header lines. */
    char *line_end = strpbrk(req, "\r\n");
    char *headers = NULL;
    if (line_end) {
        headers = line_end + 1;
        *line_end = '\0';
    }
    const char *method = "GET";
    char *target = req, *sp = strchr(req, ' ');
    if (sp) {
        *sp = '\0';
        method = req;
        target = sp + 1;
        char *sp2 = strchr(target, ' ');
        if (sp2)
            *sp2 = '\0';
    }
    /* The body: what follows the first blank line. */
    const char *content = NULL;
    char *blank = headers ? strstr(headers, "\n\n") : NULL, *crlf = headers ? strstr(headers, "\r\n\r\n") : NULL;
    if (crlf && (!blank || crlf < blank)) {
        *crlf = '\0';
        content = crlf + 4;
    } else if (blank) {
        *blank = '\0';
        content = blank + 2;
    }
    nx_http_request q = {.method = method, .url = target, .target_error = nx_server_target_error(target),
                         .port = PORT, .local_addr = LOCAL_ADDR};
    static const char *const names[] = {"host", "origin", "content-type", "content-length", "transfer-encoding"};
    const char **fields[] = {&q.host, &q.origin, &q.content_type, &q.content_length, &q.transfer_encoding};
    for (char *h = headers; h && *h;) {
        char *next = strpbrk(h, "\r\n");
        if (next)
            *next++ = '\0';
        char *colon = strchr(h, ':');
        if (colon) {
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (same_name(h, (size_t)(colon - h), names[i]))
                    *fields[i] = v;
        }
        h = next;
    }
    char *query = strchr(target, '?');
    if (query)
        *query++ = '\0';
    nx_server_unescape(target);
    static nx_api_kv params[MAX_PARAMS];
    size_t n_params = parse_query(query, params);

    nx_strbuf body = NX_STRBUF_INIT;
    nx_api_req r = {.conn = NULL, .srv = &ctx, .params = params, .n_params = n_params, .body = &body,
                    .content = content, .content_len = content ? strlen(content) : 0};
    (void)nx_server_answer(&r, &q);
    unsigned st = r.status;
    if (verbose)
        fprintf(stderr, "%u %s %s (%zu params) -> %.*s\n", st, method, target, n_params,
                (int)(body.len < 160 ? body.len : 160), body.data ? body.data : "");
    if (st == 500)
        fprintf(stderr, "500: %.*s\n", (int)(body.len < 300 ? body.len : 300), body.data ? body.data : "");
    NXFUZZ_CHECK(st == 200 || st == 400 || st == 403 || st == 404 || st == 405 || st == 408 || st == 411 ||
                 st == 413 || st == 414 || st == 415 || st == 421 ||
                 (st == 500 && names_broken(target, params, n_params)));
    bool api = strncmp(target, "/api/", 5) == 0 || strcmp(target, "/api") == 0;
    bool csv = st == 200 && strstr(target, "/export/") != NULL;
    if (!nx_strbuf_failed(&body) && ((api && !csv) || st != 200)) {
        NXFUZZ_CHECK(body.len > 0);
        check_json(body.data, body.len, st != 200);
    }
    /* Absolute paths never reach a client: an answer may quote what the request
     * said (a parameter's name), never more. */
    if (body.len > 0)
        NXFUZZ_CHECK(occurrences(body.data, body.len, nxfuzz_scratch()) <= occurrences(data, size, nxfuzz_scratch()));
    nx_strbuf_free(&body);
    free(req);
    /* Each input from the same state: no cached response from an earlier one. */
    nx_response_cache_clear();
    return 0;
}
