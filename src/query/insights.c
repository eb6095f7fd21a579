/*
 * insights.c — the rule table and its runner (see insights.h). Each rule is a
 * small function that reads its inputs from the shared context and calls
 * add() per finding; a new rule is a function and one line in RULES.
 * Inputs are loaded once, on a rule's first call: the breakdown (breakdown.h:
 * per device and rank its idle time and causes, launch delays and
 * communication overlap; the host's synchronous copies), the one scan of
 * SystemProfileEvents, and the device profile's Summary row; ThrottleSummary
 * and CcOp are read by their rules.
 * The end of the file is the analysis "insights" (analysis.h): the answer as
 * text, and the descriptor `nxprof insights` and /insights are served from.
 */
#include "query/insights.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/analysis.h"
#include "query/breakdown.h"
#include "query/engine/profile_kind.h"
#include "query/row0.h"
#include "util/json.h"

typedef struct ctx {
    const char *dir;
    nx_insights *out;
    size_t cap;
    const nx_insight_rule_info *rule;   /* the rule running */
    nx_breakdown bd;
    nx_row0 summary;
    bool have_bd, have_summary;
} ctx;

/* ------------------------------------------------------------ findings -- */

static const char *severity_of(double score) { return score >= 0.5 ? "high" : score >= 0.2 ? "medium" : "low"; }

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/* Adds a finding of the running rule. values: a JSON object's members
 * (printf format). -1 with err when out of memory. */
static int add(ctx *c, nx_error *err, const char *subject, double score, const char *evidence,
               const char *values_fmt, ...) __attribute__((format(printf, 6, 7)));

static int add(ctx *c, nx_error *err, const char *subject, double score, const char *evidence,
               const char *values_fmt, ...)
{
    nx_insights *o = c->out;
    if (o->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        nx_insight *g = realloc(o->items, cap * sizeof *g);
        if (!g)
            return nx_error_set(err, "insights: out of memory");
        o->items = g;
        c->cap = cap;
    }
    va_list ap, ap2;
    va_start(ap, values_fmt);
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, values_fmt, ap);
    va_end(ap);
    char *values = len >= 0 ? malloc((size_t)len + 3) : NULL;
    if (values) {
        values[0] = '{';
        vsnprintf(values + 1, (size_t)len + 1, values_fmt, ap2);
        memcpy(values + 1 + len, "}", 2);
    }
    va_end(ap2);
    nx_insight *x = &o->items[o->n];
    *x = (nx_insight){.rule = c->rule, .subject = strdup(subject), .evidence = strdup(evidence),
                      .values = values, .score = clamp01(score)};
    x->severity = severity_of(x->score);
    if (!x->subject || !x->evidence || !x->values) {
        free(x->subject);
        free(x->evidence);
        free(x->values);
        return nx_error_set(err, "insights: out of memory");
    }
    o->n++;
    return 0;
}

/* -------------------------------------------------------------- inputs -- */

static int need_bd(ctx *c, nx_error *err)
{
    if (c->have_bd)
        return 0;
    if (nx_breakdown_read(c->dir, -1, -1, 0, &c->bd, err) < 0)
        return -1;
    c->have_bd = true;
    return 0;
}

static int need_summary(ctx *c, nx_error *err)
{
    if (c->have_summary)
        return 0;
    if (nx_row0_read(c->dir, "Summary", &c->summary, err) < 0)
        return -1;
    c->have_summary = true;
    return 0;
}

/* A Summary field as a number: false when absent or null. */
static bool field(const ctx *c, const char *name, double *v)
{
    const nx_cell *x = c->summary.has_row ? nx_row0_field(&c->summary, name) : NULL;
    if (!x || x->null)
        return false;
    if (x->type == NXPQ_INT32 || x->type == NXPQ_INT64)
        *v = (double)x->i;
    else if (x->type == NXPQ_FLOAT || x->type == NXPQ_DOUBLE)
        *v = x->f;
    else
        return false;
    return true;
}

