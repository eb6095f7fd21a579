/*
 * bytes.h — little-endian fields of the binary files nxprof reads and writes (the
 * capture formats, the timeline index): fixed-size copies at any alignment.
 * Those files are little-endian and so are the hosts nxprof builds on (checked
 * here at compile time), so a field is copied as it lies in memory.
 */
#ifndef NX_UTIL_BYTES_H
#define NX_UTIL_BYTES_H

#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nxprof's binary formats are copied as they lie in memory: little-endian hosts only"
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

#endif
