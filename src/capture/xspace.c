/*
 * xspace.c — the XSpace reader (xspace.h): the file, the walk over planes,
 * lines and events, and the events handed to the callback. The metadata maps
 * and args are in xspace_meta.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/framework_source.h"
#include "capture/xspace_internal.h"
#include "util/file_map.h"
#include "util/json.h"

/* Names of the profiler's internal events, which JAX's trace JSON leaves out
 * (XLA's IsInternalEvent, by the event metadata's name). */
static const char *const internal_events[] = {
    "MemoryAllocation", "MemoryDeallocation", "PrefetchProduce", "PrefetchConsume",
    "ParallelInterleaveProduce", "ParallelInterleaveConsume", "ParallelInterleaveInitializedInput",
    "ParallelMapProduce", "ParallelMapConsume", "MapAndBatchProduce", "MapAndBatchConsume",
    "ParseExampleProduce", "ParseExampleConsume"};

typedef struct xs_line {
    int64_t tid;
    const char *name;    /* display_name, else name; not NUL-terminated */
    size_t name_len;
    int64_t timestamp_ns;
} xs_line;

int xs_fail(xs *x, size_t at, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char path[192] = "XSpace";
    size_t n = strlen(path);
    for (int i = 0; i < x->depth && n < sizeof path; i++) {
        int k = x->path[i].index < 0
                    ? snprintf(path + n, sizeof path - n, ".%s", x->path[i].field)
                    : snprintf(path + n, sizeof path - n, ".%s[%" PRId64 "]", x->path[i].field, x->path[i].index);
        n += k > 0 ? (size_t)k : 0;
    }
    snprintf(x->err->msg, sizeof x->err->msg, "%s: byte %zu: %s: %s", x->file, at, path, what);
    return -1;
}

void xs_push(xs *x, const char *field, int64_t index)
{
    if (x->depth < XS_MAX_DEPTH)
        x->path[x->depth] = (xs_frame){field, index};
    x->depth++;
}

void xs_pop(xs *x)
{
    x->depth--;
}

int xs_want(xs *x, const nx_pb_field *f, int wire, const char *field)
{
    if (f->wire == wire)
        return 0;
    return xs_fail(x, f->offset, "field %s (%" PRIu32 ") has wire type %d, not %d", field, f->number, f->wire, wire);
}

int xs_string(xs *x, const nx_pb_field *f, const char *field, const char **s, size_t *len)
{
    if (xs_want(x, f, NX_PB_LEN, field) < 0)
        return -1;
    if (!nx_pb_utf8_valid(x->data + f->start, f->len))
        return xs_fail(x, f->offset, "field %s is not UTF-8", field);
    *s = (const char *)x->data + f->start;
    *len = f->len;
    return 0;
}

int xs_next(xs *x, nx_pb_cursor *c, nx_pb_field *f)
{
    const char *why;
    size_t at;
    int rc = nx_pb_next(c, f, &why, &at);
    return rc < 0 ? xs_fail(x, at, "%s", why) : rc;
}

static int deliver(xs *x, nx_chrome_event *ev)
{
    ev->index = x->delivered++;
    return x->h->event ? x->h->event(x->h->ctx, ev) : 0;
}

/* An event that is not delivered, said through the skipped callback (when
 * there is one) so that no event of the file goes unsaid. */
static int left_out(xs *x, const nx_pb_field *f, const char *reason)
{
    nx_chrome_skipped sk = {.index = x->delivered++, .offset = f->offset, .ph = 'X', .reason = reason,
                            .category = "Not Stored"};
    return x->h->skipped ? x->h->skipped(x->h->ctx, &sk) : 0;
}

/* A metadata event: process_name or thread_name, args {"name": ...}. */
static int deliver_name(xs *x, size_t at, const char *what, int64_t pid, const xs_line *line,
                        const char *name, size_t len)
{
    x->args.len = 0;
    nx_strbuf_puts(&x->args, "{\"name\":");
    nx_json_put_string(&x->args, name, len);
    nx_strbuf_putc(&x->args, '}');
    if (nx_strbuf_failed(&x->args))
        return xs_fail(x, at, "out of memory");
    nx_chrome_event ev = {.offset = at, .ph = 'M', .name = {what, strlen(what)}};
    ev.pid = (nx_chrome_ref){.kind = NX_CHROME_REF_NUMBER, .num = pid};
    if (line)
        ev.tid = (nx_chrome_ref){.kind = NX_CHROME_REF_NUMBER, .num = line->tid};
    ev.args = (nx_chrome_text){x->args.data, x->args.len};
    return deliver(x, &ev);
}

