/*
 * cmd_view.c — `nxprof view`: the reference tool's entry point, kept under its
 * flag names so its users' muscle memory works. Today it offers
 * --show-profile-schema (an alias of `nxprof schema --format yaml`).
 */
#include <getopt.h>

#include "cli/cli.h"

static void view_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof view --show-profile-schema\n"
            "\n"
            "Reference-compatible entry point.\n"
            "\n"
            "  --show-profile-schema   print the profile schema as OpenAPI YAML (same as 'nxprof schema')\n"
            "  -h, --help              show this help\n");
}

static int view_run(int argc, char **argv)
{
    enum { OPT_SHOW_SCHEMA = 1000 };
    static const struct option opts[] = {
        {"show-profile-schema", no_argument, NULL, OPT_SHOW_SCHEMA},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int show_schema = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_SHOW_SCHEMA:
            show_schema = 1;
            break;
        case 'h':
            view_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("view", c, argv);
        }
    }
    if (optind < argc)
        return nx_usage_error("view", "unexpected argument '%s'", argv[optind]);
    if (!show_schema)
        return nx_usage_error("view", "nothing to do: give --show-profile-schema");
    return nx_schema_print("yaml");
}

const nx_command nx_cmd_view = {
    .name = "view",
    .summary = "reference-compatible entry point (--show-profile-schema)",
    .run = view_run,
    .help = view_help,
};
