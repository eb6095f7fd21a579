/*
 * cmd_export_perfetto.c — `nxprof export-perfetto PROFILE_DIR --out FILE.pftrace
 * [--start T] [--end T] [--tables LIST]`: a device or system profile as one
 * Perfetto protobuf trace (query/perfetto_rows.c; docs/query.md
 * "export-perfetto"), every event of the window, never sampled or truncated.
 * The window and tables are an export request (query/export_request.h), as
 * for export-csv: T in ns or with a unit, +T from the profile's start; without
 * --start/--end the whole profile; without --tables every timeline table.
 * The file is written aside and renamed into place when complete.
 * Exit: 0; 1 missing/unreadable profile or output error; 2 usage.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "query/export_request.h"

#define CMD "export-perfetto"

static void help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof export-perfetto PROFILE_DIR --out FILE.pftrace [--start T] [--end T]\n"
            "                              [--tables T1,T2,...]\n"
            "\n"
            "Write a profile (device or system) as a Perfetto protobuf trace, which ui.perfetto.dev\n"
            "opens: a track per engine, queue, NeuronCore, process and thread named as in the\n"
            "viewer, a slice per event with its fields as args, flows, and counter tracks for the\n"
            "usage and memory lanes. Every event of the window is written (no sampling).\n"
            "\n"
            "  -o, --out FILE       the trace file to write\n"
            "  -s, --start T        window start: Unix ns, or a number with unit ns, us, ms or s;\n"
            "                       +T counts from the profile's first timestamp (default: the start)\n"
            "  -e, --end T          window end (inclusive), same forms (default: the end)\n"
            "  -t, --tables LIST    timeline tables to write (default: all seven)\n"
            "  -h, --help           show this help\n"
            "\n"
            "Exit status: 0 success, 1 profile missing or unreadable or output error, 2 usage error.\n");
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},    {"start", required_argument, NULL, 's'},
        {"end", required_argument, NULL, 'e'},    {"tables", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    nx_export_request q;
    nx_export_request_init(&q, &nx_export_cli_names);
    nx_export_request_set_ns(&q, false, INT64_MIN);
    nx_export_request_set_ns(&q, true, INT64_MAX);
    nx_export_request_set_no_sample(&q);
    const char *out = NULL;
    char msg[NX_EXPORT_MSG];
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:s:e:t:h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'o': out = optarg; break;
        case 's': bad = nx_export_request_set_time(&q, false, optarg, msg); break;
        case 'e': bad = nx_export_request_set_time(&q, true, optarg, msg); break;
        case 't': bad = nx_export_request_set_tables(&q, optarg, msg); break;
        case 'h': help(stdout); return NX_EXIT_OK;
        default: return nx_getopt_error(CMD, c, argv);
        }
        if (bad)
            return nx_usage_error(CMD, "%s", msg);
    }
    if (optind >= argc)
        return nx_usage_error(CMD, "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error(CMD, "unexpected argument '%s'", argv[optind + 1]);
    if (!out)
        return nx_usage_error(CMD, "--out is required");
    if (nx_export_request_check(&q, msg) < 0)
        return nx_usage_error(CMD, "%s", msg);
    const char *dir = argv[optind];
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "nxprof " CMD ": %s: no such profile directory\n", dir);
        return NX_EXIT_ERROR;
    }
    int r = nx_export_request_resolve(&q, dir, msg);
    if (r == -2)
        return nx_usage_error(CMD, "%s", msg);
    if (r < 0) {
        fprintf(stderr, "nxprof " CMD ": %s\n", msg);
        return NX_EXIT_ERROR;
    }
    return nx_perfetto_write(CMD, dir, out, q.start, q.end, q.named ? q.tables : NULL, q.named ? q.n_tables : 0);
}

const nx_command nx_cmd_export_perfetto = {
    .name = "export-perfetto",
    .summary = "export a profile as a Perfetto protobuf trace (ui.perfetto.dev)",
    .run = run,
    .help = help,
};
