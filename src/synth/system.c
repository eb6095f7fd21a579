/*
 * system.c — the host side of a synthetic capture, on the same clock as the
 * device traces (Unix ns = epoch_ns + ticks * 5 / 7): runtime events around
 * every execution (nrt_tensor_write, nrt_execute, the device execution itself,
 * nrt_tensor_read) on one runtime thread per core, CPU and host-memory samples
 * every 10 ms, device-memory (HBM) snapshots on the same 10 ms grid, and a
 * PyTorch-profiler-style trace.json whose training steps trace the layer's
 * framework ops just before each execution.
 *
 * Device memory (device_mem.tsv): at every sample time t, one line per Neuron
 * device d = 0 .. ceil(cores / 2) - 1 and HBM h = 0, 1 (in that order); HBM h of
 * device d holds the model of core k = 2d + h (none when k >= cores). Bytes per
 * category, all deterministic from the seed:
 *   - before nrt_init starts (epoch - 1200 ms): every category 0;
 *   - from then on, the runtime's own: ucode_lib 12 MiB, dma_rings_runtime
 *     2 MiB, gpsimd_stdio 1 MiB, generic 8 MiB + up to 1 MiB of noise, unknown
 *     up to 64 KiB of noise, profiler_buffers 64 MiB + 128 KiB per sample since
 *     init (growing slowly);
 *   - core k's model, while nrt_load of core k runs (the runtime event's span),
 *     grows linearly to, and after it stays at: weights = the layer's bf16
 *     parameters / cores; the five instruction streams (tensor 6, vector 4,
 *     scalar 3, gpsimd 2, sync 1 MiB, each x (1 + hidden / 1024)); io =
 *     2 x seq x hidden x 2; dram_spill = seq x inter x 2 / cores; scalar_table
 *     512 KiB; dma_rings_spill 256 KiB, dma_rings_io 128 KiB; with two or more
 *     cores collectives 8 MiB and dma_rings_collectives 512 KiB; and
 *     shared_scratchpad 32 MiB on HBM 0 of the device once any of its models
 *     started loading;
 *   - tensors and scratchpad follow the workload phase, from the end of the
 *     load: tensors = T = 2 x seq x hidden x 2, scratchpad = S = seq x inter x 4
 *     / cores; while running (t within 10 ms of [first execution start, last
 *     execution end]) tensors = 2T + up to T/2 and scratchpad = S + up to S/4
 *     of noise (staging buffers of executions in flight).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_util.h"
#include "capture/system_capture.h"
#include "synth/synth_internal.h"

#define US 1000ll
#define MS 1000000ll
#define N_CPUS 16

/* Unix ns of execution e's device start and end; iterate e from 0. */
typedef struct exec_clock {
    const sy_session *s;
    uint64_t base;
    int64_t start, end;
} exec_clock;

static int64_t unix_ns(const sy_session *s, uint64_t ticks)
{
    return s->epoch_ns + (int64_t)nx_trace_ticks_to_ns(&s->plan->header, ticks);
}

static void clock_next(exec_clock *c, uint32_t e)
{
    sy_exec_time t;
    if (e == 0)
        c->base = sy_first_base();
    sy_exec_timing(c->s->plan, e, c->base, &t);
    c->start = unix_ns(c->s, t.base);
    c->end = unix_ns(c->s, t.base + t.len);
    c->base += t.len + t.gap;
}

static int64_t capture_end(const sy_session *s)
{
    exec_clock c = {.s = s};
    for (uint32_t e = 0; e < s->plan->executions; e++)
        clock_next(&c, e);
    return c.end + 20 * MS;
}

/* --- runtime events ------------------------------------------------------------------ */

