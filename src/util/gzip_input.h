/*
 * gzip_input.h — a file read as plain bytes, or as the gzip stream it holds.
 *
 * A file that starts with the gzip magic (1f 8b) is read as the concatenation of
 * its gzip members (RFC 1952 allows several; `cat a.gz b.gz` makes such a file);
 * any other file is read as it is. Strict where zlib's gzread is lenient: bytes
 * after a member that do not start another member are an error naming their
 * compressed offset (gzread drops them silently, so a damaged or appended-to
 * file read as if whole), and so is a stream that ends inside a member.
 *
 * Errors fill a caller's buffer with "<what>" text only (no path: the caller
 * prefixes its file name); every read error carries the system's reason.
 */
#ifndef NX_GZIP_INPUT_H
#define NX_GZIP_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

typedef struct nx_gzip_input nx_gzip_input;

/* Opens path, a regular file (util/open_regular.h: never blocks on a FIFO). NULL
 * with msg filled ("cannot open: <reason>", "not a regular file (a FIFO)", ...,
 * or "out of memory"). */
nx_gzip_input *nx_gzip_input_open(const char *path, nx_error *msg);

/* Reads up to size bytes of the file's content (decompressed when gzip) into buf:
 * the count read, 0 at the end of the content, or -1 with msg filled. Once it
 * has failed it keeps failing with the same message. */
long nx_gzip_input_read(nx_gzip_input *in, void *buf, size_t size, nx_error *msg);

/* Whether the file is gzip (known from the first read on). */
bool nx_gzip_input_is_gzip(const nx_gzip_input *in);

/* Compressed bytes consumed so far (the file offset of the next byte to decode). */
uint64_t nx_gzip_input_offset(const nx_gzip_input *in);

void nx_gzip_input_close(nx_gzip_input *in);

#endif
