/*
 * strmap.c — string-keyed map (see strmap.h); keys hashed with xxHash.
 */
#include "util/strmap.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/text.h"

static size_t find(const nx_strmap_slot *slots, size_t cap, const char *key, size_t len, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    while (slots[i].key && !(slots[i].hash == h && slots[i].len == len && memcmp(slots[i].key, key, len) == 0))
        i = (i + 1) & (cap - 1);
    return i;
}

bool nx_strmap_get(const nx_strmap *m, const char *key, size_t len, uint64_t *value)
{
    if (!m->cap)
        return false;
    size_t i = find(m->slots, m->cap, key, len, XXH3_64bits(key, len));
    if (!m->slots[i].key)
        return false;
    *value = m->slots[i].value;
    return true;
}

static int grow(nx_strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    nx_strmap_slot *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            s[find(s, cap, m->slots[i].key, m->slots[i].len, m->slots[i].hash)] = m->slots[i];
    free(m->slots);
    m->slots = s;
    m->cap = cap;
    return 0;
}

int nx_strmap_put(nx_strmap *m, const char *key, size_t len, uint64_t value)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
        return -1;
    char *k = nx_text_dup(key, len);
    if (!k)
        return -1;
    uint64_t h = XXH3_64bits(key, len);
    size_t i = find(m->slots, m->cap, key, len, h);
    m->slots[i] = (nx_strmap_slot){.key = k, .len = len, .hash = h, .value = value};
    m->n++;
    return 0;
}

void nx_strmap_free(nx_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}
