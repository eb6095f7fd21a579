/*
 * strmap.h — a map from byte strings to 64-bit values (open addressing, keys
 * copied), for the few thousand names a writer interns (query/perfetto_rows.c:
 * tracks, event names, argument names). Grows by doubling at 1/2 load.
 */
#ifndef NX_UTIL_STRMAP_H
#define NX_UTIL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nx_strmap_slot {
    char *key;              /* malloc'd copy; NULL: empty slot */
    size_t len;
    uint64_t hash, value;
} nx_strmap_slot;

typedef struct nx_strmap {
    nx_strmap_slot *slots;
    size_t cap, n;
} nx_strmap;

/* The value of key into *value: true when present. */
bool nx_strmap_get(const nx_strmap *m, const char *key, size_t len, uint64_t *value);
/* Adds key (absent) with value. 0, or -1 when out of memory (m unchanged). */
int nx_strmap_put(nx_strmap *m, const char *key, size_t len, uint64_t value);
void nx_strmap_free(nx_strmap *m);

#endif
