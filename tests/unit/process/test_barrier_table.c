/*
 * test_core_barriers.c — the CoreBarriers sink (process/device/barrier_table.c) driven with
 * hand-made instruction events over a hand-made program, its table read back.
 *
 * The program has a barrier whose operands carry semaphore= and id= (a row per
 * record), a barrier whose operands hold "xid=7" and "semaphore=3" but no "id="
 * (no rows; one Warning naming the program, engine, pc and the record count), and a
 * plain instruction (ignored). A program without a barrier opens no table.
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
#include "process/device/device_sink.h"

extern const nx_device_sink nx_sink_core_barriers;

static char dir[64];
static nx_prog_instr instrs[3];
static uint32_t pcs[3] = {0, 4, 5};
static nx_program prog;
static nx_program *progs[1] = {&prog};
static nx_device_trace trace;
static char warned[1024];
static int n_warned;

static void on_warn(void *ctx, const char *path, uint64_t where, const char *category, const char *msg)
{
    (void)ctx, (void)where;
    n_warned++;
    snprintf(warned, sizeof warned, "%s|%s|%s", path, category, msg);
}

static const nx_cap_warner warner = {on_warn, NULL};

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx-barriers-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    instrs[0] = (nx_prog_instr){.pc = 0, .engine = NX_ENGINE_GPSIMD, .opcode = "IOTA", .compiler_opcode = "IOTA",
                                .compiler_pc = NX_ABSENT};
    instrs[1] = (nx_prog_instr){.pc = 4, .engine = NX_ENGINE_GPSIMD, .opcode = "CORE_BARRIER",
                                .compiler_opcode = "PSEUDO_CORE_BARRIER", .compiler_pc = 104,
                                .compiler_operands = "$S[9]>=2 $S[9]++@complete semaphore=9 id=12"};
    instrs[2] = (nx_prog_instr){.pc = 5, .engine = NX_ENGINE_GPSIMD, .opcode = "CORE_BARRIER",
                                .compiler_opcode = "PSEUDO_CORE_BARRIER", .compiler_pc = NX_ABSENT,
                                .compiler_operands = "semaphore=3 xid=7"};
    prog.instrs = instrs, prog.n_instrs = 3, prog.instr_pcs = pcs;
    prog.engine_first[NX_ENGINE_GPSIMD] = 0, prog.engine_count[NX_ENGINE_GPSIMD] = 3;
    prog.path = "program_x.nxprog";
    trace = (nx_device_trace){.index = 0, .path = "trace_x.nxtrace", .prog = &prog, .prog_index = 0};
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/CoreBarriers.parquet", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/.CoreBarriers.nxtl", dir);
    unlink(p);
    return rmdir(dir);
}

static void feed(void *st, size_t instr, int64_t start, int64_t end, uint8_t pcore)
{
    nx_trace_record rec = {.kind = NX_REC_INSTRUCTION, .pcore = pcore};
    nx_device_event ev = {.trace = &trace, .rec = &rec, .start_ns = start, .end_ns = end, .instr = &instrs[instr]};
    nx_error err;
    assert_int_equal(nx_sink_core_barriers.event(st, &ev, &err), 0);
}

static void test_barrier_rows_and_the_warning(void **state)
{
    (void)state;
    nx_process_ctx ctx = {.dest = {.dir = dir}, .progs = progs, .n_progs = 1, .traces = &trace, .n_traces = 1,
                          .warn = &warner};
    nx_error err;
    void *st = NULL;
    assert_int_equal(nx_sink_core_barriers.open(&ctx, &st, &err), 0);
    assert_non_null(st);
    feed(st, 0, 5, 9, 0);
    feed(st, 1, 10, 40, 0);
    feed(st, 2, 41, 45, 0);
    feed(st, 1, 50, 52, 1);
    feed(st, 2, 60, 61, 1);
    unsigned tables = 0;
    assert_int_equal(nx_sink_core_barriers.finish(st, &ctx, &tables, &err), 0);
    assert_int_equal(tables, 1);
    assert_int_equal(n_warned, 1);
    assert_non_null(strstr(warned, "program_x.nxprog|Missing Data|"));
    assert_non_null(strstr(warned, "GpSimd, pc 5"));
    assert_non_null(strstr(warned, "\"semaphore=3 xid=7\"; its 2 record(s) are not written"));

    char path[128];
    snprintf(path, sizeof path, "%s/CoreBarriers.parquet", dir);
    nxpq_reader *rd = nxpq_reader_open(path, &err);
    assert_non_null(rd);
    assert_int_equal(nxpq_reader_num_rows(rd), 2);
    static const char *const names[] = {"start_ts", "end_ts", "duration_ns", "id", "semaphore", "compiler_pc",
                                        "pcore_idx", "engine_name"};
    size_t cols[8];
    for (size_t c = 0; c < 8; c++)
        cols[c] = (size_t)nxpq_reader_find_column(rd, names[c]);
    nxpq_scan_options so = {.columns = cols, .n_columns = 8};
    nxpq_scan *sc = nxpq_scan_open(rd, &so, &err);
    assert_non_null(sc);
    const nxpq_batch *b;
    assert_int_equal(nxpq_scan_next(sc, &b, &err), 1);
    static const int64_t want[2][7] = {{10, 40, 30, 12, 9, 104, 0}, {50, 52, 2, 12, 9, 104, 1}};
    for (size_t i = 0; i < 2; i++) {
        for (size_t c = 0; c < 7; c++)
            assert_int_equal(b->columns[c].values.i64[i], want[i][c]);
        const nxpq_column_data *e = &b->columns[7];
        assert_int_equal(e->offsets[i + 1] - e->offsets[i], 6);
        assert_memory_equal(e->data + e->offsets[i], "GpSimd", 6);
    }
    nxpq_scan_close(sc);
    nxpq_reader_close(rd);
}

static void test_no_barrier_no_table(void **state)
{
    (void)state;
    nx_program plain = prog;
    plain.n_instrs = 1;   /* IOTA only */
    plain.engine_count[NX_ENGINE_GPSIMD] = 1;
    nx_program *one[1] = {&plain};
    nx_process_ctx ctx = {.dest = {.dir = dir}, .progs = one, .n_progs = 1, .traces = &trace, .n_traces = 1};
    nx_error err;
    void *st = &ctx;
    assert_int_equal(nx_sink_core_barriers.open(&ctx, &st, &err), 0);
    assert_null(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_barrier_rows_and_the_warning),
        cmocka_unit_test(test_no_barrier_no_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
