/*
 * device_activity.c — classifies SystemProfileEvents rows for device and step
 * answers (see device_activity.h), and the interval union they are summed by.
 */
#include "query/device_activity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "util/json.h"

#define EVENTS "SystemProfileEvents"

const char *nx_activity_kind_name(nx_activity_kind k)
{
    switch (k) {
    case NX_ACT_KERNEL: return "kernel";
    case NX_ACT_MEMCPY: return "memcpy";
    case NX_ACT_MEMSET: return "memset";
    case NX_ACT_ANNOTATION: return "annotation";
    case NX_ACT_OTHER: return "other";
    default: return "none";
    }
}

void nx_device_name(nx_device_type t, int64_t n, char *out, size_t cap)
{
    if (t == NX_DEVICE_GPU)
        snprintf(out, cap, "GPU %" PRId64, n);
    else if (t == NX_DEVICE_NEURONCORE)
        snprintf(out, cap, "NeuronCore %" PRId64, n);
    else if (cap)
        out[0] = '\0';
}

static const char *const COLLECTIVE_WORDS[] = {
    "nccl",          "gloo",           "c10d::",         "record_param_comms", "allreduce",  "all_reduce",
    "all-reduce",    "allgather",      "all_gather",     "all-gather",         "reducescatter", "reduce_scatter",
    "reduce-scatter", "alltoall",      "all_to_all",     "all-to-all",         "collective-permute", "sendrecv",
};

/* Whether word (lower case) occurs in s[0..n) in any case. */
static bool has_word(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++) {
        size_t j = 0;
        while (j < w && (s[i + j] >= 'A' && s[i + j] <= 'Z' ? s[i + j] + 32 : s[i + j]) == word[j])
            j++;
        if (j == w)
            return true;
    }
    return false;
}

bool nx_activity_is_collective(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof COLLECTIVE_WORDS / sizeof COLLECTIVE_WORDS[0]; i++)
        if (has_word(name, len, COLLECTIVE_WORDS[i]))
            return true;
    return false;
}

bool nx_activity_is_sync_copy(const char *name, size_t len)
{
    static const char P[] = "cudaMemcpy";
    if (len < sizeof P - 1 || memcmp(name, P, sizeof P - 1) != 0)
        return false;
    for (size_t i = 0; i + 5 <= len; i++)
        if (memcmp(name + i, "Async", 5) == 0)
            return false;
    return true;
}

static bool eq(const char *s, size_t n, const char *lit) { return n == strlen(lit) && memcmp(s, lit, n) == 0; }

static bool starts(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n >= l && memcmp(s, lit, l) == 0;
}

static bool ends(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n >= l && memcmp(s + n - l, lit, l) == 0;
}

/* A non-negative decimal integer s[0..n) (digits only, at most 18 of them),
 * or -1. */