static int cmp_event(const void *a, const void *b)
{
    const nx_sys_runtime_event *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static nx_sys_runtime_event rt(const char *source, const char *name, int64_t start, int64_t end, int64_t pid,
                               int64_t tid, int64_t nc, const char *flows, const char *attrs)
{
    return (nx_sys_runtime_event){start, end, source, name, pid, tid, nc, NX_SYS_NULL, flows, attrs};
}

/* The four events of execution e on every core, sorted. */
static size_t exec_events(const sy_session *s, const exec_clock *c, uint32_t e, nx_sys_runtime_event *ev,
                          char (*text)[2][96])
{
    size_t n = 0;
    for (unsigned k = 0; k < s->plan->cores; k++) {
        int64_t tid = s->pid + 1 + k, skew = (int64_t)k * 100;
        snprintf(text[k][0], sizeof text[k][0], "%" PRIu32, e + 1);
        snprintf(text[k][1], sizeof text[k][1], "execution_index=%" PRIu32 ";model_id=10001;neff=%s", e,
                 s->network_name);
        ev[n++] = rt("neuron_rt", "nrt_tensor_write", c->start - 20 * US - skew, c->start - 12 * US - skew, s->pid,
                     tid, k, "", "tensor=input0");
        ev[n++] = rt("neuron_rt", "nrt_execute", c->start - 10 * US - skew, c->end + 4 * US, s->pid, tid, k,
                     text[k][0], text[k][1]);
        ev[n++] = rt("neuron_hw", "device_execution", c->start, c->end, s->pid, tid, k, text[k][0], text[k][1]);
        ev[n++] = rt("neuron_rt", "nrt_tensor_read", c->end + 6 * US + skew, c->end + 14 * US + skew, s->pid, tid,
                     k, "", "tensor=output0");
    }
    qsort(ev, n, sizeof *ev, cmp_event);
    return n;
}

static int write_all_runtime(const sy_session *s, nx_sys_writer *w, nx_synth_stats *st, nx_error *err)
{
    const unsigned cores = s->plan->cores;
    nx_sys_runtime_event *ev = calloc(4 * (size_t)cores, sizeof *ev);
    char (*text)[2][96] = calloc(cores, sizeof *text);
    int rc = ev && text ? 0 : nx_cap_fail(err, s->dir, "out of memory");
    nx_sys_runtime_event init = rt("neuron_rt", "nrt_init", s->epoch_ns - 1200 * MS, s->epoch_ns - 900 * MS,
                                   s->pid, s->pid, NX_SYS_NULL, "", "");
    if (rc == 0 && (rc = nx_sys_write_runtime(w, &init, err)) == 0)
        st->runtime_events++;
    for (unsigned k = 0; rc == 0 && k < cores; k++) {
        int64_t slot = 600 * MS / cores, t = s->epoch_ns - 800 * MS + (int64_t)k * slot;
        nx_sys_runtime_event load = rt("neuron_rt", "nrt_load", t, t + slot - MS, s->pid, s->pid + 1 + k, k, "",
                                       "neff_size_mb=512");
        if ((rc = nx_sys_write_runtime(w, &load, err)) == 0)
            st->runtime_events++;
    }
    exec_clock c = {.s = s};
    for (uint32_t e = 0; rc == 0 && e < s->plan->executions; e++) {
        clock_next(&c, e);
        size_t n = exec_events(s, &c, e, ev, text);
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = nx_sys_write_runtime(w, &ev[i], err);
        st->runtime_events += n;
    }
    free(ev);
    free(text);
    return rc;
}

/* --- samples --------------------------------------------------------------------------- */

static double cpu_util(uint64_t seed, uint64_t sample, unsigned cpu, unsigned cores)
{
    uint64_t r = sy_seed(seed, sample, 0xc9u + cpu);
    double noise = (double)(sy_next(&r) % 1000) / 100.0;   /* 0..10 */
    if (cpu == 0)
        return 80 + noise * 1.5;              /* the Python main thread */
    if (cpu <= cores)
        return 20 + noise * 2;                /* one runtime thread per NeuronCore */
    return noise / 3;                         /* idle */
}

/* --- device memory ----------------------------------------------------------------------- */

#define MIB (1ll << 20)

typedef struct hbm_model {
    int64_t init, slot;          /* nrt_init start; nrt_load slot per core (as write_all_runtime) */
    int64_t run_from, run_to;    /* the running phase: [first start - 10 ms, last end + 10 ms] */
    int64_t weights, io, spill, tensors, scratchpad, instr_scale;
    unsigned devices;
} hbm_model;

static void hbm_model_init(const sy_session *s, hbm_model *m)
{
    const sy_dims *d = s->plan->d;
    const int64_t cores = s->plan->cores, hidden = d->hidden, seq = d->seq, inter = d->inter;
    const int64_t kv = (int64_t)d->kv_heads * d->head_dim;
    memset(m, 0, sizeof *m);
    m->init = s->epoch_ns - 1200 * MS;
    m->slot = 600 * MS / cores;
    exec_clock c = {.s = s};
    m->run_from = INT64_MAX;   /* no execution: never running */
    m->run_to = INT64_MIN;
    for (uint32_t e = 0; e < s->plan->executions; e++) {
        clock_next(&c, e);
        if (e == 0)
            m->run_from = c.start - 10 * MS;
        m->run_to = c.end + 10 * MS;
    }
    /* q and o projections hidden x hidden, k and v hidden x kv, the MLP 3 x hidden x inter; bf16 */
    m->weights = 2 * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inter) / cores;
    m->io = 2 * seq * hidden * 2;
    m->spill = seq * inter * 2 / cores;
    m->tensors = 2 * seq * hidden * 2;
    m->scratchpad = seq * inter * 4 / cores;
    m->instr_scale = 1024 + hidden;   /* / 1024 */
    m->devices = (s->plan->cores + 1) / 2;
}

