/* counter_lanes.c — memory and counter lanes of framework rows over a window (rules in counter_lanes.h). */
#define _DEFAULT_SOURCE /* strndup */
#include "query/counter_lanes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/engine/budget.h"
#include "util/json.h"

static const nx_counter_kind_info KINDS[] = {
    [NX_COUNTER_MEMORY] = {"memory", "bytes", {"allocated", "reserved", NULL}},
    [NX_COUNTER_COUNTER] = {"counter", NULL, {NULL}},
};
/* The args members of a [memory] row that give its two series, in series order. */
static const char *const MEMORY_MEMBERS[2] = {"Total Allocated", "Total Reserved"};
static const char COUNTER_PREFIX[] = "{\"ph\":\"C\"";

const nx_counter_kind_info *nx_counter_kind_at(nx_counter_kind k)
{
    return k <= NX_COUNTER_COUNTER ? &KINDS[k] : NULL;
}

static void lane_free(nx_counter_lane *l)
{
    for (size_t s = 0; s < l->n_series; s++) {
        free(l->series[s].name);
        free(l->series[s].t);
        free(l->series[s].v);
    }
    free(l->series);
    free(l->name);
    free(l->label);
}

void nx_counter_lanes_free(nx_counter_lanes *c)
{
    for (size_t i = 0; i < c->n; i++)
        lane_free(&c->lanes[i]);
    free(c->lanes);
    memset(c, 0, sizeof *c);
}

/* Batch columns of the pass, in projection order. */
enum { C_START, C_NAME, C_SOURCE, C_EXTRA, C_FIXED };

/* One read: the window, the lanes found so far (memory and counter lanes apart,
 * each in order of first appearance) and where the optional columns are. */
typedef struct pass {
    int64_t start, end;
    uint32_t width;
    unsigned __int128 L;
    nx_budget budget;
    nx_counter_lane *lanes[2];       /* by kind, NX_COUNTER_MAX_LANES each */
    size_t n_lanes[2];
    int col_worker, col_pid;         /* batch column, or -1: null */
} pass;

static bool key_eq(nx_counter_key a, nx_counter_key b) { return a.null == b.null && (a.null || a.v == b.v); }

static nx_counter_key key_of(const nxpq_batch *bt, int col, size_t i)
{
    if (col < 0)
        return (nx_counter_key){.null = true};
    const nxpq_column_data *c = &bt->columns[col];
    if (c->valid && !c->valid[i])
        return (nx_counter_key){.null = true};
    return (nx_counter_key){.v = c->values.i64[i]};
}

/* A JSON number's text as a double: false for anything else (strings, true,
 * null, and text strtod alone would take, such as "0x10" or "inf"). */
