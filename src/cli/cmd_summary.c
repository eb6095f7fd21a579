/*
 * cmd_summary.c — `nxprof summary PROFILE_DIR`: for a device profile its
 * Summary table, readable, plus its ten most expensive opcodes from
 * OpcodeSummary; for a system profile (SystemProfileEvents and no Instruction)
 * what src/query/system_summary.h computes: wall time, busy time per thread,
 * the top operators by self time and its device profiles. Also used by
 * `nxprof view --ingest-only --output-format summary-text|summary-json`.
 *
 * System profile, text: the wall time, then the Devices and Steps tables of
 * query/device_stats.h (each only when it has rows), then three aligned tables (busy time
 * per track with its percent of wall time and top-level event count; the top
 * operators with count, self and total time; the device profiles with name,
 * LNC, physical cores, total time, executions, MFU, HFU, MBU and CC active
 * time, or the error that kept one from being read). JSON: {"profile": DIR,
 * "kind": "system", "events", "wall": {"first_ts", "last_ts", "duration_ns"} |
 * null, "threads": [{"thread", "busy_ns", "top_level_events",
 * "percent_of_wall"}], "ranks": [{"rank", "events", "first_ts", "last_ts",
 * "busy_ns"}], "devices": [...], "steps": [...] (device_stats.h's writer),
 * "top_operators": [{"name", "count", "sum_duration_ns",
 * "sum_self_ns"}], "device_profiles": [{"name", "dir", "nc_id",
 * "physical_cores", "total_time_s", "executions", "mfu_estimated_percent",
 * "hfu_estimated_percent", "mbu_estimated_percent", "cc_op_active_time_s",
 * "error"}] | null (no DeviceProfileList)}; unknown values are null. Exit 0
 * unless the profile cannot be read; a device profile's error is not a failure.
 * Ranks (framework traces of several ranks, worker_gid): text adds a table of
 * one line per rank (its events, span and busy time) when there are any;
 * --rank N reads the rows of rank N only (every figure is that rank's; JSON
 * has "rank": N, else null).
 *
 * Device profile rules (the reading is query/device_summary.h's):
 *   - Summary's first row, every scalar column; a note on stderr says when the
 *     table has more rows.
 *   - Text: non-null fields only, in table column order within five sections,
 *     chosen by field name, first rule that matches:
 *       Flops and utilisation: name contains "flops", starts with mfu_/hfu_/mbu_,
 *                              or is mm_arithmetic_intensity;
 *       DMA:                   contains "dma", ends with _queue_bytes, starts with
 *                              inputs_, or is weight_size_bytes;
 *       Memory:                starts with hbm_, sbuf_, psum_ or spill_;
 *       Engines:               contains "_engine_", starts with activate_, matmul_ or cc_;
 *       Time and counts:       everything else (total_*, cycle and event counts).
 *     Sections print in the order Time and counts, Engines, DMA, Flops and
 *     utilisation, Memory; an empty section is left out. Units come from the schema
 *     catalogue: seconds scaled to s/ms/us/ns, bytes shown exactly plus a KiB/MiB/GiB
 *     figure, percent with two decimals, flops exactly plus a k/M/G/T/P figure,
 *     cycles exactly.
 *   - Top opcodes: the first 10 OpcodeSummary rows in device_summary.h's order
 *     (instruction_time_ns descending, then engine, then opcode), shown with
 *     instruction_count, instruction_time_ns, active_time_ns (a null or non-integer
 *     value as 0) and active_time_percent (blank / null when null).
 *   - JSON: {"profile": DIR, "summary": {every non-null Summary field of the first
 *     row: value} | null, "top_opcodes": [{engine, opcode, instruction_count,
 *     instruction_time_ns, active_time_ns, active_time_percent}, ...] | null}.
 *     Numbers as util/json.h writes them: integers exact, floats the shortest
 *     text that reads back as the same FLOAT or DOUBLE, non-finite as null.
 *   - A missing Summary or OpcodeSummary table is named on stderr and the exit
 *     status is 1 (what exists is still printed); a missing or unreadable profile
 *     directory is exit 1; usage errors exit 2.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/text_out.h"
#include "query/device_stats.h"
#include "query/device_summary.h"
#include "query/insights.h"
#include "query/rank_stats.h"
#include "query/system_summary.h"
#include "schema/schema.h"

#define TOP_OPCODES 10

static void summary_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof summary PROFILE_DIR [--format text|json] [--rank N] [--profiler-rows]\n"
            "\n"
            "Show a device profile's Summary table (time, engines, DMA, flops and utilisation,\n"
            "memory; null fields left out) and the ten opcodes with the most instruction time\n"
            "from OpcodeSummary. For a system profile (SystemProfileEvents, no Instruction):\n"
            "its devices (GPUs, NeuronCores: busy, idle, kernel, memcpy and memset time per\n"
            "device and rank) and steps (ProfilerStep#N, JAX step_num steps: duration and the\n"
            "device time inside each), its wall time, busy time per thread, the ten operators\n"
            "with the most self time (the profiler's own rows left out)\n"
            "and its device profiles (LNC, cores, total time, executions, MFU, HFU, MBU, CC);\n"
            "with framework traces of several ranks, one line per rank (events, span, busy).\n"
            "\n"
            "  -f, --format F   text (default) or json (every non-null field with its value)\n"
            "  -r, --rank N     a system profile's rows of rank N only (worker_gid)\n"
            "      --profiler-rows  keep the profiler's own rows (PyTorch Profiler (0),\n"
            "                   ProfilerStep#N) among the operators\n"
            "  -h, --help       show this help\n"
            "\n"
            "Exit status: 0 success, 1 profile unreadable or (device profile) without\n"
            "Summary/OpcodeSummary, 2 usage error.\n");
}

/* OpcodeSummary cells as the opcode table shows them: text ("" for null), integer (0 for null). */
static const char *op_text(const nx_cell *row, int f) { return row[f].s ? row[f].s : ""; }