/* Snapshot i (time t) of HBM h of device dev. */
static void hbm_snapshot(const sy_session *s, const hbm_model *m, uint64_t i, int64_t t, unsigned dev, unsigned h,
                         nx_sys_hbm_sample *o)
{
    memset(o, 0, sizeof *o);
    o->timestamp_ns = t, o->device_idx = dev, o->hbm_idx = h;
    if (t < m->init)
        return;
    uint64_t r = sy_seed(s->plan->seed, i, 0xdb0u + 2u * dev + h);
    int64_t *b = o->bytes;
    b[NX_HBM_ucode_lib] = 12 * MIB;
    b[NX_HBM_dma_rings_runtime] = 2 * MIB;
    b[NX_HBM_gpsimd_stdio] = 1 * MIB;
    b[NX_HBM_generic] = 8 * MIB + (int64_t)(sy_next(&r) % (uint64_t)MIB);
    b[NX_HBM_unknown] = (int64_t)(sy_next(&r) % (64u << 10));
    b[NX_HBM_profiler_buffers] = 64 * MIB + (t - m->init) / (10 * MS) * (128 << 10);
    const int64_t first_load = s->epoch_ns - 800 * MS + (int64_t)(2 * dev) * m->slot;
    if (h == 0 && t >= first_load)
        b[NX_HBM_shared_scratchpad] = 32 * MIB;
    const unsigned k = 2 * dev + h;
    if (k >= s->plan->cores)
        return;
    const int64_t l0 = s->epoch_ns - 800 * MS + (int64_t)k * m->slot, l1 = l0 + m->slot - MS;
    if (t < l0)
        return;
    /* share of the model loaded, in 1/1024 */
    const int64_t f = t >= l1 ? 1024 : (t - l0) * 1024 / (l1 - l0);
#define LOADED(x) ((x) / 1024 * f + (x) % 1024 * f / 1024)
    const int64_t is = m->instr_scale;
    b[NX_HBM_weights] = LOADED(m->weights);
    b[NX_HBM_tensor_instructions] = LOADED(6 * MIB * is / 1024);
    b[NX_HBM_vector_instructions] = LOADED(4 * MIB * is / 1024);
    b[NX_HBM_scalar_instructions] = LOADED(3 * MIB * is / 1024);
    b[NX_HBM_gpsimd_instructions] = LOADED(2 * MIB * is / 1024);
    b[NX_HBM_sync_instructions] = LOADED(1 * MIB * is / 1024);
    b[NX_HBM_io] = LOADED(m->io);
    b[NX_HBM_dram_spill] = LOADED(m->spill);
    b[NX_HBM_scalar_table] = LOADED(512ll << 10);
    b[NX_HBM_dma_rings_spill] = LOADED(256ll << 10);
    b[NX_HBM_dma_rings_io] = LOADED(128ll << 10);
    if (s->plan->cores >= 2) {
        b[NX_HBM_collectives] = LOADED(8 * MIB);
        b[NX_HBM_dma_rings_collectives] = LOADED(512ll << 10);
    }
#undef LOADED
    if (t < l1)
        return;
    const bool running = t >= m->run_from && t <= m->run_to;
    b[NX_HBM_tensors] = running ? 2 * m->tensors + (int64_t)(sy_next(&r) % (uint64_t)(m->tensors / 2 + 1))
                                : m->tensors;
    b[NX_HBM_scratchpad] = running ? m->scratchpad + (int64_t)(sy_next(&r) % (uint64_t)(m->scratchpad / 4 + 1))
                                   : m->scratchpad;
}

