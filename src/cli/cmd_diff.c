/*
 * cmd_diff.c — `nxprof diff A B`: what changed between two profiles of one kind.
 * Parses the options, runs src/query/diff.h (grouping, join, order, totals) and
 * prints its answer as text, CSV or JSON (query/diff_json.c, the API's object).
 *
 * Output:
 *   - text: on system profiles first the devices (busy, idle, kernel time and
 *     utilisation of A and B, busy delta) and the steps (duration and GPU-busy time of A
 *     and B, delta, ratio) side by side, each a small table (diff.h's totals; "-" where a
 *     side lacks the device or step); then an aligned table (key, status, count A/B, total ns A/B, delta, ratio, and
 *     self ns A/B on nesting tables), an "(N other groups)" line when the limit
 *     dropped some, a "total" line over every group, and a line saying how many
 *     profiler rows were left out of each side;
 *   - csv: a header line then one line per shown group, exact integers, null and a
 *     missing ratio as empty fields, no total line; --normalize adds norm_a, norm_b and
 *     norm_delta (text and CSV columns, JSON members);
 *   - json: nx_diff_json's object.
 * Exit: 0; 1 when a profile or its table cannot be read, or the two are of different
 * kinds; 2 for usage errors, including --by naming a key the table lacks.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/text_out.h"
#include "profile/profile_table.h"
#include "query/diff.h"
#include "query/top.h"
#include "util/float_text.h"

static void diff_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof diff A B [--by KEY] [--limit N] [--format text|csv|json] [--all]\n"
            "                   [--normalize step|wall]\n"
            "\n"
            "Compare two profiles of one kind: two system profiles (SystemProfileEvents) or\n"
            "two device profiles (Instruction; by framework_name, the FrameworkInstruction\n"
            "roll-up and its spans end_ts - start_ts). Rows are grouped by KEY in each; per\n"
            "group it shows the row count and summed time in A and in B, the difference B - A,\n"
            "the ratio B / A (none when either is 0) and whether the group was added,\n"
            "removed, changed or is the same; nesting tables also get the self time.\n"
            "Largest |difference| first, ties by the key. On system profiles the text first\n"
            "shows each device's busy and idle time and each step's duration in A and B side\n"
            "by side (JSON: \"devices\" and \"steps\").\n"
            "\n"
            "  -b, --by KEY         name (default on system profiles), cat, thread, kernel\n"
            "                       (kernel events by name), or opcode (default on device\n"
            "                       profiles), hlo_name, framework_name or another column of\n"
            "                       the table\n"
            "  -l, --limit N        show the first N groups, 0 for all (default 20)\n"
            "  -f, --format F       text (default), csv or json\n"
            "  -a, --all            keep the profiler's own rows (\"PyTorch Profiler (N)\",\n"
            "                       \"ProfilerStep#N\"), left out by default\n"
            "  -n, --normalize M    also each side's time per step (M step: over its number of\n"
            "                       ProfilerStep#N annotations, ns per step) or per wall time\n"
            "                       (M wall: the fraction of its wall time), ordered by their\n"
            "                       difference\n"
            "  -h, --help           show this help\n"
            "\n"
            "Exit status: 0 success, 1 a profile or its table missing or unreadable, or the\n"
            "two of different kinds, 2 usage error.\n");
}

typedef enum { FMT_TEXT, FMT_CSV, FMT_JSON } diff_format;

static void csv_i64(bool have, int64_t v)
{
    putchar(',');
    if (have)
        printf("%" PRId64, v);
}

/* A double in the CSV rule (query/engine/csv.h): its shortest round-trip text. */
static void csv_f64(bool comma, double v)
{
    char t[NX_FLOAT_TEXT_MAX];
    nx_f64_text(t, v);
    printf("%s%s", comma ? "," : "", t);
}

