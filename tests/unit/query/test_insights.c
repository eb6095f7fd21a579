/*
 * test_insights.c — insights.h's rules, each on a hand-made profile made to
 * trigger it and one that does not (at or just inside the threshold), with
 * the expected evidence and scores worked out below by hand; the ranking and
 * the JSON.
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
#include <unistd.h>

#include "profile/profile_table.h"
#include "query/insights.h"
#include "system_fixture.h"

#define GPU "{\"cat\":\"kernel\",\"process_labels\":\"GPU 0\"}"
#define RT "{\"cat\":\"cuda_runtime\"}"
#define OP "{\"cat\":\"cpu_op\"}"
/* Each system profile has a step: a step changes no GPU rule's figures. */
#define STEP "{\"cat\":\"user_annotation\"}"

/* Rank 0: GPU busy [100,300) of the span [0,1000): idle 80 %. Rank 1: busy
 * [0,900): idle 10 %. One cudaMemcpy (50 ns) and one cudaMemcpyAsync. */
static const sys_event LOUD[] = {
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", STEP},
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", OP},
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", OP},
    {0, 900, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU},
    {100, 300, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU},
    {400, 450, "framework", NX_ABSENT, "i-1", 9, 9, "cudaMemcpy", RT},
    {500, 510, "framework", NX_ABSENT, "i-1", 9, 9, "cudaMemcpyAsync", RT},
};
static const int64_t LOUD_RANK[] = {0, 0, 1, 1, 0, 0, 0};

/* Idle exactly 20 % (not over), only asynchronous copies, and communication
 * (60 % of the span) wholly under compute. */
static const sys_event QUIET[] = {
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", STEP},
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", OP},
    {0, 800, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU},
    {100, 700, "framework", NX_ABSENT, "i-1", 0, 8, "ncclDevKernel_AllReduce", GPU},
    {500, 510, "framework", NX_ABSENT, "i-1", 9, 9, "cudaMemcpyAsync", RT},
};

/* Generated profiles: rows and their correlation JSON. */
#define MAX_GEN 128
static sys_event gen[MAX_GEN];
static char gen_json[MAX_GEN][96];
static size_t n_gen;

static void gen_row(int64_t start, int64_t end, int64_t pid, int64_t tid, const char *name, const char *cat,
                    int64_t corr)
{
    assert_true(n_gen < MAX_GEN);
    snprintf(gen_json[n_gen], sizeof gen_json[n_gen], "{\"cat\":\"%s\",\"args\":{\"correlation\":%lld},"
             "\"process_labels\":\"%s\"}", cat, (long long)corr, pid == 0 ? "GPU 0" : "CPU");
    gen[n_gen] = (sys_event){start, end, "framework", NX_ABSENT, "i-1", pid, tid, name, gen_json[n_gen]};
    n_gen++;
}

/* Host wait: over [0, 12 ms) 20 kernels of 100 us, kernel i (1..20) launched at
 * i * 400 us and run 20 ns later; kernel 21 launched at 8.05 ms, while kernel 20
 * runs, and run 2 ms later. Idle 9.9 ms (82.5 %): host wait 400,020 ns before
 * kernel 1 + 19 gaps of 300,000 = 6,100,020; other (long gaps with work queued,
 * and the end) 1,949,980 + 1,850,000 = 3,799,980. Launch delays: twenty of 20 ns
 * (median and p95), one of 2 ms: one outlier above 20 ns, worst 2 ms. */
static void write_host_wait(const char *dir)
{
    n_gen = 0;
    gen_row(0, 12000000, 9, 9, "aten::mm", "cpu_op", 0);
    for (int64_t i = 1; i <= 20; i++) {
        gen_row(i * 400000, i * 400000 + 10, 9, 9, "cudaLaunchKernel", "cuda_runtime", i);
        gen_row(i * 400000 + 20, i * 400000 + 100020, 0, 7, "gemm", "kernel", i);
    }
    gen_row(8050000, 8050010, 9, 9, "cudaLaunchKernel", "cuda_runtime", 21);
    gen_row(10050000, 10150000, 0, 7, "gemm", "kernel", 21);
    write_events(dir, gen, n_gen, 0);
}

