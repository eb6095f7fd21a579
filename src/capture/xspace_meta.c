/*
 * xspace_meta.c — a plane's metadata maps (XPlane.event_metadata,
 * XPlane.stat_metadata) and the rendering of XStats into an event's args, as
 * JAX's trace JSON shows them (xspace.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/xspace_internal.h"
#include "util/json.h"

/* Stats that JAX's trace JSON leaves out (XLA's IsInternalStat, by name). */
static const char *const internal_stats[] = {"_pt", "_p", "_ct", "_c", "_r",
                                             "program_id", "symbol_id", "flops", "bytes_accessed"};

static int grow(xs *x, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = c <= SIZE_MAX / elem ? realloc(*arr, c * elem) : NULL;
    if (!p)
        return xs_fail(x, 0, "out of memory");
    *arr = p;
    *cap = c;
    return 0;
}

/* The map entry's key (field 1) and value message (field 2). */
static int map_entry(xs *x, const nx_pb_field *f, int64_t *key, nx_pb_field *value)
{
    nx_pb_cursor c = {x->data, f->start, f->start + f->len};
    nx_pb_field e;
    int rc;
    *key = 0;
    memset(value, 0, sizeof *value);
    value->start = f->start;   /* an absent value is an empty message */
    while ((rc = xs_next(x, &c, &e)) > 0) {
        if (e.number == 1) {
            if (xs_want(x, &e, NX_PB_VARINT, "key") < 0)
                return -1;
            *key = (int64_t)e.u;
        } else if (e.number == 2) {
            if (xs_want(x, &e, NX_PB_LEN, "value") < 0)
                return -1;
            *value = e;
        }
    }
    return rc;
}

static int copy_name(xs *x, const nx_pb_field *f, const char *field, const char **out, size_t *len)
{
    const char *s;
    if (xs_string(x, f, field, &s, len) < 0)
        return -1;
    *out = nx_arena_strndup(&x->arena, s, *len);
    return *out ? 0 : xs_fail(x, f->offset, "out of memory");
}

static int event_meta(xs *x, int64_t key, const nx_pb_field *v, uint64_t entry)
{
    if (grow(x, (void **)&x->em, &x->cap_em, x->n_em, sizeof *x->em) < 0)
        return -1;
    xs_event_meta *m = &x->em[x->n_em];
    *m = (xs_event_meta){.key = {key, entry}, .name = "", .display = "", .start = v->start, .len = v->len};
    nx_pb_cursor c = {x->data, v->start, v->start + v->len};
    nx_pb_field f;
    int rc;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number == 2 && copy_name(x, &f, "name", &m->name, &m->name_len) < 0)
            return -1;
        if (f.number == 4 && copy_name(x, &f, "display_name", &m->display, &m->display_len) < 0)
            return -1;
        if ((f.number == 1 && xs_want(x, &f, NX_PB_VARINT, "id") < 0) ||
            (f.number == 5 && xs_want(x, &f, NX_PB_LEN, "stats") < 0))
            return -1;
    }
    if (rc == 0)
        x->n_em++;
    return rc;
}

static int stat_meta(xs *x, int64_t key, const nx_pb_field *v, uint64_t entry)
{
    if (grow(x, (void **)&x->sm, &x->cap_sm, x->n_sm, sizeof *x->sm) < 0)
        return -1;
    xs_stat_meta *m = &x->sm[x->n_sm];
    *m = (xs_stat_meta){.key = {key, entry}, .name = ""};
    nx_pb_cursor c = {x->data, v->start, v->start + v->len};
    nx_pb_field f;
    int rc;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number == 2 && copy_name(x, &f, "name", &m->name, &m->name_len) < 0)
            return -1;
        if (f.number == 1 && xs_want(x, &f, NX_PB_VARINT, "id") < 0)
            return -1;
    }
    if (rc == 0)
        x->n_sm++;
    return rc;
}

int xs_meta_add(xs *x, const nx_pb_field *f, uint64_t entry)
{
    const char *field = f->number == 4 ? "event_metadata" : "stat_metadata";
    if (xs_want(x, f, NX_PB_LEN, field) < 0)
        return -1;
    xs_push(x, field, (int64_t)entry);
    int64_t key;
    nx_pb_field value;
    int rc = map_entry(x, f, &key, &value);
    if (rc == 0) {
        xs_push(x, "value", -1);
        rc = f->number == 4 ? event_meta(x, key, &value, entry) : stat_meta(x, key, &value, entry);
        xs_pop(x);
    }
    xs_pop(x);
    return rc;
}