static int64_t op_int(const nx_cell *row, int f)
{
    const nx_cell *c = &row[f];
    return !c->null && (c->type == NXPQ_INT32 || c->type == NXPQ_INT64) ? c->i : 0;
}

/* active_time_percent, false when null or not a float/double. */
static bool op_pct(const nx_cell *row, double *v)
{
    const nx_cell *c = &row[NX_OP_ACTIVE_PCT];
    *v = c->f;
    return !c->null && (c->type == NXPQ_FLOAT || c->type == NXPQ_DOUBLE);
}

/* ------------------------------------------ the analyses summary shows -- */

/* Prints a member built in b (then freed): 0, or -1 when building it ran out
 * of memory (told on stderr). */
static int put_member(nx_strbuf *b)
{
    int rc = nx_strbuf_failed(b) ? -1 : 0;
    if (rc == 0 && b->len)
        fwrite(b->data, 1, b->len, stdout);
    else if (rc != 0)
        fprintf(stderr, "nxprof summary: out of memory\n");
    nx_strbuf_free(b);
    return rc;
}

/* The insights of `dir` (query/insights.h, the `insights` analysis): the
 * member `,"insights":{...}` (json) or the list and a blank line (text). 0,
 * or -1 (the cause told on stderr). */
static int insights_member(const char *dir, bool json)
{
    nx_insights s;
    nx_error err = {0};
    if (nx_insights_read(dir, &s, &err) < 0) {
        fprintf(stderr, "nxprof summary: %s\n", err.msg);
        return -1;
    }
    nx_strbuf b = NX_STRBUF_INIT;
    if (json) {
        nx_strbuf_puts(&b, ",\"insights\":");
        nx_insights_json(&s, &b);
    } else {
        nx_insights_text(&s, &b);
        nx_strbuf_putc(&b, '\n');
    }
    nx_insights_free(&s);
    return put_member(&b);
}

/* The rank answer of system profile `dir` (query/rank_stats.h, the `ranks`
 * analysis) when it has 2+ ranks: the member `,"rank_stats":{...}` (json) or
 * a blank line and the Ranks section (text); nothing otherwise. 0, or -1 (the
 * cause told on stderr). */
static int ranks_member(const char *dir, bool json)
{
    nx_rank_stats s;
    nx_error err = {0};
    if (nx_rank_stats_read(dir, &s, &err) < 0) {
        fprintf(stderr, "nxprof summary: %s\n", err.msg);
        return -1;
    }
    nx_strbuf b = NX_STRBUF_INIT;
    if (s.n_ranks >= 2 && json) {
        nx_strbuf_puts(&b, ",\"rank_stats\":");
        nx_rank_stats_json(&s, false, &b);
    } else if (s.n_ranks >= 2) {
        nx_strbuf_putc(&b, '\n');
        nx_rank_stats_text(&s, &b);
    }
    nx_rank_stats_free(&s);
    return put_member(&b);
}

/* ------------------------------------------------------------------ text -- */

enum { SEC_TIME, SEC_ENGINES, SEC_DMA, SEC_FLOPS, SEC_MEMORY, N_SECTIONS };
static const char *const SECTION_TITLE[N_SECTIONS] = {"Time and counts", "Engines", "DMA", "Flops and utilisation",
                                                      "Memory"};

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }
static bool ends(const char *s, const char *p)
{
    size_t a = strlen(s), b = strlen(p);
    return a >= b && strcmp(s + a - b, p) == 0;
}

static int section_of(const char *n)
{
    if (strstr(n, "flops") || starts(n, "mfu_") || starts(n, "hfu_") || starts(n, "mbu_") ||
        strcmp(n, "mm_arithmetic_intensity") == 0)
        return SEC_FLOPS;
    if (strstr(n, "dma") || ends(n, "_queue_bytes") || starts(n, "inputs_") || strcmp(n, "weight_size_bytes") == 0)
        return SEC_DMA;
    if (starts(n, "hbm_") || starts(n, "sbuf_") || starts(n, "psum_") || starts(n, "spill_"))
        return SEC_MEMORY;
    if (strstr(n, "_engine_") || starts(n, "activate_") || starts(n, "matmul_") || starts(n, "cc_"))
        return SEC_ENGINES;
    return SEC_TIME;
}

