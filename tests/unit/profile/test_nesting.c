/*
 * test_nesting.c — depth and self time (profile/nesting.h) and the SystemProfileEvents
 * track rule (query/engine/window.h).
 *
 * The streaming pass is checked on hand-made call stacks (ties of every kind: equal
 * starts in either row order, equal intervals, zero durations, events that overlap
 * without nesting, children longer in sum than their parent) and on random tracks
 * against a brute-force reading of the rule (every pair of events compared). Then a
 * SystemProfileEvents table is written through process/row.h, whole and split: the
 * values read from its timeline index equal those computed from the table
 * (NXPROF_NO_TIMELINE_INDEX=1) and the brute force per track, and an index of
 * another version (3, before depth and self time) is refused with a reason and the
 * values computed instead.
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

#include "profile/nesting.h"
#include "query/engine/nesting_values.h"
#include "profile/timeline_index.h"
#include "query/engine/window.h"
#include "system_fixture.h"
#include "test_rand.h"

typedef struct ev {
    uint32_t track;
    int64_t start, end;
} ev;

typedef struct got {
    bool set;
    uint32_t depth;
    int64_t self;
} got;

static int collect(void *ctx, uint64_t row, uint32_t depth, int64_t self_ns)
{
    got *g = ctx;
    assert_false(g[row].set);   /* each event once */
    g[row] = (got){true, depth, self_ns};
    return 0;
}

/* The rule read literally: O(n^2) over the events of each track. */
static void brute(const ev *e, size_t n, got *out)
{
    for (size_t b = 0; b < n; b++) {
        uint32_t depth = 0;
        for (size_t a = 0; a < n; a++) {
            if (a == b || e[a].track != e[b].track)
                continue;
            bool equal = e[a].start == e[b].start && e[a].end == e[b].end;
            if (e[a].start <= e[b].start && e[b].end <= e[a].end && (!equal || a < b))
                depth++;
        }
        out[b] = (got){true, depth, e[b].end - e[b].start};
    }
    /* The parent: the last encloser in the order start ascending, end descending, row ascending. */
    for (size_t b = 0; b < n; b++) {
        size_t parent = SIZE_MAX;
        for (size_t a = 0; a < n; a++) {
            if (a == b || e[a].track != e[b].track)
                continue;
            bool equal = e[a].start == e[b].start && e[a].end == e[b].end;
            if (!(e[a].start <= e[b].start && e[b].end <= e[a].end && (!equal || a < b)))
                continue;
            if (parent == SIZE_MAX)
                parent = a;
            else {
                const ev *p = &e[parent], *q = &e[a];
                bool later = q->start != p->start ? q->start > p->start : q->end != p->end ? q->end < p->end : a > parent;
                if (later)
                    parent = a;
            }
        }
        if (parent != SIZE_MAX)
            out[parent].self -= e[b].end - e[b].start;
    }
    for (size_t b = 0; b < n; b++)
        if (out[b].self < 0)
            out[b].self = 0;
}

static void run_pass(const ev *e, size_t n, got *out)
{
    memset(out, 0, n * sizeof *out);
    nx_nesting *ns = nx_nesting_new(collect, out);
    assert_non_null(ns);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(nx_nesting_add(ns, e[i].track, e[i].start, e[i].end, i), 0);
    assert_int_equal(nx_nesting_finish(ns), 0);
    nx_nesting_free(ns);
}

static void check_case(const ev *e, size_t n, const uint32_t *depth, const int64_t *self)
{
    got *g = calloc(n, sizeof *g), *b = calloc(n, sizeof *b);
    assert_non_null(g);
    assert_non_null(b);
    run_pass(e, n, g);
    brute(e, n, b);
    for (size_t i = 0; i < n; i++) {
        assert_true(g[i].set);
        assert_int_equal(g[i].depth, depth[i]);
        assert_int_equal(g[i].self, self[i]);
        assert_int_equal(b[i].depth, depth[i]);   /* the brute force reads the rule the same way */
        assert_int_equal(b[i].self, self[i]);
    }
    free(g);
    free(b);
}

