/*
 * system_tables.c — SystemProfileEvents, CpuUsage, HostMemUsage,
 * SystemProfileHbmUsage and SystemProfileMetadata from a capture's system
 * profile, and the Metadata row of a profile without device traces.
 * (Interface: system_tables.h.)
 *
 * Sources, per session (capture.h): runtime_events.tsv, cpu_usage.tsv,
 * host_mem.tsv, device_mem.tsv (system_capture.h) and the Chrome trace files
 * (chrome_trace.h).
 * instance_id of every row is the session directory's `<instance-id>`; a
 * framework-only capture (Chrome traces directly in the capture root) has none
 * and uses "unknown".
 *
 * SystemProfileEvents — one row per
 *   - runtime event (a line of runtime_events.tsv): name, start_ts/end_ts as
 *     written, duration_ns = end - start, trace_event_source = its source
 *     (neuron_rt / neuron_hw), process_id/thread_id = pid/tid, nc_idx and
 *     worker_gid (null when empty), flow_id = the flow ids as decimal strings
 *     (null when none), extra_attributes_json = the attributes as a JSON object
 *     of strings ("{}" when none), pcore_idx and framework_stream_id null;
 *   - Chrome complete event (ph "X") and matched B/E pair, with
 *     trace_event_source "framework". Other phases (i/I instants, C counters,
 *     M metadata, flow and async events) are not rows.
 *     start_ts = ts, end_ts = ts + dur (X; a missing dur is 0) or the E's ts,
 *     in Unix ns: the reader converts µs to ns exactly, and when the file's
 *     top level has "baseTimeNanoseconds" that value is added to every time of
 *     the file (docs/capture-format.md); otherwise ts is taken as Unix µs.
 *     name = the event's name ("" when absent; for a pair, the B's name).
 *     process_id/thread_id: a numeric pid/tid as is; a string holding a decimal
 *     int64 ("1234", "-5") as that number; any other string s as
 *     -1 - (XXH3_64bits(s) >> 1), a negative number no OS id can collide with,
 *     the same for the same string; absent: 0. The original string is kept in
 *     extra_attributes_json ("pid"/"tid").
 *     extra_attributes_json = a JSON object with, in this order, "cat" (string,
 *     when the event has one), "pid"/"tid" (when they were strings), "args"
 *     (the event's args object, compact, when present; for a pair the B's),
 *     "end_args" (a pair's E args when present and not {}), "args_truncated":
 *     true (when args exceeded the reader's 64 KiB cap; one Warning per file).
 *     framework_stream_id = args.stream (its number text, or a string's
 *     content) when args has a top-level "stream" member; flow_id = [args.flow_id]
 *     likewise (the synth writes it to link framework steps to runtime flows),
 *     else [args.correlation] (Kineto gives a cuda_runtime launch and the GPU
 *     kernel or memcpy it started the same "correlation" number, the pair its
 *     ac2g flow arrows link), else null. nc_idx, pcore_idx, worker_gid null.
 *   B/E matching, per Chrome file, per (process_id, thread_id) as a stack, as
 *   Chrome's viewer does: an E closes the latest open B of its thread. An E
 *   with no open B, a B still open at the end of its file, and an E earlier
 *   than its B are dropped; each kind gives one Warning per file with the count
 *   (category "Invalid Data"). An X with a negative dur is dropped likewise.
 *   id = the row's position in the table, from 0. When a track nests deeper
 *   than the timeline samples apart (profile/nesting.h NX_NESTING_LEVELS), one
 *   Warning (category "Deep Nesting") says how many tracks and how deep.
 *   Order: rows sorted by start_ts; ties keep runtime events before framework
 *   events, runtime events in session order then line order, framework events
 *   in file order (session order, then file name, then position in the file).
 *   The runtime TSVs are sorted already (the reader enforces it) and are merged
 *   streaming. Chrome traces are not in time order, so their events are
 *   buffered (104 bytes plus name and attribute text each) and sorted; above
 *   NX_FRAMEWORK_SORT_BUDGET bytes the buffer is spilled as a sorted run
 *   (event_runs.h, fw_spill below) and the runs are merged at the end, so
 *   memory is bounded whatever the traces' size. B events still open stay in
 *   the buffer across a spill (capped at NX_FRAMEWORK_MEMORY_LIMIT bytes; above
 *   it processing fails naming the file). A file's baseTimeNanoseconds, which
 *   Kineto writes after traceEvents, is added to its events in the buffer at
 *   the end of the file and to its spilled runs as they are merged.
 *
 * CpuUsage — one row per cpu_usage.tsv line: timestamp, util_percent,
 *   cpu_id = the CPU number in decimal or "average", instance_id.
 * HostMemUsage — one row per host_mem.tsv line: timestamp, used_bytes,
 *   used_percent = 100 × used_bytes / total_bytes, instance_id.
 * SystemProfileHbmUsage — one row per device_mem.tsv line: timestamp =
 *   timestamp_ns, device_idx, hbm_idx, every <category>_bytes column as
 *   written, total_bytes = the sum of the 22 category columns (the file has no
 *   total; a sum overflowing int64 is a fatal error naming the file and line,
 *   raised by the reader), instance_id as for the other tables. Written only
 *   when some session has a device_mem.tsv with at least one line.
 *   All three are merged over sessions by timestamp (ties: session order, then
 *   line order), streaming.
 * SystemProfileMetadata — one row when any of the four tables above has a
 *   row: first/last = the minimum/maximum over every SystemProfileEvents
 *   start_ts/end_ts and every sample (CpuUsage, HostMemUsage,
 *   SystemProfileHbmUsage) timestamp; first_ts/last_ts as Go's
 *   time.String() writes UTC ("2025-12-18 15:35:56.592459482 +0000 UTC",
 *   trailing zeros of the fraction dropped, no fraction when it is 0);
 *   first_ts_ns/last_ts_ns as decimal strings; ntff_version = the largest
 *   major version of the device traces processed, 0 when none;
 *   hbm_capacity_bytes = the largest HARDWARE hbm_capacity_bytes of the
 *   program files processed, 0 when none (not known without a program).
 *
 * Fallback Metadata (nx_system_write_fallback_metadata), for a profile with no
 * device trace: profile_schema_version, explorer_version, profile_name
 * (display name); first_hw_timestamp/last_hw_timestamp = the system data's
 * first/last ns and first_ts/last_ts their "YYYY-MM-DD HH:MM:SS+00:00" text
 * (0 / 1970-01-01 when there is no system row); ntff_version 0,
 * num_physical_cores 0, vnc_enabled false, and every clock, bandwidth, array
 * size, channel count and ticks_per_nanosec 0 (0 = not known: no device trace);
 * optional fields null.
 */
