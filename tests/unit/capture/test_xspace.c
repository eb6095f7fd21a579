/* test_xspace.c — unit tests of the protobuf wire cursor (util/pb_wire.h) and the
 * XSpace reader (capture/xspace.h): XSpaces built here byte by byte with an encoder
 * of the test's own, for each wire type, each stat value, the time rule, the names,
 * unknown fields, what is left out, and each malformed input refused with the byte
 * offset (found in the built bytes) and the message path; then the real JAX
 * XSpace of tests/data/real-gpu. (tests/e2e/python/test_xspace.py compares that file
 * event by event with an independent decoder and with JAX's own JSON.) */
#define _GNU_SOURCE   /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/xspace.h"
#include "util/pb_wire.h"

/* ---- a protobuf encoder (the test's own) -------------------------------------- */

typedef struct pb {
    uint8_t b[8192];
    size_t n;
} pb;

static void put_raw(pb *p, const void *d, size_t n)
{
    assert_true(p->n + n <= sizeof p->b);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void put_varint(pb *p, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            c |= 0x80;
        put_raw(p, &c, 1);
    } while (v);
}

static void put_uint(pb *p, unsigned field, uint64_t v)
{
    put_varint(p, (uint64_t)field << 3 | 0);
    put_varint(p, v);
}

static void put_bytes(pb *p, unsigned field, const void *d, size_t n)
{
    put_varint(p, (uint64_t)field << 3 | 2);
    put_varint(p, n);
    put_raw(p, d, n);
}

static void put_str(pb *p, unsigned field, const char *s)
{
    put_bytes(p, field, s, strlen(s));
}

static void put_msg(pb *p, unsigned field, const pb *m)
{
    put_bytes(p, field, m->b, m->n);
}

static void put_double(pb *p, unsigned field, double d)
{
    uint8_t le[8];
    memcpy(le, &d, 8);   /* the test hosts are little-endian, as the wire format */
    put_varint(p, (uint64_t)field << 3 | 1);
    put_raw(p, le, 8);
}

/* Unknown fields of every wire type, which every message must skip. */
static void put_unknown(pb *p)
{
    put_uint(p, 99, 12345);
    put_str(p, 98, "ignored");
    put_varint(p, 97u << 3 | 5);
    put_raw(p, "\1\2\3\4", 4);
    put_varint(p, 96u << 3 | 1);
    put_raw(p, "\1\2\3\4\5\6\7\10", 8);
}

/* A map<int64, M> entry: key = 1, value = 2. */
static void put_entry(pb *p, unsigned field, int64_t key, const pb *value)
{
    pb e = {0};
    put_uint(&e, 1, (uint64_t)key);
    put_msg(&e, 2, value);
    put_msg(p, field, &e);
}

static void put_stat_meta(pb *plane, int64_t id, const char *name)
{
    pb m = {0};
    put_uint(&m, 1, (uint64_t)id);
    put_str(&m, 2, name);
    put_entry(plane, 5, id, &m);
}

static void put_event_meta(pb *plane, int64_t id, const char *name, const char *display, const pb *stats)
{
    pb m = {0};
    put_uint(&m, 1, (uint64_t)id);
    put_str(&m, 2, name);
    if (display)
        put_str(&m, 4, display);
    if (stats)
        put_raw(&m, stats->b, stats->n);
    put_unknown(&m);
    put_entry(plane, 4, id, &m);
}

/* ---- collecting what the reader delivers --------------------------------------- */

typedef struct copied {
    char ph;
    char name[64];
    char args[512];
    bool has_args, args_too_large, has_ts;
    int64_t ts, dur, pid, tid;
} copied;

typedef struct collected {
    copied ev[32];
    size_t n;
    size_t stop_at;   /* the event whose callback returns 5 (0: none) */
} collected;

