/* test_chrome_trace.c — unit tests of the streaming Chrome trace reader: crafted
 * traces for each form, field, conversion and error, and every real trace in
 * tests/data/chrome-traces read at several chunk sizes and as plain JSON.
 * (tests/e2e/js/chrome_trace_counts.test.mjs compares the same fixtures with JSON.parse.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

#include "capture/chrome_trace.h"
#include "util/strbuf.h"

/* ---- helpers ----------------------------------------------------------------- */

static char tmpdir_path[256];

static const char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir_path, name);
    return path;
}

static const char *write_plain(const char *name, const char *text, size_t len)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

static const char *write_gz(const char *name, const char *text, size_t len)
{
    const char *path = tmp_path(name);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)len), (int)len);
    assert_int_equal(gzclose(gz), Z_OK);
    return path;
}

static char *dup_text(nx_chrome_text t)
{
    if (!t.s)
        return NULL;
    char *s = malloc(t.len + 1);
    assert_non_null(s);
    memcpy(s, t.s, t.len + 1);
    return s;
}

/* An event copied out of the callback. */
typedef struct copied_ref {
    nx_chrome_ref_kind kind;
    int64_t num;
    char *str;
} copied_ref;

typedef struct copied {
    uint64_t index, offset;
    char ph;
    char *name, *cat, *s, *bp, *args;
    bool has_ts, has_dur, flow_in, flow_out, args_too_large, time_overflow;
    int64_t ts, dur;
    copied_ref pid, tid, id, bind_id;
} copied;

typedef struct collected {
    copied ev[64];
    size_t n;
    char *top_key[8], *top_json[8];
    bool top_too_large[8];
    size_t ntop;
    struct {
        uint64_t index, offset;
        char ph;
        char reason[200];
    } sk[8];            /* skipped elements */
    size_t nsk;
    int stop_at;        /* return 7 from the event callback at this index (-1: never) */
    uint64_t total;     /* every event counted, even past ev[] */
} collected;

static copied_ref copy_ref(nx_chrome_ref r)
{
    return (copied_ref){r.kind, r.num, r.kind == NX_CHROME_REF_STRING ? dup_text(r.str) : NULL};
}

static int collect_event(void *ctx, const nx_chrome_event *e)
{
    collected *c = ctx;
    c->total++;
    if (c->n < sizeof c->ev / sizeof c->ev[0]) {
        c->ev[c->n++] = (copied){
            .index = e->index, .offset = e->offset, .ph = e->ph,
            .name = dup_text(e->name), .cat = dup_text(e->cat), .s = dup_text(e->s), .bp = dup_text(e->bp),
            .args = dup_text(e->args), .has_ts = e->has_ts, .has_dur = e->has_dur, .flow_in = e->flow_in,
            .flow_out = e->flow_out, .args_too_large = e->args_too_large, .time_overflow = e->time_overflow, .ts = e->ts_ns, .dur = e->dur_ns,
            .pid = copy_ref(e->pid), .tid = copy_ref(e->tid), .id = copy_ref(e->id), .bind_id = copy_ref(e->bind_id),
        };
    }
    return (int64_t)e->index == c->stop_at ? 7 : 0;
}

static int collect_skipped(void *ctx, const nx_chrome_skipped *sk)
{
    collected *c = ctx;
    assert_true(c->nsk < 8);
    c->sk[c->nsk].index = sk->index;
    c->sk[c->nsk].offset = sk->offset;
    c->sk[c->nsk].ph = sk->ph;
    snprintf(c->sk[c->nsk].reason, sizeof c->sk[c->nsk].reason, "%s", sk->reason);
    c->nsk++;
    return 0;
}

static int collect_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    collected *c = ctx;
    assert_true(c->ntop < 8);
    c->top_key[c->ntop] = dup_text(tl->key);
    c->top_json[c->ntop] = dup_text(tl->json);
    c->top_too_large[c->ntop] = tl->too_large;
    c->ntop++;
    return 0;
}

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++) {
        copied *e = &c->ev[i];
        free(e->name), free(e->cat), free(e->s), free(e->bp), free(e->args);
        free(e->pid.str), free(e->tid.str), free(e->id.str), free(e->bind_id.str);
    }
    for (size_t i = 0; i < c->ntop; i++)
        free(c->top_key[i]), free(c->top_json[i]);
    memset(c, 0, sizeof *c);
}

/* Reads `path` into *c (freed first); returns nx_chrome_read()'s result. */
static int read_path(const char *path, const nx_chrome_options *opts, collected *c, nx_error *err)
{
    collected_free(c);
    c->stop_at = -1;
    nx_chrome_reader *r = nx_chrome_open(path, opts, err);
    assert_non_null(r);
    nx_chrome_handlers h = {.event = collect_event, .toplevel = collect_toplevel, .ctx = c, .skipped = collect_skipped};
    int rc = nx_chrome_read(r, &h, err);
    nx_chrome_close(r);
    return rc;
}

/* Reads `text` as a plain file, then as a gzip'd one and with 1-byte chunks,
 * checks the three agree on the outcome, and leaves the plain reading in *c. */
