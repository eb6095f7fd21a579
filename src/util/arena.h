/*
 * arena.h — a bump allocator for data that lives and dies together (a decoded
 * Parquet footer, one batch's buffers). Allocation is a pointer bump; freeing
 * is one call for everything. Returns NULL when memory runs out.
 */
#ifndef NX_ARENA_H
#define NX_ARENA_H

#include <stddef.h>

typedef struct nx_arena_block nx_arena_block;
typedef struct nx_arena {
    nx_arena_block *head;
    size_t block_size;   /* default size of new blocks; 0 means 64 KiB */
} nx_arena;

#define NX_ARENA_INIT {NULL, 0}

/* size bytes aligned for any type; NULL on overflow or out of memory. */
void *nx_arena_alloc(nx_arena *a, size_t size);
/* n * size bytes, zeroed; NULL on overflow or out of memory. */
void *nx_arena_calloc(nx_arena *a, size_t n, size_t size);
/* Copy of s[0..len) plus a terminating NUL. */
char *nx_arena_strndup(nx_arena *a, const char *s, size_t len);
void nx_arena_free(nx_arena *a);

#endif
