/*
 * framework_events.c — framework traces (every format of the registry,
 * capture/framework_source.h) into the framework-event buffer
 * (framework_buffer.c): X events and B/E pairs become buffered events with
 * their name, pid/tid as integers, extra_attributes_json, stream and flow id;
 * what cannot be used is counted and said in one Warning per kind per file.
 * The rules for the rows they become are in system_events.c's header comment.
 */
#include "process/system_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "capture/framework_source.h"
#include "util/json.h"
#include "util/run_control.h"
#include "util/strbuf.h"

/* ------------------------------------------------------ args JSON scanning -- */

/* The value of top-level member `key` of the args object: a string's raw
 * content (between the quotes, escapes kept) or a scalar's text. False when
 * absent, null or an object/array. */
static bool args_member(const char *args, size_t len, const char *key, const char **val, size_t *vlen)
{
    if (!nx_json_member(args, len, key, val, vlen))
        return false;
    if (**val == '"') {
        (*val)++;
        *vlen -= 2;
        return true;
    }
    return **val != '{' && **val != '[' && !(*vlen == 4 && memcmp(*val, "null", 4) == 0);
}

/* ------------------------------------------------------- reading a file -- */

typedef struct chrome_file {
    fw_buffer *buf;
    const char *path;
    uint32_t session;
    uint32_t file;               /* fw_event.file */
    const nx_cap_warner *warn;
    size_t first;                /* index of the file's first buffered event */
    fw_thread *threads;
    size_t tcap, tn;
    bool has_base;
    int64_t base_ns;
    uint64_t unmatched_e, e_before_b, negative_dur, args_truncated, bad_base;
    uint64_t n_x, n_b, overflow;  /* X and B events buffered; events past the int64 ns range */
    uint64_t names;              /* M events kept as process or thread names */
    int64_t max_ns;              /* the latest time buffered, before the base */
    nx_fw_tally tally;
    nx_strbuf sb;
    size_t own_run;              /* its first spilled run (SIZE_MAX: none yet) */
    char *err;                   /* a spill's error goes here */
    size_t errlen;
    bool spill_failed;
} chrome_file;

