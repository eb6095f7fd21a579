/* usage.c — the utilisation lanes of a profile over a window (rules in usage.h). */
#include "query/usage.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "util/text.h"

/* A lane and how its series are keyed and labelled (usage.h's table). */
typedef struct lane_rule {
    nx_usage_lane lane;                       /* first: nx_usage_lane_at hands out its address */
    bool str_key;                             /* the one key column is a STRING */
    const char *only;                         /* str_key: when a row has this key, only such rows count */
    bool labelled;
    const char *key_words[NX_USAGE_MAX_KEYS]; /* label "<word0> <k0> <word1> <k1>"; NULL: the key text */
    const char *fixed_label;                  /* label of a lane without key columns */
} lane_rule;

static const lane_rule RULES[NX_USAGE_LANES] = {
    {{"DmaUsage", "dma", "DMA throughput", "current_throughput", "bytes_per_second", {"pcore_idx"}, false, false,
      "core"}, false, NULL, false, {NULL}, NULL},
    {{"HbmUsage", "hbm", "HBM usage", "current_throughput", "bytes_per_second", {"pcore_idx"}, false, false, "core"},
     false, NULL, false, {NULL}, NULL},
    {{"SbufUsage", "sbuf", "SBUF usage", "avg_util_percent", "percent", {"pcore_idx"}, false, true, "core"}, false,
     NULL, false, {NULL}, NULL},
    {{"PsumUsage", "psum", "PSUM usage", "avg_util_percent", "percent", {"pcore_idx"}, false, true, "core"}, false,
     NULL, false, {NULL}, NULL},
    {{"PendingDma", "pending", "Pending DMA", "value", "", {"pcore_idx"}, true, true, "core"}, false, NULL, false,
     {NULL}, NULL},
    {{"CpuUsage", "cpu", "CPU (host)", "util_percent", "percent", {"cpu_id"}, true, true, "CPU"}, true, "average",
     true, {NULL}, NULL},
    {{"HostMemUsage", "hostmem", "Host memory", "used_percent", "percent", {NULL}, true, true, "host"}, false, NULL,
     true, {NULL}, "host"},
    {{"SystemProfileHbmUsage", "devhbm", "Device HBM", "total_bytes", "bytes", {"device_idx", "hbm_idx"}, true, true,
      "HBM"}, false, NULL, true, {"device", "hbm"}, NULL},
};

const nx_usage_lane *nx_usage_lane_at(size_t i) { return i < NX_USAGE_LANES ? &RULES[i].lane : NULL; }

const nx_usage_lane *nx_usage_lane_find(const char *table)
{
    for (size_t i = 0; i < NX_USAGE_LANES; i++)
        if (strcmp(RULES[i].lane.table, table) == 0)
            return &RULES[i].lane;
    return NULL;
}

static void series_free(nx_usage_series *s)
{
    for (size_t j = 0; j < NX_USAGE_MAX_KEYS; j++)
        free(s->key[j].s);
    free(s->label);
    free(s->t);
    free(s->v);
}

void nx_usage_free(nx_usage *u)
{
    for (size_t i = 0; i < u->n; i++)
        series_free(&u->series[i]);
    free(u->series);
    memset(u, 0, sizeof *u);
}

/* One row's key, as read from a batch. */
typedef struct row_key {
    bool has[NX_USAGE_MAX_KEYS];
    int64_t k[NX_USAGE_MAX_KEYS];
    const char *s;                   /* str_key: NULL when null */
    size_t len;
} row_key;

static bool key_equal(const nx_usage_series *s, const row_key *k, size_t nk, bool str_key)
{
    if (str_key)
        return k->s ? !s->key[0].null && s->key[0].len == k->len && memcmp(s->key[0].s, k->s, k->len) == 0
                    : s->key[0].null;
    for (size_t j = 0; j < nk; j++)
        if (s->key[j].null == k->has[j] || (k->has[j] && s->key[j].i != k->k[j]))
            return false;
    return true;
}

