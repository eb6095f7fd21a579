/*
 * framework_events.c — framework traces (every format of the registry,
 * capture/framework_source.h) into the framework-event buffer
 * (framework_buffer.c): every event with a time becomes a buffered event
 * with its name, pid/tid as integers, extra_attributes_json, stream and flow
 * ids (framework_kinds.c) — X events, B/E pairs per thread, async b/e pairs
 * per (pid, cat, id), and every other phase as a point in time; M events give
 * names (framework_names.c); what cannot be used is counted and said in one
 * Warning per kind per file.
 * The rules for the rows they become are in system_events.c's header comment.
 */
#include "process/system/system_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "capture/framework_source.h"
#include "util/run_control.h"
#include "util/strbuf.h"

/* ------------------------------------------------------- reading a file -- */

/* Events a file's reading dropped, each counted in one Warning per kind (warn_count). */
typedef struct fw_dropped {
    uint64_t unmatched_b, unmatched_e, e_before_b;          /* B/E pairs */
    uint64_t unmatched_ab, unmatched_ae, ae_before_ab;      /* async b/e pairs */
    uint64_t negative_dur, overflow;
} fw_dropped;

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
    fw_dropped dropped;
    uint64_t args_truncated, bad_base;
    nx_fw_kept kept;             /* a pair counted when its B (b) is buffered, until dropped */
    int64_t max_ns;              /* the latest time buffered, before the base */
    nx_fw_tally tally;
    nx_strbuf sb;                /* the event's attributes */
    nx_strbuf id, bind, flows, name;   /* its id and bind_id text, flow keys, a counter's row name */
    size_t own_run;              /* its first spilled run (SIZE_MAX: none yet) */
    nx_error *err;               /* a spill's error goes here */
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

/* The home slot of (pid, tid) in a table of `cap` (a power of two) stacks. */
static size_t slot_home(int64_t pid, int64_t tid, size_t cap)
{
    int64_t key[2] = {pid, tid};
    return (size_t)XXH3_64bits(key, sizeof key) & (cap - 1);
}

/* The slot of the stack of (pid, tid, async), or the empty slot where it would go. */
static fw_thread *slot_of(const chrome_file *f, int64_t pid, int64_t tid, bool async)
{
    size_t h = slot_home(pid, tid, f->tcap);
    while (f->threads[h].used &&
           (f->threads[h].pid != pid || f->threads[h].tid != tid || f->threads[h].async != async))
        h = (h + 1) & (f->tcap - 1);
    return &f->threads[h];
}

/* The stack of open events of (pid, tid), or with `async` of (pid, async key
 * tid); NULL when it has none. */
static fw_thread *thread_find(const chrome_file *f, int64_t pid, int64_t tid, bool async)
{
    if (f->tcap == 0)
        return NULL;
    fw_thread *t = slot_of(f, pid, tid, async);
    return t->used ? t : NULL;
}

/* thread_find's stack, made when missing; NULL when out of memory. */
static fw_thread *thread_slot(chrome_file *f, int64_t pid, int64_t tid, bool async)
{
    if (2 * (f->tn + 1) > f->tcap) {
        size_t nc = f->tcap ? f->tcap * 2 : 64;
        fw_thread *t = calloc(nc, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < f->tcap; i++) {
            if (!f->threads[i].used)
                continue;
            size_t h = slot_home(f->threads[i].pid, f->threads[i].tid, nc);
            while (t[h].used)
                h = (h + 1) & (nc - 1);
            t[h] = f->threads[i];
        }
        free(f->threads);
        f->threads = t;
        f->tcap = nc;
    }
    fw_thread *t = slot_of(f, pid, tid, async);
    if (!t->used) {
        *t = (fw_thread){.pid = pid, .tid = tid, .top = 0, .used = true, .async = async};
        f->tn++;
    }
    return t;
}

/* Removes an emptied async stack, so that the table holds only the ids with an
 * open b (a trace may use millions of ids, one after another): linear
 * probing's backward-shift deletion, which leaves every other stack reachable
 * from its home slot. */