/* --------------------------------------------------------- GPU rules -- */

/* The i-th whole-span breakdown entry of a GPU (NULL when entry i is a step's
 * or a NeuronCore's), and its subject and JSON rank ("null" for a trace of no
 * rank). */
static const nx_bd_entry *gpu_entry(const ctx *c, size_t i, char *subject, size_t cap, char *rank, size_t rcap)
{
    const nx_bd_entry *e = &c->bd.entries[i];
    if (e->step >= 0 || strncmp(e->device, "GPU ", 4) != 0 || e->t.window_ns <= 0)
        return NULL;
    if (e->rank >= 0) {
        snprintf(subject, cap, "%s, rank %" PRId64, e->device, e->rank);
        snprintf(rank, rcap, "%" PRId64, e->rank);
    } else {
        snprintf(subject, cap, "%s", e->device);
        snprintf(rank, rcap, "null");
    }
    return e;
}

#define GPU_IDLE_MAX 0.20

typedef struct idle_cause {
    const char *id, *label, *advice;
} idle_cause;

static const idle_cause CAUSES[] = {
    {"host_wait", "host wait",
     "the CPU does not launch work fast enough: capture the step in CUDA graphs or torch.compile it, or use larger "
     "batches"},
    {"kernel_wait", "kernel wait", "many short kernels with gaps between them: fuse them (torch.compile, fused ops)"},
    {"other", "other idle", "no work was queued: look for synchronisations, data loading or host work between launches"},
};

/* The largest idle cause (ties: host wait, then kernel wait) and its time. */
static const idle_cause *dominant_cause(const nx_bd_idle *d, int64_t *ns)
{
    const int64_t v[] = {d->host_wait_ns, d->kernel_wait_ns, d->other_ns};
    size_t best = 0;
    for (size_t i = 1; i < 3; i++)
        best = v[i] > v[best] ? i : best;
    *ns = v[best];
    return &CAUSES[best];
}

static int rule_gpu_idle(ctx *c, nx_error *err)
{
    if (need_bd(c, err) < 0)
        return -1;
    for (size_t i = 0; i < c->bd.n_entries; i++) {
        char subject[64], rank[24], ev[512];
        const nx_bd_entry *e = gpu_entry(c, i, subject, sizeof subject, rank, sizeof rank);
        double idle = e ? (double)e->t.idle_ns / (double)e->t.window_ns : 0;
        if (idle <= GPU_IDLE_MAX)
            continue;
        int64_t wall = e->t.window_ns, busy = wall - e->t.idle_ns, cause_ns;
        const idle_cause *cause = dominant_cause(&e->idle, &cause_ns);
        snprintf(ev, sizeof ev,
                 "idle %.1f %% of the rank's span (%" PRId64 " of %" PRId64 " ns; busy %" PRId64
                 " ns), mostly %s (%" PRId64 " ns): %s",
                 100 * idle, e->t.idle_ns, wall, busy, cause->label, cause_ns, cause->advice);
        char fb[NX_FLOAT_TEXT_MAX];
        if (add(c, err, subject, idle, ev,
                "\"device\":\"%s\",\"rank\":%s,\"idle_ns\":%" PRId64 ",\"wall_ns\":%" PRId64 ",\"busy_ns\":%" PRId64
                ",\"idle_fraction\":%s,\"cause\":\"%s\",\"host_wait_ns\":%" PRId64 ",\"kernel_wait_ns\":%" PRId64
                ",\"other_ns\":%" PRId64,
                e->device, rank, e->t.idle_ns, wall, busy, nx_json_f64_text(fb, idle), cause->id, e->idle.host_wait_ns, e->idle.kernel_wait_ns,
                e->idle.other_ns) < 0)
            return -1;
    }
    return 0;
}

#define LAUNCH_OUTLIER_MIN_NS INT64_C(1000000)

