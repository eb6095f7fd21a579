/* test_synth.c — nxprof synth end to end through the capture readers: what the
 * readers find equals what synth says it wrote, every record kind is present,
 * collectives line up across cores, the device, runtime-event and trace.json
 * clocks agree, output is byte-identical per seed (whatever the thread count)
 * and differs across seeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>

#include "capture/capture.h"
#include "capture/chrome_trace.h"
#include "capture/system_capture.h"
#include "capture_fixture.h"
#include "synth/synth.h"

typedef struct run {
    char *out;
    nx_synth_stats st;
} run;

static void synth(run *r, nx_synth_preset preset, uint64_t events, unsigned cores, uint64_t seed, unsigned threads,
                  bool system)
{
    r->out = fix_tmpdir();
    assert_non_null(r->out);
    nx_synth_options o = {.out_dir = r->out, .preset = preset, .events = events, .cores = cores, .seed = seed,
                          .system = system, .threads = threads};
    nx_error err = {0};
    if (nx_synth_run(&o, &r->st, &err) != 0)
        fail_msg("synth failed: %s", err.msg);
}

static void done(run *r)
{
    fix_rmtree(r->out);
    free(r->out);
    nx_synth_stats_free(&r->st);
}

/* What one trace holds, as the reader sees it. */
typedef struct trace_facts {
    uint64_t count[NX_REC_KIND_MAX + 1];
    uint64_t cc_start[64], cc_end[64];
    size_t n_cc;
    int64_t exec_start_unix[8];
    uint32_t next_exec;
} trace_facts;

static void read_trace(const char *path, const nx_program *p, trace_facts *f)
{
    nx_trace_reader *r;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    if (nx_trace_reader_open(path, p, &warner, &r, &err) != 0)
        fail_msg("%s", err.msg);
    const nx_trace_header *h = nx_trace_reader_header(r);
    assert_int_equal(h->reorder_window_ticks, 0);
    memset(f, 0, sizeof *f);
    nx_trace_record rec;
    int rc;
    while ((rc = nx_trace_reader_next(r, &rec, &err)) == 1) {
        f->count[rec.kind]++;
        if (rec.kind == NX_REC_CC_OP && f->n_cc < 64) {
            f->cc_start[f->n_cc] = rec.ts;
            f->cc_end[f->n_cc++] = rec.end;
        }
        if (rec.kind == NX_REC_EXECUTION) {
            assert_int_equal(rec.u.execution.index, f->next_exec);
            if (f->next_exec < 8)
                f->exec_start_unix[f->next_exec] = h->epoch_ns + (int64_t)nx_trace_ticks_to_ns(h, rec.ts);
            f->next_exec++;
        }
    }
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(w.count, 0);   /* synth output is clean: not even a warning */
    nx_trace_reader_close(r);
}

static uint64_t count_system(const char *path, nx_sys_kind kind, int64_t *first_hw_start)
{
    nx_sys_reader *r;
    nx_error err;
    if (nx_sys_reader_open(path, kind, &r, &err) != 0)
        fail_msg("%s", err.msg);
    nx_sys_record rec;
    uint64_t n = 0;
    int rc;
    while ((rc = nx_sys_reader_next(r, &rec, &err)) == 1) {
        n++;
        if (kind == NX_SYS_RUNTIME_EVENTS && *first_hw_start == 0 &&
            strcmp(rec.u.runtime.name, "device_execution") == 0)
            *first_hw_start = rec.u.runtime.start_ns;
    }
    if (rc != 0)
        fail_msg("%s", err.msg);
    nx_sys_reader_close(r);
    return n;
}

/* trace.json through the project's Chrome reader: its event count, and the time
 * of ProfilerStep#0 in Unix ns (baseTimeNanoseconds + ts). */
typedef struct chrome_facts {
    uint64_t events;
    int64_t step0_ts, base_ns;
} chrome_facts;

static int on_event(void *ctx, const nx_chrome_event *ev)
{
    chrome_facts *f = ctx;
    f->events++;
    if (ev->name.s && strcmp(ev->name.s, "ProfilerStep#0") == 0)
        f->step0_ts = ev->ts_ns;
    return 0;
}

static int on_toplevel(void *ctx, const nx_chrome_toplevel *tl)
{
    chrome_facts *f = ctx;
    if (strcmp(tl->key.s, "baseTimeNanoseconds") == 0)
        f->base_ns = strtoll(tl->json.s, NULL, 10);
    return 0;
}

static void read_chrome(const char *path, chrome_facts *f)
{
    nx_error err;
    nx_chrome_reader *r = nx_chrome_open(path, NULL, &err);
    if (!r)
        fail_msg("%s", err.msg);
    memset(f, 0, sizeof *f);
    nx_chrome_handlers h = {.event = on_event, .toplevel = on_toplevel, .ctx = f, .skipped = NULL};
    if (nx_chrome_read(r, &h, &err) != 0)
        fail_msg("%s", err.msg);
    nx_chrome_close(r);
}

