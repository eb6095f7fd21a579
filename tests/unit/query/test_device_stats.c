/*
 * test_device_stats.c — device_stats.h on a hand-made system profile whose
 * answers are worked out below by hand: overlapping kernels on two streams, a
 * ProfilerStep annotation on the GPU track (not activity), a memcpy that runs
 * past its step's end, a memset, a zero-length kernel, a kernel after the last
 * step, a second rank with its own GPU 0 and a JAX-style step (args.step_num);
 * the rank filter; the JSON members with and without safe integers.
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
#include "query/device_stats.h"
#include "system_fixture.h"

#define GPU(cat) "{\"cat\":\"" cat "\",\"process_labels\":\"GPU 0\"}"
#define HOST "{\"cat\":\"user_annotation\",\"process_labels\":\"CPU\"}"

/* start, end, source, nc, instance, pid, tid, name, json; in start order. */
static const sys_event EVENTS[] = {
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", "{\"cat\":\"cpu_op\"}"},   /* rank 0's span */
    {50, 300, "framework", NX_ABSENT, "i-1", 9, 9, "host", "{\"cat\":\"cpu_op\"}"},       /* rank 1's span */
    {60, 250, "framework", NX_ABSENT, "i-1", 9, 9, "train", "{\"args\":{\"step_num\":\"5\"}}"}, /* rank 1 */
    {100, 400, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {100, 200, "framework", NX_ABSENT, "i-1", 0, 7, "k1", GPU("kernel")},                /* rank 1 */
    {150, 900, "framework", NX_ABSENT, "i-1", 0, 7, "ProfilerStep#1", GPU("gpu_user_annotation")},
    {200, 300, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU("kernel")},
    {250, 350, "framework", NX_ABSENT, "i-1", 0, 8, "k", GPU("kernel")},
    {320, 500, "framework", NX_ABSENT, "i-1", 0, 7, "Memcpy HtoD", GPU("gpu_memcpy")},
    {400, 800, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {600, 650, "framework", NX_ABSENT, "i-1", 0, 7, "Memset", GPU("gpu_memset")},
    {700, 700, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU("kernel")},
    {900, 950, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU("kernel")},
};
static const int64_t RANK[] = {0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
#define N_EVENTS (sizeof EVENTS / sizeof EVENTS[0])

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx_devstats_%d", (int)getpid());
    write_ranked_events(dir, EVENTS, RANK, N_EVENTS, 5);   /* three files */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static void check_rank0_gpu(const nx_device_stat *d)
{
    assert_string_equal(d->device, "GPU 0");
    assert_int_equal(d->rank, 0);
    assert_int_equal(d->start_ns, 0);
    assert_int_equal(d->end_ns, 1000);
    assert_int_equal(d->wall_ns, 1000);
    /* [200,500) + [600,650) + [900,950); the annotation [150,900) is not activity. */
    assert_int_equal(d->busy_ns, 400);
    assert_int_equal(d->idle_ns, 600);
    assert_true(d->utilization == 0.4);
    assert_int_equal(d->kernel_ns, 200);   /* [200,350) + [700,700) + [900,950) */
    assert_int_equal(d->kernel_count, 4);
    assert_int_equal(d->memcpy_ns, 180);
    assert_int_equal(d->memcpy_count, 1);
    assert_int_equal(d->memset_ns, 50);
    assert_int_equal(d->memset_count, 1);
}

static void check_rank1_gpu(const nx_device_stat *d)
{
    assert_int_equal(d->rank, 1);
    assert_int_equal(d->start_ns, 50);
    assert_int_equal(d->end_ns, 300);
    assert_int_equal(d->busy_ns, 100);
    assert_int_equal(d->idle_ns, 150);
    assert_int_equal(d->kernel_count, 1);
    assert_int_equal(d->memcpy_count, 0);
}

static void test_devices(void **state)
{
    (void)state;
    nx_device_stats s;
    nx_error err = {0};
    assert_int_equal(nx_device_stats_read(dir, -1, &s, &err), 0);
    assert_int_equal(s.n_devices, 2);
    check_rank0_gpu(&s.devices[0]);
    check_rank1_gpu(&s.devices[1]);
    nx_device_stats_free(&s);
}

static void test_steps(void **state)
{
    (void)state;
    nx_device_stats s;
    nx_error err = {0};
    assert_int_equal(nx_device_stats_read(dir, -1, &s, &err), 0);
    assert_int_equal(s.n_steps, 3);   /* the GPU copy of ProfilerStep#1 is not a step */
    const nx_step_stat *a = &s.steps[0], *b = &s.steps[1], *c = &s.steps[2];
    assert_string_equal(a->name, "ProfilerStep#1");
    assert_int_equal(a->step, 1);
    assert_int_equal(a->rank, 0);
    assert_int_equal(a->duration_ns, 300);
    assert_int_equal(a->gpu_busy_ns, 200);    /* [200,400) */
    assert_int_equal(a->kernel_ns, 150);      /* [200,350) */
    assert_int_equal(a->kernel_count, 2);
    assert_int_equal(a->memcpy_ns, 80);       /* [320,400) */
    assert_int_equal(a->memset_ns, 0);
    assert_string_equal(b->name, "ProfilerStep#2");
    assert_int_equal(b->start_ns, 400);
    assert_int_equal(b->end_ns, 800);
    assert_int_equal(b->gpu_busy_ns, 150);    /* [400,500) + [600,650) */
    assert_int_equal(b->kernel_ns, 0);
    assert_int_equal(b->kernel_count, 1);     /* the zero-length kernel at 700 */
    assert_int_equal(b->memcpy_ns, 100);
    assert_int_equal(b->memset_ns, 50);
    assert_string_equal(c->name, "train");
    assert_int_equal(c->step, 5);
    assert_int_equal(c->rank, 1);
    assert_int_equal(c->gpu_busy_ns, 100);    /* rank 1's kernel only */
    assert_int_equal(c->kernel_count, 1);
    nx_device_stats_free(&s);
}

static void test_rank_filter(void **state)
{
    (void)state;
    nx_device_stats s;
    nx_error err = {0};
    assert_int_equal(nx_device_stats_read(dir, 1, &s, &err), 0);
    assert_int_equal(s.n_devices, 1);
    check_rank1_gpu(&s.devices[0]);
    assert_int_equal(s.n_steps, 1);
    assert_string_equal(s.steps[0].name, "train");
    nx_device_stats_free(&s);
    assert_int_equal(nx_device_stats_read(dir, 7, &s, &err), 0);
    assert_int_equal(s.n_devices, 0);
    assert_int_equal(s.n_steps, 0);
    nx_device_stats_free(&s);
}

static void test_json(void **state)
{
    (void)state;
    nx_device_stat d = {.device = "GPU 1", .rank = -1, .start_ns = INT64_C(1796395153075700764),
                        .end_ns = INT64_C(1796395153075701764), .wall_ns = 1000, .busy_ns = 250, .idle_ns = 750,
                        .utilization = 0.25, .kernel_ns = 250, .kernel_count = 3};
    nx_step_stat st = {.name = "Step \"1\"", .step = 1, .rank = 2, .start_ns = 5, .end_ns = 9, .duration_ns = 4};
    nx_device_stats s = {.devices = &d, .n_devices = 1, .steps = &st, .n_steps = 1};
    nx_strbuf b = NX_STRBUF_INIT;
    nx_device_stats_json(&s, true, &b);
    assert_false(nx_strbuf_failed(&b));
    assert_string_equal(b.data,
                        "\"devices\":[{\"device\":\"GPU 1\",\"rank\":null,\"start_ns\":\"1796395153075700764\","
                        "\"end_ns\":\"1796395153075701764\",\"wall_ns\":1000,\"busy_ns\":250,\"idle_ns\":750,"
                        "\"utilization\":0.25,\"kernel_ns\":250,\"kernel_count\":3,\"memcpy_ns\":0,\"memcpy_count\":0,"
                        "\"memset_ns\":0,\"memset_count\":0}],\"steps\":[{\"name\":\"Step \\\"1\\\"\",\"step\":1,"
                        "\"rank\":2,\"start_ns\":5,\"end_ns\":9,\"duration_ns\":4,\"gpu_busy_ns\":0,\"kernel_ns\":0,"
                        "\"kernel_count\":0,\"memcpy_ns\":0,\"memset_ns\":0}]");
    nx_strbuf_free(&b);
    nx_device_stats_json(&s, false, &b);
    assert_non_null(strstr(b.data, "\"start_ns\":1796395153075700764,"));
    nx_strbuf_free(&b);
    s = (nx_device_stats){0};
    nx_device_stats_json(&s, false, &b);
    assert_string_equal(b.data, "\"devices\":[],\"steps\":[]");
    nx_strbuf_free(&b);
}

static void test_absent(void **state)
{
    (void)state;
    char empty[80];
    snprintf(empty, sizeof empty, "%s_empty", dir);
    mkdir(empty, 0755);
    nx_device_stats s;
    nx_error err = {0};
    assert_int_equal(nx_device_stats_read(empty, -1, &s, &err), NX_PROFILE_TABLE_ABSENT);
    assert_int_equal(s.n_devices + s.n_steps, 0);
    fixture_rmrf(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_devices), cmocka_unit_test(test_steps), cmocka_unit_test(test_rank_filter),
        cmocka_unit_test(test_json),    cmocka_unit_test(test_absent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
