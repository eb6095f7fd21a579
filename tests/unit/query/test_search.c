/*
 * test_search.c — query/search.h: next/previous match, total and position over
 * random Instruction and SemaphoreUpdate tables (events_fixture.h), every answer
 * checked against a brute-force reading of the same events: string fields in
 * plain and dictionary form (contains without case, exact), integer fields of
 * both widths, the track, a text q on an integer column, skipped tables (absent
 * column, boolean column, absent table), positions with and without an
 * ordinal, ties across tables, at 1 to 64 threads per table; framework rows of the storage contract (zero-duration
 * "[memory]" instants among slices) found by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>

#include "events_fixture.h"
#include "query/search.h"
#include "system_fixture.h"

#define N_EVENTS 700

static fx_event EV[N_EVENTS];
static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxsearch-XXXXXX");
    assert_non_null(mkdtemp(dir));
    fx_make(dir, EV, N_EVENTS, 260);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_rmrf(dir);
    return 0;
}

static const char *table_name(int t) { return t == FX_INSTRUCTION ? "Instruction" : "SemaphoreUpdate"; }

/* The rule of search.h, worked out for one event: 1 match, 0 no match, -1 the
 * table is skipped. */
static int brute_match(const fx_event *e, const char *field, const char *q, bool exact)
{
    const char *text = NULL;
    bool is_int = false, null = false;
    int64_t v = 0;
    if (strcmp(field, "track") == 0) {
        text = e->track;
    } else if (strcmp(field, "opcode") == 0) {
        if (e->table != FX_INSTRUCTION)
            return -1;
        text = e->opcode;
        null = !text;
    } else if (strcmp(field, "id") == 0) {
        if (e->table == FX_INSTRUCTION)
            is_int = true, v = e->id;
        else
            text = e->track;
    } else if (strcmp(field, "value") == 0) {
        if (e->table != FX_SEMAPHORE)
            return -1;
        is_int = true, v = e->id;
    } else {
        return -1;
    }
    if (null)
        return 0;
    if (is_int) {
        char *endp;
        long long qv = strtoll(q, &endp, 10);
        return *q && !*endp && qv == v;
    }
    if (exact)
        return strcmp(text, q) == 0;
    size_t tl = strlen(text), ql = strlen(q);
    for (size_t i = 0; i + ql <= tl; i++) {
        size_t k = 0;
        while (k < ql && tolower((unsigned char)text[i + k]) == tolower((unsigned char)q[k]))
            k++;
        if (k == ql)
            return 1;
    }
    return 0;
}

typedef struct bkey {
    int64_t start;
    size_t table;
    int64_t ord;
    const fx_event *e;
} bkey;

static int bcmp(const bkey *a, const bkey *b)
{
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->table != b->table)
        return a->table < b->table ? -1 : 1;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* Runs one search and checks it against the brute force; returns whether it found one. */
