/*
 * cmd_export_csv.c — `nxprof export-csv PROFILE_DIR --start T --end T --out DIR`:
 * a time window of the timeline tables to CSV, sampled at a pixel width (the
 * viewer's function, src/query/engine/window.h) or complete. Full rules: docs/query.md.
 *
 * Rules:
 *   - T is a whole number of nanoseconds, or a decimal number with a unit suffix
 *     ns, us, ms or s ("1500", "1.5us", "2ms", "0.25s"); the result must be a
 *     whole number of ns within int64 (else usage error). The window [start, end]
 *     is inclusive; end < start is a usage error.
 *   - --tables: comma-separated, from Instruction, DmaPacketAggregated, DmaPacket,
 *     CcInstruction, SemaphoreUpdate, SystemProfileEvents (the default, all six)
 *     and CcOp; another name or a repeated one is a usage error. A table the
 *     profile lacks gets no file: named in --tables, with a note on stderr; a
 *     default one quietly (a device profile has no SystemProfileEvents, a system
 *     profile none of the other five).
 *   - Output: DIR (created with its parents when missing) receives <Table>.csv per
 *     exported table: a header row "timeline_track,<every schema field of the
 *     table in schema order>", then the rows in the window in start-time (file)
 *     order. Each file is written to a hidden temporary beside it
 *     (".<Table>.csv.tmp-*") and renamed into place when complete: a failed
 *     export (a full disk) leaves no partial CSV, and a previous <Table>.csv
 *     stays as it was. A schema field missing from the table's files (another writer may
 *     omit optional columns), or stored in a type the reader cannot decode, is
 *     written as an empty (null) column. Values: src/query/engine/csv.h.
 *   - Sampling (default --width 1920, at most 1048576): per (track, bucket) one
 *     row, window.h; --no-sample exports every row. Giving both is a usage error.
 *   - --format json writes <Table>.json instead (query/engine/json_rows.c).
 *   The options are one export request (src/query/export_request.h), the
 *   server's too: defaults, limits, default tables and +T times are its.
 *   - --max-rows N (default 1,000,000, N >= 1) per table: when the window holds
 *     more rows than N (after sampling), the first N are written, a warning
 *     naming the table and the limit goes to stderr, the remaining tables are
 *     still exported, and the exit status is 3.
 *   - --debug-pages prints, per table and pass, row groups and data pages read vs
 *     total (the reader's counts over the projected columns) to stderr.
 * Exit: 0; 1 missing/unreadable profile or output error; 2 usage; 3 truncated.
 *
 * The rows themselves come from src/query/export.h, shared with the server's
 * export endpoint, so both give the same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "query/export.h"
#include "query/export_request.h"
#include "query/engine/row_writer.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"

#define CMD "export-csv"

static void export_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof export-csv PROFILE_DIR --start T --end T --out DIR\n"
            "                         [--tables T1,T2,...] [--width PX | --no-sample]\n"
            "                         [--max-rows N] [--format csv|json] [--debug-pages]\n"
            "\n"
            "Write the events of the time window [start, end] of a profile to one CSV file per\n"
            "table (DIR/<Table>.csv): first column timeline_track, then every field of the table\n"
            "in schema order, rows in start-time order. Interval events overlapping the window\n"
            "are included; point events (SemaphoreUpdate) when their timestamp is inside it.\n"
            "\n"
            "  -s, --start T        window start: Unix ns, or a number with unit ns, us, ms or s;\n"
            "                       +T (e.g. +2ms) counts from the profile's first timestamp\n"
            "  -e, --end T          window end (inclusive), same forms\n"
            "  -o, --out DIR        output directory (created if missing)\n"
            "  -t, --tables LIST    Instruction,DmaPacketAggregated,DmaPacket,CcInstruction,\n"
            "                       SemaphoreUpdate,SystemProfileEvents (default: these six, those\n"
            "                       the profile has); CcOp is also accepted\n"
            "  -w, --width PX       sample at PX pixels: per track and pixel, the longest event\n"
            "                       (default 1920, at most 1048576)\n"
            "  -n, --no-sample      export every event in the window\n"
            "  -m, --max-rows N     at most N rows per table (default 1000000); more: warn, exit 3\n"
            "  -f, --format F       csv (default) or json: DIR/<Table>.json, one JSON array of\n"
            "                       row objects per table (typed values, null for empty)\n"
            "      --debug-pages    print pages read vs total per table to stderr\n"
            "  -h, --help           show this help\n"
            "\n"
            "Text cells starting with = + - @ TAB or CR (except plain numbers) get a leading '\n"
            "so spreadsheets do not run them as formulas; numeric columns are never changed.\n"
            "Exit status: 0 success, 1 profile missing or unreadable, 2 usage error,\n"
            "3 a table was truncated at --max-rows.\n");
}

static int parse_count(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    for (char *q = p + 1;; q++) {
        if (*q == '/' || *q == '\0') {
            char ch = *q;
            *q = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *q = ch;
            if (!ch)
                break;
        }
    }
    free(p);
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

typedef struct export_opts {
    const char *dir, *out;
    nx_export_request req;
    const nx_row_format *format;
    bool debug_pages;
} export_opts;

static void print_pages(const char *table, const char *pass, const nx_export *x, int which)
{
    nxpq_scan_stats st;
    nx_export_pages(x, which, &st);
    fprintf(stderr,
            "nxprof " CMD ": %s (%s): row groups read %" PRIu64 " of %" PRIu64 ", pages read %" PRIu64 " of %" PRIu64
            "\n",
            table, pass, st.row_groups_read, st.row_groups_total, st.pages_read, st.pages_total);
}

/* A hidden temporary file beside <out>/<table><ext>, ".<table><ext>.tmp-XXXXXX",
 * opened for writing with the usual permissions (0666 less the umask); the file
 * is renamed into place only when complete, so a failed export leaves none. */
