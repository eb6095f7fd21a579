/*
 * processor.c — `nxprof process` (see processor.h): discovery, the plan of
 * profiles (profile_plan.h), one job per profile run on a pool of threads (a
 * device pipeline per device trace, the system tables per session), then the
 * system profiles' DeviceProfileList and Metadata, every profile's Warning and
 * SchemaFields, and one publish of the whole set.
 */
#include "process/processor.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "process/device/device_pipeline.h"
#include "profile/data_path.h"
#include "profile/profile_layout.h"
#include "profile/profile_output.h"
#include "profile/profile_set.h"
#include "process/profile_plan.h"
#include "process/row.h"
#include "process/device/summary_table.h"
#include "process/thread_name.h"
#include "process/system/system_tables.h"
#include "profile/table_writer.h"
#include "util/run_control.h"

/* Warning rows kept; beyond this only a count (a broken capture can warn per record). */
#define MAX_WARNING_ROWS 100000u

typedef struct warning_list {
    uint64_t count;                  /* every warning, kept or not */
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

/* Keeps one warning's text for its profile's Warning table. -1 when out of memory. */
static int keep_warning(warning_list *wl, const char *text, const char *category)
{
    if (wl->n >= MAX_WARNING_ROWS) {
        wl->dropped++;
        return 0;
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
            return -1;
        }
        wl->cap = cap;
    }
    char *dm = dup_text(text), *dc = dup_text(category);
    if (!dm || !dc) {
        free(dm);
        free(dc);
        wl->oom = true;
        return -1;
    }
    wl->message[wl->n] = dm;
    wl->category[wl->n] = dc;
    wl->n++;
    return 0;
}

static void on_warning(void *ctx, const char *path, uint64_t where, const char *category, const char *message)
{
    warning_list *wl = ctx;
    wl->count++;
    char text[1024];
    if (where == NX_CAP_NOWHERE)
        snprintf(text, sizeof text, "%s: %s", path, message);
    else
        snprintf(text, sizeof text, "%s (at %" PRIu64 "): %s", path, where, message);
    fprintf(stderr, "nxprof process: warning: %s: %s\n", category, text);
    keep_warning(wl, text, category);
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

static int write_warnings(const warning_list *wl, const nx_table_dest *dest, unsigned *tables, nx_error *err)
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

/* One line for the whole run: the records of every device job together. */
typedef struct progress_line {
    pthread_mutex_t lock;
    struct timespec t0;
    struct job *jobs;
    size_t n_jobs;
    uint64_t total;
    bool shown;
} progress_line;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ------------------------------------------------------------ the jobs -- */

/* One profile being built. Everything a job writes is its own until the pool
 * has joined, apart from `done` (read by the progress line). */
typedef struct job {
    const nx_planned_profile *pp;
    struct run *run;
    nx_process_options opts;         /* the run's, display_name = the profile's name */
    char *build_dir;                 /* where its tables go */
    warning_list wl;
    nx_cap_warner warn;
    /* device: the pipeline of its one trace; system: of the session's traces,
     * opened for their headers and hardware facts only */
    nx_device_pipeline *dev;
    nx_capture view;                 /* what dev (and the system tables) read */
    nx_cap_session ses;              /* device: the session cut down to prog */
    nx_cap_program_file prog;        /* device: the program cut down to its trace */
    nx_summary_hold summary;         /* finished last (summary_table.h) */
    _Atomic uint64_t rows_written;
    _Atomic uint64_t done;           /* records dispatched so far */
    uint64_t records;                /* records in its traces */
    unsigned tables;
    uint64_t instructions;
    nx_system_result sys;
    bool any;                        /* device: the trace's span, once run */
    int64_t first_ns, last_ns;
    int rc;
    nx_error err;
} job;

typedef struct run {
    const nx_process_options *o;
    const nx_capture *cap;
    nx_profile_plan plan;
    job *jobs;
    nx_profile_output *outs;         /* --output-file: one per profile not nested in another */
    size_t n_outs;
    nx_profile_set set;              /* --data-path: the run's set of profiles */
    nxpq_writer_options wopts;
    _Atomic size_t next;             /* the next job a worker takes */
    progress_line pl;
} run;

/* SIGINT/SIGTERM stop the run cleanly, whatever phase it is in (every long
 * loop checks util/run_control.h's flag), so no temporary directory is left
 * behind; SIGKILL is handled by the next run's sweep (profile_output.h). */
static void on_stop_signal(int sig)
{
    nx_run_stop_signal(sig);
}

/* Fills err and returns -1 when the run was asked to stop; else 0. */
static int check_stop(nx_error *err)
{
    int stopped = nx_run_stopped();
    if (!stopped)
        return 0;
    nx_run_stopped_message(stopped, err);
    return -1;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)total;
    job *j = ctx;
    progress_line *pl = &j->run->pl;
    atomic_store(&j->done, done);
    pthread_mutex_lock(&pl->lock);
    uint64_t sum = 0;
    for (size_t i = 0; i < pl->n_jobs; i++)
        sum += atomic_load(&pl->jobs[i].done);
    double el = seconds_since(&pl->t0);
    double rate = el > 0 ? (double)sum / el : 0;
    double pct = pl->total ? 100.0 * (double)sum / (double)pl->total : 100.0;
    double eta = rate > 0 && pl->total > sum ? (double)(pl->total - sum) / rate : 0;
    fprintf(stderr, "\rprocess: %5.1f%%  %" PRIu64 "/%" PRIu64 " records  %.2fM records/s  ETA %.0fs   ", pct, sum,
            pl->total, rate / 1e6, eta);
    pl->shown = true;
    pthread_mutex_unlock(&pl->lock);
}

