/*
 * fuzz_chrome_common.h — the reading and checking shared by the two Chrome trace
 * harnesses (fuzz_chrome_json.c: plain JSON; fuzz_chrome_gz.c: gzip'd).
 *
 * nxfuzz_chrome_read(path, size) reads a file with nx_chrome_open / nx_chrome_read,
 * with options taken from the input's size so that one corpus covers small reads
 * (a token spans many; the reader's doubling reads), tiny caps on "args" and
 * top-level values, and the defaults. Invariants: every event's index is the
 * count before it and its offset rises; ph is set; only M events may lack ts;
 * every string is NUL-terminated at its length; pid/tid/id/bind_id are absent,
 * a number or a string; "args" and every top-level value, re-serialised by the
 * reader, parse as JSON (yajl's tree parser) unless marked too large, and then
 * are absent; a stop value from the event callback is returned as is; an error
 * leaves a message. A violated invariant aborts.
 */
#ifndef NX_FUZZ_CHROME_COMMON_H
#define NX_FUZZ_CHROME_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "capture/chrome_trace.h"
#include "fuzz_fixture.h"

typedef struct nxfuzz_chrome {
    uint64_t events;
    uint64_t skipped;          /* elements said through the skipped callback */
    bool counting_skipped;     /* the skipped callback is set */
    bool stopped;              /* the event at stop_at came and stopped the read */
    uint64_t next_index;       /* the least index the next element may have */
    uint64_t last_offset;
    uint64_t stop_at;          /* the event whose callback stops the read (UINT64_MAX: none) */
    size_t sink;
} nxfuzz_chrome;

static void nxfuzz_chrome_text(nxfuzz_chrome *c, nx_chrome_text t)
{
    if (!t.s)
        return;
    NXFUZZ_CHECK(t.s[t.len] == '\0');
    c->sink += strlen(t.s);
}

static void nxfuzz_chrome_ref(nxfuzz_chrome *c, const nx_chrome_ref *r)
{
    NXFUZZ_CHECK(r->kind == NX_CHROME_REF_ABSENT || r->kind == NX_CHROME_REF_NUMBER ||
                 r->kind == NX_CHROME_REF_STRING);
    if (r->kind == NX_CHROME_REF_STRING) {
        NXFUZZ_CHECK(r->str.s != NULL);
        nxfuzz_chrome_text(c, r->str);
    }
}

static void nxfuzz_chrome_json_ok(nx_chrome_text t)
{
    if (!t.s)
        return;
    char errbuf[256];
    yajl_val v = yajl_tree_parse(t.s, errbuf, sizeof errbuf);
    if (!v)
        fprintf(stderr, "re-serialised JSON does not parse (%s): %.200s\n", errbuf, t.s);
    NXFUZZ_CHECK(v != NULL);
    yajl_tree_free(v);
}

static int nxfuzz_chrome_event(void *ctx, const nx_chrome_event *ev)
{
    nxfuzz_chrome *c = ctx;
    /* Elements are numbered in file order, events and skipped ones alike. */
    NXFUZZ_CHECK(c->counting_skipped ? ev->index == c->events + c->skipped : ev->index >= c->next_index);
    c->next_index = ev->index + 1;
    NXFUZZ_CHECK(c->events == 0 || ev->offset > c->last_offset);
    c->last_offset = ev->offset;
    c->events++;
    NXFUZZ_CHECK(ev->ph != '\0');
    NXFUZZ_CHECK(ev->has_ts || ev->ph == 'M');
    nxfuzz_chrome_text(c, ev->name);
    nxfuzz_chrome_text(c, ev->cat);
    nxfuzz_chrome_text(c, ev->s);
    nxfuzz_chrome_text(c, ev->bp);
    nxfuzz_chrome_text(c, ev->args);
    nxfuzz_chrome_ref(c, &ev->pid);
    nxfuzz_chrome_ref(c, &ev->tid);
    nxfuzz_chrome_ref(c, &ev->id);
    nxfuzz_chrome_ref(c, &ev->bind_id);
    NXFUZZ_CHECK(!(ev->args_too_large && ev->args.s));
    nxfuzz_chrome_json_ok(ev->args);
    c->stopped = ev->index == c->stop_at;
    return c->stopped ? 7 : 0;
}

static int nxfuzz_chrome_skipped(void *ctx, const nx_chrome_skipped *sk)
{
    nxfuzz_chrome *c = ctx;
    NXFUZZ_CHECK(sk->index == c->events + c->skipped);
    c->next_index = sk->index + 1;
    NXFUZZ_CHECK(sk->reason != NULL && sk->reason[0] != '\0');
    c->skipped++;
    return 0;
}

static int nxfuzz_chrome_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    nxfuzz_chrome *c = ctx;
    NXFUZZ_CHECK(tl->key.s != NULL);
    nxfuzz_chrome_text(c, tl->key);
    nxfuzz_chrome_text(c, tl->json);
    NXFUZZ_CHECK(!(tl->too_large && tl->json.s));
    NXFUZZ_CHECK(tl->too_large || tl->json.s);
    nxfuzz_chrome_json_ok(tl->json);
    return 0;
}

/* Reads the file at path (written from an input of `size` bytes). */
static void nxfuzz_chrome_read(const char *path, size_t size)
{
    static const size_t chunks[] = {0, 1, 2, 3, 7, 64, 4096};
    nx_chrome_options o = {.chunk_size = chunks[size % 7],
                           .max_args_bytes = size % 5 == 0 ? 16 : 0,
                           .max_toplevel_bytes = size % 11 == 0 ? 8 : 0};
    nxfuzz_chrome c = {.stop_at = size % 13 == 0 ? 1 : UINT64_MAX, .counting_skipped = size % 3 != 0};
    nx_error err;
    err.msg[0] = '\0';
    nx_chrome_reader *r = nx_chrome_open(path, &o, &err);
    if (!r) {
        NXFUZZ_CHECK(err.msg[0] != '\0');
        return;
    }
    /* Without a toplevel callback on every other input: values are then skipped unbuffered. */
    /* Without a skipped callback on every third input: unusable elements then pass unsaid. */
    nx_chrome_handlers h = {.event = nxfuzz_chrome_event, .toplevel = size % 2 ? nxfuzz_chrome_toplevel : NULL, .ctx = &c,
                            .skipped = c.counting_skipped ? nxfuzz_chrome_skipped : NULL};
    int rc = nx_chrome_read(r, &h, &err);
    if (rc < 0)
        NXFUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL);
    else if (rc > 0)
        NXFUZZ_CHECK(rc == 7 && c.stopped && c.events <= c.stop_at + 1);
    else
        NXFUZZ_CHECK(!c.stopped);
    (void)nx_chrome_is_bare_array(r);
    nx_chrome_close(r);
}

#endif