static int cmp_key(const void *a, const void *b)
{
    const xs_meta_key *p = a, *q = b;
    if (p->id != q->id)
        return p->id < q->id ? -1 : 1;
    return p->entry < q->entry ? -1 : p->entry > q->entry;
}

/* Sorts a map of n records of `size` bytes (each starting with its xs_meta_key)
 * and keeps the last entry of each key; returns how many are kept. */
static size_t sort_unique(void *arr, size_t n, size_t size)
{
    if (n < 2)
        return n;
    qsort(arr, n, size, cmp_key);
    char *base = arr;
    size_t kept = 1;
    for (size_t i = 1; i < n; i++) {
        const xs_meta_key *prev = (const void *)(base + (kept - 1) * size);
        const xs_meta_key *cur = (const void *)(base + i * size);
        if (prev->id != cur->id)
            kept++;
        if (base + (kept - 1) * size != (const char *)cur)
            memcpy(base + (kept - 1) * size, cur, size);
    }
    return kept;
}

static const void *find_key(const void *arr, size_t n, size_t size, int64_t id)
{
    const char *base = arr;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (((const xs_meta_key *)(const void *)(base + mid * size))->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ((const xs_meta_key *)(const void *)(base + lo * size))->id == id ? base + lo * size : NULL;
}

int xs_meta_finish(xs *x)
{
    x->n_em = sort_unique(x->em, x->n_em, sizeof *x->em);
    x->n_sm = sort_unique(x->sm, x->n_sm, sizeof *x->sm);
    return 0;
}

const xs_event_meta *xs_event_meta_find(const xs *x, int64_t id)
{
    return find_key(x->em, x->n_em, sizeof *x->em, id);
}

static const xs_stat_meta *stat_meta_find(const xs *x, int64_t id)
{
    return find_key(x->sm, x->n_sm, sizeof *x->sm, id);
}

void xs_meta_reset(xs *x)
{
    nx_arena_free(&x->arena);
    x->n_em = 0;
    x->n_sm = 0;
}

static int add_pair(xs *x, const char *key, size_t key_len, size_t off)
{
    for (size_t i = 0; i < sizeof internal_stats / sizeof *internal_stats; i++)
        if (strlen(internal_stats[i]) == key_len && memcmp(internal_stats[i], key, key_len) == 0) {
            x->values.len = off;   /* drop the value just written */
            return 0;
        }
    if (grow(x, (void **)&x->pairs, &x->cap_pairs, x->n_pairs, sizeof *x->pairs) < 0)
        return -1;
    x->pairs[x->n_pairs] = (xs_pair){key, key_len, off, x->values.len - off, x->n_pairs};
    x->n_pairs++;
    return 0;
}

int xs_args_begin(xs *x, const xs_event_meta *m)
{
    x->n_pairs = 0;
    x->values.len = 0;
    x->stats_seen = 0;
    x->args_too_large = false;
    if (!nx_strbuf_reserve(&x->values, 64))   /* values.data is never NULL below */
        return xs_fail(x, 0, "out of memory");
    if (m->display_len == 0)
        return 0;
    nx_strbuf_append(&x->values, m->name, m->name_len);
    return add_pair(x, "long_name", strlen("long_name"), 0);
}

static void put_hex(nx_strbuf *b, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        nx_strbuf_putc(b, digits[p[i] >> 4]);
        nx_strbuf_putc(b, digits[p[i] & 15]);
    }
}

