/* cmd_schema.c — `nxprof schema`: print the profile schema catalogue as YAML or JSON. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "schema/schema_emit.h"

static void schema_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof schema [--format yaml|json]\n"
            "\n"
            "Print every table and field of the profile schema nxprof writes.\n"
            "\n"
            "  -f, --format yaml   an OpenAPI 3 document, one components.schemas entry per table (default)\n"
            "  -f, --format json   {\"version\", \"tables\": [{\"name\", \"kind\", \"transient\", \"description\",\n"
            "                      \"fields\": [...]}]}\n"
            "  -h, --help          show this help\n");
}

/* Prints the schema document in `format` ("yaml" or "json") to stdout. */
int nx_schema_print(const char *format)
{
    char *doc = strcmp(format, "json") == 0 ? nx_schema_to_json() : nx_schema_to_yaml();
    if (!doc) {
        fprintf(stderr, "nxprof schema: out of memory while rendering the schema\n");
        return NX_EXIT_ERROR;
    }
    int rc = fputs(doc, stdout) < 0 || fflush(stdout) != 0 ? NX_EXIT_ERROR : NX_EXIT_OK;
    if (rc != NX_EXIT_OK)
        perror("nxprof schema: writing to standard output");
    free(doc);
    return rc;
}

static int schema_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = "yaml";
    int c;
    while ((c = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'h':
            schema_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("schema", c, argv);
        }
    }
    if (optind < argc)
        return nx_usage_error("schema", "unexpected argument '%s'", argv[optind]);
    if (strcmp(format, "yaml") != 0 && strcmp(format, "json") != 0)
        return nx_usage_error("schema", "unknown format '%s' (expected yaml or json)", format);
    return nx_schema_print(format);
}

const nx_command nx_cmd_schema = {
    .name = "schema",
    .summary = "print the profile schema (OpenAPI YAML or JSON)",
    .run = schema_run,
    .help = schema_help,
};
