/*
 * cmd_ranks.c — `nxprof ranks PROFILE_DIR [--format text|json]`: per-step
 * durations of every rank, their skew, and the stragglers of each collective
 * (query/rank_stats.h). The text form is also summary's Ranks section
 * (nx_ranks_print_text).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "query/rank_stats.h"

#define TOP_STRAGGLERS 10

static void ranks_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof ranks PROFILE_DIR [--format text|json]\n"
            "\n"
            "Compare the ranks of a system profile (framework traces of several ranks):\n"
            "each step's duration per rank (ProfilerStep#N, JAX step_num steps), the skew\n"
            "(max - min, max / median, slowest and fastest rank), and the stragglers: for\n"
            "each collective (NCCL kernels, c10d::allreduce_, gloo:all_reduce, ...; the n-th\n"
            "of a name in a step matched across ranks) the rank that started it last and\n"
            "how late (against the first rank and the median). Times are exact nanoseconds;\n"
            "text shows microseconds.\n"
            "\n"
            "  -f, --format F   text (default) or json\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: 0 success, 1 profile unreadable or without SystemProfileEvents,\n"
            "2 usage error.\n");
}

/* ns as microseconds with three decimals (exact). */
static void us(char *out, size_t cap, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(out, cap, "%s%" PRIu64 ".%03" PRIu64, sign, u / 1000, u % 1000);
}

static int by_lateness(const void *x, const void *y)
{
    const nx_straggler *a = *(const nx_straggler *const *)x, *b = *(const nx_straggler *const *)y;
    return (a->lateness_ns < b->lateness_ns) - (a->lateness_ns > b->lateness_ns);
}

static void print_steps(const nx_rank_stats *s)
{
    char v[32];
    printf("Step durations per rank (us)\n%8s", "step");
    for (size_t r = 0; r < s->n_ranks; r++) {
        snprintf(v, sizeof v, "rank %" PRId64, s->ranks[r]);
        printf(" %14s", v);
    }
    printf(" %12s %10s %8s %8s %10s %12s\n", "skew", "max/median", "slowest", "fastest", "straggler", "lateness");
    for (size_t i = 0; i < s->n_steps; i++) {
        const nx_rank_step *st = &s->steps[i];
        printf("%8" PRId64, st->step);
        for (size_t r = 0; r < s->n_ranks; r++) {
            if (st->duration_ns[r] < 0)
                snprintf(v, sizeof v, "-");
            else
                us(v, sizeof v, st->duration_ns[r]);
            printf(" %14s", v);
        }
        us(v, sizeof v, st->skew_ns);
        printf(" %12s %10.3f %8" PRId64 " %8" PRId64, v, st->max_over_median, st->slowest_rank, st->fastest_rank);
        if (st->straggler_rank < 0) {
            printf(" %10s %12s\n", "-", "-");
            continue;
        }
        us(v, sizeof v, st->max_lateness_ns);
        printf(" %10" PRId64 " %12s\n", st->straggler_rank, v);
    }
}

static int print_stragglers(const nx_rank_stats *s)
{
    if (s->n_stragglers == 0) {
        printf("\nNo collective was seen on two ranks.\n");
        return 0;
    }
    const nx_straggler **by = malloc(s->n_stragglers * sizeof *by);
    if (!by)
        return -1;
    for (size_t i = 0; i < s->n_stragglers; i++)
        by[i] = &s->stragglers[i];
    qsort(by, s->n_stragglers, sizeof *by, by_lateness);
    size_t n = s->n_stragglers < TOP_STRAGGLERS ? s->n_stragglers : TOP_STRAGGLERS;
    printf("\nLatest collectives (%zu of %zu; lateness in us)\n%8s %-32s %5s %9s %12s %12s %6s\n", n,
           s->n_stragglers, "step", "collective", "#", "straggler", "lateness", "vs median", "first");
    for (size_t i = 0; i < n; i++) {
        const nx_straggler *g = by[i];
        char late[32], med[32];
        us(late, sizeof late, g->lateness_ns);
        us(med, sizeof med, g->lateness_vs_median_ns);
        printf("%8" PRId64 " %-32.32s %5" PRId64 " %9" PRId64 " %12s %12s %6" PRId64 "\n", g->step, g->name,
               g->occurrence, g->straggler_rank, late, med, g->first_rank);
    }
    free(by);
    return 0;
}