/* The line's fields other than its events. */
static int line_header(xs *x, nx_pb_cursor c, xs_line *line)
{
    nx_pb_field f;
    int rc;
    int64_t id = 0, display_id = 0;
    const char *name = "", *display = "";
    size_t name_len = 0, display_len = 0;
    *line = (xs_line){0};
    while ((rc = xs_next(x, &c, &f)) > 0) {
        switch (f.number) {
        case 1: rc = xs_want(x, &f, NX_PB_VARINT, "id"); id = (int64_t)f.u; break;
        case 10: rc = xs_want(x, &f, NX_PB_VARINT, "display_id"); display_id = (int64_t)f.u; break;
        case 2: rc = xs_string(x, &f, "name", &name, &name_len); break;
        case 11: rc = xs_string(x, &f, "display_name", &display, &display_len); break;
        case 3: rc = xs_want(x, &f, NX_PB_VARINT, "timestamp_ns"); line->timestamp_ns = (int64_t)f.u; break;
        case 4: rc = xs_want(x, &f, NX_PB_LEN, "events"); break;
        case 9: rc = xs_want(x, &f, NX_PB_VARINT, "duration_ps"); break;
        default: break;
        }
        if (rc < 0)
            return -1;
    }
    /* JAX's JSON names a line's thread by its display id, cut to 32 bits. */
    line->tid = (int64_t)(uint32_t)(display_id ? display_id : id);
    line->name = display_len ? display : name;
    line->name_len = display_len ? display_len : name_len;
    return rc;
}

/* Picoseconds to nanoseconds, to the nearest, halves away from zero. */
static int64_t ps_to_ns(int64_t ps)
{
    int64_t q = ps / 1000, r = ps % 1000;
    return q + (r >= 500) - (r <= -500);
}

static bool is_internal_event(const xs_event_meta *m)
{
    for (size_t i = 0; i < sizeof internal_events / sizeof *internal_events; i++)
        if (strcmp(m->name, internal_events[i]) == 0)
            return true;
    return false;
}

typedef struct xs_event_fields {
    int64_t metadata_id, offset_ps, duration_ps;
    bool aggregated;     /* num_occurrences set last in the oneof */
} xs_event_fields;

static int event_fields(xs *x, nx_pb_cursor c, xs_event_fields *e)
{
    nx_pb_field f;
    int rc;
    *e = (xs_event_fields){0};
    while ((rc = xs_next(x, &c, &f)) > 0) {
        switch (f.number) {
        case 1: rc = xs_want(x, &f, NX_PB_VARINT, "metadata_id"); e->metadata_id = (int64_t)f.u; break;
        case 2:
            rc = xs_want(x, &f, NX_PB_VARINT, "offset_ps");
            e->offset_ps = (int64_t)f.u;
            e->aggregated = false;
            break;
        case 5: rc = xs_want(x, &f, NX_PB_VARINT, "num_occurrences"); e->aggregated = true; break;
        case 3: rc = xs_want(x, &f, NX_PB_VARINT, "duration_ps"); e->duration_ps = (int64_t)f.u; break;
        case 4: rc = xs_want(x, &f, NX_PB_LEN, "stats"); break;
        default: break;
        }
        if (rc < 0)
            return -1;
    }
    return rc;
}

/* The args of one event: long_name, the metadata's stats, the event's. */
static int event_args(xs *x, const xs_event_meta *m, nx_pb_cursor ev)
{
    if (xs_args_begin(x, m) < 0)
        return -1;
    /* the metadata's stats are named from their plane: XSpace.planes[i].event_metadata[k] */
    xs_frame saved[XS_MAX_DEPTH];
    int depth = x->depth;
    memcpy(saved, x->path, sizeof saved);
    x->depth = 1;
    xs_push(x, "event_metadata", (int64_t)m->key.entry);
    xs_push(x, "value", -1);
    int rc = xs_args_stats(x, (nx_pb_cursor){x->data, m->start, m->start + m->len}, 5);
    memcpy(x->path, saved, sizeof saved);
    x->depth = depth;
    if (rc < 0 || (!x->args_too_large && xs_args_stats(x, ev, 4) < 0))
        return -1;
    return xs_args_finish(x);
}

