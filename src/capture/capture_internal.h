/*
 * capture_internal.h — helpers shared by the capture readers and writers, in
 * src/capture and in the simulator's writers in src/synth (not for consumers of
 * captures): little-endian field access, error and warning formatting,
 * whole-file I/O.
 */
#ifndef NX_CAPTURE_INTERNAL_H
#define NX_CAPTURE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "capture/capture.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the capture codecs copy little-endian fields as they lie in memory: little-endian hosts only"
#endif

static inline uint16_t nx_get_u16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t nx_get_u32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t nx_get_u64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline int32_t nx_get_i32(const unsigned char *p) { int32_t v; memcpy(&v, p, 4); return v; }
static inline int64_t nx_get_i64(const unsigned char *p) { int64_t v; memcpy(&v, p, 8); return v; }
static inline void nx_put_u16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void nx_put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void nx_put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void nx_put_i32(unsigned char *p, int32_t v) { memcpy(p, &v, 4); }
static inline void nx_put_i64(unsigned char *p, int64_t v) { memcpy(p, &v, 8); }

/* Fills err with "<path>: <formatted>" and returns -1. */
int nx_cap_fail(nx_cap_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, with "offset <n>: " after the path. */
int nx_cap_fail_at(nx_cap_error *err, const char *path, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Calls the warner (if any) with a formatted message. */
void nx_cap_warn(const nx_cap_warner *w, const char *path, uint64_t where, const char *category,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Reads the whole of `path` into a malloc'd buffer. */
int nx_cap_read_file(const char *path, unsigned char **data, size_t *size, nx_cap_error *err);
/* Writes `size` bytes to `path` (created or truncated). */
int nx_cap_write_file(const char *path, const void *data, size_t size, nx_cap_error *err);
/* write(2) all of buf to fd; -1 with errno on failure. */
int nx_cap_write_all(int fd, const void *buf, size_t n);

/* The header line (column names, TAB-separated) of a system capture file kind
 * (an nx_sys_kind); defined in system_read.c. */
const char *nx_sys_columns(int kind);

/* The last path component (no allocation). */
const char *nx_cap_basename(const char *path);
/* malloc'd "dir/name"; NULL when out of memory. */
char *nx_cap_join(const char *dir, const char *name);

#endif
