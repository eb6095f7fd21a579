/* thrift.c — Thrift compact protocol writer and bounded reader. See thrift.h. */
#include "parquet/thrift.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- writing */

static void put_varint(nx_strbuf *b, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    nx_strbuf_append(b, buf, n);
}

static uint64_t zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

void nxth_writer_init(nxth_writer *w, nx_strbuf *out)
{
    w->out = out;
    w->depth = 0;
    w->last_id[0] = 0;
}

static void field_header(nxth_writer *w, int16_t id, uint8_t type)
{
    int16_t delta = (int16_t)(id - w->last_id[w->depth]);
    if (delta > 0 && delta <= 15) {
        nx_strbuf_putc(w->out, (char)((delta << 4) | type));
    } else {
        nx_strbuf_putc(w->out, (char)type);
        put_varint(w->out, zigzag64(id));
    }
    w->last_id[w->depth] = id;
}

void nxth_struct_begin(nxth_writer *w)
{
    if (w->depth + 1 < NXTH_MAX_DEPTH)
        w->last_id[++w->depth] = 0;
    else
        w->out->failed = true;
}

void nxth_struct_end(nxth_writer *w)
{
    nx_strbuf_putc(w->out, NXTH_STOP);
    if (w->depth > 0)
        w->depth--;
}

void nxth_field_struct_begin(nxth_writer *w, int16_t id)
{
    field_header(w, id, NXTH_STRUCT);
    nxth_struct_begin(w);
}

void nxth_field_i32(nxth_writer *w, int16_t id, int32_t v)
{
    field_header(w, id, NXTH_I32);
    put_varint(w->out, zigzag64(v));
}

void nxth_field_i64(nxth_writer *w, int16_t id, int64_t v)
{
    field_header(w, id, NXTH_I64);
    put_varint(w->out, zigzag64(v));
}

void nxth_field_bool(nxth_writer *w, int16_t id, bool v)
{
    field_header(w, id, v ? NXTH_BOOL_TRUE : NXTH_BOOL_FALSE);
}

void nxth_field_binary(nxth_writer *w, int16_t id, const void *p, size_t len)
{
    field_header(w, id, NXTH_BINARY);
    nxth_list_binary(w, p, len);
}

void nxth_field_string(nxth_writer *w, int16_t id, const char *s)
{
    nxth_field_binary(w, id, s, strlen(s));
}

void nxth_field_list_begin(nxth_writer *w, int16_t id, uint8_t elem_type, size_t n)
{
    field_header(w, id, NXTH_LIST);
    if (n < 15) {
        nx_strbuf_putc(w->out, (char)((n << 4) | elem_type));
    } else {
        nx_strbuf_putc(w->out, (char)(0xF0 | elem_type));
        put_varint(w->out, n);
    }
}

void nxth_list_i32(nxth_writer *w, int32_t v)
{
    put_varint(w->out, zigzag64(v));
}

void nxth_list_i64(nxth_writer *w, int64_t v)
{
    put_varint(w->out, zigzag64(v));
}

void nxth_list_bool(nxth_writer *w, bool v)
{
    nx_strbuf_putc(w->out, v ? NXTH_BOOL_TRUE : NXTH_BOOL_FALSE);
}

void nxth_list_binary(nxth_writer *w, const void *p, size_t len)
{
    put_varint(w->out, len);
    nx_strbuf_append(w->out, p, len);
}

/* ---------------------------------------------------------------- reading */

void nxth_reader_init(nxth_reader *r, const void *data, size_t len, uint64_t base_offset)
{
    r->start = r->p = data;
    r->end = r->start + len;
    r->base_offset = base_offset;
    r->depth = 0;
    r->last_id[0] = 0;
    r->failed = false;
    r->error[0] = '\0';
}

void nxth_fail(nxth_reader *r, const char *what)
{
    if (r->failed)
        return;
    r->failed = true;
    snprintf(r->error, sizeof r->error, "%s at byte offset %llu", what,
             (unsigned long long)(r->base_offset + (uint64_t)(r->p - r->start)));
    r->p = r->end; /* stop consuming */
}

size_t nxth_reader_pos(const nxth_reader *r)
{
    return (size_t)(r->p - r->start);
}

static uint64_t get_varint(nxth_reader *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            nxth_fail(r, "truncated varint");
            return 0;
        }
        uint8_t byte = *r->p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    nxth_fail(r, "varint longer than 10 bytes");
    return 0;
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

void nxth_read_struct_begin(nxth_reader *r)
{
    if (r->depth + 1 >= NXTH_MAX_DEPTH) {
        nxth_fail(r, "thrift structures nested too deeply");
        return;
    }
    r->last_id[++r->depth] = 0;
}

void nxth_read_struct_end(nxth_reader *r)
{
    if (r->depth > 0)
        r->depth--;
}

bool nxth_read_field(nxth_reader *r, int16_t *id, uint8_t *type)
{
    if (r->failed)
        return false;
    if (r->p >= r->end) {
        nxth_fail(r, "truncated struct (no STOP)");
        return false;
    }
    uint8_t byte = *r->p++;
    if (byte == NXTH_STOP)
        return false;
    uint8_t t = byte & 0x0f;
    uint8_t delta = byte >> 4;
    int64_t fid;
    if (delta)
        fid = r->last_id[r->depth] + delta;
    else
        fid = unzigzag(get_varint(r));
    if (t == NXTH_STOP || t > NXTH_STRUCT || fid < INT16_MIN || fid > INT16_MAX) {
        nxth_fail(r, "invalid thrift field header");
        return false;
    }
    r->last_id[r->depth] = (int16_t)fid;
    *id = (int16_t)fid;
    *type = t;
    return !r->failed;
}

