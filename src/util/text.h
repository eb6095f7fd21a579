/*
 * text.h — small helpers on strings, so each is written once: on counted strings
 * (a pointer and a length, as Parquet columns, dictionaries and JSON scans hand
 * them out), and the one strict reading of an integer typed by a user.
 */
#ifndef NX_UTIL_TEXT_H
#define NX_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A malloc'd, NUL-terminated copy of s[0..n): every byte kept, a NUL inside
 * included (unlike strndup, which stops there), so the length stays n. NULL
 * when out of memory. */
char *nx_text_dup(const char *s, size_t n);

/* The one decimal form of an int64 that the interfaces take (the HTTP API's
 * integer parameters and Content-Length, an analysis's parameters on both the
 * API and the CLI, query/analysis.h): an optional '-', then digits without
 * leading zeros ("0" alone: "007" and "-0" are refused, so each value has one
 * spelling), within int64; nothing before or after. 0 (*out set), or -1. */
int nx_text_i64(const char *s, int64_t *out);

#endif
