/* bench/framework/json_layers.c — tokenizing throughput of candidate JSON layers on one
 * trace.json held in memory (reading the file is not timed):
 *
 *   bash bench/framework/json_layers.sh TRACE_JSON [RUNS]
 *
 * - yajl: yajl_parse in 64 KiB chunks with callbacks, as src/capture's Chrome reader feeds
 *   it; numbers arrive as text and only ts/dur are converted. yajl cannot hand back an
 *   object's raw text, so args is only walked (the reader re-serialises it on top of this).
 * - simdjson: On-Demand through the C++ shim simdjson_shim.cpp (Debian's libsimdjson-dev);
 *   it needs the whole document in one padded buffer.
 * - json_scan: nxprof's own tokenizer (src/util/json_scan.c), driven token by token as
 *   the Chrome reader drives it, fed 64 KiB reads from the buffer: the full grammar checked,
 *   strings decoded, numbers as text; args_bytes counts its strings' and numbers' bytes.
 * - scan: a prototype tokenizer written for trace events (below): finds each event's bounds and the
 *   keys ph/name/cat/ts/dur/pid/tid/id/args, converts ts/dur, takes args as a raw span and
 *   skips other values by bracket depth. It checks the structure it walks but does not
 *   validate every scalar (a production reader would, and would refill its buffer at event
 *   boundaries to stay streaming).
 *
 * Each layer runs RUNS times (default 3); the median MB/s (10^6 bytes of JSON per second)
 * is printed with the layer's sums, which must agree on events and ts. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yajl/yajl_parse.h>

#include "util/json_scan.h"
#include "json_layers.h"

#define PAD 64

/* ---- yajl ---- */

struct yajl_state {
    struct scan_result *r;
    int depth;      /* 1 = top object, 2 = traceEvents array, 3 = an event */
    int in_events;  /* inside the traceEvents array */
    int want;       /* 1: the next scalar is ts/dur, 2: ph/name/cat/pid/tid/id */
};

static int y_scalar(struct yajl_state *s, const char *v, size_t n, int is_number)
{
    if (s->in_events && s->depth == 3) {
        if (s->want == 1 && is_number) {
            char tmp[64];
            size_t k = n < sizeof tmp - 1 ? n : sizeof tmp - 1;
            memcpy(tmp, v, k);
            tmp[k] = '\0';
            s->r->ts_sum += strtod(tmp, NULL);
        } else if (s->want == 2) {
            s->r->text_bytes += n;
        }
    }
    s->want = 0;
    return 1;
}

static int y_null(void *c) { return y_scalar(c, "", 0, 0); }
static int y_bool(void *c, int b) { (void)b; return y_scalar(c, "", 0, 0); }
static int y_number(void *c, const char *v, size_t n) { return y_scalar(c, v, n, 1); }
static int y_string(void *c, const unsigned char *v, size_t n) { return y_scalar(c, (const char *)v, n, 0); }

static int y_start(void *c)
{
    struct yajl_state *s = c;
    s->depth++;
    s->want = 0;
    return 1;
}

static int y_end(void *c)
{
    struct yajl_state *s = c;
    if (s->in_events && s->depth == 3)
        s->r->events++;
    if (s->depth == 2)
        s->in_events = 0;
    s->depth--;
    return 1;
}

static int y_start_array(void *c)
{
    struct yajl_state *s = c;
    if (s->depth == 1 && s->want == 3)
        s->in_events = 1;
    return y_start(c);
}

static int y_key(void *c, const unsigned char *k, size_t n)
{
    struct yajl_state *s = c;
    s->want = 0;
    if (s->depth == 1 && n == 11 && memcmp(k, "traceEvents", 11) == 0)
        s->want = 3;
    else if (s->in_events && s->depth == 3) {
        if ((n == 2 && memcmp(k, "ts", 2) == 0) || (n == 3 && memcmp(k, "dur", 3) == 0))
            s->want = 1;
        else if ((n == 2 && (memcmp(k, "ph", 2) == 0 || memcmp(k, "id", 2) == 0)) ||
                 (n == 3 && (memcmp(k, "cat", 3) == 0 || memcmp(k, "pid", 3) == 0 ||
                             memcmp(k, "tid", 3) == 0)) ||
                 (n == 4 && memcmp(k, "name", 4) == 0))
            s->want = 2;
    }
    return 1;
}

