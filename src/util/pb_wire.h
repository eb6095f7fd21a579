/*
 * pb_wire.h — a strict reader of the protobuf wire format over bytes in memory
 * (a mapped file): one field at a time, no message tree, no generated code.
 *
 * Why our own: the only protobuf file nxprof reads (XSpace, capture/xspace.h)
 * uses four wire types and a fixed nesting of messages, so a cursor that yields
 * (field number, wire type, value) is all a reader needs; Debian's protobuf-c
 * would add protoc-c to the build and unpack whole messages into trees.
 *
 * A cursor covers the bytes [pos, end) of one message inside `base`; offsets
 * are from `base`, so an error can name the byte in the file. Every length is
 * checked against the enclosing message before it is used: a field never reads
 * past its message, nor a message past its parent. Refused: a varint longer
 * than 10 bytes or above 2^64-1, field number 0 or above 2^29-1, the group wire types (3, 4:
 * proto3 never writes them) and the undefined ones (6, 7), a truncated value.
 */
#ifndef NX_UTIL_PB_WIRE_H
#define NX_UTIL_PB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    NX_PB_VARINT = 0,
    NX_PB_I64 = 1,
    NX_PB_LEN = 2,
    NX_PB_I32 = 5
};

typedef struct nx_pb_cursor {
    const uint8_t *base;
    size_t pos;          /* next byte to read */
    size_t end;          /* end of the message */
} nx_pb_cursor;

typedef struct nx_pb_field {
    uint32_t number;
    int wire;            /* NX_PB_* */
    size_t offset;       /* of the field's tag */
    uint64_t u;          /* VARINT, I64 and I32 values */
    size_t start, len;   /* LEN: the payload is base[start, start + len) */
} nx_pb_field;

/* The cursor over a whole buffer. */
nx_pb_cursor nx_pb_cursor_init(const void *base, size_t size);

/* The cursor over a LEN field's payload, as a message. */
nx_pb_cursor nx_pb_sub(const nx_pb_cursor *c, const nx_pb_field *f);

/* Reads the next field. Returns 1 with *f filled, 0 at the end of the message,
 * or -1 with *why (a static message) and *at (the offending byte's offset). */
int nx_pb_next(nx_pb_cursor *c, nx_pb_field *f, const char **why, size_t *at);

/* True when s[0..n) is well-formed UTF-8 (proto3 `string` fields must be). */
bool nx_pb_utf8_valid(const uint8_t *s, size_t n);

#endif
