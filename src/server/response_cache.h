/*
 * response_cache.h — recently built JSON responses, per profile, shared by the
 * server's threads.
 *
 * Building a response can mean scanning a whole table (the tracks of a profile,
 * a zoomed-out timeline), and a viewer asks the same questions again: the full
 * view after zooming in, the tracks on every reload. Entries are keyed by the
 * profile directory's path and identity (device, inode, modification time: a
 * re-processed profile is published as a new directory, so it never hits an old
 * entry) and by a request key the caller builds from its canonical parameters.
 * At most 64 entries and 64 MiB of JSON; the least recently used go first.
 */
#ifndef NX_RESPONSE_CACHE_H
#define NX_RESPONSE_CACHE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "util/strbuf.h"

/* On a hit appends the cached JSON to b and returns true. */
bool nx_response_cache_get(const char *dir, const struct stat *st, const char *key, nx_strbuf *b);
/* Stores a copy of json (skipped when larger than a quarter of the budget or out of memory). */
void nx_response_cache_put(const char *dir, const struct stat *st, const char *key, const char *json, size_t len);
void nx_response_cache_clear(void);

#endif
