/*
 * capture_util.h — helpers shared by the capture readers and writers, in
 * src/capture and in the simulator's writers in src/synth (not for consumers of
 * captures): error and warning formatting, whole-file I/O; little-endian field
 * access is util/bytes.h.
 */
#ifndef NX_CAPTURE_UTIL_H
#define NX_CAPTURE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "capture/capture.h"
#include "util/bytes.h"

/* Fills err with "<path>: <formatted>" and returns -1. */
int nx_cap_fail(nx_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, with "offset <n>: " after the path. */
int nx_cap_fail_at(nx_error *err, const char *path, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Opens capture input `path` (util/open_regular.h: a regular file, never
 * blocking on a FIFO): the descriptor, *st filled when not NULL; or -1 with err
 * naming the file. */
int nx_cap_open_input(const char *path, struct stat *st, nx_error *err);

/* Reads the whole of `path` (nx_cap_open_input) into a malloc'd buffer. */
int nx_cap_read_file(const char *path, unsigned char **data, size_t *size, nx_error *err);
/* Writes `size` bytes to `path` (created or truncated). */
int nx_cap_write_file(const char *path, const void *data, size_t size, nx_error *err);
/* write(2) all of buf to fd; -1 with errno on failure. */
int nx_cap_write_all(int fd, const void *buf, size_t n);

/* The header line (column names, TAB-separated) of a system capture file kind
 * (an nx_sys_kind); defined in system_read.c. */
const char *nx_sys_columns(int kind);

/* Whether s ends with suffix. */
bool nx_cap_ends_with(const char *s, const char *suffix);
/* The last path component (no allocation). */
const char *nx_cap_basename(const char *path);
/* malloc'd "dir/name"; NULL when out of memory. */
char *nx_cap_join(const char *dir, const char *name);

#endif