#include "process/system_tables.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "capture/chrome_trace.h"
#include "capture/system_capture.h"
#include "nxprof_version.h"
#include "process/event_runs.h"
#include "process/row.h"
#include "process/time_text.h"
#include "profile/nesting.h"
#include "profile/timeline_index.h"
#include "schema/schema.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/run_control.h"

/* Framework events buffered before they are sorted and spilled as a run
 * (event_runs.h); NXPROF_FRAMEWORK_SORT_BYTES in the environment sets another
 * budget (tests use small ones). */
#define NX_FRAMEWORK_SORT_BUDGET ((size_t)256 << 20)
/* Cap on the buffer whatever the budget: only B events still waiting for
 * their E cannot be spilled. */
#define NX_FRAMEWORK_MEMORY_LIMIT ((size_t)2 << 30)

static const char *instance_of(const nx_cap_session *s)
{
    return s->instance_id && s->instance_id[0] ? s->instance_id : "unknown";
}

bool nx_system_capture_present(const nx_capture *cap)
{
    for (size_t i = 0; i < cap->n_sessions; i++) {
        const nx_cap_session *s = &cap->sessions[i];
        if (s->runtime_events_path || s->cpu_usage_path || s->host_mem_path || s->device_mem_path ||
            s->n_chrome_traces)
            return true;
    }
    return false;
}

static void span_add(nx_system_result *res, int64_t first, int64_t last)
{
    if (!res->any || first < res->first_ns)
        res->first_ns = first;
    if (!res->any || last > res->last_ns)
        res->last_ns = last;
    res->any = true;
}

/* ------------------------------------------------- framework event buffer -- */

typedef struct fw_event {
    int64_t start, end;          /* ns; relative to the file's base until its file is read */
    int64_t pid, tid;
    uint64_t seq;                /* arrival order over all Chrome files: the tie-break */
    uint64_t offset;             /* the event's byte offset in its file's JSON text (a B's for a pair) */
    uint64_t name, json, stream, flow;   /* arena offsets; 0 is "" */
    uint64_t link;               /* open B: index+1 of the thread's previous open B; 0: none */
    uint32_t session;
    uint32_t file;               /* its Chrome file, in the order write_events reads them */
    uint8_t open;                /* a B waiting for its E */
    uint8_t dropped;
} fw_event;

typedef struct fw_thread {
    int64_t pid, tid;
    uint64_t top;                /* index+1 of the thread's latest open B; 0: none */
    bool used;
} fw_thread;

typedef struct fw_buffer {
    fw_event *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    bool over_limit, oom;
    uint64_t next_seq;
    size_t budget;               /* bytes of v and arena before a spill */
    const char *run_dir;         /* where runs are written (the profile's temporary directory) */
    nx_event_runs *runs;         /* NULL until the first spill */
} fw_buffer;

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

static bool fw_reserve_bytes(fw_buffer *b, size_t ncap, size_t nacap)
{
    if (ncap * sizeof(fw_event) + nacap > NX_FRAMEWORK_MEMORY_LIMIT) {
        b->over_limit = true;
        return false;
    }
    return true;
}

static uint64_t fw_put(fw_buffer *b, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    if (b->alen + len + 1 > b->acap) {
        size_t nc = b->acap ? b->acap : 1 << 16;
        while (nc < b->alen + len + 1)
            nc *= 2;
        if (!fw_reserve_bytes(b, b->cap, nc))
            return UINT64_MAX;
        char *a = realloc(b->arena, nc);
        if (!a) {
            b->oom = true;
            return UINT64_MAX;
        }
        b->arena = a;
        b->acap = nc;
    }
    uint64_t off = b->alen;
    memcpy(b->arena + off, s, len);
    b->arena[off + len] = '\0';
    b->alen += len + 1;
    return off;
}

static fw_event *fw_add(fw_buffer *b)
{
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        if (!fw_reserve_bytes(b, nc, b->acap))
            return NULL;
        fw_event *v = realloc(b->v, nc * sizeof *v);
        if (!v) {
            b->oom = true;
            return NULL;
        }
        b->v = v;
        b->cap = nc;
    }
    fw_event *e = &b->v[b->n++];
    memset(e, 0, sizeof *e);
    e->seq = b->next_seq++;
    return e;
}

static const char *fw_str(const fw_buffer *b, uint64_t off)
{
    return off ? b->arena + off : "";
}

