/*
 * ring.h — a growable FIFO of fixed-size elements in one circular array, for
 * the open DMA blocks each sink follows per (trace, pcore, queue): pushes at
 * the tail, pops at the head, peeks anywhere between, all O(1); growth doubles
 * and unrolls the circle, so elements never move otherwise.
 *
 * A zeroed nx_ring is empty and valid; the element size is fixed by the first
 * push (every push must pass the same size). Pointers returned by
 * nx_ring_at() stay valid until the next push.
 */
#ifndef NX_RING_H
#define NX_RING_H

#include <stddef.h>

typedef struct nx_ring {
    char *v;
    size_t head, n, cap, size;       /* cap: 0 or a power of two, so positions wrap with a mask */
} nx_ring;

/* Appends the `size` bytes at e. 0, or -1 when out of memory (ring unchanged). */
int nx_ring_push(nx_ring *r, const void *e, size_t size);
/* Frees rings[0..n) and the array rings itself (which may be NULL). */
void nx_ring_free_array(nx_ring *rings, size_t n);

/* Element k (0 = head, k < r->n). */
static inline void *nx_ring_at(const nx_ring *r, size_t k)
{
    return r->v + ((r->head + k) & (r->cap - 1)) * r->size;
}

/* Drops the head (r->n > 0). */
static inline void nx_ring_pop(nx_ring *r)
{
    r->head = (r->head + 1) & (r->cap - 1);
    r->n--;
}

#endif