static const yajl_callbacks y_callbacks = {
    y_null, y_bool, NULL, NULL, y_number, y_string, y_start, y_key, y_end, y_start_array, y_end,
};

static int scan_yajl(const char *buf, size_t len, struct scan_result *r)
{
    struct yajl_state s = {.r = r};
    yajl_handle h = yajl_alloc(&y_callbacks, NULL, &s);
    if (h == NULL) {
        fprintf(stderr, "yajl: out of memory\n");
        return -1;
    }
    yajl_status st = yajl_status_ok;
    size_t at = len; /* where an error is: the failed chunk's start + what yajl took of it */
    for (size_t off = 0; off < len && st == yajl_status_ok; off += 65536) {
        size_t n = len - off < 65536 ? len - off : 65536;
        st = yajl_parse(h, (const unsigned char *)buf + off, n);
        if (st != yajl_status_ok)
            at = off + yajl_get_bytes_consumed(h);
    }
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (st != yajl_status_ok) {
        unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
        fprintf(stderr, "yajl: byte %zu: %s\n", at, (char *)msg);
        yajl_free_error(h, msg);
    }
    yajl_free(h);
    return st == yajl_status_ok ? 0 : -1;
}

/* ---- json_scan: nxprof's tokenizer ---- */

struct mem_src {
    const char *buf;
    size_t len, at;
};

static long mem_read(void *ctx, char *dst, size_t cap, nx_error *why)
{
    (void)why;
    struct mem_src *m = ctx;
    size_t n = m->len - m->at < cap ? m->len - m->at : cap;
    n = n < 65536 ? n : 65536;
    memcpy(dst, m->buf + m->at, n);
    m->at += n;
    return (long)n;
}

/* What an event's key asks of its value: 1 ts/dur, 2 text, 3 args, 0 nothing. */
static int event_key(const char *k, size_t n)
{
    if ((n == 2 && memcmp(k, "ts", 2) == 0) || (n == 3 && memcmp(k, "dur", 3) == 0))
        return 1;
    if ((n == 2 && (memcmp(k, "ph", 2) == 0 || memcmp(k, "id", 2) == 0)) ||
        (n == 3 && (memcmp(k, "cat", 3) == 0 || memcmp(k, "pid", 3) == 0 || memcmp(k, "tid", 3) == 0)) ||
        (n == 4 && memcmp(k, "name", 4) == 0))
        return 2;
    return n == 4 && memcmp(k, "args", 4) == 0 ? 3 : 0;
}

