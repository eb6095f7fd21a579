/*
 * group_by.c — the streaming GROUP BY of group_by.h.
 *
 * Each row's key tuple is serialised into a scratch buffer (per key: a tag byte,
 * 0 = null, 1 = value; then 8 little-endian bytes for integers, or a 4-byte length
 * and the bytes for strings), hashed with XXH3 and looked up in an open-addressing
 * table of group indices. Two rows are in the same group exactly when their
 * serialised keys are byte-equal, which is SQL's GROUP BY equality (nulls equal).
 * Serialised keys of the groups live in one growing byte buffer, so memory is
 * O(groups + total key bytes of the groups); nothing is allocated per row. A row
 * whose serialised key equals the previous row's skips the hash and the probe.
 */
#include "query/engine/group_by.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct group {
    uint64_t hash;
    size_t key_off;
    size_t key_len;
    nx_group_stats st;
} group;

struct nx_group_by {
    nxpq_type *types;
    size_t n_keys;
    group *groups;
    size_t n_groups, cap_groups;
    uint32_t *slots;         /* group index + 1; 0 = empty */
    size_t n_slots;          /* power of two */
    char *keys;              /* serialised keys of all groups */
    size_t keys_len, keys_cap;
    char *scratch;           /* the current row's serialised key */
    size_t scratch_cap;
    size_t *order;           /* rank -> group index, after sort */
    nx_group_stats totals;
    size_t n_sums;           /* value columns the add() calls passed */
};

nx_group_by *nx_group_by_new(const nxpq_type *key_types, size_t n_keys, nx_error *err)
{
    if (n_keys == 0) {
        nx_error_set(err, "group by needs at least one key column");
        return NULL;
    }
    for (size_t k = 0; k < n_keys; k++) {
        nxpq_type t = key_types[k];
        if (t != NXPQ_INT32 && t != NXPQ_INT64 && t != NXPQ_BOOLEAN && t != NXPQ_STRING) {
            nx_error_set(err, "group by: key %zu is %s; keys must be integer, boolean or string columns", k + 1,
                    nxpq_type_name(t));
            return NULL;
        }
    }
    nx_group_by *g = calloc(1, sizeof *g);
    if (!g)
        goto oom;
    g->n_keys = n_keys;
    g->n_slots = 1024;
    g->scratch_cap = 256;
    if (!(g->types = malloc(n_keys * sizeof *g->types)) || !(g->slots = calloc(g->n_slots, sizeof *g->slots)) ||
        !(g->scratch = malloc(g->scratch_cap)))
        goto oom;
    memcpy(g->types, key_types, n_keys * sizeof *g->types);
    return g;
oom:
    nx_group_by_free(g);
    nx_error_set(err, "group by: out of memory");
    return NULL;
}

void nx_group_by_free(nx_group_by *g)
{
    if (!g)
        return;
    free(g->types);
    free(g->groups);
    free(g->slots);
    free(g->keys);
    free(g->scratch);
    free(g->order);
    free(g);
}

static int grow_slots(nx_group_by *g)
{
    size_t n = g->n_slots * 2;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < g->n_groups; i++) {
        size_t at = (size_t)g->groups[i].hash & (n - 1);
        while (s[at])
            at = (at + 1) & (n - 1);
        s[at] = (uint32_t)(i + 1);
    }
    free(g->slots);
    g->slots = s;
    g->n_slots = n;
    return 0;
}

