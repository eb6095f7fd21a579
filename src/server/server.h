/*
 * server.h — the HTTP server behind `nxprof serve` and `nxprof view`: the embedded
 * web UI and the JSON API (docs/api.md) on one port, with libmicrohttpd's internal
 * polling thread and a thread pool.
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
} nx_server_options;

/* Whether `name` may be given to --allow-host: a DNS name (letters, digits, '-',
 * '.'), an IPv4 literal or an IPv6 literal in brackets, without a port. */
bool nx_server_allow_host_valid(const char *name);

/* Starts the server, prints "nxprof: serving <data_path> at http://HOST:PORT/" (plus
 * the profile's URL when open_profile is set) on `out` and flushes it, then blocks
 * until SIGINT or SIGTERM and stops cleanly. Returns 0, or 1 after printing why it
 * could not start (bad address, port in use, ...) on stderr. */
int nx_server_run(const nx_server_options *o, FILE *out);

#endif
