/*
 * dictionary.c — the writer's per-chunk dictionary: distinct values in
 * insertion order (their PLAIN forms are the dictionary page body), found
 * through an open-addressing hash table. A slot keeps the full hash and the
 * entry's length next to its number, so most probes touch one cache line and
 * never the entry bytes. See writer_internal.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/writer_internal.h"

void dict_clear(dictionary *d)
{
    d->plain.len = 0;
    if (d->slots && d->n_entries)
        memset(d->slots, 0, d->n_slots * sizeof *d->slots);
    d->n_entries = 0;
}

void dict_free(dictionary *d)
{
    nx_strbuf_free(&d->plain);
    free(d->slots);
    free(d->offsets);
    memset(d, 0, sizeof *d);
}

int dict_reserve(dictionary *d, size_t more)
{
    if (d->n_entries + more > d->cap_entries) {
        size_t cap = d->cap_entries ? d->cap_entries : 1024;
        while (cap < d->n_entries + more)
            cap *= 2;
        uint32_t *o = realloc(d->offsets, cap * sizeof *o);
        if (!o)
            return -1;
        d->offsets = o;
        d->cap_entries = cap;
    }
    if ((d->n_entries + more) * 2 <= d->n_slots)
        return 0;
    size_t n_slots = d->n_slots ? d->n_slots : 2048;
    while (n_slots < (d->n_entries + more) * 2)
        n_slots *= 2;
    dict_slot *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < d->n_slots; i++) {
        if (!d->slots[i].entry1)
            continue;
        size_t j = d->slots[i].hash & (n_slots - 1);
        while (slots[j].entry1)
            j = (j + 1) & (n_slots - 1);
        slots[j] = d->slots[i];
    }
    free(d->slots);
    d->slots = slots;
    d->n_slots = n_slots;
    return 0;
}

/* by_hash: the hash alone tells values apart (dict_lookup_int()). */
static inline int64_t lookup(dictionary *d, uint64_t hash, const void *plain, uint32_t n, bool by_hash)
{
    size_t mask = d->n_slots - 1;
    size_t i = hash & mask;
    for (;;) {
        dict_slot *s = &d->slots[i];
        if (!s->entry1)
            break;
        if (s->hash == hash && s->plain_len == n &&
            (by_hash || memcmp(d->plain.data + d->offsets[s->entry1 - 1], plain, n) == 0))
            return s->entry1 - 1;
        i = (i + 1) & mask;
    }
    /* A new entry. Growing moves the slots, so find the empty one again. */
    if ((d->n_entries + 1) * 2 > d->n_slots || d->n_entries + 1 > d->cap_entries) {
        if (d->n_entries >= UINT32_MAX - 1 || dict_reserve(d, 1) != 0)
            return -1;
        mask = d->n_slots - 1;
        for (i = hash & mask; d->slots[i].entry1; i = (i + 1) & mask)
            ;
    }
    uint32_t e = (uint32_t)d->n_entries++;
    d->offsets[e] = (uint32_t)d->plain.len;
    d->slots[i] = (dict_slot){hash, e + 1, n};
    nx_strbuf_append(&d->plain, plain, n);
    return d->plain.failed ? -1 : (int64_t)e;
}

int64_t dict_lookup(dictionary *d, uint64_t hash, const void *plain, uint32_t n)
{
    return lookup(d, hash, plain, n, false);
}

int64_t dict_lookup_int(dictionary *d, uint64_t hash, const void *plain, uint32_t n)
{
    return lookup(d, hash, plain, n, true);
}