int nx_ranks_print_text(const nx_rank_stats *s)
{
    if (s->n_ranks == 0) {
        printf("No ranks: no step or collective row has a worker_gid (one trace, or traces of no rank).\n");
        return 0;
    }
    printf("Ranks:");
    for (size_t r = 0; r < s->n_ranks; r++)
        printf(" %" PRId64, s->ranks[r]);
    putchar('\n');
    if (s->n_steps)
        print_steps(s);
    return print_stragglers(s);
}

static int ranks_print(const char *dir, bool json)
{
    nx_rank_stats s;
    nx_error err = {0};
    int rc = nx_rank_stats_read(dir, &s, &err);
    if (rc != 0) {
        fprintf(stderr, "nxprof ranks: %s\n", rc > 0 ? "the profile has no SystemProfileEvents table" : err.msg);
        return NX_EXIT_ERROR;
    }
    rc = NX_EXIT_OK;
    if (json) {
        nx_strbuf b = NX_STRBUF_INIT;
        nx_rank_stats_json(&s, false, &b);
        nx_strbuf_putc(&b, '\n');
        if (nx_strbuf_failed(&b))
            rc = NX_EXIT_ERROR;
        else
            fwrite(b.data, 1, b.len, stdout);
        nx_strbuf_free(&b);
    } else if (nx_ranks_print_text(&s) != 0) {
        rc = NX_EXIT_ERROR;
    }
    if (rc != NX_EXIT_OK)
        fprintf(stderr, "nxprof ranks: out of memory\n");
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof ranks: writing the output failed\n");
        rc = NX_EXIT_ERROR;
    }
    nx_rank_stats_free(&s);
    return rc;
}

int nx_ranks_summary_member(const char *dir, bool json)
{
    nx_rank_stats s;
    nx_error err = {0};
    if (nx_rank_stats_read(dir, &s, &err) < 0) {
        fprintf(stderr, "nxprof summary: %s\n", err.msg);
        return -1;
    }
    int rc = 0;
    if (s.n_ranks >= 2 && json) {
        nx_strbuf b = NX_STRBUF_INIT;
        nx_strbuf_puts(&b, ",\"rank_stats\":");
        nx_rank_stats_json(&s, false, &b);
        rc = nx_strbuf_failed(&b) ? -1 : 0;
        if (rc == 0)
            fwrite(b.data, 1, b.len, stdout);
        nx_strbuf_free(&b);
    } else if (s.n_ranks >= 2) {
        putchar('\n');
        rc = nx_ranks_print_text(&s);
    }
    if (rc != 0)
        fprintf(stderr, "nxprof summary: out of memory\n");
    nx_rank_stats_free(&s);
    return rc;
}

/* Parses [--format text|json] PROFILE_DIR for `cmd` (ranks, insights). */
int nx_parse_profile_format(const char *cmd, int argc, char **argv, void (*help)(FILE *), bool *json,
                            const char **dir)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *json = false;
    int c;
    while ((c = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
        if (c == 'h') {
            help(stdout);
            return -1;
        }
        if (c != 'f')
            return nx_getopt_error(cmd, c, argv);
        if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
            return nx_usage_error(cmd, "unknown format '%s' (text or json)", optarg);
        *json = strcmp(optarg, "json") == 0;
    }
    if (optind >= argc)
        return nx_usage_error(cmd, "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    if (!*argv[optind])
        return nx_usage_error(cmd, "PROFILE_DIR must not be empty");
    *dir = argv[optind];
    return 0;
}

static int ranks_run(int argc, char **argv)
{
    bool json;
    const char *dir;
    int rc = nx_parse_profile_format("ranks", argc, argv, ranks_help, &json, &dir);
    if (rc != 0)
        return rc < 0 ? NX_EXIT_OK : rc;
    return ranks_print(dir, json);
}

const nx_command nx_cmd_ranks = {
    .name = "ranks",
    .summary = "compare ranks: step durations, skew and stragglers of collectives",
    .run = ranks_run,
    .help = ranks_help,
};
