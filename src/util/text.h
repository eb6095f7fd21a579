/*
 * text.h — small helpers on counted strings (a pointer and a length, as Parquet
 * columns, dictionaries and JSON scans hand them out), so each is written once.
 */
#ifndef NX_UTIL_TEXT_H
#define NX_UTIL_TEXT_H

#include <stddef.h>

/* A malloc'd, NUL-terminated copy of s[0..n): every byte kept, a NUL inside
 * included (unlike strndup, which stops there), so the length stays n. NULL
 * when out of memory. */
char *nx_text_dup(const char *s, size_t n);

#endif
