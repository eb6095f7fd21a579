/*
 * test_system_summary.c — the answers about a system profile: top.h on
 * SystemProfileEvents (self time, wall time, the virtual keys cat and thread),
 * system_summary.h (busy time per track, top operators, device profiles found by
 * nx_device_profile_dir, a missing or refused device profile as an error entry)
 * and the JSON member reader behind `cat`; a second profile of two ranks' events
 * for the per-rank answers (summary's ranks, --rank in top and summary).
 *
 * The profile is built by hand: ten events on three tracks (a framework thread
 * that a runtime event without nc_idx shares, a second thread whose two events
 * overlap without nesting, and NeuronCore 0), a DeviceProfileList of four device
 * profiles (one nested under devices/, one beside the system profile as
 * <name>@latest with only Metadata, one missing, one whose name leads out of the
 * folders), each value worked out below by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_layout.h"
#include "profile/profile_table.h"
#include "util/json.h"
#include "query/system_summary.h"
#include "query/top.h"
#include "system_fixture.h"

/* start, end, source, nc, instance, pid, tid, name, json; in start order. */
static const sys_event EVENTS[] = {
    {10, 20, "neuron_rt", NX_ABSENT, "i-1", 1, 1, "nrt_init", "{}"},              /* a: thread i-1/1/1 */
    {50, 500, "neuron_rt", 0, "i-1", 1, 5, "nrt_execute", "{}"},                 /* b: nc0 */
    {60, 70, "neuron_hw", 0, "i-1", 1, 5, "device_execution", "{}"},             /* c: nc0, in b */
    {100, 200, "framework", NX_ABSENT, "i-1", 1, 1, "step", "{\"cat\":\"user_annotation\"}"},   /* d */
    {110, 150, "framework", NX_ABSENT, "i-1", 1, 1, "mm", "{\"cat\":\"cpu_op\",\"args\":{\"x\":\"{\\\"cat\\\":1}\"}}"},
    {120, 180, "framework", NX_ABSENT, "i-1", 1, 2, "mm", " { \"args\" : {\"cat\":\"no\"} , \"cat\" : \"cpu_op\" }"},
    {150, 190, "framework", NX_ABSENT, "i-1", 1, 1, "add", "{\"cat\":\"cpu\\u005fop\"}"},      /* g: in d */
    {170, 260, "framework", NX_ABSENT, "i-1", 1, 2, "add", "{\"cat\":5}"},                    /* h: overlaps f */
    {300, 400, "framework", NX_ABSENT, "i-1", 1, 1, "step", "{\"cat\":\"user_annotation\"}"},   /* i */
    {310, 320, "framework", NX_ABSENT, "i-1", 1, 1, "mm", NULL},                              /* j: in i */
};
#define N_EVENTS (sizeof EVENTS / sizeof EVENTS[0])

static char root[64], sys_dir[128];

