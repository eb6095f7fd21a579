/*
 * chrome_trace_dump.c — test helper: reads a Chrome trace with nxprof's
 * reader (src/capture/chrome_trace.h), or an XSpace protobuf (a FILE named
 * *.pb) with the XSpace reader (src/capture/xspace.h), and prints what it
 * delivered as JSON, for tests/e2e/js/chrome_trace_counts.test.mjs and
 * tests/e2e/python/test_xspace.py to compare with independent parsers.
 *
 *   chrome_trace_dump [--events] [--chunk N] FILE
 *
 * With --events, one line per event first:
 *   {"i":0,"ph":"X","name":..,"cat":..,"ts_ns":"..","dur_ns":"..","pid":..,
 *    "tid":..,"id":..,"bind_id":..,"s":..,"bp":..,"args":<args text>}
 * (absent fields are left out; ns values are strings so that JavaScript can
 * read them exactly with BigInt). Always, a last line summing up:
 *   {"form":"object"|"array","events":N,"phases":{"X":n,..},
 *    "toplevel":[["key",<value text>],..]}
 * or for an XSpace: {"form":"xspace","events":N,"phases":{..},"planes":n,
 *    "lines":n,"x_events":n,"internal_events":n,"aggregated_events":n}
 * (--chunk is ignored for XSpace, which is mapped).
 * Exit status 0, or 1 with the reader's message on stderr, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/chrome_trace.h"
#include "capture/xspace.h"
#include "util/json.h"
#include "util/strbuf.h"

typedef struct dump {
    bool events;
    uint64_t count;
    uint64_t phases[256];
    nx_strbuf toplevel;   /* ,["key",value]... */
} dump;

static void put_text(nx_strbuf *b, const char *key, nx_chrome_text t)
{
    if (!t.s)
        return;
    nx_strbuf_printf(b, ",\"%s\":", key);
    nx_json_put_cstr(b, t.s);
}

static void put_ref(nx_strbuf *b, const char *key, nx_chrome_ref ref)
{
    if (ref.kind == NX_CHROME_REF_NUMBER)
        nx_strbuf_printf(b, ",\"%s\":%lld", key, (long long)ref.num);
    else if (ref.kind == NX_CHROME_REF_STRING)
        put_text(b, key, ref.str);
}

static int on_event(void *ctx, const nx_chrome_event *ev)
{
    dump *d = ctx;
    d->count++;
    d->phases[(unsigned char)ev->ph]++;
    if (!d->events)
        return 0;
    nx_strbuf b = NX_STRBUF_INIT;
    char ph[2] = {ev->ph, '\0'};
    nx_strbuf_printf(&b, "{\"i\":%llu,\"ph\":", (unsigned long long)ev->index);
    nx_json_put_cstr(&b, ph);
    put_text(&b, "name", ev->name);
    put_text(&b, "cat", ev->cat);
    if (ev->has_ts)
        nx_strbuf_printf(&b, ",\"ts_ns\":\"%lld\"", (long long)ev->ts_ns);
    if (ev->has_dur)
        nx_strbuf_printf(&b, ",\"dur_ns\":\"%lld\"", (long long)ev->dur_ns);
    put_ref(&b, "pid", ev->pid);
    put_ref(&b, "tid", ev->tid);
    put_ref(&b, "id", ev->id);
    put_ref(&b, "bind_id", ev->bind_id);
    put_text(&b, "s", ev->s);
    put_text(&b, "bp", ev->bp);
    if (ev->args.s) {
        nx_strbuf_puts(&b, ",\"args\":");
        nx_strbuf_append(&b, ev->args.s, ev->args.len);
    }
    nx_strbuf_puts(&b, "}\n");
    if (nx_strbuf_failed(&b)) {
        fprintf(stderr, "chrome_trace_dump: out of memory\n");
        return 1;
    }
    fwrite(b.data, 1, b.len, stdout);
    nx_strbuf_free(&b);
    return 0;
}

static int on_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    dump *d = ctx;
    if (tl->too_large) {
        fprintf(stderr, "chrome_trace_dump: top-level \"%s\" is too large\n", tl->key.s);
        return 1;
    }
    nx_strbuf_puts(&d->toplevel, d->toplevel.len ? ",[" : "[");
    nx_json_put_cstr(&d->toplevel, tl->key.s);
    nx_strbuf_putc(&d->toplevel, ',');
    nx_strbuf_append(&d->toplevel, tl->json.s, tl->json.len);
    nx_strbuf_putc(&d->toplevel, ']');
    return 0;
}