static int read_text(const char *text, collected *c, nx_error *err)
{
    size_t len = strlen(text);
    nx_error err2;
    collected c2 = {0};
    int rc_gz = read_path(write_gz("t.json.gz", text, len), NULL, &c2, &err2);
    uint64_t total_gz = c2.total, nsk_gz = c2.nsk;
    nx_chrome_options one = {.chunk_size = 1};
    int rc_one = read_path(write_plain("t.json", text, len), &one, &c2, &err2);
    uint64_t total_one = c2.total, nsk_one = c2.nsk, sk0_one = c2.sk[0].offset;
    collected_free(&c2);
    int rc = read_path(write_plain("t.json", text, len), NULL, c, err);
    assert_int_equal(rc_gz, rc);
    assert_int_equal(rc_one, rc);
    assert_int_equal(total_gz, c->total);
    assert_int_equal(total_one, c->total);
    assert_int_equal(nsk_gz, c->nsk);
    assert_int_equal(nsk_one, c->nsk);
    if (c->nsk)
        assert_int_equal(sk0_one, c->sk[0].offset);
    if (rc < 0)
        assert_string_equal(err2.msg, err->msg);   /* offsets do not depend on chunking */
    return rc;
}

/* Asserts that reading `text` fails with a message containing each of the
 * NULL-terminated fragments, and that the message starts with the file name. */
static void expect_error(const char *text, ...)
{
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text(text, &c, &err), -1);
    const char *path = tmp_path("t.json");
    if (strncmp(err.msg, path, strlen(path)) != 0)
        fail_msg("message does not name the file: %s", err.msg);
    va_list ap;
    va_start(ap, text);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(err.msg, frag))
            fail_msg("\"%s\" not in: %s", frag, err.msg);
    va_end(ap);
    collected_free(&c);
}

/* ---- crafted traces ------------------------------------------------------------ */

static void test_object_form_every_phase(void **state)
{
    (void)state;
    const char *text =
        "{\"schemaVersion\": 1, \"deviceProperties\": [ {\"id\": 0, \"name\": \"GPU\"} ],\n"
        " \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 10, \"tid\": 11,"
        "   \"ts\": 1695835535123.456, \"dur\": 2.5, \"args\": {\"External id\": 3, \"Input Dims\": [[2, 3], []]}},\n"
        "  {\"ph\": \"B\", \"name\": \"step\", \"pid\": 10, \"tid\": 11, \"ts\": 100},\n"
        "  {\"ph\": \"E\", \"pid\": 10, \"tid\": 11, \"ts\": 200.001},\n"
        "  {\"ph\": \"i\", \"name\": \"mark\", \"s\": \"g\", \"pid\": 10, \"tid\": 11, \"ts\": 5},\n"
        "  {\"ph\": \"I\", \"name\": \"mark2\", \"s\": \"t\", \"pid\": 10, \"tid\": 11, \"ts\": 6},\n"
        "  {\"ph\": \"C\", \"name\": \"mem\", \"pid\": 10, \"ts\": 7, \"args\": {\"bytes\": 1024}},\n"
        "  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 10, \"tid\": 0, \"args\": {\"name\": \"python\"}},\n"
        "  {\"ph\": \"f\", \"id\": 5, \"bp\": \"e\", \"name\": \"fwdbwd\", \"cat\": \"fwdbwd\", \"pid\": 10, \"tid\": 11,"
        "   \"ts\": 8, \"bind_id\": \"0x1f\", \"flow_in\": true}\n"
        " ],\n"
        " \"traceName\": \"t.json\", \"displayTimeUnit\": \"ms\"}\n";
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text(text, &c, &err), 0);
    assert_int_equal(c.n, 8);

    copied *x = &c.ev[0];
    assert_int_equal(x->index, 0);
    assert_int_equal(x->ph, 'X');
    assert_string_equal(x->name, "aten::mm");
    assert_string_equal(x->cat, "cpu_op");
    assert_true(x->has_ts && x->has_dur);
    assert_int_equal(x->ts, 1695835535123456LL);
    assert_int_equal(x->dur, 2500);
    assert_int_equal(x->pid.kind, NX_CHROME_REF_NUMBER);
    assert_int_equal(x->pid.num, 10);
    assert_int_equal(x->tid.num, 11);
    assert_int_equal(x->id.kind, NX_CHROME_REF_ABSENT);
    assert_string_equal(x->args, "{\"External id\":3,\"Input Dims\":[[2,3],[]]}");
    assert_int_equal(x->offset, (uint64_t)(strstr(text, "{\"ph\": \"X\"") - text));

    assert_int_equal(c.ev[1].ph, 'B');
    assert_int_equal(c.ev[1].ts, 100000);
    assert_false(c.ev[1].has_dur);
    assert_int_equal(c.ev[2].ph, 'E');
    assert_null(c.ev[2].name);
    assert_int_equal(c.ev[2].ts, 200001);
    assert_int_equal(c.ev[3].ph, 'i');
    assert_string_equal(c.ev[3].s, "g");
    assert_int_equal(c.ev[4].ph, 'I');
    assert_string_equal(c.ev[4].s, "t");
    assert_int_equal(c.ev[5].ph, 'C');
    assert_string_equal(c.ev[5].args, "{\"bytes\":1024}");
    assert_int_equal(c.ev[5].tid.kind, NX_CHROME_REF_ABSENT);

    copied *m = &c.ev[6];
    assert_int_equal(m->ph, 'M');
    assert_false(m->has_ts);   /* metadata events may omit ts */
    assert_string_equal(m->name, "process_name");
    assert_string_equal(m->args, "{\"name\":\"python\"}");

    copied *f = &c.ev[7];
    assert_int_equal(f->ph, 'f');
    assert_int_equal(f->id.kind, NX_CHROME_REF_NUMBER);
    assert_int_equal(f->id.num, 5);
    assert_int_equal(f->bind_id.kind, NX_CHROME_REF_STRING);
    assert_string_equal(f->bind_id.str, "0x1f");
    assert_string_equal(f->bp, "e");
    assert_true(f->flow_in);
    assert_false(f->flow_out);
    assert_null(f->args);
    assert_false(f->args_too_large);

    /* top-level keys before and after traceEvents, in file order, compact */
    assert_int_equal(c.ntop, 4);
    assert_string_equal(c.top_key[0], "schemaVersion");
    assert_string_equal(c.top_json[0], "1");
    assert_string_equal(c.top_key[1], "deviceProperties");
    assert_string_equal(c.top_json[1], "[{\"id\":0,\"name\":\"GPU\"}]");
    assert_string_equal(c.top_key[2], "traceName");
    assert_string_equal(c.top_json[2], "\"t.json\"");
    assert_string_equal(c.top_key[3], "displayTimeUnit");
    collected_free(&c);
}