static void thread_remove(chrome_file *f, fw_thread *t)
{
    size_t mask = f->tcap - 1, hole = (size_t)(t - f->threads);
    for (size_t j = (hole + 1) & mask; f->threads[j].used; j = (j + 1) & mask) {
        size_t home = slot_home(f->threads[j].pid, f->threads[j].tid, f->tcap);
        /* j may fill the hole unless its home lies cyclically in (hole, j]. */
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            f->threads[hole] = f->threads[j];
            hole = j;
        }
    }
    f->threads[hole] = (fw_thread){0};
    f->tn--;
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

/* An M event: kept as a name of its process or thread, or counted as not stored. */
static int keep_name(chrome_file *f, const nx_chrome_event *ev)
{
    int named = nx_fw_names_add(f->buf->names, f->file, ev, map_ref(&ev->pid), map_ref(&ev->tid));
    if (named < 0) {
        f->buf->oom = true;
        return stop_buffer(f);
    }
    f->kept.names += (uint64_t)named;
    f->tally.unnamed += (uint64_t)!named;
    return 0;
}

/* The buffer spilled when it is over its budget: 0, or stop_buffer's value. */
static int spill_if_full(chrome_file *f)
{
    fw_buffer *b = f->buf;
    if (nx_fw_bytes(b) <= b->budget)
        return 0;
    size_t run;
    if (nx_fw_spill(b, f->first, f->path, f->threads, f->tcap, &run, f->err) != 0) {
        f->spill_failed = true;
        return stop_buffer(f);
    }
    if (run != SIZE_MAX && f->own_run == SIZE_MAX)
        f->own_run = run;
    f->first = 0;
    return 0;
}

/* o's attributes with ev's args (an E's or e's, not {}) added as "end_args" before the '}'. */
static int add_end_args(chrome_file *f, fw_event *o, const nx_chrome_event *ev)
{
    fw_buffer *b = f->buf;
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
    return 0;
}

/* ev (an E or e) closes the latest open event of stack t, as Chrome's viewer
 * pairs them; what cannot be paired is counted in *unmatched or *before. */
static int close_open(chrome_file *f, fw_thread *t, const nx_chrome_event *ev, uint64_t *unmatched,
                      uint64_t *before)
{
    fw_buffer *b = f->buf;
    if (t->top == 0) {
        (*unmatched)++;
        return 0;
    }
    fw_event *o = &b->v[t->top - 1];
    t->top = o->link;
    o->link = 0;
    o->open = 0;
    if (ev->ts_ns < o->start) {
        (*before)++;
        o->dropped = 1;
        return 0;
    }
    o->end = ev->ts_ns;
    see_time(f, o->end);
    if (ev->args.s && !(ev->args.len == 2 && memcmp(ev->args.s, "{}", 2) == 0))
        return add_end_args(f, o, ev);
    return 0;
}

/* The stack key of an async event: its (cat, id), an absent id counting as "". */
static int64_t async_key(chrome_file *f, const nx_chrome_event *ev)
{
    const char *id = nx_fw_ref_text(&ev->id, &f->id);
    return nx_fw_async_key(ev->cat.s ? ev->cat.s : "", id ? id : "");
}

/* An E (per thread) or e (per async id) event. */
static int close_event(chrome_file *f, const nx_chrome_event *ev, int64_t pid, int64_t tid)
{
    fw_dropped *d = &f->dropped;
    if (ev->ph == 'E') {
        fw_thread *t = thread_slot(f, pid, tid, false);
        if (!t) {
            f->buf->oom = true;
            return stop_buffer(f);
        }
        return close_open(f, t, ev, &d->unmatched_e, &d->e_before_b);
    }
    int64_t key = async_key(f, ev);
    if (nx_strbuf_failed(&f->id)) {
        f->buf->oom = true;
        return stop_buffer(f);
    }
    fw_thread *t = thread_find(f, pid, key, true);
    if (!t) {
        d->unmatched_ae++;
        return 0;
    }
    int rc = close_open(f, t, ev, &d->unmatched_ae, &d->ae_before_ab);
    if (t->top == 0)
        thread_remove(f, t);
    return rc;
}

