/*
 * test_usage.c — query/usage.h over hand-made samples tables: series keys (integer,
 * string, two integers, none; null parts), labels, the per-bucket peak, the "before"
 * sample of the step and gauge tables (none for DmaUsage), CpuUsage's "average" rule
 * both ways, PendingDma's INT32 counts as integers, the fixed series order, and the lane
 * table.
 *
 * Each table's rows are listed below with their key parts as text (NULL: null); the
 * expected series are computed from these lists by a brute-force pass written here:
 * series in order of first appearance among the rows used, per bucket the largest
 * value (ties: the earlier row), before = the latest row before the window (ties: the
 * later row).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/usage.h"
#include "system_fixture.h"
#include "table_fixture.h"

typedef struct srow {
    int64_t t;
    double v;
    const char *k0, *k1;
} srow;

typedef struct stable {
    const char *name;
    const srow *rows;
    size_t n;
} stable;

static const srow SBUF[] = {{5, 10, "0", NULL}, {8, 20, "1", NULL},  {12, 30, "0", NULL}, {13, 25, "0", NULL},
                            {14, 40, NULL, NULL}, {20, 5, "0", NULL}, {25, 50, "1", NULL}, {30, 1, "0", NULL},
                            {4, 99, "2", NULL}};
static const srow DMA[] = {{2, 7, "0", NULL}, {10, 1, "0", NULL}, {11, 3, "0", NULL}, {29, 2, "3", NULL}};
static const srow CPU[] = {{1, 5, "0", NULL},       {2, 6, "1", NULL},        {3, 5.5, "average", NULL},
                           {11, 50, "0", NULL},     {12, 40, "average", NULL}, {13, 45, "average", NULL},
                           {40, 1, "average", NULL}};
static const srow CPU_NOAVG[] = {{1, 5, "0", NULL}, {12, 7, NULL, NULL}, {15, 8, "1", NULL}, {16, 9, "0", NULL}};
static const srow HOST[] = {{9, 3, NULL, NULL}, {9, 4, NULL, NULL}, {17, 6, NULL, NULL}};
static const srow HBM[] = {{1, 100, "0", "1"}, {11, 300, "0", NULL}, {12, 200, "0", "1"}, {18, 250, "0", "1"}};
static const srow PENDING[] = {{3, 2, "0", NULL}, {10, 5, "0", NULL}, {14, 7, "0", NULL}, {15, 1, "0", NULL},
                               {16, 4, NULL, NULL}, {27, 0, "0", NULL}, {31, 9, "0", NULL}};

#define S 10
#define E 29
#define W 4

static char dir[64], noavg[128];

static void write_samples(const char *d, const stable *t, const char *value, nxpq_type vt, const char *k0,
                          nxpq_type kt, const char *k1)
{
    fx_col cols[4] = {{"timestamp", NXPQ_INT64}, {value, vt}, {k0, kt}, {k1, kt}};
    size_t nc = k1 ? 4 : k0 ? 3 : 2;
    const char **cells = calloc(t->n * nc, sizeof *cells);
    char (*text)[32] = calloc(t->n * 2, sizeof *text);
    assert_non_null(cells);
    assert_non_null(text);
    for (size_t r = 0; r < t->n; r++) {
        snprintf(text[2 * r], 32, "%" PRId64, t->rows[r].t);
        snprintf(text[2 * r + 1], 32, vt == NXPQ_INT64 || vt == NXPQ_INT32 ? "%.0f" : "%.17g", t->rows[r].v);
        cells[r * nc] = text[2 * r];
        cells[r * nc + 1] = text[2 * r + 1];
        if (nc > 2)
            cells[r * nc + 2] = t->rows[r].k0;
        if (nc > 3)
            cells[r * nc + 3] = t->rows[r].k1;
    }
    char file[64];
    snprintf(file, sizeof file, "%s.parquet", t->name);
    fx_write(d, file, cols, nc, cells, t->n);
    free(cells);
    free(text);
}

static const stable T_SBUF = {"SbufUsage", SBUF, sizeof SBUF / sizeof SBUF[0]};
static const stable T_DMA = {"DmaUsage", DMA, sizeof DMA / sizeof DMA[0]};
static const stable T_CPU = {"CpuUsage", CPU, sizeof CPU / sizeof CPU[0]};
static const stable T_CPU_NOAVG = {"CpuUsage", CPU_NOAVG, sizeof CPU_NOAVG / sizeof CPU_NOAVG[0]};
static const stable T_HOST = {"HostMemUsage", HOST, sizeof HOST / sizeof HOST[0]};
static const stable T_HBM = {"SystemProfileHbmUsage", HBM, sizeof HBM / sizeof HBM[0]};
static const stable T_PENDING = {"PendingDma", PENDING, sizeof PENDING / sizeof PENDING[0]};

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxusage-XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_samples(dir, &T_SBUF, "avg_util_percent", NXPQ_FLOAT, "pcore_idx", NXPQ_INT64, NULL);
    write_samples(dir, &T_DMA, "current_throughput", NXPQ_DOUBLE, "pcore_idx", NXPQ_INT64, NULL);
    write_samples(dir, &T_CPU, "util_percent", NXPQ_FLOAT, "cpu_id", NXPQ_STRING, NULL);
    write_samples(dir, &T_HOST, "used_percent", NXPQ_DOUBLE, NULL, NXPQ_INT64, NULL);
    write_samples(dir, &T_HBM, "total_bytes", NXPQ_INT64, "device_idx", NXPQ_INT64, "hbm_idx");
    write_samples(dir, &T_PENDING, "value", NXPQ_INT32, "pcore_idx", NXPQ_INT64, NULL);
    snprintf(noavg, sizeof noavg, "%s/noavg", dir);
    assert_int_equal(mkdir(noavg, 0755), 0);
    write_samples(noavg, &T_CPU_NOAVG, "util_percent", NXPQ_FLOAT, "cpu_id", NXPQ_STRING, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static bool same_text(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

/* Whether the row is used: in [S, E], or before S for lanes with "before"; CpuUsage
 * with an "average" row among those with t <= E: only those. */