static bool json_number(const char *v, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789+-.eE", v[i]))
            return false;
    memcpy(buf, v, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    *out = strtod(buf, &end);
    return *end == '\0' && errno != ERANGE;
}

/* An args member that is a whole number within int64 as a key part; else null. */
static nx_counter_key int_member(const char *args, size_t len, const char *key)
{
    const char *v;
    size_t n;
    double d;
    if (!nx_json_member(args, len, key, &v, &n) || !json_number(v, n, &d) || d < -9.2e18 || d > 9.2e18 ||
        d != (double)(int64_t)d) /* the range first: converting a double out of it is undefined */
        return (nx_counter_key){.null = true};
    return (nx_counter_key){.v = (int64_t)d};
}

/* A lane's label (counter_lanes.h); NULL when out of memory. */
static char *lane_label(const nx_counter_lane *l)
{
    char rank[40] = "", what[96];
    if (!l->worker_gid.null)
        snprintf(rank, sizeof rank, "rank %" PRId64 " / ", l->worker_gid.v);
    if (l->kind == NX_COUNTER_COUNTER) {
        size_t need = strlen(rank) + strlen(l->name) + 32;
        char *s = malloc(need);
        if (s && l->process_id.null)
            snprintf(s, need, "%s%s", rank, l->name);
        else if (s)
            snprintf(s, need, "%s%s (pid %" PRId64 ")", rank, l->name, l->process_id.v);
        return s;
    }
    if (l->device_type.null)
        snprintf(what, sizeof what, "memory");
    else if (l->device_type.v == 0)
        snprintf(what, sizeof what, "CPU memory");
    else if (l->device_type.v == 1 && !l->device_id.null)
        snprintf(what, sizeof what, "GPU %" PRId64 " memory", l->device_id.v);
    else if (l->device_type.v == 1)
        snprintf(what, sizeof what, "GPU memory");
    else if (!l->device_id.null)
        snprintf(what, sizeof what, "device type %" PRId64 " %" PRId64 " memory", l->device_type.v, l->device_id.v);
    else
        snprintf(what, sizeof what, "device type %" PRId64 " memory", l->device_type.v);
    size_t need = strlen(rank) + strlen(what) + 1;
    char *s = malloc(need);
    if (s)
        snprintf(s, need, "%s%s", rank, what);
    return s;
}

/* A new series named name[0..len) on lane l, width empty buckets taken from the
 * budget: its index, NX_QUERY_OVER_BUDGET or -1, with err. */
static int series_new(pass *p, nx_counter_lane *l, const char *name, size_t len, nx_error *err)
{
    if (l->n_series == NX_COUNTER_MAX_SERIES)
        return nx_error_set(err, "SystemProfileEvents: lane \"%s\" has more than %d series (the next: \"%.*s\")",
                              l->label, NX_COUNTER_MAX_SERIES, (int)(len > 64 ? 64 : len), name);
    if (!nx_budget_take(&p->budget, (uint64_t)p->width * (sizeof(int64_t) + sizeof(double)))) {
        nx_error_set(err, "SystemProfileEvents: lane \"%s\": its series at width %" PRIu32
                            " need more than the query memory budget (NXPROF_QUERY_MEMORY_MIB)", l->label, p->width);
        return NX_QUERY_OVER_BUDGET;
    }
    nx_counter_series *g = realloc(l->series, (l->n_series + 1) * sizeof *g);
    if (!g)
        return nx_error_set(err, "SystemProfileEvents: out of memory");
    l->series = g;
    nx_counter_series *s = &g[l->n_series];
    *s = (nx_counter_series){.name = strndup(name, len), .t = malloc(p->width * sizeof *s->t),
                             .v = malloc(p->width * sizeof *s->v)};
    l->n_series++; /* counted now, so lane_free frees what was allocated */
    if (!s->name || !s->t || !s->v)
        return nx_error_set(err, "SystemProfileEvents: out of memory");
    for (uint32_t q = 0; q < p->width; q++)
        s->t[q] = INT64_MIN;
    return (int)(l->n_series - 1);
}

/* Whether lane l has the key of `key` and, for a counter, the name name[0..nlen). */
static bool lane_is(const nx_counter_lane *l, const nx_counter_lane *key, const char *name, size_t nlen)
{
    return key_eq(l->worker_gid, key->worker_gid) && key_eq(l->device_type, key->device_type) &&
           key_eq(l->device_id, key->device_id) && key_eq(l->process_id, key->process_id) &&
           (!name || (strlen(l->name) == nlen && memcmp(l->name, name, nlen) == 0));
}

/* The lane of a key (a counter's named name[0..nlen), a memory lane's name NULL),
 * made when first seen (a memory lane with its two series): NULL with err (rc in
 * *rc) on failure. */
static nx_counter_lane *lane_of(pass *p, const nx_counter_lane *key, const char *name, size_t nlen, int *rc,
                                nx_error *err)
{
    nx_counter_lane *ls = p->lanes[key->kind];
    for (size_t i = p->n_lanes[key->kind]; i-- > 0;)
        if (lane_is(&ls[i], key, name, nlen))
            return &ls[i];
    *rc = -1;
    if (p->n_lanes[0] + p->n_lanes[1] == NX_COUNTER_MAX_LANES) {
        nx_error_set(err, "SystemProfileEvents: more than %d counter lanes (the next: %s \"%.*s\")",
                       NX_COUNTER_MAX_LANES, KINDS[key->kind].kind, name ? (int)(nlen > 64 ? 64 : nlen) : 0,
                       name ? name : "");
        return NULL;
    }
    nx_counter_lane *l = &ls[p->n_lanes[key->kind]++];
    *l = *key;
    l->name = name ? strndup(name, nlen) : NULL;
    l->label = (!name || l->name) ? lane_label(l) : NULL;
    if (!l->label) {
        nx_error_set(err, "SystemProfileEvents: out of memory");
        return NULL;
    }
    for (const char *const *s = KINDS[key->kind].series; *s; s++)
        if ((*rc = series_new(p, l, *s, strlen(*s), err)) < 0)
            return NULL;
    *rc = 0;
    return l;
}

/* One sample of series s: before the window, the latest (ties: the later);
 * inside it, the bucket's largest (ties: the earlier). */
static void add_sample(const pass *p, nx_counter_series *s, int64_t ts, double v)
{
    if (ts < p->start) {
        if (!s->has_before || ts >= s->before_t) {
            s->has_before = true;
            s->before_t = ts;
            s->before_v = v;
        }
        return;
    }
    uint32_t b = (uint32_t)((unsigned __int128)((__int128)ts - (__int128)p->start) * p->width / p->L);
    if (s->t[b] == INT64_MIN || v > s->v[b]) {
        s->t[b] = ts;
        s->v[b] = v;
    }
}

static int memory_row(pass *p, nx_counter_lane *key, const char *args, size_t alen, int64_t ts, nx_error *err)
{
    key->kind = NX_COUNTER_MEMORY;
    key->device_type = int_member(args, alen, "Device Type");
    key->device_id = int_member(args, alen, "Device Id");
    int rc;
    nx_counter_lane *l = lane_of(p, key, NULL, 0, &rc, err);
    if (!l)
        return rc;
    for (size_t s = 0; s < 2; s++) {
        const char *v;
        size_t n;
        double d;
        if (nx_json_member(args, alen, MEMORY_MEMBERS[s], &v, &n) && json_number(v, n, &d))
            add_sample(p, &l->series[s], ts, d);
    }
    return 0;
}

/* The series of lane l named key[0..klen), made when first seen. */
static int series_of(pass *p, nx_counter_lane *l, const char *key, size_t klen, nx_error *err)
{
    for (size_t s = 0; s < l->n_series; s++)
        if (strlen(l->series[s].name) == klen && memcmp(l->series[s].name, key, klen) == 0)
            return (int)s;
    return series_new(p, l, key, klen, err);
}

static int counter_row(pass *p, nx_counter_lane *key, const char *name, size_t nlen, const char *args, size_t alen,
                       int64_t ts, nx_error *err)
{
    key->kind = NX_COUNTER_COUNTER;
    int rc;
    nx_counter_lane *l = lane_of(p, key, name, nlen, &rc, err);
    if (!l)
        return rc;
    nx_json_iter it;
    const char *k, *v;
    size_t klen, vlen;
    double d;
    if (!nx_json_members_begin(&it, args, alen))
        return 0;
    while (nx_json_members_next(&it, &k, &klen, &v, &vlen)) {
        if (!json_number(v, vlen, &d))
            continue;
        int s = series_of(p, l, k, klen, err);
        if (s < 0)
            return s;
        add_sample(p, &l->series[s], ts, d);
    }
    return 0;
}

static bool str_at(const nxpq_batch *bt, int col, size_t i, const char **s, size_t *n)
{
    const nxpq_column_data *c = &bt->columns[col];
    if (c->valid && !c->valid[i])
        return false;
    *s = c->data + c->offsets[i];
    *n = (size_t)(c->offsets[i + 1] - c->offsets[i]);
    return true;
}

static int add_row(pass *p, const nxpq_batch *bt, size_t i, nx_error *err)
{
    static const char MEMORY[] = "[memory]", FRAMEWORK[] = "framework";
    const nxpq_column_data *ct = &bt->columns[C_START];
    const char *name, *src, *extra, *args;
    size_t nlen, slen, elen, alen;
    if ((ct->valid && !ct->valid[i]) || ct->values.i64[i] > p->end || !str_at(bt, C_NAME, i, &name, &nlen) ||
        !str_at(bt, C_SOURCE, i, &src, &slen) || slen != sizeof FRAMEWORK - 1 || memcmp(src, FRAMEWORK, slen) != 0 ||
        !str_at(bt, C_EXTRA, i, &extra, &elen))
        return 0;
    bool memory = nlen == sizeof MEMORY - 1 && memcmp(name, MEMORY, nlen) == 0;
    bool counter = !memory && elen >= sizeof COUNTER_PREFIX - 1 &&
                   memcmp(extra, COUNTER_PREFIX, sizeof COUNTER_PREFIX - 1) == 0;
    if ((!memory && !counter) || !nx_json_member(extra, elen, "args", &args, &alen))
        return 0;
    nx_counter_lane key = {.worker_gid = key_of(bt, p->col_worker, i), .process_id = {.null = true},
                           .device_type = {.null = true}, .device_id = {.null = true}};
    if (memory)
        return memory_row(p, &key, args, alen, ct->values.i64[i], err);
    key.process_id = key_of(bt, p->col_pid, i);
    return counter_row(p, &key, name, nlen, args, alen, ct->values.i64[i], err);
}

/* The projection: the four columns the lanes need, then worker_gid and
 * process_id where the file has them as INT64. false when a needed column is
 * missing or of another type (no lanes). */
static bool projection(nx_profile_table *t, pass *p, const char **cols, size_t *n_cols)
{
    static const char *const NEED[C_FIXED] = {"start_ts", "name", "trace_event_source", "extra_attributes_json"};
    for (size_t c = 0; c < C_FIXED; c++) {
        int k = nx_profile_table_find_column(t, NEED[c]);
        if (k < 0 || nx_profile_table_column(t, (size_t)k)->type != (c == C_START ? NXPQ_INT64 : NXPQ_STRING))
            return false;
        cols[c] = NEED[c];
    }
    *n_cols = C_FIXED;
    static const char *const OPT[2] = {"worker_gid", "process_id"};
    int *at[2] = {&p->col_worker, &p->col_pid};
    for (size_t o = 0; o < 2; o++) {
        int k = nx_profile_table_find_column(t, OPT[o]);
        *at[o] = -1;
        if (k >= 0 && nx_profile_table_column(t, (size_t)k)->type == NXPQ_INT64) {
            *at[o] = (int)*n_cols;
            cols[(*n_cols)++] = OPT[o];
        }
    }
    return true;
}

static int scan(nx_profile_table *t, pass *p, nxpq_scan_stats *stats, nx_error *err)
{
    const char *cols[C_FIXED + 2];
    size_t n_cols;
    if (!projection(t, p, cols, &n_cols))
        return 0;
    nx_profile_scan_options so = {.columns = cols, .n_columns = n_cols, .range_column = "start_ts",
                                  .range_min = INT64_MIN, .range_max = p->end};
    nx_profile_scan *sc = nx_profile_scan_open(t, &so, err);
    const nxpq_batch *bt;
    int more = sc ? 1 : -1;
    while (more > 0 && (more = nx_profile_scan_next(sc, &bt, err)) > 0)
        for (size_t i = 0; more > 0 && i < bt->n_rows; i++) {
            int rc = add_row(p, bt, i, err);
            if (rc < 0)
                more = rc;
        }
    if (sc)
        nx_profile_scan_get_stats(sc, stats);
    nx_profile_scan_close(sc);
    return more < 0 ? more : 0;
}

/* Moves each series' occupied buckets to its front. */
static void compact(nx_counter_series *s, uint32_t width)
{
    size_t n = 0;
    for (uint32_t q = 0; q < width; q++)
        if (s->t[q] != INT64_MIN) {
            s->t[n] = s->t[q];
            s->v[n++] = s->v[q];
        }
    s->n = n;
}

/* The memory lanes, then the counter lanes, into out (which takes them). */
static int take_lanes(pass *p, nx_counter_lanes *out, nx_error *err)
{
    size_t n = p->n_lanes[0] + p->n_lanes[1];
    if (n == 0)
        return 0;
    if (!(out->lanes = malloc(n * sizeof *out->lanes)))
        return nx_error_set(err, "SystemProfileEvents: out of memory");
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < p->n_lanes[k]; i++) {
            nx_counter_lane *l = &p->lanes[k][i];
            for (size_t s = 0; s < l->n_series; s++)
                compact(&l->series[s], p->width);
            out->lanes[out->n++] = *l;
        }
        p->n_lanes[k] = 0;
    }
    return 0;
}

