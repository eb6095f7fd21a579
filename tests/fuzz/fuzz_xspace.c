/*
 * fuzz_xspace.c — libFuzzer harness for the XSpace protobuf reader
 * (capture/xspace.h): each input is read from memory with nx_xspace_read_bytes,
 * with a tiny cap on args for some sizes and a callback that stops at the second
 * event for others; one input in 16 is written as a file and read with
 * nx_xspace_read_file (the mapping path). Invariants: event indexes count from 0;
 * ph is M (process_name/thread_name, args {"name":...}) or X; X events have ts
 * and a duration >= 0; pid and tid are numbers; every string is NUL-terminated at
 * its length; args parse as a JSON object (yajl) unless marked too large, and
 * then are absent; a stop value is returned as is; an error leaves a message that
 * names a byte offset. A violated invariant aborts.
 *
 * Seeds: tests/fuzz/corpus/xspace/ (tests/fuzz/make_corpus.sh: the real JAX
 * XSpace of tests/data/real-gpu cut to its first planes and lines, and small
 * hand-made spaces).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "capture/xspace.h"
#include "fuzz_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
    uint64_t events;
    uint64_t skipped;   /* events left out, said through the skipped callback */
    bool counting_skipped, stopped;
    uint64_t next_index;
    uint64_t stop_at;   /* index whose callback returns 7 (UINT64_MAX: none) */
} seen;

static void text_ok(nx_chrome_text t)
{
    if (t.s)
        NXFUZZ_CHECK(t.s[t.len] == '\0');
}

static int on_event(void *ctx, const nx_chrome_event *ev)
{
    seen *s = ctx;
    /* delivered and left-out events share one numbering, in file order */
    NXFUZZ_CHECK(s->counting_skipped ? ev->index == s->events + s->skipped : ev->index >= s->next_index);
    s->next_index = ev->index + 1;
    s->events++;
    NXFUZZ_CHECK(ev->ph == 'M' || ev->ph == 'X');
    NXFUZZ_CHECK(ev->name.s != NULL);
    text_ok(ev->name);
    text_ok(ev->args);
    NXFUZZ_CHECK(ev->pid.kind == NX_CHROME_REF_NUMBER);
    NXFUZZ_CHECK(ev->tid.kind == NX_CHROME_REF_NUMBER || (ev->ph == 'M' && ev->tid.kind == NX_CHROME_REF_ABSENT));
    if (ev->ph == 'X')
        NXFUZZ_CHECK(ev->has_ts && ev->has_dur && ev->dur_ns >= 0);
    else
        NXFUZZ_CHECK(!ev->has_ts && ev->args.s &&
                     (strcmp(ev->name.s, "process_name") == 0 || strcmp(ev->name.s, "thread_name") == 0));
    NXFUZZ_CHECK(!(ev->args_too_large && ev->args.s));
    NXFUZZ_CHECK(ev->args_too_large || ev->args.s);
    if (ev->args.s) {
        char errbuf[256];
        yajl_val v = yajl_tree_parse(ev->args.s, errbuf, sizeof errbuf);
        if (!v)
            fprintf(stderr, "args do not parse (%s): %.200s\n", errbuf, ev->args.s);
        NXFUZZ_CHECK(v != NULL && YAJL_IS_OBJECT(v));
        yajl_tree_free(v);
    }
    s->stopped = ev->index == s->stop_at;
    return s->stopped ? 7 : 0;
}

static int on_skipped(void *ctx, const nx_chrome_skipped *sk)
{
    seen *s = ctx;
    NXFUZZ_CHECK(sk->index == s->events + s->skipped && sk->ph == 'X' && sk->reason && sk->reason[0]);
    s->next_index = sk->index + 1;
    s->skipped++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seen s = {.stop_at = size % 13 == 0 ? 1 : UINT64_MAX, .counting_skipped = size % 3 != 0};
    nx_xspace_options o = {.max_args_bytes = size % 5 == 0 ? 16 : 0};
    nx_chrome_handlers h = {.event = on_event, .toplevel = NULL, .ctx = &s, .skipped = s.counting_skipped ? on_skipped : NULL};
    nx_xspace_counts n;
    nx_error err;
    err.msg[0] = '\0';
    int rc = size % 16 == 1 ? nx_xspace_read_file(nxfuzz_write("fuzz.xplane.pb", data, size), &o, &h, &n, &err)
                            : nx_xspace_read_bytes("fuzz.xplane.pb", data, size, &o, &h, &n, &err);
    if (rc < 0)
        NXFUZZ_CHECK(strstr(err.msg, "fuzz.xplane.pb: byte ") != NULL && memchr(err.msg, '\0', sizeof err.msg));
    else if (rc > 0)
        NXFUZZ_CHECK(rc == 7 && s.stopped && s.events <= s.stop_at + 1);
    else
        NXFUZZ_CHECK(n.events <= s.events && n.lines <= size && n.planes <= size);
    return 0;
}
