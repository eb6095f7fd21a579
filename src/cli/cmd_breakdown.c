/*
 * cmd_breakdown.c — `nxprof breakdown PROFILE_DIR [--rank N] [--step N]
 * [--top K] [--format text|json]`: where each device's time went, per rank and
 * per step (query/breakdown.h; docs/analyses.md). This file only
 * parses the options and formats the answer.
 *
 * A device profile (no SystemProfileEvents) gets query/engine_breakdown.h's answer.
 * Exit: 0, 1 when the profile has neither SystemProfileEvents nor Instruction or
 * cannot be read, 2 on a usage error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "profile/profile_table.h"
#include "query/breakdown.h"
#include "query/engine_breakdown.h"
#include "util/strbuf.h"

#define DEFAULT_TOP 10

static void breakdown_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof breakdown PROFILE_DIR [--rank N] [--step N] [--top K] [--format text|json]\n"
            "\n"
            "Where each device of a system profile spent its time, per rank over the rank's trace\n"
            "span and per step (ProfilerStep#N, or a slice with args.step_num): compute,\n"
            "communication (not under compute), memory and idle, which add up to the window;\n"
            "communication under compute and the overlap percentage; idle time by cause (host\n"
            "wait, kernel wait, other); kernel classes; launch delays (kernel start - launch) with\n"
            "median, p95, outliers, short kernels and a CPU-/GPU-bound verdict; memcpy/memset\n"
            "bytes and bandwidth; the top kernels by total time with their spread across ranks.\n"
            "On a NeuronCore's device profile: each engine's busy and idle time, compute\n"
            "(instructions) > collectives (CcOp) > DMA (DmaPacket) > idle over the profile's\n"
            "window, collectives under compute, DMA bytes and bandwidth.\n"
            "Definitions and thresholds: docs/analyses.md. Times are integer ns.\n"
            "\n"
            "Options:\n"
            "  --rank N           only the rows of rank N (worker_gid)\n"
            "  --step N           only the entries of steps numbered N (kernels stay the whole trace's)\n"
            "  --top K            kernels to list (default %d)\n"
            "  -f, --format FMT   text (default) or json\n"
            "  -h, --help         this text\n"
            "\n"
            "Exit status: 0 success, 1 no SystemProfileEvents nor Instruction, or an unreadable profile,\n"
            "2 usage error.\n",
            DEFAULT_TOP);
}

static double pct(int64_t part, int64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

static void print_entry(const nx_bd_entry *e)
{
    printf("%s", e->device);
    if (e->rank >= 0)
        printf(", rank %" PRId64, e->rank);
    if (e->step_name)
        printf(", step %" PRId64 " (%s)", e->step, e->step_name);
    else
        printf(", whole trace");
    const nx_bd_temporal *t = &e->t;
    printf(" [%" PRId64 ", %" PRId64 ") window %" PRId64 " ns\n", e->start_ns, e->end_ns, t->window_ns);
    printf("  time:      compute %" PRId64 " ns (%.1f%%), communication %" PRId64 " ns (%.1f%%), memory %" PRId64
           " ns (%.1f%%), idle %" PRId64 " ns (%.1f%%)\n",
           t->compute_ns, pct(t->compute_ns, t->window_ns), t->communication_ns, pct(t->communication_ns, t->window_ns),
           t->memory_ns, pct(t->memory_ns, t->window_ns), t->idle_ns, pct(t->idle_ns, t->window_ns));
    printf("  overlap:   communication under compute %" PRId64 " ns", t->overlapped_comm_ns);
    if (t->overlap_pct >= 0)
        printf(" (%.1f%% of communication)\n", t->overlap_pct);
    else
        printf(" (no communication kernels)\n");
    const nx_bd_idle *i = &e->idle;
    printf("  idle:      host wait %" PRId64 " ns (%" PRId64 " gaps), kernel wait %" PRId64 " ns (%" PRId64
           " gaps), other %" PRId64 " ns (%" PRId64 " gaps)\n",
           i->host_wait_ns, i->host_wait_count, i->kernel_wait_ns, i->kernel_wait_count, i->other_ns, i->other_count);
    printf("  classes:  ");
    for (int c = 0; c < NX_BD_N_CLASSES; c++)
        printf("%s %s %" PRId64 " rows %" PRId64 " ns", c ? "," : "", nx_breakdown_class_name(c), e->class_count[c],
               e->class_ns[c]);
    const nx_bd_launch *l = &e->launch;
    printf("\n  launch:    %" PRId64 " kernels, %" PRId64 " linked to a launch; delay median %" PRId64 " ns, p95 %" PRId64
           " ns, max %" PRId64 " ns, %" PRId64 " outliers (> %" PRId64 " ns); %" PRId64 " short kernels; %s\n",
           l->kernels, l->linked, l->median_ns, l->p95_ns, l->max_ns, l->outliers, l->outlier_above_ns,
           l->short_kernels, l->verdict);
    for (int k = 0; k < NX_BD_N_XFER; k++) {
        const nx_bd_xfer *x = &e->xfer[k];
        if (x->count)
            printf("  transfer:  %s %" PRId64 " rows, %" PRId64 " with bytes: %" PRId64 " bytes in %" PRId64
                   " ns, %.3f GB/s\n",
                   nx_breakdown_xfer_name(k), x->count, x->with_bytes, x->bytes, x->duration_ns, x->gbps);
    }
}

static void print_text(const nx_breakdown *b)
{
    for (size_t i = 0; i < b->n_entries; i++)
        print_entry(&b->entries[i]);
    if (!b->n_kernels)
        return;
    printf("\ntop kernels by total time%s\n", b->n_ranks > 1 ? " (spread: each rank's total, min / max / mean)" : "");
    for (size_t i = 0; i < b->n_kernels; i++) {
        const nx_bd_kernel *k = &b->kernels[i];
        printf("  %" PRId64 " ns  %" PRId64 " x  mean %.0f  min %" PRId64 "  max %" PRId64, k->total_ns, k->count,
               k->mean_ns, k->min_ns, k->max_ns);
        if (b->n_ranks > 1)
            printf("  ranks %" PRId64 " / %" PRId64 " / %.0f", k->rank_min_ns, k->rank_max_ns, k->rank_mean_ns);
        printf("  %s  %s\n", nx_breakdown_class_name(k->cls), k->name);
    }
}

static void print_engines(const nx_engine_breakdown *b)
{
    printf("NeuronCore [%" PRId64 ", %" PRId64 ") window %" PRId64 " ns\n", b->start_ns, b->end_ns, b->window_ns);
    printf("  time:      compute %" PRId64 " ns (%.1f%%), collectives %" PRId64 " ns (%.1f%%), DMA %" PRId64
           " ns (%.1f%%), idle %" PRId64 " ns (%.1f%%)\n",
           b->compute_ns, pct(b->compute_ns, b->window_ns), b->communication_ns, pct(b->communication_ns, b->window_ns),
           b->memory_ns, pct(b->memory_ns, b->window_ns), b->idle_ns, pct(b->idle_ns, b->window_ns));
    printf("  overlap:   collectives under compute %" PRId64 " ns", b->overlapped_cc_ns);
    if (b->overlap_pct >= 0)
        printf(" (%.1f%% of %" PRId64 " ns in %" PRId64 " CcOp rows)\n", b->overlap_pct, b->cc_ns, b->cc_count);
    else
        printf(" (no CcOp rows)\n");
    printf("  DMA:       %" PRId64 " packets, %" PRId64 " bytes, busy %" PRId64 " ns, %.3f GB/s\n", b->dma_count,
           b->dma_bytes, b->dma_busy_ns, b->dma_gbps);
    for (size_t i = 0; i < b->n_engines; i++) {
        const nx_eb_engine *e = &b->engines[i];
        printf("  engine %-10s %" PRId64 " instructions, busy %" PRId64 " ns (%.1f%%), idle %" PRId64 " ns\n", e->name,
               e->count, e->busy_ns, pct(e->busy_ns, b->window_ns), e->idle_ns);
    }
}

static int print_json_text(nx_strbuf *s, const char *dir)
{
    if (nx_strbuf_failed(s)) {
        fprintf(stderr, "nxprof breakdown: %s: out of memory writing the JSON\n", dir);
        return NX_EXIT_ERROR;
    }
    printf("%s\n", s->data);
    return NX_EXIT_OK;
}

/* A device profile (no SystemProfileEvents): its engines, collectives and DMA. */
static int engines_print(const char *dir, bool json)
{
    nx_engine_breakdown b;
    nx_error err = {0};
    int rc = nx_engine_breakdown_read(dir, &b, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        fprintf(stderr, "nxprof breakdown: profile %s has neither SystemProfileEvents nor Instruction\n", dir);
        return NX_EXIT_ERROR;
    }
    if (rc < 0) {
        fprintf(stderr, "nxprof breakdown: %s: %s\n", dir, err.msg);
        return NX_EXIT_ERROR;
    }
    nx_strbuf s = NX_STRBUF_INIT;
    if (json)
        nx_engine_breakdown_json(&b, false, &s);
    else
        print_engines(&b);
    rc = json ? print_json_text(&s, dir) : NX_EXIT_OK;
    nx_strbuf_free(&s);
    nx_engine_breakdown_free(&b);
    return rc;
}

