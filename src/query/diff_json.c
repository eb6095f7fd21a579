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
 *    "norm_delta" (total_ns over the side's steps or wall time, diff.h)}
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

/* The shortest %.*g text that reads back as v (17 digits always do). */
static void put_double(nx_strbuf *b, double v)
{
    char t[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if (strtod(t, NULL) == v)
            break;
    }
    nx_strbuf_puts(b, t);
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
        put_double(b, (double)s->total_ns / (double)a->total_ns);
    else
        nx_strbuf_puts(b, "null");
    if (d->normalize == NX_DIFF_NORM_NONE)
        return;
    double na = (double)a->total_ns / d->div_a, nb = (double)s->total_ns / d->div_b;
    nx_strbuf_puts(b, ",\"norm_a\":");
    put_double(b, na);
    nx_strbuf_puts(b, ",\"norm_b\":");
    put_double(b, nb);
    nx_strbuf_puts(b, ",\"norm_delta\":");
    put_double(b, nb - na);
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
    nx_strbuf_puts(b, "}}");
}
