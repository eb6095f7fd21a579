/*
 * test_dma_derived.c — the two tables the DMA sink derives from its own rows:
 * PendingDma (process/device/pending_dma.h) and DmaUsageSummary (process/device/usage_summary.h),
 * written into a temporary directory and read back with the Parquet reader.
 *
 * Inputs are generated from a fixed seed (transfers in start order on up to three
 * pcores, with zero-length transfers, ends that coincide with other starts and ends,
 * and gaps; samples in time order over several 1 ms buckets). The expectations are
 * computed here by brute force over the whole input: for PendingDma the count in
 * flight per pcore just after every instant that is some transfer's start or end,
 * kept where it differs from the count just before; for DmaUsageSummary a linear
 * pass per (bucket, pcore) over every sample. Also: a pcore past the limit is
 * refused naming the table, and no input writes no file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parquet/parquet.h"
#include "process/device/pending_dma.h"
#include "process/device/usage_summary.h"

static char dir[64];
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx-dma-derived-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const left[] = {"PendingDma.parquet", "DmaUsageSummary.parquet", "empty", ""};
    char p[128];
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, left[i]);
        if (remove(p) != 0 && i + 1 == sizeof left / sizeof left[0])
            return -1;   /* the directory itself must go */
    }
    return 0;
}

static void path_of(char *out, size_t n, const char *table)
{
    snprintf(out, n, "%s/%s.parquet", dir, table);
}

/* Every row of `table`, columns as named: int64 (INT32 widened) or double. */
typedef struct cell {
    int64_t i;
    double d;
} cell;

static size_t read_table(const char *table, const char *const *names, size_t nc, cell *out, size_t max)
{
    char p[128];
    path_of(p, sizeof p, table);
    nx_error err;
    nxpq_reader *rd = nxpq_reader_open(p, &err);
    assert_non_null(rd);
    size_t cols[8];
    for (size_t c = 0; c < nc; c++) {
        int k = nxpq_reader_find_column(rd, names[c]);
        assert_true(k >= 0);
        cols[c] = (size_t)k;
    }
    nxpq_scan_options so = {.columns = cols, .n_columns = nc};
    nxpq_scan *sc = nxpq_scan_open(rd, &so, &err);
    assert_non_null(sc);
    const nxpq_batch *b;
    size_t r = 0;
    while (nxpq_scan_next(sc, &b, &err) == 1)
        for (size_t i = 0; i < b->n_rows; i++, r++) {
            assert_true(r < max);
            for (size_t c = 0; c < nc; c++) {
                const nxpq_column_data *x = &b->columns[c];
                assert_true(!x->valid || x->valid[i]);
                cell *o = &out[r * nc + c];
                o->i = x->type == NXPQ_INT32 ? x->values.i32[i] : x->type == NXPQ_INT64 ? x->values.i64[i] : 0;
                o->d = x->type == NXPQ_DOUBLE ? x->values.f64[i] : 0;
            }
        }
    nxpq_scan_close(sc);
    nxpq_reader_close(rd);
    return r;
}

/* ------------------------------------------------------------- PendingDma -- */

#define N_XFER 400
typedef struct xfer {
    int64_t start, end;
    unsigned pcore;
} xfer;

static int64_t in_flight(const xfer *x, size_t n, unsigned pcore, int64_t t, bool before)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i].pcore == pcore && x[i].end > x[i].start &&
            (before ? x[i].start < t && t <= x[i].end : x[i].start <= t && t < x[i].end))
            k++;
    return k;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_pending_matches_brute_force(void **state)
{
    (void)state;
    static xfer x[N_XFER];
    int64_t t = 1000;
    for (size_t i = 0; i < N_XFER; i++) {
        t += (int64_t)(next() % 4) * 5;   /* equal starts, and starts on a 5 ns grid like the ends */
        int64_t len = (int64_t)(next() % 6) * 5;   /* 0: a zero-length transfer */
        x[i] = (xfer){t, t + len, (unsigned)(next() % 3)};
    }
    nx_table_dest dest = {.dir = dir};
    nx_error err;
    nx_pending_dma p;
    assert_int_equal(nx_pending_open(&p, &dest, &err), 0);
    for (size_t i = 0; i < N_XFER; i++)
        assert_int_equal(nx_pending_add(&p, x[i].pcore, x[i].start, x[i].end, &err), 0);
    unsigned tables = 0;
    assert_int_equal(nx_pending_finish(&p, &tables, &err), 0);
    assert_int_equal(tables, 1);

    static int64_t times[2 * N_XFER];
    for (size_t i = 0; i < N_XFER; i++)
        times[2 * i] = x[i].start, times[2 * i + 1] = x[i].end;
    qsort(times, 2 * N_XFER, sizeof *times, cmp_i64);
    static cell got[3 * 2 * N_XFER];
    static const char *const cols[] = {"timestamp", "value", "pcore_idx"};
    size_t n = read_table("PendingDma", cols, 3, got, 2 * N_XFER), r = 0;
    for (size_t i = 0; i < 2 * N_XFER; i++) {
        if (i > 0 && times[i] == times[i - 1])
            continue;
        for (unsigned pc = 0; pc < 3; pc++) {
            int64_t after = in_flight(x, N_XFER, pc, times[i], false);
            if (after == in_flight(x, N_XFER, pc, times[i], true))
                continue;
            assert_true(r < n);
            assert_int_equal(got[3 * r].i, times[i]);
            assert_int_equal(got[3 * r + 1].i, after);
            assert_int_equal(got[3 * r + 2].i, pc);
            r++;
        }
    }
    assert_int_equal(r, n);
    assert_true(n > 100);
}