static int read_event(xs *x, const nx_pb_field *f, int64_t pid, const xs_line *line)
{
    nx_pb_cursor c = {x->data, f->start, f->start + f->len};
    xs_event_fields e;
    if (event_fields(x, c, &e) < 0)
        return -1;
    const xs_event_meta *m = xs_event_meta_find(x, e.metadata_id);
    if (!m)
        return xs_fail(x, f->offset, "metadata_id %" PRId64 " is not in the plane's event_metadata", e.metadata_id);
    if (e.aggregated) {
        x->counts->aggregated_events++;
        return left_out(x, f, "an aggregated XSpace event (num_occurrences, no time), which JAX's JSON leaves out too");
    }
    if (is_internal_event(m)) {
        x->counts->internal_events++;
        return left_out(x, f, "one of the profiler's internal XSpace events (memory allocation, tf.data markers), "
                              "which JAX's JSON leaves out too");
    }
    if (e.duration_ps < 0)
        return xs_fail(x, f->offset, "negative duration_ps %" PRId64, e.duration_ps);
    nx_chrome_event ev = {.offset = f->offset, .ph = 'X', .has_ts = true, .has_dur = true};
    if (__builtin_add_overflow(line->timestamp_ns, ps_to_ns(e.offset_ps), &ev.ts_ns))
        return xs_fail(x, f->offset, "timestamp_ns + offset_ps is beyond 2^63 ns");
    ev.dur_ns = ps_to_ns(e.duration_ps);
    if (event_args(x, m, c) < 0)
        return -1;
    ev.name = m->display_len ? (nx_chrome_text){m->display, m->display_len} : (nx_chrome_text){m->name, m->name_len};
    ev.pid = (nx_chrome_ref){.kind = NX_CHROME_REF_NUMBER, .num = pid};
    ev.tid = (nx_chrome_ref){.kind = NX_CHROME_REF_NUMBER, .num = line->tid};
    if (x->args_too_large || x->args.len > x->max_args)
        ev.args_too_large = true;
    else
        ev.args = (nx_chrome_text){x->args.data, x->args.len};
    x->counts->events++;
    return deliver(x, &ev);
}

static int line_events(xs *x, const nx_pb_field *lf, int64_t pid)
{
    nx_pb_cursor c = {x->data, lf->start, lf->start + lf->len};
    xs_line line;
    if (line_header(x, c, &line) < 0)
        return -1;
    nx_pb_field f;
    int rc;
    int64_t i = 0;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number != 4)
            continue;
        xs_push(x, "events", i++);
        rc = read_event(x, &f, pid, &line);
        xs_pop(x);
        if (rc != 0)
            return rc;
    }
    return rc;
}

/* Calls fn for each line of the plane (fields 3), with its path pushed. */
static int each_line(xs *x, nx_pb_cursor c, int64_t pid, int (*fn)(xs *, const nx_pb_field *, int64_t))
{
    nx_pb_field f;
    int rc;
    int64_t i = 0;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number != 3)
            continue;
        xs_push(x, "lines", i++);
        rc = fn(x, &f, pid);
        xs_pop(x);
        if (rc != 0)
            return rc;
    }
    return rc;
}

static int line_name(xs *x, const nx_pb_field *lf, int64_t pid)
{
    xs_line line;
    if (line_header(x, (nx_pb_cursor){x->data, lf->start, lf->start + lf->len}, &line) < 0)
        return -1;
    return deliver_name(x, lf->offset, "thread_name", pid, &line, line.name, line.name_len);
}

/* First pass over a plane: its name, how many lines, the metadata maps. */
static int plane_meta(xs *x, nx_pb_cursor c, const char **name, size_t *name_len, uint64_t *lines)
{
    nx_pb_field f;
    int rc;
    uint64_t entry = 0;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        switch (f.number) {
        case 1: rc = xs_want(x, &f, NX_PB_VARINT, "id"); break;
        case 2: rc = xs_string(x, &f, "name", name, name_len); break;
        case 3: rc = xs_want(x, &f, NX_PB_LEN, "lines"); (*lines)++; break;
        case 4:
        case 5: rc = xs_meta_add(x, &f, entry++); break;
        case 6: rc = xs_want(x, &f, NX_PB_LEN, "stats"); break;
        default: break;
        }
        if (rc < 0)
            return -1;
    }
    return rc < 0 ? -1 : xs_meta_finish(x);
}

static int read_plane(xs *x, const nx_pb_field *pf, int64_t pid)
{
    nx_pb_cursor c = {x->data, pf->start, pf->start + pf->len};
    const char *name = "";
    size_t name_len = 0;
    uint64_t lines = 0;
    xs_meta_reset(x);
    if (plane_meta(x, c, &name, &name_len, &lines) < 0)
        return -1;
    x->counts->lines += lines;
    if (lines == 0)
        return 0;
    int rc = deliver_name(x, pf->offset, "process_name", pid, NULL, name, name_len);
    if (rc == 0)
        rc = each_line(x, c, pid, line_name);
    if (rc == 0)
        rc = each_line(x, c, pid, line_events);
    return rc;
}

