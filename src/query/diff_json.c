/*
 * diff_json.c — a diff (diff.h) as the one JSON object both `nxprof diff --format
 * json` and GET /api/diff answer (docs/api.md), so the two never differ:
 *   {"a", "b", "table", "by", "has_self", "groups" (all), "shown", "excluded_a",
 *    "excluded_b", "wall_ns_a", "wall_ns_b" (null without a wall),
 *    "ops": [{"name" (the key's text, or null), "status", "count_a", "count_b",
 *             "total_ns_a", "total_ns_b", "self_ns_a", "self_ns_b" (null when the
 *             table does not nest), "delta_ns", "ratio" (null without one)}],
 *    "totals": {the same figures over every group, less name and status},
 *    "steps_a", "steps_b" (distinct ProfilerStep#<n> names), "normalize" (null, "step" or
 *    "wall"); when normalising, each op and the totals also get "norm_a", "norm_b" and
 *    "norm_delta" (total_ns over the side's steps or wall time, diff.h),
 *    "devices": [{"device", "rank_a", "rank_b", then for each figure F of wall_ns,
 *                 busy_ns, idle_ns, kernel_ns, memcpy_ns, memset_ns: "F_a", "F_b" and
 *                 "F_delta" (b - a), then "utilization_a", "utilization_b"}],
 *    "steps": [{"name", "step", "rank_a", "rank_b", "start_ns_a", "start_ns_b",
 *               "duration_ns_a", "duration_ns_b", "delta_ns", "ratio",
 *               "gpu_busy_ns_a", "gpu_busy_ns_b", "gpu_busy_ns_delta"}]
 *    (diff.h's totals side by side: a side without the device or step has null
 *    figures, and the delta and ratio are then null too)}
 * Integers exact, those beyond 2^53 as decimal strings (docs/api.md "Conventions":
 * a JavaScript number is exact only up to there); the ratio as the shortest decimal
 * that reads back as the double.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/diff.h"
#include "util/json.h"

static void put_opt_i64(nx_strbuf *b, const char *name, bool have, int64_t v)
{
    if (have)
        nx_json_put_i64_member(b, name, v, true);
    else
        nx_strbuf_printf(b, ",\"%s\":null", name);
}

/* The figures of one row or of the totals, each member preceded by a comma. */
static void put_figures(nx_strbuf *b, const nx_diff *d, const nx_diff_side *a, const nx_diff_side *s)
{
    nx_json_put_i64_member(b, "count_a", a->count, true);
    nx_json_put_i64_member(b, "count_b", s->count, true);
    nx_json_put_i64_member(b, "total_ns_a", a->total_ns, true);
    nx_json_put_i64_member(b, "total_ns_b", s->total_ns, true);
    put_opt_i64(b, "self_ns_a", d->has_self, a->self_ns);
    put_opt_i64(b, "self_ns_b", d->has_self, s->self_ns);
    nx_json_put_i64_member(b, "delta_ns", s->total_ns - a->total_ns, true);
    nx_strbuf_puts(b, ",\"ratio\":");
    if (a->total_ns != 0 && s->total_ns != 0)
        nx_json_put_f64(b, (double)s->total_ns / (double)a->total_ns);
    else
        nx_strbuf_puts(b, "null");
    if (d->normalize == NX_DIFF_NORM_NONE)
        return;
    double na = (double)a->total_ns / d->div_a, nb = (double)s->total_ns / d->div_b;
    nx_json_put_f64_member(b, "norm_a", na);
    nx_json_put_f64_member(b, "norm_b", nb);
    nx_json_put_f64_member(b, "norm_delta", nb - na);
}

static void put_rank(nx_strbuf *b, const char *name, bool have, int64_t rank)
{
    put_opt_i64(b, name, have && rank >= 0, rank);
}

/* "F_a", "F_b" and "F_delta" of one figure; null where a side lacks the row. */
static void put_pair(nx_strbuf *b, const char *f, bool in_a, int64_t a, bool in_b, int64_t v)
{
    char name[48];
    snprintf(name, sizeof name, "%s_a", f);
    put_opt_i64(b, name, in_a, a);
    snprintf(name, sizeof name, "%s_b", f);
    put_opt_i64(b, name, in_b, v);
    snprintf(name, sizeof name, "%s_delta", f);
    put_opt_i64(b, name, in_a && in_b, v - a);
}

static void put_opt_double(nx_strbuf *b, const char *name, bool have, double v)
{
    nx_strbuf_printf(b, ",\"%s\":", name);
    if (have)
        nx_json_put_f64(b, v);
    else
        nx_strbuf_puts(b, "null");
}