static bool check(const int *tabs, size_t n_tabs, const char *field, const char *q, bool exact, bool prev,
                  int64_t from, bool with_ord, size_t from_table, int64_t from_ord, int threads)
{
    const char *names[2];
    for (size_t i = 0; i < n_tabs; i++)
        names[i] = table_name(tabs[i]);
    nx_search_options o = {.tables = names, .n_tables = n_tabs, .field = field, .q = q, .q_len = strlen(q),
                           .match = exact ? NX_SEARCH_EXACT : NX_SEARCH_CONTAINS,
                           .dir = prev ? NX_SEARCH_PREV : NX_SEARCH_NEXT, .from = from,
                           .have_from_ord = with_ord, .from_table = from_table, .from_ord = from_ord,
                           .threads = threads};
    nx_search_result r;
    nx_error err = {0};
    assert_int_equal(nx_search_run(dir, &o, &r, &err), 0);

    bkey pos = {from, with_ord ? from_table + 1 : 0, with_ord ? from_ord : -1, NULL};
    uint64_t total = 0, before = 0;
    bool skipped[2] = {true, true}, found = false;
    bkey best = {0};
    for (size_t i = 0; i < N_EVENTS; i++) {
        const fx_event *e = &EV[i];
        for (size_t ti = 0; ti < n_tabs; ti++) {
            if (tabs[ti] != e->table)
                continue;
            int m = brute_match(e, field, q, exact);
            if (m >= 0)
                skipped[ti] = false;
            if (m <= 0 || !e->event)
                continue;
            bkey k = {e->start, ti + 1, e->ordinal, e};
            int c = bcmp(&k, &pos);
            total++;
            before += prev ? c < 0 : c <= 0;
            if (prev ? c < 0 && (!found || bcmp(&k, &best) > 0) : c > 0 && (!found || bcmp(&k, &best) < 0)) {
                best = k;
                found = true;
            }
        }
    }
    assert_int_equal(r.total, total);
    size_t n_skipped = 0;
    for (size_t ti = 0; ti < n_tabs; ti++)
        if (skipped[ti]) {
            assert_true(n_skipped < r.n_skipped);
            assert_int_equal(r.skipped[n_skipped++], ti);
        }
    assert_int_equal(r.n_skipped, n_skipped);
    assert_int_equal(r.found, found);
    if (found) {
        assert_int_equal(r.table, best.table - 1);
        assert_int_equal(r.ordinal, best.ord);
        assert_int_equal(r.start, best.start);
        assert_int_equal(r.end, best.e->end);
        assert_string_equal(r.track, best.e->track);
        assert_int_equal(r.position, prev ? before : before + 1);
        if (strcmp(field, "track") == 0 || (strcmp(field, "id") == 0 && best.e->table == FX_SEMAPHORE)) {
            assert_string_equal(r.label.s, best.e->track);
        } else if (strcmp(field, "opcode") == 0) {
            assert_false(r.label.null);
            assert_string_equal(r.label.s, best.e->opcode);
        } else {
            assert_true(r.label.is_int);
            assert_int_equal(r.label.i, best.e->id);
        }
    }
    nx_search_free(&r);
    return found;
}

static void contains_rule(void **state)
{
    (void)state;
    assert_true(nx_search_contains("TensorTensor", 12, "ortens", 6));
    assert_true(nx_search_contains("abc", 3, "", 0));
    assert_false(nx_search_contains("ab", 2, "abc", 3));
    assert_false(nx_search_contains("\xc3\xa9t\xc3\xa9", 5, "\xc3\x89", 2)); /* only ASCII folds */
    assert_true(nx_search_contains("xx\xc3\xa9", 4, "X\xc3\xa9", 3));
}

/* Fields with the texts searched in them (NULL-ended). */
static const struct {
    const char *field;
    const char *q[6];
} SEARCHES[] = {
    {"opcode", {"matmul", "MATMUL", "Tensor", "t", "x", NULL}},
    {"track", {"pe", "QSYNC", "S[1]", "s", "zz", NULL}},
    {"id", {"S[2]", "42", "7", "-1", "y", NULL}},
    {"value", {"-1", "0", "3", "x", NULL}},
    {"double_set_or_clear", {"true", NULL}},
    {"nope", {"a", NULL}},
};

/* Threads sharing each table: one, a few (spans across the two Instruction
 * files and inside them), more spans than the fork-join allows (clamped). */
static const int THREADS[5] = {1, 2, 3, 7, 100};

static void random_searches(void **state)
{
    (void)state;
    static const int orders[3][2] = {{FX_INSTRUCTION, FX_SEMAPHORE}, {FX_SEMAPHORE, FX_INSTRUCTION}, {FX_INSTRUCTION}};
    int found = 0;
    for (int trial = 0; trial < 400; trial++) {
        const int *tabs = orders[trial % 3];
        size_t n_tabs = trial % 3 == 2 ? 1 : 2;
        size_t f = next_rand() % 10;
        f = f < 6 ? f : f % 4;                   /* the searchable fields more often */
        size_t n_q = 0;
        while (SEARCHES[f].q[n_q])
            n_q++;
        const char *field = SEARCHES[f].field, *q = SEARCHES[f].q[next_rand() % n_q];
        const fx_event *at = &EV[next_rand() % N_EVENTS];
        int64_t from = next_rand() % 5 == 0 ? (int64_t)(next_rand() % 3000) : at->start;
        bool with_ord = next_rand() % 2;
        size_t ft = 0;
        for (size_t i = 0; i < n_tabs; i++)
            if (tabs[i] == at->table)
                ft = i;
        found += check(tabs, n_tabs, field, q, next_rand() % 3 == 0, next_rand() % 2, from, with_ord, ft,
                       with_ord ? at->ordinal : 0, THREADS[trial % 5]);
    }
    print_message("%d of 400 searches found an event\n", found);
    assert_true(found > 60 && found < 340);
}

