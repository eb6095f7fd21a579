/*
 * test_memory.c — query/memory.h over hand-made SbufAllocation and
 * HbmUsageSummaryByType tables (catalogue types): the window rule, the
 * per-partition sampling at two widths, the merge of one allocation's adjacent
 * partitions, owners, the partition axis, the HBM sums and their order, absent
 * tables, a bad row's error and the query memory budget.
 *
 * The expected rectangles are listed by hand from the rows below (each
 * allocation's partitions and owner worked out on paper), not computed by the
 * code under test.
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

#include "query/engine/budget.h"
#include "query/memory.h"
#include "system_fixture.h"
#include "table_fixture.h"

static const fx_col SBUF_COLS[] = {{"start_ts", NXPQ_INT64},      {"end_ts", NXPQ_INT64},    {"start_address", NXPQ_INT64},
                                   {"end_address", NXPQ_INT64},   {"partition", NXPQ_INT64}, {"op_source_type", NXPQ_STRING},
                                   {"opcode", NXPQ_STRING},       {"tensor_name", NXPQ_STRING}, {"hlo_name", NXPQ_STRING},
                                   {"pcore_idx", NXPQ_INT64}};
#define NC 10
/* Sorted by start_ts, as process writes timeline tables. */
static const char *const SBUF[][NC] = {
    {"0", "12", "0", "256", "5", "instruction", "MATMUL", NULL, "dot.1", "0"},
    {"10", "50", "0", "1024", "0", "instruction", "MATMUL", "q", NULL, "0"},
    {"10", "50", "0", "1024", "1", "instruction", "MATMUL", "q", NULL, "0"},
    {"10", "50", "0", "1024", "2", "instruction", "MATMUL", "q", NULL, "0"},
    {"10", "50", "0", "1024", "3", "instruction", "MATMUL", "q", NULL, "0"},
    {"55", "70", "2048", "4096", "2", "dma", NULL, "v", NULL, "0"},
    {"55", "70", "4096", "6144", "3", "dma", NULL, "v", NULL, "0"},
    {"60", "90", "0", "512", "0", "instruction", "ACT", "k", NULL, "0"},
    {"60", "90", "0", "512", "1", "instruction", "ACT", "k", NULL, "0"},
    {"95", "99", "0", "64", "130", "instruction", NULL, NULL, NULL, "0"},
    {"200", "300", "0", "64", "0", "instruction", "ACT", "late", NULL, "0"},
};
#define N_SBUF (sizeof SBUF / sizeof SBUF[0])

static const fx_col HBM_COLS[] = {{"neuron_device_idx", NXPQ_INT64},
                                  {"neuroncore_idx", NXPQ_INT64},
                                  {"usage_type", NXPQ_STRING},
                                  {"usage_bytes", NXPQ_INT64}};
static const char *const HBM[][4] = {{"0", "0", "Weights", "1000"}, {"0", "1", "Weights", "500"},
                                     {"0", "0", "Scratch", "2000"}, {"0", "0", NULL, "7"},
                                     {"0", "1", "IO", "1500"}};

typedef struct want {
    int64_t start, end, p0, p1, a0, a1;
    const char *owner;
} want;