static void diff_csv(const nx_diff *d, size_t shown)
{
    nx_out_csv_field(stdout, d->by, strlen(d->by));
    fputs(",status,count_a,count_b,total_ns_a,total_ns_b,delta_ns,ratio", stdout);
    fputs(d->has_self ? ",self_ns_a,self_ns_b" : "", stdout);
    fputs(d->normalize != NX_DIFF_NORM_NONE ? ",norm_a,norm_b,norm_delta\n" : "\n", stdout);
    for (size_t i = 0; i < shown; i++) {
        const nx_diff_row *r = &d->rows[i];
        if (r->key)
            nx_out_csv_field(stdout, r->key, r->key_len);
        printf(",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", nx_diff_status_name(r->status),
               r->a.count, r->b.count, r->a.total_ns, r->b.total_ns, r->delta_ns);
        if (r->has_ratio)
            csv_f64(false, r->ratio);
        if (d->has_self) {
            csv_i64(true, r->a.self_ns);
            csv_i64(true, r->b.self_ns);
        }
        if (d->normalize != NX_DIFF_NORM_NONE) {
            csv_f64(true, r->norm_a);
            csv_f64(true, r->norm_b);
            csv_f64(true, r->norm_delta);
        }
        putchar('\n');
    }
}

/* Width of the key column: the longest shown key, at least the header's, at most 60. */
static int key_width(const nx_diff *d, size_t shown)
{
    size_t w = strlen(d->by) > 6 ? strlen(d->by) : 6;
    for (size_t i = 0; i < shown; i++)
        if (d->rows[i].key_len > w)
            w = d->rows[i].key_len;
    return w > 60 ? 60 : (int)w;
}

static void text_line(const nx_diff *d, int kw, const char *key, size_t klen, const char *status,
                      const nx_diff_side *a, const nx_diff_side *b)
{
    int shown_len = klen > (size_t)kw ? kw : (int)klen;
    printf("%-*.*s  %-7s  %9" PRId64 "  %9" PRId64 "  %15" PRId64 "  %15" PRId64 "  %15" PRId64, kw, shown_len, key,
           status, a->count, b->count, a->total_ns, b->total_ns, b->total_ns - a->total_ns);
    if (a->total_ns != 0 && b->total_ns != 0)
        printf("  %8.3f", (double)b->total_ns / (double)a->total_ns);
    else
        printf("  %8s", "-");
    if (d->has_self)
        printf("  %15" PRId64 "  %15" PRId64, a->self_ns, b->self_ns);
    if (d->normalize != NX_DIFF_NORM_NONE) {
        double na = (double)a->total_ns / d->div_a, nb = (double)b->total_ns / d->div_b;
        printf("  %13.6g  %13.6g  %13.6g", na, nb, nb - na);
    }
    putchar('\n');
}

/* A figure of one side, or "-" where the side lacks the row. */
static void text_opt(bool have, int64_t v)
{
    if (have)
        printf("  %15" PRId64, v);
    else
        printf("  %15s", "-");
}

static void text_rank(bool have, int64_t rank)
{
    if (have && rank >= 0)
        printf("  %6" PRId64, rank);
    else
        printf("  %6s", "-");
}

static void text_ratio(bool have, int64_t a, int64_t b)
{
    if (have && a != 0 && b != 0)
        printf("  %8.3f", (double)b / (double)a);
    else
        printf("  %8s", "-");
}

static void text_util(bool have, double u)
{
    if (have)
        printf("  %5.1f%%", 100.0 * u);
    else
        printf("  %6s", "-");
}