/* The label of a labelled series (usage.h); false when out of memory. */
static bool make_label(nx_usage_series *s, const lane_rule *r, size_t nk)
{
    if (r->fixed_label)
        return (s->label = nx_text_dup(r->fixed_label, strlen(r->fixed_label))) != NULL;
    if (r->str_key)
        return s->key[0].null || (s->label = nx_text_dup(s->key[0].s, s->key[0].len)) != NULL;
    char lab[128]; /* two words of <= 8 bytes and two int64s fit */
    size_t n = 0;
    for (size_t j = 0; j < nk && n < sizeof lab; j++) {
        char num[24];
        if (!s->key[j].null)
            snprintf(num, sizeof num, "%" PRId64, s->key[j].i);
        else
            strcpy(num, "null");
        n += (size_t)snprintf(lab + n, sizeof lab - n, "%s%s%s%s", j ? " " : "", r->key_words[j] ? r->key_words[j] : "",
                              r->key_words[j] ? " " : "", num);
    }
    return (s->label = nx_text_dup(lab, n < sizeof lab ? n : sizeof lab - 1)) != NULL;
}

/* A new series for key k (width empty buckets). false when out of memory. */
static bool series_new(nx_usage_series *s, const lane_rule *r, const row_key *k, size_t nk, bool is_int,
                       uint32_t width)
{
    *s = (nx_usage_series){.lane = &r->lane, .labelled = r->labelled, .is_int = is_int,
                           .t = malloc(width * sizeof *s->t), .v = malloc(width * sizeof *s->v)};
    for (size_t j = 0; j < nk; j++) {
        s->key[j].null = r->str_key ? !k->s : !k->has[j];
        s->key[j].i = k->k[j];
    }
    if (r->str_key && k->s) {
        if (!(s->key[0].s = nx_text_dup(k->s, k->len)))
            return false;
        s->key[0].len = k->len;
    }
    if (!s->t || !s->v || (r->labelled && !make_label(s, r, nk)))
        return false;
    for (uint32_t q = 0; q < width; q++)
        s->t[q] = INT64_MIN;
    return true;
}

/* Moves the occupied buckets of each series to their front. */
static void compact(nx_usage_series *s, uint32_t width)
{
    size_t n = 0;
    for (uint32_t q = 0; q < width; q++)
        if (s->t[q] != INT64_MIN) {
            s->t[n] = s->t[q];
            s->v[n++] = s->v[q];
        }
    s->n = n;
}

/* The scan of one table: its projection and the series found so far. */
typedef struct table_pass {
    const lane_rule *r;
    int64_t start, end;
    uint32_t width;
    unsigned __int128 L;
    bool is_int;
    size_t nk;
    int kcol[NX_USAGE_MAX_KEYS];     /* batch column of each key (-1: null) */
    nx_usage_series ser[NX_USAGE_MAX_SERIES];
    size_t n_ser;
    bool only_seen, overflow;
    size_t hint;                     /* rows of consecutive keys (CPUs, HBMs) come in turn: the next one first */
} table_pass;

static void row_key_of(const table_pass *p, const nxpq_batch *bt, size_t i, row_key *k)
{
    memset(k, 0, sizeof *k);
    for (size_t j = 0; j < p->nk; j++) {
        if (p->kcol[j] < 0)
            continue;
        const nxpq_column_data *ck = &bt->columns[p->kcol[j]];
        if (ck->valid && !ck->valid[i])
            continue;
        k->has[j] = true;
        if (p->r->str_key) {
            k->s = ck->data + ck->offsets[i];
            k->len = (size_t)(ck->offsets[i + 1] - ck->offsets[i]);
        } else {
            k->k[j] = ck->values.i64[i];
        }
    }
}

/* The series of key k: an index, NX_USAGE_MAX_SERIES when it is dropped (the cap
 * before an "average" row may come), or -1 with err. */
