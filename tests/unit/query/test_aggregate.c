/*
 * test_aggregate.c — query/aggregate.h: count, time inside the range and self
 * time inside the range per group, order, top and other, over random tables
 * checked against a brute-force reading of the same events:
 *   - Instruction and SemaphoreUpdate (events_fixture.h: split files, plain and
 *     dictionary strings, null end times, point events) for random ranges,
 *     track selections and keys (a string column, the track, an integer
 *     column, a nullable column), at 1 to 64 threads;
 *   - SystemProfileEvents with events that nest and that overlap without
 *     nesting, self time clipped to the range worked out from the enclosure
 *     rule of profile/nesting.h by brute force (every pair of events);
 *   - the keys refused, a table the profile lacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "events_fixture.h"
#include "profile/profile_table.h"
#include "query/aggregate.h"
#include "system_fixture.h"

#define N_EVENTS 600
#define N_SYS 300

static fx_event EV[N_EVENTS];
static sys_event SYS[N_SYS];
static char dir[64], sys_dir[96];
static char sys_names[N_SYS][8];

static int64_t clip(int64_t s, int64_t e, int64_t lo, int64_t hi)
{
    s = s > lo ? s : lo;
    e = e < hi ? e : hi;
    return e > s ? e - s : 0;
}

static int cmp_sys(const void *a, const void *b)
{
    const sys_event *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxagg-XXXXXX");
    assert_non_null(mkdtemp(dir));
    fx_make(dir, EV, N_EVENTS, 200);
    /* Three threads; intervals of varied length, so events nest, share starts,
     * have equal intervals and overlap without nesting. */
    for (size_t i = 0; i < N_SYS; i++) {
        int64_t s = (int64_t)(next_rand() % 2000);
        int64_t d = next_rand() % 4 == 0 ? (int64_t)(next_rand() % 400) : (int64_t)(next_rand() % 30);
        snprintf(sys_names[i], sizeof sys_names[i], "op%d", (int)(next_rand() % 5));
        SYS[i] = (sys_event){s, s + d, "framework", NX_ABSENT, "i-1", 1, (int64_t)(next_rand() % 3), sys_names[i], "{}"};
        if (next_rand() % 10 == 0 && i > 0)
            SYS[i] = SYS[i - 1]; /* an equal interval on the same thread */
    }
    qsort(SYS, N_SYS, sizeof *SYS, cmp_sys);
    snprintf(sys_dir, sizeof sys_dir, "%s/sys", dir);
    write_events(sys_dir, SYS, N_SYS, 120);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_rmrf(dir);
    return 0;
}

/* A brute-force group. */
typedef struct bgroup {
    char key[32];
    bool null, is_int;
    int64_t i;
    uint64_t count;
    int64_t total, self;
} bgroup;

static bgroup *bfind(bgroup *g, size_t *n, bool null, bool is_int, int64_t i, const char *s)
{
    for (size_t k = 0; k < *n; k++)
        if (g[k].null == null && g[k].is_int == is_int && (null || (is_int ? g[k].i == i : strcmp(g[k].key, s) == 0)))
            return &g[k];
    g[*n] = (bgroup){.null = null, .is_int = is_int, .i = i};
    if (s)
        snprintf(g[*n].key, sizeof g[*n].key, "%s", s);
    return &g[(*n)++];
}

static int bcmp_group(const void *a, const void *b)
{
    const bgroup *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->null || y->null)
        return x->null - y->null;
    if (x->is_int)
        return x->i < y->i ? -1 : x->i > y->i;
    return strcmp(x->key, y->key);
}