/* Launch-delay outliers (breakdown.h: delays above p95 + 3/2 (p95 - median)),
 * when the worst is 1 ms or more: a kernel that waited that long behind its
 * launch stalls the stream. Score: 1 - 1 ms / the worst delay. */
static int rule_launch_outliers(ctx *c, nx_error *err)
{
    if (need_bd(c, err) < 0)
        return -1;
    for (size_t i = 0; i < c->bd.n_entries; i++) {
        char subject[64], rank[24], ev[512];
        const nx_bd_entry *e = gpu_entry(c, i, subject, sizeof subject, rank, sizeof rank);
        if (!e || e->launch.outliers == 0 || e->launch.max_ns < LAUNCH_OUTLIER_MIN_NS)
            continue;
        const nx_bd_launch *l = &e->launch;
        snprintf(ev, sizeof ev,
                 "%" PRId64 " of %" PRId64 " kernels waited over %" PRId64 " ns after their launch (median %" PRId64
                 " ns, worst %" PRId64 " ns): look for what holds the stream (a synchronisation, a long kernel before "
                 "them)",
                 l->outliers, l->linked, l->outlier_above_ns, l->median_ns, l->max_ns);
        if (add(c, err, subject, 1 - (double)LAUNCH_OUTLIER_MIN_NS / (double)l->max_ns, ev,
                "\"device\":\"%s\",\"rank\":%s,\"outliers\":%" PRId64 ",\"linked\":%" PRId64
                ",\"outlier_above_ns\":%" PRId64 ",\"median_ns\":%" PRId64 ",\"max_ns\":%" PRId64,
                e->device, rank, l->outliers, l->linked, l->outlier_above_ns, l->median_ns, l->max_ns) < 0)
            return -1;
    }
    return 0;
}

#define COMM_MIN_SHARE 0.10
#define OVERLAP_MAX_PCT 50.0

/* Low overlap: communication over 10 % of the span with under half of it under
 * compute. Score: the exposed communication's share of the span, doubled. */
static int rule_low_overlap(ctx *c, nx_error *err)
{
    if (need_bd(c, err) < 0)
        return -1;
    for (size_t i = 0; i < c->bd.n_entries; i++) {
        char subject[64], rank[24], ev[512];
        const nx_bd_entry *e = gpu_entry(c, i, subject, sizeof subject, rank, sizeof rank);
        if (!e || e->t.overlap_pct < 0)
            continue;
        int64_t comm = e->t.communication_ns + e->t.overlapped_comm_ns;
        double share = (double)comm / (double)e->t.window_ns;
        if (share <= COMM_MIN_SHARE || e->t.overlap_pct >= OVERLAP_MAX_PCT)
            continue;
        snprintf(ev, sizeof ev,
                 "communication %.1f %% of the rank's span (%" PRId64 " ns), %.1f %% of it under compute: overlap "
                 "it (gradient bucketing, asynchronous collectives, prefetching the next layer's weights)",
                 100 * share, comm, e->t.overlap_pct);
        char fs[NX_FLOAT_TEXT_MAX], fo[NX_FLOAT_TEXT_MAX];
        if (add(c, err, subject, 2 * (double)e->t.communication_ns / (double)e->t.window_ns, ev,
                "\"device\":\"%s\",\"rank\":%s,\"communication_ns\":%" PRId64 ",\"exposed_ns\":%" PRId64
                ",\"window_ns\":%" PRId64 ",\"communication_share\":%s,\"overlap_pct\":%s",
                e->device, rank, comm, e->t.communication_ns, e->t.window_ns, nx_json_f64_text(fs, share),
                nx_json_f64_text(fo, e->t.overlap_pct)) < 0)
            return -1;
    }
    return 0;
}