static bool expect_type(nxth_reader *r, uint8_t got, uint8_t want)
{
    if (got == want)
        return true;
    nxth_fail(r, "unexpected thrift field type");
    return false;
}

int32_t nxth_read_i32(nxth_reader *r, uint8_t type)
{
    if (type == NXTH_BYTE) {
        if (r->p >= r->end) {
            nxth_fail(r, "truncated byte");
            return 0;
        }
        return (int8_t)*r->p++;
    }
    if (type != NXTH_I16 && !expect_type(r, type, NXTH_I32))
        return 0;
    int64_t v = unzigzag(get_varint(r));
    if (v < INT32_MIN || v > INT32_MAX) {
        nxth_fail(r, "i32 value out of range");
        return 0;
    }
    return (int32_t)v;
}

int64_t nxth_read_i64(nxth_reader *r, uint8_t type)
{
    if (type == NXTH_I32 || type == NXTH_I16 || type == NXTH_BYTE)
        return nxth_read_i32(r, type);
    if (!expect_type(r, type, NXTH_I64))
        return 0;
    return unzigzag(get_varint(r));
}

double nxth_read_double(nxth_reader *r, uint8_t type)
{
    if (!expect_type(r, type, NXTH_DOUBLE))
        return 0;
    if (r->end - r->p < 8) {
        nxth_fail(r, "truncated double");
        return 0;
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

bool nxth_read_bool(nxth_reader *r, uint8_t type, bool in_list)
{
    if (in_list) {
        if (r->p >= r->end) {
            nxth_fail(r, "truncated bool");
            return false;
        }
        return *r->p++ == NXTH_BOOL_TRUE;
    }
    if (type != NXTH_BOOL_TRUE && type != NXTH_BOOL_FALSE) {
        nxth_fail(r, "unexpected thrift field type (want bool)");
        return false;
    }
    return type == NXTH_BOOL_TRUE;
}

const uint8_t *nxth_read_binary(nxth_reader *r, uint8_t type, uint32_t *len)
{
    *len = 0;
    if (!expect_type(r, type, NXTH_BINARY))
        return NULL;
    uint64_t n = get_varint(r);
    if (r->failed)
        return NULL;
    if (n > (uint64_t)(r->end - r->p)) {
        nxth_fail(r, "binary length runs past the end of the metadata");
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    *len = (uint32_t)n;
    return p;
}

uint32_t nxth_read_list_begin(nxth_reader *r, uint8_t type, uint8_t *elem_type)
{
    *elem_type = 0;
    if (type != NXTH_SET && !expect_type(r, type, NXTH_LIST))
        return 0;
    if (r->p >= r->end) {
        nxth_fail(r, "truncated list header");
        return 0;
    }
    uint8_t byte = *r->p++;
    uint64_t n = byte >> 4;
    if (n == 15)
        n = get_varint(r);
    *elem_type = byte & 0x0f;
    /* Every element takes at least one byte, except bools in the header-less
     * form, which also take one. So n can never exceed the bytes left. */
    if (!r->failed && n > (uint64_t)(r->end - r->p)) {
        nxth_fail(r, "list size exceeds the metadata length");
        return 0;
    }
    if (*elem_type == NXTH_STOP || *elem_type > NXTH_STRUCT) {
        nxth_fail(r, "invalid list element type");
        return 0;
    }
    return r->failed ? 0 : (uint32_t)n;
}

void nxth_skip(nxth_reader *r, uint8_t type)
{
    if (r->failed)
        return;
    switch (type) {
    case NXTH_BOOL_TRUE:
    case NXTH_BOOL_FALSE:
        return; /* value is in the field header */
    case NXTH_BYTE:
        if (r->p >= r->end)
            nxth_fail(r, "truncated byte");
        else
            r->p++;
        return;
    case NXTH_I16:
    case NXTH_I32:
    case NXTH_I64:
        get_varint(r);
        return;
    case NXTH_DOUBLE:
        nxth_read_double(r, NXTH_DOUBLE);
        return;
    case NXTH_BINARY: {
        uint32_t len;
        nxth_read_binary(r, NXTH_BINARY, &len);
        return;
    }
    case NXTH_LIST:
    case NXTH_SET: {
        uint8_t et;
        uint32_t n = nxth_read_list_begin(r, NXTH_LIST, &et);
        if (r->depth + 1 >= NXTH_MAX_DEPTH) {
            nxth_fail(r, "thrift structures nested too deeply");
            return;
        }
        r->depth++;
        for (uint32_t i = 0; i < n && !r->failed; i++) {
            if (et == NXTH_BOOL_TRUE || et == NXTH_BOOL_FALSE)
                nxth_read_bool(r, et, true);
            else
                nxth_skip(r, et);
        }
        r->depth--;
        return;
    }
    case NXTH_MAP: {
        uint64_t n = get_varint(r);
        if (n == 0 || r->failed)
            return;
        if (r->p >= r->end || n > (uint64_t)(r->end - r->p)) {
            nxth_fail(r, "map size exceeds the metadata length");
            return;
        }
        uint8_t kv = *r->p++;
        if (r->depth + 1 >= NXTH_MAX_DEPTH) {
            nxth_fail(r, "thrift structures nested too deeply");
            return;
        }
        r->depth++;
        for (uint64_t i = 0; i < n && !r->failed; i++) {
            nxth_skip(r, kv >> 4);
            nxth_skip(r, kv & 0x0f);
        }
        r->depth--;
        return;
    }
    case NXTH_STRUCT: {
        nxth_read_struct_begin(r);
        int16_t id;
        uint8_t t;
        while (nxth_read_field(r, &id, &t))
            nxth_skip(r, t);
        nxth_read_struct_end(r);
        return;
    }
    default:
        nxth_fail(r, "unknown thrift type");
    }
}