/* The kept count a buffered event of phase ph adds to (a pair's, from its B or b). */
static uint64_t *kept_count(nx_fw_kept *k, char ph)
{
    switch (ph) {
    case 'X': return &k->x;
    case 'B': return &k->pairs;
    case 'i': case 'I': return &k->instants;
    case 'C': return &k->counters;
    case 'b': return &k->async_pairs;
    case 'n': return &k->async_n;
    case 's': case 't': case 'f': return &k->flows;
    default: return &k->other;
    }
}

/* The row's name, put in the buffer: the event's ("" when absent); a counter's
 * with " <id>" after it when it has an id, as Chrome names its series. */
static uint64_t put_row_name(chrome_file *f, const nx_chrome_event *ev, const char *id)
{
    const char *name = ev->name.s ? ev->name.s : "";
    if (ev->ph != 'C' || !id)
        return nx_fw_put(f->buf, name, strlen(name));
    f->name.len = 0;
    nx_strbuf_puts(&f->name, name);
    nx_strbuf_putc(&f->name, ' ');
    nx_strbuf_puts(&f->name, id);
    if (nx_strbuf_failed(&f->name)) {
        f->buf->oom = true;
        return UINT64_MAX;
    }
    return nx_fw_put(f->buf, f->name.data, f->name.len);
}

/* An async b or n event's track: *tid its thread_id, its thread name returned
 * (valid until the buffer grows; NULL when out of memory). An n goes on the
 * track of its id's open b, else on its own name's; *stack: the (cat, id)
 * stack, made for a b to join, NULL for an n whose id has no open b. */
static const char *async_track(chrome_file *f, const nx_chrome_event *ev, int64_t pid, int64_t *tid,
                               fw_thread **stack)
{
    const char *name = ev->name.s ? ev->name.s : "";
    int64_t key = async_key(f, ev);
    if (nx_strbuf_failed(&f->id))
        return NULL;
    *stack = ev->ph == 'b' ? thread_slot(f, pid, key, true) : thread_find(f, pid, key, true);
    if (!*stack && ev->ph == 'b')
        return NULL;
    *tid = nx_fw_async_track(ev->cat.s ? ev->cat.s : "", name);
    if (ev->ph == 'n' && *stack && (*stack)->top) {
        const fw_event *o = &f->buf->v[(*stack)->top - 1];
        *tid = o->tid;
        return nx_fw_str(f->buf, o->name);
    }
    return name;
}

/* The event's strings put in the buffer, their offsets into t's name, json,
 * stream and flow: its row name, attributes (track: an async row's thread
 * name), a slice's args.stream and its flow keys. 0, or -1 (b->oom or
 * b->over_limit says why). */
static int put_text(chrome_file *f, const nx_chrome_event *ev, const char *track, fw_event *t)
{
    fw_buffer *b = f->buf;
    const char *id = nx_fw_ref_text(&ev->id, &f->id);
    nx_fw_attrs(&f->sb, ev, id, track);
    nx_fw_slice_args args;
    nx_fw_slice_args_find(ev, &args);
    nx_fw_flows(&f->flows, ev, &args, id, &f->bind);
    f->args_truncated += ev->args_too_large;
    if (nx_strbuf_failed(&f->sb) || nx_strbuf_failed(&f->id) || nx_strbuf_failed(&f->flows) ||
        nx_strbuf_failed(&f->bind)) {
        b->oom = true;
        return -1;
    }
    t->name = put_row_name(f, ev, id);
    t->json = nx_fw_put(b, f->sb.data, f->sb.len);
    t->flow = nx_fw_put(b, f->flows.data, f->flows.len);
    t->stream = 0;
    if (args.stream)
        t->stream = nx_fw_put(b, args.stream, args.stream_len);
    return t->name == UINT64_MAX || t->json == UINT64_MAX || t->stream == UINT64_MAX || t->flow == UINT64_MAX
               ? -1
               : 0;
}

