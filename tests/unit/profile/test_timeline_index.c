/*
 * test_timeline_index.c — the timeline index (profile/timeline_index.h) on
 * adversarial data: its sampled pass must equal the scan's, event for event.
 *
 * An Instruction table is written through process/row.h (which writes the
 * index beside it) from generated rows in start order: four tracks (two named
 * by timeline_track, two by engine, an empty timeline_track falling back to
 * engine), bursts of equal starts, durations drawn from a few values so ties
 * are everywhere, zero durations, rare very long events that reach far into
 * later windows, opcodes and a raw_framework_id that is sometimes null. Then,
 * for windows inside, across, before and after the data and widths from 1 to
 * more buckets than events (and windows that start exactly at an event's end or
 * one ns after it, and bucket boundaries exactly at an event's start),
 * nx_sampled_pass with the index is compared with the
 * same pass with NXPROF_NO_TIMELINE_INDEX=1: same events (track name, bucket,
 * start, end, ordinal), in-window count and track order; and every kept event's
 * labels from the index equal the values written for its row. Written twice:
 * as one file and split into files of 1,000 rows.
 * The writer gives up (no index file) when an event ends before it starts, and
 * queries still answer from the scan.
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
#include "query/engine/sampled_pass.h"
#include "profile/timeline_index.h"
#include "test_rand.h"

#define N_ROWS 6000

typedef struct gen_row {
    int64_t start, end;
    const char *engine, *track;      /* track: timeline_track or NULL */
    const char *opcode;
    int64_t fw;                      /* NX_ABSENT: null */
} gen_row;

static gen_row rows[N_ROWS];

static void generate(void)
{
    static const char *const engines[] = {"pe", "act", "pool"};
    static const char *const opcodes[] = {"MATMUL", "ACTIVATE", "TENSOR_COPY", "DMA_TRIGGER"};
    static const int64_t durs[] = {0, 1, 5, 5, 5, 100, 100, 2500};
    int64_t t = 1000000;
    for (int i = 0; i < N_ROWS; i++) {
        if (next_rand() % 4)   /* bursts of equal starts otherwise */
            t += (int64_t)(next_rand() % 300);
        gen_row *r = &rows[i];
        r->start = t;
        int64_t d = durs[next_rand() % 8];
        if (next_rand() % 997 == 0)
            d = 5000000;       /* reaches far past the next windows */
        r->end = t + d;
        r->engine = engines[next_rand() % 3];
        uint64_t k = next_rand() % 4;
        r->track = k == 0 ? "qSyncTensor" : k == 1 ? "" : NULL;
        r->opcode = opcodes[next_rand() % 4];
        r->fw = next_rand() % 5 == 0 ? NX_ABSENT : (int64_t)(next_rand() % 7);
    }
}