static nx_process_ctx job_ctx(job *j)
{
    nx_process_ctx ctx = {.o = &j->opts, .warn = &j->warn, .summary_hold = &j->summary, .cancel = nx_run_stop_flag()};
    nx_device_pipeline_describe(j->dev, &ctx);
    ctx.dest = (nx_table_dest){.dir = j->build_dir,
                               .max_rows = j->run->o->max_rows_per_file,
                               .base = &j->run->wopts,
                               .rows_written = &j->rows_written};
    return ctx;
}

/* Warning and SchemaFields: the last tables of every profile but Summary. */
static int write_common_tables(job *j, const nx_process_ctx *ctx)
{
    nx_error perr = {0};
    if (write_warnings(&j->wl, &ctx->dest, &j->tables, &perr) != 0 ||
        nx_write_schema_fields(j->build_dir, &j->run->wopts, &perr) != 0) {
        j->err = perr;
        return -1;
    }
    j->tables++;   /* SchemaFields */
    return 0;
}

static int run_device_job(job *j)
{
    nx_process_ctx ctx = job_ctx(j);
    nx_run_phase("device");
    if (nx_device_pipeline_run(j->dev, &ctx, j->run->o->progress ? on_progress : NULL, j, &j->tables,
                               &j->instructions, &j->err) != 0)
        return -1;
    j->any = ctx.traces[0].any;
    j->first_ns = ctx.traces[0].first_ns;
    j->last_ns = ctx.traces[0].last_ns;
    /* Done with the trace: its reorder heap and buffers go before the next job
     * starts (ctx's program and traces are not used past this point). */
    nx_device_pipeline_close(j->dev);
    j->dev = NULL;
    ctx.progs = NULL, ctx.n_progs = 0, ctx.traces = NULL, ctx.n_traces = 0;
    if (write_common_tables(j, &ctx) != 0)
        return -1;
    /* Summary last: its total_row_count counts every other table's rows. */
    nx_error perr = {0};
    if (nx_summary_hold_complete(&j->summary, atomic_load(&j->rows_written) + nx_schema_fields_row_count(),
                                 &j->tables, &perr) != 0) {
        j->err = perr;
        return -1;
    }
    return 0;
}

/* DeviceProfileList, one row per device profile of the session (they follow
 * the system profile in the plan, in the order of the session's traces):
 *   device_profile_name  the device profile's name (its directory without "@latest");
 *   instance_id          the trace header's, or the session directory's when that is empty;
 *   process_id, nc_id    the header's pid and neuroncore_idx;
 *   session_id, model_id the header's values, null when -1. */