static void test_bare_array_form(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    const char *text = "[{\"ph\":\"B\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1},\n"
                       " {\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":1}]";
    assert_int_equal(read_text(text, &c, &err), 0);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.ntop, 0);
    assert_int_equal(c.ev[1].ts, 2000);

    nx_chrome_reader *r = nx_chrome_open(write_plain("b.json", text, strlen(text)), NULL, &err);
    assert_non_null(r);
    nx_chrome_handlers none = {.event = NULL, .toplevel = NULL, .ctx = NULL, .skipped = NULL};
    assert_int_equal(nx_chrome_read(r, &none, &err), 0);
    assert_true(nx_chrome_is_bare_array(r));
    assert_int_equal(nx_chrome_read(r, &none, &err), -1);   /* one read per reader */
    assert_non_null(strstr(err.msg, "already read"));
    nx_chrome_close(r);

    /* The format allows a bare array to stop without ']', with or without a comma. */
    assert_int_equal(read_text("[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2}", &c, &err), 0);
    assert_int_equal(c.n, 2);
    assert_int_equal(read_text("[{\"ph\":\"i\",\"ts\":1},\n", &c, &err), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(read_text("[]", &c, &err), 0);
    assert_int_equal(c.n, 0);
    collected_free(&c);
}

static void test_empty_trace_events(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("{\"traceEvents\": []}", &c, &err), 0);
    assert_int_equal(c.total, 0);
    assert_int_equal(read_text("{\"traceEvents\": [], \"otherData\": {}}", &c, &err), 0);
    assert_int_equal(c.ntop, 1);
    assert_string_equal(c.top_json[0], "{}");
    collected_free(&c);
}

/* One event per (ts text, expected ns): fractions, exponents, rounding, limits. */
static void test_ts_conversion_is_exact(void **state)
{
    (void)state;
    static const struct { const char *text; int64_t ns; } cases[] = {
        {"1695835535123.456", 1695835535123456LL},
        {"1712195495519695.812", 1712195495519695812LL},   /* not representable as a double */
        {"1682725898236567", 1682725898236567000LL},
        {"0", 0},
        {"-0", 0},
        {"0.0004", 0},
        {"0.0005", 1},                                     /* halves away from zero */
        {"-0.0005", -1},
        {"0.00149999999999999999999", 1},
        {"12.3456789", 12346},
        {"-1.5", -1500},
        {"1.5e3", 1500000},
        {"1E-3", 1},
        {"25e-5", 0},
        {"0.000000000000000000000000000000000001e36", 1000},
        {"123456789012345678901234567890e-20", 1234567890123LL},
        {"0e999999999", 0},
        {"1e-999999999", 0},
        {"9223372036854775.807", INT64_MAX},
        {"-9223372036854775.808", INT64_MIN},
        {"9223372036854775.8074", INT64_MAX},
    };
    size_t n = sizeof cases / sizeof cases[0];
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "[");
    for (size_t i = 0; i < n; i++)
        nx_strbuf_printf(&b, "%s{\"ph\":\"i\",\"ts\":%s,\"dur\":%s}", i ? "," : "", cases[i].text, cases[i].text);
    nx_strbuf_puts(&b, "]");
    assert_false(nx_strbuf_failed(&b));
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text(b.data, &c, &err), 0);
    nx_strbuf_free(&b);
    assert_int_equal(c.n, n);
    for (size_t i = 0; i < n; i++) {
        if (c.ev[i].ts != cases[i].ns || c.ev[i].dur != cases[i].ns)
            fail_msg("%s us: got %lld / %lld ns, want %lld", cases[i].text, (long long)c.ev[i].ts,
                     (long long)c.ev[i].dur, (long long)cases[i].ns);
    }
    collected_free(&c);
}

