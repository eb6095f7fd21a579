/*
 * api_internal.h — what the HTTP API handlers (api_*.c) share with the server core
 * (server.c): the request context, response helpers, parameter parsing, profile
 * resolution and JSON value writing. Not a public header: only src/server/ uses it.
 *
 * Rules implemented here and relied on by every handler (docs/api.md):
 *   - integer parameters: optional '-', then decimal digits, no leading zeros beyond
 *     "0" (so "007" and "-0" are refused), within int64 (util/text.h nx_text_i64);
 *     anything else is a 400;
 *   - a profile name is <S> or <S>/devices/<D> (a device profile nested in system
 *     profile S), resolved by profile/profile_layout.h nx_layout_find: an invalid name
 *     is a 400; a missing profile, or a symlink leading out of the data path, a 404
 *     (the same answer, so nothing about the outside is revealed);
 *   - errors are {"error": "..."} JSON bodies with a 4xx/5xx status.
 */
#ifndef NX_SERVER_API_INTERNAL_H
#define NX_SERVER_API_INTERNAL_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/profile_layout.h"
#include "query/analysis.h"
#include "query/event.h"
#include "query/engine/json_cell.h"
#include "util/json.h"
#include "util/strbuf.h"

typedef struct nx_server_ctx {
    char *data_path;      /* as given (for messages) */
    char *root;           /* the data path's root (profile_layout.h), realpath'd per request */
    const char *bind;     /* the --bind address literal (NULL: none known) */
    const char *const *allow_hosts; /* the --allow-host names */
    size_t n_allow_hosts;
    bool api_only;        /* this listener serves /api/ only, no web pages (the API port) */
    double query_timeout_s; /* the query API's limits (nx_server_options; 0: the defaults) */
    uint64_t max_rows;
} nx_server_ctx;

/* A query parameter of a request answered without a connection (value NULL: the
 * key had no '='). */
typedef struct nx_api_kv {
    const char *key, *value;
} nx_api_kv;

typedef struct nx_api_req {
    struct MHD_Connection *conn;   /* NULL: answered without a connection (below) */
    const nx_server_ctx *srv;
    bool head;            /* HEAD request: headers only (MHD drops the body) */
    /* Without a connection (tests and the fuzz harness, tests/fuzz/fuzz_http.c):
     * the decoded query parameters stand in for MHD's (looked up as MHD does: the
     * first whose key matches ignoring ASCII case), the status of the response is
     * recorded instead of queued, and the body is appended to `body` when that is
     * not NULL (an export's CSV is produced in full). */
    const nx_api_kv *params;
    size_t n_params;
    unsigned status;      /* the status of the response (0: none was queued) */
    nx_strbuf *body;
    /* The request's body (POST and PUT: JSON, at most NX_SERVER_MAX_BODY bytes, with
     * a NUL after its last byte; content_len 0 and content "" for none). */
    const char *content;
    size_t content_len;
} nx_api_req;

/* ---- requests ---- */
/* The largest request body accepted (POST and PUT), in bytes: 1 MiB. */
#define NX_SERVER_MAX_BODY ((size_t)1 << 20)

/* What the rules before routing look at in a request (server.c's header). Header
 * values are NULL when the header is absent. */
typedef struct nx_http_request {
    const char *method;
    const char *url;            /* the decoded path */
    const char *target_error;   /* why the raw request target is malformed (nx_server_target_error), or NULL */
    const char *host, *origin, *content_type, *content_length, *transfer_encoding;
    unsigned port;              /* the port the server listens on */
    const char *local_addr;     /* the address literal the connection arrived at, or NULL */
} nx_http_request;

/* The server's percent-decoding (the rule in server.c's header), in place; returns
 * the new length. */
size_t nx_server_unescape(char *s);
/* Why the request target `raw`, as received (before any decoding), is refused: a '%'
 * not followed by two hex digits, or "%00"; NULL when it is well formed. */
const char *nx_server_target_error(const char *raw);
/* Answers one request whose headers (and body, in r->content) are in: the guards
 * (request_guard.c), the limits, then routing on the method and the decoded path
 * (rules in server.c's header). Queues exactly one response. */
enum MHD_Result nx_server_answer(nx_api_req *r, const nx_http_request *q);
/* The rules that come before routing (guards and limits, server.c's header), on the
 * headers alone: true when the request may go on, else false after queueing its
 * refusal (*result set). MHD's callback asks this before it reads a body, so a
 * refused body is never read. */
