/*
 * cmd_index.c — `nxprof index PROFILE_DIR [--tables T1,T2,...]`: builds the
 * timeline index of a profile's timeline tables from their Parquet files, so a
 * profile `nxprof process` did not write (the reference tool's, one rewritten by
 * another tool, or one processed before nxprof wrote indexes) gets the fast
 * sampled queries and viewer of docs/query.md "The timeline index".
 *
 * Rules:
 *   - --tables: comma-separated timeline tables (Instruction, DmaPacketAggregated,
 *     DmaPacket, CcInstruction, SemaphoreUpdate, CcOp, SystemProfileEvents; default
 *     all); an unknown or repeated name is a usage error. Tables the profile lacks
 *     are skipped. SystemProfileEvents' index also holds each event's depth and
 *     self time (profile/nesting.h), so rebuilding it replaces an index of an older
 *     version that lacked them.
 *   - Each index is written under a temporary name and renamed over the old one,
 *     so an interrupted run leaves the previous index (or none); the Parquet files
 *     are only read.
 *   - A table whose rows are not in start order per track, or with an event that
 *     ends before it starts, gets no index (the report says so) and is scanned.
 *   - One line per table on stdout: table, rows, and "indexed" or why not.
 * Exit: 0; 1 a missing profile or an unreadable table; 2 usage.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "profile/timeline_index_writer.h"
#include "profile/profile_table.h"
#include "profile/timeline_index.h"
#include "profile/timeline_rules.h"

static void index_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof index PROFILE_DIR [--tables T1,T2,...]\n"
            "\n"
            "Build the timeline index (docs/query.md) of a profile's timeline tables from their\n"
            "Parquet files, for profiles written by other tools or by an older nxprof: sampled\n"
            "queries, the viewer and sampled exports then read the index instead of scanning.\n"
            "`nxprof process` writes the indexes itself.\n"
            "\n"
            "  -t, --tables T   comma-separated timeline tables (default: all the profile has)\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: 0 success, 1 missing profile or unreadable table, 2 usage error.\n");
}

/* Marks the timeline tables named in list; usage error text in *bad. */
static int parse_tables(const char *list, bool *want, char *bad, size_t bad_len)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        size_t i = 0;
        for (; i < nx_timeline_count(); i++) {
            const char *t = nx_timeline_at(i)->table;
            if (strlen(t) == n && strncmp(t, p, n) == 0)
                break;
        }
        if (i == nx_timeline_count() || want[i]) {
            snprintf(bad, bad_len, "%s timeline table '%.*s' in --tables", i == nx_timeline_count() ? "unknown" : "repeated",
                     (int)n, p);
            return -1;
        }
        want[i] = true;
        p += n + (e != NULL);
    }
    return 0;
}

static int index_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tables", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool want[16] = {false}, any = false;
    char bad[256];
    int c;
    while ((c = getopt_long(argc, argv, ":t:h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!*optarg || parse_tables(optarg, want, bad, sizeof bad) != 0)
                return nx_usage_error("index", "%s", *optarg ? bad : "--tables must not be empty");
            any = true;
            break;
        case 'h':
            index_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("index", c, argv);
        }
    }
    if (optind >= argc)
        return nx_usage_error("index", "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error("index", "unexpected argument '%s'", argv[optind + 1]);
    const char *dir = argv[optind];
    struct stat st;
    if (!*dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "nxprof index: %s: not a profile directory\n", dir);
        return NX_EXIT_ERROR;
    }
    int status = NX_EXIT_OK;
    for (size_t i = 0; i < nx_timeline_count(); i++) {
        if (any && !want[i])
            continue;
        const char *table = nx_timeline_at(i)->table;
        uint64_t rows = 0;
        nx_error err = {0};
        int rc = nx_tlx_build(dir, table, &rows, &err);
        if (rc == NX_PROFILE_TABLE_ABSENT)
            continue;
        if (rc != 0) {
            fprintf(stderr, "nxprof index: %s\n", err.msg);
            status = NX_EXIT_ERROR;
            continue;
        }
        nx_tlx *x;
        nx_error why = {0};
        int orc = nx_tlx_open(dir, table, &x, &why);
        if (orc == 0)
            nx_tlx_close(x);
        if (orc == 0)
            printf("%-20s %12" PRIu64 " rows  indexed\n", table, rows);
        else
            printf("%-20s %12" PRIu64 " rows  not indexed (%s)\n", table, rows,
                   rows ? "rows out of start order per track, or an event ends before it starts"
                        : "an empty table: nothing to index");
    }
    return status;
}

const nx_command nx_cmd_index = {
    .name = "index",
    .summary = "build the timeline index of a profile written by another tool",
    .run = index_run,
    .help = index_help,
};
