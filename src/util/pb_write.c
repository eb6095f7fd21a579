/*
 * pb_write.c — the protobuf wire-format writer (see pb_write.h).
 */
#include "util/pb_write.h"

#include <string.h>

size_t nx_pbw_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Every field is written into room reserved once (nx_strbuf_reserve): a trace
 * has dozens of small fields per event, and an append per byte run cost more
 * than the encoding. The tag is at most 5 bytes, a varint 10. */
static uint8_t *room(nx_strbuf *b, size_t n)
{
    return (uint8_t *)nx_strbuf_reserve(b, n);
}

static size_t put_tag(uint8_t *o, uint32_t field, unsigned wire)
{
    return nx_pbw_put_varint(o, (uint64_t)field << 3 | wire);
}

void nx_pbw_varint(nx_strbuf *b, uint32_t field, uint64_t v)
{
    uint8_t *o = room(b, 15);
    if (!o)
        return;
    size_t n = put_tag(o, field, 0);
    nx_strbuf_commit(b, n + nx_pbw_put_varint(o + n, v));
}

void nx_pbw_fixed64(nx_strbuf *b, uint32_t field, uint64_t v)
{
    uint8_t *o = room(b, 13);
    if (!o)
        return;
    size_t n = put_tag(o, field, 1);
    for (int i = 0; i < 8; i++)
        o[n + (size_t)i] = (uint8_t)(v >> (8 * i));
    nx_strbuf_commit(b, n + 8);
}

void nx_pbw_double(nx_strbuf *b, uint32_t field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    nx_pbw_fixed64(b, field, u);
}

void nx_pbw_bytes(nx_strbuf *b, uint32_t field, const void *data, size_t len)
{
    uint8_t *o = room(b, 15 + len);
    if (!o)
        return;
    size_t n = put_tag(o, field, 2);
    n += nx_pbw_put_varint(o + n, len);
    if (len)
        memcpy(o + n, data, len);
    nx_strbuf_commit(b, n + len);
}

size_t nx_pbw_begin(nx_strbuf *b, uint32_t field)
{
    static const uint8_t placeholder[NX_PBW_LEN_BYTES] = {0x80, 0x80, 0x80, 0};
    uint8_t *o = room(b, 5 + NX_PBW_LEN_BYTES);
    if (!o)
        return b->len;
    size_t n = put_tag(o, field, 2);
    memcpy(o + n, placeholder, NX_PBW_LEN_BYTES);
    nx_strbuf_commit(b, n + NX_PBW_LEN_BYTES);
    return b->len;
}

void nx_pbw_end(nx_strbuf *b, size_t handle)
{
    if (b->failed || handle > b->len || handle < NX_PBW_LEN_BYTES)
        return;
    size_t len = b->len - handle;
    if (len >= (size_t)1 << (7 * NX_PBW_LEN_BYTES)) {
        b->failed = true;
        return;
    }
    uint8_t *p = (uint8_t *)b->data + handle - NX_PBW_LEN_BYTES;
    for (int i = 0; i < NX_PBW_LEN_BYTES; i++)
        p[i] = (uint8_t)(((len >> (7 * i)) & 0x7f) | (i + 1 < NX_PBW_LEN_BYTES ? 0x80 : 0));
}
