/*
 * thrift.h — the Thrift compact protocol, as far as Parquet metadata needs it.
 *
 * Writing appends to an nx_strbuf; the caller nests struct begin/end calls and
 * the writer tracks field-id deltas. Reading walks a bounded byte range: every
 * varint, length and list size is checked against the bytes left, nesting is
 * capped, and the first problem sets `failed` and an error message (with the
 * byte offset), after which every call returns a neutral value. Callers can
 * therefore decode a whole struct and check `failed` once.
 */
#ifndef NX_THRIFT_H
#define NX_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/* Compact protocol type ids. */
enum {
    NXTH_STOP = 0,
    NXTH_BOOL_TRUE = 1,
    NXTH_BOOL_FALSE = 2,
    NXTH_BYTE = 3,
    NXTH_I16 = 4,
    NXTH_I32 = 5,
    NXTH_I64 = 6,
    NXTH_DOUBLE = 7,
    NXTH_BINARY = 8,
    NXTH_LIST = 9,
    NXTH_SET = 10,
    NXTH_MAP = 11,
    NXTH_STRUCT = 12
};

#define NXTH_MAX_DEPTH 32

/* ---- writing ---- */
typedef struct nxth_writer {
    nx_strbuf *out;
    int depth;
    int16_t last_id[NXTH_MAX_DEPTH];
} nxth_writer;

void nxth_writer_init(nxth_writer *w, nx_strbuf *out);
void nxth_struct_begin(nxth_writer *w);          /* top-level or list element struct */
void nxth_struct_end(nxth_writer *w);            /* writes STOP */
void nxth_field_struct_begin(nxth_writer *w, int16_t id);
void nxth_field_i32(nxth_writer *w, int16_t id, int32_t v);
void nxth_field_i64(nxth_writer *w, int16_t id, int64_t v);
void nxth_field_bool(nxth_writer *w, int16_t id, bool v);
void nxth_field_binary(nxth_writer *w, int16_t id, const void *p, size_t len);
void nxth_field_string(nxth_writer *w, int16_t id, const char *s);
void nxth_field_list_begin(nxth_writer *w, int16_t id, uint8_t elem_type, size_t n);
/* List elements. */
void nxth_list_i32(nxth_writer *w, int32_t v);
void nxth_list_i64(nxth_writer *w, int64_t v);
void nxth_list_bool(nxth_writer *w, bool v);
void nxth_list_binary(nxth_writer *w, const void *p, size_t len);

/* ---- reading ---- */
typedef struct nxth_reader {
    const uint8_t *start, *p, *end;
    uint64_t base_offset;          /* file offset of start, for messages */
    int depth;
    int16_t last_id[NXTH_MAX_DEPTH];
    bool failed;
    char error[200];
} nxth_reader;

void nxth_reader_init(nxth_reader *r, const void *data, size_t len, uint64_t base_offset);
/* Sets failed with a message naming the current file offset; keeps the first. */
void nxth_fail(nxth_reader *r, const char *what);
/* Enter a struct (top level or a struct-typed field/element). */
void nxth_read_struct_begin(nxth_reader *r);
void nxth_read_struct_end(nxth_reader *r);
/* Next field header: returns false at STOP (or on failure). */
bool nxth_read_field(nxth_reader *r, int16_t *id, uint8_t *type);
/* Values. `type` is the field's (or list element's) type; a mismatch fails. */
int32_t nxth_read_i32(nxth_reader *r, uint8_t type);
int64_t nxth_read_i64(nxth_reader *r, uint8_t type);
double nxth_read_double(nxth_reader *r, uint8_t type);
/* For a field, the value is in the type; for a list element, pass in_list. */
bool nxth_read_bool(nxth_reader *r, uint8_t type, bool in_list);
/* Points into the input; *len bytes (not NUL-terminated). */
const uint8_t *nxth_read_binary(nxth_reader *r, uint8_t type, uint32_t *len);
/* List header: element type and count (count is checked against bytes left). */
uint32_t nxth_read_list_begin(nxth_reader *r, uint8_t type, uint8_t *elem_type);
/* Skip a value of any type (bounded depth). */
void nxth_skip(nxth_reader *r, uint8_t type);
/* Bytes consumed so far. */
size_t nxth_reader_pos(const nxth_reader *r);

#endif
