/* cmd_process.c — `nxprof process`: turn a capture into a Parquet profile (src/process/processor.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "process/processor.h"
#include "process/profile_output.h"
#include "process/table_writer.h"

static void process_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof process CAPTURE_DIR (--data-path P [--display-name N] | --output-file DIR)\n"
            "                      [--max-rows-per-file N]\n"
            "\n"
            "Read a capture (program files and device traces, docs/capture-format.md) and write\n"
            "its profile as Parquet tables: Instruction, NeffHeader, DmaQueuesInfo, Metadata and\n"
            "SchemaFields. The profile is built aside and published atomically; a failed run\n"
            "leaves any previous profile untouched.\n"
            "\n"
            "  -d, --data-path P        write to P/profiles/global/N@latest/\n"
            "  -n, --display-name N     profile name (default: the capture directory's name)\n"
            "  -o, --output-file DIR    write the profile to DIR instead\n"
            "      --max-rows-per-file N  split a table into T_0.parquet, T_1.parquet, ... above\n"
            "                           N rows per file (default %u)\n"
            "  -h, --help               show this help\n"
            "\n"
            "Exit status: 0 success, 1 capture or output error, 2 usage error.\n",
            NX_TABLE_MAX_ROWS_DEFAULT);
}

/* The last path component of `dir`, trailing slashes ignored, malloc'd; NULL when none. */
static char *base_name(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    if (start == len)
        return NULL;
    char *s = malloc(len - start + 1);
    if (!s)
        return NULL;
    memcpy(s, dir + start, len - start);
    s[len - start] = '\0';
    return s;
}

static int process_run(int argc, char **argv)
{
    enum { OPT_MAX_ROWS = 1000 };
    static const struct option opts[] = {
        {"data-path", required_argument, NULL, 'd'},
        {"display-name", required_argument, NULL, 'n'},
        {"output-file", required_argument, NULL, 'o'},
        {"max-rows-per-file", required_argument, NULL, OPT_MAX_ROWS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    nx_process_options o = {0};
    int c;
    while ((c = getopt_long(argc, argv, ":d:n:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            o.data_path = optarg;
            break;
        case 'n':
            o.display_name = optarg;
            break;
        case 'o':
            o.output_file = optarg;
            break;
        case OPT_MAX_ROWS: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *optarg == '-' || *optarg == '+' || *end || errno || v == 0)
                return nx_usage_error("process", "--max-rows-per-file needs a positive integer, got '%s'", optarg);
            o.max_rows_per_file = v;
            break;
        }
        case 'h':
            process_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("process", c, argv);
        }
    }
    if (optind >= argc)
        return nx_usage_error("process", "CAPTURE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error("process", "unexpected argument '%s'", argv[optind + 1]);
    o.capture_dir = argv[optind];
    if (!*o.capture_dir)
        return nx_usage_error("process", "CAPTURE_DIR must not be empty");
    if (o.output_file && (o.data_path || o.display_name))
        return nx_usage_error("process", "--output-file cannot be combined with --data-path or --display-name");
    if (!o.output_file && !o.data_path)
        return nx_usage_error("process", "one of --data-path P or --output-file DIR is required");
    if (o.output_file && !*o.output_file)
        return nx_usage_error("process", "--output-file needs a directory");
    char *name = NULL;
    if (!o.output_file && !o.display_name) {
        name = base_name(o.capture_dir);
        if (!name)
            return nx_usage_error("process", "no display name in '%s'; give --display-name", o.capture_dir);
        o.display_name = name;
    }
    nxpq_error nerr;
    if (o.display_name && nx_display_name_validate(o.display_name, &nerr) != 0) {
        int urc = nx_usage_error("process", "bad display name '%s': %s", o.display_name, nerr.msg);
        free(name);
        return urc;
    }
    nx_process_stats st;
    char err[1024];
    int rc = nx_process_run(&o, &st, err, sizeof err);
    free(name);
    if (rc != 0) {
        fprintf(stderr, "nxprof process: %s\n", err);
        return NX_EXIT_ERROR;
    }
    printf("process: wrote %s\n", st.profile_dir);
    printf("  %zu program(s), %zu device trace(s), %" PRIu64 " instructions, %u tables\n", st.programs, st.traces,
           st.instructions, st.tables);
    nx_process_stats_free(&st);
    return fflush(stdout) == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
}

const nx_command nx_cmd_process = {
    .name = "process",
    .summary = "process a capture into a profile directory of Parquet tables",
    .run = process_run,
    .help = process_help,
};
