/*
 * cmd_export_csv.c — `nxprof export-csv PROFILE_DIR --start T --end T --out DIR`:
 * a time window of the timeline tables to CSV, sampled at a pixel width (the
 * viewer's function, src/query/window.h) or complete. Full rules: docs/query.md.
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
 *     written as an empty (null) column. Values: src/query/csv.h.
 *   - Sampling (default --width 1920): per (track, bucket) one row, window.h;
 *     --no-sample exports every row. Giving both is a usage error.
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
#include "query/csv.h"
#include "query/export.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"

#define CMD "export-csv"

static const char *const DEFAULT_TABLES[] = {"Instruction",     "DmaPacketAggregated", "DmaPacket", "CcInstruction",
                                             "SemaphoreUpdate", "SystemProfileEvents"};
#define N_DEFAULT (sizeof DEFAULT_TABLES / sizeof DEFAULT_TABLES[0])
#define MAX_TABLES 8
#define MAX_WIDTH (1u << 20)

static void export_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof export-csv PROFILE_DIR --start T --end T --out DIR\n"
            "                         [--tables T1,T2,...] [--width PX | --no-sample]\n"
            "                         [--max-rows N] [--debug-pages]\n"
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
            "                       (default 1920)\n"
            "  -n, --no-sample      export every event in the window\n"
            "  -m, --max-rows N     at most N rows per table (default 1000000); more: warn, exit 3\n"
            "      --debug-pages    print pages read vs total per table to stderr\n"
            "  -h, --help           show this help\n"
            "\n"
            "Text cells starting with = + - @ TAB or CR (except plain numbers) get a leading '\n"
            "so spreadsheets do not run them as formulas; numeric columns are never changed.\n"
            "Exit status: 0 success, 1 profile missing or unreadable, 2 usage error,\n"
            "3 a table was truncated at --max-rows.\n");
}

/* "123", "1.5us", "2ms", "0.25s" -> ns; a leading '+' sets *relative (the value
 * counts from the profile's start). 0, or -1 when malformed/not whole/out of range. */
