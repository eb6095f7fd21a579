/*
 * test_row_keyed.c — keyed columns of the row layer (process/row.h,
 * nx_row_keyed_str / nx_row_keyed_i64 / nx_row_key) against ordinary puts.
 *
 * row.h promises that a table written with keyed columns is the same as the
 * table written with puts of the values the keys stand for. Each case writes
 * DmaPacket (a timeline table, so its timeline index is written too) twice,
 * into two directories, from the same generated rows: once with queue_type,
 * queue_name, engine_idx and queue_idx keyed on slot 0 and variable on slot 1,
 * once with nx_row_str / nx_row_i64 puts; and compares DmaPacket.parquet and
 * .DmaPacket.nxtl byte for byte. Rows: more than two batches (the background
 * flush and its second batch), rows without a slot-1 key (variable null),
 * null entries (empty variable), a key set on slot 1 only for some rows.
 * Refusals: a put into a keyed column, a keyed column after the first row, a
 * key slot past NX_ROW_KEYS, a key past the column's values.
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

#include "capture/program_file.h"
#include "profile/profile_output.h"
#include "process/row.h"

#define N_QUEUES 7
#define N_DESCS 50
#define ROWS (NX_ROW_BATCH * 2 + 1234)

static const char *const q_types[N_QUEUES] = {"weights", "io", "io", "spill", "weights", "cc", "io"};
static char q_names[N_QUEUES][16];
static char d_vars[N_DESCS][24];
static nxpq_str k_type[N_QUEUES], k_name[N_QUEUES], k_var[N_DESCS];
static int64_t k_engine[N_QUEUES], k_idx[N_QUEUES];

static void build(void)
{
    for (int q = 0; q < N_QUEUES; q++) {
        snprintf(q_names[q], sizeof q_names[q], "qSyncIO%d", q);
        k_type[q] = (nxpq_str){q_types[q], strlen(q_types[q])};
        k_name[q] = (nxpq_str){q_names[q], strlen(q_names[q])};
        k_engine[q] = q % 3 == 1 ? NX_ABSENT : q * 2;
        k_idx[q] = q;
    }
    for (int d = 0; d < N_DESCS; d++) {
        if (d % 9 == 4)
            d_vars[d][0] = 0;   /* empty: null */
        else
            snprintf(d_vars[d], sizeof d_vars[d], "tensor_%d", d % 17);
        k_var[d] = d_vars[d][0] ? (nxpq_str){d_vars[d], strlen(d_vars[d])} : (nxpq_str){NULL, 0};
    }
}

static const char *const fixed[] = {"start_ts", "end_ts", "duration_ns", "id", "packet_idx",
                                    "packet_aggregation_id", "read_bytes", "write_bytes", "transfer_bytes", "crc"};
#define N_FIXED (sizeof fixed / sizeof fixed[0])

static void write_table(const char *dir, bool keyed)
{
    nx_error err;
    nx_table_dest dest = {.dir = dir};
    nx_row r;
    assert_int_equal(nx_row_open(&r, &dest, "DmaPacket", &err), 0);
    size_t fc[N_FIXED];
    for (size_t i = 0; i < N_FIXED; i++)
        fc[i] = nx_row_col(&r, fixed[i]);
    size_t c_thr = nx_row_col(&r, "throughput"), c_pcore = nx_row_col(&r, "pcore_idx");
    size_t c_type = nx_row_col(&r, "queue_type"), c_name = nx_row_col(&r, "queue_name");
    size_t c_eng = nx_row_col(&r, "engine_idx"), c_qidx = nx_row_col(&r, "queue_idx");
    size_t c_var = nx_row_col(&r, "variable");
    if (keyed) {
        assert_int_equal(nx_row_keyed_str(&r, 0, c_type, k_type, N_QUEUES, &err), 0);
        assert_int_equal(nx_row_keyed_str(&r, 0, c_name, k_name, N_QUEUES, &err), 0);
        assert_int_equal(nx_row_keyed_i64(&r, 0, c_eng, k_engine, N_QUEUES, &err), 0);
        assert_int_equal(nx_row_keyed_i64(&r, 0, c_qidx, k_idx, N_QUEUES, &err), 0);
        assert_int_equal(nx_row_keyed_str(&r, 1, c_var, k_var, N_DESCS, &err), 0);
    }
    for (int64_t i = 0; i < ROWS; i++) {
        assert_int_equal(nx_row_begin(&r, &err), 0);
        for (size_t k = 0; k < N_FIXED; k++)
            nx_row_i64(&r, fc[k], k == 0 ? 1000 + i * 10 : k == 1 ? 1005 + i * 10 : (int64_t)k + i % 13);
        nx_row_num(&r, c_thr, 1.5);
        nx_row_i64(&r, c_pcore, i % 2);
        uint32_t q = (uint32_t)((i * 5 + i / 100) % N_QUEUES);
        bool has_desc = i % 11 != 3;
        uint32_t d = (uint32_t)((i * 7) % N_DESCS);
        if (keyed) {
            nx_row_key(&r, 0, q);
            if (has_desc)
                nx_row_key(&r, 1, d);
        } else {
            nx_row_str(&r, c_type, q_types[q]);
            nx_row_str(&r, c_name, q_names[q]);
            nx_row_opt_i64(&r, c_eng, k_engine[q]);
            nx_row_i64(&r, c_qidx, k_idx[q]);
            if (has_desc)
                nx_row_opt_str(&r, c_var, d_vars[d]);
        }
        assert_int_equal(nx_row_end(&r, &err), 0);
    }
    unsigned tables = 0;
    assert_int_equal(nx_row_close(&r, true, &tables, &err), 0);
    assert_int_equal(tables, 1);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void same_file(const char *a_dir, const char *b_dir, const char *name)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/%s", a_dir, name);
    snprintf(b, sizeof b, "%s/%s", b_dir, name);
    size_t la, lb;
    unsigned char *da = slurp(a, &la), *db = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    free(da);
    free(db);
}

