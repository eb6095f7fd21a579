/*
 * synth.c — nx_synth_run(): the capture's identity (instance, pid, time, all
 * drawn from the seed so output is reproducible), the output directories, the
 * program file (the writer checks it with the reader's rules; tests read every
 * synth file back with the readers), scheduling, the per-core trace writers and
 * the system capture. See synth.h.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture_util.h"
#include "synth/synth_internal.h"

static const char *const PRESET_NAMES[] = {"tiny", "llama-layer"};

const char *nx_synth_preset_name(nx_synth_preset p) { return PRESET_NAMES[p]; }

bool nx_synth_preset_parse(const char *name, nx_synth_preset *out)
{
    for (int i = 0; i < 2; i++)
        if (strcmp(name, PRESET_NAMES[i]) == 0) {
            *out = (nx_synth_preset)i;
            return true;
        }
    return false;
}

uint64_t nx_synth_default_events(nx_synth_preset p) { return p == NX_SYNTH_TINY ? 3000 : 1000000; }
unsigned nx_synth_default_cores(nx_synth_preset p) { (void)p; return 2; }

void nx_synth_stats_free(nx_synth_stats *stats)
{
    free(stats->session_dir);
    stats->session_dir = NULL;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- directories ------------------------------------------------------------------ */

static int mkdir_p(const char *path, nx_error *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return nx_error_set(err, "%s: path too long", path);
    for (char *p = buf + 1;; p++) {
        bool last = *p == '\0';
        if (*p == '/' || last) {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return nx_error_set(err, "%s: cannot create directory: %s", buf, strerror(errno));
            if (last)
                break;
            *p = '/';
        }
    }
    return 0;
}

/* Files synth writes; only these may be deleted when a session is replaced. */
static bool is_capture_file(const char *name)
{
    uint64_t h;
    uint32_t d, c;
    return nx_cap_parse_program_name(name, &h) || nx_cap_parse_trace_name(name, &h, &d, &c) ||
           strcmp(name, NX_CAP_RUNTIME_EVENTS_FILE) == 0 || strcmp(name, NX_CAP_CPU_USAGE_FILE) == 0 ||
           strcmp(name, NX_CAP_HOST_MEM_FILE) == 0 || strcmp(name, NX_CAP_DEVICE_MEM_FILE) == 0 ||
           strcmp(name, "trace.json") == 0;
}

/* Removes dir if it holds nothing but capture files; absent is fine. */
static int remove_capture_dir(const char *dir, nx_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : nx_error_set(err, "%s: cannot read: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!is_capture_file(e->d_name)) {
            rc = nx_error_set(err, "%s: refusing to replace it: it holds '%s', which synth did not write", dir, e->d_name);
            break;
        }
        char *p = nx_cap_join(dir, e->d_name);
        if (!p || unlink(p) != 0)
            rc = nx_error_set(err, "%s: cannot remove '%s': %s", dir, e->d_name, p ? strerror(errno) : "out of memory");
        free(p);
    }
    closedir(d);
    if (rc == 0 && rmdir(dir) != 0)
        rc = nx_error_set(err, "%s: cannot remove: %s", dir, strerror(errno));
    return rc;
}

/* --- identity ------------------------------------------------------------------------ */

typedef struct identity {
    char instance_id[24];
    uint32_t pid;
    int64_t epoch_ns;
    char session[NX_CAP_NAME_MAX];
    char *final_dir, *tmp_dir;
} identity;

static int make_identity(const nx_synth_options *o, identity *id, nx_error *err)
{
    uint64_t r = sy_seed(o->seed, 0x1d, 0);
    snprintf(id->instance_id, sizeof id->instance_id, "i-0%016" PRIx64, sy_next(&r));
    id->pid = (uint32_t)sy_range(&r, 1000, 65000);
    /* 2025-12-18 15:35:56 UTC plus up to a day, so seeds get distinct timestamps. */
    id->epoch_ns = 1766072156592459482 + (int64_t)(sy_next(&r) % 86400000000000ull);
    nx_cap_session_dir_name(id->instance_id, id->pid, id->session);
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%" PRId64, id->session, id->epoch_ns);
    id->final_dir = nx_cap_join(o->out_dir, rel);
    snprintf(rel, sizeof rel, "%s/.%" PRId64 ".synth-tmp", id->session, id->epoch_ns);
    id->tmp_dir = nx_cap_join(o->out_dir, rel);
    if (!id->final_dir || !id->tmp_dir)
        return nx_error_set(err, "out of memory");
    return 0;
}

/* --- program -------------------------------------------------------------------------- */