static int fw_cmp(const void *pa, const void *pb)
{
    const fw_event *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t fw_bytes(const fw_buffer *b) { return b->n * sizeof(fw_event) + b->alen; }

/* Sorts v[0..n) and writes it as one run read from `path`; *run gets its index. */
static nx_event_record fw_record(const fw_buffer *b, const fw_event *e)
{
    return (nx_event_record){.start = e->start, .end = e->end, .pid = e->pid, .tid = e->tid, .seq = e->seq,
                             .offset = e->offset, .session = e->session, .file = e->file,
                             .name = fw_str(b, e->name), .json = fw_str(b, e->json),
                             .stream = e->stream ? fw_str(b, e->stream) : NULL,
                             .flow = e->flow ? fw_str(b, e->flow) : NULL};
}

static int fw_write_run(fw_buffer *b, fw_event *v, size_t n, const char *path, size_t *run, char *err,
                        size_t errlen)
{
    qsort(v, n, sizeof *v, fw_cmp);
    *run = nx_event_runs_count(b->runs);
    if (nx_event_runs_begin(b->runs, path, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        nx_event_record r = fw_record(b, &v[i]);
        if (nx_event_runs_add(b->runs, &r, err, errlen) != 0)
            return -1;
    }
    return nx_event_runs_end(b->runs, err, errlen);
}

/* Copies string `off` of the old arena into b's (new) one. */
static uint64_t fw_keep_str(fw_buffer *b, const char *old_arena, uint64_t off)
{
    return off ? fw_put(b, old_arena + off, strlen(old_arena + off)) : 0;
}

/*
 * The spill (event_runs.h): the buffered events that are final go out as sorted
 * runs -- those before index `first` (earlier Chrome files, times absolute) as
 * one run, those from `first` on (the file being read, times still relative to
 * its base) as another, whose index goes to *own_run (SIZE_MAX when it has
 * none) -- and only the open B events stay, moved to the front with their
 * strings, their links and the thread stacks' tops (threads[0..tcap)) renumbered.
 */
static int fw_spill(fw_buffer *b, size_t first, const char *path, fw_thread *threads, size_t tcap, size_t *own_run,
                    char *err, size_t errlen)
{
    *own_run = SIZE_MAX;
    if (!b->runs && !(b->runs = nx_event_runs_new(b->run_dir, err, errlen)))
        return -1;
    size_t n_open = 0;
    for (size_t i = first; i < b->n; i++)
        n_open += b->v[i].open;
    fw_event *opens = n_open ? malloc(n_open * sizeof *opens) : NULL;
    uint64_t *old_index = n_open ? malloc(n_open * sizeof *old_index) : NULL;
    if (n_open && (!opens || !old_index)) {
        free(opens);
        free(old_index);
        snprintf(err, errlen, "%s: SystemProfileEvents: out of memory", path);
        return -1;
    }
    size_t w = 0, k = 0;
    for (size_t i = 0; i < first; i++)
        if (!b->v[i].dropped)
            b->v[w++] = b->v[i];
    size_t earlier = w;
    for (size_t i = first; i < b->n; i++) {
        if (b->v[i].open) {
            old_index[k] = i;
            opens[k++] = b->v[i];
        } else if (!b->v[i].dropped) {
            b->v[w++] = b->v[i];
        }
    }
    size_t run;
    int rc = -1;
    if (earlier && fw_write_run(b, b->v, earlier, path, &run, err, errlen) != 0)
        goto out;
    if (w > earlier) {
        if (fw_write_run(b, b->v + earlier, w - earlier, path, &run, err, errlen) != 0)
            goto out;
        *own_run = run;
    }
    /* Keep the open events, in their order, with their strings in a new arena. */
    char *old_arena = b->arena;
    b->arena = NULL;
    b->alen = b->acap = 0;
    b->n = 0;
    char zero = '\0';
    if (fw_put(b, &zero, 1) == UINT64_MAX) {
        free(old_arena);
        snprintf(err, errlen, "%s: SystemProfileEvents: out of memory", path);
        goto out;
    }
    for (size_t j = 0; j < n_open; j++) {
        fw_event *e = &b->v[b->n++];
        *e = opens[j];
        e->name = fw_keep_str(b, old_arena, e->name);
        e->json = fw_keep_str(b, old_arena, e->json);
        e->stream = fw_keep_str(b, old_arena, e->stream);
        e->flow = fw_keep_str(b, old_arena, e->flow);
        if (e->name == UINT64_MAX || e->json == UINT64_MAX || e->stream == UINT64_MAX || e->flow == UINT64_MAX) {
            free(old_arena);
            snprintf(err, errlen, "%s: SystemProfileEvents: out of memory", path);
            goto out;
        }
    }
    free(old_arena);
    /* Links and tops are index+1 of an open event: renumber them to the new places. */
    for (size_t j = 0; j < n_open; j++) {
        uint64_t *l = &b->v[j].link;
        if (*l) {
            uint64_t *hit = bsearch(&(uint64_t){*l - 1}, old_index, n_open, sizeof *old_index, cmp_u64);
            *l = hit ? (uint64_t)(hit - old_index) + 1 : 0;
        }
    }
    for (size_t t = 0; t < tcap; t++) {
        if (!threads[t].used || !threads[t].top)
            continue;
        uint64_t *hit = bsearch(&(uint64_t){threads[t].top - 1}, old_index, n_open, sizeof *old_index, cmp_u64);
        threads[t].top = hit ? (uint64_t)(hit - old_index) + 1 : 0;
    }
    rc = 0;
out:
    free(opens);
    free(old_index);
    return rc;
}

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

/* ---------------------------------------------------------- Chrome reading -- */

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

static int chrome_event(void *ctx, const nx_chrome_event *ev)
{
    chrome_file *f = ctx;
    fw_buffer *b = f->buf;
    if (ev->ph != 'X' && ev->ph != 'B' && ev->ph != 'E')
        return 0;
    if (!ev->has_ts)
        return 0;
    if (ev->time_overflow) {
        nx_cap_warn(f->warn, f->path, ev->offset, "Invalid Data",
                    "event #%" PRIu64 " ('%c'): its \"ts\" or \"dur\" is beyond the int64 ns range; dropped",
                    ev->index, ev->ph);
        return 0;
    }
    if (fw_bytes(b) > b->budget) {
        size_t run;
        if (fw_spill(b, f->first, f->path, f->threads, f->tcap, &run, f->err, f->errlen) != 0) {
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
        if (ev->args.s && !(ev->args.len == 2 && memcmp(ev->args.s, "{}", 2) == 0)) {
            /* The pair's attributes: the B's object with "end_args" added before its '}'. */
            const char *old = fw_str(b, o->json);
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
            uint64_t off = fw_put(b, sb->data, sb->len);
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
    uint64_t name = fw_put(b, ev->name.s ? ev->name.s : "", ev->name.s ? strlen(ev->name.s) : 0);
    uint64_t json = fw_put(b, f->sb.data, f->sb.len);
    uint64_t stream = 0, flow = 0;
    const char *v;
    size_t vl;
    if (ev->args.s && args_member(ev->args.s, ev->args.len, "stream", &v, &vl))
        stream = fw_put(b, v, vl);
    if (ev->args.s && (args_member(ev->args.s, ev->args.len, "flow_id", &v, &vl) ||
                       args_member(ev->args.s, ev->args.len, "correlation", &v, &vl)))
        flow = fw_put(b, v, vl);
    if (name == UINT64_MAX || json == UINT64_MAX || stream == UINT64_MAX || flow == UINT64_MAX)
        return stop_buffer(f);
    fw_event *e = fw_add(b);
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

static int read_chrome_file(fw_buffer *b, const char *path, uint32_t session, uint32_t file,
                            const nx_cap_warner *warn, char *err, size_t errlen)
{
    chrome_file f = {.buf = b, .path = path, .session = session, .file = file, .warn = warn, .first = b->n,
                     .sb = NX_STRBUF_INIT,
                     .own_run = SIZE_MAX, .err = err, .errlen = errlen};
    nx_chrome_error cerr = {{0}};
    int rc = -1;
    nx_run_phase("chrome");
    nx_chrome_reader *r = nx_chrome_open(path, NULL, &cerr);
    if (!r) {
        snprintf(err, errlen, "%s", cerr.msg);
        goto out;
    }
    nx_chrome_handlers h = {.event = chrome_event, .toplevel = chrome_toplevel, .ctx = &f};
    int got = nx_chrome_read(r, &h, &cerr);
    nx_chrome_close(r);
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
    rc = 0;
out:
    free(f.threads);
    nx_strbuf_free(&f.sb);
    return rc;
}

/* --------------------------------------------------------- SystemProfileEvents -- */

typedef struct rt_source {
    nx_sys_reader *r;
    nx_sys_record rec;
    bool has;
    size_t session;
    const char *path;
} rt_source;

/* Opens the `kind` file of every session that has one, each positioned on its
 * first record, into src[0..*n). On failure the ones opened are in src[0..*n). */
static int open_sources(const nx_capture *cap, nx_sys_kind kind, rt_source *src, size_t *n, char *err,
                        size_t errlen)
{
    nx_cap_error cerr = {{0}};
    for (size_t s = 0; s < cap->n_sessions; s++) {
        const nx_cap_session *ses = &cap->sessions[s];
        const char *path = kind == NX_SYS_RUNTIME_EVENTS ? ses->runtime_events_path
                           : kind == NX_SYS_CPU_USAGE    ? ses->cpu_usage_path
                           : kind == NX_SYS_HOST_MEM     ? ses->host_mem_path
                                                         : ses->device_mem_path;
        if (!path)
            continue;
        rt_source *x = &src[*n];
        x->session = s;
        x->path = path;
        if (nx_sys_reader_open(path, kind, &x->r, &cerr) != 0) {
            snprintf(err, errlen, "%s", cerr.msg);
            return -1;
        }
        (*n)++;
        int got = nx_sys_reader_next(x->r, &x->rec, &cerr);
        if (got < 0) {
            snprintf(err, errlen, "%s", cerr.msg);
            return -1;
        }
        x->has = got == 1;
    }
    return 0;
}

typedef struct ev_cols {
    size_t id, name, start, end, dur, source, instance, pid, tid, nc, worker, flow, stream, extra;
} ev_cols;

/* flow_ids "12,13" as a list of strings. */
static void put_flow_ids(nx_row *r, size_t c, const char *flows, nx_strbuf *tmp, const char ***ptrs, size_t *pcap)
{
    if (!flows || !flows[0])
        return;
    tmp->len = 0;
    nx_strbuf_append(tmp, flows, strlen(flows) + 1);
    if (nx_strbuf_failed(tmp))
        return;
    size_t n = 1;
    for (const char *p = flows; *p; p++)
        n += *p == ',';
    if (n > *pcap) {
        const char **np = realloc(*ptrs, n * sizeof *np);
        if (!np)
            return;
        *ptrs = np;
        *pcap = n;
    }
    size_t k = 0;
    (*ptrs)[k++] = tmp->data;
    for (char *p = tmp->data; *p; p++) {
        if (*p == ',') {
            *p = '\0';
            (*ptrs)[k++] = p + 1;
        }
    }
    nx_row_list_str(r, c, *ptrs, k);
}

/* The framework events in (start, seq) order: from the merge of the runs when
 * the buffer was spilled, else from the sorted buffer (*fi: the next index).
 * 1 and *out (valid until the next call), 0 at the end, -1 with err. */
static int fw_next(fw_buffer *b, size_t *fi, nx_event_record *out, char *err, size_t errlen)
{
    if (b->runs)
        return nx_event_runs_next(b->runs, out, err, errlen);
    while (*fi < b->n && b->v[*fi].dropped)
        (*fi)++;
    if (*fi == b->n)
        return 0;
    *out = fw_record(b, &b->v[(*fi)++]);
    return 1;
}

/* Chrome file number `file` of the capture, in the order write_events reads them. */
static const char *chrome_path(const nx_capture *cap, uint32_t file)
{
    for (size_t s = 0; s < cap->n_sessions; s++) {
        if (file < cap->sessions[s].n_chrome_traces)
            return cap->sessions[s].chrome_traces[file];
        file -= (uint32_t)cap->sessions[s].n_chrome_traces;
    }
    return "a Chrome trace";   /* not reached: every file number comes from that order */
}

/* fw_next, dropping with a Warning each event whose start or end (after its
 * file's baseTimeNanoseconds) is not a Unix ns time a row may hold:
 * 0..NX_UNIX_NS_MAX, the bound of device records, so that no duration or
 * span computed from the rows can wrap. */
static int fw_next_in_range(fw_buffer *b, size_t *fi, nx_event_record *out, const nx_capture *cap,
                            const nx_cap_warner *warn, char *err, size_t errlen)
{
    for (;;) {
        int got = fw_next(b, fi, out, err, errlen);
        if (got != 1 || (out->start >= 0 && out->end <= NX_UNIX_NS_MAX))
            return got;
        nx_cap_warn(warn, chrome_path(cap, out->file), out->offset, "Invalid Data",
                    "the event \"%s\" runs from %" PRId64 " to %" PRId64 " ns (Unix ns, after any "
                    "baseTimeNanoseconds; an int64 limit stands for a time beyond it), outside 0..%" PRId64
                    "; dropped", out->name, out->start, out->end, NX_UNIX_NS_MAX);
    }
}

/* NX_FRAMEWORK_SORT_BUDGET, or NXPROF_FRAMEWORK_SORT_BYTES when it holds a positive integer. */
static size_t sort_budget(void)
{
    const char *v = getenv("NXPROF_FRAMEWORK_SORT_BYTES");
    char *e;
    unsigned long long n = v ? strtoull(v, &e, 10) : 0;
    return v && *e == '\0' && n > 0 && n < NX_FRAMEWORK_MEMORY_LIMIT ? (size_t)n : NX_FRAMEWORK_SORT_BUDGET;
}

/* One Warning when some track's call stack nests past the levels the timeline samples
 * apart (profile/nesting.h NX_NESTING_LEVELS), so that a view showing fewer of the
 * deepest events when zoomed out is explained. Read from the index just written;
 * without one (rows out of start order) there are no levels and nothing to say. */
static void warn_folded_levels(const char *dir, const nx_cap_warner *warn)
{
    nx_tlx *x;
    if (!warn->fn || nx_tlx_open(dir, "SystemProfileEvents", &x, NULL, 0) != 0)
        return;
    uint64_t tracks = 0;
    uint32_t deepest = 0;
    for (size_t t = 0; t < nx_tlx_track_count(x); t++) {
        uint32_t d;
        if (nx_tlx_track_max_depth(x, t, &d) && d > NX_NESTING_LEVELS - 1) {
            tracks++;
            deepest = d > deepest ? d : deepest;
        }
    }
    nx_tlx_close(x);
    if (tracks == 0)
        return;
    char msg[320];
    snprintf(msg, sizeof msg,
             "%" PRIu64 " track(s) hold events deeper than depth %u (the deepest at depth %u): the timeline samples "
             "their events from depth %u down as one level, one per pixel, so a zoomed-out view draws only some of "
             "them (depth and self time stay exact)",
             tracks, NX_NESTING_LEVELS - 1, deepest, NX_NESTING_LEVELS - 1);
    warn->fn(warn->ctx, "SystemProfileEvents", NX_CAP_NOWHERE, "Deep Nesting", msg);
}

static int write_events(const nx_capture *cap, const nx_process_ctx *ctx, const nx_cap_warner *warn,
                        unsigned *tables, nx_system_result *res, char *err, size_t errlen)
{
    fw_buffer fw = {0};
    rt_source *src = NULL;
    size_t nsrc = 0;
    nx_strbuf tmp = NX_STRBUF_INIT, attrs = NX_STRBUF_INIT;
    const char **ptrs = NULL;
    size_t pcap = 0;
    nx_row r = {0};
    bool row_open = false;
    nx_cap_error cerr = {{0}};
    nxpq_error perr = {{0}};
    int rc = -1;

    /* Framework events first: read every Chrome file into the buffer, then sort. */
    char zero = '\0';
    if (fw_put(&fw, &zero, 1) == UINT64_MAX) {   /* offset 0 stays "" */
        snprintf(err, errlen, "SystemProfileEvents: out of memory");
        goto out;
    }
    fw.budget = sort_budget();
    fw.run_dir = ctx->dest.dir;
    const char *last_path = NULL;
    uint32_t file = 0;
    for (size_t s = 0; s < cap->n_sessions; s++) {
        for (size_t k = 0; k < cap->sessions[s].n_chrome_traces; k++) {
            last_path = cap->sessions[s].chrome_traces[k];
            if (read_chrome_file(&fw, last_path, (uint32_t)s, file++, warn, err, errlen) != 0)
                goto out;
        }
    }
    /* Spilled: the rest is one more run, and the framework events come from the
     * merge of the runs; else from the buffer, sorted. */
    nx_run_phase("framework-sort");
    if (fw.runs) {
        size_t own;
        if (fw_spill(&fw, fw.n, last_path, NULL, 0, &own, err, errlen) != 0 ||
            nx_event_runs_merge(fw.runs, err, errlen) != 0)
            goto out;
    } else if (fw.n > 1) {
        qsort(fw.v, fw.n, sizeof *fw.v, fw_cmp);
    }

    int stopped = nx_run_stopped();   /* the sort is done: the last moment before writing */
    if (stopped) {
        nx_run_stopped_message(stopped, err, errlen);
        goto out;
    }
    src = calloc(cap->n_sessions ? cap->n_sessions : 1, sizeof *src);
    if (!src) {
        snprintf(err, errlen, "SystemProfileEvents: out of memory");
        goto out;
    }
    if (open_sources(cap, NX_SYS_RUNTIME_EVENTS, src, &nsrc, err, errlen) != 0)
        goto out;

    nx_run_phase("system-events");
    if (nx_row_open(&r, &ctx->dest, "SystemProfileEvents", &perr) != 0) {
        snprintf(err, errlen, "%s", perr.msg);
        goto out;
    }
    row_open = true;
    ev_cols c = {
        .id = nx_row_col(&r, "id"), .name = nx_row_col(&r, "name"), .start = nx_row_col(&r, "start_ts"),
        .end = nx_row_col(&r, "end_ts"), .dur = nx_row_col(&r, "duration_ns"),
        .source = nx_row_col(&r, "trace_event_source"), .instance = nx_row_col(&r, "instance_id"),
        .pid = nx_row_col(&r, "process_id"), .tid = nx_row_col(&r, "thread_id"), .nc = nx_row_col(&r, "nc_idx"),
        .worker = nx_row_col(&r, "worker_gid"), .flow = nx_row_col(&r, "flow_id"),
        .stream = nx_row_col(&r, "framework_stream_id"), .extra = nx_row_col(&r, "extra_attributes_json"),
    };
    size_t fi = 0;
    int64_t id = 0;
    nx_event_record fe;
    int fw_has = fw_next_in_range(&fw, &fi, &fe, cap, warn, err, errlen);
    for (;;) {
        if (fw_has < 0)
            goto out;
        rt_source *best = NULL;
        for (size_t i = 0; i < nsrc; i++)
            if (src[i].has && (!best || src[i].rec.u.runtime.start_ns < best->rec.u.runtime.start_ns))
                best = &src[i];
        bool take_fw = fw_has && (!best || fe.start < best->rec.u.runtime.start_ns);
        if (!best && !take_fw)
            break;
        if (nx_row_begin(&r, &perr) != 0)
            goto row_fail;
        nx_row_i64(&r, c.id, id++);
        if (take_fw) {
            const nx_event_record *e = &fe;
            nx_row_str(&r, c.name, e->name);
            nx_row_i64(&r, c.start, e->start);
            nx_row_i64(&r, c.end, e->end);
            nx_row_i64(&r, c.dur, e->end - e->start);
            nx_row_str(&r, c.source, "framework");
            nx_row_str(&r, c.instance, instance_of(&cap->sessions[e->session]));
            nx_row_i64(&r, c.pid, e->pid);
            nx_row_i64(&r, c.tid, e->tid);
            if (e->flow)
                nx_row_list_str(&r, c.flow, &e->flow, 1);
            if (e->stream)
                nx_row_str(&r, c.stream, e->stream);
            nx_row_str(&r, c.extra, e->json);
            span_add(res, e->start, e->end);
        } else {
            const nx_sys_runtime_event *e = &best->rec.u.runtime;
            nx_row_str(&r, c.name, e->name);
            nx_row_i64(&r, c.start, e->start_ns);
            nx_row_i64(&r, c.end, e->end_ns);
            nx_row_i64(&r, c.dur, e->end_ns - e->start_ns);
            nx_row_str(&r, c.source, e->source);
            nx_row_str(&r, c.instance, instance_of(&cap->sessions[best->session]));
            nx_row_i64(&r, c.pid, e->pid);
            nx_row_i64(&r, c.tid, e->tid);
            if (e->nc_idx != NX_SYS_NULL)
                nx_row_i64(&r, c.nc, e->nc_idx);
            if (e->worker_gid != NX_SYS_NULL)
                nx_row_i64(&r, c.worker, e->worker_gid);
            put_flow_ids(&r, c.flow, e->flow_ids, &tmp, &ptrs, &pcap);
            attrs.len = 0;
            nx_sys_attributes_to_json(e->attributes, &attrs);
            if (nx_strbuf_failed(&tmp) || nx_strbuf_failed(&attrs)) {
                snprintf(err, errlen, "SystemProfileEvents: out of memory");
                goto out;
            }
            nx_row_strn(&r, c.extra, attrs.data, attrs.len);
            span_add(res, e->start_ns, e->end_ns);
        }
        if (nx_row_end(&r, &perr) != 0)
            goto row_fail;
        if (take_fw)
            fw_has = fw_next_in_range(&fw, &fi, &fe, cap, warn, err, errlen);
        if (!take_fw) {
            int got = nx_sys_reader_next(best->r, &best->rec, &cerr);
            if (got < 0) {
                snprintf(err, errlen, "%s", cerr.msg);
                goto out;
            }
            best->has = got == 1;
        }
    }
    res->events = (uint64_t)id;
    row_open = false;
    if (nx_row_close(&r, true, tables, &perr) != 0) {
        snprintf(err, errlen, "%s", perr.msg);
        goto out;
    }
    warn_folded_levels(ctx->dest.dir, warn);
    rc = 0;
    goto out;
row_fail:
    snprintf(err, errlen, "%s", perr.msg);
out:
    if (row_open)
        nx_row_discard(&r);
    for (size_t i = 0; i < nsrc; i++)
        nx_sys_reader_close(src[i].r);
    free(src);
    free(fw.v);
    free(fw.arena);
    nx_event_runs_free(fw.runs);
    free(ptrs);
    nx_strbuf_free(&tmp);
    nx_strbuf_free(&attrs);
    return rc;
}

/* ------------------------------ CpuUsage, HostMemUsage, SystemProfileHbmUsage -- */

/* A sample's timestamp_ns, the merge key (every sample kind starts with it). */
static int64_t sample_time(nx_sys_kind kind, const nx_sys_record *rec)
{
    return kind == NX_SYS_CPU_USAGE  ? rec->u.cpu.timestamp_ns
         : kind == NX_SYS_HOST_MEM   ? rec->u.mem.timestamp_ns
                                     : rec->u.hbm.timestamp_ns;
}

/* Column indices, resolved once per table. */
typedef struct sample_cols {
    size_t ts, inst, a, b;                       /* CpuUsage / HostMemUsage value columns */
    size_t total, device, hbm, cat[NX_HBM_CATEGORY_COUNT];   /* SystemProfileHbmUsage */
} sample_cols;

static void sample_cols_resolve(nx_row *r, nx_sys_kind kind, sample_cols *c)
{
    c->ts = nx_row_col(r, "timestamp");
    c->inst = nx_row_col(r, "instance_id");
    if (kind == NX_SYS_DEVICE_MEM) {
        c->total = nx_row_col(r, "total_bytes");
        c->device = nx_row_col(r, "device_idx");
        c->hbm = nx_row_col(r, "hbm_idx");
        for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++)
            c->cat[k] = nx_row_col(r, nx_sys_hbm_column(k));
    } else {
        c->a = nx_row_col(r, kind == NX_SYS_CPU_USAGE ? "util_percent" : "used_bytes");
        c->b = nx_row_col(r, kind == NX_SYS_CPU_USAGE ? "cpu_id" : "used_percent");
    }
}

/* The value columns of one sample's row (timestamp and instance_id aside). */
static void sample_values(nx_row *r, nx_sys_kind kind, const sample_cols *c, const nx_sys_record *rec)
{
    if (kind == NX_SYS_CPU_USAGE) {
        const nx_sys_cpu_sample *s = &rec->u.cpu;
        nx_row_num(r, c->a, s->util_percent);
        if (s->cpu == NX_SYS_CPU_AVERAGE) {
            nx_row_str(r, c->b, "average");
        } else {
            char num[24];
            snprintf(num, sizeof num, "%" PRId64, s->cpu);
            nx_row_str(r, c->b, num);
        }
    } else if (kind == NX_SYS_HOST_MEM) {
        const nx_sys_mem_sample *s = &rec->u.mem;
        nx_row_i64(r, c->a, s->used_bytes);
        nx_row_num(r, c->b, s->total_bytes > 0 ? 100.0 * (double)s->used_bytes / (double)s->total_bytes : 0.0);
    } else {
        const nx_sys_hbm_sample *s = &rec->u.hbm;
        nx_row_i64(r, c->total, s->total_bytes);   /* the reader's overflow-checked sum */
        for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++)
            nx_row_i64(r, c->cat[k], s->bytes[k]);
        nx_row_i64(r, c->device, s->device_idx);
        nx_row_i64(r, c->hbm, s->hbm_idx);
    }
}

static int write_samples(const nx_capture *cap, const nx_process_ctx *ctx, nx_sys_kind kind, unsigned *tables,
                         nx_system_result *res, char *err, size_t errlen)
{
    const char *table = kind == NX_SYS_CPU_USAGE ? "CpuUsage"
                      : kind == NX_SYS_HOST_MEM  ? "HostMemUsage"
                                                 : "SystemProfileHbmUsage";
    rt_source *src = calloc(cap->n_sessions ? cap->n_sessions : 1, sizeof *src);
    size_t nsrc = 0;
    nx_row r = {0};
    bool row_open = false;
    nx_cap_error cerr = {{0}};
    nxpq_error perr = {{0}};
    int rc = -1;
    uint64_t rows = 0;
    if (!src) {
        snprintf(err, errlen, "%s: out of memory", table);
        return -1;
    }
    if (open_sources(cap, kind, src, &nsrc, err, errlen) != 0)
        goto out;
    if (nsrc == 0) {
        rc = 0;
        goto out;
    }
    if (nx_row_open(&r, &ctx->dest, table, &perr) != 0) {
        snprintf(err, errlen, "%s", perr.msg);
        goto out;
    }
    row_open = true;
    sample_cols cols = {0};
    sample_cols_resolve(&r, kind, &cols);
    for (;;) {
        rt_source *best = NULL;
        int64_t bt = 0;
        for (size_t i = 0; i < nsrc; i++) {
            if (!src[i].has)
                continue;
            int64_t t = sample_time(kind, &src[i].rec);
            if (!best || t < bt)
                best = &src[i], bt = t;
        }
        if (!best)
            break;
        if (nx_row_begin(&r, &perr) != 0)
            goto row_fail;
        sample_values(&r, kind, &cols, &best->rec);
        nx_row_i64(&r, cols.ts, bt);
        nx_row_str(&r, cols.inst, instance_of(&cap->sessions[best->session]));
        if (nx_row_end(&r, &perr) != 0)
            goto row_fail;
        span_add(res, bt, bt);
        rows++;
        int got = nx_sys_reader_next(best->r, &best->rec, &cerr);
        if (got < 0) {
            snprintf(err, errlen, "%s", cerr.msg);
            goto out;
        }
        best->has = got == 1;
    }
    row_open = false;
    if (nx_row_close(&r, true, tables, &perr) != 0) {
        snprintf(err, errlen, "%s", perr.msg);
        goto out;
    }
    if (kind == NX_SYS_CPU_USAGE)
        res->cpu_samples = rows;
    else if (kind == NX_SYS_HOST_MEM)
        res->mem_samples = rows;
    else
        res->hbm_samples = rows;
    rc = 0;
    goto out;
row_fail:
    snprintf(err, errlen, "%s", perr.msg);
out:
    if (row_open)
        nx_row_discard(&r);
    for (size_t i = 0; i < nsrc; i++)
        nx_sys_reader_close(src[i].r);
    free(src);
    return rc;
}

/* ------------------------------------------------------------ metadata rows -- */

static int write_system_metadata(const nx_process_ctx *ctx, const nx_system_result *res, unsigned *tables,
                                 nxpq_error *err)
{
    if (!res->any)
        return 0;
    int64_t ntff = 0, hbm = 0;
    for (size_t i = 0; i < ctx->n_traces; i++)
        if (ctx->traces[i].hdr.version_major > ntff)
            ntff = ctx->traces[i].hdr.version_major;
    for (size_t i = 0; i < ctx->n_progs; i++)
        if (ctx->progs[i]->hw.hbm_capacity_bytes <= (uint64_t)INT64_MAX &&
            (int64_t)ctx->progs[i]->hw.hbm_capacity_bytes > hbm)
            hbm = (int64_t)ctx->progs[i]->hw.hbm_capacity_bytes;
    char first[64], last[64], first_ns[24], last_ns[24];
    nx_go_utc_text(res->first_ns, first);
    nx_go_utc_text(res->last_ns, last);
    snprintf(first_ns, sizeof first_ns, "%" PRId64, res->first_ns);
    snprintf(last_ns, sizeof last_ns, "%" PRId64, res->last_ns);
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "SystemProfileMetadata", err) != 0)
        return -1;
    if (nx_row_begin(&r, err) != 0)
        goto fail;
    nx_row_str(&r, nx_row_col(&r, "first_ts"), first);
    nx_row_str(&r, nx_row_col(&r, "last_ts"), last);
    nx_row_str(&r, nx_row_col(&r, "first_ts_ns"), first_ns);
    nx_row_str(&r, nx_row_col(&r, "last_ts_ns"), last_ns);
    nx_row_i64(&r, nx_row_col(&r, "ntff_version"), ntff);
    nx_row_i64(&r, nx_row_col(&r, "hbm_capacity_bytes"), hbm);
    if (nx_row_end(&r, err) != 0)
        goto fail;
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

int nx_system_write_fallback_metadata(const nx_process_ctx *ctx, const nx_system_result *res, unsigned *tables,
                                      nxpq_error *err)
{
    int64_t first = res->any ? res->first_ns : 0, last = res->any ? res->last_ns : 0;
    char first_txt[40], last_txt[40];
    nx_utc_text(first, first_txt);
    nx_utc_text(last, last_txt);
    static const char *const zero_ints[] = {
        "ntff_version", "num_physical_cores", "num_dma_engines_per_neuroncore", "tensor_engine_num_rows",
        "tensor_engine_num_cols", "vector_engine_num_channels", "scalar_engine_num_channels",
        "gpsimd_engine_num_channels", "ticks_per_nanosec",
    };
    static const char *const zero_nums[] = {
        "dma_ddr_bandwidth", "hbm_ddr_bandwidth", "tensor_engine_clock_freq", "vector_engine_clock_freq",
        "scalar_engine_clock_freq", "gpsimd_engine_clock_freq", "neuroncore_clock_freq",
    };
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "Metadata", err) != 0)
        return -1;
    if (nx_row_begin(&r, err) != 0)
        goto fail;
    nx_row_str(&r, nx_row_col(&r, "profile_schema_version"), NX_SCHEMA_VERSION);
    nx_row_bool(&r, nx_row_col(&r, "vnc_enabled"), false);
    nx_row_i64(&r, nx_row_col(&r, "first_hw_timestamp"), first);
    nx_row_i64(&r, nx_row_col(&r, "last_hw_timestamp"), last);
    nx_row_str(&r, nx_row_col(&r, "first_ts"), first_txt);
    nx_row_str(&r, nx_row_col(&r, "last_ts"), last_txt);
    for (size_t i = 0; i < sizeof zero_ints / sizeof zero_ints[0]; i++)
        nx_row_i64(&r, nx_row_col(&r, zero_ints[i]), 0);
    for (size_t i = 0; i < sizeof zero_nums / sizeof zero_nums[0]; i++)
        nx_row_num(&r, nx_row_col(&r, zero_nums[i]), 0.0);
    nx_row_str(&r, nx_row_col(&r, "explorer_version"), NXPROF_VERSION);
    nx_row_opt_str(&r, nx_row_col(&r, "profile_name"), ctx->o->display_name);
    if (nx_row_end(&r, err) != 0)
        goto fail;
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

/* -------------------------------------------------------------------- entry -- */

int nx_system_tables_write(const nx_capture *cap, const nx_process_ctx *ctx, const nx_cap_warner *warn,
                           unsigned *tables, nx_system_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    nx_cap_warner none = {.fn = NULL, .ctx = NULL};
    if (!warn)
        warn = &none;
    if (write_events(cap, ctx, warn, tables, res, err, errlen) != 0 ||
        write_samples(cap, ctx, NX_SYS_CPU_USAGE, tables, res, err, errlen) != 0 ||
        write_samples(cap, ctx, NX_SYS_HOST_MEM, tables, res, err, errlen) != 0 ||
        write_samples(cap, ctx, NX_SYS_DEVICE_MEM, tables, res, err, errlen) != 0)
        return -1;
    nxpq_error perr = {{0}};
    if (write_system_metadata(ctx, res, tables, &perr) != 0) {
        snprintf(err, errlen, "%s", perr.msg);
        return -1;
    }
    return 0;
}