static void test_keyed_equals_puts(void **state)
{
    (void)state;
    char a[] = "/tmp/nx_row_keyed_a_XXXXXX", b[] = "/tmp/nx_row_keyed_b_XXXXXX";
    assert_non_null(mkdtemp(a));
    assert_non_null(mkdtemp(b));
    write_table(a, false);
    write_table(b, true);
    same_file(a, b, "DmaPacket.parquet");
    struct stat st;
    char idx[512];
    snprintf(idx, sizeof idx, "%s/.DmaPacket.nxtl", a);
    if (stat(idx, &st) == 0)   /* the timeline index reads queue_name: spelled out from the keys */
        same_file(a, b, ".DmaPacket.nxtl");
    nx_remove_tree(a);
    nx_remove_tree(b);
}

static void test_refusals(void **state)
{
    (void)state;
    char dir[] = "/tmp/nx_row_keyed_r_XXXXXX";
    assert_non_null(mkdtemp(dir));
    nx_error err;
    nx_table_dest dest = {.dir = dir};
    nx_row r;
    unsigned tables = 0;

    /* a put into a keyed column fails the row */
    assert_int_equal(nx_row_open(&r, &dest, "DmaPacket", &err), 0);
    size_t c_type = nx_row_col(&r, "queue_type"), c_var = nx_row_col(&r, "variable");
    assert_int_equal(nx_row_keyed_str(&r, 0, c_type, k_type, N_QUEUES, &err), 0);
    assert_int_equal(nx_row_keyed_str(&r, 0, c_type, k_type, N_QUEUES, &err), -1);   /* twice */
    assert_int_equal(nx_row_keyed_i64(&r, 0, c_var, k_engine, N_QUEUES, &err), -1);  /* a string column */
    assert_int_equal(nx_row_keyed_str(&r, NX_ROW_KEYS, c_var, k_var, N_DESCS, &err), -1);
    assert_int_equal(nx_row_begin(&r, &err), 0);
    nx_row_str(&r, c_type, "io");
    assert_int_equal(nx_row_end(&r, &err), -1);
    nx_row_discard(&r);

    /* keyed after the first row */
    assert_int_equal(nx_row_open(&r, &dest, "DmaPacket", &err), 0);
    c_type = nx_row_col(&r, "queue_type");
    assert_int_equal(nx_row_begin(&r, &err), 0);
    nx_row_str(&r, c_type, "io");
    nx_row_end(&r, &err);
    assert_int_equal(nx_row_keyed_str(&r, 0, c_type, k_type, N_QUEUES, &err), -1);
    nx_row_discard(&r);

    /* a key past the values fails the table when the batch reaches the codec */
    assert_int_equal(nx_row_open(&r, &dest, "DmaPacket", &err), 0);
    c_type = nx_row_col(&r, "queue_type");
    assert_int_equal(nx_row_keyed_str(&r, 0, c_type, k_type, N_QUEUES, &err), 0);
    assert_int_equal(nx_row_begin(&r, &err), 0);
    for (size_t i = 0; i < N_FIXED; i++)
        nx_row_i64(&r, nx_row_col(&r, fixed[i]), 1);
    nx_row_num(&r, nx_row_col(&r, "throughput"), 1.0);
    nx_row_key(&r, 0, N_QUEUES);
    assert_int_equal(nx_row_end(&r, &err), 0);
    assert_int_equal(nx_row_close(&r, true, &tables, &err), -1);
    assert_non_null(strstr(err.msg, "past the last entry"));
    nx_remove_tree(dir);
}

int main(void)
{
    build();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyed_equals_puts),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
