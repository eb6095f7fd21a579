/*
 * breakdown.c — the breakdown's collection pass and answers (see breakdown.h):
 * one scan keeps the device rows, launches, rank spans and steps; rows are then
 * linked to their launches and each (rank, device) is answered per window.
 */
#include "query/breakdown.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/breakdown_internal.h"
#include "query/device_activity.h"
#include "util/json.h"

const char *nx_breakdown_class_name(int cls)
{
    static const char *const N[] = {"compute", "communication", "memory"};
    return cls >= 0 && cls < NX_BD_N_CLASSES ? N[cls] : "";
}

const char *nx_breakdown_xfer_name(int kind)
{
    static const char *const N[] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "memset", "other"};
    return kind >= 0 && kind < NX_BD_N_XFER ? N[kind] : "";
}

static bool contains(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    for (size_t i = 0; i + l <= n; i++)
        if (memcmp(s + i, lit, l) == 0)
            return true;
    return false;
}

/* A memcpy's direction from its name (Kineto "Memcpy HtoD (...)", or "H2D"). */
static int xfer_kind(const char *name, size_t n, nx_activity_kind k)
{
    static const char *const A[][2] = {{"HtoD", "H2D"}, {"DtoH", "D2H"}, {"DtoD", "D2D"}, {"HtoH", "H2H"},
                                       {"PtoP", "P2P"}};
    if (k == NX_ACT_MEMSET)
        return NX_BD_MEMSET;
    for (int i = 0; i < NX_BD_MEMSET; i++)
        if (contains(name, n, A[i][0]) || contains(name, n, A[i][1]))
            return i;
    return NX_BD_XOTHER;
}

/* A non-negative integer member of args (a number or a decimal string), or -1. */
static int64_t args_int(const char *js, size_t len, const char *key)
{
    const char *args, *v;
    size_t al, vl;
    if (!nx_json_member(js, len, "args", &args, &al) || !nx_json_member(args, al, key, &v, &vl))
        return -1;
    if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"')
        v++, vl -= 2;
    if (vl == 0 || vl > 18)
        return -1;
    int64_t x = 0;
    for (size_t i = 0; i < vl; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

static int64_t correlation(const char *js, size_t len)
{
    int64_t c = args_int(js, len, "correlation");
    return c >= 0 ? c : args_int(js, len, "correlation_id");
}

/* ------------------------------------------------------------- names -- */

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

/* The index of name in the table, adding it: -1 when out of memory. */
static int64_t intern(bd_names *t, const char *s, size_t n)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        int64_t *slot = malloc(cap * sizeof *slot);
        char **v = realloc(t->v, cap / 2 * sizeof *v);
        if (!slot || !v) {
            free(slot);
            if (v)
                t->v = v;
            return -1;
        }
        t->v = v;
        for (size_t i = 0; i < cap; i++)
            slot[i] = -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = hash(v[i], strlen(v[i])) & (cap - 1);
            while (slot[j] >= 0)
                j = (j + 1) & (cap - 1);
            slot[j] = (int64_t)i;
        }
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
    }
    size_t j = hash(s, n) & (t->cap - 1);
    for (; t->slot[j] >= 0; j = (j + 1) & (t->cap - 1))
        if (strlen(t->v[t->slot[j]]) == n && memcmp(t->v[t->slot[j]], s, n) == 0)
            return t->slot[j];
    char *c = strndup(s, n);
    if (!c)
        return -1;
    t->v[t->n] = c;
    t->slot[j] = (int64_t)t->n;
    return (int64_t)t->n++;
}

/* ---------------------------------------------------------- collect -- */

#define PUSH(arr, n, cap, x)                                                                                     \
    (((n) < (cap) || grow((void **)&(arr), &(cap), sizeof *(arr))) ? ((arr)[(n)++] = (x), true) : false)