static int write_device_profile_list(job *j, const nx_process_ctx *ctx, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "DeviceProfileList", err) != 0)
        return -1;
    size_t c_name = nx_row_col(&r, "device_profile_name"), c_inst = nx_row_col(&r, "instance_id"),
           c_pid = nx_row_col(&r, "process_id"), c_nc = nx_row_col(&r, "nc_id"),
           c_ses = nx_row_col(&r, "session_id"), c_model = nx_row_col(&r, "model_id");
    const nx_planned_profile *devices = j->pp + 1;
    for (size_t i = 0; i < ctx->n_traces; i++) {
        const nx_trace_header *h = &ctx->traces[i].hdr;
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_name, devices[i].name);
        nx_row_str(&r, c_inst, h->instance_id[0] ? h->instance_id : j->ses.instance_id);
        nx_row_i64(&r, c_pid, h->pid);
        nx_row_i64(&r, c_nc, h->neuroncore_idx);
        nx_row_opt_i64(&r, c_ses, h->session_id);
        nx_row_opt_i64(&r, c_model, h->model_id);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, &j->tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

/* The system tables and DeviceProfileList; Metadata, Warning and SchemaFields
 * wait for the device jobs (finish_system_job). */
static int run_system_job(job *j)
{
    nx_process_ctx ctx = job_ctx(j);
    nx_run_phase("system");
    if (j->pp->system_data &&
        nx_system_tables_write(&j->view, &ctx, &j->warn, &j->tables, &j->sys, &j->err) != 0)
        return -1;
    nx_error perr = {0};
    if (ctx.n_traces > 0 && write_device_profile_list(j, &ctx, &perr) != 0) {
        j->err = perr;
        return -1;
    }
    return 0;
}

/* Metadata from the system data's span and its device profiles' (their traces
 * are read now), then Warning and SchemaFields. */
static int finish_system_job(job *j)
{
    nx_process_ctx ctx = job_ctx(j);
    nx_system_result span = j->sys;
    for (size_t i = 1; i <= j->pp->n_devices; i++) {
        const job *d = j + i;
        if (!d->any)
            continue;
        if (!span.any || d->first_ns < span.first_ns)
            span.first_ns = d->first_ns;
        if (!span.any || d->last_ns > span.last_ns)
            span.last_ns = d->last_ns;
        span.any = true;
    }
    nx_error perr = {0};
    if (nx_system_write_fallback_metadata(&ctx, &span, &j->tables, &perr) != 0) {
        j->err = perr;
        return -1;
    }
    return write_common_tables(j, &ctx);
}

/* The worker reads, decodes and merges its job's trace (or writes its system
 * tables); the threads it starts for the job's tables inherit the name. */
static void name_worker(const nx_planned_profile *pp)
{
    char name[64];
    if (pp->kind == NX_PROFILE_SYSTEM)
        snprintf(name, sizeof name, "system");
    else
        snprintf(name, sizeof name, "dev:%" PRIu32 ".%" PRIu32, pp->trace->device, pp->trace->core);
    nx_thread_name(pthread_self(), name);
}

static void *worker(void *arg)
{
    run *r = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->plan.n)
            return NULL;
        job *j = &r->jobs[i];
        name_worker(j->pp);
        if (check_stop(&j->err) != 0)
            j->rc = -1;   /* stopped before it began */
        else
            j->rc = j->pp->kind == NX_PROFILE_DEVICE ? run_device_job(j) : run_system_job(j);
        if (j->rc != 0)
            nx_run_stop_failed();
    }
}

/* ------------------------------------------------------------ setting up -- */

/* Discovery's warnings go to the first profile of the session they name (by
 * directory), else to the run's first profile. */