static void print_scaled(double v, const char *const *units, double step, size_t n_units)
{
    size_t u = 0;
    while (u + 1 < n_units && fabs(v) >= step) {
        v /= step;
        u++;
    }
    printf(" (%.2f %s)", v, units[u]);
}

/* A time in seconds scaled to s, ms, us or ns, three decimals. */
static const char *seconds_text(double v, char *buf, size_t cap)
{
    double a = fabs(v);
    if (a >= 1 || v == 0)
        snprintf(buf, cap, "%.3f s", v);
    else if (a >= 1e-3)
        snprintf(buf, cap, "%.3f ms", v * 1e3);
    else if (a >= 1e-6)
        snprintf(buf, cap, "%.3f us", v * 1e6);
    else
        snprintf(buf, cap, "%.3f ns", v * 1e9);
    return buf;
}

static void print_value(const nx_cell *c, const char *unit)
{
    bool is_int = c->type == NXPQ_INT32 || c->type == NXPQ_INT64 || c->type == NXPQ_BOOLEAN;
    if (c->type == NXPQ_STRING) {
        printf("%s", c->s);
    } else if (c->type == NXPQ_BOOLEAN) {
        printf("%s", c->i ? "true" : "false");
    } else if (strcmp(unit, "seconds") == 0) {
        char buf[64];
        fputs(seconds_text(is_int ? (double)c->i : c->f, buf, sizeof buf), stdout);
    } else if (strcmp(unit, "percent") == 0) {
        printf("%.2f %%", is_int ? (double)c->i : c->f);
    } else if (is_int) {
        printf("%" PRId64, c->i);
        if (strcmp(unit, "bytes") == 0) {
            static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
            printf(" bytes");
            if (c->i >= 1024 || c->i <= -1024)
                print_scaled((double)c->i, u, 1024, 5);
        } else if (strcmp(unit, "flops") == 0) {
            static const char *const u[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
            printf(" flops");
            if (c->i >= 1000 || c->i <= -1000)
                print_scaled((double)c->i, u, 1000, 6);
        } else if (*unit) {
            printf(" %s", unit);
        }
    } else {
        printf("%.6g", c->f);
        if (*unit)
            printf(" %s", unit);
    }
}

static void print_text(const char *dir, const nx_device_summary *d)
{
    printf("Profile %s\n\n", dir);
    (void)insights_member(dir, false);   /* a failure is told on stderr; the Summary still shows */
    if (d->summary.present) {
        const nx_schema_table *st = nx_schema_table_find("Summary");
        size_t w = 0;
        for (size_t i = 0; i < d->summary.n; i++)
            if (!d->summary.cells[i].null && strlen(d->summary.cells[i].name) > w)
                w = strlen(d->summary.cells[i].name);
        bool any = false;
        for (int sec = 0; sec < N_SECTIONS; sec++) {
            bool header = false;
            for (size_t i = 0; i < d->summary.n; i++) {
                const nx_cell *c = &d->summary.cells[i];
                if (c->null || section_of(c->name) != sec)
                    continue;
                if (!header) {
                    printf("\n%s\n", SECTION_TITLE[sec]);
                    header = any = true;
                }
                const nx_schema_field *f = st ? nx_schema_field_find(st, c->name) : NULL;
                printf("  %-*s  ", (int)w, c->name);
                print_value(c, f ? f->unit : "");
                putchar('\n');
            }
        }
        if (!any)
            printf("\nSummary: every field is null\n");
    }
    if (d->nki.present)
        printf("\nNKI coverage: %.2f%% of instruction time (%" PRId64 " of %" PRId64 " ns; %" PRId64 " of %" PRId64
               " instructions from NKI kernels)\n", nx_nki_coverage_percent(&d->nki), d->nki.kernel_ns,
               d->nki.total_ns, d->nki.kernel_instructions, d->nki.instructions);
    if (d->have_opcodes) {
        size_t we = 6, wo = 6;
        for (size_t i = 0; i < d->n_opcodes; i++) {
            if (strlen(op_text(d->opcodes[i], NX_OP_ENGINE)) > we)
                we = strlen(op_text(d->opcodes[i], NX_OP_ENGINE));
            if (strlen(op_text(d->opcodes[i], NX_OP_OPCODE)) > wo)
                wo = strlen(op_text(d->opcodes[i], NX_OP_OPCODE));
        }
        printf("\nTop %zu opcodes by instruction time (OpcodeSummary)\n", d->n_opcodes);
        printf("  %-*s  %-*s  %17s  %19s  %14s  %8s\n", (int)we, "engine", (int)wo, "opcode", "instruction_count",
               "instruction_time_ns", "active_time_ns", "active %");
        for (size_t i = 0; i < d->n_opcodes; i++) {
            const nx_cell *r = d->opcodes[i];
            double pct;
            printf("  %-*s  %-*s  %17" PRId64 "  %19" PRId64 "  %14" PRId64, (int)we, op_text(r, NX_OP_ENGINE), (int)wo,
                   op_text(r, NX_OP_OPCODE), op_int(r, NX_OP_COUNT), op_int(r, NX_OP_TIME), op_int(r, NX_OP_ACTIVE));
            if (op_pct(r, &pct))
                printf("  %7.2f%%\n", pct);
            else
                printf("  %8s\n", "");
        }
    }
}

/* ------------------------------------------------------------------ json -- */

/* {"percent", "kernel_ns", "total_ns", "kernel_instructions", "instructions"}, or
 * null without KernelInstructions. */
static void print_nki_json(FILE *out, const nx_nki_coverage *c)
{
    if (!c->present) {
        fputs("null", out);
        return;
    }
    fputs("{\"percent\":", out);
    nx_out_json_real(out, nx_nki_coverage_percent(c), true);
    fprintf(out, ",\"kernel_ns\":%" PRId64 ",\"total_ns\":%" PRId64 ",\"kernel_instructions\":%" PRId64
                 ",\"instructions\":%" PRId64 "}", c->kernel_ns, c->total_ns, c->kernel_instructions, c->instructions);
}

static void print_json(const char *dir, const nx_device_summary *d)
{
    printf("{\"profile\":");
    nx_out_json_string(stdout, dir, strlen(dir));
    (void)insights_member(dir, true);   /* a failure is told on stderr; the member is left out */
    printf(",\"summary\":");
    if (!d->summary.present) {
        printf("null");
    } else {
        putchar('{');
        bool first = true;
        for (size_t i = 0; i < d->summary.n; i++) {
            const nx_cell *c = &d->summary.cells[i];
            if (c->null)
                continue;
            printf(first ? "\n" : ",\n");
            first = false;
            nx_out_json_string(stdout, c->name, strlen(c->name));
            putchar(':');
            switch (c->type) {
            case NXPQ_STRING: nx_out_json_string(stdout, c->s, strlen(c->s)); break;
            case NXPQ_BOOLEAN: fputs(c->i ? "true" : "false", stdout); break;
            case NXPQ_FLOAT: nx_out_json_real(stdout, c->f, false); break;
            case NXPQ_DOUBLE: nx_out_json_real(stdout, c->f, true); break;
            default: printf("%" PRId64, c->i); break;
            }
        }
        putchar('}');
    }
    printf(",\"nki_coverage\":");
    print_nki_json(stdout, &d->nki);
    printf(",\"top_opcodes\":");
    if (!d->have_opcodes) {
        printf("null");
    } else {
        putchar('[');
        for (size_t i = 0; i < d->n_opcodes; i++) {
            const nx_cell *r = d->opcodes[i];
            double pct;
            printf(i ? ",\n{\"engine\":" : "\n{\"engine\":");
            nx_out_json_string(stdout, op_text(r, NX_OP_ENGINE), strlen(op_text(r, NX_OP_ENGINE)));
            printf(",\"opcode\":");
            nx_out_json_string(stdout, op_text(r, NX_OP_OPCODE), strlen(op_text(r, NX_OP_OPCODE)));
            printf(",\"instruction_count\":%" PRId64 ",\"instruction_time_ns\":%" PRId64 ",\"active_time_ns\":%" PRId64
                   ",\"active_time_percent\":",
                   op_int(r, NX_OP_COUNT), op_int(r, NX_OP_TIME), op_int(r, NX_OP_ACTIVE));
            if (op_pct(r, &pct))
                nx_out_json_real(stdout, pct, false);
            else
                fputs("null", stdout);
            putchar('}');
        }
        putchar(']');
    }
    printf("}\n");
}

/* --------------------------------------------------------- system profile -- */

/* A text table: rows of cells (row 0 the header), first column left-aligned,
 * the others right-aligned, each row indented by two spaces. */
typedef struct text_table {
    char (*cells)[9][96];
    size_t n_rows, n_cols, cap;
} text_table;

/* The next row's cells (NULL when out of memory). */
static char (*table_row(text_table *t))[96]
{
    if (t->n_rows == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 16;
        char (*g)[9][96] = realloc(t->cells, c * sizeof *g);
        if (!g)
            return NULL;
        t->cells = g;
        t->cap = c;
    }
    memset(t->cells[t->n_rows], 0, sizeof t->cells[0]);
    return t->cells[t->n_rows++];
}

static void table_print(const text_table *t)
{
    size_t w[9] = {0};
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t c = 0; c < t->n_cols; c++)
            if (strlen(t->cells[r][c]) > w[c])
                w[c] = strlen(t->cells[r][c]);
    for (size_t r = 0; r < t->n_rows; r++) {
        printf(" ");
        for (size_t c = 0; c < t->n_cols; c++)
            printf(c ? "  %*s" : " %-*s", (int)w[c], t->cells[r][c]);
        putchar('\n');
    }
}

