/*
 * framework_names.c — the names framework traces give their processes and
 * threads in metadata (M) events, kept for the events of those threads
 * (system_internal.h, nx_fw_names).
 *
 * Read: M events named process_name (args.name), process_labels (args.labels),
 * process_sort_index (args.sort_index) — for every thread of their pid — and
 * thread_name (args.name), thread_sort_index (args.sort_index) — for their
 * (pid, tid). Kineto and JAX write the same keys. A name must be a string, a
 * sort index a number; the first value of a key for a process or thread wins
 * (Kineto names a thread twice, its specific name first: "thread 520
 * (pt_autograd_0)", then "thread 520 (python3)"). The values are kept as the
 * reader's JSON text, so they go into extra_attributes_json as they are.
 * Names belong to their file: the same pid in another file (another rank) is
 * another process. Kineto writes its M events after the events they name, so
 * names are applied when the rows are written, not when events are read.
 */
#include "process/system/system_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/json.h"

enum { K_PROCESS_NAME, K_PROCESS_LABELS, K_PROCESS_SORT, K_THREAD_NAME, K_THREAD_SORT, K_COUNT };

static const struct {
    const char *event, *arg, *member;
    bool thread, string;
} keys[K_COUNT] = {
    {"process_name", "name", "process_name", false, true},
    {"process_labels", "labels", "process_labels", false, true},
    {"process_sort_index", "sort_index", "process_sort_index", false, false},
    {"thread_name", "name", "thread_name", true, true},
    {"thread_sort_index", "sort_index", "thread_sort_index", true, false},
};

/* The names of one process (thread false) or thread of one file. While
 * reading, one entry per M event (seq its arrival order); sealing sorts and
 * merges them into one entry per process or thread, so reading costs O(1) per
 * event and sealing O(n log n), however many M events a trace holds. */
typedef struct fw_named {
    uint32_t file;
    bool thread;
    int64_t pid, tid;            /* tid 0 for a process */
    uint64_t seq;
    char *value[K_COUNT];        /* JSON text, or NULL */
} fw_named;

struct nx_fw_names {
    fw_named *v;
    size_t n, cap;
    bool sorted;
};

nx_fw_names *nx_fw_names_new(void)
{
    return calloc(1, sizeof(nx_fw_names));
}

void nx_fw_names_free(nx_fw_names *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        for (int k = 0; k < K_COUNT; k++)
            free(t->v[i].value[k]);
    free(t->v);
    free(t);
}

static int cmp_named(const void *pa, const void *pb)
{
    const fw_named *a = pa, *b = pb;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* cmp_named, then arrival order: the first value of a key sorts first. */
static int cmp_arrival(const void *pa, const void *pb)
{
    int c = cmp_named(pa, pb);
    const fw_named *a = pa, *b = pb;
    return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const fw_named *find(const nx_fw_names *t, uint32_t file, bool thread, int64_t pid, int64_t tid)
{
    fw_named key = {.file = file, .thread = thread, .pid = pid, .tid = thread ? tid : 0};
    return t->sorted && t->n ? bsearch(&key, t->v, t->n, sizeof *t->v, cmp_named) : NULL;
}

static fw_named *add(nx_fw_names *t, uint32_t file, bool thread, int64_t pid, int64_t tid)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 16;
        fw_named *v = realloc(t->v, nc * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = nc;
    }
    fw_named *e = &t->v[t->n];
    *e = (fw_named){.file = file, .thread = thread, .pid = pid, .tid = thread ? tid : 0, .seq = t->n};
    t->n++;
    return e;
}

int nx_fw_names_add(nx_fw_names *t, uint32_t file, const nx_chrome_event *ev, int64_t pid, int64_t tid)
{
    if (ev->ph != 'M' || !ev->name.s || !ev->args.s)
        return 0;
    int k = 0;
    while (k < K_COUNT && strcmp(ev->name.s, keys[k].event) != 0)
        k++;
    const char *v;
    size_t vl;
    if (k == K_COUNT || !nx_json_member(ev->args.s, ev->args.len, keys[k].arg, &v, &vl))
        return 0;
    bool is_string = *v == '"', is_number = *v == '-' || (*v >= '0' && *v <= '9');
    if (keys[k].string ? !is_string : !is_number)
        return 0;
    fw_named *e = add(t, file, keys[k].thread, pid, tid);
    if (!e || !(e->value[k] = strndup(v, vl)))
        return -1;
    return 1;
}

void nx_fw_names_seal(nx_fw_names *t)
{
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, cmp_arrival);
    size_t w = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (w > 0 && cmp_named(&t->v[w - 1], &t->v[i]) == 0) {   /* same process or thread: merge */
            for (int k = 0; k < K_COUNT; k++) {
                if (!t->v[w - 1].value[k]) {
                    t->v[w - 1].value[k] = t->v[i].value[k];   /* the first value of the key */
                    t->v[i].value[k] = NULL;
                }
                free(t->v[i].value[k]);
            }
            continue;
        }
        t->v[w++] = t->v[i];
    }
    t->n = w;
    t->sorted = true;
}

bool nx_fw_names_extend(const nx_fw_names *t, uint32_t file, int64_t pid, int64_t tid, const char *json,
                        nx_strbuf *out)
{
    const fw_named *p = find(t, file, false, pid, 0), *th = find(t, file, true, pid, tid);
    if (!p && !th)
        return false;
    size_t len = strlen(json);
    out->len = 0;
    nx_strbuf_append(out, json, len - 1);   /* the object without its '}' */
    bool empty = len <= 2;
    for (int k = 0; k < K_COUNT; k++) {
        const fw_named *e = keys[k].thread ? th : p;
        if (!e || !e->value[k])
            continue;
        /* Appended piece by piece: this runs for every framework event (no printf). */
        if (!empty)
            nx_strbuf_putc(out, ',');
        nx_strbuf_putc(out, '"');
        nx_strbuf_puts(out, keys[k].member);
        nx_strbuf_append(out, "\":", 2);
        nx_strbuf_puts(out, e->value[k]);
        empty = false;
    }
    nx_strbuf_putc(out, '}');
    return true;
}