/* A pid/tid as an integer: see the header comment. */
static int64_t map_ref(const nx_chrome_ref *r)
{
    if (r->kind == NX_CHROME_REF_NUMBER)
        return r->num;
    if (r->kind != NX_CHROME_REF_STRING || !r->str.s)
        return 0;
    const char *s = r->str.s;
    size_t len = r->str.len;
    size_t i = (len > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    bool digits = len > i && len - i <= 19;
    for (size_t k = i; digits && k < len; k++)
        digits = s[k] >= '0' && s[k] <= '9';
    if (digits) {
        char tmp[24];
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        char *e;
        long long v = strtoll(tmp, &e, 10);
        if (*e == '\0' && v != LLONG_MAX && v != LLONG_MIN)
            return (int64_t)v;
    }
    return -1 - (int64_t)(XXH3_64bits(s, len) >> 1);
}

static fw_thread *thread_slot(chrome_file *f, int64_t pid, int64_t tid)
{
    if (2 * (f->tn + 1) > f->tcap) {
        size_t nc = f->tcap ? f->tcap * 2 : 64;
        fw_thread *t = calloc(nc, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < f->tcap; i++) {
            if (!f->threads[i].used)
                continue;
            size_t h = (size_t)XXH3_64bits(&f->threads[i].pid, 16) & (nc - 1);
            while (t[h].used)
                h = (h + 1) & (nc - 1);
            t[h] = f->threads[i];
        }
        free(f->threads);
        f->threads = t;
        f->tcap = nc;
    }
    int64_t key[2] = {pid, tid};
    size_t h = (size_t)XXH3_64bits(key, sizeof key) & (f->tcap - 1);
    while (f->threads[h].used && (f->threads[h].pid != pid || f->threads[h].tid != tid))
        h = (h + 1) & (f->tcap - 1);
    if (!f->threads[h].used) {
        f->threads[h] = (fw_thread){.pid = pid, .tid = tid, .top = 0, .used = true};
        f->tn++;
    }
    return &f->threads[h];
}

static void json_text(nx_strbuf *b, const nx_chrome_text *t)
{
    /* The reader's strings may hold "\u0000" (len > strlen): cut there, as a C string. */
    nx_json_put_cstr(b, t->s);
}

/* extra_attributes_json of an X or B event into f->sb. */
static void build_json(chrome_file *f, const nx_chrome_event *ev)
{
    nx_strbuf *b = &f->sb;
    b->len = 0;
    nx_strbuf_putc(b, '{');
    bool first = true;
    if (ev->cat.s) {
        nx_strbuf_puts(b, "\"cat\":");
        json_text(b, &ev->cat);
        first = false;
    }
    if (ev->pid.kind == NX_CHROME_REF_STRING && ev->pid.str.s) {
        nx_strbuf_puts(b, first ? "\"pid\":" : ",\"pid\":");
        json_text(b, &ev->pid.str);
        first = false;
    }
    if (ev->tid.kind == NX_CHROME_REF_STRING && ev->tid.str.s) {
        nx_strbuf_puts(b, first ? "\"tid\":" : ",\"tid\":");
        json_text(b, &ev->tid.str);
        first = false;
    }
    if (ev->args.s) {
        nx_strbuf_puts(b, first ? "\"args\":" : ",\"args\":");
        nx_strbuf_append(b, ev->args.s, ev->args.len);
        first = false;
    }
    if (ev->args_too_large) {
        nx_strbuf_puts(b, first ? "\"args_truncated\":true" : ",\"args_truncated\":true");
        f->args_truncated++;
    }
    nx_strbuf_putc(b, '}');
}

static int stop_buffer(chrome_file *f)
{
    (void)f;
    return 1;   /* nx_chrome_read returns it: the caller reads buf->oom / over_limit */
}

static int chrome_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    chrome_file *f = ctx;
    if (tl->key.s && tl->json.s && strcmp(tl->key.s, "displayTimeUnit") == 0)
        nx_fw_tally_unit(&f->tally, tl->json.s);
    if (nx_fw_ranks_toplevel(f->buf->ranks, f->file, tl, f->path, f->warn) != 0) {
        f->buf->oom = true;
        return stop_buffer(f);
    }
    if (!tl->key.s || strcmp(tl->key.s, "baseTimeNanoseconds") != 0)
        return 0;
    char *e = NULL;
    long long v = tl->json.s ? strtoll(tl->json.s, &e, 10) : 0;
    if (!tl->json.s || *e != '\0' || e == tl->json.s || v == LLONG_MAX || v == LLONG_MIN) {
        f->bad_base++;
        return 0;
    }
    f->has_base = true;
    f->base_ns = (int64_t)v;
    return 0;
}

static int chrome_skipped(void *ctx, const nx_chrome_skipped *sk)
{
    chrome_file *f = ctx;
    nx_fw_tally_skipped(&f->tally, f->warn, f->path, sk->index, sk->offset, sk->category, sk->reason);
    return 0;
}

static void see_time(chrome_file *f, int64_t ns)
{
    f->max_ns = ns > f->max_ns ? ns : f->max_ns;
}

