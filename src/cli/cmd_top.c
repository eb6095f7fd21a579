/*
 * cmd_top.c — `nxprof top PROFILE_DIR`: where did the time go. Parses the
 * options, runs src/query/top.h (the grouping, sums and order) and prints its
 * answer as text, CSV or JSON.
 *
 * Rules (the query's, with the default table and --by and the percentages, are in top.h):
 *   - --limit N keeps the first N groups (0 = all). Totals always cover every row.
 *   - --rank N counts only the rows whose worker_gid is N (a framework trace's
 *     rank): groups, totals and wall time; --by worker_gid gives per-rank figures.
 *   - SystemProfileEvents: the profiler's own rows ("PyTorch Profiler (0)",
 *     ProfilerStep#N) are left out of groups and totals unless --profiler-rows.
 *   - The total line of a nesting table has no percent ("-"): self time summed
 *     over threads that run at once is no share of the wall time.
 *   - text: aligned table with a header, the kept groups, an "(N other groups)"
 *     line when the limit dropped some, and a "total" line. csv: a header line
 *     (the --by names, count, sum_duration_ns, and sum_self_ns for nesting
 *     tables) then one line per kept group, exact integers, null as an empty
 *     field, no total line. json: one object (see top_json) with exact integers
 *     and the totals.
 *   - A note on stderr says when depth and self time had to be computed from
 *     the table because its timeline index was not usable (and why).
 * Exit: 0; 1 when the profile or table cannot be read or is absent, or its file
 * lacks a --by column the schema's table has; 2 for usage errors, including --by
 * naming a column the schema's table lacks or one that is not an
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
#include "profile/profile_table.h"
#include "query/top.h"
#include "schema/schema.h"

#define TOP_MAX_KEYS NX_TOP_MAX_KEYS

static void top_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof top PROFILE_DIR [--table T] [--by COL[,COL...]] [--limit N]\n"
            "                  [--format text|csv|json] [--rank N] [--profiler-rows]\n"
            "\n"
            "Group a profile table by columns and show, per group, the number of rows and the\n"
            "sum of duration_ns, largest first (ties by the group columns ascending). Reads\n"
            "T.parquet or all of T_0.parquet, T_1.parquet, ... in PROFILE_DIR.\n"
            "SystemProfileEvents also gets each group's self time (its events' durations less\n"
            "their children's on the same thread), ordered by it, as a percent of wall time.\n"
            "\n"
            "  -t, --table T        table to read (default Instruction; SystemProfileEvents on a\n"
            "                       system profile, one without Instruction)\n"
            "  -b, --by COLS        comma-separated integer or string columns (default engine,opcode;\n"
            "                       name for SystemProfileEvents, which also takes cat and thread;\n"
            "                       Instruction also takes file_path and line_number, joined from\n"
            "                       KernelInstructions: time per NKI kernel source line)\n"
            "  -l, --limit N        show the first N groups, 0 for all (default 10)\n"
            "  -f, --format F       text (default), csv or json\n"
            "  -r, --rank N         only the rows of rank N (worker_gid: a framework trace's rank);\n"
            "                       --by worker_gid gives one group per rank\n"
            "      --profiler-rows  keep the profiler's own rows of SystemProfileEvents (PyTorch\n"
            "                       Profiler (0), ProfilerStep#N), left out by default\n"
            "  -h, --help           show this help\n"
            "\n"
            "Tables without duration_ns sum end_ts - start_ts when they have both, else only count.\n"
            "Exit status: 0 success, 1 profile or table missing or unreadable (or lacking a schema\n"
            "column), 2 usage error.\n");
}

typedef enum { FMT_TEXT, FMT_CSV, FMT_JSON } top_format;

typedef struct top_query {
    const char *dir;
    const char *table;
    char *by_buf;                       /* owns the strings in by[] */
    const char *by[TOP_MAX_KEYS];
    size_t n_by;
    unsigned long long limit;
    top_format format;
    bool has_rank;
    int64_t rank;
    bool profiler_rows;
    const nx_top *r;                    /* the answer */
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

static bool sums(const top_query *q) { return q->r->value != NX_TOP_COUNT; }

static void text_sum(bool have, int64_t v, int w)
{
    if (have)
        printf("  %*" PRId64, w, v);
    else
        printf("  %*s", w, "(null)");
}