bool nx_server_admit(nx_api_req *r, const nx_http_request *q, enum MHD_Result *result);
/* Whether a method carries a request body (POST, PUT). */
bool nx_server_method_has_body(const char *method);
/* request_guard.c: whether a Host header (NULL: none) names this server listening
 * on `port`, a connection having arrived at local_addr (may be NULL); whether an
 * Origin header (NULL: none) is this server's own; whether a Content-Type is JSON. */
bool nx_server_host_allowed(const nx_server_ctx *srv, const char *host, unsigned port, const char *local_addr);
bool nx_server_origin_allowed(const nx_server_ctx *srv, const char *origin, unsigned port, const char *local_addr);
bool nx_server_json_content_type(const char *content_type);

/* ---- responses (each queues exactly one response and returns MHD's result) ---- */
/* Queues resp with `status` on r's connection (or records the status, without one),
 * after adding the headers every response carries: Cache-Control: no-store,
 * X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer, X-Frame-Options:
 * DENY and Content-Security-Policy: frame-ancestors 'none'. */
enum MHD_Result nx_api_queue(nx_api_req *r, unsigned status, struct MHD_Response *resp);
/* Queues body (taken) as the response with that Content-Type; nx_api_json: as JSON. */
enum MHD_Result nx_api_body(nx_api_req *r, unsigned status, nx_strbuf *body, const char *content_type);
enum MHD_Result nx_api_json(nx_api_req *r, unsigned status, nx_strbuf *body);
enum MHD_Result nx_api_error(nx_api_req *r, unsigned status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- parameters ---- */
/* The query parameter `name`, or NULL. Parameters are single-valued: the router
 * refuses a request that gives one twice (keys compared ignoring ASCII case, as
 * libmicrohttpd looks them up). */
const char *nx_api_param(nx_api_req *r, const char *name);
/* Parameter `name` as an int64 in [min, max]: 0 (value in *out, or *out = def when
 * absent and not required), or -1 after queueing a 400 (*result set). */
int nx_api_int_param(nx_api_req *r, const char *name, bool required, int64_t def, int64_t min, int64_t max,
                     int64_t *out, enum MHD_Result *result);

/* One event's parameters: ordinal (required, >= 0) and the optional start hint:
 * 0 (*start = hint, or NULL when absent), or -1 after queueing a 400 (*result set). */
int nx_api_event_params(nx_api_req *r, int64_t *ordinal, int64_t *hint, const int64_t **start,
                        enum MHD_Result *result);

/* Widest sampled window, in pixels (buckets). */
#define NX_API_MAX_WIDTH 10000
/* The window parameters start and end (required, int64 ns, end >= start) and
 * width (1..NX_API_MAX_WIDTH; required when default_width is 0, else that
 * default): 0, or -1 after queueing a 400 (*result set). */
int nx_api_window_params(nx_api_req *r, int64_t default_width, int64_t *start, int64_t *end, int64_t *width,
                         enum MHD_Result *result);
/* A sampled window's answer begins {"start":S,"end":E,"width":W (the caller goes on
 * with its members and closes the object). */
void nx_api_window_head(nx_strbuf *b, int64_t start, int64_t end, int64_t width);
/* The error answer of a query that failed with rc: 503 when it went over the memory
 * budget (query/engine/budget.h), else 500, with err's message. */
enum MHD_Result nx_api_query_failed(nx_api_req *r, int rc, const nx_error *err);

/* The comma-separated table list of parameter "tables" (dflt when absent), split in
 * place into buf: each name must satisfy known(), none twice, at most max of them
 * (`what` names the kind in messages). 0 (tables[0..*n) point into buf), or -1
 * after queueing a 400 (*result set). */
int nx_api_tables_param(nx_api_req *r, const char *dflt, bool (*known)(const char *name), const char *what,
                        char *buf, size_t bufsize, const char **tables, size_t max, size_t *n,
                        enum MHD_Result *result);

/* ---- profiles ---- */
/* Resolves a profile name (rule above) to its real directory (malloc'd into *dir):
 * 0, or the HTTP status to answer (400 invalid name, 404 no such profile, 500 out of
 * memory) with the message in msg. Queues nothing. */
unsigned nx_api_resolve_profile(const nx_server_ctx *srv, const char *name, char **dir, char *msg, size_t cap);
/* nx_api_resolve_profile, answering its errors: 0, or -1 after queueing the 400, 404
 * or 500 with *result set. */
int nx_api_profile_dir(nx_api_req *r, const char *name, char **dir, enum MHD_Result *result);
/* *open = the name device profile `dev` of system profile `sys` (directory sys_dir)
 * is served under, given the directory profile_layout.h nx_device_profile_dir found
 * for it (dev_dir, NULL when it refused the name): nx_layout_device_name's, NULL
 * when that name does not resolve (rules above). malloc'd. 0, or -1 when out of
 * memory. */
int nx_api_device_open_name(const nx_server_ctx *srv, const char *sys, const char *sys_dir, const char *dev,
                            const char *dev_dir, char **open);

/* ---- JSON ---- */
/* JSON strings are written by util/json.h nx_json_put_string (a request's raw
 * bytes or a damaged file's become \ufffd, so the text is always valid JSON). */
/* An error message for a client as a JSON string: files named relative to the
 * profiles root (or the data path), never by their absolute path (as nx_api_error). */
void nx_api_json_message(const nx_server_ctx *srv, nx_strbuf *b, const char *msg);
/* Integers are written by util/json.h nx_json_put_i64 with safe set: beyond
 * +-2^53 as decimal strings. nx_json_i128 does the same for a difference of two
 * int64 values, which may lie beyond int64 (a window's start far from an
 * event's). */
void nx_json_i128(nx_strbuf *b, __int128 v);
/* Times t[0..n) as the JSON array of their offsets from start (nx_json_i128 each). */
void nx_json_time_offsets(nx_strbuf *b, const int64_t *t, size_t n, int64_t start);

/* ---- handlers ---- */
/* Every handler reads its parameters from r (query parameters, r->content). */
enum MHD_Result nx_api_health(nx_api_req *r);
enum MHD_Result nx_api_profiles(nx_api_req *r);
enum MHD_Result nx_api_profile(nx_api_req *r, const char *name);
enum MHD_Result nx_api_tracks(nx_api_req *r, const char *name);
enum MHD_Result nx_api_timeline(nx_api_req *r, const char *name);
enum MHD_Result nx_api_event(nx_api_req *r, const char *name);
enum MHD_Result nx_api_summary(nx_api_req *r, const char *name);
/* The summary of system profile `name` in `dir` (api_system.c; nx_api_summary hands
 * system profiles to it). */
enum MHD_Result nx_api_system_summary(nx_api_req *r, const char *name, const char *dir, int64_t rank,
                                      bool profiler_rows);
enum MHD_Result nx_api_usage(nx_api_req *r, const char *name);
enum MHD_Result nx_api_memory(nx_api_req *r, const char *name);
enum MHD_Result nx_api_counters(nx_api_req *r, const char *name);
enum MHD_Result nx_api_schema(nx_api_req *r);
/* GET /api/profiles/<name>/<a->name>: analysis a of query/analysis.h's registry
 * (api_analysis.c). */
enum MHD_Result nx_api_analysis(nx_api_req *r, const nx_analysis *a, const char *name);
enum MHD_Result nx_api_export(nx_api_req *r, const char *name, const char *file);
/* api_nki.c: /source, and the "nki" member of an Instruction's /event (ev, as
 * /event read it): appended to b (nothing when the profile has no
 * KernelInstructions); 0, or -1 with err. */
enum MHD_Result nx_api_source(nx_api_req *r, const char *name);
int nx_api_nki_member(nx_strbuf *b, const char *dir, const nx_event *ev, nx_error *err);
/* api_search.c: search, selection aggregates and flows of events. */
enum MHD_Result nx_api_search(nx_api_req *r, const char *name);
enum MHD_Result nx_api_aggregate(nx_api_req *r, const char *name);
enum MHD_Result nx_api_flows(nx_api_req *r, const char *name);
/* GET and PUT /api/profiles/<name>/annotations (api_annotations.c). */
enum MHD_Result nx_api_annotations_get(nx_api_req *r, const char *name);
enum MHD_Result nx_api_annotations_put(nx_api_req *r, const char *name);
/* GET /api/diff (api_diff.c). */
enum MHD_Result nx_api_diff(nx_api_req *r);
/* The reference-compatible API (api_v1.c): GET /api/v1/health and
 * POST /api/v1/db/<name>/_search. */
enum MHD_Result nx_api_v1_health(nx_api_req *r);
enum MHD_Result nx_api_v1_search(nx_api_req *r, const char *name);

#endif