/* A ts or dur beyond int64 ns spoils its event only: the event comes with
 * time_overflow and that value 0; the events around it are read as usual, and
 * a later repeat of the key that fits clears the flag (the last key wins). */
static void test_huge_times_flag_their_event(void **state)
{
    (void)state;
    const char *text = "[{\"ph\":\"i\",\"ts\":9223372036854775.808},"
                       "{\"ph\":\"i\",\"ts\":-9223372036854775.8085},"
                       "{\"ph\":\"i\",\"ts\":1e20},"
                       "{\"ph\":\"X\",\"ts\":1,\"dur\":99999999999999999999},"
                       "{\"ph\":\"X\",\"ts\":2,\"dur\":1e300},"
                       "{\"ph\":\"X\",\"ts\":1e300,\"ts\":3,\"dur\":4},"
                       "{\"ph\":\"X\",\"ts\":9223372036854775.807,\"dur\":-9223372036854775.808}]";
    static const struct { bool over; int64_t ts, dur; } want[] = {
        {true, 0, 0}, {true, 0, 0}, {true, 0, 0}, {true, 1000, 0}, {true, 2000, 0}, {false, 3000, 4000},
        {false, INT64_MAX, INT64_MIN},
    };
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text(text, &c, &err), 0);
    assert_int_equal(c.n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < c.n; i++) {
        if (c.ev[i].time_overflow != want[i].over || c.ev[i].ts != want[i].ts || c.ev[i].dur != want[i].dur)
            fail_msg("event %zu: overflow %d ts %lld dur %lld; want %d %lld %lld", i, c.ev[i].time_overflow,
                     (long long)c.ev[i].ts, (long long)c.ev[i].dur, want[i].over, (long long)want[i].ts,
                     (long long)want[i].dur);
    }
    collected_free(&c);
}

/* Kineto writes ids above INT64_MAX: a number that is no int64 integer is
 * kept as its text, a string reference. */
static void test_huge_ids_kept_as_text(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("[{\"ph\":\"X\",\"ts\":1,\"pid\":9223372036854775808,\"tid\":1.5,"
                               "\"id\":18446744073709551615,\"bind_id\":-9223372036854775809}]",
                               &c, &err),
                     0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.nsk, 0);
    assert_int_equal(c.ev[0].pid.kind, NX_CHROME_REF_STRING);
    assert_string_equal(c.ev[0].pid.str, "9223372036854775808");
    assert_string_equal(c.ev[0].tid.str, "1.5");
    assert_string_equal(c.ev[0].id.str, "18446744073709551615");
    assert_string_equal(c.ev[0].bind_id.str, "-9223372036854775809");
    collected_free(&c);
}

/* ts as a string holding a number, and many decimals, are read like numbers. */
static void test_ts_as_string(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("[{\"ph\":\"X\",\"ts\":\"12.5\",\"dur\":\"-1e0\"},"
                               "{\"ph\":\"X\",\"ts\":7.123456789,\"dur\":0.0005}]",
                               &c, &err),
                     0);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.ev[0].ts, 12500);
    assert_int_equal(c.ev[0].dur, -1000);
    assert_int_equal(c.ev[1].ts, 7123);   /* 7123.456789 ns, to the nearest */
    assert_int_equal(c.ev[1].dur, 1);     /* 0.5 ns, halves away from zero */
    collected_free(&c);
}

/* Invalid UTF-8 is one odd name, not a broken file: each bad byte is U+FFFD. */
static void test_invalid_utf8_repaired(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("[{\"ph\":\"i\",\"ts\":1,\"name\":\"a\xff\xc3\xa9\xe2\x82z\",\"cat\":\"\xc0\","
                               "\"pid\":\"p\xfe\",\"args\":{\"k\xff\":\"v\xed\xa0\x80\"}}]",
                               &c, &err),
                     0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.ev[0].name, "a\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbdz");
    assert_string_equal(c.ev[0].cat, "\xef\xbf\xbd");
    assert_string_equal(c.ev[0].pid.str, "p\xef\xbf\xbd");
    assert_string_equal(c.ev[0].args, "{\"k\\ufffd\":\"v\\ufffd\\ufffd\\ufffd\"}");
    collected_free(&c);
}

static void test_string_and_number_ids(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("{\"traceEvents\":["
                               "{\"ph\":\"i\",\"ts\":1,\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"s\":\"p\"},"
                               "{\"ph\":\"i\",\"ts\":1,\"pid\":\"\",\"tid\":-2,\"id\":\"0x1f\"},"
                               "{\"ph\":\"i\",\"ts\":1,\"pid\":1e2,\"tid\":9223372036854775807,\"id\":-9223372036854775808}"
                               "]}",
                               &c, &err),
                     0);
    assert_int_equal(c.ev[0].pid.kind, NX_CHROME_REF_STRING);
    assert_string_equal(c.ev[0].pid.str, "Spans");
    assert_string_equal(c.ev[0].tid.str, "PyTorch Profiler");
    assert_int_equal(c.ev[1].pid.kind, NX_CHROME_REF_STRING);
    assert_string_equal(c.ev[1].pid.str, "");
    assert_int_equal(c.ev[1].tid.kind, NX_CHROME_REF_NUMBER);
    assert_int_equal(c.ev[1].tid.num, -2);
    assert_string_equal(c.ev[1].id.str, "0x1f");
    assert_int_equal(c.ev[2].pid.num, 100);
    assert_int_equal(c.ev[2].tid.num, INT64_MAX);
    assert_int_equal(c.ev[2].id.num, INT64_MIN);
    collected_free(&c);
}

