/*
 * test_engine_breakdown.c — engine_breakdown.h on hand-made Instruction, CcOp and
 * DmaPacket tables whose answers are worked out below by hand: overlapping
 * instructions of one engine counted once, a zero-length instruction, a row
 * with no times (not an event), a collective partly under compute (the overlap
 * counted once, as compute), DMA under compute and collectives (precedence),
 * a DMA packet without bytes, the sums equal to the window; a profile without
 * CcOp; an end before its start; a profile without Instruction; the JSON.
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
#include "query/engine_breakdown.h"
#include "table_fixture.h"

static const fx_col ICOLS[] = {{"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}, {"engine", NXPQ_STRING}};
static const char *const INSTR[] = {
    "100", "200", "pe",  "150", "250", "pe",  "300", "400", "act",
    "350", "360", "act", NULL,  NULL,  "pe",  "500", "500", "pool",
};
static const fx_col CCOLS[] = {{"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}};
static const char *const CC[] = {"180", "320"};
static const fx_col DCOLS[] = {{"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}, {"transfer_bytes", NXPQ_INT64}};
static const char *const DMA[] = {"380", "450", "700", "440", "600", "1600", "700", "800", NULL};

static char dir[64];

static void rmrf(const char *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    assert_int_equal(system(cmd), 0);
}

static void write_all(bool cc)
{
    rmrf(dir);
    mkdir(dir, 0755);
    fx_write(dir, "Instruction.parquet", ICOLS, 3, INSTR, 6);
    if (cc)
        fx_write(dir, "CcOp.parquet", CCOLS, 2, CC, 1);
    fx_write(dir, "DmaPacket.parquet", DCOLS, 3, DMA, 3);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nx_engbd_%d", (int)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rmrf(dir);
    return 0;
}

static void test_breakdown(void **state)
{
    (void)state;
    write_all(true);
    nx_engine_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_engine_breakdown_read(dir, &b, &err), 0);
    assert_int_equal(b.start_ns, 100);
    assert_int_equal(b.end_ns, 800);
    assert_int_equal(b.window_ns, 700);
    /* compute [100,250) [300,400); CcOp [180,320); DMA [380,600) [700,800). */
    assert_int_equal(b.compute_ns, 250);
    assert_int_equal(b.communication_ns, 50);        /* [250,300) */
    assert_int_equal(b.overlapped_cc_ns, 90);        /* [180,250) + [300,320) */
    assert_int_equal(b.memory_ns, 300);              /* [400,600) + [700,800) */
    assert_int_equal(b.idle_ns, 100);                /* [600,700) */
    assert_int_equal(b.compute_ns + b.communication_ns + b.memory_ns + b.idle_ns, b.window_ns);
    assert_true(b.overlap_pct > 64.285 && b.overlap_pct < 64.286);
    assert_int_equal(b.cc_count, 1);
    assert_int_equal(b.cc_ns, 140);
    assert_int_equal(b.dma_count, 3);
    assert_int_equal(b.dma_bytes, 2300);             /* the packet without bytes adds none */
    assert_int_equal(b.dma_busy_ns, 320);
    assert_true(b.dma_gbps == 2300.0 / 320.0);
    assert_int_equal(b.n_engines, 3);
    static const char *const names[] = {"act", "pe", "pool"};
    static const int64_t count[] = {2, 2, 1}, busy[] = {100, 150, 0};
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(b.engines[i].name, names[i]);
        assert_int_equal(b.engines[i].count, count[i]);
        assert_int_equal(b.engines[i].busy_ns, busy[i]);
        assert_int_equal(b.engines[i].idle_ns, 700 - busy[i]);
    }
    nx_strbuf s = NX_STRBUF_INIT;
    nx_engine_breakdown_json(&b, true, &s);
    assert_false(nx_strbuf_failed(&s));
    assert_non_null(strstr(s.data, "{\"kind\":\"device\",\"start_ns\":100,\"end_ns\":800,\"window_ns\":700,"
                                   "\"compute_ns\":250,\"communication_ns\":50,\"overlapped_cc_ns\":90,"
                                   "\"memory_ns\":300,\"idle_ns\":100,"));
    assert_non_null(strstr(s.data, "{\"engine\":\"pe\",\"count\":2,\"busy_ns\":150,\"idle_ns\":550}"));
    nx_strbuf_free(&s);
    nx_engine_breakdown_free(&b);
}

static void test_without_cc(void **state)
{
    (void)state;
    write_all(false);
    nx_engine_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_engine_breakdown_read(dir, &b, &err), 0);
    assert_true(b.overlap_pct < 0);
    assert_int_equal(b.communication_ns, 0);
    assert_int_equal(b.memory_ns, 300);              /* [400,600) + [700,800): compute still wins [380,400) */
    assert_int_equal(b.compute_ns + b.memory_ns + b.idle_ns, b.window_ns);
    nx_strbuf s = NX_STRBUF_INIT;
    nx_engine_breakdown_json(&b, false, &s);
    assert_non_null(strstr(s.data, "\"overlap_pct\":null"));
    nx_strbuf_free(&s);
    nx_engine_breakdown_free(&b);
}

static void test_bad_and_absent(void **state)
{
    (void)state;
    rmrf(dir);
    mkdir(dir, 0755);
    nx_engine_breakdown b;
    nx_error err = {0};
    assert_int_equal(nx_engine_breakdown_read(dir, &b, &err), NX_PROFILE_TABLE_ABSENT);
    static const char *const bad[] = {"100", "200", "pe", "300", "250", "act"};
    fx_write(dir, "Instruction.parquet", ICOLS, 3, bad, 2);
    assert_int_equal(nx_engine_breakdown_read(dir, &b, &err), -1);
    assert_non_null(strstr(err.msg, "Instruction: file 0 row 1 (start_ts 300, end_ts 250)"));
    assert_int_equal(b.n_engines, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_breakdown),
        cmocka_unit_test(test_without_cc),
        cmocka_unit_test(test_bad_and_absent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