static int chrome_event(void *ctx, const nx_chrome_event *ev)
{
    chrome_file *f = ctx;
    fw_buffer *b = f->buf;
    if (ev->ph != 'X' && ev->ph != 'B' && ev->ph != 'E') {
        int named = nx_fw_names_add(b->names, f->file, ev, map_ref(&ev->pid), map_ref(&ev->tid));
        if (named < 0) {
            b->oom = true;
            return stop_buffer(f);
        }
        f->names += (uint64_t)named;   /* kept as names of the thread's events */
        if (!named)
            f->tally.seen[(unsigned char)ev->ph]++;   /* not stored yet: said per kind at the end */
        return 0;
    }
    if (!ev->has_ts) {   /* the Chrome reader skips these itself; another source might not */
        nx_fw_tally_skipped(&f->tally, f->warn, f->path, ev->index, ev->offset, NULL, "the event has no time");
        return 0;
    }
    f->tally.seen[(unsigned char)ev->ph]++;
    if (ev->time_overflow) {
        f->overflow++;
        nx_cap_warn(f->warn, f->path, ev->offset, "Invalid Data",
                    "event #%" PRIu64 " ('%c'): its \"ts\" or \"dur\" is beyond the int64 ns range; dropped",
                    ev->index, ev->ph);
        return 0;
    }
    if (nx_fw_bytes(b) > b->budget) {
        size_t run;
        if (nx_fw_spill(b, f->first, f->path, f->threads, f->tcap, &run, f->err, f->errlen) != 0) {
            f->spill_failed = true;
            return stop_buffer(f);
        }
        if (run != SIZE_MAX && f->own_run == SIZE_MAX)
            f->own_run = run;
        f->first = 0;
    }
    int64_t pid = map_ref(&ev->pid), tid = map_ref(&ev->tid);
    if (ev->ph == 'E') {
        fw_thread *t = thread_slot(f, pid, tid);
        if (!t) {
            b->oom = true;
            return stop_buffer(f);
        }
        if (t->top == 0) {
            f->unmatched_e++;
            return 0;
        }
        fw_event *o = &b->v[t->top - 1];
        t->top = o->link;
        o->link = 0;
        o->open = 0;
        if (ev->ts_ns < o->start) {
            f->e_before_b++;
            o->dropped = 1;
            return 0;
        }
        o->end = ev->ts_ns;
        see_time(f, o->end);
        if (ev->args.s && !(ev->args.len == 2 && memcmp(ev->args.s, "{}", 2) == 0)) {
            /* The pair's attributes: the B's object with "end_args" added before its '}'. */
            const char *old = nx_fw_str(b, o->json);
            size_t ol = strlen(old);
            nx_strbuf *sb = &f->sb;
            sb->len = 0;
            nx_strbuf_append(sb, old, ol - 1);
            nx_strbuf_puts(sb, ol > 2 ? ",\"end_args\":" : "\"end_args\":");
            nx_strbuf_append(sb, ev->args.s, ev->args.len);
            nx_strbuf_putc(sb, '}');
            if (nx_strbuf_failed(sb)) {
                b->oom = true;
                return stop_buffer(f);
            }
            uint64_t off = nx_fw_put(b, sb->data, sb->len);
            if (off == UINT64_MAX)
                return stop_buffer(f);
            o->json = off;
        }
        return 0;
    }
    int64_t start = ev->ts_ns, end = start;
    if (ev->ph == 'X') {
        int64_t dur = ev->has_dur ? ev->dur_ns : 0;
        if (dur < 0) {
            f->negative_dur++;
            return 0;
        }
        end = nx_event_time_shift(start, dur);   /* past int64: dropped when written (fw_next_in_range) */
    }
    build_json(f, ev);
    if (nx_strbuf_failed(&f->sb)) {
        b->oom = true;
        return stop_buffer(f);
    }
    uint64_t name = nx_fw_put(b, ev->name.s ? ev->name.s : "", ev->name.s ? strlen(ev->name.s) : 0);
    uint64_t json = nx_fw_put(b, f->sb.data, f->sb.len);
    uint64_t stream = 0, flow = 0;
    const char *v;
    size_t vl;
    if (ev->args.s && args_member(ev->args.s, ev->args.len, "stream", &v, &vl))
        stream = nx_fw_put(b, v, vl);
    if (ev->args.s && (args_member(ev->args.s, ev->args.len, "flow_id", &v, &vl) ||
                       args_member(ev->args.s, ev->args.len, "correlation", &v, &vl)))
        flow = nx_fw_put(b, v, vl);
    if (name == UINT64_MAX || json == UINT64_MAX || stream == UINT64_MAX || flow == UINT64_MAX)
        return stop_buffer(f);
    fw_event *e = nx_fw_add(b);
    if (!e)
        return stop_buffer(f);
    e->start = start;
    e->end = end;
    e->pid = pid;
    e->tid = tid;
    e->name = name;
    e->json = json;
    e->stream = stream;
    e->flow = flow;
    e->session = f->session;
    e->file = f->file;
    e->offset = ev->offset;
    see_time(f, end);
    f->n_x += ev->ph == 'X';
    f->n_b += ev->ph == 'B';
    if (ev->ph == 'B') {
        fw_thread *t = thread_slot(f, pid, tid);
        if (!t) {
            b->oom = true;
            return stop_buffer(f);
        }
        e->open = 1;
        e->link = t->top;
        t->top = (uint64_t)(e - b->v) + 1;
    }
    return 0;
}