static void test_tiny_round_trip(void **state)
{
    (void)state;
    run r;
    synth(&r, NX_SYNTH_TINY, 0, 2, 7, 0, true);
    nx_capture cap;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    if (nx_capture_discover(r.out, &cap, &warner, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(w.count, 0);
    assert_int_equal(cap.n_sessions, 1);
    const nx_cap_session *s = &cap.sessions[0];
    assert_string_equal(s->dir, r.st.session_dir);
    assert_int_equal(s->n_programs, 1);
    assert_int_equal(s->programs[0].n_traces, 2);
    assert_int_equal(s->n_chrome_traces, 1);
    nx_program *p;
    if (nx_program_open(s->programs[0].path, &p, NULL, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(p->hash == r.st.program_hash);
    trace_facts f[2];
    uint64_t total[NX_REC_KIND_MAX + 1] = {0};
    for (int c = 0; c < 2; c++) {
        read_trace(s->programs[0].traces[c].path, p, &f[c]);
        for (int k = 1; k <= NX_REC_KIND_MAX; k++)
            total[k] += f[c].count[k];
        assert_int_equal(f[c].next_exec, r.st.executions);
        assert_int_equal(f[c].n_cc, 2 * r.st.executions);   /* two AllReduces per layer */
    }
    uint64_t sum = 0;
    for (int k = 1; k <= NX_REC_KIND_MAX; k++) {
        assert_true(total[k] > 0);                 /* tiny has every record kind */
        assert_int_equal(total[k], r.st.records[k]);
        sum += total[k];
    }
    assert_int_equal(sum, r.st.total_records);
    assert_true(sum >= nx_synth_default_events(NX_SYNTH_TINY));
    for (size_t i = 0; i < f[0].n_cc; i++) {       /* a collective spans all ranks at once */
        assert_int_equal(f[0].cc_start[i], f[1].cc_start[i]);
        assert_int_equal(f[0].cc_end[i], f[1].cc_end[i]);
    }
    int64_t hw_start = 0;
    assert_int_equal(count_system(s->runtime_events_path, NX_SYS_RUNTIME_EVENTS, &hw_start), r.st.runtime_events);
    assert_int_equal(hw_start, f[0].exec_start_unix[0]);   /* host and device clocks agree */
    assert_int_equal(count_system(s->cpu_usage_path, NX_SYS_CPU_USAGE, &hw_start), r.st.cpu_samples);
    assert_int_equal(count_system(s->host_mem_path, NX_SYS_HOST_MEM, &hw_start), r.st.mem_samples);
    /* one device-memory snapshot per HBM (2) of the one device of 2 cores, per host-memory sample */
    assert_int_equal(count_system(s->device_mem_path, NX_SYS_DEVICE_MEM, &hw_start), r.st.device_mem_samples);
    assert_int_equal(r.st.device_mem_samples, 2 * r.st.mem_samples);
    chrome_facts cf;
    read_chrome(s->chrome_traces[0], &cf);
    assert_int_equal(cf.events, r.st.chrome_events);
    /* the framework step is traced 180 us before the device runs it */
    assert_int_equal(cf.base_ns + cf.step0_ts, f[0].exec_start_unix[0] - 180000);
    nx_program_close(p);
    nx_capture_free(&cap);
    done(&r);
}

/* Every file of the session directory of a and b, compared byte for byte. */
static bool same_files(const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' > /dev/null", a, b);
    return system(cmd) == 0;
}

static void test_deterministic(void **state)
{
    (void)state;
    run a, b, c;
    synth(&a, NX_SYNTH_LLAMA_LAYER, 100000, 3, 11, 1, true);
    synth(&b, NX_SYNTH_LLAMA_LAYER, 100000, 3, 11, 3, true);
    synth(&c, NX_SYNTH_LLAMA_LAYER, 100000, 3, 12, 0, true);
    assert_true(same_files(a.out, b.out));   /* same seed, other thread count */
    assert_true(a.st.total_records == b.st.total_records);
    assert_string_not_equal(a.st.session_dir + strlen(a.out), c.st.session_dir + strlen(c.out));
    assert_true(a.st.program_hash != c.st.program_hash);
    assert_true(a.st.total_records >= 100000);
    done(&a);
    done(&b);
    done(&c);
}

static void test_single_core_has_no_collectives(void **state)
{
    (void)state;
    run r;
    synth(&r, NX_SYNTH_TINY, 500, 1, 3, 0, false);
    assert_int_equal(r.st.cores, 1);
    assert_int_equal(r.st.records[NX_REC_CC_OP], 0);
    assert_int_equal(r.st.records[NX_REC_CC_INSTR], 0);
    assert_true(r.st.records[NX_REC_INSTRUCTION] > 0);
    assert_int_equal(r.st.runtime_events, 0);
    char *rt = fix_path(r.st.session_dir, "runtime_events.tsv");
    struct stat st;
    assert_int_not_equal(stat(rt, &st), 0);   /* --no-system */
    free(rt);
    done(&r);
}

static void test_replaces_own_output_only(void **state)
{
    (void)state;
    run r;
    synth(&r, NX_SYNTH_TINY, 0, 2, 5, 0, true);
    nx_synth_options o = {.out_dir = r.out, .preset = NX_SYNTH_TINY, .cores = 2, .seed = 5, .system = true};
    nx_synth_stats again;
    nx_error err = {0};
    /* A non-empty --out is refused unless forced: a second capture there would
     * be a second session. */
    assert_int_equal(nx_synth_run(&o, &again, &err), -1);
    assert_non_null(strstr(err.msg, "is not empty"));
    assert_non_null(strstr(err.msg, "--force"));
    o.force = true;
    assert_int_equal(nx_synth_run(&o, &again, &err), 0);   /* same session: replaced */
    nx_synth_stats_free(&again);
    char *foreign = fix_path(r.st.session_dir, "notes.txt");
    FILE *fp = fopen(foreign, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(nx_synth_run(&o, &again, &err), -1);
    assert_non_null(strstr(err.msg, "refusing to replace"));
    assert_non_null(strstr(err.msg, "notes.txt"));
    free(foreign);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_round_trip),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_single_core_has_no_collectives),
        cmocka_unit_test(test_replaces_own_output_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