/* Text with control bytes shown as '?' (they would break the alignment). */
static void plain(char *out, size_t cap, const char *s)
{
    snprintf(out, cap, "%s", s);
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static void opt_text(char *out, size_t cap, nx_opt_f64 v, bool seconds)
{
    if (!v.ok)
        snprintf(out, cap, "-");
    else if (seconds)
        seconds_text(v.v, out, cap);
    else
        snprintf(out, cap, "%.2f %%", v.v);
}

/* One line per rank: its events, span and busy time. -1 when out of memory. */
static int print_ranks_text(const nx_system_summary *s, text_table *t)
{
    char (*row)[96];
    printf("\nRanks (framework traces, worker_gid)\n");
    t->n_cols = 5;
    if (!(row = table_row(t)))
        return -1;
    static const char *const head[] = {"rank", "events", "span", "first ns", "busy"};
    for (size_t c = 0; c < 5; c++)
        snprintf(row[c], 96, "%s", head[c]);
    for (size_t i = 0; i < s->n_ranks; i++) {
        const nx_system_rank *r = &s->ranks[i];
        if (!(row = table_row(t)))
            return -1;
        snprintf(row[0], 96, "%" PRId64, r->rank);
        snprintf(row[1], 96, "%" PRId64, r->events);
        seconds_text((double)(r->last_ts - r->first_ts) / 1e9, row[2], 96);
        snprintf(row[3], 96, "%" PRId64, r->first_ts);
        seconds_text((double)r->busy_ns / 1e9, row[4], 96);
    }
    table_print(t);
    return 0;
}

/* "-" for a null rank, else its number. */
static void rank_text(char *out, int64_t rank)
{
    if (rank < 0)
        snprintf(out, 96, "-");
    else
        snprintf(out, 96, "%" PRId64, rank);
}

/* The Devices table (query/device_stats.h), none when no device was busy. -1
 * when out of memory. */
static int print_devices_text(const nx_device_stats *ds, text_table *t)
{
    char (*row)[96];
    if (ds->n_devices == 0)
        return 0;
    printf("\nDevices (busy: union of kernel, memcpy and memset time; wall: the rank's trace span)\n");
    t->n_rows = 0;
    t->n_cols = 9;
    static const char *const head[] = {"device", "rank", "busy", "of wall", "idle", "kernels", "kernel time",
                                       "memcpy time", "memset time"};
    if (!(row = table_row(t)))
        return -1;
    for (size_t c = 0; c < 9; c++)
        snprintf(row[c], 96, "%s", head[c]);
    for (size_t i = 0; i < ds->n_devices; i++) {
        const nx_device_stat *d = &ds->devices[i];
        if (!(row = table_row(t)))
            return -1;
        snprintf(row[0], 96, "%s", d->device);
        rank_text(row[1], d->rank);
        seconds_text((double)d->busy_ns / 1e9, row[2], 96);
        snprintf(row[3], 96, "%.2f %%", 100.0 * d->utilization);
        seconds_text((double)d->idle_ns / 1e9, row[4], 96);
        snprintf(row[5], 96, "%" PRId64, d->kernel_count);
        seconds_text((double)d->kernel_ns / 1e9, row[6], 96);
        seconds_text((double)d->memcpy_ns / 1e9, row[7], 96);
        seconds_text((double)d->memset_ns / 1e9, row[8], 96);
    }
    table_print(t);
    return 0;
}

/* The Steps table, none without steps. -1 when out of memory. */
static int print_steps_text(const nx_device_stats *ds, text_table *t)
{
    char (*row)[96];
    if (ds->n_steps == 0)
        return 0;
    printf("\nSteps (device time clipped to each step's window)\n");
    t->n_rows = 0;
    t->n_cols = 9;
    static const char *const head[] = {"step", "rank", "duration", "device busy", "of step", "kernels",
                                       "kernel time", "memcpy time", "memset time"};
    if (!(row = table_row(t)))
        return -1;
    for (size_t c = 0; c < 9; c++)
        snprintf(row[c], 96, "%s", head[c]);
    for (size_t i = 0; i < ds->n_steps; i++) {
        const nx_step_stat *st = &ds->steps[i];
        if (!(row = table_row(t)))
            return -1;
        /* A JAX step's name ("train") does not carry its number: show it. */
        char num[32], name[96];
        int nl = snprintf(num, sizeof num, "%" PRId64, st->step);
        size_t len = strlen(st->name);
        bool numbered = len >= (size_t)nl && strcmp(st->name + len - (size_t)nl, num) == 0;
        snprintf(name, sizeof name, numbered ? "%.80s" : "%.60s (step %s)", st->name, num);
        plain(row[0], 96, name);
        rank_text(row[1], st->rank);
        seconds_text((double)st->duration_ns / 1e9, row[2], 96);
        seconds_text((double)st->gpu_busy_ns / 1e9, row[3], 96);
        if (st->duration_ns > 0)
            snprintf(row[4], 96, "%.2f %%", 100.0 * (double)st->gpu_busy_ns / (double)st->duration_ns);
        else
            snprintf(row[4], 96, "-");
        snprintf(row[5], 96, "%" PRId64, st->kernel_count);
        seconds_text((double)st->kernel_ns / 1e9, row[6], 96);
        seconds_text((double)st->memcpy_ns / 1e9, row[7], 96);
        seconds_text((double)st->memset_ns / 1e9, row[8], 96);
    }
    table_print(t);
    return 0;
}

static int print_system_text(const char *dir, const nx_system_summary *s, const nx_device_stats *ds)
{
    char a[64];
    printf("System profile %s\n\n", dir);
    if (insights_member(dir, false) != 0)
        return -1;
    if (s->rank >= 0)
        printf("  rank       %" PRId64 " (its rows only)\n", s->rank);
    printf("  events     %" PRId64 "\n", s->events);
    if (s->have_wall)
        printf("  wall time  %s (first %" PRId64 " ns, last %" PRId64 " ns)\n", seconds_text((double)s->wall_ns / 1e9, a, sizeof a),
               s->first_ts, s->last_ts);
    else
        printf("  wall time  - (no event has a start and an end)\n");
    text_table t = {0};
    char (*row)[96];
    if (print_devices_text(ds, &t) != 0 || print_steps_text(ds, &t) != 0)
        goto oom;
    if (ranks_member(dir, false) != 0)
        goto oom;
    t.n_rows = 0;
    if (s->n_ranks > 0 && print_ranks_text(s, &t) != 0)
        goto oom;
    t.n_rows = 0;
    printf("\nBusy time per thread (union of its top-level events; on a GPU stream, of its kernels, memcpys and memsets)\n");
    t.n_cols = 4;
    if (!(row = table_row(&t)))
        goto oom;
    snprintf(row[0], 96, "thread");
    snprintf(row[1], 96, "busy");
    snprintf(row[2], 96, "of wall");
    snprintf(row[3], 96, "top-level events");
    for (size_t i = 0; i < s->n_busy; i++) {
        if (!(row = table_row(&t)))
            goto oom;
        plain(row[0], 96, s->busy[i].track);
        seconds_text((double)s->busy[i].busy_ns / 1e9, row[1], 96);
        snprintf(row[2], 96, "%.2f %%", s->busy[i].percent_of_wall);
        snprintf(row[3], 96, "%" PRId64, s->busy[i].top_level);
    }
    table_print(&t);
    printf("\nTop %zu operators by self time\n", s->n_top);
    t.n_rows = 0;
    if (!(row = table_row(&t)))
        goto oom;
    snprintf(row[0], 96, "name");
    snprintf(row[1], 96, "count");
    snprintf(row[2], 96, "self time");
    snprintf(row[3], 96, "total time");
    for (size_t i = 0; i < s->n_top; i++) {
        const nx_system_operator *o = &s->top[i];
        if (!(row = table_row(&t)))
            goto oom;
        plain(row[0], 96, o->name ? o->name : "(null)");
        snprintf(row[1], 96, "%" PRId64, o->count);
        if (o->self_null)
            snprintf(row[2], 96, "-");
        else
            seconds_text((double)o->self_ns / 1e9, row[2], 96);
        if (o->sum_null)
            snprintf(row[3], 96, "-");
        else
            seconds_text((double)o->sum_ns / 1e9, row[3], 96);
    }
    table_print(&t);
    if (s->have_device_list) {
        printf("\nDevice profiles\n");
        t.n_rows = 0;
        t.n_cols = 9;
        if (!(row = table_row(&t)))
            goto oom;
        static const char *const head[] = {"name", "LNC", "physical cores", "total time", "executions", "MFU", "HFU",
                                           "MBU", "CC active time"};
        for (size_t c = 0; c < 9; c++)
            snprintf(row[c], 96, "%s", head[c]);
        for (size_t i = 0; i < s->n_devices; i++) {
            const nx_system_device *d = &s->devices[i];
            if (!(row = table_row(&t)))
                goto oom;
            plain(row[0], 96, d->name);
            if (d->nc_id_ok)
                snprintf(row[1], 96, "%" PRId64, d->nc_id);
            else
                snprintf(row[1], 96, "-");
            if (d->error) {
                for (size_t c = 2; c < 9; c++)
                    snprintf(row[c], 96, "-");
                continue;
            }
            if (d->cores_ok)
                snprintf(row[2], 96, "%" PRId64, d->physical_cores);
            else
                snprintf(row[2], 96, "-");
            opt_text(row[3], 96, d->total_time_s, true);
            snprintf(row[4], 96, "%" PRId64, d->executions);
            opt_text(row[5], 96, d->mfu, false);
            opt_text(row[6], 96, d->hfu, false);
            opt_text(row[7], 96, d->mbu, false);
            opt_text(row[8], 96, d->cc_active_s, true);
        }
        table_print(&t);
        /* Errors are long: one line per device profile that could not be read, below the table. */
        for (size_t i = 0; i < s->n_devices; i++) {
            const nx_system_device *d = &s->devices[i];
            char name[96];
            plain(name, sizeof name, d->name);
            if (d->error)
                printf("  %s: error: %s\n", name, d->error);
        }
    }
    free(t.cells);
    return 0;
oom:
    free(t.cells);
    fprintf(stderr, "nxprof summary: out of memory\n");
    return -1;
}

static void json_opt(const char *name, nx_opt_f64 v)
{
    printf(",\"%s\":", name);
    if (v.ok)
        nx_out_json_real(stdout, v.v, v.is_double);
    else
        fputs("null", stdout);
}

static int print_system_json(const char *dir, const nx_system_summary *s, const nx_device_stats *ds)
{
    printf("{\"profile\":");
    nx_out_json_string(stdout, dir, strlen(dir));
    printf(",\"kind\":\"system\",\"rank\":");
    if (s->rank >= 0)
        printf("%" PRId64, s->rank);
    else
        fputs("null", stdout);
    printf(",\"events\":%" PRId64 ",\"wall\":", s->events);
    if (s->have_wall)
        printf("{\"first_ts\":%" PRId64 ",\"last_ts\":%" PRId64 ",\"duration_ns\":%" PRId64 "}", s->first_ts,
               s->last_ts, s->wall_ns);
    else
        fputs("null", stdout);
    printf(",\"threads\":[");
    for (size_t i = 0; i < s->n_busy; i++) {
        printf(i ? ",\n{\"thread\":" : "\n{\"thread\":");
        nx_out_json_string(stdout, s->busy[i].track, strlen(s->busy[i].track));
        printf(",\"busy_ns\":%" PRId64 ",\"top_level_events\":%" PRId64 ",\"percent_of_wall\":", s->busy[i].busy_ns,
               s->busy[i].top_level);
        nx_out_json_real(stdout, s->busy[i].percent_of_wall, true);
        putchar('}');
    }
    printf("],\"ranks\":[");
    for (size_t i = 0; i < s->n_ranks; i++) {
        const nx_system_rank *r = &s->ranks[i];
        printf("%s{\"rank\":%" PRId64 ",\"events\":%" PRId64 ",\"first_ts\":%" PRId64 ",\"last_ts\":%" PRId64
               ",\"busy_ns\":%" PRId64 "}",
               i ? ",\n" : "\n", r->rank, r->events, r->first_ts, r->last_ts, r->busy_ns);
    }
    printf("],\"top_operators\":[");
    for (size_t i = 0; i < s->n_top; i++) {
        const nx_system_operator *o = &s->top[i];
        printf(i ? ",\n{\"name\":" : "\n{\"name\":");
        if (o->name)
            nx_out_json_string(stdout, o->name, strlen(o->name));
        else
            fputs("null", stdout);
        printf(",\"count\":%" PRId64, o->count);
        if (o->sum_null)
            fputs(",\"sum_duration_ns\":null", stdout);
        else
            printf(",\"sum_duration_ns\":%" PRId64, o->sum_ns);
        if (o->self_null)
            fputs(",\"sum_self_ns\":null}", stdout);
        else
            printf(",\"sum_self_ns\":%" PRId64 "}", o->self_ns);
    }
    printf("],");
    nx_strbuf b = NX_STRBUF_INIT;
    nx_device_stats_json(ds, false, &b);
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        fprintf(stderr, "nxprof summary: out of memory\n");
        return -1;
    }
    fwrite(b.data, 1, b.len, stdout);
    nx_strbuf_free(&b);
    if (ranks_member(dir, true) != 0 || insights_member(dir, true) != 0)
        return -1;
    printf(",\"device_profiles\":");
    if (!s->have_device_list) {
        fputs("null}\n", stdout);
        return 0;
    }
    putchar('[');
    for (size_t i = 0; i < s->n_devices; i++) {
        const nx_system_device *d = &s->devices[i];
        printf(i ? ",\n{\"name\":" : "\n{\"name\":");
        nx_out_json_string(stdout, d->name, strlen(d->name));
        printf(",\"dir\":");
        if (d->dir)
            nx_out_json_string(stdout, d->dir, strlen(d->dir));
        else
            fputs("null", stdout);
        if (d->nc_id_ok)
            printf(",\"nc_id\":%" PRId64, d->nc_id);
        else
            fputs(",\"nc_id\":null", stdout);
        if (d->cores_ok)
            printf(",\"physical_cores\":%" PRId64, d->physical_cores);
        else
            fputs(",\"physical_cores\":null", stdout);
        json_opt("total_time_s", d->total_time_s);
        if (d->error)
            fputs(",\"executions\":null", stdout);
        else
            printf(",\"executions\":%" PRId64, d->executions);
        json_opt("mfu_estimated_percent", d->mfu);
        json_opt("hfu_estimated_percent", d->hfu);
        json_opt("mbu_estimated_percent", d->mbu);
        json_opt("cc_op_active_time_s", d->cc_active_s);
        printf(",\"error\":");
        if (d->error)
            nx_out_json_string(stdout, d->error, strlen(d->error));
        else
            fputs("null", stdout);
        putchar('}');
    }
    printf("]}\n");
    return 0;
}

