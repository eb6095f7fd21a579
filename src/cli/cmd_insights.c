/*
 * cmd_insights.c — `nxprof insights PROFILE_DIR [--format text|json]`: the
 * ranked findings of query/insights.h. The text form is also the list at the
 * top of summary (nx_insights_print_text).
 */
#include <stdlib.h>

#include "cli/cli.h"
#include "query/insights.h"

static void insights_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof insights PROFILE_DIR [--format text|json]\n"
            "\n"
            "Run the Performance Insights rules over a profile and list what they found,\n"
            "most severe first: the rule, its threshold, what it is about and the numbers\n"
            "behind it. A system profile (framework traces) gets the GPU rules (GPU idle,\n"
            "synchronous memcpy), a device profile the NeuronCore rules (model FLOPs,\n"
            "transpose FLOPs, spill and reload, small DMA transfers, throttling, collective\n"
            "outliers) where it has the fields. docs/analyses.md documents each rule.\n"
            "\n"
            "  -f, --format F   text (default) or json\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: 0 success (with or without findings), 1 profile unreadable,\n"
            "2 usage error.\n");
}

void nx_insights_print_text(const nx_insights *s)
{
    if (s->n == 0) {
        printf("Insights: no rule fired (%s rules checked)\n", s->scope == NX_INSIGHT_SYSTEM ? "GPU" : "device");
        return;
    }
    printf("Insights (most severe first)\n");
    for (size_t i = 0; i < s->n; i++) {
        const nx_insight *x = &s->items[i];
        printf("  %zu. [%s] %s%s%s: %s\n     rule %s: %s\n", i + 1, x->severity, x->rule->title,
               x->subject[0] ? " - " : "", x->subject, x->evidence, x->rule->id, x->rule->threshold);
    }
}

int nx_insights_summary_member(const char *dir, bool json)
{
    nx_insights s;
    nx_error err = {0};
    if (nx_insights_read(dir, &s, &err) < 0) {
        fprintf(stderr, "nxprof summary: %s\n", err.msg);
        return -1;
    }
    int rc = 0;
    if (json) {
        nx_strbuf b = NX_STRBUF_INIT;
        nx_strbuf_puts(&b, ",\"insights\":");
        nx_insights_json(&s, &b);
        rc = nx_strbuf_failed(&b) ? -1 : 0;
        if (rc == 0)
            fwrite(b.data, 1, b.len, stdout);
        else
            fprintf(stderr, "nxprof summary: out of memory\n");
        nx_strbuf_free(&b);
    } else {
        nx_insights_print_text(&s);
        putchar('\n');
    }
    nx_insights_free(&s);
    return rc;
}

static int insights_run(int argc, char **argv)
{
    bool json;
    const char *dir;
    int rc = nx_parse_profile_format("insights", argc, argv, insights_help, &json, &dir);
    if (rc != 0)
        return rc < 0 ? NX_EXIT_OK : rc;
    nx_insights s;
    nx_error err = {0};
    if (nx_insights_read(dir, &s, &err) < 0) {
        fprintf(stderr, "nxprof insights: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    rc = NX_EXIT_OK;
    if (json) {
        nx_strbuf b = NX_STRBUF_INIT;
        nx_insights_json(&s, &b);
        nx_strbuf_putc(&b, '\n');
        if (nx_strbuf_failed(&b)) {
            fprintf(stderr, "nxprof insights: out of memory\n");
            rc = NX_EXIT_ERROR;
        } else {
            fwrite(b.data, 1, b.len, stdout);
        }
        nx_strbuf_free(&b);
    } else {
        nx_insights_print_text(&s);
    }
    nx_insights_free(&s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof insights: writing the output failed\n");
        rc = NX_EXIT_ERROR;
    }
    return rc;
}

const nx_command nx_cmd_insights = {
    .name = "insights",
    .summary = "list Performance Insights: the rules that fired, with their evidence",
    .run = insights_run,
    .help = insights_help,
};