int nx_counter_lanes_read(const char *profile_dir, int64_t start, int64_t end, uint32_t width,
                          nx_counter_lanes *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    if (start > end || width == 0)
        return nx_error_set(err, "counter lanes: window [%" PRId64 ", %" PRId64 "] at width %" PRIu32 " is empty",
                              start, end, width);
    pass p = {.start = start, .end = end, .width = width,
              .L = (unsigned __int128)((__int128)end - (__int128)start + 1)};
    if (nx_budget_init(&p.budget, err) != 0)
        return -1;
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, "SystemProfileEvents", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc < 0)
        return -1;
    p.lanes[0] = calloc(NX_COUNTER_MAX_LANES, sizeof *p.lanes[0]);
    p.lanes[1] = calloc(NX_COUNTER_MAX_LANES, sizeof *p.lanes[1]);
    nxpq_scan_stats stats = {0};
    rc = p.lanes[0] && p.lanes[1] ? scan(t, &p, &stats, err) : nx_error_set(err, "SystemProfileEvents: out of memory");
    if (rc == 0)
        rc = take_lanes(&p, out, err);
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; p.lanes[k] && i < p.n_lanes[k]; i++)
            lane_free(&p.lanes[k][i]);
        free(p.lanes[k]);
    }
    nx_profile_table_close(t);
    if (rc != 0)
        nx_counter_lanes_free(out);
    out->stats = stats;
    return rc;
}