static char dir[64], empty[128], bad[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxmemory-XXXXXX");
    assert_non_null(mkdtemp(dir));
    fx_write(dir, "SbufAllocation.parquet", SBUF_COLS, NC, &SBUF[0][0], N_SBUF);
    fx_write(dir, "HbmUsageSummaryByType.parquet", HBM_COLS, 4, &HBM[0][0], sizeof HBM / sizeof HBM[0]);
    snprintf(empty, sizeof empty, "%s/empty", dir);
    assert_int_equal(mkdir(empty, 0755), 0);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    assert_int_equal(mkdir(bad, 0755), 0);
    const char *const row[NC] = {"5", "9", "100", "50", "4", "instruction", "ACT", "t", NULL, "0"};
    fx_write(bad, "SbufAllocation.parquet", SBUF_COLS, NC, row, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static void check(const nx_memory *m, const want *w, size_t n)
{
    assert_int_equal(m->n_rects, n);
    for (size_t i = 0; i < n; i++) {
        const nx_memory_rect *r = &m->rects[i];
        assert_int_equal(r->start, w[i].start);
        assert_int_equal(r->end, w[i].end);
        assert_int_equal(r->partition_lo, w[i].p0);
        assert_int_equal(r->partition_hi, w[i].p1);
        assert_int_equal(r->start_address, w[i].a0);
        assert_int_equal(r->end_address, w[i].a1);
        assert_string_equal(r->owner, w[i].owner);
        assert_true(r->has_pcore_idx && r->pcore_idx == 0);
        assert_false(r->has_block_id);   /* the table has no block_id column */
        assert_null(r->queue_name);
    }
}

/* Wide enough that no two rows of one partition share a bucket: every row in the
 * window is drawn, one allocation's partitions merged. */
static void every_row(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(nx_memory_read(dir, 10, 100, 1000, &m, &err), 0);
    static const want w[] = {{0, 12, 5, 5, 0, 256, "dot.1"},     {10, 50, 0, 3, 0, 1024, "q"},
                             {55, 70, 2, 2, 2048, 4096, "v"},    {55, 70, 3, 3, 4096, 6144, "v"},
                             {60, 90, 0, 1, 0, 512, "k"},        {95, 99, 130, 130, 0, 64, ""}};
    check(&m, w, sizeof w / sizeof w[0]);
    assert_true(m.has_sbuf);
    assert_int_equal(m.in_window, 10);
    assert_int_equal(m.kept, 10);
    assert_int_equal(m.partitions, 131);
    assert_string_equal(m.rects[0].hlo_name, "dot.1");
    assert_null(m.rects[0].tensor_name);
    assert_string_equal(m.rects[2].op_source_type, "dma");
    assert_null(m.rects[2].opcode);
    assert_string_equal(m.rects[4].opcode, "ACT");
    nx_memory_free(&m);
}

/* One bucket: each partition keeps its longest allocation (p0: q's 40 ns over k's 30). */
static void one_bucket(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(nx_memory_read(dir, 10, 100, 1, &m, &err), 0);
    static const want w[] = {{0, 12, 5, 5, 0, 256, "dot.1"}, {10, 50, 0, 3, 0, 1024, "q"}, {95, 99, 130, 130, 0, 64, ""}};
    check(&m, w, sizeof w / sizeof w[0]);
    assert_int_equal(m.in_window, 10);
    assert_int_equal(m.kept, 6);
    nx_memory_free(&m);
}

/* The window's ends are inclusive; a window with no allocation keeps the default axis. */
static void window_edges(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(nx_memory_read(dir, 300, 400, 10, &m, &err), 0);
    static const want w[] = {{200, 300, 0, 0, 0, 64, "late"}};
    check(&m, w, 1);
    nx_memory_free(&m);
    assert_int_equal(nx_memory_read(dir, 301, 400, 10, &m, &err), 0);
    assert_true(m.has_sbuf);
    assert_int_equal(m.n_rects, 0);
    assert_int_equal(m.in_window, 0);
    assert_int_equal(m.partitions, NX_SBUF_PARTITIONS);
    nx_memory_free(&m);
}

static void hbm_categories(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(nx_memory_read(dir, 0, 1, 1, &m, &err), 0);
    assert_true(m.has_hbm);
    assert_int_equal(m.n_hbm, 3);
    assert_string_equal(m.hbm[0].usage_type, "Scratch");
    assert_int_equal(m.hbm[0].bytes, 2000);
    assert_string_equal(m.hbm[1].usage_type, "IO");      /* 1500, tied with Weights: by name */
    assert_int_equal(m.hbm[1].bytes, 1500);
    assert_string_equal(m.hbm[2].usage_type, "Weights");
    assert_int_equal(m.hbm[2].bytes, 1500);
    assert_int_equal(m.hbm_total, 5000);
    assert_int_equal(m.hbm_skipped, 1);
    nx_memory_free(&m);
}

static void absent_tables(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(nx_memory_read(empty, 0, 100, 10, &m, &err), 0);
    assert_false(m.has_sbuf);
    assert_false(m.has_hbm);
    assert_int_equal(m.n_rects, 0);
    assert_int_equal(m.n_hbm, 0);
    nx_memory_free(&m);
}

static void bad_row(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(nx_memory_read(bad, 0, 100, 10, &m, &err), -1);
    assert_non_null(strstr(err.msg, "SbufAllocation.parquet: row 0: end_address below start_address"));
}

/* 100,000 buckets of 32 bytes per partition outgrow a 1 MiB budget: 503's error. */
static void over_budget(void **state)
{
    (void)state;
    nx_memory m;
    nx_error err = {0};
    assert_int_equal(setenv("NXPROF_QUERY_MEMORY_MIB", "1", 1), 0);
    int rc = nx_memory_read(dir, 10, 100, 100000, &m, &err);
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
    assert_int_equal(rc, NX_QUERY_OVER_BUDGET);
    assert_true(err.msg[0] != '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row),     cmocka_unit_test(one_bucket),    cmocka_unit_test(window_edges),
        cmocka_unit_test(hbm_categories), cmocka_unit_test(absent_tables), cmocka_unit_test(bad_row),
        cmocka_unit_test(over_budget),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