static FILE *open_aside(const export_opts *o, const char *table, char **tmp)
{
    size_t len = strlen(o->out) + strlen(table) + strlen(o->format->extension) + 20;
    if (!(*tmp = malloc(len))) {
        errno = ENOMEM;
        return NULL;
    }
    snprintf(*tmp, len, "%s/.%s%s.tmp-XXXXXX", o->out, table, o->format->extension);
    int fd = mkstemp(*tmp);
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (!f && fd >= 0) {
        int e = errno;
        close(fd);
        unlink(*tmp);
        errno = e;
    }
    return f;
}

/* The table's rows through a writer of o->format into f. 0 or -1 with err. */
static int write_table(const export_opts *o, nx_export *x, const char *table, FILE *f, nx_error *err)
{
    nx_row_target target = {.f = f, .profile_dir = o->dir, .start = o->req.start, .end = o->req.end};
    nx_row_writer *w = o->format->open(&target, err);
    if (!w)
        return -1;
    if (o->debug_pages && o->req.width)
        print_pages(table, "sampling pass", x, 0);
    int rc = nx_export_all(x, w, err);
    if (rc == 0)
        rc = w->ops->finish(w, err);
    w->ops->free(w);
    if (rc == 0 && o->debug_pages)
        print_pages(table, o->req.width ? "row pass" : "export", x, 1);
    return rc;
}

/* Exports one table into <out>/<table><ext> (src/query/export.h does the rows).
 * Returns NX_EXIT_OK, NX_EXIT_TRUNCATED or NX_EXIT_ERROR; *absent is set when the
 * profile has no such table (a note says so when `named`: the user asked for it). */
static int export_table(const export_opts *o, const char *table, bool named, bool *absent)
{
    *absent = false;
    nx_error err = {0};
    nx_export *x = NULL;
    const nx_export_request *q = &o->req;
    nx_export_options eo = {.start = q->start, .end = q->end, .width = q->width, .max_rows = q->max_rows};
    int rc = nx_export_open(o->dir, table, &eo, &x, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        *absent = true;
        if (named)
            fprintf(stderr, "nxprof " CMD ": note: the profile has no %s table; no %s%s written\n", table, table,
                    o->format->extension);
        return NX_EXIT_OK;
    }
    if (rc != 0) {
        fprintf(stderr, "nxprof " CMD ": %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    int result = NX_EXIT_ERROR;
    FILE *f = NULL;
    size_t plen = strlen(o->out) + strlen(table) + strlen(o->format->extension) + 2;
    char *path = malloc(plen), *tmp = NULL;
    if (!path) {
        fprintf(stderr, "nxprof " CMD ": %s: out of memory\n", table);
        goto done;
    }
    snprintf(path, plen, "%s/%s%s", o->out, table, o->format->extension);
    if (!(f = open_aside(o, table, &tmp))) {
        fprintf(stderr, "nxprof " CMD ": %s: cannot create a temporary file beside %s: %s\n", table, path,
                strerror(errno));
        goto done;
    }
    if (write_table(o, x, table, f, &err) < 0) {
        fprintf(stderr, "nxprof " CMD ": %s\n", err.msg);
        goto done;
    }
    if (fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "nxprof " CMD ": %s: error writing %s: %s\n", table, path, strerror(errno));
        goto done;
    }
    f = NULL;
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "nxprof " CMD ": %s: cannot rename %s to %s: %s\n", table, tmp, path, strerror(errno));
        goto done;
    }
    free(tmp);
    tmp = NULL;
    if (nx_export_truncated(x)) {
        fprintf(stderr, "nxprof " CMD ": warning: %s has more than %llu rows in the window; %s stops at --max-rows %llu\n",
                table, (unsigned long long)q->max_rows, path, (unsigned long long)q->max_rows);
        result = NX_EXIT_TRUNCATED;
    } else {
        result = NX_EXIT_OK;
    }
done:
    if (f)
        fclose(f);
    if (tmp)
        unlink(tmp);   /* not complete: never renamed into place */
    nx_export_close(x);
    free(tmp);
    free(path);
    return result;
}