static int system_summary_print(const char *profile_dir, int64_t rank, bool profiler_rows, bool json)
{
    nx_system_summary s;
    nx_device_stats ds;
    nx_error err = {0};
    int rc = nx_system_summary_read_rows(profile_dir, rank, profiler_rows, &s, &err);
    if (rc != 0) {
        fprintf(stderr, "nxprof summary: %s\n", rc > 0 ? "the profile has no SystemProfileEvents table" : err.msg);
        return NX_EXIT_ERROR;
    }
    if (nx_device_stats_read(profile_dir, rank, &ds, &err) != 0) {
        fprintf(stderr, "nxprof summary: %s\n", err.msg);
        nx_system_summary_free(&s);
        return NX_EXIT_ERROR;
    }
    if (s.note[0])
        fprintf(stderr, "nxprof summary: note: SystemProfileEvents: depth and self time computed from the table; its "
                        "timeline index was not used (%s)\n", s.note);
    rc = NX_EXIT_OK;
    if (json ? print_system_json(profile_dir, &s, &ds) != 0 : print_system_text(profile_dir, &s, &ds) != 0)
        rc = NX_EXIT_ERROR;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nxprof summary: writing the output failed\n");
        rc = NX_EXIT_ERROR;
    }
    nx_system_summary_free(&s);
    nx_device_stats_free(&ds);
    return rc;
}