static void top_text(const top_query *q, size_t shown)
{
    const nx_top *r = q->r;
    const nx_group_by *g = r->g;
    size_t n_groups = nx_group_by_count(g);
    nx_group_stats tot = nx_group_by_totals(g);
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
    int wc = ndigits(tot.count), ws = sums(q) ? ndigits(tot.sum[0]) : 0, wf = r->self ? ndigits(tot.sum[1]) : 0;
    if (wc < 5)
        wc = 5;
    if (sums(q) && ws < 15)
        ws = 15;
    if (r->self && wf < 11)
        wf = 11;

    const char *what = r->value == NX_TOP_DURATION ? "sum of duration_ns"
                       : r->value == NX_TOP_SPAN   ? "sum of end_ts - start_ts (no duration_ns column)"
                                                   : "row counts (no duration_ns or start_ts/end_ts to sum)";
    printf("%s: %" PRId64 " rows in %zu file%s", q->table, r->rows, r->files, r->files == 1 ? "" : "s");
    if (q->has_rank)
        printf(", %" PRId64 " of them of rank %" PRId64, nx_group_by_totals(r->g).count, q->rank);
    if (r->profiler_left_out)
        printf(", %" PRId64 " of the profiler's own left out (--profiler-rows keeps them)", r->profiler_left_out);
    printf(", %zu groups; %s", n_groups, what);
    if (r->self)
        printf(" and of self time (less the children's, per thread); percent of wall time %" PRId64 " ns",
               nx_top_wall(r));
    printf("\n\n");
    for (size_t k = 0; k < q->n_by; k++)
        printf("%-*s  ", (int)w[k], q->by[k]);
    printf("%*s", wc, "count");
    if (sums(q))
        printf("  %*s", ws, "sum_duration_ns");
    if (r->self)
        printf("  %*s", wf, "sum_self_ns");
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
        if (sums(q))
            text_sum(st->n_values[0] > 0, st->sum[0], ws);
        if (r->self)
            text_sum(st->n_values[1] > 0, st->sum[1], wf);
        printf("  %6.2f%%\n", nx_top_percent(r, st));
    }
    if (shown < n_groups) {
        nx_group_stats o = nx_top_rest(r, shown);
        printf("%-*s%*" PRId64, (int)label_w, other, wc, o.count);
        if (sums(q))
            printf("  %*" PRId64, ws, o.sum[0]);
        if (r->self)
            printf("  %*" PRId64, wf, o.sum[1]);
        printf("  %6.2f%%\n", nx_top_percent(r, &o));
    }
    printf("%-*s%*" PRId64, (int)label_w, "total", wc, tot.count);
    if (sums(q))
        printf("  %*" PRId64, ws, tot.sum[0]);
    if (r->self)
        printf("  %*" PRId64, wf, tot.sum[1]);
    /* Self time summed over every thread is not a share of the wall time (threads
     * run at once: it can pass 100 %), so the total has no percent then. */
    if (r->self)
        printf("  %7s\n", "-");
    else
        printf("  %6.2f%%\n", nx_top_percent(r, &tot));
}

static void top_csv(const top_query *q, size_t shown)
{
    const nx_group_by *g = q->r->g;
    for (size_t k = 0; k < q->n_by; k++) {
        nx_out_csv_field(stdout, q->by[k], strlen(q->by[k]));
        putchar(',');
    }
    fputs("count", stdout);
    if (sums(q))
        fputs(",sum_duration_ns", stdout);
    if (q->r->self)
        fputs(",sum_self_ns", stdout);
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
        for (int j = 0; j < NX_GROUP_SUMS; j++) {
            if (j == 0 ? !sums(q) : !q->r->self)
                continue;
            putchar(',');
            if (st->n_values[j])
                printf("%" PRId64, st->sum[j]);
        }
        putchar('\n');
    }
}

static void json_sum(const char *name, bool have, int64_t v)
{
    if (have)
        printf(",\"%s\":%" PRId64, name, v);
    else
        printf(",\"%s\":null", name);
}

/* {"table": T, "files": n, "by": [...], "value": "duration_ns" | "end_ts - start_ts" | null,
 *  "rows": total rows (of the rank), "profiler_rows_left_out": those of them the groups
 *  and totals leave out as the profiler's own, "rank": the --rank asked for, else null,
 *  "sum_duration_ns": total sum (absent when nothing is summed),
 *  nesting tables: "sum_self_ns": total self time, "wall_ns", "first_ts", "last_ts" (null when no row has both),
 *  "groups": number of groups, "shown": groups listed,
 *  "top": [{<by col>: value|null, ..., "count": n, "sum_duration_ns": s|null,
 *           nesting tables: "sum_self_ns": s|null, "percent_of_wall": p; else "percent": p}, ...]} */
