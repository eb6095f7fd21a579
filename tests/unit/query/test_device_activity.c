/*
 * test_device_activity.c — device_activity.h: the classification of hand-made
 * rows (Kineto GPU kernel, memcpy, memset, annotations and unknown cats on a
 * "GPU n" process; JAX stream rows and other device threads; NeuronCore rows;
 * host rows, instants and flows on a GPU process; the profiler's own rows;
 * ProfilerStep#N and step_num steps), the scan over a written profile (every
 * row once, in order, with its rank; a bad row named), and the interval union
 * and clipped length against a brute-force count over every nanosecond.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile_table.h"
#include "query/device_activity.h"
#include "system_fixture.h"
#include "test_rand.h"

static nx_activity classify(const char *source, const char *name, const char *json, int64_t nc, int64_t worker)
{
    nx_activity_input in = {.name = name, .name_len = strlen(name), .source = source, .source_len = strlen(source),
                            .json = json, .json_len = json ? strlen(json) : 0, .nc_idx = nc, .worker_gid = worker};
    nx_activity a;
    nx_activity_classify(&in, &a);
    return a;
}

#define GPU0 "\"process_name\":\"python3\",\"process_labels\":\"GPU 0\",\"thread_name\":\"stream 7 \"}"
#define JAXDEV "\"process_name\":\"/device:GPU:3\",\"thread_name\":"

static void test_kineto(void **state)
{
    (void)state;
    nx_activity a = classify("framework", "sm90_gemm", "{\"cat\":\"kernel\",\"args\":{}," GPU0, -1, -1);
    assert_int_equal(a.device_type, NX_DEVICE_GPU);
    assert_int_equal(a.device, 0);
    assert_int_equal(a.kind, NX_ACT_KERNEL);
    assert_int_equal(a.rank, -1);
    assert_false(a.profiler);
    assert_false(a.is_step);
    assert_int_equal(classify("framework", "Memcpy HtoD", "{\"cat\":\"gpu_memcpy\"," GPU0, -1, 2).kind, NX_ACT_MEMCPY);
    assert_int_equal(classify("framework", "Memcpy HtoD", "{\"cat\":\"gpu_memcpy\"," GPU0, -1, 2).rank, 2);
    assert_int_equal(classify("framework", "Memset", "{\"cat\":\"gpu_memset\"," GPU0, -1, -1).kind, NX_ACT_MEMSET);
    a = classify("framework", "ProfilerStep#4", "{\"cat\":\"gpu_user_annotation\"," GPU0, -1, -1);
    assert_int_equal(a.kind, NX_ACT_ANNOTATION);
    assert_true(a.profiler);
    assert_false(a.is_step);   /* the GPU copy of a step is not a second step */
    assert_int_equal(classify("framework", "fwd", "{\"cat\":\"gpu_user_annotation\"," GPU0, -1, -1).kind,
                     NX_ACT_ANNOTATION);
    assert_int_equal(classify("framework", "x", "{\"cat\":\"gpu_sync\"," GPU0, -1, -1).kind, NX_ACT_OTHER);
    a = classify("framework", "x", "{\"cat\":\"kernel\",\"process_labels\":\"GPU 12\"}", -1, -1);
    assert_int_equal(a.device, 12);
    /* An instant or a flow end on the GPU process is not activity. */
    a = classify("framework", "ac2g", "{\"ph\":\"f\",\"cat\":\"ac2g\"," GPU0, -1, -1);
    assert_int_equal(a.device_type, NX_DEVICE_NONE);
    assert_int_equal(a.kind, NX_ACT_NONE);
    /* Host rows: "CPU" or no labels, or a label that is not "GPU <n>". */
    a = classify("framework", "aten::mm", "{\"cat\":\"cpu_op\",\"process_labels\":\"CPU\"}", -1, -1);
    assert_int_equal(a.device_type, NX_DEVICE_NONE);
    assert_int_equal(a.device, -1);
    assert_int_equal(classify("framework", "k", "{\"cat\":\"kernel\",\"process_labels\":\"GPU x\"}", -1, -1).kind,
                     NX_ACT_NONE);
    assert_int_equal(classify("framework", "k", NULL, -1, -1).kind, NX_ACT_NONE);
}

