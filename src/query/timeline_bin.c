/* timeline_bin.c — the timeline answer as columnar arrays (see timeline_bin.h). */
#include "query/timeline_bin.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Bytes are written one by one, low first: the layout is little-endian whatever the host. */
static void put_le(unsigned char *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void pad8(nx_strbuf *b)
{
    static const char zeros[8] = {0};
    nx_strbuf_append(b, zeros, (8 - b->len % 8) % 8);
}

/* One array of n elements of `size` bytes: element i is get(t, i) (the raw bits). */
typedef uint64_t (*elem_fn)(const nx_timeline_table *t, size_t i, size_t l, int64_t base);

static void put_array(nx_strbuf *b, const nx_timeline_table *t, size_t size, elem_fn get, size_t l, int64_t base)
{
    unsigned char *p = (unsigned char *)nx_strbuf_reserve(b, t->n_events * size + 1);
    if (!p)
        return;
    for (size_t i = 0; i < t->n_events; i++)
        put_le(p + i * size, get(t, i, l, base), size);
    nx_strbuf_commit(b, t->n_events * size);
    pad8(b);
}

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Differences in 128 bits: an event far from the window's start still gets the nearest double. */
static uint64_t start_of(const nx_timeline_table *t, size_t i, size_t l, int64_t base)
{
    (void)l;
    return f64_bits((double)((__int128)t->start[i] - base));
}

static uint64_t dur_of(const nx_timeline_table *t, size_t i, size_t l, int64_t base)
{
    (void)l, (void)base;
    return f64_bits((double)((__int128)t->end[i] - t->start[i]));
}

static uint64_t ord_of(const nx_timeline_table *t, size_t i, size_t l, int64_t base)
{
    (void)l, (void)base;
    return f64_bits((double)t->ordinal[i]);
}

static uint64_t depth_of(const nx_timeline_table *t, size_t i, size_t l, int64_t base)
{
    (void)l, (void)base;
    return t->depth[i];
}

static uint64_t string_label_of(const nx_timeline_table *t, size_t i, size_t l, int64_t base)
{
    (void)base;
    size_t at = i * t->n_labels + l;
    return (uint32_t)(t->label_set[at] ? (int32_t)t->label[at] : -1);
}

static uint64_t integer_label_of(const nx_timeline_table *t, size_t i, size_t l, int64_t base)
{
    (void)base;
    size_t at = i * t->n_labels + l;
    return f64_bits(t->label_set[at] ? (double)t->label[at] : NAN);
}

void nx_timeline_bin(nx_strbuf *b, const nx_timeline *tl, const char *header, size_t header_len)
{
    if (header_len > UINT32_MAX) {
        b->failed = true;
        return;
    }
    unsigned char head[8] = {'N', 'X', 'T', 'B'};
    put_le(head + 4, header_len, 4);
    nx_strbuf_append(b, head, sizeof head);
    nx_strbuf_append(b, header, header_len);
    pad8(b);
    for (size_t k = 0; k < tl->n_tables; k++) {
        const nx_timeline_table *t = &tl->tables[k];
        if (t->error)
            continue;
        put_array(b, t, 8, start_of, 0, tl->start);
        put_array(b, t, 8, dur_of, 0, 0);
        put_array(b, t, 8, ord_of, 0, 0);
        if (t->depth)
            put_array(b, t, 4, depth_of, 0, 0);
        for (size_t l = 0; l < t->n_labels; l++)
            put_array(b, t, t->label_is_string[l] ? 4 : 8, t->label_is_string[l] ? string_label_of : integer_label_of,
                      l, 0);
    }
}
