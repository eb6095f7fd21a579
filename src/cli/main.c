/*
 * main.c — the `nxprof` entry point: global options and command dispatch.
 *
 * nxprof [--help | --version] <command> [options]   |   nxprof help [command]
 * Commands are listed in COMMANDS below, each defined in its own file, and
 * the analyses of query/analysis.h's registry follow them, each run by
 * cmd_analysis.c.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "nxprof_version.h"
#include "schema/schema.h"

/* In name order, as the registry is: main_help merges the two by name. */
static const nx_command *const COMMANDS[] = {
    &nx_cmd_annotations,
    &nx_cmd_diff,
    &nx_cmd_export_csv,
    &nx_cmd_export_perfetto,
    &nx_cmd_index,
    &nx_cmd_process,
    &nx_cmd_schema,
    &nx_cmd_serve,
    &nx_cmd_sql,
    &nx_cmd_summary,
    &nx_cmd_synth,
    &nx_cmd_top,
    &nx_cmd_view,
};
#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

int nx_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, cmd ? "nxprof %s: " : "nxprof: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'nxprof %s --help'.\n", cmd);
    else
        fprintf(stderr, "\nTry 'nxprof --help'.\n");
    return NX_EXIT_USAGE;
}

int nx_parse_rank(const char *s, int64_t *out)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 18 || s[n] != '\0')
        return -1;
    *out = (int64_t)strtoll(s, NULL, 10);
    return 0;
}

int nx_getopt_error(const char *cmd, int c, char **argv)
{
    const char *opt = argv[optind - 1];
    if (c == ':')
        return nx_usage_error(cmd, "option '%s' needs an argument", opt);
    if (optopt && strncmp(opt, "--", 2) != 0)
        return nx_usage_error(cmd, "unknown option '-%c'", optopt);
    return nx_usage_error(cmd, "unknown option '%s'", opt);
}

/* The command called name: one of COMMANDS (*cmd), else an analysis of the
 * registry (*a); false when neither. */
static bool find_command(const char *name, const nx_command **cmd, const nx_analysis **a)
{
    *cmd = NULL;
    *a = NULL;
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(COMMANDS[i]->name, name) == 0)
            return *cmd = COMMANDS[i], true;
    return (*a = nx_analysis_find(name)) != NULL;
}

static void main_help(FILE *out)
{
    fprintf(out,
            "nxprof %s: process NeuronCore profile captures into Parquet, explore and export them.\n"
            "\n"
            "Usage: nxprof [--help | --version] <command> [options]\n"
            "\n"
            "Commands:\n",
            NXPROF_VERSION);
    /* Both lists are in name order: merged, the commands and the analyses read
     * as one list. */
    size_t i = 0, j = 0, n_analyses = nx_analysis_count();
    while (i < N_COMMANDS || j < n_analyses) {
        const nx_analysis *a = j < n_analyses ? nx_analysis_at(j) : NULL;
        if (i < N_COMMANDS && (!a || strcmp(COMMANDS[i]->name, a->name) < 0)) {
            fprintf(out, "  %-15s %s\n", COMMANDS[i]->name, COMMANDS[i]->summary);
            i++;
        } else {
            fprintf(out, "  %-15s %s\n", a->name, a->summary);
            j++;
        }
    }
    fprintf(out,
            "\n"
            "Run 'nxprof <command> --help' (or 'nxprof help <command>') for a command's options.\n"
            "Exit status: 0 success, 1 runtime or input error, 2 usage error, 3 output truncated\n"
            "(export-csv --max-rows).\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    int c;
    /* '+' stops at the first non-option: the command name. */
    while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            main_help(stdout);
            return NX_EXIT_OK;
        case 'V':
            printf("nxprof %s (profile schema %s)\n", NXPROF_VERSION, NX_SCHEMA_VERSION);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error(NULL, c, argv);
        }
    }
    if (optind >= argc) {
        main_help(stderr);
        return NX_EXIT_USAGE;
    }
    const char *name = argv[optind];
    if (strcmp(name, "help") == 0) {
        if (optind + 1 >= argc) {
            main_help(stdout);
            return NX_EXIT_OK;
        }
        const nx_command *cmd;
        const nx_analysis *a;
        if (!find_command(argv[optind + 1], &cmd, &a))
            return nx_usage_error(NULL, "unknown command '%s'", argv[optind + 1]);
        if (cmd)
            cmd->help(stdout);
        else
            nx_analysis_cmd_help(a, stdout);
        return NX_EXIT_OK;
    }
    const nx_command *cmd;
    const nx_analysis *a;
    if (!find_command(name, &cmd, &a))
        return nx_usage_error(NULL, "unknown command '%s'", name);
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    optind = 0; /* 0 also resets getopt's internal state (glibc) */
    return cmd ? cmd->run(sub_argc, sub_argv) : nx_analysis_cmd_run(a, sub_argc, sub_argv);
}