static int collect(void *ctx, const nx_chrome_event *e)
{
    collected *c = ctx;
    assert_int_equal(e->index, c->n);
    assert_true(c->n < 32);
    copied *o = &c->ev[c->n++];
    memset(o, 0, sizeof *o);
    o->ph = e->ph;
    assert_true(e->name.s && e->name.len < sizeof o->name && e->name.s[e->name.len] == '\0');
    memcpy(o->name, e->name.s, e->name.len + 1);
    o->has_ts = e->has_ts;
    o->ts = e->ts_ns;
    o->dur = e->dur_ns;
    assert_int_equal(e->pid.kind, NX_CHROME_REF_NUMBER);
    o->pid = e->pid.num;
    o->tid = e->tid.kind == NX_CHROME_REF_NUMBER ? e->tid.num : -1;
    o->args_too_large = e->args_too_large;
    if (e->args.s) {
        assert_true(e->args.len < sizeof o->args && e->args.s[e->args.len] == '\0');
        memcpy(o->args, e->args.s, e->args.len + 1);
        o->has_args = true;
    }
    return c->n == c->stop_at ? 5 : 0;
}

static int read_pb(const pb *space, collected *c, nx_xspace_counts *n, nx_error *err, size_t max_args)
{
    memset(c->ev, 0, sizeof c->ev);
    c->n = 0;
    nx_chrome_handlers h = {.event = collect, .toplevel = NULL, .ctx = c, .skipped = NULL};
    nx_xspace_options o = {.max_args_bytes = max_args};
    return nx_xspace_read_bytes("t.xplane.pb", space->b, space->n, &o, &h, n, err);
}

/* ---- the wire cursor ------------------------------------------------------------ */

static int next1(const void *bytes, size_t n, nx_pb_field *f, const char **why, size_t *at)
{
    nx_pb_cursor c = nx_pb_cursor_init(bytes, n);
    return nx_pb_next(&c, f, why, at);
}

static void expect_wire_error(const char *bytes, size_t n, const char *why_want, size_t at_want)
{
    nx_pb_field f;
    const char *why = NULL;
    size_t at = 0;
    assert_int_equal(next1(bytes, n, &f, &why, &at), -1);
    assert_non_null(why);
    if (!strstr(why, why_want))
        fail_msg("got \"%s\", want \"%s\"", why, why_want);
    assert_int_equal(at, at_want);
}

static void test_wire_types(void **state)
{
    (void)state;
    pb p = {0};
    put_uint(&p, 1, UINT64_MAX);             /* a 10-byte varint */
    put_double(&p, 2, -2.5);
    put_varint(&p, 3u << 3 | 5);
    put_raw(&p, "\x78\x56\x34\x12", 4);
    put_str(&p, 536870911, "xy");            /* the largest field number */
    nx_pb_cursor c = nx_pb_cursor_init(p.b, p.n);
    nx_pb_field f;
    const char *why;
    size_t at;
    assert_int_equal(nx_pb_next(&c, &f, &why, &at), 1);
    assert_int_equal(f.number, 1);
    assert_int_equal(f.wire, NX_PB_VARINT);
    assert_true(f.u == UINT64_MAX);
    assert_int_equal(f.offset, 0);
    assert_int_equal(nx_pb_next(&c, &f, &why, &at), 1);
    double d;
    memcpy(&d, &f.u, 8);
    assert_int_equal(f.wire, NX_PB_I64);
    assert_true(d == -2.5);
    assert_int_equal(f.offset, 11);
    assert_int_equal(nx_pb_next(&c, &f, &why, &at), 1);
    assert_int_equal(f.wire, NX_PB_I32);
    assert_int_equal(f.u, 0x12345678);
    assert_int_equal(nx_pb_next(&c, &f, &why, &at), 1);
    assert_int_equal(f.number, 536870911);
    assert_int_equal(f.wire, NX_PB_LEN);
    assert_int_equal(f.len, 2);
    assert_memory_equal(p.b + f.start, "xy", 2);
    nx_pb_cursor sub = nx_pb_sub(&c, &f);
    assert_int_equal(sub.pos, f.start);
    assert_int_equal(sub.end, f.start + 2);
    assert_int_equal(nx_pb_next(&c, &f, &why, &at), 0);
}