/* Any event but M, E and e: a buffered event (rules in system_events.c). */
static int add_event(chrome_file *f, const nx_chrome_event *ev, int64_t pid, int64_t tid)
{
    fw_buffer *b = f->buf;
    int64_t start = ev->ts_ns, end = start;
    if (ev->ph == 'X') {
        int64_t dur = ev->has_dur ? ev->dur_ns : 0;
        if (dur < 0) {
            f->dropped.negative_dur++;
            return 0;
        }
        end = nx_event_time_shift(start, dur);   /* past int64: dropped when written (fw_next_in_range) */
    }
    fw_thread *stack = NULL;
    const char *track = NULL;
    if (ev->ph == 'b' || ev->ph == 'n') {
        track = async_track(f, ev, pid, &tid, &stack);
        if (!track) {
            b->oom = true;
            return stop_buffer(f);
        }
    }
    fw_event text;
    if (put_text(f, ev, track, &text) != 0)
        return stop_buffer(f);
    fw_event *e = nx_fw_add(b);
    if (!e)
        return stop_buffer(f);
    uint64_t seq = e->seq;
    *e = (fw_event){.start = start, .end = end, .pid = pid, .tid = tid, .seq = seq, .offset = ev->offset,
                    .name = text.name, .json = text.json, .stream = text.stream, .flow = text.flow,
                    .session = f->session, .file = f->file, .ph = ev->ph};
    see_time(f, end);
    (*kept_count(&f->kept, ev->ph))++;
    if (ev->ph == 'B' && !(stack = thread_slot(f, pid, tid, false))) {
        b->oom = true;
        return stop_buffer(f);
    }
    if (ev->ph == 'B' || ev->ph == 'b') {
        e->open = 1;
        e->link = stack->top;
        stack->top = (uint64_t)(e - b->v) + 1;
    }
    return 0;
}

static int chrome_event(void *ctx, const nx_chrome_event *ev)
{
    chrome_file *f = ctx;
    if (ev->ph == 'M')
        return keep_name(f, ev);
    if (!ev->has_ts) {   /* the Chrome reader skips these itself; another source might not */
        nx_fw_tally_skipped(&f->tally, f->warn, f->path, ev->index, ev->offset, NULL, "the event has no time");
        return 0;
    }
    if (ev->time_overflow) {
        f->dropped.overflow++;
        nx_cap_warn(f->warn, f->path, ev->offset, "Invalid Data",
                    "event #%" PRIu64 " ('%c'): its \"ts\" or \"dur\" is beyond the int64 ns range; dropped",
                    ev->index, ev->ph);
        return 0;
    }
    int stop = spill_if_full(f);
    if (stop)
        return stop;
    int64_t pid = map_ref(&ev->pid), tid = map_ref(&ev->tid);
    if (ev->ph == 'E' || ev->ph == 'e')
        return close_event(f, ev, pid, tid);
    return add_event(f, ev, pid, tid);
}

static void warn_count(const nx_cap_warner *warn, const char *path, uint64_t n, const char *what)
{
    if (n == 0 || !warn->fn)
        return;
    char msg[256];
    snprintf(msg, sizeof msg, "%" PRIu64 " %s", n, what);
    warn->fn(warn->ctx, path, NX_CAP_NOWHERE, "Invalid Data", msg);
}

/* The end of a file: the events left open dropped, the file's base time
 * added to its events, its Warnings and its tally. */