static void program_identity(const nx_synth_options *o, unsigned cores, nx_program *p, sy_builder *b)
{
    uint64_t r = sy_seed(o->seed, 0x0e55, cores);
    p->header = (nx_prog_header){
        .network_name = sy_str(b, "%s_decoder_layer_tp%u.neff", o->preset == NX_SYNTH_TINY ? "tiny" : "llama",
                               cores),
        .enabled_features = "coalesced-cc, queue-set-instances, on-chip-functions",
        .package_version = "0", .build_version = "0", .compiler_version = "2.15.128.0+56dc5a86",
        .cc_participant_count = cores, .neuroncore_count = 1, .logical_neuroncore_count = 1,
        .pcore_count_per_lnc = 1, .num_subgraphs = 1};
    for (int i = 0; i < 16; i++)
        p->header.uuid[i] = (uint8_t)sy_next(&r);
    p->hw = (nx_prog_hardware){
        .neuroncore_clock_hz = 1400000000, .tensor_clock_hz = 1400000000, .vector_clock_hz = 1400000000,
        .scalar_clock_hz = 1400000000, .gpsimd_clock_hz = 1400000000, .dma_ddr_bandwidth = 437000000000,
        .hbm_ddr_bandwidth = 410000000000, .hbm_capacity_bytes = 34359738368, .sbuf_partition_bytes = 196608,
        .psum_partition_bytes = 16384, .tensor_rows = 128, .tensor_cols = 128, .vector_channels = 128,
        .scalar_channels = 128, .gpsimd_channels = 8, .dma_engines_per_neuroncore = 16, .sbuf_partitions = 128,
        .psum_banks = 8, .cc_core_count = SY_CC_CORES};
}

/* Strings only the traces refer to (SY_REF_* index them). */
static const char *const TRACE_STRINGS[] = {
    "DMA_ADVANCE", "REDUCE", "SEM_WAIT", "DMA2D OOB", "access beyond tensor bounds on qSyncWeights1-Q3-E3",
    "Tensor Completion",
};
enum { SY_REF_ADVANCE, SY_REF_REDUCE, SY_REF_WAIT, SY_REF_OOB, SY_REF_OOB_META, SY_REF_NOTIFY, SY_N_REFS };

typedef struct program_out {
    uint64_t hash;
    const char *network_name;
    uint32_t refs[SY_N_REFS];    /* where TRACE_STRINGS went in the string table */
} program_out;

/* Builds the program and writes it. The writer validates it with the reader's
 * rules; the tests read synth's files back with the reader itself. */
static int write_program(const nx_synth_options *o, unsigned cores, const char *dir, sy_builder *b,
                         program_out *out, nx_error *err)
{
    nx_program p;
    memset(&p, 0, sizeof p);
    if (sy_build_layer(b) != 0 || sy_builder_finish(b, &p) != 0)
        return nx_error_set(err, "out of memory building the program");
    program_identity(o, cores, &p, b);
    p.extra_strings = TRACE_STRINGS;
    p.n_extra_strings = SY_N_REFS;
    out->network_name = p.header.network_name;
    unsigned char *image;
    size_t size;
    if (nx_program_encode(&p, &image, &size, &out->hash, out->refs, err) != 0)
        return -1;
    char name[NX_CAP_NAME_MAX];
    nx_cap_program_name(out->hash, name);
    char *path = nx_cap_join(dir, name);
    int rc = path ? nx_cap_write_file(path, image, size, err) : nx_cap_fail(err, dir, "out of memory");
    free(image);
    free(path);
    return rc;
}

/* --- the run --------------------------------------------------------------------------- */

static void plan_header(const identity *id, const program_out *po, sy_plan *plan)
{
    nx_trace_header *h = &plan->header;
    memset(h, 0, sizeof *h);
    h->pcore_count = 1;
    h->program_hash = po->hash;
    h->ticks_per_ns_num = SY_TICKS_NUM;
    h->ticks_per_ns_den = SY_TICKS_DEN;
    h->epoch_ns = id->epoch_ns;
    h->pid = id->pid;
    h->flags = NX_TRACE_FLAG_SIMULATION;
    h->session_id = 1;
    h->model_id = 10001;
    snprintf(h->instance_id, sizeof h->instance_id, "%s", id->instance_id);
    snprintf(h->instance_type, sizeof h->instance_type, "trn1.32xlarge");
    snprintf(h->runtime_version, sizeof h->runtime_version, "2.19.1");
    snprintf(h->driver_version, sizeof h->driver_version, "2.15.9");
    snprintf(h->collectives_version, sizeof h->collectives_version, "2.20.22");
    plan->ref_oob = po->refs[SY_REF_OOB];
    plan->ref_oob_meta = po->refs[SY_REF_OOB_META];
    plan->ref_notify = po->refs[SY_REF_NOTIFY];
}

