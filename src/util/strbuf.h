/*
 * strbuf.h — a growable byte buffer.
 *
 * Used wherever output is assembled piece by piece (JSON, YAML, CSV, encoded
 * pages). Appends never fail silently: on allocation failure the buffer enters
 * an error state, further appends are ignored, and nx_strbuf_failed() says so,
 * so callers check once at the end instead of after every append.
 */
#ifndef NX_STRBUF_H
#define NX_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nx_strbuf {
    char *data;      /* always NUL-terminated when len > 0 or after any append */
    size_t len;
    size_t cap;
    bool failed;     /* an allocation failed; contents are incomplete */
} nx_strbuf;

#define NX_STRBUF_INIT {NULL, 0, 0, false}

void nx_strbuf_append(nx_strbuf *b, const void *data, size_t n);
void nx_strbuf_puts(nx_strbuf *b, const char *s);
void nx_strbuf_putc(nx_strbuf *b, char c);
void nx_strbuf_printf(nx_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Room for `extra` more bytes: returns where they start (write there, then
 * nx_strbuf_commit() what was used), or NULL on allocation failure. */
char *nx_strbuf_reserve(nx_strbuf *b, size_t extra);
/* Marks n bytes written after nx_strbuf_reserve() as part of the contents. */
void nx_strbuf_commit(nx_strbuf *b, size_t n);
bool nx_strbuf_failed(const nx_strbuf *b);
/* Hands the contents to the caller (free() it) and resets the buffer.
 * Returns NULL if the buffer failed. */
char *nx_strbuf_detach(nx_strbuf *b);
void nx_strbuf_free(nx_strbuf *b);

#endif
