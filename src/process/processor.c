/*
 * processor.c — `nxprof process` (see processor.h): discovery, the device and
 * system pipelines, the Warning and SchemaFields tables, atomic publish.
 */
#include "process/processor.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "process/device_pipeline.h"
#include "process/profile_output.h"
#include "process/row.h"
#include "process/summary_table.h"
#include "process/system_tables.h"
#include "process/table_writer.h"

/* Warning rows kept; beyond this only a count (a broken capture can warn per record). */
#define MAX_WARNING_ROWS 100000u

typedef struct warning_list {
    nx_process_stats *st;
    char **message, **category;
    size_t n, cap;
    uint64_t dropped;
    bool oom;
} warning_list;

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void on_warning(void *ctx, const char *path, uint64_t where, const char *category, const char *message)
{
    warning_list *wl = ctx;
    wl->st->warnings++;
    char text[1024];
    if (where == NX_CAP_NOWHERE)
        snprintf(text, sizeof text, "%s: %s", path, message);
    else
        snprintf(text, sizeof text, "%s (at %" PRIu64 "): %s", path, where, message);
    fprintf(stderr, "nxprof process: warning: %s: %s\n", category, text);
    if (wl->n >= MAX_WARNING_ROWS) {
        wl->dropped++;
        return;
    }
    if (wl->n == wl->cap) {
        size_t cap = wl->cap ? wl->cap * 2 : 64;
        char **m = realloc(wl->message, cap * sizeof *m);
        if (m)
            wl->message = m;
        char **c = realloc(wl->category, cap * sizeof *c);
        if (c)
            wl->category = c;
        if (!m || !c) {
            wl->oom = true;
            return;
        }
        wl->cap = cap;
    }
    char *dm = dup_text(text), *dc = dup_text(category);
    if (!dm || !dc) {
        free(dm);
        free(dc);
        wl->oom = true;
        return;
    }
    wl->message[wl->n] = dm;
    wl->category[wl->n] = dc;
    wl->n++;
}

static void warning_list_free(warning_list *wl)
{
    for (size_t i = 0; i < wl->n; i++) {
        free(wl->message[i]);
        free(wl->category[i]);
    }
    free(wl->message);
    free(wl->category);
}

static int write_warnings(const warning_list *wl, const nx_table_dest *dest, unsigned *tables, nxpq_error *err)
{
    if (wl->oom) {
        snprintf(err->msg, sizeof err->msg, "Warning: out of memory keeping the capture's warnings");
        return -1;
    }
    if (wl->n == 0)
        return 0;
    nx_row r;
    if (nx_row_open(&r, dest, "Warning", err) != 0)
        return -1;
    size_t c_msg = nx_row_col(&r, "message"), c_cat = nx_row_col(&r, "category");
    char more[128];
    snprintf(more, sizeof more, "%" PRIu64 " further warnings not kept (limit %u)", wl->dropped, MAX_WARNING_ROWS);
    for (size_t i = 0; i <= wl->n; i++) {
        if (i == wl->n && wl->dropped == 0)
            break;
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_msg, i < wl->n ? wl->message[i] : more);
        nx_row_str(&r, c_cat, i < wl->n ? wl->category[i] : "warnings_truncated");
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

/* ------------------------------------------------------------ progress -- */

typedef struct progress_line {
    struct timespec t0;
    bool shown;
} progress_line;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress_line *pl = ctx;
    double el = seconds_since(&pl->t0);
    double rate = el > 0 ? (double)done / el : 0;
    double pct = total ? 100.0 * (double)done / (double)total : 100.0;
    double eta = rate > 0 && total > done ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\rprocess: %5.1f%%  %" PRIu64 "/%" PRIu64 " records  %.2fM records/s  ETA %.0fs   ", pct,
            done, total, rate / 1e6, eta);
    pl->shown = true;
}

/* ------------------------------------------------------------ the run -- */

static void set_err(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
}

