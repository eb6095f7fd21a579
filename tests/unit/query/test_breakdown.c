/*
 * test_breakdown.c — breakdown.h on a hand-made system profile whose answers
 * are worked out below by hand: compute and nccl kernels that overlap (the
 * overlap counted once, under compute), a memcpy partly under communication
 * (precedence), idle gaps of each cause (host wait before a late launch,
 * kernel wait between queued kernels, other at the end), launch delays linked
 * by correlation id and scoped per rank (rank 1 reuses rank 0's ids), a step
 * window clipping everything, the rank and step filters, the top kernels with
 * their spread across ranks, the communication name patterns and the JSON.
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
#include "query/breakdown.h"
#include "system_fixture.h"

#define GPU(cat, args) "{\"cat\":\"" cat "\",\"args\":{" args "},\"process_labels\":\"GPU 0\"}"
#define LAUNCH(corr) "{\"cat\":\"cuda_runtime\",\"args\":{\"correlation\":" corr "},\"process_labels\":\"CPU\"}"
#define HOST(cat) "{\"cat\":\"" cat "\",\"process_labels\":\"CPU\"}"

/* start, end, source, nc, instance, pid, tid, name, json; in start order. */
static const sys_event EVENTS[] = {
    {0, 2000, "framework", NX_ABSENT, "i-1", 9, 9, "aten::step", HOST("cpu_op")},            /* rank 0's span */
    {90, 95, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("1")},
    {100, 1100, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST("user_annotation")},
    {100, 101, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("6")},       /* rank 1 */
    {150, 160, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("2")},
    {200, 400, "framework", NX_ABSENT, "i-1", 0, 7, "gemm", GPU("kernel", "\"correlation\":1")},
    {250, 260, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("1")},       /* rank 1 */
    {300, 600, "framework", NX_ABSENT, "i-1", 0, 8, "ncclAllReduce", GPU("kernel", "\"correlation\":2")},
    {300, 350, "framework", NX_ABSENT, "i-1", 0, 7, "k1", GPU("kernel", "\"correlation\":1")}, /* rank 1 */
    {500, 510, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("3")},
    {520, 525, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("\"4\"")},
    {605, 700, "framework", NX_ABSENT, "i-1", 0, 7, "gemm", GPU("kernel", "\"correlation\":3")},
    {650, 800, "framework", NX_ABSENT, "i-1", 0, 8, "ncclAllGather", GPU("kernel", "\"correlation\":4")},
    {700, 705, "framework", NX_ABSENT, "i-1", 9, 9, "cudaMemcpyAsync", LAUNCH("5")},
    {750, 900, "framework", NX_ABSENT, "i-1", 0, 9, "Memcpy HtoD (Pageable -> Device)",
     GPU("gpu_memcpy", "\"correlation\":5,\"bytes\":3000")},
    {1400, 1405, "framework", NX_ABSENT, "i-1", 9, 9, "cudaLaunchKernel", LAUNCH("6")},
    {1500, 1600, "framework", NX_ABSENT, "i-1", 0, 7, "relu", GPU("kernel", "\"correlation\":6")},
    {1700, 1750, "framework", NX_ABSENT, "i-1", 9, 9, "cudaMemcpy2D", HOST("cuda_runtime")},  /* synchronous */
};
static const int64_t RANK[] = {0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#define N_EVENTS (sizeof EVENTS / sizeof EVENTS[0])

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx_breakdown_%d", (int)getpid());
    write_ranked_events(dir, EVENTS, RANK, N_EVENTS, 6);   /* three files */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static void check_sum(const nx_bd_entry *e)
{
    const nx_bd_temporal *t = &e->t;
    assert_int_equal(t->compute_ns + t->communication_ns + t->memory_ns + t->idle_ns, t->window_ns);
    const nx_bd_idle *i = &e->idle;
    assert_int_equal(i->host_wait_ns + i->kernel_wait_ns + i->other_ns, t->idle_ns);
}

static void test_whole_rank(void **state)
{
    (void)state;
    nx_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_breakdown_read(dir, -1, -1, 10, &b, &err), 0);
    /* Host: every row's span; one synchronous copy (the cudaMemcpyAsync is not). */
    assert_int_equal(b.host.first_ns, 0);
    assert_int_equal(b.host.last_ns, 2000);
    assert_int_equal(b.host.sync_copies, 1);
    assert_int_equal(b.host.sync_copy_ns, 50);
    assert_int_equal(b.n_entries, 3);   /* rank 0 whole, rank 0 step 1, rank 1 whole */
    const nx_bd_entry *e = &b.entries[0];
    assert_string_equal(e->device, "GPU 0");
    assert_int_equal(e->rank, 0);
    assert_int_equal(e->step, -1);
    assert_null(e->step_name);
    assert_int_equal(e->start_ns, 0);
    assert_int_equal(e->end_ns, 2000);
    /* compute [200,400) [605,700) [1500,1600); comm [300,600) [650,800); memory [750,900). */
    assert_int_equal(e->t.compute_ns, 395);
    assert_int_equal(e->t.communication_ns, 300);      /* [400,600) + [700,800) */
    assert_int_equal(e->t.overlapped_comm_ns, 150);    /* [300,400) + [650,700) */
    assert_int_equal(e->t.memory_ns, 100);             /* [800,900): [750,800) is communication's */
    assert_int_equal(e->t.idle_ns, 1205);
    assert_true(e->t.overlap_pct > 33.333 && e->t.overlap_pct < 33.334);
    check_sum(e);
    /* [0,200) host (launch at 90), [600,605) kernel wait (launched at 500), [900,1500) host
     * (launch at 1400), [1600,2000) other (nothing after it). */
    assert_int_equal(e->idle.host_wait_ns, 800);
    assert_int_equal(e->idle.host_wait_count, 2);
    assert_int_equal(e->idle.kernel_wait_ns, 5);
    assert_int_equal(e->idle.kernel_wait_count, 1);
    assert_int_equal(e->idle.other_ns, 400);
    assert_int_equal(e->idle.other_count, 1);
    assert_int_equal(e->class_count[NX_BD_COMPUTE], 3);
    assert_int_equal(e->class_ns[NX_BD_COMPUTE], 395);
    assert_int_equal(e->class_count[NX_BD_COMM], 2);
    assert_int_equal(e->class_ns[NX_BD_COMM], 450);
    assert_int_equal(e->class_count[NX_BD_MEMORY], 1);
    assert_int_equal(e->class_ns[NX_BD_MEMORY], 150);
    /* Delays 110, 150, 105, 130, 100 (rank 1's launches of ids 1 and 6 not taken). */
    assert_int_equal(e->launch.kernels, 5);
    assert_int_equal(e->launch.linked, 5);
    assert_int_equal(e->launch.median_ns, 110);
    assert_int_equal(e->launch.p95_ns, 150);
    assert_int_equal(e->launch.max_ns, 150);
    assert_int_equal(e->launch.outlier_above_ns, 210);
    assert_int_equal(e->launch.outliers, 0);
    assert_int_equal(e->launch.short_kernels, 5);
    assert_string_equal(e->launch.verdict, "cpu-bound");   /* host wait dominates, idle > busy */
    assert_int_equal(e->xfer[NX_BD_HTOD].count, 1);
    assert_int_equal(e->xfer[NX_BD_HTOD].bytes, 3000);
    assert_int_equal(e->xfer[NX_BD_HTOD].duration_ns, 150);
    assert_true(e->xfer[NX_BD_HTOD].gbps == 20.0);
    const nx_bd_entry *r1 = &b.entries[2];
    assert_int_equal(r1->rank, 1);
    assert_int_equal(r1->start_ns, 100);
    assert_int_equal(r1->end_ns, 350);
    assert_int_equal(r1->launch.linked, 1);
    assert_int_equal(r1->launch.median_ns, 50);   /* its own launch of id 1, at 250 */
    assert_true(r1->t.overlap_pct < 0);
    check_sum(r1);
    nx_breakdown_free(&b);
}

