/*
 * json.h — the one place JSON text is escaped and scanned.
 *
 * Escaping (nx_json_put_string, nx_json_escape, nx_json_escape_char): a string
 * literal, quotes included, that any JSON parser (and YAML, as a double-quoted
 * scalar) accepts:
 *   - '"' and '\\' as \" and \\; '\n', '\r', '\t' as \n, \r, \t; every other
 *     byte below 0x20, and DEL (0x7f), as \u00XX (lower-case hex);
 *   - valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
 *     U+10FFFF) is copied as it is;
 *   - invalid UTF-8: each byte that does not start a complete valid sequence
 *     becomes \ufffd (U+FFFD REPLACEMENT CHARACTER), and the next byte is
 *     looked at afresh, so the output is always valid JSON and the text around
 *     the bad byte is kept;
 *   - a NUL byte inside [s, s+len) is \u0000.
 *
 * Numbers (nx_json_put_i64, nx_json_put_f64, nx_json_put_f32), the one
 * convention of every JSON the product writes (HTTP API, CLI --format json,
 * JSON exports):
 *   - integers exact; for the HTTP API past +-2^53 as decimal strings;
 *   - floats as the shortest text that reads back as the same double or float
 *     (util/float_text.h), e.g. 0.1, 1e+300;
 *   - NaN and infinities as null: RFC 8259 has no such numbers, and null is
 *     what JSON.parse, Python's json and pandas read as a missing number
 *     (a string "nan" would turn a numeric column into text).
 *
 * Scanning (nx_json_member, nx_json_string_member): the value of one member of
 * a JSON object's top level, found without building a tree. The text is
 * trusted to be JSON (it was produced by a parser or by the escaper above);
 * whitespace between tokens is allowed. A malformed text gives "not found",
 * never a read past its end.
 */
#ifndef NX_JSON_H
#define NX_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/float_text.h"
#include "util/strbuf.h"

/* The most bytes nx_json_escape_char writes for one character. */
#define NX_JSON_ESCAPE_MAX 6

/* Escapes the character at s[0..len) (len > 0) into out (NX_JSON_ESCAPE_MAX
 * bytes), without quotes; returns the bytes written, *used the input consumed. */
size_t nx_json_escape_char(const char *s, size_t len, char *out, size_t *used);

/* Escapes s[0..len) as a literal, quotes included, into out, which must hold
 * NX_JSON_ESCAPE_MAX * len + 2 bytes; returns the bytes written (no NUL). */
size_t nx_json_escape(char *out, const char *s, size_t len);

/* Appends s[0..len) as a literal, quotes included (nx_strbuf_failed on OOM). */
void nx_json_put_string(nx_strbuf *b, const char *s, size_t len);

/* Appends s[0..len) as raw text (no quotes, no escaping) with every byte that
 * starts no valid UTF-8 sequence replaced by U+FFFD (EF BF BD), the rule the
 * escaper applies, so text from a file that is not UTF-8 is kept readable. */
void nx_json_put_utf8(nx_strbuf *b, const char *s, size_t len);

/* Appends the integer v; with safe, one beyond +-2^53 (what a browser's
 * number cannot hold exactly) as a decimal string instead, the HTTP API's
 * rule for every integer. */
void nx_json_put_i64(nx_strbuf *b, int64_t v, bool safe);

/* Appends the member `,"key":v` (nx_json_put_i64); key is written as it is, so
 * a literal that needs no escaping. */
void nx_json_put_i64_member(nx_strbuf *b, const char *key, int64_t v, bool safe);

/* Appends the double v as its shortest round-trip text; null when not finite. */
void nx_json_put_f64(nx_strbuf *b, double v);



/* Appends the float v as the shortest text that reads back as the same float
 * (so 0.1f is 0.1, not 0.100000001); null when not finite. */
void nx_json_put_f32(nx_strbuf *b, float v);

/* The texts nx_json_put_f64 / nx_json_put_f32 append, into buf
 * (NX_FLOAT_TEXT_MAX bytes); return buf, for writers that assemble JSON with
 * printf's %s or write it to a FILE. */
const char *nx_json_f64_text(char *buf, double v);
const char *nx_json_f32_text(char *buf, float v);

/* Appends the member `,"key":v` (nx_json_put_f64); key as in nx_json_put_i64_member. */
void nx_json_put_f64_member(nx_strbuf *b, const char *key, double v);

/* nx_json_put_string of the NUL-terminated s. */
void nx_json_put_cstr(nx_strbuf *b, const char *s);

/* Top-level member `key` of the object js[0..len): its value's text, from its
 * first byte to its last (a string keeps its quotes). False when js is not an
 * object or has no such member. */
bool nx_json_member(const char *js, size_t len, const char *key, const char **val, size_t *vlen);

/* The top-level members of an object in order, without building a tree:
 * nx_json_members_begin (false when js[0..len) is not an object), then
 * nx_json_members_next until it returns false (the end, or malformed text).
 * key is the member name's raw text between its quotes (escapes kept as
 * written), val its value's text as nx_json_member gives it. */
typedef struct nx_json_iter {
    const char *p, *e;
} nx_json_iter;
bool nx_json_members_begin(nx_json_iter *it, const char *js, size_t len);
bool nx_json_members_next(nx_json_iter *it, const char **key, size_t *klen, const char **val, size_t *vlen);

/* The member's value when it is a string: decoded (escapes resolved, a lone
 * surrogate as U+FFFD) and appended to out[*n..cap), *n advanced. False when
 * absent, not a string, malformed, or when it would not fit (out unchanged). */
bool nx_json_string_member(const char *js, size_t len, const char *key, char *out, size_t cap, size_t *n);

#endif