static void write_table(const char *dir, uint64_t max_rows, int bad_row)
{
    nx_remove_tree(dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    nx_table_dest dest = {.dir = dir, .max_rows = max_rows};
    nx_row r;
    nx_error err = {0};
    unsigned tables = 0;
    assert_int_equal(nx_row_open(&r, &dest, "Instruction", &err), 0);
    size_t c_start = nx_row_col(&r, "start_ts"), c_end = nx_row_col(&r, "end_ts"), c_dur = nx_row_col(&r, "duration_ns"),
           c_eng = nx_row_col(&r, "engine"), c_tt = nx_row_col(&r, "timeline_track"), c_op = nx_row_col(&r, "opcode"),
           c_ops = nx_row_col(&r, "operands"), c_id = nx_row_col(&r, "id"), c_pc = nx_row_col(&r, "pc"),
           c_bir = nx_row_col(&r, "bir_id"), c_fw = nx_row_col(&r, "raw_framework_id");
    for (int i = 0; i < N_ROWS; i++) {
        const gen_row *g = &rows[i];
        assert_int_equal(nx_row_begin(&r, &err), 0);
        int64_t end = i == bad_row ? g->start - 1 : g->end;
        nx_row_i64(&r, c_start, g->start);
        nx_row_i64(&r, c_end, end);
        nx_row_i64(&r, c_dur, end - g->start);
        nx_row_str(&r, c_eng, g->engine);
        if (g->track)
            nx_row_str(&r, c_tt, g->track);
        nx_row_str(&r, c_op, g->opcode);
        nx_row_str(&r, c_ops, "");
        nx_row_i64(&r, c_id, i);
        nx_row_i64(&r, c_pc, i % 50);
        nx_row_str(&r, c_bir, "sg:1");
        nx_row_opt_i64(&r, c_fw, g->fw);
        assert_int_equal(nx_row_end(&r, &err), 0);
    }
    assert_int_equal(nx_row_close(&r, true, &tables, &err), 0);
}

static bool has_index(const char *dir)
{
    char path[512];
    struct stat st;
    assert_int_equal(nx_tlx_path(dir, "Instruction", path, sizeof path), 0);
    return stat(path, &st) == 0;
}

/* The generated row of an ordinal, for a table split every max_rows rows. */
static const gen_row *row_of(int64_t ordinal, uint64_t max_rows)
{
    int64_t file = ordinal >> 40, row = ordinal & ((INT64_C(1) << 40) - 1);
    int64_t i = max_rows ? file * (int64_t)max_rows + row : row;
    assert_true(i >= 0 && i < N_ROWS);
    return &rows[i];
}

static void check_labels(const nx_sampled *a, uint64_t max_rows)
{
    const nx_tlx *x = a->index;
    int l_op = nx_tlx_label_find(x, "opcode"), l_fw = nx_tlx_label_find(x, "raw_framework_id");
    assert_true(l_op >= 0 && l_fw >= 0);
    assert_true(nx_tlx_label_is_string(x, l_op) && !nx_tlx_label_is_string(x, l_fw));
    assert_int_equal(nx_tlx_label_find(x, "framework_name"), -1);   /* derived, not stored */
    for (size_t i = 0; i < a->n; i++) {
        const gen_row *g = row_of(a->samples[i].ordinal, max_rows);
        int64_t v;
        const char *s;
        size_t len;
        assert_true(nx_tlx_label_value(x, a->samples[i].tag, l_op, &v, &s, &len));
        assert_int_equal(len, strlen(g->opcode));
        assert_memory_equal(s, g->opcode, len);
        bool ok = nx_tlx_label_value(x, a->samples[i].tag, l_fw, &v, &s, &len);
        assert_int_equal(ok, g->fw != NX_ABSENT);
        if (ok)
            assert_int_equal(v, g->fw);
    }
}

static void compare(const char *dir, int64_t start, int64_t end, uint32_t width, uint64_t max_rows, bool indexed)
{
    nx_sampled a, b;
    nx_error err = {0};
    unsetenv("NXPROF_NO_TIMELINE_INDEX");
    assert_int_equal(nx_sampled_pass(dir, "Instruction", start, end, width, &a, &err), 0);
    assert_int_equal(a.index != NULL, indexed);
    setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
    assert_int_equal(nx_sampled_pass(dir, "Instruction", start, end, width, &b, &err), 0);
    unsetenv("NXPROF_NO_TIMELINE_INDEX");
    assert_null(b.index);
    assert_int_equal(a.in_window, b.in_window);
    assert_int_equal(a.n_tracks, b.n_tracks);
    for (size_t t = 0; t < a.n_tracks; t++)
        assert_string_equal(a.names[t], b.names[t]);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        const nx_sample *x = &a.samples[i], *y = &b.samples[i];
        assert_int_equal(x->track, y->track);
        assert_int_equal(x->bucket, y->bucket);
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->ordinal, y->ordinal);
    }
    if (indexed)
        check_labels(&a, max_rows);
    nx_sampled_free(&a);
    nx_sampled_free(&b);
}

static void run_windows(const char *dir, uint64_t max_rows, bool indexed)
{
    int64_t lo = rows[0].start, hi = rows[N_ROWS - 1].end + 5000000;
    static const uint32_t widths[] = {1, 2, 7, 100, 1920, 20000};
    int64_t fixed[][2] = {{lo, hi}, {lo - 100, hi + 100}, {lo - 1000, lo - 1}, {hi + 1, hi + 50},
                          {rows[N_ROWS / 2].start, rows[N_ROWS / 2].start}};
    size_t k = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
            compare(dir, fixed[i][0], fixed[i][1], widths[w], max_rows, indexed);
    for (int i = 0; i < 20; i++) {
        /* A window starting exactly at an event's end (kept) and one ns after it (not). */
        const gen_row *g = &rows[next_rand() % N_ROWS];
        compare(dir, g->end, g->end + 700, widths[k++ % 6], max_rows, indexed);
        compare(dir, g->end + 1, g->end + 700, widths[k++ % 6], max_rows, indexed);
        /* Two buckets whose boundary is exactly another event's start. */
        size_t a = next_rand() % (N_ROWS / 2), b = a + 1 + next_rand() % 200;
        if (rows[b].start > rows[a].start)
            compare(dir, rows[a].start, rows[a].start + 2 * (rows[b].start - rows[a].start) - 1, 2, max_rows, indexed);
    }
    for (int i = 0; i < 60; i++) {
        int64_t a = lo + (int64_t)(next_rand() % (uint64_t)(hi - lo)), b = lo + (int64_t)(next_rand() % (uint64_t)(hi - lo));
        if (a > b) {
            int64_t t = a;
            a = b;
            b = t;
        }
        compare(dir, a, b, widths[k++ % 6], max_rows, indexed);
    }
}

static void test_index_equals_scan(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_table(dir, 0, -1);
    assert_true(has_index(dir));
    run_windows(dir, 0, true);
    nx_remove_tree(dir);
}

static void test_split_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_table(dir, 1000, -1);
    assert_true(has_index(dir));
    run_windows(dir, 1000, true);
    nx_remove_tree(dir);
}

static void test_event_ending_before_start(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_table(dir, 0, N_ROWS / 3);
    assert_false(has_index(dir));
    compare(dir, rows[0].start, rows[N_ROWS - 1].end, 640, 0, false);
    nx_remove_tree(dir);
}

int main(void)
{
    generate();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_equals_scan),
        cmocka_unit_test(test_split_files),
        cmocka_unit_test(test_event_ending_before_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