static int hand_over_capture_warnings(run *r, const warning_list *disc)
{
    for (size_t w = 0; w < disc->n; w++) {
        size_t to = 0;
        for (size_t i = 0; i < r->plan.n; i++) {
            const char *dir = r->cap->sessions[r->plan.p[i].session].dir;
            size_t len = strlen(dir);
            if (strncmp(disc->message[w], dir, len) == 0 && disc->message[w][len] == '/') {
                to = i;
                break;
            }
        }
        if (keep_warning(&r->jobs[to].wl, disc->message[w], disc->category[w]) != 0)
            return -1;
    }
    r->jobs[0].wl.dropped += disc->dropped;
    return 0;
}

static int open_job(run *r, size_t i, nx_error *err)
{
    job *j = &r->jobs[i];
    const nx_planned_profile *pp = &r->plan.p[i];
    j->pp = pp;
    j->run = r;
    j->opts = *r->o;
    j->opts.display_name = pp->name;
    j->warn = (nx_cap_warner){.fn = on_warning, .ctx = &j->wl};
    j->ses = r->cap->sessions[pp->session];
    nx_error cerr = {0};
    nx_cap_warner quiet = {.fn = NULL, .ctx = NULL};
    const nx_cap_warner *warn = &j->warn;
    if (pp->kind == NX_PROFILE_DEVICE) {
        j->prog = *pp->program;
        j->prog.traces = (nx_cap_trace_file *)pp->trace;
        j->prog.n_traces = 1;
        j->ses.programs = &j->prog;
        j->ses.n_programs = 1;
    } else {
        if (r->o->ignore_device_profile)
            j->ses.n_programs = 0;
        warn = &quiet;   /* each trace's own device job reports its problems */
    }
    j->view = (nx_capture){.root = r->cap->root, .sessions = &j->ses, .n_sessions = 1};
    if (nx_device_pipeline_open(&j->view, warn, &j->dev, &cerr) != 0) {
        nx_error_set(err, "%s", cerr.msg);
        return -1;
    }
    if (pp->kind == NX_PROFILE_DEVICE)
        j->records = nx_device_pipeline_total_records(j->dev);
    return 0;
}

/* Starts every output (each target checked, and kept apart from the capture,
 * before any profile is built): the data path's set of profiles, or one
 * nx_profile_output per --output-file profile; and the build directory of each job. */
static int begin_outputs(run *r, nx_error *err)
{
    nx_error perr = {0};
    r->outs = calloc(r->plan.n + 1, sizeof *r->outs);
    if (!r->outs) {
        nx_error_set(err, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < r->plan.n; i++)
        if (!r->plan.p[i].nested && nx_output_apart_from_capture(r->o->capture_dir, r->plan.p[i].dir, &perr) != 0)
            goto fail;
    char *root = NULL;
    if (!r->o->output_file && (nx_data_path_root(r->o->data_path, &root, &perr) != 0 ||
                               nx_profile_set_begin(&r->set, root, r->o->display_name, &perr) != 0)) {
        free(root);
        goto fail;
    }
    free(root);
    for (size_t i = 0; i < r->plan.n; i++) {
        const nx_planned_profile *pp = &r->plan.p[i];
        job *j = &r->jobs[i];
        if (!pp->nested && !r->o->output_file) {
            if (nx_profile_set_add(&r->set, pp->name, &j->build_dir, &perr) != 0)
                goto fail;
        } else if (!pp->nested) {
            if (nx_profile_output_begin(&r->outs[r->n_outs], pp->dir, &perr) != 0)
                goto fail;
            j->build_dir = strdup(r->outs[r->n_outs++].tmp_dir);
        } else {
            const char *sys_build = r->jobs[pp->system].build_dir;
            char *folder = malloc(strlen(sys_build) + sizeof NX_LAYOUT_DEVICES_DIR + 1);
            if (folder)
                sprintf(folder, "%s/%s", sys_build, NX_LAYOUT_DEVICES_DIR);
            if (folder && mkdir(folder, 0777) != 0 && errno != EEXIST) {
                snprintf(perr.msg, sizeof perr.msg, "cannot create directory %s: %s", folder, strerror(errno));
                free(folder);
                goto fail;
            }
            j->build_dir = folder ? malloc(strlen(folder) + strlen(pp->name) + 2) : NULL;
            if (j->build_dir)
                sprintf(j->build_dir, "%s/%s", folder, pp->name);
            free(folder);
            if (j->build_dir && nx_profile_dir_create(j->build_dir, &perr) != 0)
                goto fail;
        }
        if (!j->build_dir) {
            snprintf(perr.msg, sizeof perr.msg, "out of memory");
            goto fail;
        }
    }
    return 0;
fail:
    nx_error_set(err, "%s", perr.msg);
    return -1;
}

/* ------------------------------------------------------------ the run -- */

/* Profiles built at once: --jobs, else one per four CPUs. A device pipeline keeps
 * four to five CPUs busy by itself (its reader, the sinks' threads, the table
 * writers and the page encoders): on 16 CPUs 4 jobs already saturate them and
 * 8 or 16 are no faster, only larger (docs/benchmarks.md, "Cores"). */
static int worker_count(const nx_process_options *o, size_t n_jobs)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = o->jobs > 0 ? (size_t)o->jobs : (size_t)(cpus >= 8 ? cpus / 4 : 1);
    return (int)(n < n_jobs ? n : n_jobs);
}