static void test_jax(void **state)
{
    (void)state;
    nx_activity a = classify("framework", "gemm_fusion_dot", "{\"args\":{\"hlo_op\":\"x\"}," JAXDEV "\"Stream #14(Compute)\"}",
                             -1, -1);
    assert_int_equal(a.device_type, NX_DEVICE_GPU);
    assert_int_equal(a.device, 3);
    assert_int_equal(a.kind, NX_ACT_KERNEL);
    assert_int_equal(classify("framework", "MemcpyD2H", "{" JAXDEV "\"Stream #15(MemcpyD2H)\"}", -1, -1).kind,
                     NX_ACT_MEMCPY);
    assert_int_equal(classify("framework", "memset32", "{" JAXDEV "\"Stream #14\"}", -1, -1).kind, NX_ACT_MEMSET);
    assert_int_equal(classify("framework", "jit_step", "{" JAXDEV "\"XLA Modules\"}", -1, -1).kind, NX_ACT_ANNOTATION);
    assert_int_equal(classify("framework", "k", "{\"process_name\":\"/device:GPU:\"}", -1, -1).kind, NX_ACT_NONE);
    assert_int_equal(classify("framework", "k", "{\"process_name\":\"/host:CPU\"}", -1, -1).kind, NX_ACT_NONE);
}

static void test_neuron(void **state)
{
    (void)state;
    nx_activity a = classify("neuron_hw", "device_execution", "{}", 5, 1);
    assert_int_equal(a.device_type, NX_DEVICE_NEURONCORE);
    assert_int_equal(a.device, 5);
    assert_int_equal(a.kind, NX_ACT_KERNEL);
    assert_int_equal(a.rank, 1);
    assert_int_equal(classify("neuron_rt", "nrt_execute", "{}", 5, -1).kind, NX_ACT_NONE);
    assert_int_equal(classify("neuron_hw", "device_execution", "{}", -1, -1).kind, NX_ACT_NONE);
    char buf[32];
    nx_device_name(NX_DEVICE_NEURONCORE, 5, buf, sizeof buf);
    assert_string_equal(buf, "NeuronCore 5");
    nx_device_name(NX_DEVICE_GPU, 0, buf, sizeof buf);
    assert_string_equal(buf, "GPU 0");
    nx_device_name(NX_DEVICE_NONE, 0, buf, sizeof buf);
    assert_string_equal(buf, "");
}

static void test_steps_and_profiler(void **state)
{
    (void)state;
    nx_activity a = classify("framework", "ProfilerStep#17", "{\"cat\":\"user_annotation\",\"process_labels\":\"CPU\"}",
                             -1, 0);
    assert_true(a.is_step);
    assert_int_equal(a.step, 17);
    assert_true(a.profiler);
    assert_int_equal(a.device_type, NX_DEVICE_NONE);
    assert_false(classify("framework", "ProfilerStep#x", "{\"cat\":\"user_annotation\"}", -1, -1).is_step);
    assert_false(classify("framework", "ProfilerStep#", "{\"cat\":\"user_annotation\"}", -1, -1).is_step);
    a = classify("framework", "train", "{\"args\":{\"step_num\":\"9\"},\"process_name\":\"/host:CPU\"}", -1, -1);
    assert_true(a.is_step);
    assert_int_equal(a.step, 9);
    assert_false(a.profiler);
    assert_int_equal(classify("framework", "train", "{\"args\":{\"step_num\":4}}", -1, -1).step, 4);
    assert_false(classify("framework", "train", "{\"args\":{\"step_num\":\"-1\"}}", -1, -1).is_step);
    assert_false(classify("framework", "train", "{\"args\":{\"x\":{\"step_num\":1}}}", -1, -1).is_step);
    assert_false(classify("framework", "aten::mm", "{\"cat\":\"cpu_op\"}", -1, -1).is_step);
    assert_true(classify("framework", "PyTorch Profiler (0)", "{\"cat\":\"Trace\",\"pid\":\"Spans\"}", -1, -1).profiler);
    assert_false(classify("framework", "PyTorch Profiler (0)", "{\"cat\":\"cpu_op\"}", -1, -1).profiler);
}

/* ---------------------------------------------------------------- scan -- */