static void devices_text(const nx_diff *d)
{
    printf("%-16s  %6s  %6s  %15s  %15s  %15s  %15s  %15s  %15s  %15s  %6s  %6s\n", "device", "rank_a", "rank_b",
           "busy_ns_a", "busy_ns_b", "busy_ns_delta", "idle_ns_a", "idle_ns_b", "kernel_ns_a", "kernel_ns_b", "util_a",
           "util_b");
    for (size_t i = 0; i < d->n_devices; i++) {
        const nx_diff_device *x = &d->devices[i];
        printf("%-16s", x->in_a ? x->a.device : x->b.device);
        text_rank(x->in_a, x->a.rank);
        text_rank(x->in_b, x->b.rank);
        text_opt(x->in_a, x->a.busy_ns);
        text_opt(x->in_b, x->b.busy_ns);
        text_opt(x->in_a && x->in_b, x->b.busy_ns - x->a.busy_ns);
        text_opt(x->in_a, x->a.idle_ns);
        text_opt(x->in_b, x->b.idle_ns);
        text_opt(x->in_a, x->a.kernel_ns);
        text_opt(x->in_b, x->b.kernel_ns);
        text_util(x->in_a, x->a.utilization);
        text_util(x->in_b, x->b.utilization);
        putchar('\n');
    }
}

static void steps_text(const nx_diff *d)
{
    printf("%-20s  %6s  %6s  %15s  %15s  %15s  %8s  %15s  %15s\n", "step", "rank_a", "rank_b", "duration_ns_a",
           "duration_ns_b", "delta_ns", "ratio", "gpu_busy_ns_a", "gpu_busy_ns_b");
    for (size_t i = 0; i < d->n_steps; i++) {
        const nx_diff_step *x = &d->steps[i];
        bool both = x->in_a && x->in_b;
        printf("%-20.20s", x->in_a ? x->a.name : x->b.name);
        text_rank(x->in_a, x->a.rank);
        text_rank(x->in_b, x->b.rank);
        text_opt(x->in_a, x->a.duration_ns);
        text_opt(x->in_b, x->b.duration_ns);
        text_opt(both, x->b.duration_ns - x->a.duration_ns);
        text_ratio(both, x->a.duration_ns, x->b.duration_ns);
        text_opt(x->in_a, x->a.gpu_busy_ns);
        text_opt(x->in_b, x->b.gpu_busy_ns);
        putchar('\n');
    }
}

/* The devices and steps side by side, each followed by a blank line; none when empty. */
static void totals_text(const nx_diff *d)
{
    if (d->n_devices) {
        devices_text(d);
        putchar('\n');
    }
    if (d->n_steps) {
        steps_text(d);
        putchar('\n');
    }
}

static void diff_text(const nx_diff *d, size_t shown)
{
    totals_text(d);
    int kw = key_width(d, shown);
    printf("%-*s  %-7s  %9s  %9s  %15s  %15s  %15s  %8s", kw, d->by, "status", "count_a", "count_b", "total_ns_a",
           "total_ns_b", "delta_ns", "ratio");
    if (d->has_self)
        printf("  %15s  %15s", "self_ns_a", "self_ns_b");
    if (d->normalize != NX_DIFF_NORM_NONE)
        printf("  %13s  %13s  %13s", "norm_a", "norm_b", "norm_delta");
    putchar('\n');
    for (size_t i = 0; i < shown; i++) {
        const nx_diff_row *r = &d->rows[i];
        text_line(d, kw, r->key ? r->key : "(null)", r->key ? r->key_len : 6, nx_diff_status_name(r->status), &r->a,
                  &r->b);
    }
    if (shown < d->n_rows)
        printf("(%zu other groups)\n", d->n_rows - shown);
    text_line(d, kw, "total", 5, "", &d->total_a, &d->total_b);
    if (d->normalize == NX_DIFF_NORM_STEP)
        printf("norm: ns per step, over %" PRId64 " steps in A and %" PRId64 " in B\n", d->steps_a, d->steps_b);
    else if (d->normalize == NX_DIFF_NORM_WALL)
        printf("norm: fraction of the wall time, %" PRId64 " ns in A and %" PRId64 " ns in B\n", d->wall_a, d->wall_b);
    if (d->excluded_a || d->excluded_b)
        printf("profiler rows left out: %" PRId64 " in A, %" PRId64 " in B (--all keeps them)\n", d->excluded_a,
               d->excluded_b);
}

