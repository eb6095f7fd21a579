/*
 * cmd_analysis.c — `nxprof <analysis> PROFILE_DIR [--<param> V]...
 * [--format text|json]` for every analysis of the registry
 * (query/analysis.h): the options come from the analysis's declared
 * parameters, the help from its descriptor, the answer from its query module;
 * this file only parses, runs and prints, the same way for each.
 *
 * Exit: 0; 1 when the profile cannot be read or lacks what the analysis reads
 * (NX_ANALYSIS_ERROR, NX_ANALYSIS_NOT_APPLICABLE); 2 on a usage error, a bad
 * parameter included (NX_ANALYSIS_BAD_PARAM, with the usage hint).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* getopt_long's value for declared parameter i: past every character. */
#define PARAM_OPT 256

/* The column the options' help starts at. */
#define HELP_COL 21

/* One option line: "  <spec>" padded to HELP_COL, then its help. */
static void option_line(FILE *out, int spec_width, const char *help)
{
    fprintf(out, "%*s%s", spec_width < HELP_COL ? HELP_COL - spec_width : 1, "", help);
}

void nx_analysis_cmd_help(const nx_analysis *a, FILE *out)
{
    fprintf(out, "Usage: nxprof %s PROFILE_DIR", a->name);
    for (size_t i = 0; i < a->n_params; i++)
        fprintf(out, " [--%s %s]", a->params[i].name, a->params[i].arg);
    fprintf(out, " [--format text|json]\n\n%s\nOptions:\n", a->help);
    for (size_t i = 0; i < a->n_params; i++) {
        const nx_analysis_param *p = &a->params[i];
        option_line(out, fprintf(out, "  --%s %s", p->name, p->arg), p->help);
        /* What the declaration allows, where it is not plain "0 or more, absent: none". */
        bool ranged = p->min != 0 || p->max != INT64_MAX, dflt = p->absent >= p->min && p->absent <= p->max;
        if (ranged && dflt)
            fprintf(out, " (%" PRId64 "..%" PRId64 ", default %" PRId64 ")", p->min, p->max, p->absent);
        else if (ranged)
            fprintf(out, " (%" PRId64 "..%" PRId64 ")", p->min, p->max);
        else if (dflt)
            fprintf(out, " (default %" PRId64 ")", p->absent);
        fputc('\n', out);
    }
    option_line(out, fprintf(out, "  -f, --format F"), "text (default) or json\n");
    option_line(out, fprintf(out, "  -h, --help"), "show this help\n");
    fprintf(out, "\n"
                 "Exit status: 0 success, 1 the profile cannot be read or lacks what %s reads,\n"
                 "2 usage error (an unknown option, a bad parameter).\n",
            a->name);
}

/* Parses argv into *call (PROFILE_DIR as its dir and name): 0; -1 after
 * printing --help; or NX_EXIT_USAGE after the usage error. */
static int parse(const nx_analysis *a, int argc, char **argv, nx_analysis_call *call)
{
    struct option opts[NX_ANALYSIS_MAX_PARAMS + 3] = {
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
    };
    for (size_t i = 0; i < a->n_params; i++)
        opts[2 + i] = (struct option){a->params[i].name, required_argument, NULL, PARAM_OPT + (int)i};
    int c;
    while ((c = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
        if (c == 'h') {
            nx_analysis_cmd_help(a, stdout);
            return -1;
        }
        if (c == 'f') {
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
                return nx_usage_error(a->name, "unknown format '%s' (text or json)", optarg);
            call->format = strcmp(optarg, "json") == 0 ? NX_ANALYSIS_JSON : NX_ANALYSIS_TEXT;
            continue;
        }
        if (c < PARAM_OPT || (size_t)(c - PARAM_OPT) >= a->n_params)
            return nx_getopt_error(a->name, c, argv);
        size_t i = (size_t)(c - PARAM_OPT);
        nx_error err = {0};
        if (nx_analysis_param_parse(&a->params[i], optarg, &call->args[i], &err) != NX_ANALYSIS_OK)
            return nx_usage_error(a->name, "--%s", err.msg);
    }
    if (optind >= argc)
        return nx_usage_error(a->name, "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error(a->name, "unexpected argument '%s'", argv[optind + 1]);
    if (!*argv[optind])
        return nx_usage_error(a->name, "PROFILE_DIR must not be empty");
    call->dir = call->name = argv[optind];
    return 0;
}

int nx_analysis_cmd_run(const nx_analysis *a, int argc, char **argv)
{
    nx_analysis_call call = nx_analysis_call_new(a, NX_ANALYSIS_TEXT, false);
    int rc = parse(a, argc, argv, &call);
    if (rc != 0)
        return rc < 0 ? NX_EXIT_OK : rc;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_error err = {0};
    rc = nx_analysis_run(a, &call, &b, &err);
    if (rc == NX_ANALYSIS_OK) {
        if (b.len)                   /* an empty answer has no buffer: fwrite takes no NULL */
            fwrite(b.data, 1, b.len, stdout);
        if (call.format == NX_ANALYSIS_JSON)
            putchar('\n');
    }
    nx_strbuf_free(&b);
    if (rc == NX_ANALYSIS_BAD_PARAM)
        return nx_usage_error(a->name, "%s", err.msg);
    if (rc != NX_ANALYSIS_OK) {
        fprintf(stderr, "nxprof %s: %s\n", a->name, err.msg);
        return NX_EXIT_ERROR;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof %s: writing the output failed\n", a->name);
        return NX_EXIT_ERROR;
    }
    return NX_EXIT_OK;
}
