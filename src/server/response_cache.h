/*
 * response_cache.h — recently built JSON responses, per profile, shared by the
 * server's threads.
 *
 * Building a response can mean scanning a whole table (the tracks of a profile,
 * a zoomed-out timeline), and a viewer asks the same questions again: the full
 * view after zooming in, the tracks on every reload. Entries are keyed by the
 * profile directory's path, by the fingerprint of every file in it (below) taken
 * when the request arrived, and by a request key the caller builds from its
 * canonical parameters. A table rewritten in place (same inode) changes its
 * file's size or times, so the next request misses the old entry; a re-processed
 * profile is a new directory of new files. (A rewrite that keeps a file's size and
 * lands within the same tick of the file system's clock as the previous one would
 * go unseen: the limit of any identity read with stat.) At most 64 entries and
 * 64 MiB of JSON; the least recently used go first.
 */
#ifndef NX_RESPONSE_CACHE_H
#define NX_RESPONSE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

/* The fingerprint of profile directory dir: for each entry that is not a directory
 * (nor the annotations file, profile/annotations.h, which no cached answer reads),
 * in name order, its name, device, inode, size, and modification and change times
 * in nanoseconds (lstat'ed: a link is fingerprinted, not followed). Every table file
 * (T.parquet, T_<n>.parquet), timeline index and side file an answer reads is
 * among them. malloc'd text; NULL when dir cannot be listed or out of memory (the
 * answer is then built and not kept). */
char *nx_response_cache_fingerprint(const char *dir);
/* On a hit appends the cached JSON to b and returns true. */
bool nx_response_cache_get(const char *dir, const char *fingerprint, const char *key, nx_strbuf *b);
/* Stores a copy of json (skipped when larger than a quarter of the budget or out of memory). */
void nx_response_cache_put(const char *dir, const char *fingerprint, const char *key, const char *json, size_t len);
void nx_response_cache_clear(void);

#endif