static int64_t decimal(const char *s, size_t n)
{
    if (n == 0 || n > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* A member's string value into buf (cap bytes, NUL-terminated); its length,
 * 0 when absent, not a string, or longer than buf. */
static size_t str_member(const char *js, size_t len, const char *key, char *buf, size_t cap)
{
    size_t n = 0;
    if (!js || !nx_json_string_member(js, len, key, buf, cap - 1, &n))
        return 0;
    buf[n] = '\0';
    return n;
}

/* The device of a framework slice from its process's names: GPU n from
 * process_labels "GPU n" or process_name "/device:GPU:n". */
static bool framework_device(const char *js, size_t len, int64_t *n)
{
    char buf[64];
    size_t l = str_member(js, len, "process_labels", buf, sizeof buf);
    if (l > 4 && starts(buf, l, "GPU ") && (*n = decimal(buf + 4, l - 4)) >= 0)
        return true;
    l = str_member(js, len, "process_name", buf, sizeof buf);
    return l > 12 && starts(buf, l, "/device:GPU:") && (*n = decimal(buf + 12, l - 12)) >= 0;
}

/* The kind of a framework slice on a device (rules in the header). */
static nx_activity_kind framework_kind(const char *js, size_t len, const char *name, size_t name_len)
{
    char cat[64];
    size_t l = str_member(js, len, "cat", cat, sizeof cat);
    if (l) {
        if (eq(cat, l, "kernel"))
            return NX_ACT_KERNEL;
        if (eq(cat, l, "gpu_memcpy"))
            return NX_ACT_MEMCPY;
        if (eq(cat, l, "gpu_memset"))
            return NX_ACT_MEMSET;
        return ends(cat, l, "annotation") ? NX_ACT_ANNOTATION : NX_ACT_OTHER;
    }
    char thread[64];
    l = str_member(js, len, "thread_name", thread, sizeof thread);
    if (!starts(thread, l, "Stream #"))
        return NX_ACT_ANNOTATION;
    if (starts(name, name_len, "Memcpy") || starts(name, name_len, "memcpy"))
        return NX_ACT_MEMCPY;
    if (starts(name, name_len, "Memset") || starts(name, name_len, "memset"))
        return NX_ACT_MEMSET;
    return NX_ACT_KERNEL;
}

/* args.step_num of a slice as an integer (a number or a decimal string), or -1. */
static int64_t step_num(const char *js, size_t len)
{
    const char *args, *v;
    size_t al, vl;
    if (!js || !nx_json_member(js, len, "args", &args, &al) || !nx_json_member(args, al, "step_num", &v, &vl))
        return -1;
    if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"')
        return decimal(v + 1, vl - 2);
    return decimal(v, vl);
}

bool nx_activity_profiler_name(const char *name, size_t len)
{
    return starts(name, len, "ProfilerStep#") || starts(name, len, "PyTorch Profiler");
}

static void classify_framework(const nx_activity_input *in, nx_activity *out)
{
    const char *js = in->json;
    size_t len = in->json_len;
    const char *v;
    size_t vl;
    if (js && nx_json_member(js, len, "ph", &v, &vl))
        return;   /* not a slice: an instant, counter, flow... has no extent on a device */
    char cat[64];
    size_t cl = str_member(js, len, "cat", cat, sizeof cat);
    bool profiler_step = starts(in->name, in->name_len, "ProfilerStep#");
    out->profiler = profiler_step || (eq(cat, cl, "Trace") && nx_activity_profiler_name(in->name, in->name_len));
    int64_t n;
    if (js && framework_device(js, len, &n)) {
        out->device_type = NX_DEVICE_GPU;
        out->device = n;
        out->kind = framework_kind(js, len, in->name, in->name_len);
        return;
    }
    int64_t step = profiler_step && eq(cat, cl, "user_annotation")
                       ? decimal(in->name + 13, in->name_len - 13)
                       : step_num(js, len);
    out->is_step = step >= 0;
    out->step = step;
}

void nx_activity_classify(const nx_activity_input *in, nx_activity *out)
{
    *out = (nx_activity){.device_type = NX_DEVICE_NONE, .device = -1, .rank = in->worker_gid, .kind = NX_ACT_NONE,
                         .step = -1};
    if (eq(in->source, in->source_len, "framework"))
        classify_framework(in, out);
    else if (eq(in->source, in->source_len, "neuron_hw") && in->nc_idx >= 0) {
        out->device_type = NX_DEVICE_NEURONCORE;
        out->device = in->nc_idx;
        out->kind = NX_ACT_KERNEL;
    }
}

/* ---------------------------------------------------------------- scan -- */

enum { C_NAME, C_START, C_END, C_SOURCE, C_NC, C_WORKER, C_JSON, N_COLS };
static const char *const COLS[N_COLS] = {"name",   "start_ts",   "end_ts",
                                         "trace_event_source", "nc_idx", "worker_gid", "extra_attributes_json"};
static const nxpq_type TYPES[N_COLS] = {NXPQ_STRING, NXPQ_INT64, NXPQ_INT64, NXPQ_STRING,
                                        NXPQ_INT64,  NXPQ_INT64, NXPQ_STRING};

static bool has(const nxpq_column_data *c, size_t r) { return !c->valid || c->valid[r]; }

static int64_t int_at(const nxpq_column_data *c, size_t r, int64_t null)
{
    if (!has(c, r))
        return null;
    return c->type == NXPQ_INT32 ? c->values.i32[r] : c->values.i64[r];
}

static const char *str_at(const nxpq_column_data *c, size_t r, size_t *len)
{
    *len = 0;
    if (!c || !has(c, r))
        return NULL;
    *len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
    return c->data + c->offsets[r];
}

void nx_activity_input_of(const nxpq_column_data *name, const nxpq_column_data *source,
                          const nxpq_column_data *json, size_t r, nx_activity_input *in)
{
    *in = (nx_activity_input){.nc_idx = -1, .worker_gid = -1};
    in->name = str_at(name, r, &in->name_len);
    in->source = str_at(source, r, &in->source_len);
    in->json = str_at(json, r, &in->json_len);
}

/* Which of the columns the table has with a usable type: the required ones
 * (name, start_ts, end_ts, trace_event_source) must be there. */
static int check_columns(nx_profile_table *t, const char **cols, size_t *n, int *at, nx_error *err)
{
    *n = 0;
    for (size_t i = 0; i < N_COLS; i++) {
        int c = nx_profile_table_find_column(t, COLS[i]);
        nxpq_type ty = c < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)c)->type;
        bool ok = ty == TYPES[i] || (TYPES[i] == NXPQ_INT64 && ty == NXPQ_INT32);
        if (!ok && i <= C_SOURCE)
            return nx_error_set(err, "%s: no usable %s column", EVENTS, COLS[i]);
        at[i] = ok ? (int)*n : -1;
        if (ok)
            cols[(*n)++] = COLS[i];
    }
    return 0;
}