static void test_step(void **state)
{
    (void)state;
    nx_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_breakdown_read(dir, -1, 1, 10, &b, &err), 0);
    assert_int_equal(b.n_entries, 1);
    const nx_bd_entry *e = &b.entries[0];
    assert_int_equal(e->step, 1);
    assert_string_equal(e->step_name, "ProfilerStep#1");
    assert_int_equal(e->start_ns, 100);
    assert_int_equal(e->end_ns, 1100);
    assert_int_equal(e->t.compute_ns, 295);
    assert_int_equal(e->t.communication_ns, 300);
    assert_int_equal(e->t.overlapped_comm_ns, 150);
    assert_int_equal(e->t.memory_ns, 100);
    assert_int_equal(e->t.idle_ns, 305);
    check_sum(e);
    /* The gaps clipped: [100,200) and [900,1100) host, [600,605) kernel wait. */
    assert_int_equal(e->idle.host_wait_ns, 300);
    assert_int_equal(e->idle.host_wait_count, 2);
    assert_int_equal(e->idle.kernel_wait_ns, 5);
    assert_int_equal(e->idle.other_ns, 0);
    assert_int_equal(e->class_count[NX_BD_COMPUTE], 2);   /* relu starts after the step */
    assert_int_equal(e->launch.kernels, 4);
    assert_int_equal(e->launch.median_ns, 110);            /* of 105, 110, 130, 150 */
    assert_int_equal(e->launch.p95_ns, 150);
    nx_breakdown_free(&b);
    assert_int_equal(nx_breakdown_read(dir, -1, 7, 10, &b, &err), 0);
    assert_int_equal(b.n_entries, 0);   /* no step 7 */
    nx_breakdown_free(&b);
}