/* The options into o. NX_EXIT_OK, or a usage error's exit code (printed). */
static int parse_options(int argc, char **argv, export_opts *o, bool *help)
{
    static const struct option opts[] = {
        {"start", required_argument, NULL, 's'},     {"end", required_argument, NULL, 'e'},
        {"out", required_argument, NULL, 'o'},       {"tables", required_argument, NULL, 't'},
        {"width", required_argument, NULL, 'w'},     {"no-sample", no_argument, NULL, 'n'},
        {"max-rows", required_argument, NULL, 'm'},  {"debug-pages", no_argument, NULL, 'D'},
        {"format", required_argument, NULL, 'f'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char msg[NX_EXPORT_MSG];
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:e:o:t:w:nm:f:h", opts, NULL)) != -1) {
        unsigned long long v;
        int bad = 0;
        switch (c) {
        case 's': bad = nx_export_request_set_time(&o->req, false, optarg, msg); break;
        case 'e': bad = nx_export_request_set_time(&o->req, true, optarg, msg); break;
        case 'o': o->out = optarg; break;
        case 't': bad = nx_export_request_set_tables(&o->req, optarg, msg); break;
        case 'w':
            if (parse_count(optarg, NX_EXPORT_MAX_WIDTH, &v) < 0)
                return nx_usage_error(CMD, "bad --width '%s' (1..%u pixels)", optarg, NX_EXPORT_MAX_WIDTH);
            bad = nx_export_request_set_width(&o->req, (int64_t)v, msg);
            break;
        case 'n': nx_export_request_set_no_sample(&o->req); break;
        case 'm':
            if (parse_count(optarg, (unsigned long long)INT64_MAX, &v) < 0)
                return nx_usage_error(CMD, "bad --max-rows '%s' (a whole number >= 1)", optarg);
            bad = nx_export_request_set_max_rows(&o->req, (int64_t)v, msg);
            break;
        case 'f':
            o->format = nx_row_format_find(optarg);
            if (!o->format || !o->format->per_table)
                return nx_usage_error(CMD, "bad --format '%s' (csv or json)", optarg);
            break;
        case 'D': o->debug_pages = true; break;
        case 'h': *help = true; return NX_EXIT_OK;
        default: return nx_getopt_error(CMD, c, argv);
        }
        if (bad)
            return nx_usage_error(CMD, "%s", msg);
    }
    if (optind >= argc)
        return nx_usage_error(CMD, "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error(CMD, "unexpected argument '%s'", argv[optind + 1]);
    o->dir = argv[optind];
    if (nx_export_request_check(&o->req, msg) < 0)
        return nx_usage_error(CMD, "%s", msg);
    if (!o->out)
        return nx_usage_error(CMD, "--out is required");
    return NX_EXIT_OK;
}

static int export_run(int argc, char **argv)
{
    export_opts o = {.format = nx_row_format_find("csv")};
    nx_export_request_init(&o.req, &nx_export_cli_names);
    bool help = false;
    char msg[NX_EXPORT_MSG];
    int rc = parse_options(argc, argv, &o, &help);
    if (help)
        export_help(stdout);
    if (rc != NX_EXIT_OK || help)
        return rc;
    struct stat st;
    if (stat(o.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "nxprof " CMD ": %s: no such profile directory\n", o.dir);
        return NX_EXIT_ERROR;
    }
    int r = nx_export_request_resolve(&o.req, o.dir, msg);
    if (r == -2)
        return nx_usage_error(CMD, "%s", msg);
    if (r < 0) {
        fprintf(stderr, "nxprof " CMD ": %s\n", msg);
        return NX_EXIT_ERROR;
    }
    if (make_dirs(o.out) < 0) {
        fprintf(stderr, "nxprof " CMD ": cannot create output directory %s: %s\n", o.out, strerror(errno));
        return NX_EXIT_ERROR;
    }
    /* A directory with none of the requested tables and no Metadata.parquet is not
     * a profile (a mistyped path): exit 1 instead of writing nothing. */
    size_t mlen = strlen(o.dir) + 20;
    char *meta = malloc(mlen);
    if (!meta) {
        fprintf(stderr, "nxprof " CMD ": out of memory\n");
        return NX_EXIT_ERROR;
    }
    snprintf(meta, mlen, "%s/Metadata.parquet", o.dir);
    bool has_meta = access(meta, F_OK) == 0;
    free(meta);
    size_t n_absent = 0;
    for (size_t i = 0; i < o.req.n_tables; i++) {
        bool absent;
        int t = export_table(&o, o.req.tables[i], o.req.named, &absent);
        n_absent += absent;
        if (t == NX_EXIT_ERROR)
            return NX_EXIT_ERROR;
        if (t == NX_EXIT_TRUNCATED)
            rc = NX_EXIT_TRUNCATED;
    }
    if (n_absent == o.req.n_tables && !has_meta) {
        fprintf(stderr, "nxprof " CMD ": %s is not a profile directory (no Metadata.parquet, none of the tables)\n",
                o.dir);
        rc = NX_EXIT_ERROR;
    }
    return rc;
}

const nx_command nx_cmd_export_csv = {
    .name = "export-csv",
    .summary = "export a time window of the timeline to CSV (sampled or complete)",
    .run = export_run,
    .help = export_help,
};