static void finish_file(chrome_file *f, nx_system_result *res)
{
    fw_buffer *b = f->buf;
    fw_dropped *d = &f->dropped;
    int64_t base = f->has_base ? f->base_ns : 0;
    for (size_t i = f->first; i < b->n; i++) {
        fw_event *e = &b->v[i];
        if (e->open) {
            e->open = 0;
            e->dropped = 1;
            (*(e->ph == 'b' ? &d->unmatched_ab : &d->unmatched_b))++;
        }
        e->start = nx_event_time_shift(e->start, base);   /* out of range: dropped when written */
        e->end = nx_event_time_shift(e->end, base);
    }
    for (size_t i = f->own_run; b->runs && i < nx_event_runs_count(b->runs); i++)
        nx_event_runs_offset(b->runs, i, base);
    const char *path = f->path;
    const nx_cap_warner *warn = f->warn;
    warn_count(warn, path, d->unmatched_b, "B (begin) events without a matching E event were dropped");
    warn_count(warn, path, d->unmatched_e, "E (end) events without an open B event on their thread were dropped");
    warn_count(warn, path, d->e_before_b, "B/E pairs whose E is earlier than its B were dropped");
    warn_count(warn, path, d->unmatched_ab,
               "b (async begin) events without a matching e event of their cat and id were dropped");
    warn_count(warn, path, d->unmatched_ae,
               "e (async end) events without an open b event of their cat and id were dropped");
    warn_count(warn, path, d->ae_before_ab, "async b/e pairs whose e is earlier than its b were dropped");
    warn_count(warn, path, d->negative_dur, "X events with a negative dur were dropped");
    warn_count(warn, path, f->args_truncated, "events had args larger than 64 KiB (kept as args_truncated)");
    warn_count(warn, path, f->bad_base, "baseTimeNanoseconds values that are not int64 integers were ignored");
    nx_fw_kept *k = &f->kept;
    k->pairs -= d->unmatched_b + d->e_before_b;
    k->async_pairs -= d->unmatched_ab + d->ae_before_ab;
    uint64_t warned = d->overflow + d->negative_dur + d->unmatched_b + d->unmatched_e + 2 * d->e_before_b +
                      d->unmatched_ab + d->unmatched_ae + 2 * d->ae_before_ab;
    uint64_t rows = k->x + k->pairs + k->instants + k->counters + k->async_pairs + k->async_n + k->flows + k->other;
    nx_fw_tally_finish(&f->tally, warn, path, k, warned, nx_fw_tally_relative(f->has_base, rows, f->max_ns), res);
}

static int read_framework_file(fw_buffer *b, const char *path, uint32_t session, uint32_t file,
                               const nx_cap_warner *warn, nx_system_result *res, nx_error *err)
{
    chrome_file f = {.buf = b, .path = path, .session = session, .file = file, .warn = warn, .first = b->n,
                     .sb = NX_STRBUF_INIT, .id = NX_STRBUF_INIT, .bind = NX_STRBUF_INIT,
                     .flows = NX_STRBUF_INIT, .name = NX_STRBUF_INIT,
                     .own_run = SIZE_MAX, .err = err};
    nx_error cerr = {0};
    int rc = -1;
    nx_run_phase("chrome");
    const nx_framework_source *src = nx_framework_source_for(path);
    if (!src) {   /* discovery lists only names a source claims */
        nx_error_set(err, "%s: no framework-event source reads this file name", path);
        goto out;
    }
    nx_chrome_handlers h = {.event = chrome_event, .toplevel = chrome_toplevel, .ctx = &f, .skipped = chrome_skipped};
    int got = src->read(path, &h, &cerr);
    if (f.spill_failed)
        goto out;
    if (got < 0) {
        nx_error_set(err, "%s", cerr.msg);
        goto out;
    }
    if (b->over_limit) {
        nx_error_set(err,
                 "%s: SystemProfileEvents: B and async b events waiting for their E (e) exceed the %zu MiB buffer",
                 path, NX_FRAMEWORK_MEMORY_LIMIT >> 20);
        goto out;
    }
    if (b->oom || got != 0) {
        nx_error_set(err, "%s: SystemProfileEvents: out of memory buffering framework events", path);
        goto out;
    }
    finish_file(&f, res);
    rc = 0;
out:
    free(f.threads);
    nx_strbuf_free(&f.sb);
    nx_strbuf_free(&f.id);
    nx_strbuf_free(&f.bind);
    nx_strbuf_free(&f.flows);
    nx_strbuf_free(&f.name);
    return rc;
}

int nx_fw_read_all(const nx_capture *cap, const nx_cap_warner *warn, fw_buffer *b, nx_system_result *res, nx_error *err)
{
    const char *last_path = NULL;
    uint32_t file = 0;
    for (size_t s = 0; s < cap->n_sessions; s++) {
        for (size_t k = 0; k < cap->sessions[s].n_chrome_traces; k++) {
            last_path = cap->sessions[s].chrome_traces[k];
            if (read_framework_file(b, last_path, (uint32_t)s, file++, warn, res, err) != 0)
                return -1;
        }
    }
    return nx_fw_finish(b, last_path, err);
}