static void test_kernels_and_ranks(void **state)
{
    (void)state;
    nx_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_breakdown_read(dir, -1, -1, 2, &b, &err), 0);
    assert_int_equal(b.n_ranks, 2);
    assert_int_equal(b.n_kernels, 2);
    assert_string_equal(b.kernels[0].name, "ncclAllReduce");
    assert_int_equal(b.kernels[0].cls, NX_BD_COMM);
    assert_int_equal(b.kernels[0].total_ns, 300);
    const nx_bd_kernel *k = &b.kernels[1];
    assert_string_equal(k->name, "gemm");
    assert_int_equal(k->cls, NX_BD_COMPUTE);
    assert_int_equal(k->count, 2);
    assert_int_equal(k->total_ns, 295);
    assert_int_equal(k->min_ns, 95);
    assert_int_equal(k->max_ns, 200);
    assert_true(k->mean_ns == 147.5);
    assert_int_equal(k->rank_min_ns, 0);   /* rank 1 never ran it */
    assert_int_equal(k->rank_max_ns, 295);
    assert_true(k->rank_mean_ns == 147.5);
    nx_breakdown_free(&b);

    assert_int_equal(nx_breakdown_read(dir, 1, -1, 10, &b, &err), 0);
    assert_int_equal(b.host.first_ns, 100);   /* rank 1's rows only */
    assert_int_equal(b.host.last_ns, 350);
    assert_int_equal(b.host.sync_copies, 0);
    assert_int_equal(b.n_entries, 1);
    assert_int_equal(b.entries[0].rank, 1);
    assert_int_equal(b.n_ranks, 1);
    assert_int_equal(b.n_kernels, 1);
    assert_string_equal(b.kernels[0].name, "k1");
    assert_int_equal(b.kernels[0].rank_min_ns, 50);
    nx_breakdown_free(&b);
}

static void test_json(void **state)
{
    (void)state;
    nx_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_breakdown_read(dir, -1, -1, 10, &b, &err), 0);
    nx_strbuf s = NX_STRBUF_INIT;
    nx_breakdown_json(&b, true, &s);
    assert_false(nx_strbuf_failed(&s));
    assert_non_null(strstr(s.data, "\"temporal\":{\"window_ns\":2000,\"compute_ns\":395,\"communication_ns\":300,"
                                   "\"overlapped_comm_ns\":150,\"memory_ns\":100,\"idle_ns\":1205,"));
    assert_non_null(strstr(s.data, "\"step\":1,\"step_name\":\"ProfilerStep#1\""));
    assert_non_null(strstr(s.data, "{\"kind\":\"HtoD\",\"count\":1,\"with_bytes\":1,\"bytes\":3000,"
                                   "\"duration_ns\":150,\"gbps\":20}"));
    assert_non_null(strstr(s.data, "\"overlap_pct\":null"));
    assert_non_null(strstr(s.data, "\"verdict\":\"cpu-bound\""));
    nx_strbuf_free(&s);
    nx_breakdown_free(&b);
}

static void test_absent(void **state)
{
    (void)state;
    char empty[80];
    snprintf(empty, sizeof empty, "%s-empty", dir);
    mkdir(empty, 0755);
    nx_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_breakdown_read(empty, -1, -1, 10, &b, &err), NX_PROFILE_TABLE_ABSENT);
    assert_int_equal(b.n_entries, 0);
    fixture_rmrf(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_rank),        cmocka_unit_test(test_step),
        cmocka_unit_test(test_kernels_and_ranks), cmocka_unit_test(test_json),
        cmocka_unit_test(test_absent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
