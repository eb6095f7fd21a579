/* event_runs.c — sorted runs of framework events on disk and their merge (event_runs.h). */
#define _GNU_SOURCE /* O_TMPFILE */
#include "process/system/event_runs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_BUFFER (64 * 1024)

typedef struct run {
    FILE *f;
    char *buf;                 /* the FILE's buffer */
    const char *path;          /* the Chrome file its events came from */
    int64_t offset;
    nx_event_record cur;       /* the merge's current record */
    char *text;                /* its strings */
    size_t text_cap;
} run;

struct nx_event_runs {
    char *dir;
    run *v;
    size_t n, cap;
    size_t *heap;              /* merge: runs with a current record, min-heap */
    size_t heap_n;
    bool handed;               /* the heap's top was handed out and not yet advanced */
};

typedef struct record_head {
    int64_t start, end, pid, tid;
    uint64_t seq, offset;
    uint32_t session, file;
    uint32_t len[4];           /* name, json, stream, flow */
} record_head;

nx_event_runs *nx_event_runs_new(const char *dir, nx_error *err)
{
    nx_event_runs *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        nx_error_set(err, "SystemProfileEvents: out of memory");
        return NULL;
    }
    return s;
}

void nx_event_runs_free(nx_event_runs *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].f)
            fclose(s->v[i].f);
        free(s->v[i].buf);
        free(s->v[i].text);
    }
    free(s->v);
    free(s->heap);
    free(s->dir);
    free(s);
}

size_t nx_event_runs_count(const nx_event_runs *s) { return s->n; }

/* An unnamed file in s->dir (event_runs.h "Files"), or -1 with errno. */
static int temp_file(const nx_event_runs *s)
{
    int fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    size_t n = strlen(s->dir) + 32;
    char *p = malloc(n);
    if (!p)
        return -1;
    snprintf(p, n, "%s/.sort-XXXXXX", s->dir);
    fd = mkostemp(p, O_CLOEXEC);
    if (fd >= 0)
        unlink(p);
    free(p);
    return fd;
}