/* Compares the result with the brute-force groups g[0..n) (sorted here). */
static void compare(const nx_aggregate *a, bgroup *g, size_t n, size_t top, uint64_t events, bool nested)
{
    qsort(g, n, sizeof *g, bcmp_group);
    assert_int_equal(a->events, events);
    assert_int_equal(a->n_groups, n);
    assert_int_equal(a->n_shown, n < top ? n : top);
    assert_int_equal(a->nested, nested);
    uint64_t oc = 0;
    int64_t ot = 0, os = 0;
    for (size_t k = 0; k < n; k++) {
        if (k >= a->n_shown) {
            oc += g[k].count;
            ot += g[k].total;
            os += g[k].self;
            continue;
        }
        const nx_aggregate_group *x = &a->groups[k];
        assert_int_equal(x->null, g[k].null);
        assert_int_equal(x->is_int, g[k].is_int);
        if (!x->null && x->is_int)
            assert_int_equal(x->i, g[k].i);
        if (!x->null && !x->is_int) {
            assert_int_equal(x->len, strlen(g[k].key));
            assert_memory_equal(x->s, g[k].key, x->len);
        }
        assert_int_equal(x->count, g[k].count);
        assert_int_equal(x->total_ns, g[k].total);
        if (nested)
            assert_int_equal(x->self_ns, g[k].self);
    }
    assert_int_equal(a->other_count, oc);
    assert_int_equal(a->other_total_ns, ot);
    if (nested)
        assert_int_equal(a->other_self_ns, os);
}

static const char *const TRACKS[] = {"pe", "act", "pool", "dve", "qSync", "S[0]", "S[1]", "S[2]", "nope"};

/* Threads sharing the table: one, a few (spans across the two Instruction
 * files and inside them), more spans than the fork-join allows (clamped). */
static const int THREADS[5] = {1, 2, 3, 7, 100};

static void device_tables(void **state)
{
    (void)state;
    static const char *const BYS[] = {NULL, "track", "id", "engine", "timeline_track", "opcode"};
    for (int trial = 0; trial < 300; trial++) {
        int table = trial % 3 == 0 ? FX_SEMAPHORE : FX_INSTRUCTION;
        int64_t s = 900 + (int64_t)(next_rand() % 1400), e = s + (int64_t)(next_rand() % 600);
        const char *by = table == FX_SEMAPHORE ? (trial % 2 ? "track" : "value") : BYS[next_rand() % 6];
        const char *sel[4];
        size_t n_sel = next_rand() % 2 ? 0 : 1 + next_rand() % 4;
        for (size_t k = 0; k < n_sel; k++)
            sel[k] = TRACKS[next_rand() % 9];
        size_t top = 1 + next_rand() % 6;
        nx_aggregate_options o = {.table = table == FX_SEMAPHORE ? "SemaphoreUpdate" : "Instruction", .start = s,
                                  .end = e, .tracks = sel, .n_tracks = n_sel, .by = by, .top = top,
                                  .threads = THREADS[trial % 5]};
        nx_aggregate a;
        nx_error err = {0};
        assert_int_equal(nx_aggregate_run(dir, &o, &a, &err), 0);
        assert_string_equal(a.by, by ? by : table == FX_SEMAPHORE ? "track" : "opcode");

        bgroup g[N_EVENTS];
        size_t n = 0;
        uint64_t events = 0;
        for (size_t i = 0; i < N_EVENTS; i++) {
            const fx_event *x = &EV[i];
            if (x->table != table || !x->event || x->end < s || x->start > e)
                continue;
            bool chosen = n_sel == 0;
            for (size_t k = 0; k < n_sel; k++)
                chosen |= strcmp(sel[k], x->track) == 0;
            if (!chosen)
                continue;
            const char *k = by ? by : "opcode";
            bgroup *b;
            if (table == FX_SEMAPHORE)
                b = strcmp(k, "track") == 0 ? bfind(g, &n, false, false, 0, x->track) : bfind(g, &n, false, true, x->id, NULL);
            else if (strcmp(k, "track") == 0)
                b = bfind(g, &n, false, false, 0, x->track);
            else if (strcmp(k, "id") == 0)
                b = bfind(g, &n, false, true, x->id, NULL);
            else if (strcmp(k, "engine") == 0)
                b = bfind(g, &n, false, false, 0, x->engine);
            else if (strcmp(k, "timeline_track") == 0)
                b = bfind(g, &n, !x->ttrack, false, 0, x->ttrack);
            else
                b = bfind(g, &n, !x->opcode, false, 0, x->opcode);
            b->count++;
            b->total += clip(x->start, x->end, s, e);
            events++;
        }
        compare(&a, g, n, top, events, false);
        nx_aggregate_free(&a);
    }
}

/* Whether SYS[a] encloses SYS[b] (nesting.h): same track, interval inside,
 * and of equal intervals the earlier row. */