int nx_process_run(const nx_process_options *o, nx_process_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    warning_list wl = {.st = st};
    nx_cap_warner warn = {.fn = on_warning, .ctx = &wl};
    nx_capture cap = {0};
    nx_device_pipeline *dev = NULL;
    nx_profile_output out = {0};
    nxpq_error perr = {{0}};
    nx_cap_error cerr = {{0}};
    char *final_dir = NULL;
    bool capture_open = false;
    int rc = -1;
    progress_line pl = {.shown = false};
    nx_summary_hold summary = {0};   /* finished last (summary_table.h) */
    _Atomic uint64_t rows_written = 0;
    clock_gettime(CLOCK_MONOTONIC, &pl.t0);

    if (nx_profile_dir_resolve(o->data_path, o->display_name, o->output_file, &final_dir, &perr) != 0) {
        set_err(err, errlen, perr.msg);
        goto done;
    }
    if (nx_capture_discover(o->capture_dir, &cap, &warn, &cerr) != 0) {
        set_err(err, errlen, cerr.msg);
        goto done;
    }
    capture_open = true;
    nx_capture empty_device = cap;
    if (o->ignore_device_profile)
        empty_device.n_sessions = 0;
    if (nx_device_pipeline_open(&empty_device, &warn, &dev, &cerr) != 0) {
        set_err(err, errlen, cerr.msg);
        goto done;
    }
    nxpq_writer_options wopts;
    nxpq_writer_options_init(&wopts);
    wopts.threads = o->jobs;
    /* A profile has dozens of tables open at once, each holding its current row
     * group's encoded pages: 256Ki-row groups bound that (about 1/4 of the codec
     * default) and still give readers large, prunable groups. */
    wopts.row_group_rows = 262144;
    wopts.row_group_bytes = 32u << 20;
    /* ZSTD's fastest regular setting: on a 10M-record profile 3-5% less CPU than
     * level 1 for 2% more bytes (docs/benchmarks.md). */
    wopts.compression_level = -1;
    nx_process_ctx ctx = {.o = o, .warn = &warn, .summary_hold = &summary};
    nx_device_pipeline_describe(dev, &ctx);
    st->programs = ctx.n_progs;
    st->traces = ctx.n_traces;
    /* The system half runs when the capture has system files and it is not
     * switched off; a run must have at least one half left. */
    bool system = !o->ignore_system_profile && nx_system_capture_present(&cap);
    if (ctx.n_traces == 0 && !system) {
        snprintf(err, errlen, "%s: nothing to process: no device trace%s and no system profile%s", o->capture_dir,
                 o->ignore_device_profile ? " (--ignore-device-profile)" : "",
                 o->ignore_system_profile ? " (--ignore-system-profile)" : "");
        goto done;
    }
    if (nx_profile_output_begin(&out, final_dir, &perr) != 0) {
        set_err(err, errlen, perr.msg);
        goto done;
    }
    ctx.dest = (nx_table_dest){
        .dir = out.tmp_dir, .max_rows = o->max_rows_per_file, .base = &wopts, .rows_written = &rows_written};
    if (ctx.n_traces > 0 && nx_device_pipeline_run(dev, &ctx, o->progress ? on_progress : NULL, &pl, &st->tables,
                                                   &st->instructions, err, errlen) != 0)
        goto done;
    nx_system_result sys = {0};
    if (system && nx_system_tables_write(&cap, &ctx, &warn, &st->tables, &sys, err, errlen) != 0)
        goto done;
    /* Metadata is always written; without a device trace it comes from the system data. */
    if (ctx.n_traces == 0 && nx_system_write_fallback_metadata(&ctx, &sys, &st->tables, &perr) != 0) {
        set_err(err, errlen, perr.msg);
        goto done;
    }
    if (write_warnings(&wl, &ctx.dest, &st->tables, &perr) != 0 ||
        nx_write_schema_fields(out.tmp_dir, &wopts, &perr) != 0) {
        set_err(err, errlen, perr.msg);
        goto done;
    }
    st->tables++;   /* SchemaFields */
    /* Summary last: its total_row_count counts every other table's rows. */
    if (nx_summary_hold_complete(&summary, atomic_load(&rows_written) + nx_schema_fields_row_count(), &st->tables,
                                 &perr) != 0 ||
        nx_profile_output_publish(&out, &perr) != 0) {
        set_err(err, errlen, perr.msg);
        goto done;
    }
    st->profile_dir = final_dir;
    final_dir = NULL;
    rc = 0;
done:
    if (pl.shown)
        fputc('\n', stderr);
    nx_summary_hold_discard(&summary);
    if (rc != 0)
        nx_profile_output_abort(&out);
    free(final_dir);
    nx_device_pipeline_close(dev);
    if (capture_open)
        nx_capture_free(&cap);
    warning_list_free(&wl);
    return rc;
}

void nx_process_stats_free(nx_process_stats *st)
{
    free(st->profile_dir);
    st->profile_dir = NULL;
}
