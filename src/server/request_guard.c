/*
 * request_guard.c — which requests may reach the API at all: the Host and Origin
 * rules that keep other web sites out (docs/api.md "Security").
 *
 * A web page on another site must not read profiles through the user's browser.
 * It can try in two ways: by DNS rebinding (its own host name made to resolve to
 * this server, so the browser sends `Host: attacker.example:PORT`), or by a
 * cross-origin request (the browser sends `Origin: http://attacker.example`).
 * Rules, names compared ignoring ASCII case, IP literals compared as addresses
 * (so "::1" and "0:0::1" are one address):
 *   - a Host header names this server when its name is `localhost`, the --bind
 *     address, the address the connection arrived at (a wildcard bind serves the
 *     machine's own addresses), or an --allow-host name, and its port, when it has
 *     one, is the port the server listens on; IPv6 addresses in brackets. A request
 *     without Host (HTTP/1.0) is allowed: a browser always sends one;
 *   - an Origin header is same-origin when it is `http://` followed by such a
 *     host, and its port (80 when absent) is the server's; "null" (an opaque origin)
 *     is not;
 *   - a POST must have `Content-Type: application/json` (parameters after ';'
 *     allowed): a browser sends that type cross-site only after a CORS preflight,
 *     which this server never grants.
 */
#define _DEFAULT_SOURCE /* strncasecmp */
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "server/api_internal.h"
#include "server/server.h"

/* Longest host name compared (DNS names are at most 253 bytes). */
#define MAX_HOST 256

/* A host's name and port as given: "name", "name:port", "[v6]" or "[v6]:port". */
typedef struct host_port {
    char name[MAX_HOST];   /* without the brackets */
    bool has_port;
    unsigned port;
} host_port;

/* s[0..len) as a port: 1 to 5 digits, at most 65535. */
static bool parse_port(const char *s, size_t len, unsigned *out)
{
    if (len == 0 || len > 5)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return v <= 65535;
}

/* Parses s[0..len) into h; false when it is not a host[:port]. */
static bool parse_host(const char *s, size_t len, host_port *h)
{
    const char *name = s, *rest;
    size_t nlen;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return false;
        name = s + 1;
        nlen = (size_t)(close - name);
        rest = close + 1;
    } else {
        const char *colon = memchr(s, ':', len);
        nlen = colon ? (size_t)(colon - s) : len;
        rest = s + nlen;
    }
    size_t rlen = len - (size_t)(rest - s);
    h->has_port = rlen > 0;
    if (h->has_port && (rest[0] != ':' || !parse_port(rest + 1, rlen - 1, &h->port)))
        return false;
    if (nlen == 0 || nlen >= MAX_HOST)
        return false;
    memcpy(h->name, name, nlen);
    h->name[nlen] = '\0';
    return true;
}

/* Whether a and b are the same IP address (false when either is not one). */
static bool same_address(const char *a, const char *b)
{
    unsigned char x[16], y[16];
    if (inet_pton(AF_INET, a, x) == 1 && inet_pton(AF_INET, b, y) == 1)
        return memcmp(x, y, 4) == 0;
    if (inet_pton(AF_INET6, a, x) == 1 && inet_pton(AF_INET6, b, y) == 1)
        return memcmp(x, y, 16) == 0;
    return false;
}

/* Whether host name `name` is `pattern` (a name, an IP literal, or one in brackets). */
static bool name_is(const char *name, const char *pattern)
{
    if (!pattern || !*pattern)
        return false;
    size_t plen = strlen(pattern);
    if (pattern[0] == '[' && pattern[plen - 1] == ']') {
        char inner[MAX_HOST];
        if (plen - 2 >= sizeof inner)
            return false;
        memcpy(inner, pattern + 1, plen - 2);
        inner[plen - 2] = '\0';
        return same_address(name, inner);
    }
    return same_address(name, pattern) || strcasecmp(name, pattern) == 0;
}

static bool name_allowed(const nx_server_ctx *srv, const char *name, const char *local_addr)
{
    if (strcasecmp(name, "localhost") == 0 || name_is(name, srv->bind) || name_is(name, local_addr))
        return true;
    for (size_t i = 0; i < srv->n_allow_hosts; i++)
        if (name_is(name, srv->allow_hosts[i]))
            return true;
    return false;
}

bool nx_server_host_allowed(const nx_server_ctx *srv, const char *host, unsigned port, const char *local_addr)
{
    if (!host)
        return true;
    host_port h;
    return parse_host(host, strlen(host), &h) && (!h.has_port || h.port == port) &&
           name_allowed(srv, h.name, local_addr);
}

bool nx_server_origin_allowed(const nx_server_ctx *srv, const char *origin, unsigned port, const char *local_addr)
{
    if (!origin)
        return true;
    static const char scheme[] = "http://";
    if (strncasecmp(origin, scheme, sizeof scheme - 1) != 0)
        return false;
    const char *hp = origin + sizeof scheme - 1;
    host_port h;
    return parse_host(hp, strlen(hp), &h) && (h.has_port ? h.port : 80) == port &&
           name_allowed(srv, h.name, local_addr);
}

bool nx_server_json_content_type(const char *content_type)
{
    static const char json[] = "application/json";
    if (!content_type || strncasecmp(content_type, json, sizeof json - 1) != 0)
        return false;
    char next = content_type[sizeof json - 1];
    return next == '\0' || next == ';' || next == ' ' || next == '\t';
}

bool nx_server_allow_host_valid(const char *name)
{
    host_port h;
    size_t len = strlen(name);
    if (!parse_host(name, len, &h) || h.has_port)
        return false;
    unsigned char addr[16];
    if (name[0] == '[')
        return inet_pton(AF_INET6, h.name, addr) == 1;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '.'))
            return false;
    return true;
}