static int series_of(table_pass *p, const row_key *k, nx_error *err)
{
    if (p->hint < p->n_ser && key_equal(&p->ser[p->hint], k, p->nk, p->r->str_key))
        return (int)p->hint;
    for (size_t q = 0; q < p->n_ser; q++)
        if (key_equal(&p->ser[q], k, p->nk, p->r->str_key))
            return (int)q;
    if (p->n_ser == NX_USAGE_MAX_SERIES) {
        if (p->r->only) {
            p->overflow = true;
            return NX_USAGE_MAX_SERIES;
        }
        return nx_error_set(err, "%s: more than %d series", p->r->lane.table, NX_USAGE_MAX_SERIES);
    }
    nx_usage_series *s = &p->ser[p->n_ser++];
    if (!series_new(s, p->r, k, p->nk, p->is_int, p->width))
        return nx_error_set(err, "%s: out of memory", p->r->lane.table);
    return (int)(p->n_ser - 1);
}

/* Whether the row with key k is used, under the "only" rule (usage.h). */
static bool only_rule(table_pass *p, const row_key *k)
{
    if (!p->r->only)
        return true;
    size_t ol = strlen(p->r->only);
    bool is_only = k->s && k->len == ol && memcmp(k->s, p->r->only, ol) == 0;
    if (is_only && !p->only_seen) { /* from now on only these rows: drop the per-key series */
        p->only_seen = true;
        for (size_t s = 0; s < p->n_ser; s++)
            series_free(&p->ser[s]);
        p->n_ser = 0;
        p->hint = 0;
        p->overflow = false;
    }
    return !p->only_seen || is_only;
}

static int add_row(table_pass *p, const nxpq_batch *bt, size_t i, nx_error *err)
{
    const nxpq_column_data *c0 = &bt->columns[0], *c1 = &bt->columns[1];
    if ((c0->valid && !c0->valid[i]) || (c1->valid && !c1->valid[i]))
        return 0;
    int64_t ts = c0->values.i64[i];
    if (ts > p->end || (ts < p->start && !p->r->lane.before))
        return 0;
    nx_usage_value v;
    if (p->is_int)
        v.i = c1->type == NXPQ_INT32 ? c1->values.i32[i] : c1->values.i64[i];
    else
        v.f = c1->type == NXPQ_FLOAT ? (double)c1->values.f32[i] : c1->values.f64[i];
    row_key k;
    row_key_of(p, bt, i, &k);
    if (!only_rule(p, &k))
        return 0;
    int si = series_of(p, &k, err);
    if (si < 0 || si == NX_USAGE_MAX_SERIES)
        return si < 0 ? -1 : 0;
    nx_usage_series *s = &p->ser[si];
    p->hint = (size_t)si + 1;
    if (ts < p->start) { /* before the window: the latest wins, ties the later */
        if (!s->has_before || ts >= s->before_t) {
            s->has_before = true;
            s->before_t = ts;
            s->before_v = v;
        }
        return 0;
    }
    uint32_t b = (uint32_t)((unsigned __int128)((__int128)ts - (__int128)p->start) * p->width / p->L);
    if (s->t[b] == INT64_MIN || (p->is_int ? v.i > s->v[b].i : v.f > s->v[b].f)) {
        s->t[b] = ts;
        s->v[b] = v;
    }
    return 0;
}

/* Appends the pass's series to out. */
static int take_series(table_pass *p, nx_usage *out, nx_error *err)
{
    if (p->n_ser == 0)
        return 0;
    nx_usage_series *g = realloc(out->series, (out->n + p->n_ser) * sizeof *g);
    if (!g)
        return nx_error_set(err, "%s: out of memory", p->r->lane.table);
    out->series = g;
    for (size_t s = 0; s < p->n_ser; s++) {
        compact(&p->ser[s], p->width);
        out->series[out->n++] = p->ser[s];
    }
    p->n_ser = 0;
    return 0;
}

/* The projection: timestamp, value, then the key columns the file has with the
 * right type (a missing one reads as null). false when the table cannot give
 * series (usage.h). */