static void put_phases(nx_strbuf *out, const dump *d)
{
    const char *sep = "";
    for (int c = 0; c < 256; c++) {
        if (!d->phases[c])
            continue;
        char ph[2] = {(char)c, '\0'};
        nx_strbuf_puts(out, sep);
        nx_json_put_cstr(out, ph);
        nx_strbuf_printf(out, ":%llu", (unsigned long long)d->phases[c]);
        sep = ",";
    }
}

static int print_summary(nx_strbuf *out)
{
    bool failed = nx_strbuf_failed(out);
    if (!failed)
        fwrite(out->data, 1, out->len, stdout);
    nx_strbuf_free(out);
    if (failed || fflush(stdout) != 0) {
        fprintf(stderr, "chrome_trace_dump: cannot write the summary\n");
        return 1;
    }
    return 0;
}

static int dump_xspace(dump *d, const char *path)
{
    nx_error err;
    nx_xspace_counts n;
    nx_chrome_handlers h = {.event = on_event, .toplevel = NULL, .ctx = d, .skipped = NULL};
    int rc = nx_xspace_read_file(path, NULL, &h, &n, &err);
    if (rc < 0)
        fprintf(stderr, "%s\n", err.msg);
    if (rc != 0)
        return 1;
    nx_strbuf out = NX_STRBUF_INIT;
    nx_strbuf_printf(&out, "{\"form\":\"xspace\",\"events\":%llu,\"phases\":{", (unsigned long long)d->count);
    put_phases(&out, d);
    nx_strbuf_printf(&out,
                     "},\"planes\":%llu,\"lines\":%llu,\"x_events\":%llu,\"internal_events\":%llu,"
                     "\"aggregated_events\":%llu}\n",
                     (unsigned long long)n.planes, (unsigned long long)n.lines, (unsigned long long)n.events,
                     (unsigned long long)n.internal_events, (unsigned long long)n.aggregated_events);
    return print_summary(&out);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int main(int argc, char **argv)
{
    dump d = {.toplevel = NX_STRBUF_INIT};
    nx_chrome_options opts = {0};
    int i = 1;
    for (; i < argc - 1; i++) {
        if (strcmp(argv[i], "--events") == 0)
            d.events = true;
        else if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc - 1)
            opts.chunk_size = strtoul(argv[++i], NULL, 10);
        else
            break;
    }
    if (i != argc - 1) {
        fprintf(stderr, "usage: chrome_trace_dump [--events] [--chunk N] FILE\n");
        return 2;
    }
    if (ends_with(argv[i], ".pb"))
        return dump_xspace(&d, argv[i]);
    nx_error err;
    nx_chrome_reader *r = nx_chrome_open(argv[i], &opts, &err);
    if (!r) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    nx_chrome_handlers h = {.event = on_event, .toplevel = on_toplevel, .ctx = &d, .skipped = NULL};
    int rc = nx_chrome_read(r, &h, &err);
    if (rc < 0)
        fprintf(stderr, "%s\n", err.msg);
    bool bare = nx_chrome_is_bare_array(r);
    nx_chrome_close(r);
    if (rc != 0) {
        nx_strbuf_free(&d.toplevel);
        return 1;
    }
    nx_strbuf out = NX_STRBUF_INIT;
    nx_strbuf_printf(&out, "{\"form\":\"%s\",\"events\":%llu,\"phases\":{", bare ? "array" : "object",
                     (unsigned long long)d.count);
    put_phases(&out, &d);
    nx_strbuf_puts(&out, "},\"toplevel\":[");
    nx_strbuf_append(&out, d.toplevel.data, d.toplevel.len);
    nx_strbuf_puts(&out, "]}\n");
    bool failed = nx_strbuf_failed(&d.toplevel);
    nx_strbuf_free(&d.toplevel);
    if (failed) {
        nx_strbuf_free(&out);
        fprintf(stderr, "chrome_trace_dump: out of memory\n");
        return 1;
    }
    return print_summary(&out);
}