static void write_device_list(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/DeviceProfileList.parquet", dir);
    nxpq_column_spec cols[] = {{.name = "device_profile_name", .type = NXPQ_STRING}, {.name = "nc_id", .type = NXPQ_INT64}};
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, 2, NULL, &err);
    assert_non_null(w);
    static const char *const names[] = {"devA", "devB", "devC", ".."};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(nxpq_put_string(w, 0, names[i], strlen(names[i])), 0);
        assert_int_equal(nxpq_put_int64(w, 1, i), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/nxsys-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(sys_dir, sizeof sys_dir, "%s/sys", root);
    write_events(sys_dir, EVENTS, N_EVENTS, 0);
    write_device_list(sys_dir);
    char d[300];
    snprintf(d, sizeof d, "%s/devices", sys_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(d, sizeof d, "%s/devices/devA", sys_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    static const char *const meta[] = {"num_physical_cores"};
    write_row0(d, "Metadata", meta, 1, 1, (double[]){2}, 1);
    static const char *const sum[] = {"neuroncore_cycle_count", "total_time", "mfu_estimated_percent",
                                      "hfu_estimated_percent", "mbu_estimated_percent", "cc_op_active_time"};
    write_row0(d, "Summary", sum, 1, 6, (double[]){7, 0.5, 12.5, 25, 50, 0.25}, 1);
    static const char *const exe[] = {"execution_index"};
    write_row0(d, "ExecutionInfo", exe, 1, 1, (double[]){0}, 3);
    snprintf(d, sizeof d, "%s/devB@latest", root);
    assert_int_equal(mkdir(d, 0755), 0);
    write_row0(d, "Metadata", meta, 1, 1, (double[]){1}, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(root);
    return 0;
}

static void test_device_profile_dir(void **state)
{
    (void)state;
    nx_error err = {0};
    char want[300];
    char *p = nx_device_profile_dir(sys_dir, "devA", &err);
    snprintf(want, sizeof want, "%s/devices/devA", sys_dir);
    assert_string_equal(p, want);
    free(p);
    snprintf(want, sizeof want, "%s/sys/", root);   /* a trailing slash changes nothing */
    p = nx_device_profile_dir(want, "devB", &err);
    snprintf(want, sizeof want, "%s/devB@latest", root);
    assert_string_equal(p, want);
    free(p);
    static const struct { const char *dir, *want; } cases[] = {
        {"sys", "./n@latest"}, {"a//sys", "a/n@latest"}, {"/sys", "/n@latest"}, {"/x/y/sys//", "/x/y/n@latest"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p = nx_device_profile_dir(cases[i].dir, "n", &err);
        assert_non_null(p);
        assert_string_equal(p, cases[i].want);
        free(p);
    }
    static const char *const bad[] = {"", ".", "..", "a/b", "../x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(nx_device_profile_dir(sys_dir, bad[i], &err));
        assert_non_null(strstr(err.msg, "not a plain directory name"));
    }
    assert_true(nx_profile_is_system(sys_dir));
    snprintf(want, sizeof want, "%s/devices/devA", sys_dir);
    assert_false(nx_profile_is_system(want));
}

static void test_json_member(void **state)
{
    (void)state;
    char out[64];
    size_t n = 0;
    static const struct { const char *js, *want; } ok[] = {
        {"{\"cat\":\"cpu_op\"}", "cpu_op"},
        {" {\"a\":[1,{\"cat\":\"x\"}],\"b\":\"}\",\"cat\" : \"k\"}", "k"},
        {"{\"cat\":\"a\\\"b\\\\c\\/\\n\"}", "a\"b\\c/\n"},
        {"{\"cat\":\"\\u00e9\\ud83d\\ude00\\udc00\"}", "\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd"},
        {"{\"cat\":\"\"}", ""},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        n = 0;
        assert_true(nx_json_string_member(ok[i].js, strlen(ok[i].js), "cat", out, sizeof out, &n));
        assert_int_equal(n, strlen(ok[i].want));
        assert_memory_equal(out, ok[i].want, n);
    }
    static const char *const no[] = {"{\"cat\":5}", "{\"cat\":null}", "{\"dog\":\"cat\"}", "[\"cat\"]", "",
                                     "{\"cat\":\"\\x\"}", "{\"cat\":\"open", "{\"args\":{\"cat\":\"inner\"}}"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        n = 0;
        assert_false(nx_json_string_member(no[i], strlen(no[i]), "cat", out, sizeof out, &n));
    }
    n = 60;   /* no room left */
    assert_false(nx_json_string_member("{\"cat\":\"abcdef\"}", 16, "cat", out, sizeof out, &n));
}

typedef struct want_group {
    const char *key;                 /* NULL: null */
    int64_t count, sum, self;
} want_group;

static void check_top(const char *by, const want_group *w, size_t n)
{
    nx_top r;
    nx_error err = {0};
    const char *keys[] = {by};
    nx_top_options o = {.table = "SystemProfileEvents", .by = keys, .n_by = 1};
    assert_int_equal(nx_top_run(sys_dir, &o, &r, &err), 0);
    assert_true(r.self);
    assert_int_equal(r.value, NX_TOP_DURATION);
    assert_string_equal(r.note, "");   /* the timeline index answered */
    assert_true(r.have_wall);
    assert_int_equal(r.first_ts, 10);
    assert_int_equal(r.last_ts, 500);
    assert_int_equal(r.rows, N_EVENTS);
    assert_int_equal(nx_group_by_count(r.g), n);
    for (size_t i = 0; i < n; i++) {
        nx_group_key k;
        nx_group_by_key(r.g, i, 0, &k);
        const nx_group_stats *st = nx_group_by_stats(r.g, i);
        if (w[i].key) {
            assert_false(k.null);
            assert_int_equal(k.len, strlen(w[i].key));
            assert_memory_equal(k.s, w[i].key, k.len);
        } else {
            assert_true(k.null);
        }
        assert_int_equal(st->count, w[i].count);
        assert_int_equal(st->sum[0], w[i].sum);
        assert_int_equal(st->sum[1], w[i].self);
    }
    nx_top_free(&r);
}

static void test_top(void **state)
{
    (void)state;
    /* Self: a 10, b 450-10, c 10, d 100-40-40, e 40, f 60, g 40, h 90, i 100-10, j 10. */
    static const want_group by_name[] = {{"nrt_execute", 1, 450, 440}, {"add", 2, 130, 130}, {"mm", 3, 110, 110},
                                         {"step", 2, 200, 110},       {"device_execution", 1, 10, 10},
                                         {"nrt_init", 1, 10, 10}};
    check_top("name", by_name, 6);
    static const want_group by_cat[] = {{NULL, 5, 10 + 450 + 10 + 90 + 10, 10 + 440 + 10 + 90 + 10},
                                        {"cpu_op", 3, 140, 140},
                                        {"user_annotation", 2, 200, 110}};
    check_top("cat", by_cat, 3);
    static const want_group by_thread[] = {{"nc0", 2, 460, 450}, {"i-1/1/1", 6, 300, 210}, {"i-1/1/2", 2, 150, 150}};
    check_top("thread", by_thread, 3);

    nx_top r;
    nx_error err = {0};
    const char *bad[] = {"nope"};
    nx_top_options o = {.table = "SystemProfileEvents", .by = bad, .n_by = 1};
    assert_int_equal(nx_top_run(sys_dir, &o, &r, &err), NX_TOP_BAD_KEY);
    assert_non_null(strstr(err.msg, "nope"));
    const char *list[] = {"flow_id"};   /* a list column cannot be a key */
    o.by = list;
    assert_int_equal(nx_top_run(sys_dir, &o, &r, &err), NX_TOP_BAD_KEY);
    o.table = "Instruction";
    assert_int_equal(nx_top_run(sys_dir, &o, &r, &err), NX_PROFILE_TABLE_ABSENT);
}

static void test_summary(void **state)
{
    (void)state;
    nx_system_summary s;
    nx_error err = {0};
    assert_int_equal(nx_system_summary_read(sys_dir, -1, &s, &err), 0);
    assert_string_equal(s.note, "");
    assert_int_equal(s.events, N_EVENTS);
    assert_true(s.have_wall);
    assert_int_equal(s.first_ts, 10);
    assert_int_equal(s.last_ts, 500);
    assert_int_equal(s.wall_ns, 490);
    /* Busy: nc0 [50,500]; i-1/1/1 [10,20] + [100,200] + [300,400]; i-1/1/2 [120,180] u [170,260]. */
    assert_int_equal(s.n_busy, 3);
    static const struct { const char *track; int64_t busy, top; } busy[] = {
        {"nc0", 450, 1}, {"i-1/1/1", 210, 3}, {"i-1/1/2", 140, 2}};
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(s.busy[i].track, busy[i].track);
        assert_int_equal(s.busy[i].busy_ns, busy[i].busy);
        assert_int_equal(s.busy[i].top_level, busy[i].top);
        assert_true(s.busy[i].percent_of_wall == 100.0 * (double)busy[i].busy / 490.0);
    }
    assert_int_equal(s.n_top, 6);
    assert_string_equal(s.top[0].name, "nrt_execute");
    assert_int_equal(s.top[0].self_ns, 440);
    assert_int_equal(s.top[3].sum_ns, 200);
    assert_string_equal(s.top[3].name, "step");
    assert_true(s.have_device_list);
    assert_int_equal(s.n_devices, 4);
    const nx_system_device *a = &s.devices[0], *b = &s.devices[1], *c = &s.devices[2], *d = &s.devices[3];
    assert_string_equal(a->name, "devA");
    assert_null(a->error);
    assert_int_equal(a->nc_id, 0);
    assert_true(a->cores_ok);
    assert_int_equal(a->physical_cores, 2);
    assert_int_equal(a->executions, 3);
    assert_true(a->total_time_s.ok && a->total_time_s.v == 0.5);
    assert_true(a->mfu.ok && a->mfu.v == 12.5 && !a->mfu.is_double);
    assert_true(a->hfu.ok && a->hfu.v == 25);
    assert_true(a->mbu.ok && a->mbu.v == 50);
    assert_true(a->cc_active_s.ok && a->cc_active_s.v == 0.25);
    assert_null(b->error);   /* Metadata only: no executions, no Summary values */
    assert_int_equal(b->physical_cores, 1);
    assert_int_equal(b->executions, 0);
    assert_false(b->total_time_s.ok || b->mfu.ok || b->cc_active_s.ok);
    assert_non_null(strstr(b->dir, "devB@latest"));
    assert_non_null(c->error);
    assert_non_null(strstr(c->error, "not found"));
    assert_null(strchr(c->error, '/')); /* named by its name, not its directory */
    assert_int_equal(c->nc_id, 2);
    assert_non_null(d->error);
    assert_null(d->dir);
    assert_non_null(strstr(d->error, "not a plain directory name"));
    nx_system_summary_free(&s);

    /* Without a timeline index the same answers, computed from the table. */
    setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
    assert_int_equal(nx_system_summary_read(sys_dir, -1, &s, &err), 0);
    assert_string_not_equal(s.note, "");
    assert_int_equal(s.busy[1].busy_ns, 210);
    assert_int_equal(s.top[0].self_ns, 440);
    nx_system_summary_free(&s);
    unsetenv("NXPROF_NO_TIMELINE_INDEX");

    char dev[300];
    snprintf(dev, sizeof dev, "%s/devB@latest", root);
    assert_int_equal(nx_system_summary_read(dev, -1, &s, &err), NX_PROFILE_TABLE_ABSENT);
}

/* Two ranks' traces with the same pid and tid (what two ranks on one machine
 * give once their pids repeat), and a runtime event without a rank:
 *   rank 0: step [100,200] with mm [110,150] inside;
 *   rank 1: step [105,300] with mm [120,130] inside, mm [400,450];
 *   none:   nrt_init [10,20] on thread i-1/2/2. */
#define NAMED "{\"process_name\":\"python3\",\"thread_name\":\"main\"}"
static const sys_event RANKED[] = {
    {10, 20, "neuron_rt", NX_ABSENT, "i-1", 2, 2, "nrt_init", "{}"},
    {100, 200, "framework", NX_ABSENT, "i-1", 1, 1, "step", NAMED},
    {105, 300, "framework", NX_ABSENT, "i-1", 1, 1, "step", NAMED},
    {110, 150, "framework", NX_ABSENT, "i-1", 1, 1, "mm", NAMED},
    {120, 130, "framework", NX_ABSENT, "i-1", 1, 1, "mm", NAMED},
    {400, 450, "framework", NX_ABSENT, "i-1", 1, 1, "mm", NAMED},
};
static const int64_t RANK_OF[] = {-1, 0, 1, 0, 1, 1};
#define N_RANKED (sizeof RANKED / sizeof RANKED[0])

static void ranked_profile(char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/ranked", root);
    write_ranked_events(dir, RANKED, RANK_OF, N_RANKED, 0);
}

static void test_top_rank(void **state)
{
    (void)state;
    char dir[300];
    ranked_profile(dir, sizeof dir);
    nx_top r;
    nx_error err = {0};
    const char *by[] = {"name"};
    nx_top_options o = {.table = "SystemProfileEvents", .by = by, .n_by = 1, .has_rank = true, .rank = 1};
    assert_int_equal(nx_top_run(dir, &o, &r, &err), 0);
    /* Rank 1 only: step 195 (self 195 - 10), mm 10 + 50; its wall 105..450. */
    assert_int_equal(nx_group_by_totals(r.g).count, 3);
    assert_int_equal(nx_group_by_count(r.g), 2);
    nx_group_key k;
    nx_group_by_key(r.g, 0, 0, &k);
    assert_memory_equal(k.s, "step", 4);
    assert_int_equal(nx_group_by_stats(r.g, 0)->sum[0], 195);
    assert_int_equal(nx_group_by_stats(r.g, 0)->sum[1], 185);
    assert_int_equal(nx_group_by_stats(r.g, 1)->count, 2);
    assert_int_equal(nx_group_by_stats(r.g, 1)->sum[1], 60);
    assert_int_equal(r.first_ts, 105);
    assert_int_equal(r.last_ts, 450);
    nx_top_free(&r);

    /* By thread, every rank: each rank's thread is its own group, labelled with its rank. */
    const char *thread[] = {"thread"};
    o = (nx_top_options){.table = "SystemProfileEvents", .by = thread, .n_by = 1};
    assert_int_equal(nx_top_run(dir, &o, &r, &err), 0);
    assert_int_equal(nx_group_by_count(r.g), 3);
    static const struct { const char *label; int64_t count; } want[] = {
        {"rank 1 / python3 (1) / main", 3}, {"rank 0 / python3 (1) / main", 2}, {"i-1/2/2", 1}};
    for (size_t i = 0; i < 3; i++) {
        nx_group_by_key(r.g, i, 0, &k);
        assert_int_equal(k.len, strlen(want[i].label));
        assert_memory_equal(k.s, want[i].label, k.len);
        assert_int_equal(nx_group_by_stats(r.g, i)->count, want[i].count);
    }
    nx_top_free(&r);

    /* A rank no row has: no groups, no wall. */
    o = (nx_top_options){.table = "SystemProfileEvents", .by = by, .n_by = 1, .has_rank = true, .rank = 7};
    assert_int_equal(nx_top_run(dir, &o, &r, &err), 0);
    assert_int_equal(nx_group_by_count(r.g), 0);
    assert_false(r.have_wall);
    nx_top_free(&r);
}

static void test_summary_ranks(void **state)
{
    (void)state;
    char dir[300];
    ranked_profile(dir, sizeof dir);
    nx_system_summary s;
    nx_error err = {0};
    assert_int_equal(nx_system_summary_read(dir, -1, &s, &err), 0);
    assert_int_equal(s.events, (int64_t)N_RANKED);
    /* Per rank: rank 0 two events over 100..200, busy 100; rank 1 three over 105..450,
     * busy 195 + 50. The runtime event has no rank. */
    assert_int_equal(s.n_ranks, 2);
    static const nx_system_rank want[] = {{0, 2, 100, 200, 100}, {1, 3, 105, 450, 245}};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(s.ranks[i].rank, want[i].rank);
        assert_int_equal(s.ranks[i].events, want[i].events);
        assert_int_equal(s.ranks[i].first_ts, want[i].first_ts);
        assert_int_equal(s.ranks[i].last_ts, want[i].last_ts);
        assert_int_equal(s.ranks[i].busy_ns, want[i].busy_ns);
    }
    assert_int_equal(s.n_busy, 3);
    assert_string_equal(s.busy[0].track, "rank 1 / python3 (1) / main");
    assert_string_equal(s.busy[1].track, "rank 0 / python3 (1) / main");
    nx_system_summary_free(&s);

    assert_int_equal(nx_system_summary_read(dir, 1, &s, &err), 0);
    assert_int_equal(s.rank, 1);
    assert_int_equal(s.events, 3);
    assert_int_equal(s.first_ts, 105);
    assert_int_equal(s.wall_ns, 345);
    assert_int_equal(s.n_busy, 1);
    assert_string_equal(s.busy[0].track, "rank 1 / python3 (1) / main");
    assert_int_equal(s.busy[0].busy_ns, 245);
    assert_int_equal(s.busy[0].top_level, 2);
    assert_int_equal(s.n_ranks, 1);
    assert_int_equal(s.n_top, 2);
    assert_string_equal(s.top[0].name, "step");
    assert_int_equal(s.top[0].self_ns, 185);
    nx_system_summary_free(&s);
}

/* A Kineto-like trace: the profiler's span and a step on the CPU, the step's copy on
 * the GPU's stream around two kernels that leave a gap, an instant on the GPU. */
#define GPU_JSON(cat) "{\"cat\":\"" cat "\",\"process_labels\":\"GPU 0\",\"thread_name\":\"stream 7 \"}"
static const sys_event PROFILED[] = {
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "PyTorch Profiler (0)", "{\"cat\":\"Trace\",\"pid\":\"Spans\"}"},
    {100, 900, "framework", NX_ABSENT, "i-1", 1, 1, "ProfilerStep#1", "{\"cat\":\"user_annotation\"}"},
    {110, 200, "framework", NX_ABSENT, "i-1", 1, 1, "aten::mm", "{\"cat\":\"cpu_op\"}"},
    {150, 950, "framework", NX_ABSENT, "i-1", 0, 7, "ProfilerStep#1", GPU_JSON("gpu_user_annotation")},
    {200, 300, "framework", NX_ABSENT, "i-1", 0, 7, "gemm", GPU_JSON("kernel")},
    {250, 250, "framework", NX_ABSENT, "i-1", 0, 7, "ac2g",
     "{\"ph\":\"f\",\"cat\":\"ac2g\",\"process_labels\":\"GPU 0\",\"thread_name\":\"stream 7 \"}"},
    {600, 650, "framework", NX_ABSENT, "i-1", 0, 7, "gemm", GPU_JSON("kernel")},
};

static void test_profiler_rows(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/profiled", root);
    write_events(dir, PROFILED, sizeof PROFILED / sizeof PROFILED[0], 0);
    const char *by[] = {"name"};
    nx_top r;
    nx_error err = {0};
    nx_top_options o = {.table = "SystemProfileEvents", .by = by, .n_by = 1};
    assert_int_equal(nx_top_run(dir, &o, &r, &err), 0);
    assert_int_equal(r.profiler_left_out, 3);
    assert_int_equal(nx_group_by_count(r.g), 3);   /* aten::mm, gemm, ac2g */
    assert_int_equal(nx_group_by_totals(r.g).count, 4);
    assert_int_equal(nx_top_wall(&r), 1000);       /* the wall still spans the profiler's rows */
    nx_group_key k;
    nx_group_by_key(r.g, 0, 0, &k);
    assert_memory_equal(k.s, "gemm", 4);
    nx_top_free(&r);
    o.profiler_rows = true;
    assert_int_equal(nx_top_run(dir, &o, &r, &err), 0);
    assert_int_equal(r.profiler_left_out, 0);
    assert_int_equal(nx_group_by_count(r.g), 5);
    nx_group_by_key(r.g, 0, 0, &k);   /* self time 710 on the CPU + 650 on the GPU */
    assert_memory_equal(k.s, "ProfilerStep#1", 14);
    assert_int_equal(nx_group_by_stats(r.g, 0)->sum[1], 1360);
    nx_top_free(&r);

    nx_system_summary s;
    assert_int_equal(nx_system_summary_read(dir, -1, &s, &err), 0);
    assert_int_equal(s.events, 7);
    assert_int_equal(s.n_top, 3);
    for (size_t i = 0; i < s.n_top; i++)
        assert_null(strstr(s.top[i].name, "Profiler"));
    /* The stream: its two kernels, 150 ns, not the annotation's 800 ns. */
    const nx_system_busy *gpu = NULL;
    for (size_t i = 0; i < s.n_busy; i++)
        if (strcmp(s.busy[i].track, "GPU 0 / stream 7") == 0)
            gpu = &s.busy[i];
    assert_non_null(gpu);
    assert_int_equal(gpu->busy_ns, 150);
    assert_int_equal(gpu->top_level, 2);
    nx_system_summary_free(&s);
    assert_int_equal(nx_system_summary_read_rows(dir, -1, true, &s, &err), 0);
    assert_string_equal(s.top[0].name, "ProfilerStep#1");
    assert_string_equal(s.top[1].name, "PyTorch Profiler (0)");
    nx_system_summary_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_profile_dir),
        cmocka_unit_test(test_json_member),
        cmocka_unit_test(test_top),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_top_rank),
        cmocka_unit_test(test_summary_ranks),
        cmocka_unit_test(test_profiler_rows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