static int run_pool(run *r, int workers, nx_error *err)
{
    pthread_t *tid = calloc((size_t)workers, sizeof *tid);
    if (!tid) {
        nx_error_set(err, "out of memory");
        return -1;
    }
    int started = 0;
    for (; started < workers; started++)
        if (pthread_create(&tid[started], NULL, worker, r) != 0)
            break;
    if (started == 0)
        worker(r);   /* no thread to be had: this one does the work */
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    return 0;
}

/* The first real failure, in plan order (a job stopped because another failed
 * says so; the cause is elsewhere). */
static int first_failure(const run *r, nx_error *err)
{
    const job *first = NULL;
    for (size_t i = 0; i < r->plan.n; i++) {
        const job *j = &r->jobs[i];
        if (j->rc == 0)
            continue;
        if (!first || (strncmp(first->err.msg, "stopped:", 8) == 0 && strncmp(j->err.msg, "stopped:", 8) != 0))
            first = j;
    }
    if (!first)
        return 0;
    if (err)
        *err = first->err;
    if (r->plan.n > 1)
        nx_error_prefix(err, "profile %s", first->pp->name);
    return -1;
}

static int fill_stats(const run *r, nx_process_stats *st)
{
    st->profiles = calloc(r->plan.n + 1, sizeof *st->profiles);
    if (!st->profiles)
        return -1;
    for (size_t i = 0; i < r->plan.n; i++) {
        const job *j = &r->jobs[i];
        const nx_planned_profile *pp = j->pp;
        nx_process_profile *p = &st->profiles[st->n_profiles++];
        p->system = pp->kind == NX_PROFILE_SYSTEM;
        p->n_devices = pp->n_devices;
        if (!p->system) {
            p->device = pp->trace->device;
            p->core = pp->trace->core;
            p->in_system = pp->system != SIZE_MAX;
            st->traces++;
        }
        if (!(p->dir = strdup(pp->dir)) || !(p->name = strdup(pp->name)))
            return -1;
        st->tables += j->tables;
        st->instructions += j->instructions;
        st->warnings += j->wl.count;
    }
    for (size_t k = 0; k < r->cap->n_sessions; k++)
        st->programs += r->o->ignore_device_profile ? 0 : r->cap->sessions[k].n_programs;
    st->profile_dir = strdup(st->profiles[0].dir);
    return st->profile_dir ? 0 : -1;
}