static void test_call_stacks(void **state)
{
    (void)state;
    /* A proper stack: main [0,100] > a [10,40] > b [10,20], c [20,30] (touching b); d [50,60]. */
    static const ev stack[] = {{0, 0, 100}, {0, 10, 40}, {0, 10, 20}, {0, 20, 30}, {0, 50, 60}};
    check_case(stack, 5, (uint32_t[]){0, 1, 2, 2, 1}, (int64_t[]){100 - 30 - 10, 30 - 20, 10, 10, 10});
    /* Equal starts with the child first in row order: the longer still encloses it. */
    static const ev rev[] = {{0, 0, 5}, {0, 0, 10}, {0, 0, 7}};
    check_case(rev, 3, (uint32_t[]){2, 0, 1}, (int64_t[]){5, 3, 2});
    /* Equal intervals nest in row order, and zero-length events nest too. */
    static const ev same[] = {{0, 5, 9}, {0, 5, 9}, {0, 5, 9}, {0, 9, 9}, {0, 9, 9}};
    check_case(same, 5, (uint32_t[]){0, 1, 2, 3, 4}, (int64_t[]){0, 0, 4, 0, 0});
    /* Overlap without nesting: A [0,10], B [5,15]; C [6,8] inside both (depth 2, parent B). */
    static const ev overlap[] = {{0, 0, 10}, {0, 5, 15}, {0, 6, 8}, {0, 11, 12}};
    check_case(overlap, 4, (uint32_t[]){0, 0, 2, 1}, (int64_t[]){10, 10 - 2 - 1, 2, 1});
    /* Children that overlap each other count whole; self never goes below 0. */
    static const ev crowd[] = {{0, 0, 10}, {0, 1, 9}, {0, 2, 9}};
    check_case(crowd, 3, (uint32_t[]){0, 1, 2}, (int64_t[]){2, 1, 7});
    static const ev over[] = {{0, 0, 10}, {0, 0, 8}, {0, 2, 10}};
    check_case(over, 3, (uint32_t[]){0, 1, 1}, (int64_t[]){0, 8, 8});
    /* Tracks are independent: the same intervals on two tracks. */
    static const ev two[] = {{0, 0, 10}, {1, 0, 10}, {0, 2, 4}, {1, 3, 5}};
    check_case(two, 4, (uint32_t[]){0, 0, 1, 1}, (int64_t[]){8, 8, 2, 2});
}

static void test_out_of_order(void **state)
{
    (void)state;
    got g[4] = {{0}};
    nx_nesting *ns = nx_nesting_new(collect, g);
    assert_int_equal(nx_nesting_add(ns, 0, 10, 20, 0), 0);
    assert_int_equal(nx_nesting_add(ns, 1, 5, 6, 1), 0);    /* another track may start earlier */
    assert_int_equal(nx_nesting_add(ns, 0, 9, 20, 2), 1);   /* its own may not */
    assert_int_equal(nx_nesting_add(ns, 0, 30, 40, 3), 1);  /* nothing more is taken */
    nx_nesting_free(ns);
    ns = nx_nesting_new(collect, g);
    assert_int_equal(nx_nesting_add(ns, 0, 10, 9, 0), 1);   /* ends before it starts */
    nx_nesting_free(ns);
}

/* Random tracks: stacks built by a random walk, with equal starts, equal
 * intervals and overlaps that do not nest mixed in. */
static size_t random_events(ev *e, size_t cap, uint32_t n_tracks)
{
    size_t n = 0;
    int64_t t[4] = {1000, 1000, 1000, 1000};
    while (n < cap) {
        uint32_t tr = (uint32_t)(next_rand() % n_tracks);
        if (next_rand() % 3)
            t[tr] += (int64_t)(next_rand() % 5);
        int64_t dur = next_rand() % 7 == 0 ? 0 : (int64_t)(next_rand() % (next_rand() % 4 ? 20 : 400));
        e[n++] = (ev){tr, t[tr], t[tr] + dur};
        if (next_rand() % 9 == 0 && n < cap)
            e[n++] = (ev){tr, t[tr], t[tr] + dur};   /* an equal interval */
    }
    return n;
}

