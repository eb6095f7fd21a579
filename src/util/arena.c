/* arena.c — see arena.h. */
#include "util/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct nx_arena_block {
    nx_arena_block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

void *nx_arena_alloc(nx_arena *a, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX - align)
        return NULL;
    size = (size + align - 1) & ~(align - 1);
    nx_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = a->block_size ? a->block_size : 64 * 1024;
        if (cap < size)
            cap = size;
        if (cap > SIZE_MAX - sizeof *b)
            return NULL;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    return p;
}

void *nx_arena_calloc(nx_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = nx_arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *nx_arena_strndup(nx_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = nx_arena_alloc(a, len + 1);
    if (p) {
        if (len)
            memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

void nx_arena_free(nx_arena *a)
{
    nx_arena_block *b = a->head;
    while (b) {
        nx_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}