/* Index of the group whose serialised key is scratch[0..len), created if new; -1 on OOM. */
static long find_or_add(nx_group_by *g, size_t len, nx_error *err)
{
    uint64_t h = XXH3_64bits(g->scratch, len);
    size_t mask = g->n_slots - 1, at = (size_t)h & mask;
    for (;;) {
        uint32_t s = g->slots[at];
        if (!s)
            break;
        const group *gr = &g->groups[s - 1];
        if (gr->hash == h && gr->key_len == len && memcmp(g->keys + gr->key_off, g->scratch, len) == 0)
            return (long)(s - 1);
        at = (at + 1) & mask;
    }
    if (g->n_groups >= UINT32_MAX - 1) {
        nx_error_set(err, "group by: more than %u groups", UINT32_MAX - 1);
        return -1;
    }
    if (g->n_groups == g->cap_groups) {
        size_t nc = g->cap_groups ? g->cap_groups * 2 : 64;
        group *ng = realloc(g->groups, nc * sizeof *ng);
        if (!ng)
            goto oom;
        g->groups = ng;
        g->cap_groups = nc;
    }
    if (g->keys_len + len > g->keys_cap) {
        size_t nc = g->keys_cap ? g->keys_cap : 4096;
        while (nc < g->keys_len + len)
            nc *= 2;
        char *nk = realloc(g->keys, nc);
        if (!nk)
            goto oom;
        g->keys = nk;
        g->keys_cap = nc;
    }
    memcpy(g->keys + g->keys_len, g->scratch, len);
    size_t idx = g->n_groups++;
    g->groups[idx] = (group){.hash = h, .key_off = g->keys_len, .key_len = len};
    g->keys_len += len;
    g->slots[at] = (uint32_t)(idx + 1);
    if (g->n_groups * 2 > g->n_slots && grow_slots(g) != 0)
        goto oom;
    return (long)idx;
oom:
    nx_error_set(err, "group by: out of memory at %zu groups", g->n_groups);
    return -1;
}

static void put_u64(char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (char)(v >> (8 * i));
}

static uint64_t get_u64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)(uint8_t)p[i] << (8 * i);
    return v;
}

int nx_group_by_add(nx_group_by *g, const nxpq_column_data *const *keys, const nx_group_values *values,
                    size_t n_sums, size_t n_rows, nx_error *err)
{
    return nx_group_by_add_kept(g, keys, values, n_sums, n_rows, NULL, err);
}

int nx_group_by_add_kept(nx_group_by *g, const nxpq_column_data *const *keys, const nx_group_values *values,
                         size_t n_sums, size_t n_rows, const uint8_t *keep, nx_error *err)
{
    if (n_sums > NX_GROUP_SUMS) {
        nx_error_set(err, "group by: %zu sums, at most %d", n_sums, NX_GROUP_SUMS);
        return -1;
    }
    if (n_sums > g->n_sums)
        g->n_sums = n_sums;
    long last = -1;
    for (size_t r = 0; r < n_rows; r++) {
        if (keep && !keep[r])
            continue;
        size_t len = 0;
        for (size_t k = 0; k < g->n_keys; k++) {
            const nxpq_column_data *c = keys[k];
            bool present = !c->valid || c->valid[r];
            size_t need = 1 + (!present ? 0 : c->type == NXPQ_STRING ? 4 + (size_t)(c->offsets[r + 1] - c->offsets[r]) : 8);
            if (len + need > g->scratch_cap) {
                size_t nc = g->scratch_cap * 2;
                while (nc < len + need)
                    nc *= 2;
                char *ns = realloc(g->scratch, nc);
                if (!ns) {
                    nx_error_set(err, "group by: out of memory for a %zu-byte key", len + need);
                    return -1;
                }
                g->scratch = ns;
                g->scratch_cap = nc;
            }
            char *p = g->scratch + len;
            if (!present) {
                p[0] = 0;
            } else {
                p[0] = 1;
                switch (c->type) {
                case NXPQ_INT32: put_u64(p + 1, (uint64_t)(int64_t)c->values.i32[r]); break;
                case NXPQ_INT64: put_u64(p + 1, (uint64_t)c->values.i64[r]); break;
                case NXPQ_BOOLEAN: put_u64(p + 1, c->values.b[r] ? 1u : 0u); break;
                default: {
                    uint32_t sl = (uint32_t)(c->offsets[r + 1] - c->offsets[r]);
                    memcpy(p + 1, &sl, 4);
                    memcpy(p + 5, c->data + c->offsets[r], sl);
                    break;
                }
                }
            }
            len += need;
        }
        /* Rows often repeat the previous row's key (one engine's run of one opcode):
         * compare with that group first and skip the hash and probe on a match. */
        long gi;
        const group *lg = last >= 0 ? &g->groups[last] : NULL;
        if (lg && lg->key_len == len && memcmp(g->keys + lg->key_off, g->scratch, len) == 0)
            gi = last;
        else if ((gi = find_or_add(g, len, err)) < 0)
            return -1;
        last = gi;
        nx_group_stats *st = &g->groups[gi].st;
        st->count++;
        g->totals.count++;
        for (size_t j = 0; j < n_sums; j++) {
            const nx_group_values *vj = &values[j];
            if (vj->valid && !vj->valid[r])
                continue;
            if (__builtin_add_overflow(st->sum[j], vj->v[r], &st->sum[j]) ||
                __builtin_add_overflow(g->totals.sum[j], vj->v[r], &g->totals.sum[j])) {
                nx_error_set(err, "group by: sum %zu overflows a 64-bit integer", j + 1);
                return -1;
            }
            st->n_values[j]++;
            g->totals.n_values[j]++;
        }
    }
    return 0;
}