static bool encloses(size_t a, size_t b)
{
    const sys_event *x = &SYS[a], *y = &SYS[b];
    if (a == b || x->tid != y->tid || x->start > y->start || y->end > x->end)
        return false;
    return x->start != y->start || x->end != y->end || a < b;
}

/* The parent of SYS[b]: its innermost encloser, the last in (start asc, end desc, row asc). */
static long parent_of(size_t b)
{
    long p = -1;
    for (size_t a = 0; a < N_SYS; a++) {
        if (!encloses(a, b))
            continue;
        const sys_event *x = &SYS[a];
        if (p < 0)
            p = (long)a;
        else {
            const sys_event *y = &SYS[p];
            bool later = x->start != y->start ? x->start > y->start : x->end != y->end ? x->end < y->end : a > (size_t)p;
            if (later)
                p = (long)a;
        }
    }
    return p;
}

static void nested_self_time(void **state)
{
    (void)state;
    static long parent[N_SYS];
    size_t children = 0, differs = 0;
    for (size_t i = 0; i < N_SYS; i++)
        children += (parent[i] = parent_of(i)) >= 0;
    assert_true(children > N_SYS / 4);
    for (int trial = 0; trial < 120; trial++) {
        int64_t s = trial == 0 ? INT64_MIN : (int64_t)(next_rand() % 2200) - 100;
        int64_t e = trial == 0 ? INT64_MAX : s + (int64_t)(next_rand() % 900);
        const char *tracks[1] = {"i-1/1/1"};
        bool by_track = trial % 4 == 1;
        nx_aggregate_options o = {.table = "SystemProfileEvents", .start = s, .end = e, .tracks = tracks,
                                  .n_tracks = trial % 3 == 2, .by = by_track ? "track" : NULL, .top = 3};
        nx_aggregate a;
        nx_error err = {0};
        assert_int_equal(nx_aggregate_run(sys_dir, &o, &a, &err), 0);
        bgroup g[N_SYS];
        size_t n = 0;
        uint64_t events = 0;
        for (size_t i = 0; i < N_SYS; i++) {
            const sys_event *x = &SYS[i];
            if (x->end < s || x->start > e || (o.n_tracks && x->tid != 1))
                continue;
            char track[32];
            snprintf(track, sizeof track, "i-1/1/%d", (int)x->tid);
            bgroup *b = bfind(g, &n, false, false, 0, by_track ? track : x->name);
            int64_t self = clip(x->start, x->end, s, e);
            for (size_t c = 0; c < N_SYS; c++)
                if (parent[c] == (long)i)
                    self -= clip(SYS[c].start, SYS[c].end, s, e);
            b->count++;
            b->total += clip(x->start, x->end, s, e);
            b->self += self > 0 ? self : 0;
            events++;
        }
        compare(&a, g, n, 3, events, true);
        for (size_t k = 0; k < a.n_shown; k++)
            differs += a.groups[k].self_ns != a.groups[k].total_ns;
        nx_aggregate_free(&a);
    }
    assert_true(differs > 50); /* self time is not the clipped duration */
}

static void refused_keys_and_absent_table(void **state)
{
    (void)state;
    nx_aggregate a;
    nx_error err = {0};
    nx_aggregate_options o = {.table = "Instruction", .start = 0, .end = 5000, .by = "nope", .top = 5};
    assert_int_equal(nx_aggregate_run(dir, &o, &a, &err), NX_AGGREGATE_BAD_BY);
    assert_non_null(strstr(err.msg, "nope"));
    o.table = "SemaphoreUpdate";
    o.by = "double_set_or_clear";
    assert_int_equal(nx_aggregate_run(dir, &o, &a, &err), NX_AGGREGATE_BAD_BY);
    o.table = "CcOp";
    o.by = NULL;
    assert_int_equal(nx_aggregate_run(dir, &o, &a, &err), NX_PROFILE_TABLE_ABSENT);
    /* A schema field the files lack: one null key. */
    o.table = "Instruction";
    o.by = "hlo_name";
    assert_int_equal(nx_aggregate_run(dir, &o, &a, &err), 0);
    assert_int_equal(a.n_groups, 1);
    assert_true(a.groups[0].null);
    assert_int_equal(a.groups[0].count, a.events);
    assert_false(a.nested);
    nx_aggregate_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_tables),
        cmocka_unit_test(nested_self_time),
        cmocka_unit_test(refused_keys_and_absent_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
