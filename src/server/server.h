/*
 * server.h — the HTTP server behind `nxprof serve` and `nxprof view`: the embedded
 * web UI and the JSON API (docs/api.md) on one port, the reference-compatible query API
 * also on a second (api_port), with libmicrohttpd's internal polling thread and a
 * thread pool per listener.
 */
#ifndef NX_SERVER_H
#define NX_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct nx_server_options {
    const char *data_path;   /* the data path (profile/profile_layout.h) */
    const char *bind;        /* IPv4 or IPv6 literal; NULL = 127.0.0.1 */
    unsigned port;           /* 0 = let the kernel choose */
    unsigned threads;        /* pool size; 0 = 4 */
    const char *open_profile;/* optional: a profile name the printed URL points at */
    const char *const *allow_hosts; /* more host names a request's Host may give (--allow-host) */
    size_t n_allow_hosts;
    /* The reference-compatible query API (/api/v1, docs/api.md) is answered on the
     * UI port and also on api_port, a second listener with the same bind address,
     * guards and limits that serves /api/ only (no pages). */
    unsigned api_port;       /* NX_SERVER_DEFAULT_API_PORT unless given; 0: the kernel picks;
                                the UI port's number: no second listener */
    bool api_port_given;     /* failing to listen on api_port is an error (else a warning:
                                the UI port serves the query API alone) */
    bool disable_ui;         /* --disable-ui: only the API listener, no web pages */
    double query_timeout_s;  /* a query's time limit in seconds; 0: NX_SERVER_DEFAULT_QUERY_TIMEOUT_S */
    uint64_t max_rows;       /* the most rows a query answers; 0: NX_SERVER_DEFAULT_MAX_ROWS */
} nx_server_options;

#define NX_SERVER_DEFAULT_API_PORT 3002u
#define NX_SERVER_DEFAULT_QUERY_TIMEOUT_S 30.0
#define NX_SERVER_DEFAULT_MAX_ROWS 100000u

/* Whether `name` may be given to --allow-host: a DNS name (letters, digits, '-',
 * '.'), an IPv4 literal or an IPv6 literal in brackets, without a port. */
bool nx_server_allow_host_valid(const char *name);

/* Starts the server, prints "nxprof: serving <data_path> at http://HOST:PORT/" (then
 * "nxprof: query API at http://HOST:API_PORT/api/v1/" when a second listener runs,
 * and the profile's URL when open_profile is set; with disable_ui, the first line
 * names the API port and ends "(API only, no web pages)") on `out` and flushes it, then blocks
 * until SIGINT or SIGTERM and stops cleanly. Returns 0, or 1 after printing why it
 * could not start (bad address, port in use, ...) on stderr. */
int nx_server_run(const nx_server_options *o, FILE *out);

#endif