/* Kernel wait and low overlap: over [0, 1 ms) 50 kernels of 15 us every 20 us
 * from 1 us, all launched first (at 10 (k + 1) ns); the odd ones are nccl. Idle
 * 250,000 ns (25 %): host wait 1,000 before the first, kernel wait 49 x 5,000 =
 * 245,000, other 4,000 at the end. Communication 25 x 15,000 = 375,000 ns
 * (37.5 %), none under compute. Launch delays up to 980,500 ns: under 1 ms. */
static void write_kernel_wait(const char *dir)
{
    n_gen = 0;
    gen_row(0, 1000000, 9, 9, "aten::mm", "cpu_op", 0);
    for (int64_t k = 0; k < 50; k++)
        gen_row(10 * (k + 1), 10 * (k + 1) + 5, 9, 9, "cudaLaunchKernel", "cuda_runtime", k + 1);
    for (int64_t k = 0; k < 50; k++)
        gen_row(1000 + k * 20000, 16000 + k * 20000, 0, 7, k % 2 ? "ncclDevKernel_AllReduce" : "gemm", "kernel",
                k + 1);
    write_events(dir, gen, n_gen, 0);
}

static const char *const FIELDS[] = {"model_flops",    "hardware_flops",       "transpose_flops",
                                     "spill_save_bytes", "spill_reload_bytes", "hbm_read_bytes",
                                     "dma_transfer_count", "dma_transfer_average_bytes"};
/* model 40 % of hardware, transpose 30 %, spill 30 % of HBM reads, DMA 1 KiB on average. */
static const double DEV_LOUD[] = {40, 100, 30, 20, 10, 100, 10, 1024};
/* model 60 %, transpose exactly 10 %, spill exactly 25 %, DMA exactly 4 KiB, no throttled
 * time, collectives at exactly twice their median: nothing fires. */
static const double DEV_QUIET[] = {60, 100, 10, 15, 10, 100, 10, 4096};

static char base[64], loud[96], quiet[96], host_wait[96], kernel_wait[96], dev_loud[96], dev_quiet[96], dev_bare[96];

/* dir/<table>.parquet: a STRING column `text`, then INT64 columns ints[0..n_int),
 * one row per (s[i], v[i][...]); the last INT64 value also as a DOUBLE column `real`
 * when real is non-NULL. */