static void top_json(const top_query *q, size_t shown)
{
    const nx_top *r = q->r;
    const nx_group_by *g = r->g;
    nx_group_stats tot = nx_group_by_totals(g);
    printf("{\"table\":");
    nx_out_json_string(stdout, q->table, strlen(q->table));
    printf(",\"files\":%zu,\"by\":[", r->files);
    for (size_t k = 0; k < q->n_by; k++) {
        if (k)
            putchar(',');
        nx_out_json_string(stdout, q->by[k], strlen(q->by[k]));
    }
    printf("],\"value\":%s,\"rows\":%" PRId64 ",\"profiler_rows_left_out\":%" PRId64,
           r->value == NX_TOP_DURATION ? "\"duration_ns\"" : r->value == NX_TOP_SPAN ? "\"end_ts - start_ts\"" : "null",
           tot.count + r->profiler_left_out, r->profiler_left_out);
    if (q->has_rank)
        printf(",\"rank\":%" PRId64, q->rank);
    else
        printf(",\"rank\":null");
    if (sums(q))
        printf(",\"sum_duration_ns\":%" PRId64, tot.sum[0]);
    if (r->self) {
        printf(",\"sum_self_ns\":%" PRId64, tot.sum[1]);
        json_sum("wall_ns", r->have_wall, nx_top_wall(r));
        json_sum("first_ts", r->have_wall, r->first_ts);
        json_sum("last_ts", r->have_wall, r->last_ts);
    }
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
        if (sums(q))
            json_sum("sum_duration_ns", st->n_values[0] > 0, st->sum[0]);
        if (r->self)
            json_sum("sum_self_ns", st->n_values[1] > 0, st->sum[1]);
        printf(",\"%s\":", r->self ? "percent_of_wall" : "percent");
        nx_out_json_real(stdout, nx_top_percent(r, st), true);
        putchar('}');
    }
    printf("]}\n");
}

static int top_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"table", required_argument, NULL, 't'},
        {"by", required_argument, NULL, 'b'},
        {"limit", required_argument, NULL, 'l'},
        {"format", required_argument, NULL, 'f'},
        {"rank", required_argument, NULL, 'r'},
        {"profiler-rows", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    top_query q = {.table = NULL, .limit = 10, .format = FMT_TEXT};
    int rc = NX_EXIT_ERROR;
    const char *by_arg = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":t:b:l:f:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (nx_parse_rank(optarg, &q.rank) != 0)
                return nx_usage_error("top", "--rank '%s' is not a rank (0 or a positive integer)", optarg);
            q.has_rank = true;
            break;
        case 'P':
            q.profiler_rows = true;
            break;
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
    if (!q.table)
        q.table = nx_top_default_table(q.dir);
    const nx_schema_table *st = nx_schema_table_find(q.table);
    if (!st || st->transient)
        return nx_usage_error("top", "unknown table '%s' (see 'nxprof schema' for the table names)", q.table);
    if (!by_arg)
        by_arg = nx_top_default_by(q.table);
    if ((rc = parse_by(&q, by_arg)) != 0) {
        free(q.by_buf);
        return rc;
    }

    nx_top r = {0};
    nx_error err = {0};
    nx_top_options o = {.table = q.table, .by = q.by, .n_by = q.n_by, .has_rank = q.has_rank, .rank = q.rank,
                         .profiler_rows = q.profiler_rows};
    int qrc = nx_top_run(q.dir, &o, &r, &err);
    q.r = &r;
    if (qrc == NX_PROFILE_TABLE_ABSENT) {
        fprintf(stderr, "nxprof top: profile %s has no %s table (%s)\n", q.dir, q.table, err.msg);
        rc = NX_EXIT_ERROR;
    } else if (qrc == NX_TOP_BAD_KEY) {
        rc = nx_usage_error("top", "%s", err.msg);
    } else if (qrc != 0) {
        fprintf(stderr, "nxprof top: %s: %s\n", q.table, err.msg);
        rc = NX_EXIT_ERROR;
    } else {
        if (r.note[0])
            fprintf(stderr, "nxprof top: note: %s: depth and self time computed from the table; its timeline index "
                            "was not used (%s)\n", q.table, r.note);
        size_t shown = nx_top_shown(&r, q.limit);
        if (q.format == FMT_TEXT)
            top_text(&q, shown);
        else if (q.format == FMT_CSV)
            top_csv(&q, shown);
        else
            top_json(&q, shown);
        rc = NX_EXIT_OK;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "nxprof top: writing the output failed\n");
            rc = NX_EXIT_ERROR;
        }
    }
    nx_top_free(&r);
    free(q.by_buf);
    return rc;
}

const nx_command nx_cmd_top = {
    .name = "top",
    .summary = "group a profile table (default: Instruction by engine, opcode) by time spent",
    .run = top_run,
    .help = top_help,
};
