/* ring.c — growth of nx_ring (rules in ring.h). */
#include "util/ring.h"

#include <stdlib.h>
#include <string.h>

int nx_ring_push(nx_ring *r, const void *e, size_t size)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        char *v = malloc(cap * size);
        if (!v)
            return -1;
        /* unroll: the head moves to slot 0 */
        for (size_t i = 0; i < r->n; i++)
            memcpy(v + i * size, nx_ring_at(r, i), size);
        free(r->v);
        r->v = v;
        r->cap = cap;
        r->head = 0;
    }
    r->size = size;
    memcpy(r->v + ((r->head + r->n) & (r->cap - 1)) * size, e, size);
    r->n++;
    return 0;
}

void nx_ring_free_array(nx_ring *rings, size_t n)
{
    for (size_t i = 0; rings && i < n; i++)
        free(rings[i].v);
    free(rings);
}