static int scan_json_scan(const char *buf, size_t len, struct scan_result *r)
{
    struct mem_src m = {buf, len, 0};
    nx_json_scan s;
    if (nx_json_scan_init(&s, 65536, 1000, mem_read, &m) != 0) {
        fprintf(stderr, "json_scan: %s\n", s.err);
        return -1;
    }
    nx_json_token t;
    int depth = 0, want = 0, rc = 0, in_events = 0;
    for (nx_json_kind k; (k = nx_json_scan_next(&s, &t)) != NX_JSON_EOF;) {
        if (k == NX_JSON_FAIL) {
            fprintf(stderr, "json_scan: byte %llu: %s\n", (unsigned long long)s.err_offset, s.err);
            rc = -1;
            break;
        }
        if (k == NX_JSON_START_MAP || k == NX_JSON_START_ARRAY) {
            depth++;
        } else if (k == NX_JSON_END_MAP || k == NX_JSON_END_ARRAY) {
            r->events += --depth == 2 && k == NX_JSON_END_MAP && in_events;
            in_events &= depth >= 2;
        } else if (k == NX_JSON_KEY && depth == 1) {
            in_events = t.len == 11 && memcmp(t.s, "traceEvents", 11) == 0;
        } else if (!in_events) {
            continue;
        } else if (k == NX_JSON_KEY && depth == 3) {
            want = event_key(t.s, t.len);
        } else if (depth > 3 && want == 3) {
            r->args_bytes += k == NX_JSON_STRING || k == NX_JSON_NUMBER || k == NX_JSON_KEY ? t.len : 0;
        } else if (depth == 3 && want == 1 && k == NX_JSON_NUMBER) {
            r->ts_sum += strtod(t.s, NULL);   /* the text is followed by a non-digit */
        } else if (depth == 3 && want == 2) {
            r->text_bytes += k == NX_JSON_STRING || k == NX_JSON_NUMBER ? t.len : 0;
        }
    }
    if (rc == 0 && !nx_json_scan_complete(&s)) {
        fprintf(stderr, "json_scan: the text ends early\n");
        rc = -1;
    }
    nx_json_scan_free(&s);
    return rc;
}

/* ---- scan: a tokenizer for trace events ---- */

struct cursor {
    const char *p, *end, *base;
};

static int fail(const struct cursor *c, const char *what)
{
    fprintf(stderr, "scan: byte %td: %s\n", c->p - c->base, what);
    return -1;
}

static void ws(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

/* c->p at an opening quote; leaves it after the closing one. */
static int string(struct cursor *c)
{
    const char *q = c->p + 1;
    for (;;) {
        q = memchr(q, '"', (size_t)(c->end - q));
        if (q == NULL)
            return fail(c, "unterminated string");
        const char *b = q;
        while (b[-1] == '\\')
            b--;
        if ((q - b) % 2 == 0)
            break;
        q++;
    }
    c->p = q + 1;
    return 0;
}

/* Byte classes: what ends a scalar, and what a skip over an object or array must look at. */
enum { SCALAR_END = 1, NESTING = 2 };
static const unsigned char kind[256] = {
    [','] = SCALAR_END, ['}'] = SCALAR_END | NESTING, [']'] = SCALAR_END | NESTING,
    [' '] = SCALAR_END, ['\n'] = SCALAR_END, ['\r'] = SCALAR_END, ['\t'] = SCALAR_END,
    ['{'] = NESTING, ['['] = NESTING, ['"'] = NESTING,
};

/* Skips one value: a string, a scalar, or an object/array by bracket depth. */
static int value(struct cursor *c)
{
    if (c->p >= c->end)
        return fail(c, "value expected");
    if (*c->p == '"')
        return string(c);
    if (*c->p != '{' && *c->p != '[') {
        while (c->p < c->end && !(kind[(unsigned char)*c->p] & SCALAR_END))
            c->p++;
        return 0;
    }
    int depth = 0;
    while (c->p < c->end) {
        while (c->p < c->end && !(kind[(unsigned char)*c->p] & NESTING))
            c->p++;
        if (c->p >= c->end)
            break;
        char ch = *c->p;
        if (ch == '"') {
            if (string(c) != 0)
                return -1;
            continue;
        }
        if (ch == '{' || ch == '[')
            depth++;
        else if ((ch == '}' || ch == ']') && --depth == 0) {
            c->p++;
            return 0;
        }
        c->p++;
    }
    return fail(c, "unterminated object or array");
}

static int key_is(const char *k, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(k, want, n) == 0;
}

static int event(struct cursor *c, struct scan_result *r)
{
    if (*c->p != '{')
        return fail(c, "event object expected");
    c->p++;
    for (ws(c); c->p < c->end && *c->p != '}';) {
        const char *k = c->p + 1;
        if (*c->p != '"' || string(c) != 0)
            return fail(c, "key expected");
        size_t kn = (size_t)(c->p - k - 1);
        ws(c);
        if (c->p >= c->end || *c->p++ != ':')
            return fail(c, "':' expected");
        ws(c);
        const char *v = c->p;
        if (value(c) != 0)
            return -1;
        if (key_is(k, kn, "ts") || key_is(k, kn, "dur"))
            r->ts_sum += strtod(v, NULL);
        else if (key_is(k, kn, "args"))
            r->args_bytes += (size_t)(c->p - v);
        else if (key_is(k, kn, "ph") || key_is(k, kn, "name") || key_is(k, kn, "cat") ||
                 key_is(k, kn, "pid") || key_is(k, kn, "tid") || key_is(k, kn, "id"))
            r->text_bytes += (size_t)(c->p - v);
        ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            ws(c);
        } else if (c->p >= c->end || *c->p != '}')
            return fail(c, "',' or '}' expected in an event");
    }
    if (c->p >= c->end)
        return fail(c, "unterminated event");
    c->p++;
    r->events++;
    return 0;
}