static int rule_sync_memcpy(ctx *c, nx_error *err)
{
    if (need_bd(c, err) < 0)
        return -1;
    const nx_bd_host *h = &c->bd.host;
    if (h->sync_copies == 0)
        return 0;
    int64_t span = h->last_ns - h->first_ns;
    double share = span > 0 ? (double)h->sync_copy_ns / (double)span : 1;
    char ev[256];
    snprintf(ev, sizeof ev, "%" PRId64 " synchronous cudaMemcpy call(s), %" PRId64 " ns in all (%.2f %% of the span)",
             h->sync_copies, h->sync_copy_ns, 100 * share);
    /* Any synchronous copy stalls the host; the share of the span says how much. */
    return add(c, err, "", 0.2 + 0.8 * clamp01(share), ev,
               "\"count\":%" PRId64 ",\"total_ns\":%" PRId64 ",\"span_ns\":%" PRId64, h->sync_copies,
               h->sync_copy_ns, span);
}

/* ------------------------------------------------------ device rules -- */

/* A rule on the ratio r = num / den of two Summary fields, firing when r is
 * below limit (below) or above it (!below). Score: how far toward 0 below
 * the limit (1 - r / limit), or toward 1 above it ((r - limit) / (1 - limit)). */
static int ratio_rule(ctx *c, nx_error *err, const char *num, const char *den, double limit, bool below)
{
    double n, d;
    if (need_summary(c, err) < 0)
        return -1;
    if (!field(c, num, &n) || !field(c, den, &d) || d <= 0)
        return 0;
    double r = n / d;
    if (below ? r >= limit : r <= limit)
        return 0;
    char ev[256], fn[NX_FLOAT_TEXT_MAX], fd[NX_FLOAT_TEXT_MAX], fr[NX_FLOAT_TEXT_MAX];
    nx_json_f64_text(fn, n);
    nx_json_f64_text(fd, d);
    snprintf(ev, sizeof ev, "%s is %.1f %% of %s (%s of %s)", num, 100 * r, den, fn, fd);
    double score = below ? 1 - r / limit : clamp01((r - limit) / (1 - limit));
    return add(c, err, "", score, ev, "\"%s\":%s,\"%s\":%s,\"ratio\":%s", num, fn, den, fd,
               nx_json_f64_text(fr, r));
}

static int rule_model_flops(ctx *c, nx_error *err)
{
    return ratio_rule(c, err, "model_flops", "hardware_flops", 0.5, true);
}

static int rule_transpose_flops(ctx *c, nx_error *err)
{
    return ratio_rule(c, err, "transpose_flops", "hardware_flops", 0.1, false);
}

static int rule_spill(ctx *c, nx_error *err)
{
    double save, reload, hbm;
    if (need_summary(c, err) < 0)
        return -1;
    if (!field(c, "spill_save_bytes", &save) || !field(c, "spill_reload_bytes", &reload) ||
        !field(c, "hbm_read_bytes", &hbm) || hbm <= 0)
        return 0;
    double r = (save + reload) / hbm;
    if (r <= 0.25)
        return 0;
    char ev[256], fs[NX_FLOAT_TEXT_MAX], fl[NX_FLOAT_TEXT_MAX], fh[NX_FLOAT_TEXT_MAX], fr[NX_FLOAT_TEXT_MAX];
    nx_json_f64_text(fs, save);
    nx_json_f64_text(fl, reload);
    nx_json_f64_text(fh, hbm);
    snprintf(ev, sizeof ev, "spill save + reload is %.1f %% of HBM reads (%s + %s of %s bytes)", 100 * r, fs, fl, fh);
    return add(c, err, "", (r - 0.25) / 0.75, ev,
               "\"spill_save_bytes\":%s,\"spill_reload_bytes\":%s,\"hbm_read_bytes\":%s,\"ratio\":%s", fs, fl,
               fh, nx_json_f64_text(fr, r));
}

#define SMALL_DMA_BYTES 4096.0