static uint32_t executions_for(const sy_plan *plan, uint64_t events)
{
    uint64_t per = 0;
    for (unsigned c = 0; c < plan->cores; c++)
        per += plan->tpl[c].n;
    uint64_t e = per ? (events + per - 1) / per : 1;
    return e == 0 ? 1 : e > UINT32_MAX ? UINT32_MAX : (uint32_t)e;
}


static int generate(const nx_synth_options *o, unsigned cores, const identity *id, nx_synth_stats *st,
                    nx_error *err)
{
    sy_builder b;
    program_out po = {0};
    sy_plan plan = {.d = sy_preset_dims(o->preset), .preset = o->preset, .seed = o->seed, .cores = cores,
                    .dir = id->tmp_dir};
    sy_builder_init(&b, plan.d, cores);
    int rc = write_program(o, cores, id->tmp_dir, &b, &po, err);
    if (rc == 0) {
        plan_header(id, &po, &plan);
        st->program_hash = po.hash;
        sy_cc_refs cc = {po.refs[SY_REF_ADVANCE], po.refs[SY_REF_REDUCE], po.refs[SY_REF_WAIT]};
        rc = sy_schedule(&b, &cc, &plan) != 0 ? nx_error_set(err, "out of memory scheduling the workload") : 0;
    }
    if (rc == 0) {
        plan.executions = executions_for(&plan, o->events ? o->events : nx_synth_default_events(o->preset));
        st->executions = plan.executions;
        rc = sy_replay_all(&plan, o->threads, st, err);
    }
    if (rc == 0 && o->system) {
        sy_session s = {&plan, id->tmp_dir, id->instance_id, id->pid, id->epoch_ns, po.network_name};
        rc = sy_write_system(&s, st, err);
    }
    sy_templates_free(&plan);
    sy_builder_free(&b);
    return rc;
}

/* 0 when dir is absent or empty, else -1 with the reason: a second capture in
 * the same directory would be a second session, which is rarely meant. */
static int check_out_empty(const char *dir, nx_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : nx_error_set(err, "%s: cannot read: %s", dir, strerror(errno));
    struct dirent *e;
    const char *found = NULL;
    while (!found && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            found = e->d_name;
    int rc = found ? nx_error_set(err,
                          "%s is not empty (it holds '%s'); synth writes a capture into a new or empty directory "
                          "(--force adds this session to what is there)",
                          dir, found)
                   : 0;
    closedir(d);
    return rc;
}

int nx_synth_run(const nx_synth_options *o, nx_synth_stats *st, nx_error *err)
{
    double t0 = now_seconds();
    memset(st, 0, sizeof *st);
    unsigned cores = o->cores ? o->cores : nx_synth_default_cores(o->preset);
    if (cores > NX_SYNTH_MAX_CORES)
        return nx_error_set(err, "%u cores; at most %d", cores, NX_SYNTH_MAX_CORES);
    identity id = {0};
    int rc = o->force ? 0 : check_out_empty(o->out_dir, err);
    if (rc == 0)
        rc = make_identity(o, &id, err);
    char *parent = rc == 0 ? nx_cap_join(o->out_dir, id.session) : NULL;
    if (rc == 0 && !parent)
        rc = nx_error_set(err, "out of memory");
    if (rc == 0)
        rc = mkdir_p(parent, err);
    if (rc == 0)
        rc = remove_capture_dir(id.tmp_dir, err);
    if (rc == 0 && mkdir(id.tmp_dir, 0755) != 0)
        rc = nx_error_set(err, "%s: cannot create: %s", id.tmp_dir, strerror(errno));
    if (rc == 0)
        rc = generate(o, cores, &id, st, err);
    if (rc == 0)
        rc = remove_capture_dir(id.final_dir, err);
    if (rc == 0 && rename(id.tmp_dir, id.final_dir) != 0)
        rc = nx_error_set(err, "%s: cannot rename to %s: %s", id.tmp_dir, id.final_dir, strerror(errno));
    if (rc != 0 && id.tmp_dir) {
        remove_capture_dir(id.tmp_dir, NULL);   /* best effort: the error is already in err */
    }
    if (rc == 0) {
        st->session_dir = id.final_dir;
        id.final_dir = NULL;
        st->cores = cores;
    }
    st->seconds = now_seconds() - t0;
    free(parent);
    free(id.final_dir);
    free(id.tmp_dir);
    return rc;
}
