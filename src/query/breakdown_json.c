/*
 * breakdown_json.c — the breakdown as JSON (breakdown.h), written once for the
 * CLI's --format json and the HTTP API.
 */
#include <inttypes.h>

#include "query/breakdown.h"
#include "query/breakdown_internal.h"
#include "util/json.h"

void bd_json_pct(nx_strbuf *b, const char *key, double pct)
{
    if (pct < 0)
        nx_strbuf_printf(b, ",\"%s\":null", key);
    else
        nx_json_put_f64_member(b, key, pct);
}

static void put_opt(nx_strbuf *b, const char *key, int64_t v, bool safe)
{
    if (v < 0)
        nx_strbuf_printf(b, ",\"%s\":null", key);
    else
        nx_json_put_i64_member(b, key, v, safe);
}

static void temporal_json(const nx_bd_temporal *t, bool s, nx_strbuf *b)
{
    nx_strbuf_printf(b, ",\"temporal\":{\"window_ns\":%" PRId64, t->window_ns);
    nx_json_put_i64_member(b, "compute_ns", t->compute_ns, s);
    nx_json_put_i64_member(b, "communication_ns", t->communication_ns, s);
    nx_json_put_i64_member(b, "overlapped_comm_ns", t->overlapped_comm_ns, s);
    nx_json_put_i64_member(b, "memory_ns", t->memory_ns, s);
    nx_json_put_i64_member(b, "idle_ns", t->idle_ns, s);
    bd_json_pct(b, "overlap_pct", t->overlap_pct);
    nx_strbuf_puts(b, "}");
}

static void idle_json(const nx_bd_idle *i, bool s, nx_strbuf *b)
{
    nx_strbuf_printf(b, ",\"idle\":{\"host_wait_ns\":%" PRId64, i->host_wait_ns);
    nx_json_put_i64_member(b, "kernel_wait_ns", i->kernel_wait_ns, s);
    nx_json_put_i64_member(b, "other_ns", i->other_ns, s);
    nx_json_put_i64_member(b, "host_wait_count", i->host_wait_count, s);
    nx_json_put_i64_member(b, "kernel_wait_count", i->kernel_wait_count, s);
    nx_json_put_i64_member(b, "other_count", i->other_count, s);
    nx_strbuf_puts(b, "}");
}

static void launch_json(const nx_bd_launch *l, bool s, nx_strbuf *b)
{
    nx_strbuf_printf(b, ",\"launch\":{\"kernels\":%" PRId64, l->kernels);
    nx_json_put_i64_member(b, "linked", l->linked, s);
    nx_json_put_i64_member(b, "median_ns", l->median_ns, s);
    nx_json_put_i64_member(b, "p95_ns", l->p95_ns, s);
    nx_json_put_i64_member(b, "max_ns", l->max_ns, s);
    nx_json_put_i64_member(b, "outlier_above_ns", l->outlier_above_ns, s);
    nx_json_put_i64_member(b, "outliers", l->outliers, s);
    nx_json_put_i64_member(b, "short_kernels", l->short_kernels, s);
    nx_strbuf_printf(b, ",\"verdict\":\"%s\"}", l->verdict);
}

static void classes_json(const nx_bd_entry *e, bool s, nx_strbuf *b)
{
    nx_strbuf_puts(b, ",\"classes\":{");
    for (int c = 0; c < NX_BD_N_CLASSES; c++) {
        nx_strbuf_printf(b, "%s\"%s\":{\"count\":%" PRId64, c ? "," : "", nx_breakdown_class_name(c),
                         e->class_count[c]);
        nx_json_put_i64_member(b, "total_ns", e->class_ns[c], s);
        nx_strbuf_puts(b, "}");
    }
    nx_strbuf_puts(b, "},\"transfers\":[");
    bool first = true;
    for (int k = 0; k < NX_BD_N_XFER; k++) {
        const nx_bd_xfer *x = &e->xfer[k];
        if (!x->count)
            continue;
        nx_strbuf_printf(b, "%s{\"kind\":\"%s\",\"count\":%" PRId64, first ? "" : ",", nx_breakdown_xfer_name(k),
                         x->count);
        nx_json_put_i64_member(b, "with_bytes", x->with_bytes, s);
        nx_json_put_i64_member(b, "bytes", x->bytes, s);
        nx_json_put_i64_member(b, "duration_ns", x->duration_ns, s);
        nx_json_put_f64_member(b, "gbps", x->gbps);
        nx_strbuf_puts(b, "}");
        first = false;
    }
    nx_strbuf_puts(b, "]");
}

static void entry_json(const nx_bd_entry *e, bool s, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"device\":");
    nx_json_put_cstr(b, e->device);
    put_opt(b, "rank", e->rank, s);
    put_opt(b, "step", e->step, s);
    nx_strbuf_puts(b, ",\"step_name\":");
    if (e->step_name)
        nx_json_put_cstr(b, e->step_name);
    else
        nx_strbuf_puts(b, "null");
    nx_json_put_i64_member(b, "start_ns", e->start_ns, s);
    nx_json_put_i64_member(b, "end_ns", e->end_ns, s);
    temporal_json(&e->t, s, b);
    idle_json(&e->idle, s, b);
    classes_json(e, s, b);
    launch_json(&e->launch, s, b);
    nx_strbuf_puts(b, "}");
}

static void kernel_json(const nx_bd_kernel *k, bool s, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"name\":");
    nx_json_put_cstr(b, k->name);
    nx_strbuf_printf(b, ",\"class\":\"%s\"", nx_breakdown_class_name(k->cls));
    nx_json_put_i64_member(b, "count", k->count, s);
    nx_json_put_i64_member(b, "total_ns", k->total_ns, s);
    nx_json_put_f64_member(b, "mean_ns", k->mean_ns);
    nx_json_put_i64_member(b, "min_ns", k->min_ns, s);
    nx_json_put_i64_member(b, "max_ns", k->max_ns, s);
    nx_json_put_i64_member(b, "rank_min_ns", k->rank_min_ns, s);
    nx_json_put_i64_member(b, "rank_max_ns", k->rank_max_ns, s);
    nx_json_put_f64_member(b, "rank_mean_ns", k->rank_mean_ns);
    nx_strbuf_puts(b, "}");
}

void nx_breakdown_json(const nx_breakdown *bd, bool safe_ints, nx_strbuf *b)
{
    nx_strbuf_printf(b, "{\"kind\":\"system\",\"thresholds\":{\"kernel_wait_ns\":%" PRId64 ",\"short_kernel_ns\":%" PRId64
                     ",\"queued_ns\":%" PRId64 "},\"n_ranks\":%zu,\"entries\":[",
                     NX_BD_KERNEL_WAIT_NS, NX_BD_SHORT_KERNEL_NS, NX_BD_QUEUED_NS, bd->n_ranks);
    for (size_t i = 0; i < bd->n_entries; i++) {
        if (i)
            nx_strbuf_puts(b, ",");
        entry_json(&bd->entries[i], safe_ints, b);
    }
    nx_strbuf_puts(b, "],\"kernels\":[");
    for (size_t i = 0; i < bd->n_kernels; i++) {
        if (i)
            nx_strbuf_puts(b, ",");
        kernel_json(&bd->kernels[i], safe_ints, b);
    }
    nx_strbuf_puts(b, "]}");
}
