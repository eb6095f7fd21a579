/*
 * test_rank_stats.c — rank_stats.h on a hand-made profile of three ranks whose
 * answers are worked out below by hand: step durations with a rank missing a
 * step, an unranked step (ignored), host collectives matched by occurrence
 * (a tie of starts), NCCL kernels on the GPU, gloo annotations on the GPU
 * (copies, left out), a collective seen on one rank only (no entry), one
 * outside every step (step -1); a one-rank profile; the JSON.
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
#include "query/rank_stats.h"
#include "system_fixture.h"

#define GPU(cat) "{\"cat\":\"" cat "\",\"process_labels\":\"GPU 0\"}"
#define HOST "{\"cat\":\"user_annotation\"}"
#define CPU "{\"cat\":\"cpu_op\"}"
#define NCCL "ncclDevKernel_AllReduce_Sum_f32"

/* start, end, source, nc, instance, pid, tid, name, json; in start order. */
static const sys_event EVENTS[] = {
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {0, 1200, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {0, 5000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},   /* unranked */
    {10, 910, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {100, 120, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {150, 170, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {200, 250, "framework", NX_ABSENT, "i-1", 0, 7, "gloo:all_reduce", GPU("gpu_user_annotation")},
    {300, 350, "framework", NX_ABSENT, "i-1", 0, 7, "gloo:all_reduce", GPU("gpu_user_annotation")},
    {400, 420, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {500, 520, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {500, 520, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {600, 650, "framework", NX_ABSENT, "i-1", 0, 7, NCCL, GPU("kernel")},
    {700, 750, "framework", NX_ABSENT, "i-1", 0, 7, NCCL, GPU("kernel")},
    {1000, 2000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {1100, 1120, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {1200, 2100, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {1300, 1310, "framework", NX_ABSENT, "i-1", 9, 9, "record_param_comms", CPU},
    {1500, 1520, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {3000, 3010, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::barrier", CPU},
    {3050, 3060, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::barrier", CPU},
};
static const int64_t RANK[] = {0, 1, -1, 2, 0, 1, 0, 1, 2, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1};
#define N_EVENTS (sizeof EVENTS / sizeof EVENTS[0])

/* Two ranks, each with a step 2 nested in its step 1 and collectives in step 2, in
 * step 1 after step 2 ended, and after both; rank 1 10 ns later. */
static const sys_event NESTED[] = {
    {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {10, 1010, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {200, 400, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {210, 410, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {300, 301, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {310, 311, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {500, 501, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {510, 511, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {1500, 1501, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {1510, 1511, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
};
static const int64_t NESTED_RANK[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};

static char dir[64], one[64], nested[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx_rankstats_%d", (int)getpid());
    snprintf(one, sizeof one, "/tmp/nx_rankstats1_%d", (int)getpid());
    write_ranked_events(dir, EVENTS, RANK, N_EVENTS, 7);   /* three files */
    static const int64_t ONE[] = {0, 0, 0, 0, 0};
    write_ranked_events(one, EVENTS, ONE, 5, 0);
    snprintf(nested, sizeof nested, "/tmp/nx_rankstats2_%d", (int)getpid());
    write_ranked_events(nested, NESTED, NESTED_RANK, sizeof NESTED / sizeof NESTED[0], 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    fixture_rmrf(one);
    fixture_rmrf(nested);
    return 0;
}

static void test_steps(void **state)
{
    (void)state;
    nx_rank_stats s;
    nx_error err = {0};
    assert_int_equal(nx_rank_stats_read(dir, &s, &err), 0);
    assert_int_equal(s.n_ranks, 3);
    assert_int_equal(s.ranks[0], 0);
    assert_int_equal(s.ranks[2], 2);
    assert_int_equal(s.n_steps, 2);
    const nx_rank_step *a = &s.steps[0], *b = &s.steps[1];
    assert_int_equal(a->step, 1);
    assert_int_equal(a->duration_ns[0], 1000);
    assert_int_equal(a->duration_ns[1], 1200);
    assert_int_equal(a->duration_ns[2], 900);
    assert_int_equal(a->start_ns[2], 10);
    assert_int_equal(a->n_present, 3);
    assert_int_equal(a->min_ns, 900);
    assert_int_equal(a->max_ns, 1200);
    assert_int_equal(a->median_ns, 1000);
    assert_int_equal(a->skew_ns, 300);
    assert_true(a->max_over_median == 1.2);
    assert_int_equal(a->slowest_rank, 1);
    assert_int_equal(a->fastest_rank, 2);
    assert_int_equal(a->straggler_rank, 2);    /* c10d::allreduce_ #0: 400 - 100 */
    assert_int_equal(a->max_lateness_ns, 300);
    assert_int_equal(b->step, 2);
    assert_int_equal(b->duration_ns[2], -1);   /* rank 2 has no step 2 */
    assert_int_equal(b->n_present, 2);
    assert_int_equal(b->median_ns, 900);       /* the lower middle of 900, 1000 */
    assert_int_equal(b->skew_ns, 100);
    assert_true(b->max_over_median == 1000.0 / 900.0);
    assert_int_equal(b->slowest_rank, 0);
    assert_int_equal(b->fastest_rank, 1);
    assert_int_equal(b->straggler_rank, 1);
    assert_int_equal(b->max_lateness_ns, 400);
    nx_rank_stats_free(&s);
}

static void check(const nx_straggler *g, int64_t step, const char *name, int64_t occ, size_t n, int64_t first,
                  int64_t first_start, int64_t last, int64_t late, int64_t vs_median)
{
    assert_int_equal(g->step, step);
    assert_string_equal(g->name, name);
    assert_int_equal(g->occurrence, occ);
    assert_int_equal(g->n_ranks, n);
    assert_int_equal(g->first_rank, first);
    assert_int_equal(g->first_start_ns, first_start);
    assert_int_equal(g->straggler_rank, last);
    assert_int_equal(g->start_ns, first_start + late);
    assert_int_equal(g->lateness_ns, late);
    assert_int_equal(g->lateness_vs_median_ns, vs_median);
}

static void test_stragglers(void **state)
{
    (void)state;
    nx_rank_stats s;
    nx_error err = {0};
    assert_int_equal(nx_rank_stats_read(dir, &s, &err), 0);
    /* No gloo:all_reduce (annotations) and no record_param_comms (one rank). */
    assert_int_equal(s.n_stragglers, 5);
    check(&s.stragglers[0], -1, "c10d::barrier", 0, 2, 0, 3000, 1, 50, 50);
    check(&s.stragglers[1], 1, "c10d::allreduce_", 0, 3, 0, 100, 2, 300, 250);   /* median start 150 */
    check(&s.stragglers[2], 1, "c10d::allreduce_", 1, 2, 0, 500, 0, 0, 0);       /* a tie: the lower rank */
    check(&s.stragglers[3], 1, NCCL, 0, 2, 0, 600, 1, 100, 100);                 /* median: the lower, 600 */
    check(&s.stragglers[4], 2, "c10d::allreduce_", 0, 2, 0, 1100, 1, 400, 400);
    nx_rank_stats_free(&s);
}

static void test_nested_steps(void **state)
{
    (void)state;
    nx_rank_stats s;
    nx_error err = {0};
    assert_int_equal(nx_rank_stats_read(nested, &s, &err), 0);
    assert_int_equal(s.n_stragglers, 3);
    check(&s.stragglers[0], -1, "c10d::allreduce_", 0, 2, 0, 1500, 1, 10, 10);   /* after every step */
    check(&s.stragglers[1], 1, "c10d::allreduce_", 0, 2, 0, 500, 1, 10, 10);     /* step 1, step 2 over */
    check(&s.stragglers[2], 2, "c10d::allreduce_", 0, 2, 0, 300, 1, 10, 10);     /* the inner step */
    nx_rank_stats_free(&s);
}

static void test_one_rank_and_absent(void **state)
{
    (void)state;
    nx_rank_stats s;
    nx_error err = {0};
    assert_int_equal(nx_rank_stats_read(one, &s, &err), 0);
    assert_int_equal(s.n_ranks, 1);
    assert_int_equal(s.n_stragglers, 0);
    assert_int_equal(s.n_steps, 1);            /* the unranked step row is not one */
    assert_int_equal(s.steps[0].skew_ns, 0);
    nx_rank_stats_free(&s);
    char none[80];
    snprintf(none, sizeof none, "%s/none", dir);
    assert_int_equal(mkdir(none, 0755), 0);   /* a profile without SystemProfileEvents */
    assert_int_equal(nx_rank_stats_read(none, &s, &err), NX_PROFILE_TABLE_ABSENT);
    assert_int_equal(s.n_ranks, 0);
}

static void test_json(void **state)
{
    (void)state;
    nx_rank_stats s;
    nx_error err = {0};
    assert_int_equal(nx_rank_stats_read(dir, &s, &err), 0);
    s.steps[0].start_ns[0] = INT64_C(9007199254740993);   /* beyond 2^53 */
    nx_strbuf plain = NX_STRBUF_INIT, safe = NX_STRBUF_INIT;
    nx_rank_stats_json(&s, false, &plain);
    nx_rank_stats_json(&s, true, &safe);
    assert_non_null(strstr(plain.data, "{\"ranks\":[0,1,2],\"steps\":[{\"step\":1,\"durations_ns\":"
                                       "{\"0\":1000,\"1\":1200,\"2\":900},\"starts_ns\":{\"0\":9007199254740993,"));
    assert_non_null(strstr(safe.data, "\"starts_ns\":{\"0\":\"9007199254740993\","));
    assert_non_null(strstr(plain.data, "\"durations_ns\":{\"0\":1000,\"1\":900},"));   /* step 2: rank 2 absent */
    assert_non_null(strstr(plain.data, "\"skew_ns\":300,\"max_over_median\":1.2,\"slowest_rank\":1,"
                                       "\"fastest_rank\":2,\"straggler_rank\":2,\"max_lateness_ns\":300}"));
    assert_non_null(strstr(plain.data, "\"stragglers\":[{\"step\":-1,\"name\":\"c10d::barrier\",\"occurrence\":0,"
                                       "\"ranks\":2,\"first_rank\":0,\"first_start_ns\":3000,\"straggler_rank\":1,"
                                       "\"start_ns\":3050,\"lateness_ns\":50,\"lateness_vs_median_ns\":50}"));
    nx_strbuf_free(&plain);
    nx_strbuf_free(&safe);
    nx_rank_stats_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_stragglers),
        cmocka_unit_test(test_nested_steps),
        cmocka_unit_test(test_one_rank_and_absent),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