/* XSpace.hostnames' first entry, delivered as the top-level member "hostname" a
 * Chrome trace may carry (its JSON string), so the processor tells hosts apart
 * the same way for both formats. The callback's stop value, -1 out of memory. */
static int deliver_hostname(xs *x, const char *s, size_t len)
{
    if (!x->h->toplevel || x->counts->hostnames++ > 0)
        return 0;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_json_put_string(&b, s, len);
    int rc = nx_strbuf_failed(&b) ? xs_fail(x, 0, "out of memory")
                                  : x->h->toplevel(x->h->ctx, &(nx_chrome_toplevel){
                                        .key = {"hostname", 8}, .json = {b.data, b.len}, .too_large = false});
    nx_strbuf_free(&b);
    return rc;
}

static int read_space(xs *x)
{
    nx_pb_cursor c = nx_pb_cursor_init(x->data, x->size);
    nx_pb_field f;
    int rc;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number >= 2 && f.number <= 4) {
            static const char *const names[] = {"", "", "errors", "warnings", "hostnames"};
            const char *s;
            size_t len;
            if (xs_string(x, &f, names[f.number], &s, &len) < 0)
                return -1;
            if (f.number == 4 && (rc = deliver_hostname(x, s, len)) != 0)
                return rc;
            continue;
        }
        if (f.number != 1)
            continue;
        if (xs_want(x, &f, NX_PB_LEN, "planes") < 0)
            return -1;
        int64_t pid = (int64_t)x->counts->planes++;
        xs_push(x, "planes", pid);
        rc = read_plane(x, &f, pid);
        xs_pop(x);
        if (rc != 0)
            return rc;
    }
    return rc;
}

int nx_xspace_read_bytes(const char *name, const void *data, size_t size, const nx_xspace_options *opts,
                         const nx_chrome_handlers *h, nx_xspace_counts *counts, nx_error *err)
{
    nx_xspace_counts local;
    xs x = {.file = name, .data = data, .size = size, .h = h, .err = err, .counts = counts ? counts : &local,
            .arena = NX_ARENA_INIT, .values = NX_STRBUF_INIT, .args = NX_STRBUF_INIT};
    x.max_args = opts && opts->max_args_bytes ? opts->max_args_bytes : 64 * 1024;
    *x.counts = (nx_xspace_counts){0};
    err->msg[0] = '\0';
    int rc = read_space(&x);
    nx_arena_free(&x.arena);
    free(x.em);
    free(x.sm);
    free(x.pairs);
    nx_strbuf_free(&x.values);
    nx_strbuf_free(&x.args);
    return rc;
}

/* The whole file when it cannot be mapped (every mapping slot taken). */
static void *read_whole(int fd, size_t size)
{
    uint8_t *buf = malloc(size);
    for (size_t got = 0; buf && got < size;) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free(buf);
            return NULL;
        }
        got += (size_t)n;
    }
    return buf;
}

int nx_xspace_read_file(const char *path, const nx_xspace_options *opts, const nx_chrome_handlers *h,
                        nx_xspace_counts *counts, nx_error *err)
{
    /* Non-blocking, so that a FIFO in place of the file cannot hang the open. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    const char *why = fd < 0 || fstat(fd, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
    if (why) {
        snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    nx_file_map *m = size ? nx_file_map_open(fd, size) : NULL;
    void *copy = size && !m ? read_whole(fd, size) : NULL;
    int saved = errno;
    close(fd);
    if (size && !m && !copy) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot read: %s", path, strerror(saved));
        return -1;
    }
    const void *data = m ? nx_file_map_data(m) : copy;
    int rc = nx_xspace_read_bytes(path, data, size, opts, h, counts, err);
    if (m && nx_file_map_damaged(m)) {
        snprintf(err->msg, sizeof err->msg, "%s: %s", path, NX_FILE_MAP_CHANGED);
        rc = -1;
    }
    nx_file_map_close(m);
    free(copy);
    return rc;
}

/* The registry's entry (capture/framework_source.h): `*.xplane.pb`. */
static int read_xspace(const char *path, const nx_chrome_handlers *h, nx_error *err)
{
    return nx_xspace_read_file(path, NULL, h, NULL, err);
}

static const char *const xspace_suffixes[] = {".xplane.pb", NULL};

const nx_framework_source nx_source_xspace = {
    .name = "XSpace protobuf",
    .suffixes = xspace_suffixes,
    .read = read_xspace,
};