typedef struct seen {
    size_t n;
    int64_t start[8], end[8], rank[8];
    nx_activity_kind kind[8];
    char name[8][32], json[8][80];
} seen;

static int record(void *ctx, const nx_activity_row *r, nx_error *err)
{
    (void)err;
    seen *s = ctx;
    assert_true(s->n < 8);
    s->start[s->n] = r->start_ns;
    s->end[s->n] = r->end_ns;
    s->rank[s->n] = r->a.rank;
    s->kind[s->n] = r->a.kind;
    snprintf(s->name[s->n], 32, "%.*s", (int)r->name_len, r->name);
    snprintf(s->json[s->n], 80, "%.*s", (int)r->json_len, r->json);
    s->n++;
    return 0;
}

static int stop_at_second(void *ctx, const nx_activity_row *r, nx_error *err)
{
    (void)r;
    int *n = ctx;
    return ++*n == 2 ? nx_error_set(err, "stopped") : 0;
}

static void test_scan(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/nx_devact_%d", (int)getpid());
    static const sys_event ev[] = {
        {10, 20, "framework", NX_ABSENT, "i-1", 1, 1, "aten::mm", "{\"cat\":\"cpu_op\"}"},
        {15, 30, "framework", NX_ABSENT, "i-1", 0, 7, "k", "{\"cat\":\"kernel\",\"process_labels\":\"GPU 0\"}"},
        {40, 40, "neuron_hw", 2, "i-1", 1, 1, "device_execution", "{}"},
    };
    static const int64_t rank[] = {-1, 3, 1};
    write_ranked_events(dir, ev, rank, 3, 2);   /* two files */
    seen s = {0};
    nx_error err = {0};
    assert_int_equal(nx_activity_scan(dir, record, &s, &err), 0);
    assert_int_equal(s.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(s.start[i], ev[i].start);
        assert_int_equal(s.end[i], ev[i].end);
        assert_int_equal(s.rank[i], rank[i]);
        assert_string_equal(s.name[i], ev[i].name);
        assert_string_equal(s.json[i], ev[i].json);   /* the args a breakdown reads */
    }
    assert_int_equal(s.kind[0], NX_ACT_NONE);
    assert_int_equal(s.kind[1], NX_ACT_KERNEL);
    assert_int_equal(s.kind[2], NX_ACT_KERNEL);
    int calls = 0;
    assert_int_equal(nx_activity_scan(dir, stop_at_second, &calls, &err), -1);
    assert_string_equal(err.msg, "stopped");
    fixture_rmrf(dir);
    mkdir(dir, 0755);
    assert_int_equal(nx_activity_scan(dir, record, &s, &err), NX_PROFILE_TABLE_ABSENT);
    fixture_rmrf(dir);

    static const sys_event bad[] = {{50, 40, "framework", NX_ABSENT, "i-1", 1, 1, "oops", "{}"}};
    write_events(dir, bad, 1, 0);
    s.n = 0;
    assert_int_equal(nx_activity_scan(dir, record, &s, &err), -1);
    assert_non_null(strstr(err.msg, "SystemProfileEvents: row 0"));
    assert_non_null(strstr(err.msg, "end_ts is before its start_ts"));
    fixture_rmrf(dir);
}

/* ----------------------------------------------------------- intervals -- */

static bool coll(const char *s) { return nx_activity_is_collective(s, strlen(s)); }