int nx_process_run(const nx_process_options *o, nx_process_stats *st, nx_error *err)
{
    memset(st, 0, sizeof *st);
    run r = {.o = o};
    warning_list disc = {0};
    nx_cap_warner disc_warn = {.fn = on_warning, .ctx = &disc};
    nx_capture cap = {0};
    nx_error cerr = {0};
    nx_error perr = {0};
    bool capture_open = false;
    int rc = -1;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    nx_run_reset();
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    pthread_mutex_init(&r.pl.lock, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r.pl.t0);

    nx_run_phase("discover");
    if (nx_capture_discover(o->capture_dir, &cap, &disc_warn, &cerr) != 0) {
        nx_error_set(err, "%s", cerr.msg);
        goto done;
    }
    capture_open = true;
    if (check_stop(err) != 0)
        goto done;
    r.cap = &cap;
    if (nx_profile_plan_make(o, &cap, &r.plan, err) != 0)
        goto done;
    if (!(r.jobs = calloc(r.plan.n, sizeof *r.jobs))) {
        nx_error_set(err, "out of memory");
        goto done;
    }
    nx_run_phase("program");
    for (size_t i = 0; i < r.plan.n; i++)
        if (open_job(&r, i, err) != 0 || check_stop(err) != 0)
            goto done;
    if (hand_over_capture_warnings(&r, &disc) != 0) {
        nx_error_set(err, "out of memory keeping the capture's warnings");
        goto done;
    }
    int workers = worker_count(o, r.plan.n);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    nxpq_writer_options_init(&r.wopts);
    /* The CPUs are shared by the jobs running at once: each encodes its pages
     * with its share of them. */
    r.wopts.threads = cpus > workers ? (int)(cpus / workers) : 1;
    /* A profile has dozens of tables open at once, each holding its current row
     * group's encoded pages: 256Ki-row groups bound that (about 1/4 of the codec
     * default) and still give readers large, prunable groups. The bound does not
     * depend on --jobs, so every --jobs writes the same bytes; peak memory grows
     * with the profiles built at once instead (docs/benchmarks.md, "Cores"). */
    r.wopts.row_group_rows = 262144;
    r.wopts.row_group_bytes = 32u << 20;
    /* ZSTD's fastest regular setting: on a 10M-record profile 3-5% less CPU than
     * level 1 for 2% more bytes (docs/benchmarks.md). */
    r.wopts.compression_level = -1;
    r.pl.jobs = r.jobs;
    r.pl.n_jobs = r.plan.n;
    for (size_t i = 0; i < r.plan.n; i++)
        r.pl.total += r.jobs[i].records;
    if (begin_outputs(&r, err) != 0 || run_pool(&r, workers, err) != 0 ||
        first_failure(&r, err) != 0)
        goto done;
    for (size_t i = 0; i < r.plan.n; i++) {
        if (r.plan.p[i].kind == NX_PROFILE_SYSTEM && finish_system_job(&r.jobs[i]) != 0) {
            if (err)
                *err = r.jobs[i].err;
            goto done;
        }
    }
    nx_run_phase("publish");
    if (check_stop(err) != 0)
        goto done;
    if ((o->output_file ? nx_profile_output_publish(r.outs, r.n_outs, &perr)
                        : nx_profile_set_publish(&r.set, &perr)) != 0) {
        r.n_outs = 0;   /* publish removed every temporary directory */
        nx_error_set(err, "%s", perr.msg);
        goto done;
    }
    r.n_outs = 0;
    if (fill_stats(&r, st) != 0) {
        nx_error_set(err, "out of memory");
        nx_process_stats_free(st);
        goto done;
    }
    rc = 0;
done:
    if (r.pl.shown)
        fputc('\n', stderr);
    for (size_t i = 0; r.outs && i < r.n_outs; i++)
        nx_profile_output_abort(&r.outs[i]);
    nx_profile_set_abort(&r.set);
    free(r.outs);
    for (size_t i = 0; r.jobs && i < r.plan.n; i++) {
        nx_summary_hold_discard(&r.jobs[i].summary);
        nx_device_pipeline_close(r.jobs[i].dev);
        warning_list_free(&r.jobs[i].wl);
        free(r.jobs[i].build_dir);
    }
    free(r.jobs);
    nx_profile_plan_free(&r.plan);
    if (capture_open)
        nx_capture_free(&cap);
    warning_list_free(&disc);
    pthread_mutex_destroy(&r.pl.lock);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

void nx_process_stats_free(nx_process_stats *st)
{
    for (size_t i = 0; i < st->n_profiles; i++) {
        free(st->profiles[i].dir);
        free(st->profiles[i].name);
    }
    free(st->profiles);
    free(st->profile_dir);
    st->profiles = NULL;
    st->n_profiles = 0;
    st->profile_dir = NULL;
}
