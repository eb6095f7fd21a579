/*
 * cmd_top.c — `nxprof top PROFILE_DIR`: where did the time go. Groups one table
 * of a profile (default Instruction, across all its split files) by some of its
 * columns (default engine,opcode) and prints, per group, the row count and the
 * sum of duration_ns, largest sum first.
 *
 * Rules:
 *   - The summed value is duration_ns when the table has it; otherwise, when the
 *     table has integer start_ts and end_ts (the IR roll-up tables), end_ts - start_ts
 *     per row (null if either is null); otherwise nothing is summed: groups carry
 *     counts only and are ordered by count.
 *   - Order and tie-breaking are those of src/query/group_by.h: sum descending,
 *     then the --by columns ascending (strings bytewise, nulls last); the same as
 *     SQL ORDER BY sum DESC NULLS LAST, k1, k2, ... .
 *   - --limit N keeps the first N groups (0 = all). Totals always cover every row.
 *   - Percent is 100 * group sum / total sum (of counts when nothing is summed).
 *   - text: aligned table with a header, the kept groups, an "(N other groups)"
 *     line when the limit dropped some, and a "total" line. csv: a header line
 *     (the --by names, count, sum_duration_ns) then one line per kept group, exact
 *     integers, null as an empty field, no total line. json: one object (see
 *     top_json) with exact integers and the totals.
 * Exit: 0; 1 when the profile or table cannot be read or is absent; 2 for usage
 * errors, including --by naming a column the table lacks or one that is not an
 * integer/boolean/string column.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/text_out.h"
#include "query/group_by.h"
#include "query/profile_table.h"
#include "schema/schema.h"

#define TOP_MAX_KEYS 16

static void top_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof top PROFILE_DIR [--table T] [--by COL[,COL...]] [--limit N]\n"
            "                  [--format text|csv|json]\n"
            "\n"
            "Group a profile table by columns and show, per group, the number of rows and the\n"
            "sum of duration_ns, largest first (ties by the group columns ascending). Reads\n"
            "T.parquet or all of T_0.parquet, T_1.parquet, ... in PROFILE_DIR.\n"
            "\n"
            "  -t, --table T        table to read (default Instruction)\n"
            "  -b, --by COLS        comma-separated integer or string columns (default engine,opcode)\n"
            "  -l, --limit N        show the first N groups, 0 for all (default 10)\n"
            "  -f, --format F       text (default), csv or json\n"
            "  -h, --help           show this help\n"
            "\n"
            "Tables without duration_ns sum end_ts - start_ts when they have both, else only count.\n"
            "Exit status: 0 success, 1 profile or table missing or unreadable, 2 usage error.\n");
}

typedef enum { FMT_TEXT, FMT_CSV, FMT_JSON } top_format;
typedef enum { VAL_DURATION, VAL_SPAN, VAL_NONE } value_kind;

typedef struct top_query {
    const char *dir;
    const char *table;
    char *by_buf;                       /* owns the strings in by[] */
    const char *by[TOP_MAX_KEYS];
    size_t n_by;
    unsigned long long limit;
    top_format format;
    value_kind value;
} top_query;