static int breakdown_print(const char *dir, int64_t rank, int64_t step, size_t top, bool json)
{
    nx_breakdown b;
    nx_error err = {0};
    int rc = nx_breakdown_read(dir, rank, step, top, &b, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        if (rank >= 0 || step >= 0) {
            fprintf(stderr, "nxprof breakdown: --rank and --step: %s is not a system profile\n", dir);
            return NX_EXIT_USAGE;
        }
        return engines_print(dir, json);
    }
    if (rc < 0) {
        fprintf(stderr, "nxprof breakdown: %s: %s\n", dir, err.msg);
        return NX_EXIT_ERROR;
    }
    nx_strbuf s = NX_STRBUF_INIT;
    if (json)
        nx_breakdown_json(&b, false, &s);
    else
        print_text(&b);
    rc = json ? print_json_text(&s, dir) : NX_EXIT_OK;
    nx_strbuf_free(&s);
    nx_breakdown_free(&b);
    return rc;
}

static int breakdown_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"rank", required_argument, NULL, 'r'},
        {"step", required_argument, NULL, 's'},   {"top", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    bool json = false;
    int64_t rank = -1, step = -1, top = DEFAULT_TOP;
    int c;
    while ((c = getopt_long(argc, argv, ":f:r:s:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
        case 's':
        case 't':
            if (nx_parse_rank(optarg, c == 'r' ? &rank : c == 's' ? &step : &top) != 0)
                return nx_usage_error("breakdown", "--%s '%s' is not 0 or a positive integer",
                                      c == 'r' ? "rank" : c == 's' ? "step" : "top", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
                return nx_usage_error("breakdown", "unknown format '%s' (text or json)", optarg);
            json = strcmp(optarg, "json") == 0;
            break;
        case 'h':
            breakdown_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("breakdown", c, argv);
        }
    }
    if (optind >= argc)
        return nx_usage_error("breakdown", "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error("breakdown", "unexpected argument '%s'", argv[optind + 1]);
    if (!*argv[optind])
        return nx_usage_error("breakdown", "PROFILE_DIR must not be empty");
    return breakdown_print(argv[optind], rank, step, (size_t)top, json);
}

const nx_command nx_cmd_breakdown = {
    .name = "breakdown",
    .summary = "where each device's time went, per rank and step (compute, communication, idle causes, launches)",
    .run = breakdown_run,
    .help = breakdown_help,
};