static int events(struct cursor *c, struct scan_result *r)
{
    c->p++; /* '[' */
    for (ws(c); c->p < c->end && *c->p != ']';) {
        if (event(c, r) != 0)
            return -1;
        ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            ws(c);
        }
    }
    if (c->p >= c->end)
        return fail(c, "unterminated traceEvents");
    c->p++;
    return 0;
}

static int scan_events(const char *buf, size_t len, struct scan_result *r)
{
    struct cursor c = {buf, buf + len, buf};
    ws(&c);
    if (c.p >= c.end || *c.p++ != '{')
        return fail(&c, "top-level object expected");
    for (ws(&c); c.p < c.end && *c.p != '}';) {
        const char *k = c.p + 1;
        if (*c.p != '"' || string(&c) != 0)
            return fail(&c, "key expected");
        int is_events = key_is(k, (size_t)(c.p - k - 1), "traceEvents");
        ws(&c);
        if (c.p >= c.end || *c.p++ != ':')
            return fail(&c, "':' expected");
        ws(&c);
        if (is_events && c.p < c.end && *c.p == '[' ? events(&c, r) : value(&c))
            return -1;
        ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            ws(&c);
        }
    }
    return 0;
}

/* ---- driver ---- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
        perror(path);
        return NULL;
    }
    long n = ftell(f);
    char *buf = n < 0 ? NULL : malloc((size_t)n + PAD);
    if (buf == NULL || fseek(f, 0, SEEK_SET) != 0 || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read %ld bytes\n", path, n);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    memset(buf + n, 0, PAD);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*scan)(const char *, size_t, struct scan_result *);
    } layers[] = {{"yajl", scan_yajl}, {"simdjson", scan_simdjson}, {"json_scan", scan_json_scan},
                  {"scan", scan_events}};
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    size_t len = 0;
    char *buf = argc > 1 && runs > 0 && runs <= 99 ? slurp(argv[1], &len) : NULL;
    if (buf == NULL) {
        fprintf(stderr, "usage: json_layers TRACE_JSON [RUNS 1-99]\n");
        return 2;
    }
    printf("%-10s %10s %10s %14s %14s %22s\n", "layer", "MB/s", "events", "text_bytes", "args_bytes", "ts_sum");
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        double mbps[99];
        struct scan_result r;
        for (int k = 0; k < runs; k++) {
            memset(&r, 0, sizeof r);
            double t = now();
            if (layers[i].scan(buf, len, &r) != 0) {
                free(buf);
                return 1;
            }
            mbps[k] = (double)len / 1e6 / (now() - t);
        }
        qsort(mbps, (size_t)runs, sizeof mbps[0], by_value);
        printf("%-10s %10.1f %10zu %14zu %14zu %22.3f\n", layers[i].name, mbps[(runs - 1) / 2], r.events,
               r.text_bytes, r.args_bytes, r.ts_sum);
    }
    free(buf);
    return 0;
}