static void test_wire_errors(void **state)
{
    (void)state;
    expect_wire_error("\x08\x80\x80", 3, "truncated varint", 3);
    expect_wire_error("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11, "above 2^64-1", 10);
    expect_wire_error("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 12, "above 2^64-1", 10);
    expect_wire_error("\x00\x01", 2, "field number 0", 0);
    expect_wire_error("\x80\x80\x80\x80\x10\x00", 6, "above 2^29-1", 0);
    expect_wire_error("\x0b", 1, "group wire type", 0);
    expect_wire_error("\x0c", 1, "group wire type", 0);
    expect_wire_error("\x0e", 1, "undefined wire type", 0);
    expect_wire_error("\x0f", 1, "undefined wire type", 0);
    expect_wire_error("\x0a\x05xyz", 5, "length runs past", 1);
    expect_wire_error("\x09\x01\x02\x03", 4, "truncated fixed64", 1);
    expect_wire_error("\x0d\x01\x02", 3, "truncated fixed32", 1);
    /* a sub-message's field cannot reach past the sub-message into its parent */
    pb p = {0};
    put_bytes(&p, 1, "\x0a\x03", 2);
    put_str(&p, 2, "abc");
    nx_pb_cursor c = nx_pb_cursor_init(p.b, p.n);
    nx_pb_field f;
    const char *why;
    size_t at;
    assert_int_equal(nx_pb_next(&c, &f, &why, &at), 1);
    nx_pb_cursor sub = nx_pb_sub(&c, &f);
    assert_int_equal(nx_pb_next(&sub, &f, &why, &at), -1);
    assert_string_equal(why, "length runs past the end of the enclosing message");
    assert_int_equal(at, 3);
}

static void test_utf8(void **state)
{
    (void)state;
    assert_true(nx_pb_utf8_valid((const uint8_t *)"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10));
    assert_true(nx_pb_utf8_valid((const uint8_t *)"a\0b", 3));
    assert_false(nx_pb_utf8_valid((const uint8_t *)"\xc0\x80", 2));           /* overlong */
    assert_false(nx_pb_utf8_valid((const uint8_t *)"\xe0\x80\x80", 3));       /* overlong */
    assert_false(nx_pb_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3));       /* surrogate */
    assert_false(nx_pb_utf8_valid((const uint8_t *)"\xf4\x90\x80\x80", 4));   /* above U+10FFFF */
    assert_false(nx_pb_utf8_valid((const uint8_t *)"\xe2\x82", 2));           /* truncated */
    assert_false(nx_pb_utf8_valid((const uint8_t *)"\x80", 1));
}

/* ---- the reader ----------------------------------------------------------------- */

/* An XSpace as JAX writes one: a plane without lines, a device plane, a host plane;
 * metadata after the lines (field order), unknown fields everywhere. */
static pb sample_space(void)
{
    pb space = {0}, plane0 = {0}, plane1 = {0}, plane2 = {0};
    put_str(&plane0, 2, "Task Environment");
    put_stat_meta(&plane0, 1, "profile_start_time");
    put_msg(&space, 1, &plane0);

    /* device plane: one line, two events with every kind of stat value */
    pb line = {0}, ev = {0}, st = {0};
    put_uint(&line, 1, 14);
    put_str(&line, 2, "Stream #14(Compute)");
    put_uint(&line, 3, 1000);                     /* timestamp_ns */
    put_unknown(&line);
    put_uint(&ev, 1, 1);                          /* metadata_id */
    put_uint(&ev, 2, 2500);                       /* offset_ps: 2.5 ns -> 3 */
    put_uint(&ev, 3, 1499);                       /* duration_ps: 1.499 ns -> 1 */
    st.n = 0; put_uint(&st, 1, 1); put_str(&st, 5, "first"); put_msg(&ev, 4, &st);
    st.n = 0; put_uint(&st, 1, 2); put_uint(&st, 3, UINT64_MAX); put_msg(&ev, 4, &st);
    st.n = 0; put_uint(&st, 1, 3); put_double(&st, 2, 12.5); put_msg(&ev, 4, &st);
    st.n = 0; put_uint(&st, 1, 4); put_uint(&st, 4, (uint64_t)-5); put_msg(&ev, 4, &st);
    st.n = 0; put_uint(&st, 1, 5); put_bytes(&st, 6, "\x00\xff\x10", 3); put_msg(&ev, 4, &st);
    st.n = 0; put_uint(&st, 1, 6); put_uint(&st, 7, 7); put_msg(&ev, 4, &st);
    st.n = 0; put_uint(&st, 1, 8); put_uint(&st, 4, 1); put_msg(&ev, 4, &st);         /* _p: internal */
    st.n = 0; put_uint(&st, 1, 9); put_unknown(&st); put_msg(&ev, 4, &st);             /* no value */
    st.n = 0; put_uint(&st, 1, 1); put_str(&st, 5, "fus\"ion"); put_msg(&ev, 4, &st);  /* replaces "first" */
    st.n = 0; put_uint(&st, 1, 3); put_double(&st, 2, 1.0 / 3); put_msg(&ev, 4, &st);
    put_unknown(&ev);
    put_msg(&line, 4, &ev);
    ev.n = 0;
    put_uint(&ev, 1, 2);
    put_uint(&ev, 2, (uint64_t)-1500);            /* -1.5 ns -> -2 */
    put_uint(&ev, 3, 500);                        /* 0.5 ns -> 1 */
    put_msg(&line, 4, &ev);
    put_str(&plane1, 2, "/device:GPU:0");
    put_msg(&plane1, 3, &line);
    pb mstats = {0};
    st.n = 0; put_uint(&st, 1, 10); put_str(&st, 5, "jit_step"); put_msg(&mstats, 5, &st);
    st.n = 0; put_uint(&st, 1, 1); put_str(&st, 5, "from metadata"); put_msg(&mstats, 5, &st);
    put_event_meta(&plane1, 1, "stale", NULL, NULL);
    put_event_meta(&plane1, 1, "kernel", NULL, NULL);            /* a later entry of one key wins */
    put_event_meta(&plane1, 2, "Then:sync", "sync", &mstats);
    static const char *const stat_names[] = {"", "hlo_op", "big", "ratio", "neg", "blob", "ref", "referenced",
                                             "_p", "empty", "hlo_module"};
    for (int i = 1; i <= 10; i++)
        put_stat_meta(&plane1, i, stat_names[i]);
    put_unknown(&plane1);
    put_msg(&space, 1, &plane1);

    /* host plane: display ids and names, a 64-bit line id, left-out events */
    line.n = 0;
    put_uint(&line, 1, 0x100000007ull);
    put_str(&line, 2, "raw");
    put_str(&line, 11, "python3");
    put_uint(&line, 3, 50);
    ev.n = 0; put_uint(&ev, 1, 1); put_uint(&ev, 2, 1000); put_uint(&ev, 3, 2000); put_msg(&line, 4, &ev);
    ev.n = 0; put_uint(&ev, 1, 2); put_uint(&ev, 2, 5000); put_msg(&line, 4, &ev);      /* internal */
    ev.n = 0; put_uint(&ev, 1, 1); put_uint(&ev, 5, 3); put_uint(&ev, 3, 9); put_msg(&line, 4, &ev); /* aggregated */
    put_msg(&plane2, 3, &line);
    line.n = 0;
    put_uint(&line, 1, 3);
    put_uint(&line, 10, 77);
    put_str(&line, 2, "second");
    put_msg(&plane2, 3, &line);
    put_str(&plane2, 2, "/host:CPU");
    put_event_meta(&plane2, 1, "train", NULL, NULL);
    put_event_meta(&plane2, 2, "MemoryAllocation", NULL, NULL);
    put_msg(&space, 1, &plane2);
    put_str(&space, 4, "host-a");
    put_unknown(&space);
    return space;
}

static void test_events_names_and_args(void **state)
{
    (void)state;
    pb space = sample_space();
    collected c = {0};
    nx_xspace_counts n;
    nx_error err;
    int rc = read_pb(&space, &c, &n, &err, 0);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.n, 8);
    /* the device plane (index 1): process, thread, then its events */
    assert_int_equal(c.ev[0].ph, 'M');
    assert_string_equal(c.ev[0].name, "process_name");
    assert_int_equal(c.ev[0].pid, 1);
    assert_false(c.ev[0].has_ts);
    assert_string_equal(c.ev[0].args, "{\"name\":\"/device:GPU:0\"}");
    assert_string_equal(c.ev[1].name, "thread_name");
    assert_int_equal(c.ev[1].tid, 14);
    assert_string_equal(c.ev[1].args, "{\"name\":\"Stream #14(Compute)\"}");
    copied *k = &c.ev[2];
    assert_int_equal(k->ph, 'X');
    assert_string_equal(k->name, "kernel");
    assert_int_equal(k->ts, 1003);
    assert_int_equal(k->dur, 1);
    assert_int_equal(k->pid, 1);
    assert_int_equal(k->tid, 14);
    assert_string_equal(k->args, "{\"big\":\"18446744073709551615\",\"blob\":\"00ff10\",\"empty\":\"\","
                                 "\"hlo_op\":\"fus\\\"ion\",\"neg\":\"-5\",\"ratio\":\"0.333333\","
                                 "\"ref\":\"referenced\"}");
    copied *s = &c.ev[3];
    assert_string_equal(s->name, "sync");
    assert_int_equal(s->ts, 998);
    assert_int_equal(s->dur, 1);
    assert_string_equal(s->args, "{\"hlo_module\":\"jit_step\",\"hlo_op\":\"from metadata\",\"long_name\":\"Then:sync\"}");
    /* the host plane (index 2) */
    assert_string_equal(c.ev[4].args, "{\"name\":\"/host:CPU\"}");
    assert_int_equal(c.ev[4].pid, 2);
    assert_int_equal(c.ev[5].tid, 7);          /* the low 32 bits of 0x100000007 */
    assert_string_equal(c.ev[5].args, "{\"name\":\"python3\"}");
    assert_int_equal(c.ev[6].tid, 77);         /* display_id */
    assert_string_equal(c.ev[6].args, "{\"name\":\"second\"}");
    assert_string_equal(c.ev[7].name, "train");
    assert_int_equal(c.ev[7].ts, 51);
    assert_int_equal(c.ev[7].dur, 2);
    assert_int_equal(c.ev[7].tid, 7);
    assert_string_equal(c.ev[7].args, "{}");
    assert_int_equal(n.planes, 3);
    assert_int_equal(n.lines, 3);
    assert_int_equal(n.events, 3);
    assert_int_equal(n.internal_events, 1);
    assert_int_equal(n.aggregated_events, 1);

    /* a callback's stop value ends the read there */
    c.stop_at = 3;
    assert_int_equal(read_pb(&space, &c, &n, &err, 0), 5);
    assert_int_equal(c.n, 3);
    c.stop_at = 0;
    /* args past the cap are left out and marked */
    assert_int_equal(read_pb(&space, &c, &n, &err, 40), 0);
    assert_true(c.ev[2].args_too_large && !c.ev[2].has_args);
    assert_true(!c.ev[7].args_too_large && c.ev[7].has_args);
}

/* An event whose metadata repeats more stats than the args cap has bytes is too
 * large once the cap is passed: the stats after it are not read (the last one
 * names a stat metadata that does not exist, which would be an error). */
static void test_args_work_is_bounded(void **state)
{
    (void)state;
    pb space = {0}, plane = {0}, line = {0}, ev = {0}, mstats = {0}, st = {0};
    put_uint(&st, 1, 1);
    put_uint(&st, 4, 1);
    for (int i = 0; i < 300; i++)
        put_msg(&mstats, 5, &st);
    st.n = 0;
    put_uint(&st, 1, 99);
    put_msg(&mstats, 5, &st);
    put_uint(&ev, 1, 1);
    put_msg(&line, 4, &ev);
    put_msg(&plane, 3, &line);
    put_event_meta(&plane, 1, "e", NULL, &mstats);
    put_stat_meta(&plane, 1, "_p");   /* internal: adds nothing to args */
    put_msg(&space, 1, &plane);
    collected c = {0};
    nx_xspace_counts n;
    nx_error err;
    assert_int_equal(read_pb(&space, &c, &n, &err, 256), 0);
    assert_int_equal(c.n, 3);
    assert_true(c.ev[2].args_too_large && !c.ev[2].has_args);
    /* with a cap above the count, every stat is read: the unknown id is found */
    assert_int_equal(read_pb(&space, &c, &n, &err, 4096), -1);
    assert_non_null(strstr(err.msg, "XSpace.planes[0].event_metadata[0].value.stats[300]: metadata_id 99 is not"));
}

static void test_empty_space(void **state)
{
    (void)state;
    pb space = {0};
    collected c = {0};
    nx_xspace_counts n;
    nx_error err;
    assert_int_equal(read_pb(&space, &c, &n, &err, 0), 0);
    assert_int_equal(c.n, 0);
    assert_int_equal(n.planes, 0);
}

static int keep_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    char *out = ctx;   /* "key=json;" per member */
    size_t at = strlen(out);
    snprintf(out + at, 256 - at, "%s=%.*s;", tl->key.s, (int)tl->json.len, tl->json.s);
    return 0;
}

/* XSpace.hostnames (field 4): the first one reaches the toplevel callback as the
 * member "hostname" holding its JSON string, as a Chrome trace's would. */
static void test_hostname_as_toplevel(void **state)
{
    (void)state;
    pb space = {0};
    put_str(&space, 4, "node-\"b\"");
    put_str(&space, 4, "node-c");
    char got[256] = "";
    nx_chrome_handlers h = {.event = NULL, .toplevel = keep_toplevel, .ctx = got, .skipped = NULL};
    nx_xspace_counts n;
    nx_error err;
    assert_int_equal(nx_xspace_read_bytes("t.xplane.pb", space.b, space.n, NULL, &h, &n, &err), 0);
    assert_string_equal(got, "hostname=\"node-\\\"b\\\"\";");
    assert_int_equal(n.hostnames, 2);
}

/* One plane, one line at timestamp_ns line_ts, whose last event is `bad_event`;
 * event metadata 1 "ok", stat metadata 1 "s". */
static pb space_at(const pb *bad_event, int64_t line_ts)
{
    pb space = {0}, plane = {0}, line = {0}, ev = {0};
    put_uint(&line, 3, (uint64_t)line_ts);
    put_uint(&ev, 1, 1);
    put_uint(&ev, 3, 1000);
    put_msg(&line, 4, &ev);
    put_msg(&line, 4, bad_event);
    put_str(&plane, 2, "p");
    put_msg(&plane, 3, &line);
    put_event_meta(&plane, 1, "ok", NULL, NULL);
    put_stat_meta(&plane, 1, "s");
    put_msg(&space, 1, &plane);
    return space;
}

static pb space_with_event(const pb *bad_event)
{
    return space_at(bad_event, 100);
}

static size_t find(const pb *p, const void *needle, size_t n)
{
    const uint8_t *at = memmem(p->b, p->n, needle, n);
    assert_non_null(at);
    assert_null(memmem(at + 1, p->n - (size_t)(at + 1 - p->b), needle, n));   /* unique */
    return (size_t)(at - p->b);
}

/* Where the varint field (field, v) lies in p. */
static size_t find_uint(const pb *p, unsigned field, uint64_t v)
{
    pb m = {0};
    put_uint(&m, field, v);
    return find(p, m.b, m.n);
}

static void expect_error(const pb *space, size_t offset, const char *path_and_what, size_t events_before)
{
    collected c = {0};
    nx_xspace_counts n;
    nx_error err;
    assert_int_equal(read_pb(space, &c, &n, &err, 0), -1);
    char want[512];
    snprintf(want, sizeof want, "t.xplane.pb: byte %zu: %s", offset, path_and_what);
    if (strcmp(err.msg, want) != 0)
        fail_msg("got  \"%s\"\nwant \"%s\"", err.msg, want);
    assert_int_equal(c.n, events_before);
}

static void test_event_errors(void **state)
{
    (void)state;
    pb ev = {0}, space;
    /* a varint cut short by the end of its event */
    put_uint(&ev, 1, 1);
    put_raw(&ev, "\x10\xfe\xfd", 3);
    space = space_with_event(&ev);
    expect_error(&space, find(&space, "\x10\xfe\xfd", 3) + 3, "XSpace.planes[0].lines[0].events[1]: truncated varint", 3);
    /* an unknown event metadata id */
    ev.n = 0;
    put_uint(&ev, 1, 4242);
    space = space_with_event(&ev);
    expect_error(&space, find_uint(&space, 1, 4242) - 2,
                 "XSpace.planes[0].lines[0].events[1]: metadata_id 4242 is not in the plane's event_metadata", 3);
    /* an unknown stat metadata id, in the event's second stat */
    ev.n = 0;
    pb st = {0};
    put_uint(&ev, 1, 1);
    put_uint(&st, 1, 1);
    put_msg(&ev, 4, &st);
    st.n = 0;
    put_uint(&st, 1, 4243);
    put_msg(&ev, 4, &st);
    space = space_with_event(&ev);
    expect_error(&space, find_uint(&space, 1, 4243) - 2,
                 "XSpace.planes[0].lines[0].events[1].stats[1]: metadata_id 4243 is not in the plane's stat_metadata", 3);
    /* a stat value of the wrong wire type */
    ev.n = 0;
    st.n = 0;
    put_uint(&ev, 1, 1);
    put_uint(&st, 1, 1);
    put_str(&st, 3, "not a varint");
    put_msg(&ev, 4, &st);
    space = space_with_event(&ev);
    expect_error(&space, find(&space, "\x1a\x0cnot a varint", 14),
                 "XSpace.planes[0].lines[0].events[1].stats[0]: field uint64_value (3) has wire type 2, not 0", 3);
    /* a str_value that is not UTF-8 */
    ev.n = 0;
    st.n = 0;
    put_uint(&ev, 1, 1);
    put_uint(&st, 1, 1);
    put_str(&st, 5, "\xc0\xaf");
    put_msg(&ev, 4, &st);
    space = space_with_event(&ev);
    expect_error(&space, find(&space, "\x2a\x02\xc0\xaf", 4),
                 "XSpace.planes[0].lines[0].events[1].stats[0]: field str_value is not UTF-8", 3);
    /* a negative duration */
    ev.n = 0;
    put_uint(&ev, 1, 1);
    put_uint(&ev, 3, (uint64_t)-7000);
    space = space_with_event(&ev);
    size_t at = find_uint(&space, 3, (uint64_t)-7000) - 4;   /* after the event's tag, length, metadata_id */
    expect_error(&space, at, "XSpace.planes[0].lines[0].events[1]: negative duration_ps -7000", 3);
    /* a time past 2^63 ns */
    ev.n = 0;
    put_uint(&ev, 1, 1);
    put_uint(&ev, 2, 2000);
    space = space_at(&ev, INT64_MAX - 1);
    at = find_uint(&space, 2, 2000) - 4;
    expect_error(&space, at, "XSpace.planes[0].lines[0].events[1]: timestamp_ns + offset_ps is beyond 2^63 ns", 3);
}

static void test_structure_errors(void **state)
{
    (void)state;
    pb space = {0}, plane = {0}, line = {0};
    /* a line's events field longer than the line */
    put_uint(&line, 3, 5);
    put_raw(&line, "\x22\x30\x08", 3);
    put_str(&plane, 2, "p");
    put_msg(&plane, 3, &line);
    put_msg(&space, 1, &plane);
    expect_error(&space, find(&space, "\x22\x30\x08", 3) + 1,
                 "XSpace.planes[0].lines[0]: length runs past the end of the enclosing message", 1);
    /* timestamp_ns as a string */
    space.n = plane.n = line.n = 0;
    put_str(&line, 3, "soon");
    put_str(&plane, 2, "p");
    put_msg(&plane, 3, &line);
    put_msg(&space, 1, &plane);
    expect_error(&space, find(&space, "\x1a\x04soon", 6),
                 "XSpace.planes[0].lines[0]: field timestamp_ns (3) has wire type 2, not 0", 1);
    /* a plane name that is not UTF-8, in the second plane */
    space.n = plane.n = 0;
    put_msg(&space, 1, &plane);
    put_str(&plane, 2, "GPU\xff");
    put_msg(&space, 1, &plane);
    expect_error(&space, find(&space, "\x12\x04GPU\xff", 6), "XSpace.planes[1]: field name is not UTF-8", 0);
    /* an event metadata entry whose value is not a message */
    space.n = plane.n = 0;
    pb entry = {0};
    put_uint(&entry, 1, 3);
    put_uint(&entry, 2, 9);
    put_msg(&plane, 4, &entry);
    put_msg(&space, 1, &plane);
    expect_error(&space, find(&space, "\x08\x03\x10\x09", 4) + 2,
                 "XSpace.planes[0].event_metadata[0]: field value (2) has wire type 0, not 2", 0);
    /* a stat metadata name that is not UTF-8 (entries are counted over both maps) */
    space.n = plane.n = 0;
    put_event_meta(&plane, 1, "e", NULL, NULL);
    put_stat_meta(&plane, 2, "\xed\xa0\x80");
    put_msg(&space, 1, &plane);
    expect_error(&space, find(&space, "\x12\x03\xed\xa0\x80", 5),
                 "XSpace.planes[0].stat_metadata[1].value: field name is not UTF-8", 0);
    /* a group at the top level */
    space.n = 0;
    put_str(&space, 4, "host");
    put_raw(&space, "\x0b", 1);
    expect_error(&space, 6, "XSpace: group wire type (3 or 4), which proto3 never writes", 0);
    /* planes as a varint */
    space.n = 0;
    put_uint(&space, 1, 1);
    expect_error(&space, 0, "XSpace: field planes (1) has wire type 0, not 2", 0);
}

/* The real XSpace of tests/data/real-gpu: JAX's JSON of the same run has 879 X
 * events and 200 MemoryAllocation/MemoryDeallocation events fewer than the file;
 * its first GPU kernel is gemm_fusion_dot_8 at 21231.072 us for 9.152 us. */
static int count_real(void *ctx, const nx_chrome_event *e)
{
    uint64_t *counts = ctx;
    counts[(unsigned char)e->ph]++;
    if (e->ph == 'X' && counts['X'] == 1) {
        assert_string_equal(e->name.s, "gemm_fusion_dot_8");
        assert_int_equal(e->ts_ns, 21231072);
        assert_int_equal(e->dur_ns, 9152);
        assert_non_null(strstr(e->args.s, "\"hlo_module\":\"jit_step\""));
    }
    return 0;
}

static void test_real_xspace(void **state)
{
    (void)state;
    const char *data = getenv("NXPROF_TEST_DATA");
    char path[512];
    snprintf(path, sizeof path, "%s/real-gpu/jax.xplane.pb", data ? data : "tests/data");
    uint64_t counts[256] = {0};
    nx_chrome_handlers h = {.event = count_real, .toplevel = NULL, .ctx = counts, .skipped = NULL};
    nx_xspace_counts n;
    nx_error err;
    int rc = nx_xspace_read_file(path, NULL, &h, &n, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(counts['X'], 879);
    assert_int_equal(counts['M'], 6);   /* 2 processes, 4 threads */
    assert_int_equal(n.events, 879);
    assert_int_equal(n.internal_events, 200);
    assert_int_equal(n.planes, 5);

    /* not a regular file, or missing: refused with the path */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/real-gpu", data ? data : "tests/data");
    assert_int_equal(nx_xspace_read_file(dir, NULL, &h, &n, &err), -1);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_int_equal(nx_xspace_read_file("/nonexistent/x.xplane.pb", NULL, &h, &n, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/x.xplane.pb: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_types),
        cmocka_unit_test(test_wire_errors),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_events_names_and_args),
        cmocka_unit_test(test_args_work_is_bounded),
        cmocka_unit_test(test_empty_space),
        cmocka_unit_test(test_hostname_as_toplevel),
        cmocka_unit_test(test_event_errors),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_real_xspace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