static void test_random_against_brute_force(void **state)
{
    (void)state;
    enum { N = 1500 };
    ev *e = malloc(N * sizeof *e);
    got *g = calloc(N, sizeof *g), *b = calloc(N, sizeof *b);
    assert_non_null(e);
    for (int round = 0; round < 6; round++) {
        size_t n = random_events(e, N, 1 + (uint32_t)round % 4);
        run_pass(e, n, g);
        brute(e, n, b);
        for (size_t i = 0; i < n; i++) {
            assert_true(g[i].set);
            assert_int_equal(g[i].depth, b[i].depth);
            assert_int_equal(g[i].self, b[i].self);
        }
    }
    free(e);
    free(g);
    free(b);
}

static void test_system_track_rule(void **state)
{
    (void)state;
    nx_track_source src = nx_track_sources(NX_TRACK_SYSTEM);
    assert_int_equal(src.n, 6);
    assert_string_equal(src.col[0], "trace_event_source");
    assert_string_equal(src.col[5], "worker_gid");
    assert_true(src.is_int[5] && !src.required[5]);   /* older profiles without it still read */
    char buf[NX_TRACK_BUF];
    size_t len;
    nx_track_values v = {.s = {"framework", NULL, "i-0ab"}, .len = {9, 0, 5}, .i = {0, 3, 0, 4121, -7},
                         .ok = {true, true, true, true, true}};
    const char *s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_int_equal(len, strlen("i-0ab/4121/-7"));
    assert_memory_equal(s, "i-0ab/4121/-7", len);   /* framework: the thread, even with an nc_idx */
    v.s[0] = "neuron_rt";
    v.len[0] = 9;
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(s, "nc3", 3);
    v.ok[1] = false;   /* no nc_idx: the thread */
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_memory_equal(s, "i-0ab/4121/-7", len);
    v.ok[2] = v.ok[3] = false;   /* null parts are empty */
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(s, "//-7", 4);
    v.ok[0] = false;   /* no source: not framework, no nc: the thread */
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_memory_equal(s, "//-7", len);
    /* A long instance id is cut, and the name stays within the buffer. */
    char inst[600];
    memset(inst, 'x', sizeof inst);
    v = (nx_track_values){.s = {"framework", NULL, inst}, .len = {9, 0, sizeof inst},
                          .i = {0, 0, 0, INT64_MIN, INT64_MIN}, .ok = {true, false, true, true, true}};
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_true(len < NX_TRACK_BUF);
    assert_int_equal(len, NX_TRACK_INSTANCE_MAX + 2 * (1 + 20));
    /* A worker_gid (a framework trace's rank) starts the thread's name, the longest one included. */
    v.ok[5] = true;
    v.i[5] = INT64_MIN;
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_true(len <= NX_TRACK_BUF);
    assert_int_equal(len, 4 + 20 + 1 + NX_TRACK_INSTANCE_MAX + 2 * (1 + 20));
    assert_memory_equal(s, "rank-9223372036854775808/xxx", 28);
    v = (nx_track_values){.s = {"framework", NULL, "i-0ab"}, .len = {9, 0, 5}, .i = {0, 0, 0, 4121, -7, 3},
                          .ok = {true, false, true, true, true, true}};
    s = nx_track_name(NX_TRACK_SYSTEM, &v, buf, &len);
    assert_int_equal(len, 19);
    assert_memory_equal(s, "rank3/i-0ab/4121/-7", 19);
}

/* --------------------------------------------------- through the index -- */

#define N_ROWS 5000

static sys_event rows[N_ROWS];
static ev tracked[N_ROWS];

/* Rows in start order over five tracks: three framework threads (one of them
 * carrying an nc_idx, which framework events ignore) and two NeuronCores. */