static bool used(const stable *t, const nx_usage_lane *l, size_t r)
{
    const srow *x = &t->rows[r];
    if (x->t > E || (x->t < S && !l->before))
        return false;
    if (strcmp(t->name, "CpuUsage") != 0)
        return true;
    bool avg = false;
    for (size_t i = 0; i < t->n; i++)
        avg |= t->rows[i].t <= E && same_text(t->rows[i].k0, "average");
    return !avg || same_text(x->k0, "average");
}

/* The series' key parts equal row r's. */
static bool key_is(const nx_usage_series *s, const srow *x)
{
    const char *k[2] = {x->k0, x->k1};
    for (size_t j = 0; j < NX_USAGE_MAX_KEYS && s->lane->keys[j]; j++) {
        if (s->key[j].null != (k[j] == NULL))
            return false;
        if (k[j] && (s->key[j].s ? strcmp(s->key[j].s, k[j]) != 0 : s->key[j].i != strtoll(k[j], NULL, 10)))
            return false;
    }
    return true;
}

static double value_of(const nx_usage_series *s, nx_usage_value v) { return s->is_int ? (double)v.i : v.f; }

/* The expected label of a series whose first row is x. */
static void expect_label(const nx_usage_series *s, const srow *x)
{
    char want[64];
    const char *w = want;
    if (strcmp(s->lane->table, "CpuUsage") == 0)
        w = x->k0;
    else if (strcmp(s->lane->table, "HostMemUsage") == 0)
        w = "host";
    else if (strcmp(s->lane->table, "SystemProfileHbmUsage") == 0)
        snprintf(want, sizeof want, "device %s hbm %s", x->k0 ? x->k0 : "null", x->k1 ? x->k1 : "null");
    else {
        assert_false(s->labelled);
        return;
    }
    assert_true(s->labelled);
    assert_true(same_text(s->label, w));
}