static void write_mixed(const char *dir, const char *table, const char *text, const char *const *ints, size_t n_int,
                        const char *real, const char *const *s, const int64_t (*v)[3], size_t rows)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.parquet", dir, table);
    nxpq_column_spec cols[5] = {{.name = text, .type = NXPQ_STRING}};
    for (size_t i = 0; i < n_int; i++)
        cols[1 + i] = (nxpq_column_spec){.name = ints[i], .type = NXPQ_INT64};
    size_t n = 1 + n_int;
    if (real)
        cols[n++] = (nxpq_column_spec){.name = real, .type = NXPQ_DOUBLE};
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, n, NULL, &err);
    assert_non_null(w);
    for (size_t r = 0; r < rows; r++) {
        assert_int_equal(nxpq_put_string(w, 0, s[r], strlen(s[r])), 0);
        for (size_t i = 0; i < n_int; i++)
            assert_int_equal(nxpq_put_int64(w, 1 + i, v[r][i]), 0);
        if (real)
            assert_int_equal(nxpq_put_double(w, n - 1, (double)v[r][n_int - 1] / 10), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

/* ThrottleSummary: NeuronCore 1 throttled 500 ns (50.0 %); a type never throttled. */
static const char *const THROTTLE_TYPE[] = {"activity_0", "power"};
static const int64_t THROTTLE[][3] = {{1, 500, 500}, {1, 0, 0}};
static const char *const THROTTLE_INTS[] = {"nc_idx", "throttle_active_time_ns"};
/* CcOp: AllReduce of 64 bytes 100, 110, 120, 300 ns (300 > 2 x the lower median 110);
 * AllGather of 64 bytes 100, 100, 200 ns (200 is not over 2 x 100); AllReduce of 128
 * bytes 10, 900 (two ops: too few to judge). */
static const char *const CC_OP[] = {"AllReduce", "AllReduce", "AllReduce", "AllReduce", "AllGather",
                                    "AllGather", "AllGather", "AllReduce", "AllReduce"};
static const int64_t CC[][3] = {{64, 100}, {64, 120}, {64, 300}, {64, 110}, {64, 100},
                                {64, 200}, {64, 100}, {128, 10}, {128, 900}};
static const char *const CC_INTS[] = {"input_size", "duration_ns"};

static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/nx_insights_%d", (int)getpid());
    mkdir(base, 0755);
    snprintf(loud, sizeof loud, "%s/loud", base);
    snprintf(quiet, sizeof quiet, "%s/quiet", base);
    snprintf(host_wait, sizeof host_wait, "%s/host_wait", base);
    snprintf(kernel_wait, sizeof kernel_wait, "%s/kernel_wait", base);
    snprintf(dev_loud, sizeof dev_loud, "%s/dev_loud", base);
    snprintf(dev_quiet, sizeof dev_quiet, "%s/dev_quiet", base);
    snprintf(dev_bare, sizeof dev_bare, "%s/dev_bare", base);
    write_ranked_events(loud, LOUD, LOUD_RANK, sizeof LOUD / sizeof LOUD[0], 0);
    write_events(quiet, QUIET, sizeof QUIET / sizeof QUIET[0], 0);
    write_host_wait(host_wait);
    write_kernel_wait(kernel_wait);
    mkdir(dev_loud, 0755);
    mkdir(dev_quiet, 0755);
    mkdir(dev_bare, 0755);
    write_row0(dev_loud, "Summary", FIELDS, 7, 8, DEV_LOUD, 1);
    write_row0(dev_quiet, "Summary", FIELDS, 7, 8, DEV_QUIET, 1);
    write_mixed(dev_loud, "ThrottleSummary", "throttle_type", THROTTLE_INTS, 2, "throttle_active_time_percent",
                THROTTLE_TYPE, THROTTLE, 2);
    write_mixed(dev_loud, "CcOp", "operation", CC_INTS, 2, NULL, CC_OP, CC, 9);
    write_mixed(dev_quiet, "ThrottleSummary", "throttle_type", THROTTLE_INTS, 2, "throttle_active_time_percent",
                THROTTLE_TYPE + 1, THROTTLE + 1, 1);
    write_mixed(dev_quiet, "CcOp", "operation", CC_INTS, 2, NULL, CC_OP + 4, CC + 4, 5);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(base);
    return 0;
}

static void test_gpu_rules_fire(void **state)
{
    (void)state;
    nx_insights s;
    nx_error err = {0};
    assert_int_equal(nx_insights_read(loud, &s, &err), 0);
    assert_int_equal(s.scope, NX_INSIGHT_SYSTEM);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.items[0].rule->id, "gpu_idle");
    assert_string_equal(s.items[0].subject, "GPU 0, rank 0");
    assert_true(s.items[0].score == 0.8);
    assert_string_equal(s.items[0].severity, "high");
    /* No launch is linked: every gap is "other". */
    assert_string_equal(s.items[0].values, "{\"device\":\"GPU 0\",\"rank\":0,\"idle_ns\":800,\"wall_ns\":1000,"
                                           "\"busy_ns\":200,\"idle_fraction\":0.8,"
                                           "\"cause\":\"other\",\"host_wait_ns\":0,\"kernel_wait_ns\":0,"
                                           "\"other_ns\":800}");
    assert_non_null(strstr(s.items[0].evidence, "mostly other idle (800 ns): no work was queued"));
    assert_string_equal(s.items[1].rule->id, "sync_memcpy");
    assert_string_equal(s.items[1].values, "{\"count\":1,\"total_ns\":50,\"span_ns\":1000}");
    assert_true(s.items[1].score > 0.2399 && s.items[1].score < 0.2401);   /* 0.2 + 0.8 * 50 / 1000 */
    assert_string_equal(s.items[1].severity, "medium");
    nx_insights_free(&s);
}