static void put_device(nx_strbuf *b, const nx_diff_device *x)
{
    const nx_device_stat *a = &x->a, *s = &x->b;
    nx_strbuf_puts(b, "{\"device\":");
    nx_json_put_cstr(b, x->in_a ? a->device : s->device);
    put_rank(b, "rank_a", x->in_a, a->rank);
    put_rank(b, "rank_b", x->in_b, s->rank);
    put_pair(b, "wall_ns", x->in_a, a->wall_ns, x->in_b, s->wall_ns);
    put_pair(b, "busy_ns", x->in_a, a->busy_ns, x->in_b, s->busy_ns);
    put_pair(b, "idle_ns", x->in_a, a->idle_ns, x->in_b, s->idle_ns);
    put_pair(b, "kernel_ns", x->in_a, a->kernel_ns, x->in_b, s->kernel_ns);
    put_pair(b, "memcpy_ns", x->in_a, a->memcpy_ns, x->in_b, s->memcpy_ns);
    put_pair(b, "memset_ns", x->in_a, a->memset_ns, x->in_b, s->memset_ns);
    put_opt_double(b, "utilization_a", x->in_a, a->utilization);
    put_opt_double(b, "utilization_b", x->in_b, s->utilization);
    nx_strbuf_putc(b, '}');
}

static void put_step(nx_strbuf *b, const nx_diff_step *x)
{
    const nx_step_stat *a = &x->a, *s = &x->b;
    bool both = x->in_a && x->in_b;
    nx_strbuf_puts(b, "{\"name\":");
    nx_json_put_cstr(b, x->in_a ? a->name : s->name);
    nx_json_put_i64_member(b, "step", x->in_a ? a->step : s->step, true);
    put_rank(b, "rank_a", x->in_a, a->rank);
    put_rank(b, "rank_b", x->in_b, s->rank);
    put_opt_i64(b, "start_ns_a", x->in_a, a->start_ns);
    put_opt_i64(b, "start_ns_b", x->in_b, s->start_ns);
    put_opt_i64(b, "duration_ns_a", x->in_a, a->duration_ns);
    put_opt_i64(b, "duration_ns_b", x->in_b, s->duration_ns);
    put_opt_i64(b, "delta_ns", both, s->duration_ns - a->duration_ns);
    put_opt_double(b, "ratio", both && a->duration_ns != 0 && s->duration_ns != 0,
                   (double)s->duration_ns / (double)(a->duration_ns ? a->duration_ns : 1));
    put_pair(b, "gpu_busy_ns", x->in_a, a->gpu_busy_ns, x->in_b, s->gpu_busy_ns);
    nx_strbuf_putc(b, '}');
}

/* The members "devices" and "steps", each preceded by a comma. */
static void put_totals(nx_strbuf *b, const nx_diff *d)
{
    nx_strbuf_puts(b, ",\"devices\":[");
    for (size_t i = 0; i < d->n_devices; i++) {
        nx_strbuf_puts(b, i ? "," : "");
        put_device(b, &d->devices[i]);
    }
    nx_strbuf_puts(b, "],\"steps\":[");
    for (size_t i = 0; i < d->n_steps; i++) {
        nx_strbuf_puts(b, i ? "," : "");
        put_step(b, &d->steps[i]);
    }
    nx_strbuf_putc(b, ']');
}

void nx_diff_json(nx_strbuf *b, const nx_diff *d, const char *a, const char *b_name, uint64_t limit)
{
    size_t shown = nx_diff_shown(d, limit);
    nx_strbuf_puts(b, "{\"a\":");
    nx_json_put_cstr(b, a);
    nx_strbuf_puts(b, ",\"b\":");
    nx_json_put_cstr(b, b_name);
    nx_strbuf_puts(b, ",\"table\":");
    nx_json_put_cstr(b, d->table);
    nx_strbuf_puts(b, ",\"by\":");
    nx_json_put_cstr(b, d->by);
    nx_strbuf_printf(b, ",\"has_self\":%s,\"groups\":%zu,\"shown\":%zu", d->has_self ? "true" : "false", d->n_rows,
                     shown);
    nx_json_put_i64_member(b, "excluded_a", d->excluded_a, true);
    nx_json_put_i64_member(b, "excluded_b", d->excluded_b, true);
    put_opt_i64(b, "wall_ns_a", d->has_wall_a, d->wall_a);
    put_opt_i64(b, "wall_ns_b", d->has_wall_b, d->wall_b);
    nx_json_put_i64_member(b, "steps_a", d->steps_a, true);
    nx_json_put_i64_member(b, "steps_b", d->steps_b, true);
    nx_strbuf_puts(b, ",\"normalize\":");
    if (d->normalize == NX_DIFF_NORM_NONE)
        nx_strbuf_puts(b, "null");
    else
        nx_json_put_cstr(b, nx_diff_normalize_name(d->normalize));
    nx_strbuf_puts(b, ",\"ops\":[");
    for (size_t i = 0; i < shown; i++) {
        const nx_diff_row *r = &d->rows[i];
        nx_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        if (r->key)
            nx_json_put_string(b, r->key, r->key_len);
        else
            nx_strbuf_puts(b, "null");
        nx_strbuf_printf(b, ",\"status\":\"%s\"", nx_diff_status_name(r->status));
        put_figures(b, d, &r->a, &r->b);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_puts(b, "],\"totals\":{\"groups\":");
    nx_strbuf_printf(b, "%zu", d->n_rows);
    put_figures(b, d, &d->total_a, &d->total_b);
    nx_strbuf_putc(b, '}');
    put_totals(b, d);
    nx_strbuf_putc(b, '}');
}