int nx_event_runs_begin(nx_event_runs *s, const char *path, nx_error *err)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        run *v = realloc(s->v, nc * sizeof *v);
        if (!v) {
            nx_error_set(err, "SystemProfileEvents: out of memory");
            return -1;
        }
        s->v = v;
        s->cap = nc;
    }
    run *r = &s->v[s->n];
    memset(r, 0, sizeof *r);
    r->path = path;
    int fd = temp_file(s);
    if (fd < 0 || !(r->f = fdopen(fd, "w+b"))) {
        nx_error_set(err, "%s: SystemProfileEvents: cannot create a sort file in %s: %s", path, s->dir,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    s->n++;
    if ((r->buf = malloc(RUN_BUFFER)) != NULL)
        setvbuf(r->f, r->buf, _IOFBF, RUN_BUFFER);
    return 0;
}

static int write_fail(const run *r, nx_error *err)
{
    nx_error_set(err, "%s: SystemProfileEvents: cannot write a sort file: %s", r->path, strerror(errno));
    return -1;
}

int nx_event_runs_add(nx_event_runs *s, const nx_event_record *e, nx_error *err)
{
    run *r = &s->v[s->n - 1];
    const char *str[4] = {e->name, e->json, e->stream, e->flow};
    record_head h = {.start = e->start, .end = e->end, .pid = e->pid, .tid = e->tid, .seq = e->seq,
                     .offset = e->offset, .session = e->session, .file = e->file};
    for (int k = 0; k < 4; k++) {
        size_t len = str[k] ? strlen(str[k]) : 0;
        if (len > UINT32_MAX) {
            nx_error_set(err, "%s: SystemProfileEvents: an event string of %zu bytes", r->path, len);
            return -1;
        }
        h.len[k] = (uint32_t)len;
    }
    if (fwrite(&h, sizeof h, 1, r->f) != 1)
        return write_fail(r, err);
    for (int k = 0; k < 4; k++)
        if (fwrite(h.len[k] ? str[k] : "", 1, (size_t)h.len[k] + 1, r->f) != (size_t)h.len[k] + 1)
            return write_fail(r, err);
    return 0;
}

int nx_event_runs_end(nx_event_runs *s, nx_error *err)
{
    run *r = &s->v[s->n - 1];
    if (fflush(r->f) != 0)
        return write_fail(r, err);
    return 0;
}

void nx_event_runs_offset(nx_event_runs *s, size_t i, int64_t add)
{
    if (i < s->n)
        s->v[i].offset = add;
}

/* ------------------------------------------------------------------ merge -- */

/* The next record of run r into r->cur: 1, 0 at its end, -1 with err. */
static int run_read(run *r, nx_error *err)
{
    record_head h;
    size_t got = fread(&h, 1, sizeof h, r->f);
    if (got == 0 && feof(r->f))
        return 0;
    if (got != sizeof h)
        goto bad;
    size_t need = (size_t)h.len[0] + h.len[1] + h.len[2] + h.len[3] + 4;
    if (need > r->text_cap) {
        char *t = realloc(r->text, need);
        if (!t) {
            nx_error_set(err, "%s: SystemProfileEvents: out of memory merging sorted runs", r->path);
            return -1;
        }
        r->text = t;
        r->text_cap = need;
    }
    if (fread(r->text, 1, need, r->f) != need)
        goto bad;
    const char *p = r->text;
    const char *str[4];
    for (int k = 0; k < 4; k++) {
        str[k] = p;
        p += h.len[k] + 1;
    }
    nx_event_record *c = &r->cur;
    c->start = nx_event_time_shift(h.start, r->offset);
    c->end = nx_event_time_shift(h.end, r->offset);
    c->pid = h.pid;
    c->tid = h.tid;
    c->seq = h.seq;
    c->offset = h.offset;
    c->session = h.session;
    c->file = h.file;
    c->name = str[0];
    c->json = str[1];
    c->stream = h.len[2] ? str[2] : NULL;
    c->flow = h.len[3] ? str[3] : NULL;
    return 1;
bad:
    nx_error_set(err, "%s: SystemProfileEvents: a sort file could not be read back: %s", r->path,
             ferror(r->f) ? strerror(errno) : "it is shorter than written");
    return -1;
}

static bool before(const nx_event_runs *s, size_t a, size_t b)
{
    const nx_event_record *x = &s->v[a].cur, *y = &s->v[b].cur;
    return x->start != y->start ? x->start < y->start : x->seq < y->seq;
}

static void sift_down(nx_event_runs *s, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1, m = i;
        if (c < s->heap_n && before(s, s->heap[c], s->heap[m]))
            m = c;
        if (c + 1 < s->heap_n && before(s, s->heap[c + 1], s->heap[m]))
            m = c + 1;
        if (m == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

int nx_event_runs_merge(nx_event_runs *s, nx_error *err)
{
    if (!(s->heap = malloc((s->n ? s->n : 1) * sizeof *s->heap))) {
        nx_error_set(err, "SystemProfileEvents: out of memory");
        return -1;
    }
    s->heap_n = 0;
    for (size_t i = 0; i < s->n; i++) {
        run *r = &s->v[i];
        if (fseek(r->f, 0, SEEK_SET) != 0) {
            nx_error_set(err, "%s: SystemProfileEvents: cannot read a sort file: %s", r->path, strerror(errno));
            return -1;
        }
        int got = run_read(r, err);
        if (got < 0)
            return -1;
        if (got)
            s->heap[s->heap_n++] = i;
    }
    for (size_t i = s->heap_n / 2; i-- > 0;)
        sift_down(s, i);
    return 0;
}

int nx_event_runs_next(nx_event_runs *s, nx_event_record *out, nx_error *err)
{
    /* The record handed out last lives in its run's buffers until now: only
     * now is that run advanced. */
    if (s->handed && s->heap_n > 0) {
        int got = run_read(&s->v[s->heap[0]], err);
        if (got < 0)
            return -1;
        if (!got)
            s->heap[0] = s->heap[--s->heap_n];
        sift_down(s, 0);
    }
    s->handed = false;
    if (s->heap_n == 0)
        return 0;
    *out = s->v[s->heap[0]].cur;
    s->handed = true;
    return 1;
}