static int parse_time(const char *s, int64_t *out, bool *relative)
{
    *relative = *s == '+';
    if (*relative)
        s++;
    unsigned __int128 v = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    const char *p = s;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            if (++digits > 28)
                return -1;
            v = v * 10 + (unsigned)(*p - '0');
            if (dot)
                frac++;
        } else if (*p == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    if (digits == 0 || (dot && frac == 0))
        return -1;
    uint64_t mult;
    if (*p == '\0' || strcmp(p, "ns") == 0)
        mult = 1;
    else if (strcmp(p, "us") == 0)
        mult = 1000;
    else if (strcmp(p, "ms") == 0)
        mult = 1000000;
    else if (strcmp(p, "s") == 0)
        mult = 1000000000;
    else
        return -1;
    unsigned __int128 div = 1;
    for (int i = 0; i < frac; i++)
        div *= 10;
    v *= mult;
    if (v % div != 0)
        return -1;
    v /= div;
    if (v > (unsigned __int128)INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
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
    int64_t start, end;
    const char *tables[MAX_TABLES];
    size_t n_tables;
    char *tables_buf;
    uint32_t width;  /* 0: no sampling */
    unsigned long long max_rows;
    bool debug_pages;
} export_opts;

static int parse_tables(export_opts *o, const char *arg)
{
    free(o->tables_buf);
    if (!(o->tables_buf = strdup(arg))) {
        fprintf(stderr, "nxprof " CMD ": out of memory\n");
        return NX_EXIT_ERROR;
    }
    o->n_tables = 0;
    char *p = o->tables_buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p)
            return nx_usage_error(CMD, "--tables has an empty table name in '%s'", arg);
        if (!nx_timeline_find(p))
            return nx_usage_error(CMD,
                                  "unknown table '%s' (choose from Instruction, DmaPacketAggregated, DmaPacket, "
                                  "CcInstruction, SemaphoreUpdate, SystemProfileEvents, CcOp)",
                                  p);
        for (size_t i = 0; i < o->n_tables; i++)
            if (strcmp(o->tables[i], p) == 0)
                return nx_usage_error(CMD, "--tables names '%s' twice", p);
        if (o->n_tables == MAX_TABLES)
            return nx_usage_error(CMD, "--tables takes at most %d tables", MAX_TABLES);
        o->tables[o->n_tables++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static void print_pages(const char *table, const char *pass, const nx_export *x, int which)
{
    nxpq_scan_stats st;
    nx_export_pages(x, which, &st);
    fprintf(stderr,
            "nxprof " CMD ": %s (%s): row groups read %" PRIu64 " of %" PRIu64 ", pages read %" PRIu64 " of %" PRIu64
            "\n",
            table, pass, st.row_groups_read, st.row_groups_total, st.pages_read, st.pages_total);
}

/* A hidden temporary file beside <out>/<table>.csv, ".<table>.csv.tmp-XXXXXX",
 * opened for writing with the usual permissions (0666 less the umask); the CSV
 * is renamed into place only when complete, so a failed export leaves none. */
static FILE *open_aside(const export_opts *o, const char *table, char **tmp)
{
    size_t len = strlen(o->out) + strlen(table) + 20;
    if (!(*tmp = malloc(len))) {
        errno = ENOMEM;
        return NULL;
    }
    snprintf(*tmp, len, "%s/.%s.csv.tmp-XXXXXX", o->out, table);
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

/* Exports one table into <out>/<table>.csv (src/query/export.h does the rows).
 * Returns NX_EXIT_OK, NX_EXIT_TRUNCATED or NX_EXIT_ERROR; *absent is set when the
 * profile has no such table (a note says so when `named`: the user asked for it). */
static int export_table(const export_opts *o, const char *table, bool named, bool *absent)
{
    *absent = false;
    nxpq_error err = {{0}};
    nx_export *x = NULL;
    nx_export_options eo = {.start = o->start, .end = o->end, .width = o->width, .max_rows = o->max_rows};
    int rc = nx_export_open(o->dir, table, &eo, &x, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        *absent = true;
        if (named)
            fprintf(stderr, "nxprof " CMD ": note: the profile has no %s table; no %s.csv written\n", table, table);
        return NX_EXIT_OK;
    }
    if (rc != 0) {
        fprintf(stderr, "nxprof " CMD ": %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    int result = NX_EXIT_ERROR;
    FILE *f = NULL;
    nx_csv csv = {0};
    bool csv_open = false;
    size_t plen = strlen(o->out) + strlen(table) + 6;
    char *path = malloc(plen), *tmp = NULL;
    if (!path) {
        fprintf(stderr, "nxprof " CMD ": %s: out of memory\n", table);
        goto done;
    }
    snprintf(path, plen, "%s/%s.csv", o->out, table);
    if (!(f = open_aside(o, table, &tmp))) {
        fprintf(stderr, "nxprof " CMD ": %s: cannot create a temporary file beside %s: %s\n", table, path,
                strerror(errno));
        goto done;
    }
    if (nx_csv_init(&csv, f) < 0) {
        fprintf(stderr, "nxprof " CMD ": %s: out of memory\n", table);
        goto done;
    }
    csv_open = true;
    nx_export_header(x, &csv);
    if (o->debug_pages && o->width)
        print_pages(table, "sampling pass", x, 0);
    while ((rc = nx_export_next(x, &csv, &err)) > 0)
        ;
    if (rc < 0) {
        fprintf(stderr, "nxprof " CMD ": %s\n", err.msg);
        goto done;
    }
    if (o->debug_pages)
        print_pages(table, o->width ? "row pass" : "export", x, 1);
    csv_open = false;
    if (nx_csv_finish(&csv) < 0 || fclose(f) != 0) {
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
                table, o->max_rows, path, o->max_rows);
        result = NX_EXIT_TRUNCATED;
    } else {
        result = NX_EXIT_OK;
    }
done:
    if (csv_open)
        nx_csv_finish(&csv);
    if (f)
        fclose(f);
    if (tmp)
        unlink(tmp);   /* not complete: never renamed into place */
    nx_export_close(x);
    free(tmp);
    free(path);
    return result;
}

static int export_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"start", required_argument, NULL, 's'},     {"end", required_argument, NULL, 'e'},
        {"out", required_argument, NULL, 'o'},       {"tables", required_argument, NULL, 't'},
        {"width", required_argument, NULL, 'w'},     {"no-sample", no_argument, NULL, 'n'},
        {"max-rows", required_argument, NULL, 'm'},  {"debug-pages", no_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0},
    };
    export_opts o = {.width = 1920, .max_rows = 1000000};
    bool have_start = false, have_end = false, width_given = false, no_sample = false;
    bool start_rel = false, end_rel = false;
    const char *start_s = NULL, *end_s = NULL;
    int c, rc = NX_EXIT_OK;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:e:o:t:w:nm:h", opts, NULL)) != -1) {
        unsigned long long v;
        switch (c) {
        case 's':
            start_s = optarg;
            if (parse_time(optarg, &o.start, &start_rel) < 0) {
                rc = nx_usage_error(CMD, "bad --start '%s' (ns, or a number with unit ns, us, ms or s; +T from the profile's start)", optarg);
                goto out;
            }
            have_start = true;
            break;
        case 'e':
            end_s = optarg;
            if (parse_time(optarg, &o.end, &end_rel) < 0) {
                rc = nx_usage_error(CMD, "bad --end '%s' (ns, or a number with unit ns, us, ms or s; +T from the profile's start)", optarg);
                goto out;
            }
            have_end = true;
            break;
        case 'o': o.out = optarg; break;
        case 't':
            if ((rc = parse_tables(&o, optarg)) != 0)
                goto out;
            break;
        case 'w':
            if (parse_count(optarg, MAX_WIDTH, &v) < 0) {
                rc = nx_usage_error(CMD, "bad --width '%s' (1..%u pixels)", optarg, MAX_WIDTH);
                goto out;
            }
            o.width = (uint32_t)v;
            width_given = true;
            break;
        case 'n': no_sample = true; break;
        case 'm':
            if (parse_count(optarg, (unsigned long long)INT64_MAX, &v) < 0) {
                rc = nx_usage_error(CMD, "bad --max-rows '%s' (a whole number >= 1)", optarg);
                goto out;
            }
            o.max_rows = v;
            break;
        case 'D': o.debug_pages = true; break;
        case 'h': export_help(stdout); goto out;
        default: rc = nx_getopt_error(CMD, c, argv); goto out;
        }
    }
    if (optind >= argc) {
        rc = nx_usage_error(CMD, "PROFILE_DIR is required");
        goto out;
    }
    if (optind + 1 < argc) {
        rc = nx_usage_error(CMD, "unexpected argument '%s'", argv[optind + 1]);
        goto out;
    }
    o.dir = argv[optind];
    if (!have_start || !have_end || !o.out) {
        rc = nx_usage_error(CMD, "%s is required", !have_start ? "--start" : !have_end ? "--end" : "--out");
        goto out;
    }
    if (start_rel == end_rel && o.end < o.start) {
        rc = nx_usage_error(CMD, "--end %s is before --start %s", end_s, start_s);
        goto out;
    }
    if (width_given && no_sample) {
        rc = nx_usage_error(CMD, "--width and --no-sample exclude each other");
        goto out;
    }
    if (no_sample)
        o.width = 0;
    bool named = o.n_tables > 0;
    if (!named) {
        for (size_t i = 0; i < N_DEFAULT; i++)
            o.tables[i] = DEFAULT_TABLES[i];
        o.n_tables = N_DEFAULT;
    }
    struct stat st;
    if (stat(o.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "nxprof " CMD ": %s: no such profile directory\n", o.dir);
        rc = NX_EXIT_ERROR;
        goto out;
    }
    if (start_rel || end_rel) {   /* +T: from the profile's first timestamp */
        int64_t first, last;
        nxpq_error err = {{0}};
        int src = nx_profile_span(o.dir, &first, &last, &err);
        if (src != 0) {
            fprintf(stderr, "nxprof " CMD ": %s: cannot resolve +T times: %s\n", o.dir, err.msg);
            rc = NX_EXIT_ERROR;
            goto out;
        }
        if ((start_rel && o.start > INT64_MAX - first) || (end_rel && o.end > INT64_MAX - first)) {
            rc = nx_usage_error(CMD, "--start/--end out of range");
            goto out;
        }
        o.start += start_rel ? first : 0;
        o.end += end_rel ? first : 0;
        if (o.end < o.start) {
            rc = nx_usage_error(CMD, "--end %s is before --start %s", end_s, start_s);
            goto out;
        }
    }
    if (make_dirs(o.out) < 0) {
        fprintf(stderr, "nxprof " CMD ": cannot create output directory %s: %s\n", o.out, strerror(errno));
        rc = NX_EXIT_ERROR;
        goto out;
    }
    /* A directory with none of the requested tables and no Metadata.parquet is not
     * a profile (a mistyped path): exit 1 instead of writing nothing. */
    size_t mlen = strlen(o.dir) + 20;
    char *meta = malloc(mlen);
    if (!meta) {
        fprintf(stderr, "nxprof " CMD ": out of memory\n");
        rc = NX_EXIT_ERROR;
        goto out;
    }
    snprintf(meta, mlen, "%s/Metadata.parquet", o.dir);
    bool has_meta = access(meta, F_OK) == 0;
    free(meta);
    size_t n_absent = 0;
    for (size_t i = 0; i < o.n_tables; i++) {
        bool absent;
        int r = export_table(&o, o.tables[i], named, &absent);
        n_absent += absent;
        if (r == NX_EXIT_ERROR) {
            rc = NX_EXIT_ERROR;
            goto out;
        }
        if (r == NX_EXIT_TRUNCATED)
            rc = NX_EXIT_TRUNCATED;
    }
    if (n_absent == o.n_tables && !has_meta) {
        fprintf(stderr, "nxprof " CMD ": %s is not a profile directory (no Metadata.parquet, none of the tables)\n",
                o.dir);
        rc = NX_EXIT_ERROR;
    }
out:
    free(o.tables_buf);
    return rc;
}

const nx_command nx_cmd_export_csv = {
    .name = "export-csv",
    .summary = "export a time window of the timeline to CSV (sampled or complete)",
    .run = export_run,
    .help = export_help,
};