static void test_gpu_rules_quiet(void **state)
{
    (void)state;
    nx_insights s;
    nx_error err = {0};
    assert_int_equal(nx_insights_read(quiet, &s, &err), 0);
    assert_int_equal(s.n, 0);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_insights_json(&s, &b);
    assert_string_equal(b.data, "{\"insights\":[],\"rules\":[{\"id\":\"gpu_idle\",\"title\":\"GPU idle\","
                                "\"threshold\":\"idle over 20% of the rank's span\",\"scope\":\"system\"},"
                                "{\"id\":\"sync_memcpy\",\"title\":\"Synchronous memcpy\",\"threshold\":"
                                "\"any cudaMemcpy call that is not Async\",\"scope\":\"system\"},"
                                "{\"id\":\"launch_outliers\",\"title\":\"Launch delay outliers\",\"threshold\":"
                                "\"a kernel's launch delay over p95 + 1.5 (p95 - median), the worst 1 ms or more\","
                                "\"scope\":\"system\"},{\"id\":\"low_overlap\",\"title\":"
                                "\"Low communication/compute overlap\",\"threshold\":\"communication over 10% of "
                                "the rank's span, under 50% of it overlapped by compute\",\"scope\":\"system\"}]}");
    nx_strbuf_free(&b);
    nx_insights_free(&s);
}

static void near(double a, double b) { assert_true(a > b - 1e-9 && a < b + 1e-9); }

static void test_host_wait_and_launch_outliers(void **state)
{
    (void)state;
    nx_insights s;
    nx_error err = {0};
    assert_int_equal(nx_insights_read(host_wait, &s, &err), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.items[0].rule->id, "gpu_idle");
    assert_string_equal(s.items[0].subject, "GPU 0");
    near(s.items[0].score, 0.825);
    assert_string_equal(s.items[0].values,
                        "{\"device\":\"GPU 0\",\"rank\":null,\"idle_ns\":9900000,\"wall_ns\":12000000,"
                        "\"busy_ns\":2100000,\"idle_fraction\":0.825,\"cause\":\"host_wait\","
                        "\"host_wait_ns\":6100020,\"kernel_wait_ns\":0,\"other_ns\":3799980}");
    assert_non_null(strstr(s.items[0].evidence, "mostly host wait (6100020 ns): the CPU does not launch work fast "
                                                "enough: capture the step in CUDA graphs or torch.compile it"));
    assert_string_equal(s.items[1].rule->id, "launch_outliers");
    near(s.items[1].score, 0.5);   /* 1 - 1 ms / 2 ms */
    assert_string_equal(s.items[1].severity, "high");
    assert_string_equal(s.items[1].values, "{\"device\":\"GPU 0\",\"rank\":null,\"outliers\":1,\"linked\":21,"
                                           "\"outlier_above_ns\":20,\"median_ns\":20,\"max_ns\":2000000}");
    nx_insights_free(&s);
}

static void test_kernel_wait_and_low_overlap(void **state)
{
    (void)state;
    nx_insights s;
    nx_error err = {0};
    assert_int_equal(nx_insights_read(kernel_wait, &s, &err), 0);
    assert_int_equal(s.n, 2);   /* no launch_outliers: the worst delay is under 1 ms */
    assert_string_equal(s.items[0].rule->id, "low_overlap");
    near(s.items[0].score, 0.75);   /* 2 x 375,000 / 1,000,000 exposed */
    assert_string_equal(s.items[0].values, "{\"device\":\"GPU 0\",\"rank\":null,\"communication_ns\":375000,"
                                           "\"exposed_ns\":375000,\"window_ns\":1000000,"
                                           "\"communication_share\":0.375,\"overlap_pct\":0}");
    assert_string_equal(s.items[1].rule->id, "gpu_idle");
    near(s.items[1].score, 0.25);
    assert_non_null(strstr(s.items[1].values, "\"cause\":\"kernel_wait\",\"host_wait_ns\":1000,"
                                              "\"kernel_wait_ns\":245000,\"other_ns\":4000}"));
    assert_non_null(strstr(s.items[1].evidence, "mostly kernel wait (245000 ns): many short kernels"));
    nx_insights_free(&s);
}

