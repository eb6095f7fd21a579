/*
 * test_sbuf_allocation.c — SbufAllocation rows from live ranges (process/device/sbuf_allocation.h),
 * written into a temporary directory and read back with the Parquet reader.
 *
 * A hand-made program with three allocations: an SBUF one with an address in
 * partitions 2..4, an SBUF one without an address, and a PSUM one with an address.
 * Ranges are given out of start order; the expected rows are listed here from the
 * rules: only the first allocation's ranges give rows, one per partition, with the
 * address range, its name, the live instruction's opcode, operands and hlo_name and
 * the record index, in start order once the watermark passes them (a drain below a
 * range's start keeps it back).
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

#include "parquet/parquet.h"
#include "process/device/sbuf_allocation.h"

static char dir[64];

static nx_prog_instr instrs[2];
static uint32_t pcs[2] = {0, 0};
static nx_prog_alloc allocs[3] = {
    {"w.tile", NX_MEM_SBUF, NX_NO_BANK, 2, 3, NX_ENGINE_TENSOR, NX_ENGINE_VECTOR, 0, 0, 100, 300},
    {"no.address", NX_MEM_SBUF, NX_NO_BANK, 0, 128, NX_ENGINE_TENSOR, NX_ENGINE_VECTOR, 0, 0, 64, 0},
    {"acc", NX_MEM_PSUM, 1, 0, 128, NX_ENGINE_TENSOR, NX_ENGINE_VECTOR, 0, 0, 64, 64},
};
static nx_program prog;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx-sbuf-alloc-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    instrs[0] = (nx_prog_instr){.pc = 0, .engine = NX_ENGINE_TENSOR, .opcode = "MATMUL", .operands = "rows=64",
                                .hlo_name = "dot.1"};
    instrs[1] = (nx_prog_instr){.pc = 0, .engine = NX_ENGINE_VECTOR, .opcode = "TENSOR_TENSOR"};
    prog.instrs = instrs, prog.n_instrs = 2, prog.instr_pcs = pcs;
    prog.engine_first[NX_ENGINE_TENSOR] = 0, prog.engine_count[NX_ENGINE_TENSOR] = 1;
    prog.engine_first[NX_ENGINE_VECTOR] = 1, prog.engine_count[NX_ENGINE_VECTOR] = 1;
    prog.allocs = allocs, prog.n_allocs = 3;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/SbufAllocation.parquet", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/.SbufAllocation.nxtl", dir);
    unlink(p);
    return rmdir(dir);
}

typedef struct want_row {
    int64_t start, end, part, pcore;
} want_row;

static bool str_is(const nxpq_column_data *c, size_t i, const char *s)
{
    size_t len = c->offsets[i + 1] - c->offsets[i];
    return len == strlen(s) && memcmp(c->data + c->offsets[i], s, len) == 0;
}

static void test_rows_per_partition_in_start_order(void **state)
{
    (void)state;
    nx_table_dest dest = {.dir = dir};
    nx_error err;
    nx_sbuf_rows s;
    assert_int_equal(nx_sbuf_rows_open(&s, &dest, &err), 0);
    assert_int_equal(nx_sbuf_rows_add(&s, &prog, 0, 1, 50, 90, &err), 0);
    assert_int_equal(nx_sbuf_rows_add(&s, &prog, 1, 0, 5, 95, &err), 0);   /* no address: no rows */
    assert_int_equal(nx_sbuf_rows_add(&s, &prog, 2, 0, 6, 96, &err), 0);   /* PSUM: no rows */
    assert_int_equal(nx_sbuf_rows_add(&s, &prog, 0, 0, 10, 20, &err), 0);
    assert_int_equal(nx_sbuf_rows_drain(&s, 40, &err), 0);   /* writes the range starting at 10 only */
    assert_int_equal(nx_reorder_size(&s.q), 1);
    unsigned tables = 0;
    assert_int_equal(nx_sbuf_rows_finish(&s, 0, &tables, &err), 0);
    assert_int_equal(tables, 1);

    static const want_row want[] = {{10, 20, 2, 0}, {10, 20, 3, 0}, {10, 20, 4, 0},
                                    {50, 90, 2, 1}, {50, 90, 3, 1}, {50, 90, 4, 1}};
    static const char *const names[] = {"start_ts", "end_ts", "start_address", "end_address", "partition",
                                        "pcore_idx", "block_id", "tensor_name", "opcode", "operands",
                                        "hlo_name", "op_source_type", "queue_name"};
    char path[128];
    snprintf(path, sizeof path, "%s/SbufAllocation.parquet", dir);
    nxpq_reader *rd = nxpq_reader_open(path, &err);
    assert_non_null(rd);
    assert_int_equal(nxpq_reader_num_rows(rd), 6);
    size_t cols[13];
    for (size_t c = 0; c < 13; c++) {
        int k = nxpq_reader_find_column(rd, names[c]);
        assert_true(k >= 0);
        cols[c] = (size_t)k;
    }
    nxpq_scan_options so = {.columns = cols, .n_columns = 13};
    nxpq_scan *sc = nxpq_scan_open(rd, &so, &err);
    assert_non_null(sc);
    const nxpq_batch *b;
    assert_int_equal(nxpq_scan_next(sc, &b, &err), 1);
    assert_int_equal(b->n_rows, 6);
    const nxpq_column_data *c = b->columns;
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(c[0].values.i64[i], want[i].start);
        assert_int_equal(c[1].values.i64[i], want[i].end);
        assert_int_equal(c[2].values.i64[i], 200);
        assert_int_equal(c[3].values.i64[i], 300);
        assert_int_equal(c[4].values.i64[i], want[i].part);
        assert_int_equal(c[5].values.i64[i], want[i].pcore);
        assert_int_equal(c[6].values.i64[i], 0);
        assert_true(str_is(&c[7], i, "w.tile"));
        assert_true(str_is(&c[8], i, "MATMUL"));
        assert_true(str_is(&c[9], i, "rows=64"));
        assert_true(str_is(&c[10], i, "dot.1"));
        assert_true(str_is(&c[11], i, "instruction"));
        assert_true(c[12].valid && !c[12].valid[i]);   /* queue_name: null */
    }
    nxpq_scan_close(sc);
    nxpq_reader_close(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_per_partition_in_start_order),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
