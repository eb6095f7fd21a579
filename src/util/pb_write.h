/*
 * pb_write.h — a writer of the protobuf wire format into a growable buffer
 * (util/strbuf.h): the counterpart of pb_wire.h, for the Perfetto trace export
 * (query/perfetto_rows.c). Fields are appended in the order written; a nested
 * message is opened with nx_pbw_begin, which writes its tag and reserves its
 * length, and closed with nx_pbw_end, which fills the length in.
 *
 * Lengths of nested messages take a fixed NX_PBW_LEN_BYTES bytes: a varint
 * padded with continuation bytes (0x80), which the wire format allows and every
 * protobuf parser reads (Perfetto's own writer, protozero, does the same), so a
 * message need not be built twice. A nested message is thus at most 2^28 - 1
 * bytes; nx_pbw_end marks the buffer failed past that. Allocation failures are
 * sticky (nx_strbuf_failed).
 */
#ifndef NX_UTIL_PB_WRITE_H
#define NX_UTIL_PB_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

#define NX_PBW_LEN_BYTES 4

/* A varint field (wire type 0): uint64, int64 (two's complement, 10 bytes when
 * negative), bool, enum. */
void nx_pbw_varint(nx_strbuf *b, uint32_t field, uint64_t v);
/* A 64-bit field (wire type 1): fixed64 / double. */
void nx_pbw_fixed64(nx_strbuf *b, uint32_t field, uint64_t v);
void nx_pbw_double(nx_strbuf *b, uint32_t field, double v);
/* A length-delimited field (wire type 2): string, bytes. */
void nx_pbw_bytes(nx_strbuf *b, uint32_t field, const void *data, size_t len);
/* Opens nested message `field`; returns the handle nx_pbw_end takes. */
size_t nx_pbw_begin(nx_strbuf *b, uint32_t field);
void nx_pbw_end(nx_strbuf *b, size_t handle);
/* Bytes of the varint encoding of v into out (>= 10 bytes); returns the count. */
size_t nx_pbw_put_varint(uint8_t *out, uint64_t v);

#endif
