/*
 * test_nki_source.c — query/nki_source.h and the joined keys of query/top.h on a
 * hand-written device profile: Instruction rows whose (kernel_instruction_name,
 * pcore_idx) find a KernelInstructions row, find one only on another core, find
 * none, or have a null name or core. The expectations are computed here by a
 * nested-loop join over the rows as written (not through the map): NKI coverage,
 * and `top --by file_path,line_number` groups (DuckDB's LEFT JOIN ... GROUP BY).
 * Also: a profile without KernelInstructions (coverage unknown, every row in
 * the null group), two KernelInstructions rows for one core and name refused,
 * a KernelInstructions without line_number refused naming the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/nki_source.h"
#include "query/top.h"
#include "system_fixture.h"
#include "table_fixture.h"

static char dir[64], plain[64], dup[64];

#define N_INSTR 7
static const char *const INSTR[N_INSTR * 3] = {   /* duration_ns, kernel_instruction_name, pcore_idx */
    "100", "inst.1:0", "0", "50", "inst.1:0", "1", "30", "inst.2:0", "0", "20", NULL, "0",
    "7", "inst.3:0", "0", "11", "inst.2:0", "1", "5", "inst.1:0", NULL,
};
#define N_KI 4
static const char *const KI[N_KI * 4] = {         /* kernel_instruction_name, pcore_idx, file_path, line_number */
    "inst.1:0", "0", "f.py", "10", "inst.1:0", "1", "f.py", "10", "inst.2:0", "0", "g.py", NULL,
    "inst.4:0", "0", NULL, "12",
};

static const fx_col INSTR_COLS[] = {{"duration_ns", NXPQ_INT64}, {"kernel_instruction_name", NXPQ_STRING},
                                    {"pcore_idx", NXPQ_INT64}};
static const fx_col KI_COLS[] = {{"kernel_instruction_name", NXPQ_STRING}, {"pcore_idx", NXPQ_INT64},
                                 {"file_path", NXPQ_STRING}, {"line_number", NXPQ_INT64}};

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxnki-XXXXXX");
    snprintf(plain, sizeof plain, "/tmp/nxnki-plain-XXXXXX");
    snprintf(dup, sizeof dup, "/tmp/nxnki-dup-XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_non_null(mkdtemp(plain));
    assert_non_null(mkdtemp(dup));
    fx_write(dir, "Instruction.parquet", INSTR_COLS, 3, INSTR, N_INSTR);
    fx_write(dir, "KernelInstructions.parquet", KI_COLS, 4, KI, N_KI);
    fx_write(plain, "Instruction.parquet", INSTR_COLS, 3, INSTR, N_INSTR);
    fx_write(dup, "Instruction.parquet", INSTR_COLS, 3, INSTR, N_INSTR);
    fx_write(dup, "KernelInstructions.parquet", KI_COLS, 4,
             (const char *const[]){"inst.1:0", "0", "f.py", "10", "inst.1:0", "0", "h.py", "11"}, 2);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    fixture_rmrf(plain);
    fixture_rmrf(dup);
    return 0;
}

/* The KernelInstructions row instruction row i joins (nested loop), or -1. */
static int joined(size_t i)
{
    const char *name = INSTR[i * 3 + 1], *core = INSTR[i * 3 + 2];
    for (int k = 0; k < N_KI && name && core; k++)
        if (strcmp(KI[k * 4], name) == 0 && strcmp(KI[k * 4 + 1], core) == 0)
            return k;
    return -1;
}

static void coverage(void **state)
{
    (void)state;
    int64_t total = 0, kernel = 0, n_kernel = 0;
    for (size_t i = 0; i < N_INSTR; i++) {
        int64_t d = strtoll(INSTR[i * 3], NULL, 10);
        total += d;
        if (joined(i) >= 0) {
            kernel += d;
            n_kernel++;
        }
    }
    nx_nki_coverage c;
    nx_error err = {0};
    assert_int_equal(nx_nki_coverage_read(dir, &c, &err), 0);
    assert_true(c.present);
    assert_int_equal(c.instructions, N_INSTR);
    assert_int_equal(c.kernel_instructions, n_kernel);
    assert_int_equal(c.total_ns, total);
    assert_int_equal(c.kernel_ns, kernel);
    assert_true(kernel > 0 && kernel < total);
    assert_true(nx_nki_coverage_percent(&c) == 100.0 * (double)kernel / (double)total);
    assert_int_equal(nx_nki_coverage_read(plain, &c, &err), 0);
    assert_false(c.present);
    assert_int_equal(c.total_ns, 0);
}