static int parse_limit(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *s == '+' || *end || errno)
        return -1;
    *out = v;
    return 0;
}

static int print_diff(const nx_diff *d, const char *a, const char *b, unsigned long long limit, diff_format f)
{
    size_t shown = nx_diff_shown(d, limit);
    if (f == FMT_TEXT) {
        diff_text(d, shown);
    } else if (f == FMT_CSV) {
        diff_csv(d, shown);
    } else {
        nx_strbuf s = NX_STRBUF_INIT;
        nx_diff_json(&s, d, a, b, limit);
        if (nx_strbuf_failed(&s)) {
            nx_strbuf_free(&s);
            fprintf(stderr, "nxprof diff: out of memory\n");
            return NX_EXIT_ERROR;
        }
        fwrite(s.data, 1, s.len, stdout);
        putchar('\n');
        nx_strbuf_free(&s);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof diff: writing the output failed\n");
        return NX_EXIT_ERROR;
    }
    return NX_EXIT_OK;
}

static int run_query(const char *a, const char *b, const nx_diff_options *o, unsigned long long limit, diff_format f)
{
    nx_diff d;
    nx_error err = {0};
    int rc = nx_diff_run(a, b, o, &d, &err);
    if (rc == NX_TOP_BAD_KEY)
        return nx_usage_error("diff", "%s", err.msg);
    if (rc == NX_DIFF_NO_DIVISOR) {
        fprintf(stderr, "nxprof diff: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        fprintf(stderr, "nxprof diff: a profile lacks the table to compare (%s)\n", err.msg);
        return NX_EXIT_ERROR;
    }
    if (rc != 0) {
        fprintf(stderr, "nxprof diff: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    rc = print_diff(&d, a, b, limit, f);
    nx_diff_free(&d);
    return rc;
}

static int diff_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"by", required_argument, NULL, 'b'},       {"limit", required_argument, NULL, 'l'},
        {"format", required_argument, NULL, 'f'},   {"all", no_argument, NULL, 'a'},
        {"normalize", required_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    nx_diff_options o = {0};
    unsigned long long limit = 20;
    diff_format f = FMT_TEXT;
    int c;
    while ((c = getopt_long(argc, argv, ":b:l:f:an:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (!*optarg)
                return nx_usage_error("diff", "--by needs a key");
            o.by = optarg;
            break;
        case 'l':
            if (parse_limit(optarg, &limit) != 0)
                return nx_usage_error("diff", "--limit needs a non-negative integer, got '%s'", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "text") == 0)
                f = FMT_TEXT;
            else if (strcmp(optarg, "csv") == 0)
                f = FMT_CSV;
            else if (strcmp(optarg, "json") == 0)
                f = FMT_JSON;
            else
                return nx_usage_error("diff", "unknown format '%s' (text, csv or json)", optarg);
            break;
        case 'a':
            o.include_profiler = true;
            break;
        case 'n':
            if (nx_diff_normalize_parse(optarg, &o.normalize) != 0)
                return nx_usage_error("diff", "unknown --normalize '%s' (step, wall or none)", optarg);
            break;
        case 'h':
            diff_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("diff", c, argv);
        }
    }
    if (argc - optind < 2)
        return nx_usage_error("diff", "two profiles, A and B, are required");
    if (argc - optind > 2)
        return nx_usage_error("diff", "unexpected argument '%s'", argv[optind + 2]);
    if (!*argv[optind] || !*argv[optind + 1])
        return nx_usage_error("diff", "a profile directory must not be empty");
    return run_query(argv[optind], argv[optind + 1], &o, limit, f);
}

const nx_command nx_cmd_diff = {
    .name = "diff",
    .summary = "compare two profiles: per group counts and time in each, difference, ratio",
    .run = diff_run,
    .help = diff_help,
};