int nx_summary_print(const char *profile_dir, int64_t rank, bool profiler_rows, bool json)
{
    if (nx_profile_is_system(profile_dir))
        return system_summary_print(profile_dir, rank, profiler_rows, json);
    if (rank >= 0) {
        fprintf(stderr, "nxprof summary: --rank: %s is a device profile; ranks are a system profile's\n", profile_dir);
        return NX_EXIT_USAGE;
    }

    nx_device_summary d;
    nx_error err = {0};
    if (nx_device_summary_read(profile_dir, TOP_OPCODES, &d, &err) < 0) {
        fprintf(stderr, "nxprof summary: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    int rc = d.summary.present && d.have_opcodes ? NX_EXIT_OK : NX_EXIT_ERROR;
    if (d.summary.present || d.have_opcodes) {
        if (json)
            print_json(profile_dir, &d);
        else
            print_text(profile_dir, &d);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "nxprof summary: writing the output failed\n");
            nx_device_summary_free(&d);
            return NX_EXIT_ERROR;
        }
    }
    if (d.summary.rows > 1)
        fprintf(stderr, "nxprof summary: Summary has %" PRId64 " rows; showing the first\n", d.summary.rows);
    if (!d.summary.present)
        fprintf(stderr, "nxprof summary: profile %s has no Summary table (no Summary.parquet)\n", profile_dir);
    if (!d.have_opcodes)
        fprintf(stderr, "nxprof summary: profile %s has no OpcodeSummary table (no OpcodeSummary.parquet)\n",
                profile_dir);
    nx_device_summary_free(&d);
    return rc;
}

static int summary_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"rank", required_argument, NULL, 'r'},
        {"profiler-rows", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, profiler_rows = false;
    int64_t rank = -1;
    int c;
    while ((c = getopt_long(argc, argv, ":f:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (nx_parse_rank(optarg, &rank) != 0)
                return nx_usage_error("summary", "--rank '%s' is not a rank (0 or a positive integer)", optarg);
            break;
        case 'P':
            profiler_rows = true;
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0)
                json = true;
            else if (strcmp(optarg, "text") == 0)
                json = false;
            else
                return nx_usage_error("summary", "unknown format '%s' (text or json)", optarg);
            break;
        case 'h':
            summary_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("summary", c, argv);
        }
    }
    if (optind >= argc)
        return nx_usage_error("summary", "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error("summary", "unexpected argument '%s'", argv[optind + 1]);
    if (!*argv[optind])
        return nx_usage_error("summary", "PROFILE_DIR must not be empty");
    return nx_summary_print(argv[optind], rank, profiler_rows, json);
}

const nx_command nx_cmd_summary = {
    .name = "summary",
    .summary = "show a profile's Summary and its top opcodes (OpcodeSummary)",
    .run = summary_run,
    .help = summary_help,
};
