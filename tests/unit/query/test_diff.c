/*
 * test_diff.c — query/diff.h on hand-made profiles, every figure worked out by hand
 * below: the join (added, removed, changed, same), the order (|delta| descending, ties
 * by key), the ratio and its absence, the profiler's rows left out (and kept with
 * include_profiler), the kernel key, the totals, the refusals (kinds, keys), and the
 * JSON writer's text.
 *
 * System profiles (one thread, pid 1 tid 1, unless said):
 *   A: ProfilerStep#1 [0,100] > mm [10,30], mm [40,50]; relu [60,70]; mark [80,80];
 *      "PyTorch Profiler (0)" [0,200] on tid 2; k1 [0,10] cat kernel on tid 3
 *   B: ProfilerStep#1 [0,100] > mm [10,40], gelu [50,55]; relu [60,70]; mark [80,80];
 *      ProfilerStep#2 [150,160]; "PyTorch Profiler (0)" [0,200] on tid 2; k1 [0,12] cat
 *      kernel, k2 [20,21] cat cpu_op on tid 3
 *   by name: gelu added +5; k1 changed +2 (ratio 1.2); mm changed (2 -> 1 rows, 30
 *   -> 30 ns: delta 0); mark same (0 ns, no ratio); relu same (10 -> 10); k2 added +1.
 *   Order: gelu 5, k1 2, k2 1, then the zeros by name: mark, mm, relu.
 * Device profiles (Instruction: opcode, duration_ns):
 *   A: MATMUL 10, MATMUL 20, ADD 7;  B: MATMUL 30, SUB 7
 *   -> ADD removed -7, SUB added +7 (a tie: ADD first), MATMUL changed 0 (ratio 1).
 *   FrameworkInstruction (framework_name, start_ts, end_ts): A: mlp [0,40], attn [50,60],
 *   attn [70,75]; B: mlp [0,30], attn [40,55], attn [60,61], attn [70,null]
 *   -> mlp changed -10, attn changed 15 -> 16 (+1; the null end counts as a row, not a time).
 * Device and step totals (GPU rows labelled "GPU n", host rows on pid 9):
 *   GA (rank 0): host [0,1000]; ProfilerStep#1 [100,400], #2 [400,800]; GPU 0 kernels
 *       [100,200], [500,600] -> GPU 0 wall 1000 busy 200 idle 800 kernel 200;
 *   GB (rank 1): host [0,1200]; ProfilerStep#1 [100,500], #3 [600,700]; GPU 0 kernel
 *       [100,250], memcpy [300,320]; GPU 1 kernel [600,650] -> GPU 0 busy 170 idle 1030
 *       kernel 150 memcpy 20; GPU 1 busy 50 idle 1150;
 *   GA vs GB (one rank each: joined without it): GPU 0 both, GPU 1 only B; step 1 both
 *       (300 -> 400 ns, busy 100 -> 170), step 2 only A (busy 100), step 3 only B (busy 50);
 *   GC (ranks 0 and 1): rank 0 GPU 0 kernel [100,150], ProfilerStep#1 [100,400]; rank 1
 *       host [0,60], GPU 0 kernel [0,10], ProfilerStep#1 [0,50]; GA vs GC joins on the
 *       rank: (0, GPU 0) both, (1, GPU 0) only C; steps (0,1) both, (0,2) only A, (1,1)
 *       only C.
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

#include "query/diff.h"
#include "query/top.h"
#include "system_fixture.h"
#include "table_fixture.h"

static char root[64], sys_a[128], sys_b[128], dev_a[128], dev_b[128], gpu_a[128], gpu_b[128], gpu_c[128];

#define KERNEL "{\"cat\":\"kernel\"}"
#define CPU_OP "{\"cat\":\"cpu_op\"}"
#define GPU(n, cat) "{\"cat\":\"" cat "\",\"process_labels\":\"GPU " #n "\"}"
#define HOST "{\"cat\":\"user_annotation\",\"process_labels\":\"CPU\"}"

/* The device and step fixtures above. */
static void write_gpu_profiles(void)
{
    snprintf(gpu_a, sizeof gpu_a, "%s/ga", root);
    snprintf(gpu_b, sizeof gpu_b, "%s/gb", root);
    snprintf(gpu_c, sizeof gpu_c, "%s/gc", root);
    static const sys_event a[] = {
        {0, 1000, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", CPU_OP},
        {100, 400, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
        {100, 200, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU(0, "kernel")},
        {400, 800, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
        {500, 600, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU(0, "kernel")},
    };
    static const sys_event b[] = {
        {0, 1200, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", CPU_OP},
        {100, 500, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
        {100, 250, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU(0, "kernel")},
        {300, 320, "framework", NX_ABSENT, "i-1", 0, 7, "Memcpy HtoD", GPU(0, "gpu_memcpy")},
        {600, 700, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#3", HOST},
        {600, 650, "framework", NX_ABSENT, "i-1", 1, 7, "k", GPU(1, "kernel")},
    };
    static const sys_event c[] = {
        {0, 60, "framework", NX_ABSENT, "i-1", 9, 9, "aten::mm", CPU_OP},
        {0, 50, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
        {0, 10, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU(0, "kernel")},
        {100, 400, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
        {100, 150, "framework", NX_ABSENT, "i-1", 0, 7, "k", GPU(0, "kernel")},
    };
    static const int64_t ra[] = {0, 0, 0, 0, 0}, rb[] = {1, 1, 1, 1, 1, 1}, rc[] = {1, 1, 1, 0, 0};
    write_ranked_events(gpu_a, a, ra, sizeof a / sizeof a[0], 0);
    write_ranked_events(gpu_b, b, rb, sizeof b / sizeof b[0], 0);
    write_ranked_events(gpu_c, c, rc, sizeof c / sizeof c[0], 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/nxdiff-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(sys_a, sizeof sys_a, "%s/sa", root);
    snprintf(sys_b, sizeof sys_b, "%s/sb", root);
    snprintf(dev_a, sizeof dev_a, "%s/da", root);
    snprintf(dev_b, sizeof dev_b, "%s/db", root);
    static const sys_event a[] = {
        {0, 10, "framework", NX_ABSENT, "i-1", 1, 3, "k1", KERNEL},
        {0, 100, "framework", NX_ABSENT, "i-1", 1, 1, "ProfilerStep#1", NULL},
        {0, 200, "framework", NX_ABSENT, "i-1", 1, 2, "PyTorch Profiler (0)", NULL},
        {10, 30, "framework", NX_ABSENT, "i-1", 1, 1, "mm", CPU_OP},
        {40, 50, "framework", NX_ABSENT, "i-1", 1, 1, "mm", CPU_OP},
        {60, 70, "framework", NX_ABSENT, "i-1", 1, 1, "relu", CPU_OP},
        {80, 80, "framework", NX_ABSENT, "i-1", 1, 1, "mark", NULL},
    };
    static const sys_event b[] = {
        {0, 12, "framework", NX_ABSENT, "i-1", 1, 3, "k1", KERNEL},
        {0, 100, "framework", NX_ABSENT, "i-1", 1, 1, "ProfilerStep#1", NULL},
        {0, 200, "framework", NX_ABSENT, "i-1", 1, 2, "PyTorch Profiler (0)", NULL},
        {10, 40, "framework", NX_ABSENT, "i-1", 1, 1, "mm", CPU_OP},
        {20, 21, "framework", NX_ABSENT, "i-1", 1, 3, "k2", CPU_OP},
        {50, 55, "framework", NX_ABSENT, "i-1", 1, 1, "gelu", CPU_OP},
        {60, 70, "framework", NX_ABSENT, "i-1", 1, 1, "relu", CPU_OP},
        {80, 80, "framework", NX_ABSENT, "i-1", 1, 1, "mark", NULL},
        {150, 160, "framework", NX_ABSENT, "i-1", 1, 1, "ProfilerStep#2", NULL},
    };
    write_gpu_profiles();
    write_events(sys_a, a, sizeof a / sizeof a[0], 0);
    write_events(sys_b, b, sizeof b / sizeof b[0], 0);
    static const fx_col cols[] = {{"opcode", NXPQ_STRING}, {"duration_ns", NXPQ_INT64}};
    assert_int_equal(mkdir(dev_a, 0755), 0);
    assert_int_equal(mkdir(dev_b, 0755), 0);
    fx_write(dev_a, "Instruction.parquet", cols, 2, (const char *const[]){"MATMUL", "10", "MATMUL", "20", "ADD", "7"},
             3);
    fx_write(dev_b, "Instruction.parquet", cols, 2, (const char *const[]){"MATMUL", "30", "SUB", "7"}, 2);
    static const fx_col fw[] = {{"framework_name", NXPQ_STRING}, {"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}};
    fx_write(dev_a, "FrameworkInstruction.parquet", fw, 3,
             (const char *const[]){"mlp", "0", "40", "attn", "50", "60", "attn", "70", "75"}, 3);
    fx_write(dev_b, "FrameworkInstruction.parquet", fw, 3,
             (const char *const[]){"mlp", "0", "30", "attn", "40", "55", "attn", "60", "61", "attn", "70", NULL}, 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(root);
    return 0;
}

static void run(const char *a, const char *b, const char *by, bool all, nx_diff *d)
{
    nx_error err = {0};
    nx_diff_options o = {.by = by, .include_profiler = all};
    assert_int_equal(nx_diff_run(a, b, &o, d, &err), 0);
}

static void expect(const nx_diff_row *r, const char *key, nx_diff_status st, int64_t ca, int64_t cb, int64_t ta,
                   int64_t tb)
{
    assert_non_null(r->key);
    assert_string_equal(r->key, key);
    assert_int_equal(r->key_len, strlen(key));
    assert_int_equal(r->status, st);
    assert_int_equal(r->a.count, ca);
    assert_int_equal(r->b.count, cb);
    assert_int_equal(r->a.total_ns, ta);
    assert_int_equal(r->b.total_ns, tb);
    assert_int_equal(r->delta_ns, tb - ta);
    assert_int_equal(r->has_ratio, ta != 0 && tb != 0);
    if (r->has_ratio)
        assert_true(r->ratio == (double)tb / (double)ta);
}

static void system_by_name(void **state)
{
    (void)state;
    nx_diff d;
    run(sys_a, sys_b, NULL, false, &d);
    assert_string_equal(d.table, "SystemProfileEvents");
    assert_string_equal(d.by, "name");
    assert_true(d.has_self);
    assert_int_equal(d.n_rows, 6);
    expect(&d.rows[0], "gelu", NX_DIFF_ADDED, 0, 1, 0, 5);
    expect(&d.rows[1], "k1", NX_DIFF_CHANGED, 1, 1, 10, 12);
    expect(&d.rows[2], "k2", NX_DIFF_ADDED, 0, 1, 0, 1);
    expect(&d.rows[3], "mark", NX_DIFF_SAME, 1, 1, 0, 0);
    expect(&d.rows[4], "mm", NX_DIFF_CHANGED, 2, 1, 30, 30);
    expect(&d.rows[5], "relu", NX_DIFF_SAME, 1, 1, 10, 10);
    assert_int_equal(d.rows[4].a.self_ns, 30);
    assert_int_equal(d.rows[4].b.self_ns, 30);
    assert_int_equal(d.excluded_a, 2);
    assert_int_equal(d.excluded_b, 3);
    assert_int_equal(d.steps_a, 1);
    assert_int_equal(d.steps_b, 2);
    /* Totals: A 5 rows, 10+30+10+0 = 50 ns; B 6 rows, 12+30+1+5+10+0 = 58 ns. */
    assert_int_equal(d.total_a.count, 5);
    assert_int_equal(d.total_b.count, 6);
    assert_int_equal(d.total_a.total_ns, 50);
    assert_int_equal(d.total_b.total_ns, 58);
    assert_int_equal(d.total_a.self_ns, 50); /* none of the kept rows nests in another kept one */
    assert_true(d.has_wall_a && d.wall_a == 200 && d.has_wall_b && d.wall_b == 200);
    assert_int_equal(nx_diff_shown(&d, 0), 6);
    assert_int_equal(nx_diff_shown(&d, 2), 2);
    nx_diff_free(&d);
}

static void profiler_rows_kept(void **state)
{
    (void)state;
    nx_diff d;
    run(sys_a, sys_b, "name", true, &d);
    assert_int_equal(d.n_rows, 9);
    assert_int_equal(d.excluded_a, 0);
    assert_int_equal(d.steps_b, 2); /* counted whether or not the rows are kept */
    expect(&d.rows[0], "ProfilerStep#2", NX_DIFF_ADDED, 0, 1, 0, 10);
    /* Both other profiler rows last as long in A and B: delta 0, between k2 and mark.
     * The step's self time differs (A 60, B 55: its children differ), so it changed. */
    expect(&d.rows[4], "ProfilerStep#1", NX_DIFF_CHANGED, 1, 1, 100, 100);
    expect(&d.rows[5], "PyTorch Profiler (0)", NX_DIFF_SAME, 1, 1, 200, 200);
    assert_int_equal(d.rows[4].a.self_ns, 100 - 20 - 10 - 10 - 0);
    assert_int_equal(d.rows[4].b.self_ns, 100 - 30 - 5 - 10 - 0);
    assert_int_equal(d.total_a.total_ns, 350);
    nx_diff_free(&d);
}

static void normalized(void **state)
{
    (void)state;
    nx_diff d;
    nx_error err = {0};
    nx_diff_options o = {.normalize = NX_DIFF_NORM_STEP};
    assert_int_equal(nx_diff_run(sys_a, sys_b, &o, &d, &err), 0);
    /* ns per step, 1 step in A and 2 in B: mm 30 -> 15 (-15), relu 10 -> 5 (-5), k1 10 -> 6
     * (-4), gelu 0 -> 2.5, k2 0 -> 0.5, mark 0 -> 0. */
    static const char *const order[] = {"mm", "relu", "k1", "gelu", "k2", "mark"};
    static const double delta[] = {-15, -5, -4, 2.5, 0.5, 0};
    assert_int_equal(d.n_rows, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_string_equal(d.rows[i].key, order[i]);
        assert_true(d.rows[i].norm_delta == delta[i]);
        assert_true(d.rows[i].norm_a == (double)d.rows[i].a.total_ns);
    }
    assert_int_equal(d.rows[0].delta_ns, 0); /* the exact figures stay */
    nx_diff_free(&d);
    o.normalize = NX_DIFF_NORM_WALL; /* both walls 200 ns */
    assert_int_equal(nx_diff_run(sys_a, sys_b, &o, &d, &err), 0);
    assert_string_equal(d.rows[0].key, "gelu");
    assert_true(d.rows[0].norm_b == 5.0 / 200.0);
    nx_diff_free(&d);
    assert_int_equal(nx_diff_run(dev_a, dev_b, &o, &d, &err), NX_DIFF_NO_DIVISOR);
    assert_non_null(strstr(err.msg, "wall"));
    o.normalize = NX_DIFF_NORM_STEP;
    assert_int_equal(nx_diff_run(dev_a, dev_b, &o, &d, &err), NX_DIFF_NO_DIVISOR);
    assert_non_null(strstr(err.msg, "ProfilerStep"));
    nx_diff_normalize n;
    assert_int_equal(nx_diff_normalize_parse("wall", &n), 0);
    assert_int_equal(n, NX_DIFF_NORM_WALL);
    assert_int_equal(nx_diff_normalize_parse("steps", &n), -1);
}

static void by_cat_and_kernel(void **state)
{
    (void)state;
    nx_diff d;
    run(sys_a, sys_b, "cat", false, &d);
    /* cpu_op: A mm, mm, relu = 40 ns (3); B mm, k2, gelu, relu = 46 (4); kernel 10 -> 12;
     * null (mark only; the profiler rows are left out) 0 -> 0. */
    assert_int_equal(d.n_rows, 3);
    expect(&d.rows[0], "cpu_op", NX_DIFF_CHANGED, 3, 4, 40, 46);
    expect(&d.rows[1], "kernel", NX_DIFF_CHANGED, 1, 1, 10, 12);
    assert_null(d.rows[2].key);
    assert_int_equal(d.rows[2].a.count, 1);
    assert_int_equal(d.rows[2].status, NX_DIFF_SAME);
    nx_diff_free(&d);
    run(sys_a, sys_b, "kernel", false, &d);
    assert_int_equal(d.n_rows, 1);
    expect(&d.rows[0], "k1", NX_DIFF_CHANGED, 1, 1, 10, 12);
    assert_int_equal(d.total_b.total_ns, 12);
    nx_diff_free(&d);
}

static void device_by_opcode(void **state)
{
    (void)state;
    nx_diff d;
    run(dev_a, dev_b, NULL, false, &d);
    assert_string_equal(d.table, "Instruction");
    assert_string_equal(d.by, "opcode");
    assert_false(d.has_self);
    assert_int_equal(d.n_rows, 3);
    expect(&d.rows[0], "ADD", NX_DIFF_REMOVED, 1, 0, 7, 0);
    expect(&d.rows[1], "SUB", NX_DIFF_ADDED, 0, 1, 0, 7);
    expect(&d.rows[2], "MATMUL", NX_DIFF_CHANGED, 2, 1, 30, 30);
    assert_false(d.has_wall_a);
    nx_diff_free(&d);
}

static void device_by_framework_name(void **state)
{
    (void)state;
    nx_diff d;
    run(dev_a, dev_b, "framework_name", false, &d);
    assert_string_equal(d.table, "FrameworkInstruction");
    assert_int_equal(d.n_rows, 2);
    expect(&d.rows[0], "mlp", NX_DIFF_CHANGED, 1, 1, 40, 30);
    expect(&d.rows[1], "attn", NX_DIFF_CHANGED, 2, 3, 15, 16);
    nx_diff_free(&d);
}

static void json_text(void **state)
{
    (void)state;
    nx_diff d;
    run(dev_a, dev_b, NULL, false, &d);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_diff_json(&b, &d, "A", "B", 2);
    assert_false(nx_strbuf_failed(&b));
    assert_string_equal(
        b.data,
        "{\"a\":\"A\",\"b\":\"B\",\"table\":\"Instruction\",\"by\":\"opcode\",\"has_self\":false,\"groups\":3,"
        "\"shown\":2,\"excluded_a\":0,\"excluded_b\":0,\"wall_ns_a\":null,\"wall_ns_b\":null,\"steps_a\":0,"
        "\"steps_b\":0,\"normalize\":null,\"ops\":["
        "{\"name\":\"ADD\",\"status\":\"removed\",\"count_a\":1,\"count_b\":0,\"total_ns_a\":7,\"total_ns_b\":0,"
        "\"self_ns_a\":null,\"self_ns_b\":null,\"delta_ns\":-7,\"ratio\":null},"
        "{\"name\":\"SUB\",\"status\":\"added\",\"count_a\":0,\"count_b\":1,\"total_ns_a\":0,\"total_ns_b\":7,"
        "\"self_ns_a\":null,\"self_ns_b\":null,\"delta_ns\":7,\"ratio\":null}],"
        "\"totals\":{\"groups\":3,\"count_a\":3,\"count_b\":2,\"total_ns_a\":37,\"total_ns_b\":37,"
        "\"self_ns_a\":null,\"self_ns_b\":null,\"delta_ns\":0,\"ratio\":1},\"devices\":[],\"steps\":[]}");
    nx_strbuf_free(&b);
    nx_diff_free(&d);
}

/* Beyond 2^53 an integer is a decimal string (docs/api.md "Conventions"); 2^53 - 1 is not. */
static void json_big_integers(void **state)
{
    (void)state;
    char key[] = "x";
    nx_diff_row row = {.key = key, .key_len = 1, .a = {1, INT64_C(9007199254740991), 0},
                       .b = {1, INT64_C(1) << 60, 0}, .status = NX_DIFF_CHANGED};
    nx_diff d = {.table = "Instruction", .by = "opcode", .rows = &row, .n_rows = 1, .total_a = row.a, .total_b = row.b};
    nx_strbuf b = NX_STRBUF_INIT;
    nx_diff_json(&b, &d, "A", "B", 0);
    assert_false(nx_strbuf_failed(&b));
    assert_non_null(strstr(b.data, "\"total_ns_a\":9007199254740991,"));
    assert_non_null(strstr(b.data, "\"total_ns_b\":\"1152921504606846976\","));
    assert_non_null(strstr(b.data, "\"delta_ns\":\"1143914305352105985\","));
    nx_strbuf_free(&b);
}

static void same_profile_all_same(void **state)
{
    (void)state;
    nx_diff d;
    run(sys_b, sys_b, "thread", false, &d);
    assert_true(d.n_rows >= 2);
    for (size_t i = 0; i < d.n_rows; i++) {
        assert_int_equal(d.rows[i].status, NX_DIFF_SAME);
        assert_int_equal(d.rows[i].delta_ns, 0);
    }
    nx_diff_free(&d);
}

static void refusals(void **state)
{
    (void)state;
    nx_diff d;
    nx_error err = {0};
    nx_diff_options o = {0};
    assert_int_equal(nx_diff_run(sys_a, dev_b, &o, &d, &err), NX_DIFF_KINDS);
    assert_non_null(strstr(err.msg, "system profile"));
    assert_non_null(strstr(err.msg, dev_b));
    o.by = "no_such_column";
    assert_int_equal(nx_diff_run(dev_a, dev_b, &o, &d, &err), NX_TOP_BAD_KEY);
    assert_non_null(strstr(err.msg, "no_such_column"));
    o.by = NULL;
    char missing[200];
    snprintf(missing, sizeof missing, "%s/none", root);
    assert_int_equal(nx_diff_run(dev_a, missing, &o, &d, &err), -1);
    assert_non_null(strstr(err.msg, "none"));
}

static void expect_device(const nx_diff_device *x, const char *name, bool in_a, bool in_b, int64_t busy_a,
                          int64_t busy_b)
{
    assert_string_equal(in_a ? x->a.device : x->b.device, name);
    assert_int_equal(x->in_a, in_a);
    assert_int_equal(x->in_b, in_b);
    assert_int_equal(x->a.busy_ns, busy_a);
    assert_int_equal(x->b.busy_ns, busy_b);
}

static void expect_step(const nx_diff_step *x, int64_t step, int64_t rank, bool in_a, bool in_b, int64_t dur_a,
                        int64_t dur_b, int64_t busy_a, int64_t busy_b)
{
    assert_int_equal(in_a ? x->a.step : x->b.step, step);
    assert_int_equal(in_a ? x->a.rank : x->b.rank, rank);
    assert_int_equal(x->in_a, in_a);
    assert_int_equal(x->in_b, in_b);
    assert_int_equal(x->a.duration_ns, dur_a);
    assert_int_equal(x->b.duration_ns, dur_b);
    assert_int_equal(x->a.gpu_busy_ns, busy_a);
    assert_int_equal(x->b.gpu_busy_ns, busy_b);
}

static void totals_one_rank_each(void **state)
{
    (void)state;
    nx_diff d;
    run(gpu_a, gpu_b, NULL, false, &d);
    assert_int_equal(d.n_devices, 2);
    expect_device(&d.devices[0], "GPU 0", true, true, 200, 170);
    assert_int_equal(d.devices[0].a.rank, 0);
    assert_int_equal(d.devices[0].b.rank, 1);
    assert_int_equal(d.devices[0].a.idle_ns, 800);
    assert_int_equal(d.devices[0].b.idle_ns, 1030);
    assert_int_equal(d.devices[0].b.kernel_ns, 150);
    assert_int_equal(d.devices[0].b.memcpy_ns, 20);
    expect_device(&d.devices[1], "GPU 1", false, true, 0, 50);
    assert_int_equal(d.devices[1].b.idle_ns, 1150);
    assert_int_equal(d.n_steps, 3);
    expect_step(&d.steps[0], 1, 0, true, true, 300, 400, 100, 170);
    expect_step(&d.steps[1], 2, 0, true, false, 400, 0, 100, 0);
    expect_step(&d.steps[2], 3, 1, false, true, 0, 100, 0, 50);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_diff_json(&b, &d, "A", "B", 0);
    assert_false(nx_strbuf_failed(&b));
    assert_non_null(strstr(b.data, ",\"devices\":[{\"device\":\"GPU 0\",\"rank_a\":0,\"rank_b\":1,\"wall_ns_a\":1000,"
                                   "\"wall_ns_b\":1200,\"wall_ns_delta\":200,\"busy_ns_a\":200,\"busy_ns_b\":170,"
                                   "\"busy_ns_delta\":-30,\"idle_ns_a\":800,\"idle_ns_b\":1030,\"idle_ns_delta\":230,"));
    assert_non_null(strstr(b.data, "\"utilization_a\":0.2,\"utilization_b\":0.14166666666666666},"
                                   "{\"device\":\"GPU 1\",\"rank_a\":null,\"rank_b\":1,\"wall_ns_a\":null,"));
    assert_non_null(strstr(b.data, ",\"steps\":[{\"name\":\"ProfilerStep#1\",\"step\":1,\"rank_a\":0,\"rank_b\":1,"
                                   "\"start_ns_a\":100,\"start_ns_b\":100,\"duration_ns_a\":300,\"duration_ns_b\":400,"
                                   "\"delta_ns\":100,\"ratio\":1.3333333333333333,\"gpu_busy_ns_a\":100,"
                                   "\"gpu_busy_ns_b\":170,\"gpu_busy_ns_delta\":70},"));
    assert_non_null(strstr(b.data, "\"duration_ns_b\":null,\"delta_ns\":null,\"ratio\":null,\"gpu_busy_ns_a\":100,"
                                   "\"gpu_busy_ns_b\":null,\"gpu_busy_ns_delta\":null}"));
    nx_strbuf_free(&b);
    nx_diff_free(&d);
}

static void totals_joined_on_rank(void **state)
{
    (void)state;
    nx_diff d;
    run(gpu_a, gpu_c, NULL, false, &d);
    assert_int_equal(d.n_devices, 2);
    expect_device(&d.devices[0], "GPU 0", true, true, 200, 50);
    assert_int_equal(d.devices[0].b.rank, 0);
    expect_device(&d.devices[1], "GPU 0", false, true, 0, 10);
    assert_int_equal(d.devices[1].b.rank, 1);
    assert_int_equal(d.n_steps, 3);
    expect_step(&d.steps[0], 1, 0, true, true, 300, 300, 100, 50);
    expect_step(&d.steps[1], 2, 0, true, false, 400, 0, 100, 0);
    expect_step(&d.steps[2], 1, 1, false, true, 0, 50, 0, 10);
    nx_diff_free(&d);
}

static void totals_none_on_device_profiles(void **state)
{
    (void)state;
    nx_diff d;
    run(dev_a, dev_b, NULL, false, &d);
    assert_int_equal(d.n_devices, 0);
    assert_int_equal(d.n_steps, 0);
    nx_diff_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(system_by_name),
        cmocka_unit_test(profiler_rows_kept),
        cmocka_unit_test(normalized),
        cmocka_unit_test(by_cat_and_kernel),
        cmocka_unit_test(device_by_opcode),
        cmocka_unit_test(device_by_framework_name),
        cmocka_unit_test(json_text),
        cmocka_unit_test(json_big_integers),
        cmocka_unit_test(same_profile_all_same),
        cmocka_unit_test(refusals),
        cmocka_unit_test(totals_one_rank_each),
        cmocka_unit_test(totals_joined_on_rank),
        cmocka_unit_test(totals_none_on_device_profiles),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