static int write_samples(const sy_session *s, nx_sys_writer *cpu, nx_sys_writer *mem, nx_sys_writer *dev,
                         nx_synth_stats *st, nx_error *err)
{
    hbm_model hm;
    hbm_model_init(s, &hm);
    const int64_t start = s->epoch_ns - 1500 * MS, end = capture_end(s);
    const int64_t total = 512ll << 30;
    int rc = 0;
    for (uint64_t i = 0; rc == 0 && start + (int64_t)i * 10 * MS <= end; i++) {
        int64_t t = start + (int64_t)i * 10 * MS;
        double sum = 0;
        for (unsigned k = 0; rc == 0 && k < N_CPUS; k++) {
            nx_sys_cpu_sample smp = {t, k, cpu_util(s->plan->seed, i, k, s->plan->cores)};
            sum += smp.util_percent;
            rc = nx_sys_write_cpu(cpu, &smp, err);
        }
        nx_sys_cpu_sample avg = {t, NX_SYS_CPU_AVERAGE, sum / N_CPUS};
        if (rc == 0)
            rc = nx_sys_write_cpu(cpu, &avg, err);
        uint64_t r = sy_seed(s->plan->seed, i, 0x3e3);
        int64_t used = (22ll << 30) + (t >= s->epoch_ns - 800 * MS ? 8ll << 30 : 0) + (int64_t)i * (1 << 20) +
                       (int64_t)(sy_next(&r) % (64u << 20));
        nx_sys_mem_sample m = {t, used, total};
        if (rc == 0)
            rc = nx_sys_write_mem(mem, &m, err);
        for (unsigned d = 0; rc == 0 && d < hm.devices; d++) {
            for (unsigned h = 0; rc == 0 && h < 2; h++) {
                nx_sys_hbm_sample hs;
                hbm_snapshot(s, &hm, i, t, d, h, &hs);
                rc = nx_sys_write_hbm(dev, &hs, err);
                st->device_mem_samples++;
            }
        }
        st->cpu_samples += N_CPUS + 1;
        st->mem_samples++;
    }
    return rc;
}

/* --- trace.json --------------------------------------------------------------------------- */

typedef struct chrome {
    FILE *fp;
    int64_t base_ns;             /* baseTimeNanoseconds */
    uint32_t pid;
    uint64_t events;
    uint64_t external_id;
} chrome;

/* "ts": microseconds since base with three decimals, exactly. */
static void put_us(FILE *fp, const char *key, int64_t ns)
{
    fprintf(fp, "\"%s\": %" PRId64 ".%03" PRId64, key, ns / 1000, ns % 1000);
}

static void x_event(chrome *c, const char *cat, const char *name, int64_t tid, int64_t start, int64_t end,
                    const char *extra_args)
{
    fprintf(c->fp, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %" PRIu32 ", \"tid\": %" PRId64 ", ",
            cat, name, c->pid, tid);
    put_us(c->fp, "ts", start - c->base_ns);
    fputs(", ", c->fp);
    put_us(c->fp, "dur", end - start);
    fprintf(c->fp, ", \"args\": {\"External id\": %" PRIu64 "%s}}", ++c->external_id, extra_args);
    c->events++;
}

static void point_event(chrome *c, const char *ph, const char *name, int64_t tid, int64_t at, const char *rest)
{
    fprintf(c->fp, ",\n{\"ph\": \"%s\", \"name\": \"%s\", \"pid\": %" PRIu32 ", \"tid\": %" PRId64 ", ", ph, name,
            c->pid, tid);
    put_us(c->fp, "ts", at - c->base_ns);
    fprintf(c->fp, "%s}", rest);
    c->events++;
}

static const char *const FRAMEWORK_OPS[] = {
    "aten::pow", "aten::mean", "aten::rsqrt", "aten::mul", "aten::linear", "aten::linear", "aten::linear",
    "aten::_softmax", "aten::linear", "aten::add", "aten::linear", "aten::silu", "aten::linear", "aten::add",
};