static void generate(void)
{
    ev *e = tracked;
    size_t n = random_events(e, N_ROWS, 4);
    assert_int_equal(n, N_ROWS);
    /* Merge the per-track streams into one start order, ties in generation order. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && e[j - 1].start > e[j].start; j--) {
            ev t = e[j];
            e[j] = e[j - 1];
            e[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        sys_event *r = &rows[i];
        *r = (sys_event){.start = e[i].start, .end = e[i].end, .nc = NX_ABSENT, .instance = "i-9", .pid = 7,
                         .tid = 7, .name = i % 3 ? "aten::mm" : "aten::add"};
        switch (e[i].track) {
        case 0: r->source = "framework"; break;
        case 1: r->source = "framework"; r->tid = 8; r->nc = 1; break;
        case 2: r->source = "neuron_rt"; r->nc = 0; break;
        default: r->source = "neuron_hw"; r->nc = 1; r->tid = 9; break;
        }
    }
}

/* Compares the values of every row from nx_nesting_open with the brute force. */
static void check_values(const char *dir, uint64_t max_rows, bool want_index)
{
    got *b = calloc(N_ROWS, sizeof *b);
    assert_non_null(b);
    brute(tracked, N_ROWS, b);
    nx_nesting_values *v;
    char note[600];
    nx_error err = {0};
    assert_int_equal(nx_nesting_open(dir, "SystemProfileEvents", &v, note, sizeof note, &err), 0);
    assert_int_equal(note[0] == '\0', want_index);
    for (size_t i = 0; i < N_ROWS; i++) {
        int64_t ord = max_rows ? nx_row_ordinal(i / max_rows, (int64_t)(i % max_rows)) : (int64_t)i;
        uint32_t depth;
        int64_t self;
        assert_true(nx_nesting_get(v, ord, &depth, &self));
        assert_int_equal(depth, b[i].depth);
        assert_int_equal(self, b[i].self);
    }
    uint32_t depth;
    int64_t self;
    assert_false(nx_nesting_get(v, N_ROWS + 5, &depth, &self));
    assert_false(nx_nesting_get(v, nx_row_ordinal(99, 0), &depth, &self));
    nx_nesting_close(v);
    free(b);
}

static void both_ways(const char *dir, uint64_t max_rows)
{
    check_values(dir, max_rows, true);
    setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
    check_values(dir, max_rows, false);
    unsetenv("NXPROF_NO_TIMELINE_INDEX");
}

static void test_table_index_and_scan(void **state)
{
    (void)state;
    generate();
    char dir[] = "/tmp/nxnest-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_events(dir, rows, N_ROWS, 0);
    both_ways(dir, 0);
    fixture_rmrf(dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    write_events(dir, rows, N_ROWS, 1000);   /* five files */
    both_ways(dir, 1000);
    fixture_rmrf(dir);
}

static void test_old_index_refused(void **state)
{
    (void)state;
    generate();
    char dir[] = "/tmp/nxnest-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_events(dir, rows, N_ROWS, 0);
    char path[600];
    assert_int_equal(nx_tlx_path(dir, "SystemProfileEvents", path, sizeof path), 0);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    unsigned char v3[4] = {3, 0, 0, 0};
    assert_int_equal(fseek(f, 8, SEEK_SET), 0);
    assert_int_equal(fwrite(v3, 1, 4, f), 4);
    assert_int_equal(fclose(f), 0);
    nx_tlx *x;
    nx_error why = {0};
    assert_int_equal(nx_tlx_open(dir, "SystemProfileEvents", &x, &why), 1);
    assert_non_null(strstr(why.msg, "version 3"));
    assert_non_null(strstr(why.msg, "nxprof index"));
    nx_nesting_values *nv;
    char note[600];
    nx_error err = {0};
    assert_int_equal(nx_nesting_open(dir, "SystemProfileEvents", &nv, note, sizeof note, &err), 0);
    assert_non_null(strstr(note, "version 3"));
    nx_nesting_close(nv);
    check_values(dir, 0, false);   /* computed, and right */
    /* Another timeline table has no depth or self time. */
    assert_int_equal(nx_nesting_open(dir, "Instruction", &nv, NULL, 0, &err), -1);
    assert_non_null(strstr(err.msg, "nest"));
    fixture_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_stacks),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_system_track_rule),
        cmocka_unit_test(test_table_index_and_scan),
        cmocka_unit_test(test_old_index_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