static int rule_small_dma(ctx *c, nx_error *err)
{
    double avg, count;
    if (need_summary(c, err) < 0)
        return -1;
    if (!field(c, "dma_transfer_average_bytes", &avg) || !field(c, "dma_transfer_count", &count) || count <= 0 ||
        avg >= SMALL_DMA_BYTES)
        return 0;
    char ev[256], fa[NX_FLOAT_TEXT_MAX], fc[NX_FLOAT_TEXT_MAX];
    nx_json_f64_text(fa, avg);
    nx_json_f64_text(fc, count);
    snprintf(ev, sizeof ev, "DMA transfers average %s bytes (under 4 KiB) over %s transfers", fa, fc);
    return add(c, err, "", 1 - avg / SMALL_DMA_BYTES, ev,
               "\"dma_transfer_average_bytes\":%s,\"dma_transfer_count\":%s", fa, fc);
}

/* The row callback of scan_rows: the batch and the row in it. */
typedef int (*row_fn)(void *p, const nxpq_batch *b, size_t r, nx_error *err);

/* Calls fn for every row of `table` of the profile with columns cols[0..n)
 * projected (no rows when the table is absent). 0, or -1 with err. */
static int scan_rows(const char *dir, const char *table, const char *const *cols, size_t n, row_fn fn, void *p,
                     nx_error *err)
{
    nx_profile_table *t;
    int rc = nx_profile_table_open(dir, table, &t, err);
    if (rc != 0)
        return rc == NX_PROFILE_TABLE_ABSENT ? 0 : -1;
    nx_profile_scan_options o = {.columns = cols, .n_columns = n};
    nx_profile_scan *s = nx_profile_scan_open(t, &o, err);
    const nxpq_batch *b;
    rc = s ? 0 : -1;
    while (rc == 0 && (rc = nx_profile_scan_next(s, &b, err)) == 1) {
        rc = 0;
        for (size_t r = 0; rc == 0 && r < b->n_rows; r++)
            rc = fn(p, b, r, err);
    }
    if (s)
        nx_profile_scan_close(s);
    nx_profile_table_close(t);
    return rc < 0 ? -1 : 0;
}

/* Integer cell r of a column: false when null or not an integer column. */
static bool cell_i64(const nxpq_column_data *c, size_t r, int64_t *v)
{
    if (c->valid && !c->valid[r])
        return false;
    if (c->type == NXPQ_INT64)
        *v = c->values.i64[r];
    else if (c->type == NXPQ_INT32)
        *v = c->values.i32[r];
    else
        return false;
    return true;
}

/* String cell r (not NUL-terminated): false when null or not a string column. */
static bool cell_str(const nxpq_column_data *c, size_t r, const char **s, size_t *len)
{
    if ((c->valid && !c->valid[r]) || c->type != NXPQ_STRING)
        return false;
    *s = c->data + c->offsets[r];
    *len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
    return true;
}

/* Throttling: one finding per ThrottleSummary row with throttled active time. */
static int throttle_row(void *p, const nxpq_batch *b, size_t r, nx_error *err)
{
    ctx *c = p;
    int64_t nc = -1, ns;
    const char *type = "";
    size_t tlen = 0;
    const nxpq_column_data *col = b->columns;
    if (!cell_i64(&col[2], r, &ns) || ns <= 0)
        return 0;
    (void)cell_i64(&col[0], r, &nc);
    (void)cell_str(&col[1], r, &type, &tlen);
    double pct = col[3].type == NXPQ_DOUBLE && (!col[3].valid || col[3].valid[r]) ? col[3].values.f64[r]
                 : col[3].type == NXPQ_FLOAT && (!col[3].valid || col[3].valid[r]) ? col[3].values.f32[r]
                                                                                    : 0;
    char subject[96], ev[256], fp[NX_FLOAT_TEXT_MAX];
    size_t shown = tlen > 40 ? 40 : tlen;
    snprintf(subject, sizeof subject, "NeuronCore %" PRId64 ", %.*s", nc, (int)shown, type);
    snprintf(ev, sizeof ev, "throttled %" PRId64 " ns while active (%.3g %% of the active time)", ns, pct);
    nx_strbuf q = NX_STRBUF_INIT;
    nx_json_put_string(&q, type, shown);
    int rc = nx_strbuf_failed(&q) ? nx_error_set(err, "ThrottleSummary: out of memory")
             : add(c, err, subject, pct / 100, ev,
                   "\"nc_idx\":%" PRId64 ",\"throttle_type\":%s,\"throttle_active_time_ns\":%" PRId64
                   ",\"throttle_active_time_percent\":%s",
                   nc, q.data, ns, nx_json_f64_text(fp, pct));
    nx_strbuf_free(&q);
    return rc;
}