static void walks_every_match(void **state)
{
    (void)state;
    /* Next from each match in turn visits every match once, positions 1..total. */
    const char *names[] = {"SemaphoreUpdate", "Instruction"};
    nx_search_options o = {.tables = names, .n_tables = 2, .field = "track", .q = "s", .q_len = 1,
                           .from = INT64_MIN, .threads = 3};
    nx_search_result r;
    nx_error err = {0};
    uint64_t k = 0, total = 0;
    for (;;) {
        assert_int_equal(nx_search_run(dir, &o, &r, &err), 0);
        total = r.total;
        if (!r.found)
            break;
        assert_int_equal(r.position, ++k);
        o.from = r.start;
        o.have_from_ord = true;
        o.from_table = r.table;
        o.from_ord = r.ordinal;
        nx_search_free(&r);
    }
    nx_search_free(&r);
    assert_true(total > 50);
    assert_int_equal(k, total);
}

static void absent_table_is_skipped(void **state)
{
    (void)state;
    const char *names[] = {"CcOp", "Instruction"};
    nx_search_options o = {.tables = names, .n_tables = 2, .field = "opcode", .q = "MATMUL", .q_len = 6,
                           .match = NX_SEARCH_EXACT, .from = INT64_MIN};
    nx_search_result r;
    nx_error err = {0};
    assert_int_equal(nx_search_run(dir, &o, &r, &err), 0);
    assert_int_equal(r.n_skipped, 1);
    assert_int_equal(r.skipped[0], 0);
    assert_true(r.found && r.total > 0 && r.position == 1);
    nx_search_free(&r);
    const char *bad[] = {"Metadata"};
    o.tables = bad;
    o.n_tables = 1;
    assert_int_equal(nx_search_run(dir, &o, &r, &err), 0); /* absent, so skipped */
    assert_int_equal(r.n_skipped, 1);
}

/* Kineto's "[memory]" instants are zero-duration SystemProfileEvents rows; a search
 * for the text finds each of them (and the names holding it in another case), in time
 * order, and not the slices around them. */
static void memory_instants_are_found(void **state)
{
    (void)state;
    static const char MEM[] = "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"args\":{\"Total Allocated\":1}}";
    const sys_event ev[] = {
        {100, 900, "framework", NX_ABSENT, NULL, 469, 520, "ProfilerStep#2", "{}"},
        {150, 150, "framework", NX_ABSENT, NULL, 469, 520, "[memory]", MEM},
        {200, 400, "framework", NX_ABSENT, NULL, 469, 520, "aten::mm", "{}"},
        {300, 300, "framework", NX_ABSENT, NULL, 469, 520, "[memory]", MEM},
        {300, 300, "framework", NX_ABSENT, NULL, 469, 521, "[Memory] pool", "{\"ph\":\"i\"}"},
        {700, 700, "framework", NX_ABSENT, NULL, 469, 520, "[memory]", MEM},
    };
    const size_t n = sizeof ev / sizeof ev[0];
    char d[96];
    snprintf(d, sizeof d, "%s/memory", dir);
    write_events(d, ev, n, 0);
    const char *names[] = {"SystemProfileEvents"};
    nx_search_options o = {.tables = names, .n_tables = 1, .field = "name", .q = "[memory]", .q_len = 8,
                           .from = INT64_MIN};
    nx_search_result r;
    nx_error err = {0};
    int64_t want[] = {150, 300, 300, 700};   /* the rows whose name contains "[memory]" without case */
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(nx_search_run(d, &o, &r, &err), 0);
        assert_true(r.found);
        assert_int_equal(r.total, 4);
        assert_int_equal(r.position, k + 1);
        assert_int_equal(r.start, want[k]);
        assert_int_equal(r.end, want[k]);
        o.from = r.start;
        o.have_from_ord = true;
        o.from_table = r.table;
        o.from_ord = r.ordinal;
        nx_search_free(&r);
    }
    o.match = NX_SEARCH_EXACT;
    o.have_from_ord = false;
    o.from = INT64_MIN;
    assert_int_equal(nx_search_run(d, &o, &r, &err), 0);
    assert_int_equal(r.total, 3);
    nx_search_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contains_rule),
        cmocka_unit_test(random_searches),
        cmocka_unit_test(walks_every_match),
        cmocka_unit_test(absent_table_is_skipped),
        cmocka_unit_test(memory_instants_are_found),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