static void test_args_reserialised_compactly(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\": {\n"
                               "  \"a\" : \"q\\\"b\\\\s\\/\\n\\t\\r\\b\\u0001\\u00e9\\ud83d\\ude00\",\n"
                               "  \"n\" : [1, 2.50, -3e2, 1E+400, true, false, null, {}, []],\n"
                               "  \"\\u0000k\" : {\"deep\": [[[{\"x\": 1}]]]} }}]",
                               &c, &err),
                     0);
    assert_string_equal(c.ev[0].args,
                        "{\"a\":\"q\\\"b\\\\s/\\n\\t\\r\\u0008\\u0001\xc3\xa9\xf0\x9f\x98\x80\","
                        "\"n\":[1,2.50,-3e2,1E+400,true,false,null,{},[]],"
                        "\"\\u0000k\":{\"deep\":[[[{\"x\":1}]]]}}");
    /* a NUL inside a string: the length tells, the NUL-terminated view stops early */
    assert_int_equal(read_text("[{\"ph\":\"i\",\"ts\":1,\"name\":\"a\\u0000b\"}]", &c, &err), 0);
    assert_string_equal(c.ev[0].name, "a");
    assert_memory_equal(c.ev[0].name, "a\0b", 4);
    collected_free(&c);
}

static void test_unknown_phases_keys_and_nulls(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("[{\"ph\":\"Z\",\"ts\":3,\"tts\":4,\"stack\":[[1,{\"a\":[]}],2],\"id2\":{\"local\":\"0x1\"},"
                               "\"cname\":\"good\",\"cat\":null,\"name\":\"n1\",\"name\":\"n2\",\"dur\":5,\"dur\":null,"
                               "\"args\":{\"x\":1},\"args\":null}]",
                               &c, &err),
                     0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.ev[0].ph, 'Z');             /* unknown phases pass through */
    assert_int_equal(c.ev[0].ts, 3000);
    assert_null(c.ev[0].cat);                      /* null is absent */
    assert_string_equal(c.ev[0].name, "n2");       /* the last of repeated keys wins */
    assert_false(c.ev[0].has_dur);
    assert_null(c.ev[0].args);
    assert_false(c.ev[0].args_too_large);
    collected_free(&c);
}

static void test_size_caps(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"big\":[");
    for (int i = 0; i < 300; i++)
        nx_strbuf_printf(&b, "%s%d", i ? "," : "", i);
    nx_strbuf_puts(&b, "],\"traceEvents\":[{\"ph\":\"i\",\"ts\":1,\"args\":{\"v\":\"");
    for (int i = 0; i < 200; i++)
        nx_strbuf_puts(&b, "xxxxx");
    nx_strbuf_puts(&b, "\"}},{\"ph\":\"i\",\"ts\":2,\"args\":{\"v\":1}}],\"small\":2}");
    assert_false(nx_strbuf_failed(&b));
    nx_chrome_options opts = {.max_args_bytes = 512, .max_toplevel_bytes = 256, .chunk_size = 5};
    collected c = {0};
    nx_error err;
    assert_int_equal(read_path(write_plain("caps.json", b.data, b.len), &opts, &c, &err), 0);
    nx_strbuf_free(&b);
    assert_int_equal(c.n, 2);
    assert_null(c.ev[0].args);
    assert_true(c.ev[0].args_too_large);
    assert_string_equal(c.ev[1].args, "{\"v\":1}");   /* the next event is unaffected */
    assert_false(c.ev[1].args_too_large);
    assert_int_equal(c.ntop, 2);
    assert_string_equal(c.top_key[0], "big");
    assert_null(c.top_json[0]);
    assert_true(c.top_too_large[0]);
    assert_string_equal(c.top_json[1], "2");
    assert_false(c.top_too_large[1]);
    collected_free(&c);
}

static void test_callback_stops_reading(void **state)
{
    (void)state;
    collected c = {0};
    c.stop_at = 1;
    nx_error err;
    const char *text = "[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2},{\"ph\":\"i\",\"ts\":3}]";
    nx_chrome_reader *r = nx_chrome_open(write_plain("stop.json", text, strlen(text)), NULL, &err);
    assert_non_null(r);
    nx_chrome_handlers h = {.event = collect_event, .toplevel = collect_toplevel, .ctx = &c, .skipped = NULL};
    assert_int_equal(nx_chrome_read(r, &h, &err), 7);
    assert_int_equal(c.n, 2);
    nx_chrome_close(r);
    collected_free(&c);
}

/* ---- errors ------------------------------------------------------------------------ */

