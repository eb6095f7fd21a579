/*
 * test_device_summary.c — query/device_summary.h: the first Summary row (scalar columns
 * in file order, a column outside the schema kept, a null value, more than one
 * row), the OpcodeSummary order (time descending with a null time last, ties by engine,
 * then opcode, then file order) and the `top` cut, a missing column as null cells, and
 * a profile without the tables.
 *
 * The expected order is computed here by a selection sort over the rows as written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/device_summary.h"
#include "system_fixture.h"
#include "table_fixture.h"

static char dir[64];

/* engine, opcode, instruction_count, instruction_time_ns, active_time_percent
 * (active_time_ns is left out of the file). */
#define N_OPS 8
static const char *const OPS[N_OPS * 5] = {
    "tensor", "MATMUL", "10", "500", "50.5",   "vector", "ADD", "3", "120", "12",
    "scalar", "EXP", "1", NULL, "1",           "vector", "ADD", "4", "500", NULL,
    "tensor", "LOAD", "7", "500", "7.25",      "gpsimd", NULL, "2", "90", "9",
    "tensor", "MATMUL", "1", "500", "2",       NULL, "NOP", "5", "500", "0",
};

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxdevsum-XXXXXX");
    assert_non_null(mkdtemp(dir));
    fx_write(dir, "Summary.parquet",
             (fx_col[]){{"total_time", NXPQ_FLOAT}, {"neuroncore_cycle_count", NXPQ_INT64},
                        {"not_in_schema", NXPQ_STRING}, {"cc_op_count", NXPQ_INT32}},
             4, (const char *const[]){"0.5", "1234", "x", NULL, "9", "9", "y", "1"}, 2);
    fx_write(dir, "OpcodeSummary.parquet",
             (fx_col[]){{"engine", NXPQ_STRING}, {"opcode", NXPQ_STRING}, {"instruction_count", NXPQ_INT64},
                        {"instruction_time_ns", NXPQ_INT64}, {"active_time_percent", NXPQ_DOUBLE}},
             5, OPS, N_OPS);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

static void summary_row(void **state)
{
    (void)state;
    nx_device_summary d;
    nx_error err = {0};
    assert_int_equal(nx_device_summary_read(dir, 10, &d, &err), 0);
    assert_true(d.summary.present && d.summary.has_row);
    assert_int_equal(d.summary.rows, 2);
    assert_int_equal(d.summary.n, 4);
    static const char *const names[] = {"total_time", "neuroncore_cycle_count", "not_in_schema", "cc_op_count"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(d.summary.cells[i].name, names[i]);
    const nx_cell *c = nx_row0_field(&d.summary, "total_time");
    assert_int_equal(c->type, NXPQ_FLOAT);
    assert_true(c->f == 0.5);
    c = nx_row0_field(&d.summary, "neuroncore_cycle_count");
    assert_int_equal(c->i, 1234);
    c = nx_row0_field(&d.summary, "not_in_schema");
    assert_string_equal(c->s, "x");
    assert_int_equal(c->len, 1);
    c = nx_row0_field(&d.summary, "cc_op_count");
    assert_int_equal(c->type, NXPQ_INT32);
    assert_true(c->null);
    assert_null(nx_row0_field(&d.summary, "mfu_estimated_percent"));
    nx_device_summary_free(&d);
}

/* Whether row a of OPS ranks before row b (device_summary.h's order, independently). */
static bool before(size_t a, size_t b)
{
    const char *ta = OPS[a * 5 + 3], *tb = OPS[b * 5 + 3];
    if (!ta != !tb)
        return ta != NULL;
    if (ta && strtoll(ta, NULL, 10) != strtoll(tb, NULL, 10))
        return strtoll(ta, NULL, 10) > strtoll(tb, NULL, 10);
    for (int k = 0; k < 2; k++) {
        const char *x = OPS[a * 5 + k] ? OPS[a * 5 + k] : "", *y = OPS[b * 5 + k] ? OPS[b * 5 + k] : "";
        if (strcmp(x, y) != 0)
            return strcmp(x, y) < 0;
    }
    return a < b;
}

static void check_cell_text(const nx_cell *c, const char *want)
{
    if (!want) {
        assert_true(c->null);
        return;
    }
    assert_false(c->null);
    assert_string_equal(c->s, want);
}

static void opcodes_top(void **state)
{
    (void)state;
    size_t order[N_OPS];
    bool used[N_OPS] = {false};
    for (size_t k = 0; k < N_OPS; k++) {
        size_t best = N_OPS;
        for (size_t i = 0; i < N_OPS; i++)
            if (!used[i] && (best == N_OPS || before(i, best)))
                best = i;
        used[best] = true;
        order[k] = best;
    }
    for (size_t top = 1; top <= N_OPS + 2; top++) {
        nx_device_summary d;
        nx_error err = {0};
        assert_int_equal(nx_device_summary_read(dir, top, &d, &err), 0);
        assert_true(d.have_opcodes);
        assert_int_equal(d.opcode_rows, N_OPS);
        assert_int_equal(d.n_opcodes, top < N_OPS ? top : N_OPS);
        for (size_t k = 0; k < d.n_opcodes; k++) {
            const nx_cell *row = d.opcodes[k];
            const char *const *w = &OPS[order[k] * 5];
            check_cell_text(&row[NX_OP_ENGINE], w[0]);
            check_cell_text(&row[NX_OP_OPCODE], w[1]);
            assert_int_equal(row[NX_OP_COUNT].i, strtoll(w[2], NULL, 10));
            assert_int_equal(row[NX_OP_TIME].null, w[3] == NULL);
            if (w[3])
                assert_int_equal(row[NX_OP_TIME].i, strtoll(w[3], NULL, 10));
            assert_int_equal(row[NX_OP_ACTIVE].type, NXPQ_UNSUPPORTED); /* not in the file */
            assert_true(row[NX_OP_ACTIVE].null);
            assert_int_equal(row[NX_OP_ACTIVE_PCT].null, w[4] == NULL);
            if (w[4])
                assert_true(row[NX_OP_ACTIVE_PCT].f == strtod(w[4], NULL));
        }
        nx_device_summary_free(&d);
    }
}

static void without_tables(void **state)
{
    (void)state;
    char empty[64];
    snprintf(empty, sizeof empty, "/tmp/nxdevsum-empty-XXXXXX");
    assert_non_null(mkdtemp(empty));
    nx_device_summary d;
    nx_error err = {0};
    assert_int_equal(nx_device_summary_read(empty, 10, &d, &err), 0);
    assert_false(d.summary.present || d.summary.has_row || d.have_opcodes);
    assert_int_equal(d.summary.n + d.n_opcodes, 0);
    nx_device_summary_free(&d);
    /* An empty Summary: the table, no row. */
    fx_write(empty, "Summary.parquet", (fx_col[]){{"total_time", NXPQ_DOUBLE}}, 1, NULL, 0);
    assert_int_equal(nx_device_summary_read(empty, 10, &d, &err), 0);
    assert_true(d.summary.present);
    assert_false(d.summary.has_row);
    assert_true(d.summary.cells[0].null);
    nx_device_summary_free(&d);
    fixture_rmrf(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summary_row),
        cmocka_unit_test(opcodes_top),
        cmocka_unit_test(without_tables),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