typedef struct scan_ctx {
    const int *at;
    nx_activity_fn fn;
    void *ctx;
} scan_ctx;

static int scan_batch(void *sc, const nxpq_batch *b, size_t file, nx_error *err)
{
    const int *at = ((scan_ctx *)sc)->at;
    nx_activity_fn fn = ((scan_ctx *)sc)->fn;
    void *ctx = ((scan_ctx *)sc)->ctx;
    const nxpq_column_data *c = b->columns;
    for (size_t r = 0; r < b->n_rows; r++) {
        nx_activity_row row = {.ordinal = nx_row_ordinal(file, b->first_row + (int64_t)r)};
        nx_activity_input in;
        nx_activity_input_of(&c[at[C_NAME]], &c[at[C_SOURCE]], at[C_JSON] >= 0 ? &c[at[C_JSON]] : NULL, r, &in);
        in.nc_idx = at[C_NC] < 0 ? -1 : int_at(&c[at[C_NC]], r, -1);
        in.worker_gid = at[C_WORKER] < 0 ? -1 : int_at(&c[at[C_WORKER]], r, -1);
        if (!has(&c[at[C_START]], r) || !has(&c[at[C_END]], r))
            return nx_error_set(err, "%s: row %" PRId64 " has a null start_ts or end_ts", EVENTS, row.ordinal);
        row.start_ns = int_at(&c[at[C_START]], r, 0);
        row.end_ns = int_at(&c[at[C_END]], r, 0);
        if (row.end_ns < row.start_ns)
            return nx_error_set(err, "%s: row %" PRId64 " (start_ts %" PRId64 ", end_ts %" PRId64
                                  "): its end_ts is before its start_ts", EVENTS, row.ordinal, row.start_ns,
                                  row.end_ns);
        row.name = in.name ? in.name : "";
        row.name_len = in.name_len;
        row.json = in.json ? in.json : "";
        row.json_len = in.json_len;
        nx_activity_classify(&in, &row.a);
        if (fn(ctx, &row, err) != 0)
            return -1;
    }
    return 0;
}

int nx_activity_scan(const char *dir, nx_activity_fn fn, void *ctx, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, EVENTS, &t, err);
    if (rc != 0)
        return rc;
    const char *cols[N_COLS];
    size_t n = 0;
    int at[N_COLS];
    rc = check_columns(t, cols, &n, at, err);
    if (rc == 0) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = n};
        scan_ctx sc = {at, fn, ctx};
        rc = nx_profile_scan_each(t, &so, scan_batch, &sc, err);
    }
    nx_profile_table_close(t);
    return rc;
}

/* ----------------------------------------------------------- intervals -- */

static int cmp_interval(const void *pa, const void *pb)
{
    const nx_interval *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->end < b->end ? -1 : a->end > b->end;
}

size_t nx_interval_union(nx_interval *iv, size_t n)
{
    if (n == 0)
        return 0;
    qsort(iv, n, sizeof *iv, cmp_interval);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start <= iv[k].end) {
            if (iv[i].end > iv[k].end)
                iv[k].end = iv[i].end;
        } else {
            iv[++k] = iv[i];
        }
    }
    return k + 1;
}

/* The first interval of u[0..n) that ends after lo (binary search: the union's
 * ends increase). */
static size_t first_after(const nx_interval *u, size_t n, int64_t lo)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (u[m].end <= lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

bool nx_interval_length(const nx_interval *u, size_t n, int64_t lo, int64_t hi, int64_t *len)
{
    int64_t sum = 0;
    for (size_t i = first_after(u, n, lo); i < n && u[i].start < hi; i++) {
        int64_t s = u[i].start > lo ? u[i].start : lo, e = u[i].end < hi ? u[i].end : hi, d;
        if (__builtin_sub_overflow(e, s, &d) || __builtin_add_overflow(sum, d, &sum))
            return false;
    }
    *len = sum;
    return true;
}