static void test_bad_json_names_the_offset(void **state)
{
    (void)state;
    /* the offset points just past the bad token (here the second ','), whatever the chunking */
    const char *text = "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,,}]}";
    char want[32];
    snprintf(want, sizeof want, "byte %d:", (int)(strstr(text, ",,") - text) + 2);
    expect_error(text, want, "event #0", "invalid JSON", NULL);

    /* far into a file, across many chunks and events */
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "[");
    for (int i = 0; i < 5000; i++)
        nx_strbuf_printf(&b, "{\"ph\":\"X\",\"name\":\"op%d\",\"ts\":%d.125,\"dur\":1},\n", i, i);
    size_t bad = b.len;
    nx_strbuf_puts(&b, "{\"ph\":\"X\",\"ts\":1x}]");
    assert_false(nx_strbuf_failed(&b));
    snprintf(want, sizeof want, "byte %zu:", bad + strlen("{\"ph\":\"X\",\"ts\":1x"));
    collected c = {0};
    nx_error err;
    nx_chrome_options opts = {.chunk_size = 4093};
    assert_int_equal(read_path(write_gz("far.json.gz", b.data, b.len), &opts, &c, &err), -1);
    nx_strbuf_free(&b);
    assert_int_equal(c.total, 5000);
    if (!strstr(err.msg, want) || !strstr(err.msg, "event #5000"))
        fail_msg("want \"%s\" and event #5000 in: %s", want, err.msg);
    collected_free(&c);

    expect_error("{\"traceEvents\":[]} x", "invalid JSON", "trailing garbage", NULL);
}

static void test_structure_errors(void **state)
{
    (void)state;
    expect_error("", "byte 0", "empty file", NULL);
    expect_error("  42 ", "object or array, found a number", NULL);
    expect_error("{}", "byte 2", "no \"traceEvents\"", NULL);
    expect_error("{\"traceEvents\": {}}", "\"traceEvents\" must be an array, found an object", NULL);
    expect_error("{\"traceEvents\": [], \"traceEvents\": []}", "appears twice", NULL);
}

static void test_truncated_input(void **state)
{
    (void)state;
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1}", "byte 33", "truncated", "traceEvents", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1}]", "truncated", "top-level object", NULL);
    expect_error("[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\",\"na", "truncated", "inside an event", NULL);
    expect_error("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":12", "truncated", NULL);

    /* deep nesting is refused before it costs memory */
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "[{\"ph\":\"i\",\"ts\":1,\"args\":");
    for (int i = 0; i < 2000; i++)
        nx_strbuf_putc(&b, '[');
    assert_false(nx_strbuf_failed(&b));
    expect_error(b.data, "nested deeper than 1000", NULL);
    nx_strbuf_free(&b);
}

static void test_gzip_errors(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"traceEvents\":[");
    for (int i = 0; i < 20000; i++)
        nx_strbuf_printf(&b, "%s{\"ph\":\"X\",\"name\":\"k%d\",\"ts\":%d,\"dur\":%d}", i ? "," : "", i * 7919 % 10007, i, i % 13);
    nx_strbuf_puts(&b, "]}");
    assert_false(nx_strbuf_failed(&b));
    const char *path = write_gz("g.json.gz", b.data, b.len);
    nx_strbuf_free(&b);
    collected c = {0};
    nx_error err;
    assert_int_equal(read_path(path, NULL, &c, &err), 0);
    assert_int_equal(c.total, 20000);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_int_equal(fclose(f), 0);

    /* cut in the middle of the deflate stream */
    assert_int_equal(truncate(path, size / 2), 0);
    assert_int_equal(read_path(path, NULL, &c, &err), -1);
    if (!strstr(err.msg, path) || !strstr(err.msg, "gzip: unexpected end of file"))
        fail_msg("unexpected message: %s", err.msg);
    assert_true(c.total > 0 && c.total < 20000);   /* events before the cut came through */

    /* intact JSON, but the gzip trailer (CRC, length) is cut short */
    path = write_gz("g.json.gz", "{\"traceEvents\":[]}", 18);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(truncate(path, size - 3), 0);
    assert_int_equal(read_path(path, NULL, &c, &err), -1);
    assert_non_null(strstr(err.msg, "gzip: unexpected end of file"));

    /* a flipped bit in the CRC */
    path = write_gz("g.json.gz", "{\"traceEvents\":[]}", 18);
    f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, -8, SEEK_END), 0);
    int ch = fgetc(f);
    assert_int_equal(fseek(f, -8, SEEK_END), 0);
    assert_int_equal(fputc(ch ^ 1, f), ch ^ 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(read_path(path, NULL, &c, &err), -1);
    assert_non_null(strstr(err.msg, "gzip: incorrect data check"));

    /* two members are one text; junk after the last member is an error */
    static const char first[] = "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}";
    path = write_gz("g.json.gz", first, strlen(first));
    gzFile more = gzopen(path, "ab");
    assert_non_null(more);
    assert_int_equal(gzwrite(more, "]}", 2), 2);
    assert_int_equal(gzclose(more), Z_OK);
    assert_int_equal(read_path(path, NULL, &c, &err), 0);
    assert_int_equal(c.total, 1);
    f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fputs("junk", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(read_path(path, NULL, &c, &err), -1);
    if (!strstr(err.msg, path) || !strstr(err.msg, "what follows a gzip member is not another member"))
        fail_msg("unexpected message: %s", err.msg);

    assert_null(nx_chrome_open(tmp_path("missing.json"), NULL, &err));
    assert_non_null(strstr(err.msg, "missing.json: cannot open: No such file"));
    collected_free(&c);
}

/* ---- the real traces ------------------------------------------------------------------- */

/* A running digest of everything the reader delivers, to compare readings. */
typedef struct digest {
    uint64_t h, events, phases[256], bad;
} digest;

static void mix(digest *d, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ s[i]) * 1099511628211ULL;
}