/* Writes the value of one oneof field of an XStat into x->values. */
static int stat_value(xs *x, const nx_pb_field *f)
{
    static const int wire[8] = {0, 0, NX_PB_I64, NX_PB_VARINT, NX_PB_VARINT, NX_PB_LEN, NX_PB_LEN, NX_PB_VARINT};
    static const char *const names[8] = {"", "", "double_value", "uint64_value", "int64_value",
                                         "str_value", "bytes_value", "ref_value"};
    if (xs_want(x, f, wire[f->number], names[f->number]) < 0)
        return -1;
    const char *s;
    size_t len;
    double d;
    const xs_stat_meta *ref;
    switch (f->number) {
    case 2:
        memcpy(&d, &f->u, sizeof d);
        nx_strbuf_printf(&x->values, "%.6g", d);
        return 0;
    case 3: nx_strbuf_printf(&x->values, "%" PRIu64, f->u); return 0;
    case 4: nx_strbuf_printf(&x->values, "%" PRId64, (int64_t)f->u); return 0;
    case 5:
        if (xs_string(x, f, "str_value", &s, &len) < 0)
            return -1;
        nx_strbuf_append(&x->values, s, len);
        return 0;
    case 6: put_hex(&x->values, x->data + f->start, f->len); return 0;
    default:
        ref = stat_meta_find(x, (int64_t)f->u);
        if (!ref)
            return xs_fail(x, f->offset, "ref_value %" PRId64 " is not in the plane's stat_metadata", (int64_t)f->u);
        nx_strbuf_append(&x->values, ref->name, ref->name_len);
        return 0;
    }
}

/* One XStat message: its name from stat_metadata, its value (the last of the oneof). */
static int one_stat(xs *x, const nx_pb_field *sf)
{
    nx_pb_cursor c = {x->data, sf->start, sf->start + sf->len};
    nx_pb_field f, value = {0};
    int64_t id = 0;
    int rc;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number == 1) {
            if (xs_want(x, &f, NX_PB_VARINT, "metadata_id") < 0)
                return -1;
            id = (int64_t)f.u;
        } else if (f.number >= 2 && f.number <= 7) {
            value = f;
        }
    }
    if (rc < 0)
        return -1;
    const xs_stat_meta *m = stat_meta_find(x, id);
    if (!m)
        return xs_fail(x, sf->offset, "metadata_id %" PRId64 " is not in the plane's stat_metadata", id);
    size_t off = x->values.len;
    if (value.number && stat_value(x, &value) < 0)
        return -1;
    return add_pair(x, m->name, m->name_len, off);
}

int xs_args_stats(xs *x, nx_pb_cursor c, uint32_t field)
{
    nx_pb_field f;
    int rc;
    int64_t i = 0;
    while ((rc = xs_next(x, &c, &f)) > 0) {
        if (f.number != field)
            continue;
        if (xs_want(x, &f, NX_PB_LEN, "stats") < 0)
            return -1;
        if (++x->stats_seen > x->max_args || x->values.len + 6 * x->n_pairs > x->max_args) {
            x->args_too_large = true;
            return 0;
        }
        xs_push(x, "stats", i++);
        rc = one_stat(x, &f);
        xs_pop(x);
        if (rc < 0)
            return -1;
    }
    return rc;
}

static bool same_key(const xs_pair *p, const xs_pair *q)
{
    return p->key_len == q->key_len && memcmp(p->key, q->key, p->key_len) == 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const xs_pair *p = a, *q = b;
    size_t n = p->key_len < q->key_len ? p->key_len : q->key_len;
    int c = memcmp(p->key, q->key, n);
    if (c == 0 && p->key_len != q->key_len)
        c = p->key_len < q->key_len ? -1 : 1;
    return c ? c : (p->seq < q->seq ? -1 : p->seq > q->seq);
}

int xs_args_finish(xs *x)
{
    x->args.len = 0;
    if (x->args_too_large)
        return 0;
    if (x->n_pairs > 1)
        qsort(x->pairs, x->n_pairs, sizeof *x->pairs, cmp_pair);
    nx_strbuf_putc(&x->args, '{');
    bool first = true;
    for (size_t i = 0; i < x->n_pairs; i++) {
        const xs_pair *p = &x->pairs[i];
        if (i + 1 < x->n_pairs && same_key(p, &x->pairs[i + 1]))
            continue;   /* a later stat of the same name wins */
        if (!first)
            nx_strbuf_putc(&x->args, ',');
        first = false;
        nx_json_put_string(&x->args, p->key, p->key_len);
        nx_strbuf_putc(&x->args, ':');
        nx_json_put_string(&x->args, x->values.data + p->off, p->len);
    }
    nx_strbuf_putc(&x->args, '}');
    if (nx_strbuf_failed(&x->args) || nx_strbuf_failed(&x->values))
        return xs_fail(x, 0, "out of memory");
    return 0;
}
