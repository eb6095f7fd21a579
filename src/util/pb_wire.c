/*
 * pb_wire.c — the protobuf wire-format cursor (pb_wire.h).
 */
#include "util/pb_wire.h"

#include <string.h>

nx_pb_cursor nx_pb_cursor_init(const void *base, size_t size)
{
    return (nx_pb_cursor){.base = base, .pos = 0, .end = size};
}

nx_pb_cursor nx_pb_sub(const nx_pb_cursor *c, const nx_pb_field *f)
{
    return (nx_pb_cursor){.base = c->base, .pos = f->start, .end = f->start + f->len};
}

/* A varint of at most 10 bytes whose value fits 64 bits. */
static int read_varint(nx_pb_cursor *c, uint64_t *v, const char **why, size_t *at)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (c->pos >= c->end) {
            *why = "truncated varint";
            *at = c->pos;
            return -1;
        }
        uint8_t b = c->base[c->pos++];
        if (i == 9 && b > 1) {
            *why = "varint above 2^64-1";
            *at = c->pos - 1;
            return -1;
        }
        r |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    *why = "varint longer than 10 bytes";
    *at = c->pos - 1;
    return -1;
}

static int read_fixed(nx_pb_cursor *c, unsigned n, uint64_t *v, const char **why, size_t *at)
{
    if (c->end - c->pos < n) {
        *why = n == 8 ? "truncated fixed64" : "truncated fixed32";
        *at = c->pos;
        return -1;
    }
    uint64_t r = 0;
    memcpy(&r, c->base + c->pos, n);   /* little-endian, as the wire format */
    c->pos += n;
    *v = r;
    return 0;
}

static int read_len(nx_pb_cursor *c, nx_pb_field *f, const char **why, size_t *at)
{
    size_t len_at = c->pos;
    uint64_t n;
    if (read_varint(c, &n, why, at) < 0)
        return -1;
    if (n > c->end - c->pos) {
        *why = "length runs past the end of the enclosing message";
        *at = len_at;
        return -1;
    }
    f->start = c->pos;
    f->len = (size_t)n;
    c->pos += (size_t)n;
    return 0;
}

int nx_pb_next(nx_pb_cursor *c, nx_pb_field *f, const char **why, size_t *at)
{
    if (c->pos >= c->end)
        return 0;
    memset(f, 0, sizeof *f);
    f->offset = c->pos;
    uint64_t tag;
    if (read_varint(c, &tag, why, at) < 0)
        return -1;
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
        *why = tag >> 3 == 0 ? "field number 0" : "field number above 2^29-1";
        *at = f->offset;
        return -1;
    }
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    int rc;
    switch (f->wire) {
    case NX_PB_VARINT: rc = read_varint(c, &f->u, why, at); break;
    case NX_PB_I64: rc = read_fixed(c, 8, &f->u, why, at); break;
    case NX_PB_LEN: rc = read_len(c, f, why, at); break;
    case NX_PB_I32: rc = read_fixed(c, 4, &f->u, why, at); break;
    default:
        *why = f->wire == 3 || f->wire == 4 ? "group wire type (3 or 4), which proto3 never writes"
                                            : "undefined wire type (6 or 7)";
        *at = f->offset;
        rc = -1;
    }
    return rc < 0 ? -1 : 1;
}

/* Length of the UTF-8 sequence that starts at s[0] (n bytes left), 0 if malformed:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
    uint8_t b = s[0];
    if (b < 0x80)
        return 1;
    size_t len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 0;
    if (len == 0 || b > 0xf4 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((b == 0xe0 && s[1] < 0xa0) || (b == 0xed && s[1] > 0x9f) || (b == 0xf0 && s[1] < 0x90) ||
        (b == 0xf4 && s[1] > 0x8f))
        return 0;
    return len;
}

bool nx_pb_utf8_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(s + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}