static void find(void **state)
{
    (void)state;
    nx_nki_source *s;
    nx_error err = {0};
    assert_int_equal(nx_nki_source_open(dir, &s, &err), 0);
    assert_int_equal(nx_nki_source_count(s), N_KI);
    for (size_t i = 0; i < N_INSTR; i++) {
        const char *name = INSTR[i * 3 + 1], *core = INSTR[i * 3 + 2];
        const nx_nki_line *l = nx_nki_source_find(s, core != NULL, core ? strtoll(core, NULL, 10) : 0, name,
                                                  name ? strlen(name) : 0);
        int k = joined(i);
        if (k < 0) {
            assert_null(l);
            continue;
        }
        assert_non_null(l);
        if (KI[k * 4 + 2])
            assert_string_equal(l->file, KI[k * 4 + 2]);
        else
            assert_null(l->file);
        assert_int_equal(l->has_line, KI[k * 4 + 3] != NULL);
        if (l->has_line)
            assert_int_equal(l->line, strtoll(KI[k * 4 + 3], NULL, 10));
    }
    nx_nki_source_close(s);
}

/* One group of top's answer as the nested-loop join computes it. */
typedef struct group {
    const char *file;
    const char *line;
    int64_t count, sum;
} group;

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static size_t expected_groups(group *g)
{
    size_t n = 0;
    for (size_t i = 0; i < N_INSTR; i++) {
        int k = joined(i);
        const char *file = k >= 0 ? KI[k * 4 + 2] : NULL, *line = k >= 0 ? KI[k * 4 + 3] : NULL;
        size_t j = 0;
        while (j < n && !(same(g[j].file, file) && same(g[j].line, line)))
            j++;
        if (j == n)
            g[n++] = (group){file, line, 0, 0};
        g[j].count++;
        g[j].sum += strtoll(INSTR[i * 3], NULL, 10);
    }
    return n;
}

static void top_joined_keys(void **state)
{
    (void)state;
    group want[N_INSTR];
    size_t n = expected_groups(want);
    const char *by[] = {"file_path", "line_number"};
    nx_top_options o = {.table = "Instruction", .by = by, .n_by = 2};
    nx_top r;
    nx_error err = {0};
    assert_int_equal(nx_top_run(dir, &o, &r, &err), 0);
    assert_int_equal(nx_group_by_count(r.g), n);
    for (size_t i = 0; i < n; i++) {   /* every group of the answer is one of the join's */
        nx_group_key f, l;
        nx_group_by_key(r.g, i, 0, &f);
        nx_group_by_key(r.g, i, 1, &l);
        assert_int_equal(f.type, NXPQ_STRING);
        assert_int_equal(l.type, NXPQ_INT64);
        const nx_group_stats *st = nx_group_by_stats(r.g, i);
        bool found = false;
        for (size_t j = 0; j < n && !found; j++) {
            bool fe = want[j].file ? !f.null && f.len == strlen(want[j].file) && memcmp(f.s, want[j].file, f.len) == 0
                                   : f.null;
            bool le = want[j].line ? !l.null && l.i == strtoll(want[j].line, NULL, 10) : l.null;
            if (fe && le) {
                found = true;
                assert_int_equal(st->count, want[j].count);
                assert_int_equal(st->sum[0], want[j].sum);
            }
        }
        assert_true(found);
    }
    nx_top_free(&r);
    /* Without KernelInstructions every row is in the null group. */
    assert_int_equal(nx_top_run(plain, &o, &r, &err), 0);
    assert_int_equal(nx_group_by_count(r.g), 1);
    nx_group_key f;
    nx_group_by_key(r.g, 0, 0, &f);
    assert_true(f.null);
    assert_int_equal(nx_group_by_stats(r.g, 0)->count, N_INSTR);
    nx_top_free(&r);
}

static void refused(void **state)
{
    (void)state;
    nx_nki_source *s;
    nx_error err = {0};
    assert_int_equal(nx_nki_source_open(dup, &s, &err), -1);
    assert_null(s);
    assert_non_null(strstr(err.msg, "KernelInstructions.parquet"));
    assert_non_null(strstr(err.msg, "two rows for kernel_instruction_name 'inst.1:0' on pcore_idx 0"));
    const char *by[] = {"line_number"};
    nx_top_options o = {.table = "Instruction", .by = by, .n_by = 1};
    nx_top r;
    assert_int_equal(nx_top_run(dup, &o, &r, &err), -1);
    assert_non_null(strstr(err.msg, "two rows"));
    /* A KernelInstructions file without line_number. */
    fx_write(dup, "KernelInstructions.parquet", KI_COLS, 3, (const char *const[]){"inst.1:0", "0", "f.py"}, 1);
    assert_int_equal(nx_nki_source_open(dup, &s, &err), -1);
    assert_non_null(strstr(err.msg, "column 'line_number' is missing"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coverage), cmocka_unit_test(find), cmocka_unit_test(top_joined_keys),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