static void warn_count(const nx_cap_warner *warn, const char *path, uint64_t n, const char *what)
{
    if (n == 0 || !warn->fn)
        return;
    char msg[256];
    snprintf(msg, sizeof msg, "%" PRIu64 " %s", n, what);
    warn->fn(warn->ctx, path, NX_CAP_NOWHERE, "Invalid Data", msg);
}

static int read_framework_file(fw_buffer *b, const char *path, uint32_t session, uint32_t file,
                               const nx_cap_warner *warn, nx_system_result *res, char *err, size_t errlen)
{
    chrome_file f = {.buf = b, .path = path, .session = session, .file = file, .warn = warn, .first = b->n,
                     .sb = NX_STRBUF_INIT,
                     .own_run = SIZE_MAX, .err = err, .errlen = errlen};
    nx_chrome_error cerr = {{0}};
    int rc = -1;
    nx_run_phase("chrome");
    const nx_framework_source *src = nx_framework_source_for(path);
    if (!src) {   /* discovery lists only names a source claims */
        snprintf(err, errlen, "%s: no framework-event source reads this file name", path);
        goto out;
    }
    nx_chrome_handlers h = {.event = chrome_event, .toplevel = chrome_toplevel, .ctx = &f, .skipped = chrome_skipped};
    int got = src->read(path, &h, &cerr);
    if (f.spill_failed)
        goto out;
    if (got < 0) {
        snprintf(err, errlen, "%s", cerr.msg);
        goto out;
    }
    if (b->over_limit) {
        snprintf(err, errlen, "%s: SystemProfileEvents: B events waiting for their E exceed the %zu MiB buffer",
                 path, NX_FRAMEWORK_MEMORY_LIMIT >> 20);
        goto out;
    }
    if (b->oom || got != 0) {
        snprintf(err, errlen, "%s: SystemProfileEvents: out of memory buffering framework events", path);
        goto out;
    }
    uint64_t unmatched_b = 0;
    int64_t base = f.has_base ? f.base_ns : 0;
    for (size_t i = f.first; i < b->n; i++) {
        fw_event *e = &b->v[i];
        if (e->open) {
            e->open = 0;
            e->dropped = 1;
            unmatched_b++;
        }
        e->start = nx_event_time_shift(e->start, base);   /* out of range: dropped when written */
        e->end = nx_event_time_shift(e->end, base);
    }
    for (size_t i = f.own_run; b->runs && i < nx_event_runs_count(b->runs); i++)
        nx_event_runs_offset(b->runs, i, base);
    warn_count(warn, path, unmatched_b, "B (begin) events without a matching E event were dropped");
    warn_count(warn, path, f.unmatched_e, "E (end) events without an open B event on their thread were dropped");
    warn_count(warn, path, f.e_before_b, "B/E pairs whose E is earlier than its B were dropped");
    warn_count(warn, path, f.negative_dur, "X events with a negative dur were dropped");
    warn_count(warn, path, f.args_truncated, "events had args larger than 64 KiB (kept as args_truncated)");
    warn_count(warn, path, f.bad_base, "baseTimeNanoseconds values that are not int64 integers were ignored");
    uint64_t warned = f.overflow + f.negative_dur + unmatched_b + f.unmatched_e + 2 * f.e_before_b;
    nx_fw_tally_finish(&f.tally, warn, path, f.n_x, f.n_b - unmatched_b - f.e_before_b, f.names, warned,
                       nx_fw_tally_relative(f.has_base, f.n_x + f.n_b, f.max_ns), res);
    rc = 0;
out:
    free(f.threads);
    nx_strbuf_free(&f.sb);
    return rc;
}

int nx_fw_read_all(const nx_capture *cap, const nx_cap_warner *warn, fw_buffer *b, nx_system_result *res, char *err,
                   size_t errlen)
{
    const char *last_path = NULL;
    uint32_t file = 0;
    for (size_t s = 0; s < cap->n_sessions; s++) {
        for (size_t k = 0; k < cap->sessions[s].n_chrome_traces; k++) {
            last_path = cap->sessions[s].chrome_traces[k];
            if (read_framework_file(b, last_path, (uint32_t)s, file++, warn, res, err, errlen) != 0)
                return -1;
        }
    }
    return nx_fw_finish(b, last_path, err, errlen);
}