/* One training step: framework ops traced just before execution e runs. */
static void chrome_step(chrome *c, uint32_t e, int64_t dev_start, uint64_t seed)
{
    const int64_t hs = dev_start - 180 * US, main = c->pid, loader = c->pid + 100;
    point_event(c, "B", "DataLoader.__next__", loader, hs - 30 * US, "");
    point_event(c, "E", "DataLoader.__next__", loader, hs - 5 * US, "");
    char name[48], args[64];
    snprintf(name, sizeof name, "ProfilerStep#%" PRIu32, e);
    x_event(c, "user_annotation", name, main, hs, hs + 170 * US, "");
    point_event(c, "i", "step_begin", main, hs, ", \"s\": \"t\"");
    uint64_t r = sy_seed(seed, e, 0xc4);
    snprintf(args, sizeof args, ", \"args\": {\"allocated_mb\": %" PRIu64 "}", 8192 + sy_next(&r) % 512);
    point_event(c, "C", "Memory", main, hs, args);
    x_event(c, "python_function", "NeuronLlamaDecoderLayer.forward", main, hs + 5 * US, hs + 120 * US, "");
    int64_t t = hs + 7 * US;
    for (size_t i = 0; i < sizeof FRAMEWORK_OPS / sizeof FRAMEWORK_OPS[0]; i++) {
        int64_t d = 4 * US + (int64_t)(sy_next(&r) % (3 * US));
        x_event(c, "cpu_op", FRAMEWORK_OPS[i], main, t, t + d, "");
        t += d + US;
    }
    snprintf(args, sizeof args, ", \"flow_id\": %" PRIu32, e + 1);
    x_event(c, "cpu_op", "xm::mark_step", main, hs + 125 * US, hs + 165 * US, args);
}

static int write_chrome(const sy_session *s, nx_synth_stats *st, nx_error *err)
{
    char *path = nx_cap_join(s->dir, "trace.json");
    chrome c = {.pid = s->pid, .base_ns = (s->epoch_ns / 1000000000 - 2) * 1000000000};
    c.fp = path ? fopen(path, "w") : NULL;
    if (!c.fp) {
        int rc = nx_cap_fail(err, path ? path : s->dir, "cannot create trace.json");
        free(path);
        return rc;
    }
    fprintf(c.fp, "{\n\"schemaVersion\": 1,\n\"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"process_name\", "
            "\"pid\": %" PRIu32 ", \"tid\": 0, \"args\": {\"name\": \"python3 train_llama.py\"}}", s->pid);
    c.events = 1;
    point_event(&c, "M", "thread_name", s->pid, c.base_ns, ", \"args\": {\"name\": \"MainThread\"}");
    point_event(&c, "M", "thread_name", s->pid + 100, c.base_ns, ", \"args\": {\"name\": \"DataLoader\"}");
    exec_clock clk = {.s = s};
    for (uint32_t e = 0; e < s->plan->executions; e++) {
        clock_next(&clk, e);
        chrome_step(&c, e, clk.start, s->plan->seed);
    }
    fprintf(c.fp, "\n],\n\"displayTimeUnit\": \"ms\",\n\"baseTimeNanoseconds\": %" PRId64 "\n}\n", c.base_ns);
    bool bad = ferror(c.fp) != 0;
    int rc = fclose(c.fp) != 0 || bad ? nx_cap_fail(err, path, "write failed") : 0;
    st->chrome_events = c.events;
    free(path);
    return rc;
}

/* --- all of it ------------------------------------------------------------------------------ */

static int open_sys(const sy_session *s, nx_sys_kind k, nx_sys_writer **w, nx_error *err)
{
    char *path = nx_cap_join(s->dir, nx_sys_file_name(k));
    int rc = path ? nx_sys_writer_open(path, k, w, err) : nx_cap_fail(err, s->dir, "out of memory");
    free(path);
    return rc;
}

int sy_write_system(const sy_session *s, nx_synth_stats *st, nx_error *err)
{
    nx_error e;
    nx_sys_writer *rt_w = NULL, *cpu = NULL, *mem = NULL, *dev = NULL;
    int rc = open_sys(s, NX_SYS_RUNTIME_EVENTS, &rt_w, &e);
    if (rc == 0)
        rc = write_all_runtime(s, rt_w, st, &e);
    if (nx_sys_writer_close(rt_w, rc == 0 ? &e : NULL) != 0)
        rc = -1;
    if (rc == 0 && (rc = open_sys(s, NX_SYS_CPU_USAGE, &cpu, &e)) == 0 &&
        (rc = open_sys(s, NX_SYS_HOST_MEM, &mem, &e)) == 0 && (rc = open_sys(s, NX_SYS_DEVICE_MEM, &dev, &e)) == 0)
        rc = write_samples(s, cpu, mem, dev, st, &e);
    if (nx_sys_writer_close(cpu, rc == 0 ? &e : NULL) != 0)
        rc = -1;
    if (nx_sys_writer_close(mem, rc == 0 ? &e : NULL) != 0)
        rc = -1;
    if (nx_sys_writer_close(dev, rc == 0 ? &e : NULL) != 0)
        rc = -1;
    if (rc == 0)
        rc = write_chrome(s, st, &e);
    if (rc != 0)
        nx_error_set(err, "%s", e.msg);
    return rc;
}
