/*
 * cmd_sql.c — `nxprof sql PROFILE_OR_DATA_PATH "SELECT ..."`: one read-only query over
 * a profile's tables, or over every profile of a data path (src/sql/sql.h,
 * docs/sql.md), its answer on stdout as text, CSV or JSON.
 *
 * Exit status: 0; 1 when the path holds no profile, or the query is refused, fails or
 * runs past its time limit (the reason on stderr); 2 usage error; 3 when the answer
 * stopped at the row limit (the answer says so too).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sql/sql.h"

static void sql_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof sql PROFILE_OR_DATA_PATH \"SELECT ...\" [--format text|csv|json]\n"
            "                  [--profile NAME] [--timeout S] [--max-rows N]\n"
            "\n"
            "Answer one read-only SQL query (DuckDB's dialect) over a profile's tables. Every\n"
            "table of a profile directory is a relation under its own name (a split table's\n"
            "files as one). Given a data path (the folder holding profiles/global), each\n"
            "profile is a schema named after its display name (\"NAME\".\"Instruction\") and each\n"
            "unqualified table is that table of every profile, with a profile_name column.\n"
            "Only a single SELECT (WITH, VALUES, DESCRIBE, SUMMARIZE, EXPLAIN of a SELECT) is\n"
            "answered; anything that writes, attaches, loads, sets or reads other files is\n"
            "refused. See docs/sql.md.\n"
            "\n"
            "  -f, --format F     text (default: an aligned table), csv (RFC 4180 with a header)\n"
            "                     or json ({\"columns\",\"types\",\"rows\",\"row_count\",\"truncated\",\n"
            "                     \"row_limit\"})\n"
            "  -p, --profile NAME the profile NAME of the data path alone (its tables unqualified,\n"
            "                     without profile_name)\n"
            "  -t, --timeout S    stop the query after S seconds (default 30)\n"
            "  -m, --max-rows N   answer at most N rows (default 100000)\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 success, 1 no profile there or the query refused, failed or timed\n"
            "out, 2 usage error, 3 the answer stopped at --max-rows.\n");
}

static int parse_positive(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

static int sql_print(const char *path, const char *profile, const char *query, const nx_sql_limits *lim,
                     nx_sql_format format)
{
    nx_error err = {0};
    nx_sql *db = nx_sql_open(path, profile, &err);
    if (!db) {
        fprintf(stderr, "nxprof sql: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    nx_strbuf out = NX_STRBUF_INIT;
    nx_sql_answer_info info;
    nx_sql_status st = nx_sql_run_info(db, query, lim, format, &out, &info, &err);
    nx_sql_close(db);
    if (st != NX_SQL_OK) {
        fprintf(stderr, "nxprof sql: %s\n", err.msg);
        nx_strbuf_free(&out);
        return NX_EXIT_ERROR;
    }
    fwrite(out.data, 1, out.len, stdout);
    nx_strbuf_free(&out);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof sql: writing the output failed\n");
        return NX_EXIT_ERROR;
    }
    if (info.truncated) {
        fprintf(stderr, "nxprof sql: the answer stopped at the row limit of %llu rows\n",
                (unsigned long long)lim->max_rows);
        return NX_EXIT_TRUNCATED;
    }
    return NX_EXIT_OK;
}

static int sql_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},  {"profile", required_argument, NULL, 'p'},
        {"timeout", required_argument, NULL, 't'}, {"max-rows", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    nx_sql_format format = NX_SQL_TEXT;
    nx_sql_limits lim = {NX_SQL_DEFAULT_TIMEOUT_S, NX_SQL_DEFAULT_MAX_ROWS};
    const char *profile = NULL;
    double v;
    int c;
    while ((c = getopt_long(argc, argv, ":f:p:t:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") == 0)
                format = NX_SQL_TEXT;
            else if (strcmp(optarg, "csv") == 0)
                format = NX_SQL_CSV;
            else if (strcmp(optarg, "json") == 0)
                format = NX_SQL_JSON;
            else
                return nx_usage_error("sql", "unknown format '%s' (text, csv or json)", optarg);
            break;
        case 'p':
            if (!*optarg)
                return nx_usage_error("sql", "--profile must not be empty");
            profile = optarg;
            break;
        case 't':
            if (parse_positive(optarg, &v) != 0)
                return nx_usage_error("sql", "--timeout '%s' is not a positive number of seconds", optarg);
            lim.timeout_s = v;
            break;
        case 'm': {
            int64_t n;
            if (nx_parse_rank(optarg, &n) != 0 || n == 0)
                return nx_usage_error("sql", "--max-rows '%s' is not a positive integer", optarg);
            lim.max_rows = (uint64_t)n;
            break;
        }
        case 'h':
            sql_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("sql", c, argv);
        }
    }
    if (optind + 2 > argc)
        return nx_usage_error("sql", optind >= argc ? "PROFILE_OR_DATA_PATH and the query are required"
                                                    : "the query is required");
    if (optind + 2 < argc)
        return nx_usage_error("sql", "unexpected argument '%s' (quote the query as one argument)", argv[optind + 2]);
    if (!*argv[optind])
        return nx_usage_error("sql", "PROFILE_OR_DATA_PATH must not be empty");
    return sql_print(argv[optind], profile, argv[optind + 1], &lim, format);
}

const nx_command nx_cmd_sql = {
    .name = "sql",
    .summary = "answer a read-only SQL query over a profile or a data path's profiles",
    .run = sql_run,
    .help = sql_help,
};
