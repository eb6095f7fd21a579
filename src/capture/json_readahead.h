/*
 * json_readahead.h — reads a plain or gzip'd text file (util/gzip_input) on a
 * thread of its own, a few blocks ahead of its reader, so that the read system
 * calls and the decompression run on one core while the tokenizer scans on
 * another (the Chrome reader, chrome_trace.c).
 *
 * Memory: `blocks` blocks of `block` bytes, whatever the file's size. Bytes come
 * out in file order; an error of the file (a read error, a corrupt or truncated
 * gzip stream) comes out after every byte before it, with gzip_input's message.
 *
 * Threads: one reader thread calls nx_readahead_read; nx_readahead_stop may be
 * called at any time by that thread (also before the end of the file) and
 * joins the worker.
 */
#ifndef NX_JSON_READAHEAD_H
#define NX_JSON_READAHEAD_H

#include <stddef.h>

#include "util/gzip_input.h"
#include "util/error.h"

typedef struct nx_readahead nx_readahead;

/* Starts reading src (which stays the caller's, to close after
 * nx_readahead_stop). NULL with why filled when out of memory or threads. */
nx_readahead *nx_readahead_start(nx_gzip_input *src, size_t block, unsigned blocks, nx_error *why);

/* Up to cap bytes into dst, waiting for the worker when it has none ready: the
 * count (at least 1), 0 at the end of the file, or -1 with why filled. */
long nx_readahead_read(nx_readahead *ra, char *dst, size_t cap, nx_error *why);

/* Stops the worker, joins it and frees ra (NULL is ignored). */
void nx_readahead_stop(nx_readahead *ra);

#endif
