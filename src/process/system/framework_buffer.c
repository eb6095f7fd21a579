/*
 * framework_buffer.c — the buffer framework events wait in until they are
 * written to SystemProfileEvents in start order (system_internal.h). Events
 * are 104 bytes each plus their name and attribute text in one arena. Above
 * the sort budget (NX_FRAMEWORK_SORT_BUDGET, or NXPROF_FRAMEWORK_SORT_BYTES)
 * the buffer is spilled as sorted runs (event_runs.h) and the runs are merged
 * at the end, so memory is bounded whatever the traces' size; B events still
 * waiting for their E stay across a spill, capped at NX_FRAMEWORK_MEMORY_LIMIT.
 */
#include "process/system/system_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/run_control.h"

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

uint64_t nx_fw_put(fw_buffer *b, const char *s, size_t len)
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

fw_event *nx_fw_add(fw_buffer *b)
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

const char *nx_fw_str(const fw_buffer *b, uint64_t off)
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

size_t nx_fw_bytes(const fw_buffer *b)
{
    return b->n * sizeof(fw_event) + b->alen;
}

static nx_event_record fw_record(const fw_buffer *b, const fw_event *e)
{
    return (nx_event_record){.start = e->start, .end = e->end, .pid = e->pid, .tid = e->tid, .seq = e->seq,
                             .offset = e->offset, .session = e->session, .file = e->file,
                             .name = nx_fw_str(b, e->name), .json = nx_fw_str(b, e->json),
                             .stream = e->stream ? nx_fw_str(b, e->stream) : NULL,
                             .flow = e->flow ? nx_fw_str(b, e->flow) : NULL};
}

/* Sorts v[0..n) and writes it as one run read from `path`; *run gets its index. */
static int fw_write_run(fw_buffer *b, fw_event *v, size_t n, const char *path, size_t *run, nx_error *err)
{
    qsort(v, n, sizeof *v, fw_cmp);
    *run = nx_event_runs_count(b->runs);
    if (nx_event_runs_begin(b->runs, path, err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        nx_event_record r = fw_record(b, &v[i]);
        if (nx_event_runs_add(b->runs, &r, err) != 0)
            return -1;
    }
    return nx_event_runs_end(b->runs, err);
}

/* Copies string `off` of the old arena into b's (new) one. */
static uint64_t fw_keep_str(fw_buffer *b, const char *old_arena, uint64_t off)
{
    return off ? nx_fw_put(b, old_arena + off, strlen(old_arena + off)) : 0;
}

/*
 * The spill (event_runs.h): the buffered events that are final go out as sorted
 * runs -- those before index `first` (earlier Chrome files, times absolute) as
 * one run, those from `first` on (the file being read, times still relative to
 * its base) as another, whose index goes to *own_run (SIZE_MAX when it has
 * none) -- and only the open B events stay, moved to the front with their
 * strings, their links and the thread stacks' tops (threads[0..tcap)) renumbered.
 */
int nx_fw_spill(fw_buffer *b, size_t first, const char *path, fw_thread *threads, size_t tcap, size_t *own_run,
                    nx_error *err)
{
    *own_run = SIZE_MAX;
    if (!b->runs && !(b->runs = nx_event_runs_new(b->run_dir, err)))
        return -1;
    size_t n_open = 0;
    for (size_t i = first; i < b->n; i++)
        n_open += b->v[i].open;
    fw_event *opens = n_open ? malloc(n_open * sizeof *opens) : NULL;
    uint64_t *old_index = n_open ? malloc(n_open * sizeof *old_index) : NULL;
    if (n_open && (!opens || !old_index)) {
        free(opens);
        free(old_index);
        nx_error_set(err, "%s: SystemProfileEvents: out of memory", path);
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
    if (earlier && fw_write_run(b, b->v, earlier, path, &run, err) != 0)
        goto out;
    if (w > earlier) {
        if (fw_write_run(b, b->v + earlier, w - earlier, path, &run, err) != 0)
            goto out;
        *own_run = run;
    }
    /* Keep the open events, in their order, with their strings in a new arena. */
    char *old_arena = b->arena;
    b->arena = NULL;
    b->alen = b->acap = 0;
    b->n = 0;
    char zero = '\0';
    if (nx_fw_put(b, &zero, 1) == UINT64_MAX) {
        free(old_arena);
        nx_error_set(err, "%s: SystemProfileEvents: out of memory", path);
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
            nx_error_set(err, "%s: SystemProfileEvents: out of memory", path);
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

/* NX_FRAMEWORK_SORT_BUDGET, or NXPROF_FRAMEWORK_SORT_BYTES when it holds a positive integer. */
static size_t sort_budget(void)
{
    const char *v = getenv("NXPROF_FRAMEWORK_SORT_BYTES");
    char *e;
    unsigned long long n = v ? strtoull(v, &e, 10) : 0;
    return v && *e == '\0' && n > 0 && n < NX_FRAMEWORK_MEMORY_LIMIT ? (size_t)n : NX_FRAMEWORK_SORT_BUDGET;
}


bool nx_fw_init(fw_buffer *b, const char *run_dir)
{
    memset(b, 0, sizeof *b);
    b->budget = sort_budget();
    b->run_dir = run_dir;
    char zero = '\0';
    return (b->names = nx_fw_names_new()) && (b->ranks = nx_fw_ranks_new()) &&
           nx_fw_put(b, &zero, 1) != UINT64_MAX;   /* offset 0 stays "" */
}

int nx_fw_finish(fw_buffer *b, const char *last_path, nx_error *err)
{
    /* Spilled: the rest is one more run, and the events come from the merge
     * of the runs; else from the buffer, sorted. */
    nx_run_phase("framework-sort");
    nx_fw_names_seal(b->names);
    if (b->runs) {
        size_t own;
        return nx_fw_spill(b, b->n, last_path, NULL, 0, &own, err) != 0 ||
                       nx_event_runs_merge(b->runs, err) != 0
                   ? -1
                   : 0;
    }
    if (b->n > 1)
        qsort(b->v, b->n, sizeof *b->v, fw_cmp);
    return 0;
}

/* The events in (start, seq) order: from the merge of the runs when the
 * buffer was spilled, else from the sorted buffer (*fi: the next index).
 * 1 and *out (valid until the next call), 0 at the end, -1 with err. */
int nx_fw_next(fw_buffer *b, size_t *fi, nx_event_record *out, nx_error *err)
{
    if (b->runs)
        return nx_event_runs_next(b->runs, out, err);
    while (*fi < b->n && b->v[*fi].dropped)
        (*fi)++;
    if (*fi == b->n)
        return 0;
    *out = fw_record(b, &b->v[(*fi)++]);
    return 1;
}


void nx_fw_free(fw_buffer *b)
{
    free(b->v);
    free(b->arena);
    nx_event_runs_free(b->runs);
    nx_fw_names_free(b->names);
    nx_fw_ranks_free(b->ranks);
}
