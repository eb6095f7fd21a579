/*
 * json_scan.h — a pull tokenizer for JSON text read in chunks, written for
 * trace files (the Chrome reader, chrome_trace.c): each call returns the next
 * token, so the reader's state machine drives the scan instead of receiving
 * callbacks, and the common cases (plain ASCII strings, short numbers, runs of
 * indentation) cost a few instructions per byte.
 *
 * Grammar: RFC 8259, checked in full (structure, literals, number syntax,
 * escapes, unescaped control bytes in strings), with two leniencies the trace
 * formats need: UTF-8 is not validated (a string's bytes are handed over as
 * they are; the reader repairs what it keeps, util/json.h), and the input may
 * end anywhere: NX_JSON_EOF says where, and nx_json_scan_complete() whether the
 * top-level value was finished (a bare-array trace may lack its ']').
 * Nesting deeper than max_depth is an error, so a hostile "[[[[..." costs no
 * memory.
 *
 * Tokens: strings and keys are decoded (escapes resolved; "\u0000" gives a NUL
 * byte, so use len; a surrogate pair gives its 4-byte UTF-8 form; a lone
 * surrogate gives U+FFFD); numbers are their source text, validated, so that
 * callers can convert them exactly. A token's s is valid until the next call.
 *
 * Memory: one buffer of the chunk size, grown (doubling) only while a single
 * token is longer than it; never the whole text.
 *
 * Errors: NX_JSON_FAIL with err (the message; syntax errors begin "invalid
 * JSON: ") and err_offset (the byte offset in the text just past the byte at
 * fault), or read_failed set when the read function failed (err holds its
 * message).
 */
#ifndef NX_JSON_SCAN_H
#define NX_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "util/error.h"

typedef enum nx_json_kind {
    NX_JSON_NULL,
    NX_JSON_BOOL,
    NX_JSON_NUMBER,
    NX_JSON_STRING,
    NX_JSON_START_MAP,
    NX_JSON_KEY,
    NX_JSON_END_MAP,
    NX_JSON_START_ARRAY,
    NX_JSON_END_ARRAY,
    NX_JSON_EOF,    /* the input ended (a token cut short by it is dropped) */
    NX_JSON_FAIL
} nx_json_kind;

typedef struct nx_json_token {
    nx_json_kind kind;
    const char *s;    /* string, key (decoded) or number (source text) */
    size_t len;
    bool b;           /* a boolean's value */
    bool plain;       /* string or key: no escapes and only bytes 0x20..0x7e, so
                         its JSON literal is s between quotes */
    uint64_t offset;  /* text offset of the token's first byte */
    uint64_t end;     /* text offset just past it (at EOF: the text's length) */
} nx_json_token;

/* Reads up to cap bytes into dst: the count, 0 at the end of the input, or -1
 * with why filled. */
typedef long (*nx_json_read_fn)(void *ctx, char *dst, size_t cap, nx_error *why);

typedef struct nx_json_scan {
    nx_json_read_fn read;
    void *ctx;
    char *buf;
    size_t size, pos, end;   /* buf[pos..end) is unread */
    bool eof;
    uint64_t base;           /* text offset of buf[0] */
    unsigned depth, max_depth;
    unsigned char *stack;    /* per open container: 1 object, 0 array */
    int state;
    nx_strbuf text;          /* decoded strings that held escapes */
    bool read_failed;
    uint64_t err_offset;
    char err[256];
} nx_json_scan;

/* chunk: the first buffer's size (at least 1). Returns 0, or -1 when out of
 * memory (err filled). Pass the text's first bytes to skip (a BOM) with
 * nx_json_scan_skip_prefix before the first token. */
int nx_json_scan_init(nx_json_scan *s, size_t chunk, unsigned max_depth, nx_json_read_fn read, void *ctx);

/* Passes over a leading prefix[0..n) of the text when the text starts with it
 * (offsets still count it): true if it did. A read error shows at the next
 * nx_json_scan_next. */
bool nx_json_scan_skip_prefix(nx_json_scan *s, const char *prefix, size_t n);

nx_json_kind nx_json_scan_next(nx_json_scan *s, nx_json_token *t);

/* The fast path for a value kept as compact text (a trace event's "args"):
 * where a value is due (after a key: its ':' is passed over here) and the
 * value is an object or array held whole in the buffer, with only plain
 * strings (as above) and a compact form of at most limit bytes, appends that
 * compact form (whitespace outside strings dropped: the same text the token
 * path re-serialises) to out, moves the scan past it and returns true, with
 * *end its text offset. Otherwise returns false with nothing consumed, and the
 * caller reads the value token by token: so anything unusual, malformed text
 * included, takes the token path and gets its error. */
bool nx_json_scan_copy_value(nx_json_scan *s, nx_strbuf *out, size_t limit, uint64_t *end);

/* True once the top-level value has been completed. */
bool nx_json_scan_complete(const nx_json_scan *s);

void nx_json_scan_free(nx_json_scan *s);

#endif