static void test_pending_refuses_a_pcore_past_the_limit(void **state)
{
    (void)state;
    nx_table_dest dest = {.dir = dir};
    nx_error err;
    nx_pending_dma p;
    assert_int_equal(nx_pending_open(&p, &dest, &err), 0);
    assert_int_equal(nx_pending_add(&p, NX_USAGE_MAX_SERIES, 1, 2, &err), -1);
    assert_non_null(strstr(err.msg, "PendingDma"));
    nx_pending_discard(&p);
}

/* ---------------------------------------------------------- DmaUsageSummary -- */

#define N_SAMPLES 3000
typedef struct sample {
    int64_t ts;
    unsigned pcore;
    double thr;
    int64_t total;
} sample;

static void test_summary_matches_brute_force(void **state)
{
    (void)state;
    static sample s[N_SAMPLES];
    int64_t ts = 17 * NX_USAGE_SUMMARY_NS - 50000;   /* starts just before a bucket boundary */
    int64_t total[3] = {0};
    for (size_t i = 0; i < N_SAMPLES; i++) {
        ts += next() % 7 == 0 ? (int64_t)(next() % 5) * NX_USAGE_SUMMARY_NS : 10000 * (int64_t)(next() % 2);
        unsigned pc = (unsigned)(next() % 3);
        total[pc] += (int64_t)(next() % 100000);
        s[i] = (sample){ts, pc, (double)(next() % 1000000) * 1.37, total[pc]};
    }
    nx_table_dest dest = {.dir = dir};
    nx_error err;
    nx_usage_summary u;
    assert_int_equal(nx_usage_summary_open(&u, &dest, &err), 0);
    for (size_t i = 0; i < N_SAMPLES; i++)
        assert_int_equal(nx_usage_summary_add(&u, s[i].ts, s[i].pcore, s[i].thr, s[i].total, &err), 0);
    unsigned tables = 0;
    assert_int_equal(nx_usage_summary_finish(&u, &tables, &err), 0);
    assert_int_equal(tables, 1);

    static const char *const cols[] = {"timestamp",  "pcore_idx", "sum_current_throughput", "sum_total_transfer_bytes",
                                       "max_total_transfer_bytes", "count",     "bucket_resolution_ns"};
    static cell got[7 * N_SAMPLES];
    size_t n = read_table("DmaUsageSummary", cols, 7, got, N_SAMPLES), r = 0, counted = 0;
    int64_t first = s[0].ts / NX_USAGE_SUMMARY_NS, last = s[N_SAMPLES - 1].ts / NX_USAGE_SUMMARY_NS;
    for (int64_t b = first; b <= last; b++)
        for (unsigned pc = 0; pc < 3; pc++) {
            int64_t cnt = 0, sum = 0, mx = INT64_MIN;
            double thr = 0;
            for (size_t i = 0; i < N_SAMPLES; i++)
                if (s[i].ts / NX_USAGE_SUMMARY_NS == b && s[i].pcore == pc) {
                    cnt++, sum += s[i].total, thr += (float)s[i].thr;
                    mx = s[i].total > mx ? s[i].total : mx;
                }
            if (!cnt)
                continue;
            const cell *g = &got[7 * r++];
            assert_true(r <= n);
            assert_int_equal(g[0].i, b * NX_USAGE_SUMMARY_NS);
            assert_int_equal(g[1].i, pc);
            assert_true(fabs(g[2].d - thr) <= 1e-9 * thr);
            assert_int_equal(g[3].i, sum);
            assert_int_equal(g[4].i, mx);
            assert_int_equal(g[5].i, cnt);
            assert_int_equal(g[6].i, NX_USAGE_SUMMARY_NS);
            counted += (size_t)cnt;
        }
    assert_int_equal(r, n);
    assert_int_equal(counted, N_SAMPLES);
}

static void test_no_input_writes_no_table(void **state)
{
    (void)state;
    char sub[96], p[160];
    snprintf(sub, sizeof sub, "%s/empty", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    nx_table_dest dest = {.dir = sub};
    nx_error err;
    nx_usage_summary u;
    nx_pending_dma pd;
    unsigned tables = 0;
    assert_int_equal(nx_usage_summary_open(&u, &dest, &err), 0);
    assert_int_equal(nx_usage_summary_finish(&u, &tables, &err), 0);
    assert_int_equal(nx_pending_open(&pd, &dest, &err), 0);
    assert_int_equal(nx_pending_add(&pd, 0, 5, 5, &err), 0);   /* in flight for no time */
    assert_int_equal(nx_pending_finish(&pd, &tables, &err), 0);
    assert_int_equal(tables, 0);
    snprintf(p, sizeof p, "%s/PendingDma.parquet", sub);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/DmaUsageSummary.parquet", sub);
    assert_int_equal(access(p, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pending_matches_brute_force),
        cmocka_unit_test(test_pending_refuses_a_pcore_past_the_limit),
        cmocka_unit_test(test_summary_matches_brute_force),
        cmocka_unit_test(test_no_input_writes_no_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