static void mix_text(digest *d, nx_chrome_text t)
{
    mix(d, &t.len, sizeof t.len);
    if (t.s)
        mix(d, t.s, t.len);
}

static void mix_ref(digest *d, nx_chrome_ref r)
{
    mix(d, &r.kind, sizeof r.kind);
    mix(d, &r.num, sizeof r.num);
    mix_text(d, r.str);
}

static int digest_event(void *ctx, const nx_chrome_event *e)
{
    digest *d = ctx;
    d->events++;
    d->phases[(unsigned char)e->ph]++;
    mix(d, &e->ph, 1);
    mix(d, &e->offset, sizeof e->offset);
    mix(d, &e->ts_ns, sizeof e->ts_ns);
    mix(d, &e->dur_ns, sizeof e->dur_ns);
    mix_text(d, e->name);
    mix_text(d, e->cat);
    mix_text(d, e->s);
    mix_text(d, e->bp);
    mix_text(d, e->args);
    mix_ref(d, e->pid);
    mix_ref(d, e->tid);
    mix_ref(d, e->id);
    mix_ref(d, e->bind_id);
    /* invariants of real PyTorch traces: complete events have a duration, only
     * metadata may lack ts, and args text is valid JSON again */
    if ((e->ph == 'X' && (!e->has_dur || e->dur_ns < 0)) || (!e->has_ts && e->ph != 'M') || e->args_too_large)
        d->bad++;
    if (e->args.s) {
        yajl_val v = yajl_tree_parse(e->args.s, NULL, 0);
        if (!v || !YAJL_IS_OBJECT(v))
            d->bad++;
        yajl_tree_free(v);
    }
    return 0;
}

static int digest_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    digest *d = ctx;
    mix_text(d, tl->key);
    mix_text(d, tl->json);
    return 0;
}

/* Reads `text` and asserts one element was skipped, element `index` (of
 * `total` delivered events), with a reason holding `why`, at byte `offset`. */
static void expect_skipped(const char *text, uint64_t index, uint64_t offset, const char *why, uint64_t total)
{
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text(text, &c, &err), 0);
    assert_int_equal(c.nsk, 1);
    assert_int_equal(c.sk[0].index, index);
    assert_int_equal(c.sk[0].offset, offset);
    if (!strstr(c.sk[0].reason, why))
        fail_msg("\"%s\" not in: %s", why, c.sk[0].reason);
    assert_int_equal(c.total, total);
    for (size_t i = 0; i < c.n; i++)
        assert_int_not_equal(c.ev[i].index, index);
    collected_free(&c);
}

/* A UTF-8 byte-order mark before the JSON is passed over; offsets count it. */
static void test_utf8_bom(void **state)
{
    (void)state;
    collected c = {0};
    nx_error err;
    assert_int_equal(read_text("\xef\xbb\xbf[{\"ph\":\"i\",\"ts\":1}]", &c, &err), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.ev[0].offset, 4);
    assert_int_equal(read_text("\xef\xbb\xbf{\"traceEvents\":[]}", &c, &err), 0);
    collected_free(&c);
    expect_error("\xef\xbb[]", "invalid JSON", NULL);   /* half a BOM is no BOM */
    expect_error("[\xef\xbb\xbf]", "invalid JSON", NULL);  /* only at the start */
}

/* One odd element costs itself: it is skipped, said, and reading goes on. */
static void test_odd_elements_are_skipped(void **state)
{
    (void)state;
    expect_skipped("[{\"ph\":\"i\",\"ts\":1}, 3, {\"ph\":\"i\",\"ts\":2}]", 1, 21, "a number, not an object", 2);
    expect_skipped("[{\"ph\":\"i\",\"ts\":1}, [{}], {\"ph\":\"i\",\"ts\":2}]", 1, 20, "an array, not an object", 2);
    expect_skipped("[{\"ph\":\"i\",\"ts\":1}, {\"ts\":2}]", 1, 20, "no \"ph\"", 1);
    expect_skipped("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1},{}]}", 1, 34, "no \"ph\"", 1);   /* JAX's last */
    expect_skipped("[{\"ph\":\"XX\",\"ts\":1}]", 0, 1, "\"ph\" must be one character", 0);
    expect_skipped("[{\"ph\":1,\"ts\":1}]", 0, 1, "\"ph\" must be a one-character string, found a number", 0);
    expect_skipped("[{\"ph\":\"X\"}]", 0, 1, "the 'X' event has no \"ts\"", 0);
    expect_skipped("[{\"ph\":\"B\",\"ts\":null}]", 0, 1, "no \"ts\"", 0);
    expect_skipped("[{\"ph\":\"B\",\"ts\":\"12x\"}]", 0, 1, "\"ts\" \"12x\" is not a number", 0);
    expect_skipped("[{\"ph\":\"B\",\"ts\":1,\"name\":7}]", 0, 1, "\"name\" must be a string, found a number", 0);
    expect_skipped("[{\"ph\":\"B\",\"ts\":1,\"pid\":true}]", 0, 1, "\"pid\" must be a number or a string", 0);
    expect_skipped("[{\"ph\":\"B\",\"ts\":1,\"cat\":[\"a\"]}]", 0, 1, "\"cat\" must be a string, found an array", 0);
    expect_skipped("[{\"ph\":\"s\",\"ts\":1,\"flow_out\":1}]", 0, 1, "\"flow_out\" must be a boolean", 0);
}