size_t nx_group_by_count(const nx_group_by *g) { return g->n_groups; }
nx_group_stats nx_group_by_totals(const nx_group_by *g) { return g->totals; }

static void decode_key(const nx_group_by *g, size_t gi, size_t k, nx_group_key *out)
{
    const group *gr = &g->groups[gi];
    const char *p = g->keys + gr->key_off;
    for (size_t j = 0;; j++) {
        bool present = p[0] != 0;
        bool str = g->types[j] == NXPQ_STRING;
        uint32_t sl = 0;
        if (present && str)
            memcpy(&sl, p + 1, 4);
        if (j == k) {
            *out = (nx_group_key){.null = !present, .type = g->types[j]};
            if (present && str) {
                out->s = p + 5;
                out->len = sl;
            } else if (present) {
                out->i = (int64_t)get_u64(p + 1);
            }
            return;
        }
        p += 1 + (!present ? 0 : str ? 4 + (size_t)sl : 8);
    }
}

void nx_group_by_key(const nx_group_by *g, size_t i, size_t k, nx_group_key *out)
{
    decode_key(g, g->order ? g->order[i] : i, k, out);
}

const nx_group_stats *nx_group_by_stats(const nx_group_by *g, size_t i)
{
    return &g->groups[g->order ? g->order[i] : i].st;
}

/* qsort has no context argument in C11: sort entries that carry what they need. */
typedef struct sort_entry {
    size_t idx;
    const nx_group_by *g;
    int by;                  /* the sum sorted by, or -1: count */
} sort_entry;

static int cmp_entry(const void *pa, const void *pb)
{
    const sort_entry *a = pa, *b = pb;
    const nx_group_by *g = a->g;
    const nx_group_stats *x = &g->groups[a->idx].st, *y = &g->groups[b->idx].st;
    if (a->by < 0) {
        if (x->count != y->count)
            return x->count > y->count ? -1 : 1;
    } else {
        int j = a->by;
        bool xn = x->n_values[j] == 0, yn = y->n_values[j] == 0;
        if (xn != yn)
            return xn ? 1 : -1;
        if (x->sum[j] != y->sum[j])
            return x->sum[j] > y->sum[j] ? -1 : 1;
    }
    for (size_t k = 0; k < g->n_keys; k++) {
        nx_group_key ka, kb;
        decode_key(g, a->idx, k, &ka);
        decode_key(g, b->idx, k, &kb);
        if (ka.null != kb.null)
            return ka.null ? 1 : -1;
        if (ka.null)
            continue;
        if (ka.type == NXPQ_STRING) {
            size_t n = ka.len < kb.len ? ka.len : kb.len;
            int c = n ? memcmp(ka.s, kb.s, n) : 0;
            if (c)
                return c < 0 ? -1 : 1;
            if (ka.len != kb.len)
                return ka.len < kb.len ? -1 : 1;
        } else if (ka.i != kb.i) {
            return ka.i < kb.i ? -1 : 1;
        }
    }
    return 0;
}

int nx_group_by_sort(nx_group_by *g, int by, nx_error *err)
{
    int key = by >= 0 && (size_t)by < g->n_sums ? by : -1;
    size_t n = g->n_groups;
    sort_entry *e = malloc((n ? n : 1) * sizeof *e);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!e || !order) {
        free(e);
        free(order);
        nx_error_set(err, "group by: out of memory sorting %zu groups", n);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        e[i] = (sort_entry){.idx = i, .g = g, .by = key};
    qsort(e, n, sizeof *e, cmp_entry);
    for (size_t i = 0; i < n; i++)
        order[i] = e[i].idx;
    free(e);
    free(g->order);
    g->order = order;
    return 0;
}
