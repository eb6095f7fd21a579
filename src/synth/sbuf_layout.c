/*
 * sbuf_layout.c — where in its partitions each SBUF allocation of the generated
 * program lies (MEMORY_ALLOCATIONS end_address), chosen so that allocations
 * that can be live at the same instant never share a byte of a partition.
 *
 * When allocations can overlap in time follows from the schedule's rules
 * (schedule.c), not from one schedule's times, so it holds on every core and in
 * every execution whatever the jitter: a step starts only after its
 * dependencies end, and an engine runs its instructions one at a time in step
 * order. So if the instruction that frees A (its end) comes before the one that
 * makes B live (its start) along those edges, A is free before B is live.
 * Two allocations conflict unless one's free instruction comes before the
 * other's live instruction that way. An allocation whose free instruction does
 * not come after its live one (nor is it) may stay live to the end of the
 * execution (docs/processing.md, "SbufUsage, PsumUsage"): it conflicts with every other.
 *
 * Placement: allocations in program order, each at the lowest address where it
 * overlaps no conflicting allocation placed before it in a shared partition. One
 * that does not fit below the partition's capacity is left without an address
 * (end_address 0). Cost: a breadth-first walk of the step graph from each
 * allocation's two instructions and a pass over the pairs; the builder's sizes
 * keep both small.
 */
#include <stdlib.h>
#include <string.h>

#include "synth/synth_internal.h"

typedef struct graph {
    uint32_t *first, *next;          /* successors in CSR form: next[first[s] .. first[s + 1]) */
    uint32_t *stamp, *queue;         /* breadth-first walk: visited mark, FIFO */
    uint32_t gen;
} graph;

static void graph_free(graph *g)
{
    free(g->first);
    free(g->next);
    free(g->stamp);
    free(g->queue);
}

/* The step whose instruction a step names: itself, or a DMA/CC step's trigger. */
static uint32_t instr_step(const sy_builder *b, uint32_t s)
{
    return b->steps[s].kind == SY_INSTR ? s : b->steps[s].trigger;
}

/* Edges: every dependency to its step, and each instruction to the next on its engine. */
static int graph_build(const sy_builder *b, graph *g)
{
    size_t n = b->n_steps;
    g->first = calloc(n + 2, sizeof *g->first);
    g->next = calloc(n * (SY_MAX_DEPS + 1) + 1, sizeof *g->next);
    g->stamp = calloc(n + 1, sizeof *g->stamp);
    g->queue = calloc(n + 1, sizeof *g->queue);
    if (!g->first || !g->next || !g->stamp || !g->queue)
        return -1;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t last[NX_ENGINE_COUNT];
        memset(last, 0xFF, sizeof last);
        for (uint32_t i = 0; i < n; i++) {
            const sy_step *s = &b->steps[i];
            uint32_t from[SY_MAX_DEPS + 1];
            unsigned k = 0;
            for (int d = 0; d < SY_MAX_DEPS; d++)
                if (s->dep[d] != SY_NONE)
                    from[k++] = s->dep[d];
            if (s->kind == SY_INSTR) {
                if (last[s->engine] != SY_NONE)
                    from[k++] = last[s->engine];
                last[s->engine] = i;
            }
            for (unsigned j = 0; j < k; j++) {
                if (pass == 0)
                    g->first[from[j] + 2]++;
                else
                    g->next[g->first[from[j] + 1]++] = i;
            }
        }
        if (pass == 0)
            for (size_t i = 0; i < n; i++)
                g->first[i + 2] += g->first[i + 1];
    }
    return 0;
}

/* Marks every step reachable from s (s included) with a new stamp. */
static void walk(graph *g, uint32_t s)
{
    size_t head = 0, tail = 0;
    g->gen++;
    g->stamp[s] = g->gen;
    g->queue[tail++] = s;
    while (head < tail) {
        uint32_t x = g->queue[head++];
        for (uint32_t e = g->first[x]; e < g->first[x + 1]; e++)
            if (g->stamp[g->next[e]] != g->gen) {
                g->stamp[g->next[e]] = g->gen;
                g->queue[tail++] = g->next[e];
            }
    }
}

typedef struct span {
    uint64_t lo, hi;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The lowest start at which `bytes` fit between the taken spans, below cap; UINT64_MAX if none. */
static uint64_t first_fit(span *taken, size_t n, uint64_t bytes, uint64_t cap)
{
    qsort(taken, n, sizeof *taken, cmp_span);
    uint64_t at = 0;
    for (size_t i = 0; i < n && taken[i].lo < at + bytes; i++)
        if (taken[i].hi > at)
            at = taken[i].hi;
    return at + bytes <= cap ? at : UINT64_MAX;
}

static bool share_partitions(const nx_prog_alloc *a, const nx_prog_alloc *b)
{
    return a->first_partition < b->first_partition + b->partition_count &&
           b->first_partition < a->first_partition + a->partition_count;
}

int sy_layout_sbuf(sy_builder *b, uint64_t capacity)
{
    size_t m = b->n_allocs;
    graph g = {0};
    /* before[i * m + j]: allocation i is freed before allocation j goes live */
    unsigned char *before = calloc(m * m + 1, 1);
    bool *unbounded = calloc(m + 1, sizeof *unbounded);
    span *taken = calloc(m + 1, sizeof *taken);
    uint64_t *start = calloc(m + 1, sizeof *start);
    int rc = -1;
    if (!before || !unbounded || !taken || !start || graph_build(b, &g) != 0)
        goto out;
    for (size_t i = 0; i < m; i++) {
        const nx_prog_alloc *a = &b->allocs[i];
        uint32_t live = instr_step(b, a->live_pc), fr = instr_step(b, a->free_pc);
        if (a->memory != NX_MEM_SBUF || live == SY_NONE || fr == SY_NONE)
            continue;   /* PSUM, or no instruction to name: no address */
        walk(&g, live);
        unbounded[i] = g.stamp[fr] != g.gen;
        walk(&g, fr);
        for (size_t j = 0; j < m; j++) {
            uint32_t lj = instr_step(b, b->allocs[j].live_pc);
            before[i * m + j] = lj != SY_NONE && lj != fr && g.stamp[lj] == g.gen;
        }
    }
    for (size_t i = 0; i < m; i++) {
        nx_prog_alloc *a = &b->allocs[i];
        a->end_address = 0;
        if (a->memory != NX_MEM_SBUF || instr_step(b, a->live_pc) == SY_NONE || instr_step(b, a->free_pc) == SY_NONE)
            continue;
        size_t n = 0;
        for (size_t j = 0; j < i; j++) {
            const nx_prog_alloc *x = &b->allocs[j];
            bool apart = (before[i * m + j] && !unbounded[i]) || (before[j * m + i] && !unbounded[j]);
            if (x->end_address != 0 && share_partitions(a, x) && !apart)
                taken[n++] = (span){start[j], x->end_address};
        }
        uint64_t at = first_fit(taken, n, a->bytes_per_partition, capacity);
        if (at != UINT64_MAX) {
            start[i] = at;
            a->end_address = (uint32_t)(at + a->bytes_per_partition);
        }
    }
    rc = 0;
out:
    graph_free(&g);
    free(before);
    free(unbounded);
    free(taken);
    free(start);
    return rc;
}