static digest read_digest(const char *path, size_t chunk)
{
    digest d = {.h = 14695981039346656037ULL};
    nx_error err;
    nx_chrome_options opts = {.chunk_size = chunk};
    nx_chrome_reader *r = nx_chrome_open(path, &opts, &err);
    if (!r)
        fail_msg("%s", err.msg);
    nx_chrome_handlers h = {.event = digest_event, .toplevel = digest_toplevel, .ctx = &d, .skipped = NULL};
    if (nx_chrome_read(r, &h, &err) != 0)
        fail_msg("%s", err.msg);
    nx_chrome_close(r);
    return d;
}

/* Decompresses a fixture to a plain .json file with zlib, for the plain path. */
static const char *gunzip_copy(const char *src)
{
    gzFile in = gzopen(src, "rb");
    assert_non_null(in);
    const char *dst = tmp_path("fixture.json");
    FILE *out = fopen(dst, "wb");
    assert_non_null(out);
    char buf[65536];
    int n;
    while ((n = gzread(in, buf, sizeof buf)) > 0)
        assert_int_equal(fwrite(buf, 1, (size_t)n, out), (size_t)n);
    assert_int_equal(n, 0);
    assert_int_equal(gzclose(in), Z_OK);
    assert_int_equal(fclose(out), 0);
    return dst;
}

static void test_real_traces(void **state)
{
    (void)state;
    const char *data = getenv("NXPROF_TEST_DATA");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/chrome-traces", data ? data : "tests/data");
    DIR *dp = opendir(dir);
    if (!dp)
        fail_msg("cannot open %s", dir);
    int files = 0;
    for (struct dirent *de; (de = readdir(dp));) {
        size_t len = strlen(de->d_name);
        if (!(len > 5 && strcmp(de->d_name + len - 5, ".json") == 0) &&
            !(len > 8 && strcmp(de->d_name + len - 8, ".json.gz") == 0))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        files++;
        digest d = read_digest(path, 0);
        if (d.events == 0 || d.bad != 0)
            fail_msg("%s: %llu events, %llu break an invariant", de->d_name, (unsigned long long)d.events,
                     (unsigned long long)d.bad);
        assert_true(d.phases['X'] > 0 && d.phases['M'] > 0);
        /* chunk boundaries anywhere (odd sizes; 1 byte on the small traces) change nothing */
        digest odd = read_digest(path, 4093);
        assert_int_equal(odd.h, d.h);
        assert_int_equal(odd.events, d.events);
        digest plain = read_digest(gunzip_copy(path), 0);
        assert_int_equal(plain.h, d.h);
        if (d.events < 5000) {
            digest one = read_digest(path, 1);
            assert_int_equal(one.h, d.h);
        }
        assert_int_equal(unlink(tmp_path("fixture.json")), 0);
    }
    closedir(dp);
    assert_true(files >= 5);
}

static int remove_tmpdir(void **state)
{
    (void)state;
    static const char *const names[] = {"t.json", "t.json.gz", "b.json", "caps.json", "stop.json", "far.json.gz", "g.json.gz"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(tmp_path(names[i]));
    return rmdir(tmpdir_path);
}

static int make_tmpdir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir_path, sizeof tmpdir_path, "%s/nx_chrome_XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir_path) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_form_every_phase),
        cmocka_unit_test(test_bare_array_form),
        cmocka_unit_test(test_empty_trace_events),
        cmocka_unit_test(test_ts_conversion_is_exact),
        cmocka_unit_test(test_huge_times_flag_their_event),
        cmocka_unit_test(test_huge_ids_kept_as_text),
        cmocka_unit_test(test_ts_as_string),
        cmocka_unit_test(test_invalid_utf8_repaired),
        cmocka_unit_test(test_odd_elements_are_skipped),
        cmocka_unit_test(test_utf8_bom),
        cmocka_unit_test(test_string_and_number_ids),
        cmocka_unit_test(test_args_reserialised_compactly),
        cmocka_unit_test(test_unknown_phases_keys_and_nulls),
        cmocka_unit_test(test_size_caps),
        cmocka_unit_test(test_callback_stops_reading),
        cmocka_unit_test(test_bad_json_names_the_offset),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_truncated_input),
        cmocka_unit_test(test_gzip_errors),
        cmocka_unit_test(test_real_traces),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