static int rule_throttle(ctx *c, nx_error *err)
{
    static const char *const COLS[] = {"nc_idx", "throttle_type", "throttle_active_time_ns",
                                       "throttle_active_time_percent"};
    return scan_rows(c->dir, "ThrottleSummary", COLS, 4, throttle_row, c, err);
}

/* Collective outliers: CcOp rows grouped by operation and input size. */
typedef struct cc_row {
    char *op;
    int64_t size, ns;
} cc_row;

typedef struct cc_rows {
    cc_row *v;
    size_t n, cap;
} cc_rows;

static int cc_collect(void *p, const nxpq_batch *b, size_t r, nx_error *err)
{
    cc_rows *a = p;
    const char *op = "";
    size_t len = 0;
    int64_t size = -1, ns;
    if (!cell_i64(&b->columns[2], r, &ns))
        return 0;
    (void)cell_str(&b->columns[0], r, &op, &len);
    (void)cell_i64(&b->columns[1], r, &size);
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        cc_row *g = realloc(a->v, cap * sizeof *g);
        if (!g)
            return nx_error_set(err, "CcOp: out of memory");
        a->v = g;
        a->cap = cap;
    }
    char *name = strndup(op, len);
    if (!name)
        return nx_error_set(err, "CcOp: out of memory");
    a->v[a->n++] = (cc_row){name, size, ns};
    return 0;
}

static int by_group(const void *x, const void *y)
{
    const cc_row *a = x, *b = y;
    int c = strcmp(a->op, b->op);
    if (c)
        return c;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return (a->ns > b->ns) - (a->ns < b->ns);
}

#define CC_MIN_GROUP 3
#define CC_OUTLIER_FACTOR 2

/* One group g[0..n), sorted by duration: a finding when its longest op took more
 * than twice the lower median. */
static int cc_group(ctx *c, const cc_row *g, size_t n, nx_error *err)
{
    int64_t median = g[(n - 1) / 2].ns, max = g[n - 1].ns;
    if (n < CC_MIN_GROUP || median <= 0 || max <= CC_OUTLIER_FACTOR * median)
        return 0;
    size_t outliers = 0;
    for (size_t i = 0; i < n; i++)
        outliers += g[i].ns > CC_OUTLIER_FACTOR * median;
    char subject[96], ev[256];
    snprintf(subject, sizeof subject, "%.48s of %" PRId64 " bytes", g[0].op, g[0].size);
    snprintf(ev, sizeof ev, "%zu of %zu ops took over twice the group's median %" PRId64 " ns (longest %" PRId64 " ns)",
             outliers, n, median, max);
    nx_strbuf q = NX_STRBUF_INIT;
    nx_json_put_cstr(&q, g[0].op);
    int rc = nx_strbuf_failed(&q) ? nx_error_set(err, "CcOp: out of memory")
             : add(c, err, subject, 1 - (double)CC_OUTLIER_FACTOR * (double)median / (double)max, ev,
                   "\"operation\":%s,\"input_size\":%" PRId64 ",\"ops\":%zu,\"outliers\":%zu,\"median_ns\":%" PRId64
                   ",\"max_ns\":%" PRId64,
                   q.data, g[0].size, n, outliers, median, max);
    nx_strbuf_free(&q);
    return rc;
}