static void test_collective(void **state)
{
    (void)state;
    assert_true(coll("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    assert_true(coll("c10d::allreduce_"));
    assert_true(coll("gloo:all_reduce"));
    assert_true(coll("record_param_comms"));
    assert_true(coll("all-reduce.3"));
    assert_true(coll("ALL_GATHER"));
    assert_true(coll("reduce-scatter-start"));
    assert_true(coll("ProcessGroupGloo::allreduce"));
    assert_true(coll("c10d::all_gather_"));
    assert_true(coll("ReduceScatter_AllGather"));
    assert_true(coll("reduce_scatter"));
    assert_true(coll("ncclKernel_SendRecv"));
    assert_true(coll("all_to_all_single"));
    assert_true(coll("AllToAll"));
    assert_true(coll("collective-permute.1"));
    assert_true(coll("ncclDevKernel_Broadcast_RING_LL"));   /* by "nccl", not by "broadcast" */
    assert_false(coll("aten::broadcast_tensors"));
    assert_false(coll("aten::mm"));
    assert_false(coll("send"));
    assert_false(coll("BROADCAST"));   /* a bare word: aten::broadcast_to is no collective */
    assert_false(coll("void at::native::reduce_kernel<128, 4>"));
    assert_false(coll("Memcpy DtoD"));
    assert_false(coll("gemm"));
    assert_false(coll(""));
    assert_false(nx_activity_is_collective("ncc", 3));
}

static void test_sync_copy(void **state)
{
    (void)state;
    assert_true(nx_activity_is_sync_copy("cudaMemcpy", 10));
    assert_true(nx_activity_is_sync_copy("cudaMemcpy2D", 12));
    assert_true(nx_activity_is_sync_copy("cudaMemcpyToSymbol", 18));
    assert_false(nx_activity_is_sync_copy("cudaMemcpyAsync", 15));
    assert_false(nx_activity_is_sync_copy("cudaMemcpy2DAsync", 17));
    assert_true(nx_activity_is_sync_copy("cudaMemcpyAsync", 10));   /* only len bytes: "cudaMemcpy" */
    assert_false(nx_activity_is_sync_copy("cudaMemset", 10));
    assert_false(nx_activity_is_sync_copy("cudaMemcp", 9));
    assert_false(nx_activity_is_collective("nccl", 3));   /* only the given length is read */
}

static void test_union_fixed(void **state)
{
    (void)state;
    nx_interval iv[] = {{30, 40}, {0, 10}, {5, 12}, {12, 15}, {20, 20}, {35, 38}};
    size_t n = nx_interval_union(iv, 6);
    assert_int_equal(n, 3);
    assert_int_equal(iv[0].start, 0);
    assert_int_equal(iv[0].end, 15);
    assert_int_equal(iv[1].start, 20);
    assert_int_equal(iv[1].end, 20);
    assert_int_equal(iv[2].start, 30);
    assert_int_equal(iv[2].end, 40);
    int64_t len = -1;
    assert_true(nx_interval_length(iv, n, INT64_MIN, INT64_MAX, &len));
    assert_int_equal(len, 25);
    assert_true(nx_interval_length(iv, n, 8, 33, &len));
    assert_int_equal(len, 10);
    assert_true(nx_interval_length(iv, n, 15, 30, &len));
    assert_int_equal(len, 0);
    assert_int_equal(nx_interval_union(iv, 0), 0);
    nx_interval huge[] = {{INT64_MIN, 0}, {1, INT64_MAX}};
    assert_false(nx_interval_length(huge, 2, INT64_MIN, INT64_MAX, &len));
}

/* Random intervals on [0, 200): the union's length inside random windows equals
 * the count of covered nanoseconds. */
static void test_union_random(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        nx_interval iv[24];
        bool covered[200] = {false};
        size_t n = (size_t)(next_rand() % 24);
        for (size_t i = 0; i < n; i++) {
            int64_t s = (int64_t)(next_rand() % 190), d = (int64_t)(next_rand() % 20);
            if (s + d > 200)
                d = 200 - s;
            iv[i] = (nx_interval){s, s + d};
            for (int64_t t = s; t < s + d; t++)
                covered[t] = true;
        }
        size_t u = nx_interval_union(iv, n);
        for (size_t i = 1; i < u; i++)
            assert_true(iv[i - 1].end < iv[i].start);
        int64_t lo = (int64_t)(next_rand() % 200), hi = lo + (int64_t)(next_rand() % 120);
        int64_t want = 0, got = -1;
        for (int64_t t = lo; t < hi && t < 200; t++)
            want += covered[t];
        assert_true(nx_interval_length(iv, u, lo, hi, &got));
        assert_int_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kineto),         cmocka_unit_test(test_jax),
        cmocka_unit_test(test_neuron),         cmocka_unit_test(test_steps_and_profiler),
        cmocka_unit_test(test_scan),           cmocka_unit_test(test_union_fixed),
        cmocka_unit_test(test_union_random),
        cmocka_unit_test(test_collective),
        cmocka_unit_test(test_sync_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