static void test_device_rules_fire(void **state)
{
    (void)state;
    nx_insights s;
    nx_error err = {0};
    assert_int_equal(nx_insights_read(dev_loud, &s, &err), 0);
    assert_int_equal(s.scope, NX_INSIGHT_DEVICE);
    assert_int_equal(s.n, 6);
    /* Scores: small DMA 1 - 1024/4096; throttling 50 / 100; collectives 1 - 2 x 110 / 300;
     * transpose (0.3 - 0.1) / 0.9; model 1 - 0.4/0.5; spill (0.3 - 0.25) / 0.75. */
    assert_string_equal(s.items[0].rule->id, "small_dma");
    near(s.items[0].score, 0.75);
    assert_string_equal(s.items[1].rule->id, "throttle_active");
    near(s.items[1].score, 0.5);
    assert_string_equal(s.items[1].subject, "NeuronCore 1, activity_0");
    assert_string_equal(s.items[1].values, "{\"nc_idx\":1,\"throttle_type\":\"activity_0\",\"throttle_active_time_ns\":500,"
                                           "\"throttle_active_time_percent\":50}");
    assert_string_equal(s.items[2].rule->id, "cc_outliers");
    near(s.items[2].score, 1 - 220.0 / 300.0);
    assert_string_equal(s.items[2].subject, "AllReduce of 64 bytes");
    assert_string_equal(s.items[2].values, "{\"operation\":\"AllReduce\",\"input_size\":64,\"ops\":4,\"outliers\":1,"
                                           "\"median_ns\":110,\"max_ns\":300}");
    assert_string_equal(s.items[3].rule->id, "transpose_flops");
    near(s.items[3].score, 0.2 / 0.9);
    assert_string_equal(s.items[4].rule->id, "low_model_flops");
    near(s.items[4].score, 0.2);
    assert_string_equal(s.items[5].rule->id, "spill_reload");
    near(s.items[5].score, 0.05 / 0.75);
    assert_string_equal(s.items[5].severity, "low");
    assert_string_equal(s.items[4].evidence, "model_flops is 40.0 % of hardware_flops (40 of 100)");
    nx_strbuf b = NX_STRBUF_INIT;
    nx_insights_json(&s, &b);
    assert_non_null(strstr(b.data, "{\"rule\":\"small_dma\",\"title\":\"Small DMA transfers\",\"threshold\":"
                                   "\"dma_transfer_average_bytes < 4096\",\"subject\":\"\",\"severity\":\"high\","
                                   "\"score\":0.75,\"evidence\":"));
    assert_non_null(strstr(b.data, "\"values\":{\"dma_transfer_average_bytes\":1024,\"dma_transfer_count\":10}}"));
    nx_strbuf_free(&b);
    nx_insights_free(&s);
}

static void test_device_rules_quiet(void **state)
{
    (void)state;
    nx_insights s;
    nx_error err = {0};
    assert_int_equal(nx_insights_read(dev_quiet, &s, &err), 0);
    assert_int_equal(s.n, 0);
    nx_insights_free(&s);
    assert_int_equal(nx_insights_read(dev_bare, &s, &err), 0);   /* no Summary: no fields, no finding */
    assert_int_equal(s.n, 0);
    nx_insights_free(&s);
}

static void test_rule_table(void **state)
{
    (void)state;
    size_t n = nx_insight_rule_count();
    assert_true(n >= 8);
    for (size_t i = 0; i < n; i++) {
        const nx_insight_rule_info *r = nx_insight_rule_at(i);
        assert_true(r->id[0] && r->title[0] && r->threshold[0]);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(r->id, nx_insight_rule_at(j)->id);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_rules_fire),    cmocka_unit_test(test_gpu_rules_quiet),
        cmocka_unit_test(test_device_rules_fire), cmocka_unit_test(test_device_rules_quiet),
        cmocka_unit_test(test_rule_table),        cmocka_unit_test(test_host_wait_and_launch_outliers),
        cmocka_unit_test(test_kernel_wait_and_low_overlap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