static int rule_cc_outliers(ctx *c, nx_error *err)
{
    static const char *const COLS[] = {"operation", "input_size", "duration_ns"};
    cc_rows a = {0};
    int rc = scan_rows(c->dir, "CcOp", COLS, 3, cc_collect, &a, err);
    if (rc == 0 && a.n > 1)
        qsort(a.v, a.n, sizeof *a.v, by_group);
    for (size_t i = 0, j; rc == 0 && i < a.n; i = j) {
        for (j = i + 1; j < a.n && strcmp(a.v[j].op, a.v[i].op) == 0 && a.v[j].size == a.v[i].size;)
            j++;
        rc = cc_group(c, &a.v[i], j - i, err);
    }
    for (size_t i = 0; i < a.n; i++)
        free(a.v[i].op);
    free(a.v);
    return rc;
}

/* ---------------------------------------------------------------- table -- */

typedef struct rule {
    nx_insight_rule_info info;
    int (*check)(ctx *c, nx_error *err);
} rule;

static const rule RULES[] = {
    {{"gpu_idle", "GPU idle", "idle over 20% of the rank's span", NX_INSIGHT_SYSTEM}, rule_gpu_idle},
    {{"sync_memcpy", "Synchronous memcpy", "any cudaMemcpy call that is not Async", NX_INSIGHT_SYSTEM},
     rule_sync_memcpy},
    {{"launch_outliers", "Launch delay outliers",
      "a kernel's launch delay over p95 + 1.5 (p95 - median), the worst 1 ms or more", NX_INSIGHT_SYSTEM},
     rule_launch_outliers},
    {{"low_overlap", "Low communication/compute overlap",
      "communication over 10% of the rank's span, under 50% of it overlapped by compute", NX_INSIGHT_SYSTEM},
     rule_low_overlap},
    {{"low_model_flops", "Model FLOPs under half the hardware FLOPs", "model_flops < 50% of hardware_flops",
      NX_INSIGHT_DEVICE},
     rule_model_flops},
    {{"transpose_flops", "Transpose FLOPs", "transpose_flops > 10% of hardware_flops", NX_INSIGHT_DEVICE},
     rule_transpose_flops},
    {{"spill_reload", "Spill and reload traffic", "spill save + reload bytes > 25% of hbm_read_bytes",
      NX_INSIGHT_DEVICE},
     rule_spill},
    {{"small_dma", "Small DMA transfers", "dma_transfer_average_bytes < 4096", NX_INSIGHT_DEVICE}, rule_small_dma},
    {{"throttle_active", "Throttling while active", "any ThrottleSummary throttle_active_time_ns > 0",
      NX_INSIGHT_DEVICE},
     rule_throttle},
    {{"cc_outliers", "Collective outliers", "a CcOp over 2x the median of its operation and input size (3+ ops)",
      NX_INSIGHT_DEVICE},
     rule_cc_outliers},
};
#define N_RULES (sizeof RULES / sizeof RULES[0])

size_t nx_insight_rule_count(void) { return N_RULES; }

const nx_insight_rule_info *nx_insight_rule_at(size_t i) { return &RULES[i].info; }

static int by_score(const void *x, const void *y)
{
    const nx_insight *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    if (a->rule != b->rule)
        return a->rule > b->rule ? 1 : -1;   /* pointers into RULES: table order */
    return strcmp(a->subject, b->subject);
}

int nx_insights_read(const char *dir, nx_insights *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    out->scope = nx_profile_is_system(dir) ? NX_INSIGHT_SYSTEM : NX_INSIGHT_DEVICE;
    ctx c = {.dir = dir, .out = out};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < N_RULES; i++) {
        if (RULES[i].info.scope != out->scope)
            continue;
        c.rule = &RULES[i].info;
        rc = RULES[i].check(&c, err);
    }
    if (c.have_bd)
        nx_breakdown_free(&c.bd);
    if (c.have_summary)
        nx_row0_free(&c.summary);
    if (rc != 0) {
        nx_insights_free(out);
        return -1;
    }
    if (out->n > 1)
        qsort(out->items, out->n, sizeof *out->items, by_score);
    return 0;
}