static bool projection(nx_profile_table *t, table_pass *p, const char **cols, size_t *n_cols)
{
    const nx_usage_lane *l = &p->r->lane;
    int ct = nx_profile_table_find_column(t, "timestamp"), cv = nx_profile_table_find_column(t, l->value);
    if (ct < 0 || cv < 0 || nx_profile_table_column(t, (size_t)ct)->type != NXPQ_INT64)
        return false;
    nxpq_type tv = nx_profile_table_column(t, (size_t)cv)->type;
    if (tv != NXPQ_FLOAT && tv != NXPQ_DOUBLE && tv != NXPQ_INT64 && tv != NXPQ_INT32)
        return false;
    p->is_int = tv == NXPQ_INT64 || tv == NXPQ_INT32;
    cols[0] = "timestamp";
    cols[1] = l->value;
    *n_cols = 2;
    for (p->nk = 0; p->nk < NX_USAGE_MAX_KEYS && l->keys[p->nk]; p->nk++) {
        int c = nx_profile_table_find_column(t, l->keys[p->nk]);
        p->kcol[p->nk] = -1;
        if (c >= 0 && nx_profile_table_column(t, (size_t)c)->type == (p->r->str_key ? NXPQ_STRING : NXPQ_INT64)) {
            p->kcol[p->nk] = (int)*n_cols;
            cols[(*n_cols)++] = l->keys[p->nk];
        }
    }
    return true;
}

static int read_table(const char *dir, table_pass *p, nx_usage *out, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, p->r->lane.table, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc < 0)
        return -1;
    const char *cols[2 + NX_USAGE_MAX_KEYS];
    size_t n_cols;
    nx_profile_scan *sc = NULL;
    rc = 0;
    if (projection(t, p, cols, &n_cols)) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = n_cols, .range_column = "timestamp",
                                      .range_min = p->r->lane.before ? INT64_MIN : p->start, .range_max = p->end};
        const nxpq_batch *bt;
        int more = (sc = nx_profile_scan_open(t, &so, err)) ? 1 : -1;
        while (more > 0 && (more = nx_profile_scan_next(sc, &bt, err)) > 0)
            for (size_t i = 0; more > 0 && i < bt->n_rows; i++)
                if (add_row(p, bt, i, err) < 0)
                    more = -1;
        rc = more < 0 ? -1 : 0;
        if (rc == 0 && p->overflow)
            rc = nx_error_set(err, "%s: more than %d series", p->r->lane.table, NX_USAGE_MAX_SERIES);
        if (rc == 0)
            rc = take_series(p, out, err);
    }
    for (size_t s = 0; s < p->n_ser; s++)
        series_free(&p->ser[s]);
    nx_profile_scan_close(sc);
    nx_profile_table_close(t);
    return rc;
}

int nx_usage_read(const char *profile_dir, const char *const *tables, size_t n_tables, int64_t start, int64_t end,
                  uint32_t width, nx_usage *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    bool want[NX_USAGE_LANES] = {false};
    for (size_t i = 0; i < n_tables; i++) {
        const nx_usage_lane *l = nx_usage_lane_find(tables[i]);
        if (!l)
            return nx_error_set(err, "%s: not a usage table", tables[i]);
        want[(const lane_rule *)l - RULES] = true;
    }
    if (start > end || width == 0)
        return nx_error_set(err, "usage: window [%" PRId64 ", %" PRId64 "] at width %" PRIu32 " is empty", start,
                              end, width);
    table_pass *p = malloc(sizeof *p);
    if (!p)
        return nx_error_set(err, "usage: out of memory");
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < NX_USAGE_LANES; k++) {
        if (!want[k])
            continue;
        *p = (table_pass){.r = &RULES[k], .start = start, .end = end, .width = width,
                          .L = (unsigned __int128)((__int128)end - (__int128)start + 1)};
        rc = read_table(profile_dir, p, out, err);
    }
    free(p);
    if (rc != 0)
        nx_usage_free(out);
    return rc;
}