/* Splits "a,b,c" in place into q->by. Returns 0 or a usage error. */
static int parse_by(top_query *q, const char *arg)
{
    free(q->by_buf);
    q->by_buf = strdup(arg);
    if (!q->by_buf) {
        fprintf(stderr, "nxprof top: out of memory\n");
        return NX_EXIT_ERROR;
    }
    q->n_by = 0;
    char *p = q->by_buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p)
            return nx_usage_error("top", "--by has an empty column name in '%s'", arg);
        if (q->n_by == TOP_MAX_KEYS)
            return nx_usage_error("top", "--by takes at most %d columns", TOP_MAX_KEYS);
        for (size_t i = 0; i < q->n_by; i++)
            if (strcmp(q->by[i], p) == 0)
                return nx_usage_error("top", "--by names column '%s' twice", p);
        q->by[q->n_by++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Width of a key value as text output prints it. */
static size_t key_text_len(const nx_group_key *k)
{
    char buf[32];
    if (k->null)
        return 6; /* (null) */
    if (k->type == NXPQ_STRING)
        return k->len;
    return (size_t)snprintf(buf, sizeof buf, "%" PRId64, k->i);
}

static void key_text(FILE *out, const nx_group_key *k, size_t width)
{
    size_t n = key_text_len(k);
    if (k->null) {
        fputs("(null)", out);
    } else if (k->type == NXPQ_STRING) {
        /* Control bytes would break the alignment (and the terminal): show them as '?'. */
        for (size_t i = 0; i < k->len; i++)
            putc((unsigned char)k->s[i] < 0x20 || k->s[i] == 0x7f ? '?' : k->s[i], out);
    } else {
        fprintf(out, "%" PRId64, k->i);
    }
    for (; n < width; n++)
        putc(' ', out);
}

static int ndigits(int64_t v)
{
    char buf[32];
    return snprintf(buf, sizeof buf, "%" PRId64, v);
}

static double pct(int64_t part, int64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

static const char *sum_header(const top_query *q)
{
    return q->value == VAL_NONE ? NULL : "sum_duration_ns";
}

static void top_text(const top_query *q, const nx_group_by *g, const nx_profile_table *t, size_t shown)
{
    size_t n_groups = nx_group_by_count(g);
    nx_group_stats tot = nx_group_by_totals(g);
    bool sums = q->value != VAL_NONE;
    int64_t total = sums ? tot.sum : tot.count;
    size_t w[TOP_MAX_KEYS];
    for (size_t k = 0; k < q->n_by; k++) {
        w[k] = strlen(q->by[k]);
        for (size_t i = 0; i < shown; i++) {
            nx_group_key key;
            nx_group_by_key(g, i, k, &key);
            size_t l = key_text_len(&key);
            if (l > w[k])
                w[k] = l;
        }
    }
    /* The "total" / "(N other groups)" labels sit in the first key column. */
    char other[64];
    snprintf(other, sizeof other, "(%zu other groups)", n_groups - shown);
    size_t label_w = 0, need = shown < n_groups ? strlen(other) : 5;
    for (size_t k = 0; k < q->n_by; k++)
        label_w += w[k] + 2;
    if (need + 2 > label_w) {
        w[0] += need + 2 - label_w;
        label_w = need + 2;
    }
    int wc = ndigits(tot.count), ws = sums ? ndigits(tot.sum) : 0;
    if (wc < 5)
        wc = 5;
    if (sums && ws < 15)
        ws = 15;

    const char *what = q->value == VAL_DURATION ? "sum of duration_ns"
                       : q->value == VAL_SPAN   ? "sum of end_ts - start_ts (no duration_ns column)"
                                                : "row counts (no duration_ns or start_ts/end_ts to sum)";
    printf("%s: %" PRId64 " rows in %zu file%s, %zu groups; %s\n\n", q->table, nx_profile_table_num_rows(t),
           nx_profile_table_file_count(t), nx_profile_table_file_count(t) == 1 ? "" : "s", n_groups, what);
    for (size_t k = 0; k < q->n_by; k++)
        printf("%-*s  ", (int)w[k], q->by[k]);
    printf("%*s", wc, "count");
    if (sums)
        printf("  %*s", ws, "sum_duration_ns");
    printf("  %7s\n", "percent");
    for (size_t i = 0; i < shown; i++) {
        const nx_group_stats *st = nx_group_by_stats(g, i);
        for (size_t k = 0; k < q->n_by; k++) {
            nx_group_key key;
            nx_group_by_key(g, i, k, &key);
            key_text(stdout, &key, w[k]);
            fputs("  ", stdout);
        }
        printf("%*" PRId64, wc, st->count);
        if (sums) {
            if (st->n_values)
                printf("  %*" PRId64, ws, st->sum);
            else
                printf("  %*s", ws, "(null)");
        }
        printf("  %6.2f%%\n", pct(sums ? st->sum : st->count, total));
    }
    if (shown < n_groups) {
        int64_t oc = 0, os = 0;
        for (size_t i = shown; i < n_groups; i++) {
            oc += nx_group_by_stats(g, i)->count;
            os += nx_group_by_stats(g, i)->sum;
        }
        printf("%-*s%*" PRId64, (int)label_w, other, wc, oc);
        if (sums)
            printf("  %*" PRId64, ws, os);
        printf("  %6.2f%%\n", pct(sums ? os : oc, total));
    }
    printf("%-*s%*" PRId64, (int)label_w, "total", wc, tot.count);
    if (sums)
        printf("  %*" PRId64, ws, tot.sum);
    printf("  %6.2f%%\n", total ? 100.0 : 0.0);
}

static void top_csv(const top_query *q, const nx_group_by *g, size_t shown)
{
    for (size_t k = 0; k < q->n_by; k++) {
        nx_out_csv_field(stdout, q->by[k], strlen(q->by[k]));
        putchar(',');
    }
    fputs("count", stdout);
    if (sum_header(q))
        printf(",%s", sum_header(q));
    putchar('\n');
    for (size_t i = 0; i < shown; i++) {
        const nx_group_stats *st = nx_group_by_stats(g, i);
        for (size_t k = 0; k < q->n_by; k++) {
            nx_group_key key;
            nx_group_by_key(g, i, k, &key);
            if (key.null)
                ;
            else if (key.type == NXPQ_STRING)
                nx_out_csv_field(stdout, key.s, key.len);
            else
                printf("%" PRId64, key.i);
            putchar(',');
        }
        printf("%" PRId64, st->count);
        if (q->value != VAL_NONE) {
            putchar(',');
            if (st->n_values)
                printf("%" PRId64, st->sum);
        }
        putchar('\n');
    }
}

/* {"table": T, "files": n, "by": [...], "value": "duration_ns" | "end_ts - start_ts" | null,
 *  "rows": total rows, "sum_duration_ns": total sum (absent when nothing is summed),
 *  "groups": number of groups, "shown": groups listed,
 *  "top": [{<by col>: value|null, ..., "count": n, "sum_duration_ns": s|null, "percent": p}, ...]} */
static void top_json(const top_query *q, const nx_group_by *g, const nx_profile_table *t, size_t shown)
{
    nx_group_stats tot = nx_group_by_totals(g);
    bool sums = q->value != VAL_NONE;
    printf("{\"table\":");
    nx_out_json_string(stdout, q->table, strlen(q->table));
    printf(",\"files\":%zu,\"by\":[", nx_profile_table_file_count(t));
    for (size_t k = 0; k < q->n_by; k++) {
        if (k)
            putchar(',');
        nx_out_json_string(stdout, q->by[k], strlen(q->by[k]));
    }
    printf("],\"value\":%s,\"rows\":%" PRId64,
           q->value == VAL_DURATION ? "\"duration_ns\"" : q->value == VAL_SPAN ? "\"end_ts - start_ts\"" : "null",
           tot.count);
    if (sums)
        printf(",\"sum_duration_ns\":%" PRId64, tot.sum);
    printf(",\"groups\":%zu,\"shown\":%zu,\"top\":[", nx_group_by_count(g), shown);
    for (size_t i = 0; i < shown; i++) {
        const nx_group_stats *st = nx_group_by_stats(g, i);
        printf(i ? ",\n{" : "\n{");
        for (size_t k = 0; k < q->n_by; k++) {
            nx_group_key key;
            nx_group_by_key(g, i, k, &key);
            nx_out_json_string(stdout, q->by[k], strlen(q->by[k]));
            putchar(':');
            if (key.null)
                fputs("null", stdout);
            else if (key.type == NXPQ_STRING)
                nx_out_json_string(stdout, key.s, key.len);
            else if (key.type == NXPQ_BOOLEAN)
                fputs(key.i ? "true" : "false", stdout);
            else
                printf("%" PRId64, key.i);
            putchar(',');
        }
        printf("\"count\":%" PRId64, st->count);
        if (sums) {
            if (st->n_values)
                printf(",\"sum_duration_ns\":%" PRId64, st->sum);
            else
                fputs(",\"sum_duration_ns\":null", stdout);
        }
        printf(",\"percent\":%.6f}", pct(sums ? st->sum : st->count, sums ? tot.sum : tot.count));
    }
    printf("]}\n");
}

/* Scans the table into g. Projection: the --by columns, then the value column(s). */
static int top_aggregate(top_query *q, nx_profile_table *t, nx_group_by *g, nxpq_error *err)
{
    const char *cols[TOP_MAX_KEYS + 2];
    size_t n = 0, key_at[TOP_MAX_KEYS], val_at[2] = {0, 0};
    /* A column may be both a key and the value (--by duration_ns): project it once. */
    const char *vals[2] = {NULL, NULL};
    size_t n_vals = q->value == VAL_DURATION ? 1 : q->value == VAL_SPAN ? 2 : 0;
    if (q->value == VAL_DURATION)
        vals[0] = "duration_ns";
    else if (q->value == VAL_SPAN) {
        vals[0] = "start_ts";
        vals[1] = "end_ts";
    }
    for (size_t k = 0; k < q->n_by; k++) {
        key_at[k] = n;
        cols[n++] = q->by[k];
    }
    for (size_t v = 0; v < n_vals; v++) {
        size_t at = n;
        for (size_t j = 0; j < n; j++)
            if (strcmp(cols[j], vals[v]) == 0)
                at = j;
        if (at == n)
            cols[n++] = vals[v];
        val_at[v] = at;
    }
    nx_profile_scan_options so = {.columns = cols, .n_columns = n};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    if (!s)
        return -1;
    int64_t *span = NULL;
    uint8_t *span_valid = NULL;
    size_t span_cap = 0;
    int rc = -1;
    const nxpq_batch *b;
    int more;
    while ((more = nx_profile_scan_next(s, &b, err)) > 0) {
        const nxpq_column_data *keys[TOP_MAX_KEYS];
        for (size_t k = 0; k < q->n_by; k++)
            keys[k] = &b->columns[key_at[k]];
        const int64_t *values = NULL;
        const uint8_t *valid = NULL;
        if (q->value == VAL_DURATION) {
            values = b->columns[val_at[0]].values.i64;
            valid = b->columns[val_at[0]].valid;
        } else if (q->value == VAL_SPAN) {
            if (b->n_rows > span_cap) {
                free(span);
                free(span_valid);
                span_cap = b->n_rows;
                span = malloc(span_cap * sizeof *span);
                span_valid = malloc(span_cap);
                if (!span || !span_valid) {
                    snprintf(err->msg, sizeof err->msg, "%s: out of memory", q->table);
                    goto done;
                }
            }
            const nxpq_column_data *st = &b->columns[val_at[0]], *en = &b->columns[val_at[1]];
            for (size_t r = 0; r < b->n_rows; r++) {
                bool ok = (!st->valid || st->valid[r]) && (!en->valid || en->valid[r]);
                int64_t a = st->type == NXPQ_INT32 ? st->values.i32[r] : st->values.i64[r];
                int64_t e = en->type == NXPQ_INT32 ? en->values.i32[r] : en->values.i64[r];
                span_valid[r] = ok;
                span[r] = ok ? e - a : 0;
            }
            values = span;
            valid = span_valid;
        }
        if (nx_group_by_add(g, keys, values, valid, b->n_rows, err) != 0)
            goto done;
    }
    rc = more < 0 ? -1 : 0;
done:
    free(span);
    free(span_valid);
    nx_profile_scan_close(s);
    return rc;
}

static bool is_int_column(const nx_profile_table *t, const char *name)
{
    int c = nx_profile_table_find_column(t, name);
    if (c < 0)
        return false;
    nxpq_type ty = nx_profile_table_column(t, (size_t)c)->type;
    return ty == NXPQ_INT64 || ty == NXPQ_INT32;
}

static int top_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"table", required_argument, NULL, 't'},
        {"by", required_argument, NULL, 'b'},
        {"limit", required_argument, NULL, 'l'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    top_query q = {.table = "Instruction", .limit = 10, .format = FMT_TEXT};
    int rc = NX_EXIT_ERROR;
    const char *by_arg = "engine,opcode";
    int c;
    while ((c = getopt_long(argc, argv, ":t:b:l:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            q.table = optarg;
            break;
        case 'b':
            by_arg = optarg;
            break;
        case 'l': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *optarg == '-' || *optarg == '+' || *end || errno)
                return nx_usage_error("top", "--limit needs a non-negative integer, got '%s'", optarg);
            q.limit = v;
            break;
        }
        case 'f':
            if (strcmp(optarg, "text") == 0)
                q.format = FMT_TEXT;
            else if (strcmp(optarg, "csv") == 0)
                q.format = FMT_CSV;
            else if (strcmp(optarg, "json") == 0)
                q.format = FMT_JSON;
            else
                return nx_usage_error("top", "unknown format '%s' (text, csv or json)", optarg);
            break;
        case 'h':
            top_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("top", c, argv);
        }
    }
    if (optind >= argc)
        return nx_usage_error("top", "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error("top", "unexpected argument '%s'", argv[optind + 1]);
    q.dir = argv[optind];
    if (!*q.dir)
        return nx_usage_error("top", "PROFILE_DIR must not be empty");
    const nx_schema_table *st = nx_schema_table_find(q.table);
    if (!st || st->transient)
        return nx_usage_error("top", "unknown table '%s' (see 'nxprof schema' for the table names)", q.table);
    if ((rc = parse_by(&q, by_arg)) != 0) {
        free(q.by_buf);
        return rc;
    }
    rc = NX_EXIT_ERROR;

    nx_profile_table *t = NULL;
    nx_group_by *g = NULL;
    nxpq_error err = {{0}};
    int orc = nx_profile_table_open(q.dir, q.table, &t, &err);
    if (orc == NX_PROFILE_TABLE_ABSENT) {
        fprintf(stderr, "nxprof top: profile %s has no %s table (%s)\n", q.dir, q.table, err.msg);
        goto done;
    }
    if (orc != 0) {
        fprintf(stderr, "nxprof top: %s\n", err.msg);
        goto done;
    }
    nxpq_type types[TOP_MAX_KEYS];
    for (size_t k = 0; k < q.n_by; k++) {
        int col = nx_profile_table_find_column(t, q.by[k]);
        if (col < 0) {
            rc = nx_usage_error("top", "table %s has no column '%s'", q.table, q.by[k]);
            goto done;
        }
        types[k] = nx_profile_table_column(t, (size_t)col)->type;
        if (types[k] != NXPQ_INT32 && types[k] != NXPQ_INT64 && types[k] != NXPQ_STRING &&
            types[k] != NXPQ_BOOLEAN) {
            rc = nx_usage_error("top", "--by column '%s' of %s is %s; use integer or string columns", q.by[k],
                                q.table, nxpq_type_name(types[k]));
            goto done;
        }
    }
    int dcol = nx_profile_table_find_column(t, "duration_ns");
    if (dcol >= 0 && nx_profile_table_column(t, (size_t)dcol)->type == NXPQ_INT64)
        q.value = VAL_DURATION;
    else if (is_int_column(t, "start_ts") && is_int_column(t, "end_ts"))
        q.value = VAL_SPAN;
    else
        q.value = VAL_NONE;

    if (!(g = nx_group_by_new(types, q.n_by, &err)) || top_aggregate(&q, t, g, &err) != 0 ||
        nx_group_by_sort(g, false, &err) != 0) {
        fprintf(stderr, "nxprof top: %s: %s\n", q.table, err.msg);
        goto done;
    }
    size_t n_groups = nx_group_by_count(g);
    size_t shown = q.limit == 0 || q.limit > n_groups ? n_groups : (size_t)q.limit;
    if (q.format == FMT_TEXT)
        top_text(&q, g, t, shown);
    else if (q.format == FMT_CSV)
        top_csv(&q, g, shown);
    else
        top_json(&q, g, t, shown);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof top: writing the output failed\n");
        goto done;
    }
    rc = NX_EXIT_OK;
done:
    nx_group_by_free(g);
    nx_profile_table_close(t);
    free(q.by_buf);
    return rc;
}

const nx_command nx_cmd_top = {
    .name = "top",
    .summary = "group a profile table (default: Instruction by engine, opcode) by time spent",
    .run = top_run,
    .help = top_help,
};
