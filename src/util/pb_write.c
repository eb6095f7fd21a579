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

static void put_tag(nx_strbuf *b, uint32_t field, unsigned wire)
{
    uint8_t buf[10];
    nx_strbuf_append(b, buf, nx_pbw_put_varint(buf, (uint64_t)field << 3 | wire));
}

void nx_pbw_varint(nx_strbuf *b, uint32_t field, uint64_t v)
{
    uint8_t buf[10];
    put_tag(b, field, 0);
    nx_strbuf_append(b, buf, nx_pbw_put_varint(buf, v));
}

void nx_pbw_fixed64(nx_strbuf *b, uint32_t field, uint64_t v)
{
    uint8_t buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(v >> (8 * i));
    put_tag(b, field, 1);
    nx_strbuf_append(b, buf, 8);
}

void nx_pbw_double(nx_strbuf *b, uint32_t field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    nx_pbw_fixed64(b, field, u);
}

void nx_pbw_bytes(nx_strbuf *b, uint32_t field, const void *data, size_t len)
{
    uint8_t buf[10];
    put_tag(b, field, 2);
    nx_strbuf_append(b, buf, nx_pbw_put_varint(buf, len));
    nx_strbuf_append(b, data, len);
}

size_t nx_pbw_begin(nx_strbuf *b, uint32_t field)
{
    static const uint8_t placeholder[NX_PBW_LEN_BYTES] = {0x80, 0x80, 0x80, 0};
    put_tag(b, field, 2);
    nx_strbuf_append(b, placeholder, NX_PBW_LEN_BYTES);
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
