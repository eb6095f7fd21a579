/*
 * stack_frames.c — builds the deduplicated stack-frame tree (rules in
 * stack_frames.h). Deduplication uses open-addressing hash sets of indices so
 * building is linear in the number of frames.
 */
#include "process/device/stack_frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A set of indices into some array; slots hold index + 1, 0 = empty. */
typedef struct idx_set {
    size_t *slot;
    size_t cap;                      /* a power of two */
} idx_set;

static int set_init(idx_set *s, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    s->slot = calloc(cap, sizeof *s->slot);
    s->cap = cap;
    return s->slot ? 0 : -1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return mix(h, 0);
}

/* Index of the string equal to s in v (n entries, set over them), adding it if new. */
static int64_t intern_str(idx_set *set, const char ***v, size_t *n, const char *s)
{
    size_t i = (size_t)hash_str(s) & (set->cap - 1);
    for (; set->slot[i]; i = (i + 1) & (set->cap - 1))
        if (strcmp((*v)[set->slot[i] - 1], s) == 0)
            return (int64_t)set->slot[i] - 1;
    (*v)[*n] = s;
    set->slot[i] = ++*n;
    return (int64_t)*n - 1;
}

static int64_t intern_loc(idx_set *set, nx_sf_location *v, size_t *n, nx_sf_location x)
{
    uint64_t h = mix(mix(mix(0, (uint64_t)x.file_name), (uint64_t)x.function_name), x.line);
    size_t i = (size_t)h & (set->cap - 1);
    for (; set->slot[i]; i = (i + 1) & (set->cap - 1)) {
        const nx_sf_location *y = &v[set->slot[i] - 1];
        if (y->file_name == x.file_name && y->function_name == x.function_name && y->line == x.line)
            return (int64_t)set->slot[i] - 1;
    }
    v[*n] = x;
    set->slot[i] = ++*n;
    return (int64_t)*n - 1;
}

static int64_t intern_frame(idx_set *set, nx_sf_frame *v, size_t *n, nx_sf_frame x)
{
    uint64_t h = mix(mix(1, (uint64_t)x.location), (uint64_t)x.parent);
    size_t i = (size_t)h & (set->cap - 1);
    for (; set->slot[i]; i = (i + 1) & (set->cap - 1)) {
        const nx_sf_frame *y = &v[set->slot[i] - 1];
        if (y->location == x.location && y->parent == x.parent)
            return (int64_t)set->slot[i] - 1;
    }
    v[*n] = x;
    set->slot[i] = ++*n;
    return (int64_t)*n - 1;
}

void nx_frame_index_free(nx_frame_index *x)
{
    if (!x)
        return;
    for (size_t p = 0; p < x->n_progs; p++) {
        if (x->frame_id)
            free(x->frame_id[p]);
        if (x->path)
            free(x->path[p]);
    }
    free(x->frame_id);
    free(x->path);
    free(x->prog_frames);
    free(x->frames);
    free(x->locations);
    free(x->file_names);
    free(x->function_names);
    free(x->text);
    memset(x, 0, sizeof *x);
}

/* Upper bound of the text length of frame f's path (20 digits per id). */
static size_t path_len(const nx_frame_index *x, int64_t f)
{
    size_t len = 2;                  /* "[]" */
    for (size_t depth = 0; f >= 0; f = x->frames[f].parent, depth++)
        len += (depth ? 2 : 0) + 20;
    return len;
}

/* Writes "[outermost, ..., f]" to out; chain has room for the deepest path
 * (at most n_frames ids). Returns the length written, without the NUL. */
static size_t write_path(const nx_frame_index *x, int64_t f, int64_t *chain, char *out)
{
    size_t depth = 0, at = 0;
    for (; f >= 0; f = x->frames[f].parent)
        chain[depth++] = f;
    out[at++] = '[';
    for (size_t i = depth; i-- > 0;) {
        at += (size_t)sprintf(out + at, "%" PRId64, chain[i]);
        if (i > 0) {
            out[at++] = ',';
            out[at++] = ' ';
        }
    }
    out[at++] = ']';
    out[at] = '\0';
    return at;
}

int nx_frame_index_build(nx_program *const *progs, size_t n_progs, nx_frame_index *out, const char *who,
                         nx_error *err)
{
    nx_frame_index *x = out;
    memset(x, 0, sizeof *x);
    size_t total = 0;
    for (size_t p = 0; p < n_progs; p++)
        total += progs[p]->n_frames;
    idx_set files = {0}, fns = {0}, locs = {0}, frames = {0};
    x->n_progs = n_progs;
    x->prog_frames = calloc(n_progs + 1, sizeof *x->prog_frames);
    x->frame_id = calloc(n_progs + 1, sizeof *x->frame_id);
    x->path = calloc(n_progs + 1, sizeof *x->path);
    x->frames = calloc(total + 1, sizeof *x->frames);
    x->locations = calloc(total + 1, sizeof *x->locations);
    x->file_names = calloc(total + 1, sizeof *x->file_names);
    x->function_names = calloc(total + 1, sizeof *x->function_names);
    if (!x->prog_frames || !x->frame_id || !x->path || !x->frames || !x->locations || !x->file_names ||
        !x->function_names || set_init(&files, total) || set_init(&fns, total) || set_init(&locs, total) ||
        set_init(&frames, total))
        goto oom;
    for (size_t p = 0; p < n_progs; p++) {
        const nx_program *g = progs[p];
        x->prog_frames[p] = g->n_frames;
        x->frame_id[p] = calloc(g->n_frames + 1, sizeof *x->frame_id[p]);
        x->path[p] = calloc(g->n_frames + 1, sizeof *x->path[p]);
        if (!x->frame_id[p] || !x->path[p])
            goto oom;
        for (size_t f = 0; f < g->n_frames; f++) {
            const nx_prog_frame *fr = &g->frames[f];
            nx_sf_location loc = {
                intern_str(&files, &x->file_names, &x->n_file_names, fr->file_name),
                intern_str(&fns, &x->function_names, &x->n_function_names, fr->function_name),
                fr->line,
            };
            int64_t li = intern_loc(&locs, x->locations, &x->n_locations, loc);
            /* The reader guarantees parent < f; anything else is treated as a root. */
            int64_t parent = fr->parent >= 0 && (size_t)fr->parent < f ? x->frame_id[p][fr->parent] : -1;
            x->frame_id[p][f] = intern_frame(&frames, x->frames, &x->n_frames, (nx_sf_frame){li, parent});
        }
    }
    /* Paths: sized first, then written into one buffer. */
    size_t bytes = 1;
    for (size_t p = 0; p < n_progs; p++)
        for (size_t f = 0; f < x->prog_frames[p]; f++)
            bytes += path_len(x, x->frame_id[p][f]) + 1;
    x->text = malloc(bytes);
    int64_t *chain = malloc((x->n_frames + 1) * sizeof *chain);
    if (!x->text || !chain) {
        free(chain);
        goto oom;
    }
    size_t at = 0;
    for (size_t p = 0; p < n_progs; p++)
        for (size_t f = 0; f < x->prog_frames[p]; f++) {
            x->path[p][f] = x->text + at;
            at += write_path(x, x->frame_id[p][f], chain, x->text + at) + 1;
        }
    free(chain);
    free(files.slot);
    free(fns.slot);
    free(locs.slot);
    free(frames.slot);
    return 0;
oom:
    free(files.slot);
    free(fns.slot);
    free(locs.slot);
    free(frames.slot);
    nx_frame_index_free(x);
    nx_error_set(err, "%s: out of memory building the stack frame index", who);
    return -1;
}