void nx_insights_free(nx_insights *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->items[i].subject);
        free(s->items[i].evidence);
        free(s->items[i].values);
    }
    free(s->items);
    memset(s, 0, sizeof *s);
}

void nx_insights_json(const nx_insights *s, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"insights\":[");
    for (size_t i = 0; i < s->n; i++) {
        const nx_insight *x = &s->items[i];
        nx_strbuf_puts(b, i ? ",{\"rule\":" : "{\"rule\":");
        nx_json_put_cstr(b, x->rule->id);
        nx_strbuf_puts(b, ",\"title\":");
        nx_json_put_cstr(b, x->rule->title);
        nx_strbuf_puts(b, ",\"threshold\":");
        nx_json_put_cstr(b, x->rule->threshold);
        nx_strbuf_puts(b, ",\"subject\":");
        nx_json_put_cstr(b, x->subject);
        nx_strbuf_printf(b, ",\"severity\":\"%s\"", x->severity);
        nx_json_put_f64_member(b, "score", x->score);
        nx_strbuf_puts(b, ",\"evidence\":");
        nx_json_put_cstr(b, x->evidence);
        nx_strbuf_printf(b, ",\"values\":%s}", x->values);
    }
    nx_strbuf_puts(b, "],\"rules\":[");
    bool first = true;
    for (size_t i = 0; i < N_RULES; i++) {
        const nx_insight_rule_info *info = &RULES[i].info;
        if (info->scope != s->scope)
            continue;
        nx_strbuf_puts(b, first ? "{\"id\":" : ",{\"id\":");
        nx_json_put_cstr(b, info->id);
        nx_strbuf_puts(b, ",\"title\":");
        nx_json_put_cstr(b, info->title);
        nx_strbuf_puts(b, ",\"threshold\":");
        nx_json_put_cstr(b, info->threshold);
        nx_strbuf_printf(b, ",\"scope\":\"%s\"}", info->scope == NX_INSIGHT_SYSTEM ? "system" : "device");
        first = false;
    }
    nx_strbuf_puts(b, "]}");
}

void nx_insights_text(const nx_insights *s, nx_strbuf *b)
{
    if (s->n == 0) {
        nx_strbuf_printf(b, "Insights: no rule fired (%s rules checked)\n", s->scope == NX_INSIGHT_SYSTEM ? "GPU" : "device");
        return;
    }
    nx_strbuf_puts(b, "Insights (most severe first)\n");
    for (size_t i = 0; i < s->n; i++) {
        const nx_insight *x = &s->items[i];
        nx_strbuf_printf(b, "  %zu. [%s] %s%s%s: %s\n     rule %s: %s\n", i + 1, x->severity, x->rule->title,
                         x->subject[0] ? " - " : "", x->subject, x->evidence, x->rule->id, x->rule->threshold);
    }
}

static int insights_answer(const nx_analysis_call *call, nx_strbuf *out, nx_error *err)
{
    nx_insights s;
    if (nx_insights_read(call->dir, &s, err) < 0)
        return NX_ANALYSIS_ERROR;
    if (call->format == NX_ANALYSIS_JSON)
        nx_insights_json(&s, out);
    else
        nx_insights_text(&s, out);
    nx_insights_free(&s);
    return NX_ANALYSIS_OK;
}

const nx_analysis nx_analysis_insights = {
    .name = "insights",
    .summary = "list Performance Insights: the rules that fired, with their evidence",
    .help = "Run the Performance Insights rules over a profile and list what they found,\n"
            "most severe first: the rule, its threshold, what it is about and the numbers\n"
            "behind it. A system profile (framework traces) gets the GPU rules (GPU idle,\n"
            "synchronous memcpy), a device profile the NeuronCore rules (model FLOPs,\n"
            "transpose FLOPs, spill and reload, small DMA transfers, throttling, collective\n"
            "outliers) where it has the fields; a profile without them gets no finding\n"
            "(exit 0). docs/analyses.md documents each rule.\n",
    .answer = insights_answer,
};