/* Checks the series u->series[*at..] of table t against the brute force; *at moves past them. */
static void check_table(const nx_usage *u, size_t *at, const stable *t)
{
    const nx_usage_lane *l = nx_usage_lane_find(t->name);
    bool seen[16] = {false};
    for (size_t r = 0; r < t->n; r++) {
        if (!used(t, l, r) || seen[r])
            continue;
        assert_true(*at < u->n);
        const nx_usage_series *s = &u->series[(*at)++];
        assert_ptr_equal(s->lane, l);
        assert_true(key_is(s, &t->rows[r]));
        expect_label(s, &t->rows[r]);
        /* The rows of this series; the before row; the per-bucket winners. */
        int64_t bt[W];
        double bv[W];
        bool have[W] = {false}, has_before = false;
        int64_t before_t = 0;
        double before_v = 0;
        for (size_t q = r; q < t->n; q++) {
            const srow *x = &t->rows[q];
            if (!used(t, l, q) || !same_text(x->k0, t->rows[r].k0) || !same_text(x->k1, t->rows[r].k1))
                continue;
            seen[q] = true;
            if (x->t < S) {
                if (!has_before || x->t >= before_t)
                    before_t = x->t, before_v = x->v, has_before = true;
                continue;
            }
            int b = (int)((x->t - S) * W / (E - S + 1));
            if (!have[b] || x->v > bv[b])
                bt[b] = x->t, bv[b] = x->v, have[b] = true;
        }
        assert_int_equal(s->has_before, has_before);
        if (has_before) {
            assert_int_equal(s->before_t, before_t);
            assert_true(value_of(s, s->before_v) == (double)(float)before_v || value_of(s, s->before_v) == before_v);
        }
        size_t k = 0;
        for (int b = 0; b < W; b++) {
            if (!have[b])
                continue;
            assert_true(k < s->n);
            assert_int_equal(s->t[k], bt[b]);
            double got = value_of(s, s->v[k]);
            assert_true(got == bv[b] || got == (double)(float)bv[b]);
            k++;
        }
        assert_int_equal(s->n, k);
    }
}

static void all_tables(void **state)
{
    (void)state;
    /* Asked in another order: answered in the lane order. */
    const char *tables[] = {"SystemProfileHbmUsage", "PendingDma", "HostMemUsage", "CpuUsage", "SbufUsage",
                            "DmaUsage", "PsumUsage"};
    nx_usage u;
    nx_error err = {0};
    assert_int_equal(nx_usage_read(dir, tables, 7, S, E, W, &u, &err), 0);
    size_t at = 0;
    const stable *order[] = {&T_DMA, &T_SBUF, &T_PENDING, &T_CPU, &T_HOST, &T_HBM};
    for (size_t i = 0; i < 6; i++)
        check_table(&u, &at, order[i]);
    assert_int_equal(at, u.n);
    /* DmaUsage 2, SbufUsage 4, PendingDma 2, CpuUsage 1, HostMemUsage 1, SystemProfileHbmUsage 2 */
    assert_int_equal(u.n, 12);
    for (size_t i = 0; i < u.n; i++)
        assert_int_equal(u.series[i].is_int, strcmp(u.series[i].lane->table, "SystemProfileHbmUsage") == 0 ||
                                                 strcmp(u.series[i].lane->table, "PendingDma") == 0);
    nx_usage_free(&u);
    /* Without "average" rows every cpu_id is a series, a null one too. */
    assert_int_equal(nx_usage_read(noavg, (const char *[]){"CpuUsage"}, 1, S, E, W, &u, &err), 0);
    at = 0;
    check_table(&u, &at, &T_CPU_NOAVG);
    assert_int_equal(at, 3);
    assert_int_equal(u.n, 3);
    nx_usage_free(&u);
}

static void bad_requests_and_lanes(void **state)
{
    (void)state;
    nx_usage u;
    nx_error err = {0};
    assert_int_equal(nx_usage_read(dir, (const char *[]){"Instruction"}, 1, S, E, W, &u, &err), -1);
    assert_non_null(strstr(err.msg, "Instruction"));
    assert_int_equal(nx_usage_read(dir, (const char *[]){"HbmUsage"}, 1, E, S, W, &u, &err), -1);
    /* A table the profile lacks: no series. */
    assert_int_equal(nx_usage_read(dir, (const char *[]){"HbmUsage"}, 1, S, E, W, &u, &err), 0);
    assert_int_equal(u.n, 0);
    nx_usage_free(&u);
    static const char *const lanes[] = {"DmaUsage", "HbmUsage", "SbufUsage", "PsumUsage", "PendingDma",
                                        "CpuUsage", "HostMemUsage", "SystemProfileHbmUsage"};
    for (size_t i = 0; i < NX_USAGE_LANES; i++) {
        const nx_usage_lane *l = nx_usage_lane_at(i);
        assert_string_equal(l->table, lanes[i]);
        assert_ptr_equal(nx_usage_lane_find(lanes[i]), l);
        assert_int_equal(l->gauge, i >= 4);
        assert_int_equal(l->before, i >= 2);
    }
    assert_null(nx_usage_lane_at(NX_USAGE_LANES));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_tables),
        cmocka_unit_test(bad_requests_and_lanes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
