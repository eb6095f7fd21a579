/*
 * error.h — the one error type of every layer.
 *
 * A function that can fail returns -1 (or NULL) and fills the caller's nx_error.
 * `msg` is the whole message as a user reads it, the location included
 * ("trace.bin: offset 96: record kind 9 is unknown"); callers print it as is.
 * The location is also kept apart, for callers that act on it (Warning rows,
 * tests): `file` (the file at fault, "" when none), `field` (the column, member,
 * section or option at fault, "" when none) and `where` (a byte offset, line or
 * record number, NX_ERROR_NOWHERE when none). A message that names its own
 * location in free text (nx_error_set) leaves the three empty.
 *
 * An nx_error is plain memory: zero-initialise it or let the first set fill it.
 * Every function accepts a NULL err (the caller wants no message).
 * Setting one replaces whatever it held; the helpers return -1 so that
 * `return nx_error_set(err, ...)` reads as the failure it reports.
 */
#ifndef NX_UTIL_ERROR_H
#define NX_UTIL_ERROR_H

#include <stdarg.h>
#include <stdint.h>

#define NX_ERROR_NOWHERE UINT64_MAX

typedef struct nx_error {
    char msg[512];
    char file[256];
    char field[64];
    uint64_t where;
} nx_error;

/* A message with no separate location. */
int nx_error_set(nx_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int nx_error_vset(nx_error *err, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* A message at a location: msg becomes "<file>: <field>: offset <where>: <text>",
 * leaving out the parts that are NULL/"" or NX_ERROR_NOWHERE; `where_kind` names
 * the unit of `where` ("offset", "line", "record", "row"). */
int nx_error_at(nx_error *err, const char *file, const char *field, const char *where_kind, uint64_t where,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int nx_error_vat(nx_error *err, const char *file, const char *field, const char *where_kind, uint64_t where,
                 const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* Puts "<prefix>: " before the message (cut to fit), keeping the location: for a
 * caller that adds what it was doing ("writing Instruction: ..."). */
int nx_error_prefix(nx_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
