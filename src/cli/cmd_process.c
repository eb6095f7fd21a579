/*
 * cmd_process.c — `nxprof process`: turn a capture into a Parquet profile
 * (src/process/processor.h). Option parsing and validation are shared with
 * `nxprof view --ingest-only` through process_cli.h; this file only maps the
 * short letters (-d data path, -n display name, -o output directory).
 */
#include <getopt.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/process_cli.h"

static void process_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof process CAPTURE (--data-path P [--display-name N] | --output-file DIR)\n"
            "                      [--max-rows-per-file N] [--ignore-device-profile]\n"
            "                      [--ignore-system-profile] [--jobs N]\n"
            "\n"
            "Read a capture (a directory of program files, device traces and framework traces,\n"
            "docs/capture-format.md; or one framework trace file) and write\n"
            "its profile as Parquet tables. The profile is built aside and published atomically;\n"
            "a failed run leaves any previous profile untouched.\n"
            "\n"
            "  -d                         same as --data-path\n"
            "  -n                         same as --display-name\n"
            "  -o                         same as --output-file\n");
    nx_process_cli_help(out);
    fprintf(out,
            "  -h, --help                 show this help\n"
            "\n"
            "Exit status: 0 success, 1 capture or output error, 2 usage error.\n");
}

static int process_run(int argc, char **argv)
{
    static const struct option opts[] = {
        NX_PROCESS_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    nx_process_options o = {0};
    int c;
    while ((c = getopt_long(argc, argv, ":d:n:o:h", opts, NULL)) != -1) {
        int id = c == 'd' ? NX_PO_DATA_PATH : c == 'n' ? NX_PO_DISPLAY_NAME : c == 'o' ? NX_PO_OUTPUT_FILE : c;
        if (c == 'h') {
            process_help(stdout);
            return NX_EXIT_OK;
        }
        int rc = nx_process_cli_option("process", id, optarg, &o);
        if (rc < 0)
            return nx_getopt_error("process", c, argv);
        if (rc != 0)
            return rc;
    }
    if (optind >= argc)
        return nx_usage_error("process", "CAPTURE is required (a capture directory or a trace file)");
    if (optind + 1 < argc)
        return nx_usage_error("process", "unexpected argument '%s'", argv[optind + 1]);
    o.capture_dir = argv[optind];
    char *owned = NULL;
    int rc = nx_process_cli_validate("process", &o, false, &owned);
    if (rc == 0)
        rc = nx_process_cli_execute("process", &o, stdout, NULL);
    free(owned);
    return rc;
}

const nx_command nx_cmd_process = {
    .name = "process",
    .summary = "process a capture into a profile directory of Parquet tables",
    .run = process_run,
    .help = process_help,
};
