/*
 * open_regular.h — opens an input file only when it is a regular file, never
 * blocking in open().
 *
 * Why: a capture is a directory anyone can write to. open(O_RDONLY) of a FIFO
 * named trace.json blocks until a writer appears, forever, and no signal
 * handler that only sets a flag can end that wait; a character device can
 * block or stream without end; a directory reads as an error much later.
 * Every reader of capture input opens its files here: O_NONBLOCK makes open()
 * of a FIFO return at once, fstat() on the descriptor (not on the path, which
 * could be swapped in between) decides, and O_NONBLOCK is cleared again so the
 * reads of the regular file behave as usual.
 */
#ifndef NX_UTIL_OPEN_REGULAR_H
#define NX_UTIL_OPEN_REGULAR_H

#include <stddef.h>
#include <sys/stat.h>
#include "util/error.h"

/* Opens path read-only (close-on-exec). The descriptor, with *st filled when st
 * is not NULL; or -1 with msg filled (no path: the caller names the file):
 * "cannot open: <reason>", or "not a regular file (a FIFO)" and the like for a
 * FIFO, character or block device, socket or directory. */
int nx_open_regular(const char *path, struct stat *st, nx_error *msg);

#endif