static bool grow(void **p, size_t *cap, size_t elem)
{
    size_t c = *cap ? 2 * *cap : 64;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static bool widen_span(bd_acc *a, int64_t rank, int64_t s, int64_t e)
{
    for (size_t i = 0; i < a->n_spans; i++)
        if (a->spans[i].rank == rank) {
            if (s < a->spans[i].lo)
                a->spans[i].lo = s;
            if (e > a->spans[i].hi)
                a->spans[i].hi = e;
            return true;
        }
    bd_span sp = {rank, s, e};
    return PUSH(a->spans, a->n_spans, a->cap_spans, sp);
}

static bool add_device_row(bd_acc *a, const nx_activity_row *r)
{
    int64_t name = intern(&a->names, r->name, r->name_len);
    if (name < 0)
        return false;
    nx_activity_kind k = r->a.kind;
    bd_row row = {.start = r->start_ns, .end = r->end_ns, .launch = INT64_MIN, .rank = r->a.rank,
                  .device = r->a.device, .corr = correlation(r->json, r->json_len), .name = name,
                  .dtype = (int)r->a.device_type, .kind = (int)k, .bytes = -1};
    if (k == NX_ACT_KERNEL)
        row.cls = nx_activity_is_collective(r->name, r->name_len) ? NX_BD_COMM : NX_BD_COMPUTE;
    else {
        row.cls = NX_BD_MEMORY;
        row.xfer = xfer_kind(r->name, r->name_len, k);
        row.bytes = args_int(r->json, r->json_len, "bytes");
    }
    return PUSH(a->rows, a->n_rows, a->cap_rows, row);
}

/* The host figures (breakdown.h): the span and the synchronous copies. */
static void add_host(bd_acc *a, const nx_activity_row *r)
{
    nx_bd_host *h = &a->host;
    if (!a->any_row || r->start_ns < h->first_ns)
        h->first_ns = r->start_ns;
    if (!a->any_row || r->end_ns > h->last_ns)
        h->last_ns = r->end_ns;
    a->any_row = true;
    if (r->a.device_type == NX_DEVICE_NONE && nx_activity_is_sync_copy(r->name, r->name_len)) {
        h->sync_copies++;
        h->sync_copy_ns += r->end_ns - r->start_ns;   /* a sum of row durations: ~2^63 ns is 292 years */
    }
}

static int on_row(void *ctx, const nx_activity_row *r, nx_error *err)
{
    bd_acc *a = ctx;
    if (a->rank >= 0 && r->a.rank != a->rank)
        return 0;
    add_host(a, r);
    bool ok = widen_span(a, r->a.rank, r->start_ns, r->end_ns);
    if (ok && nx_activity_is_busy(r->a.kind))
        ok = add_device_row(a, r);
    else if (ok && r->a.is_step) {
        bd_step s = {r->a.rank, r->a.step, r->start_ns, r->end_ns, strndup(r->name, r->name_len)};
        ok = s.name && PUSH(a->steps, a->n_steps, a->cap_steps, s);
        if (!ok)
            free(s.name);
    } else if (ok && r->a.device_type == NX_DEVICE_NONE) {
        const char *v;
        size_t vl;
        int64_t c = nx_json_member(r->json, r->json_len, "ph", &v, &vl) ? -1 : correlation(r->json, r->json_len);
        bd_launch l = {r->a.rank, c, r->start_ns};
        ok = c < 0 || PUSH(a->launches, a->n_launches, a->cap_launches, l);
    }
    return ok ? 0 : nx_error_set(err, "breakdown: out of memory at SystemProfileEvents row %" PRId64, r->ordinal);
}

static int cmp_launch(const void *pa, const void *pb)
{
    const bd_launch *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->corr != b->corr)
        return a->corr < b->corr ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Each row's launch: the earliest host row of its rank with its correlation id. */
static void link_launches(bd_acc *a)
{
    if (a->n_launches)   /* qsort must not get a null array */
        qsort(a->launches, a->n_launches, sizeof *a->launches, cmp_launch);
    for (size_t i = 0; i < a->n_rows; i++) {
        bd_row *r = &a->rows[i];
        if (r->corr < 0)
            continue;
        size_t lo = 0, hi = a->n_launches;
        bd_launch key = {r->rank, r->corr, INT64_MIN};
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (cmp_launch(&a->launches[m], &key) < 0)
                lo = m + 1;
            else
                hi = m;
        }
        if (lo < a->n_launches && a->launches[lo].rank == r->rank && a->launches[lo].corr == r->corr)
            r->launch = a->launches[lo].start;
    }
}

static int cmp_row(const void *pa, const void *pb)
{
    const bd_row *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

static void acc_free(bd_acc *a)
{
    for (size_t i = 0; i < a->names.n; i++)
        free(a->names.v[i]);
    free(a->names.v);
    free(a->names.slot);
    for (size_t i = 0; i < a->n_steps; i++)
        free(a->steps[i].name);
    free(a->steps);
    free(a->rows);
    free(a->launches);
    free(a->spans);
}

void nx_breakdown_free(nx_breakdown *b)
{
    for (size_t i = 0; i < b->n_entries; i++)
        free(b->entries[i].step_name);
    for (size_t i = 0; i < b->n_kernels; i++)
        free(b->kernels[i].name);
    free(b->entries);
    free(b->kernels);
    *b = (nx_breakdown){0};
}

int nx_breakdown_read(const char *dir, int64_t rank, int64_t step, size_t top, nx_breakdown *out, nx_error *err)
{
    *out = (nx_breakdown){0};
    bd_acc a = {.rank = rank};
    int rc = nx_activity_scan(dir, on_row, &a, err);
    if (rc == 0) {
        link_launches(&a);
        if (a.n_rows)
            qsort(a.rows, a.n_rows, sizeof *a.rows, cmp_row);
        rc = bd_answer_entries(&a, step, out, err);
        out->host = a.host;
    }
    if (rc == 0)
        rc = bd_answer_kernels(&a, top, out, err);
    if (rc < 0)
        nx_breakdown_free(out);
    acc_free(&a);
    return rc;
}
