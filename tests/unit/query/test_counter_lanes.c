/*
 * test_counter_lanes.c — query/counter_lanes.h over a hand-made SystemProfileEvents
 * table with the storage contract's framework rows: "[memory]" instants of a GPU, the
 * CPU and a second rank's GPU, counters ("ph":"C") of two processes with numeric and
 * non-numeric args, and rows that must be passed over (a runtime "[memory]" row, a
 * slice and an instant named like a counter, rows after the window).
 *
 * The rows are listed below as structured data; the test writes their
 * extra_attributes_json text from it, and computes the expected lanes from the same
 * list by a brute-force pass of its own: lanes in order of first appearance (memory
 * lanes first), per series and bucket the largest value (ties: the earlier row),
 * before = the latest sample before the window (ties: the later row).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/engine/budget.h"
#include "query/counter_lanes.h"
#include "system_fixture.h"
#include "table_fixture.h"

#define NOVAL (-99)
#define MAXM 4

typedef struct trow {
    int64_t ts;
    const char *name, *source;
    const char *worker, *pid;      /* key text, NULL: null */
    char ph;                       /* 0: a slice (no "ph") */
    int dev_type, dev_id;          /* "[memory]" args; NOVAL: absent */
    const char *member[MAXM];      /* numeric args members */
    double value[MAXM];
    const char *text_member;       /* one more member, a string (never a sample) */
} trow;

#define FW "framework"
static const trow ROWS[] = {
    {2, "[memory]", FW, NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved", "Bytes"}, {100, 200, 100}, NULL},
    {3, "[memory]", FW, NULL, "469", 'i', 0, -1, {"Total Allocated", "Total Reserved"}, {5, 8}, NULL},
    {4, "[memory]", FW, NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {150, 200}, NULL},
    {4, "ctr", FW, NULL, "7", 'C', NOVAL, NOVAL, {"a", "b"}, {1, 2.5}, "label"},
    {5, "ctr", FW, NULL, "7", 0, NOVAL, NOVAL, {"a"}, {999}, NULL},            /* a slice: not a counter */
    {10, "[memory]", FW, NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {120, 300}, NULL},
    {11, "[memory]", "neuron_rt", NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {9e9, 9e9}, NULL},
    {12, "[memory]", FW, NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {130, 300}, NULL},
    {12, "ctr", FW, NULL, "8", 'C', NOVAL, NOVAL, {"a"}, {7}, NULL},
    {13, "[memory]", FW, "1", "470", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {40, 64}, NULL},
    {14, "[memory]", FW, NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {130, 310}, NULL},
    {15, "ctr", FW, NULL, "7", 'C', NOVAL, NOVAL, {"b", "c"}, {3, -1}, NULL},
    {16, "[memory]", FW, NULL, "469", 'i', 0, -1, {"Total Allocated"}, {6}, NULL},  /* no Total Reserved */
    {17, "ctr", FW, NULL, "7", 'i', NOVAL, NOVAL, {"a"}, {555}, NULL},        /* an instant: not a counter */
    {20, "ctr", FW, NULL, "7", 'C', NOVAL, NOVAL, {"a", "b"}, {4, 3}, NULL},
    {22, "[memory]", FW, NULL, "469", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {90, 310}, NULL},
    {25, "[memory]", FW, "1", "470", 'i', 1, 0, {"Total Allocated", "Total Reserved"}, {50, 64}, NULL},
    {29, "ctr", FW, NULL, "7", 'C', NOVAL, NOVAL, {"a"}, {4}, NULL},
    {31, "[memory]", FW, NULL, "469", 'i', 1, 1, {"Total Allocated", "Total Reserved"}, {1, 2}, NULL}, /* after E */
    {33, "ctr", FW, NULL, "9", 'C', NOVAL, NOVAL, {"a"}, {1}, NULL},          /* after E */
};
#define NROWS (sizeof ROWS / sizeof ROWS[0])

#define S 10
#define E 29
#define W 4

static char dir[64];

/* The row's extra_attributes_json, as the storage contract writes it. */
static void extra_of(const trow *x, char *out, size_t cap)
{
    size_t n = 0;
    if (x->ph)
        n += (size_t)snprintf(out + n, cap - n, "{\"ph\":\"%c\",\"cat\":\"c\",\"args\":{", x->ph);
    else
        n += (size_t)snprintf(out + n, cap - n, "{\"cat\":\"c\",\"args\":{");
    const char *sep = "";
    if (x->dev_type != NOVAL) {
        n += (size_t)snprintf(out + n, cap - n, "\"Device Type\": %d, \"Device Id\": %d", x->dev_type, x->dev_id);
        sep = ",";
    }
    for (size_t m = 0; m < MAXM && x->member[m]; m++, sep = ",")
        n += (size_t)snprintf(out + n, cap - n, "%s\"%s\":%.17g", sep, x->member[m], x->value[m]);
    if (x->text_member)
        n += (size_t)snprintf(out + n, cap - n, "%s\"%s\":\"12\"", sep, x->text_member);
    snprintf(out + n, cap - n, "},\"pid\":\"%s\"}", x->pid ? x->pid : "");
}

static void write_rows(const char *d, const trow *rows, size_t n)
{
    static const fx_col COLS[] = {{"start_ts", NXPQ_INT64},           {"name", NXPQ_STRING},
                                  {"trace_event_source", NXPQ_STRING}, {"worker_gid", NXPQ_INT64},
                                  {"process_id", NXPQ_INT64},          {"extra_attributes_json", NXPQ_STRING}};
    const char **cells = calloc(n * 6, sizeof *cells);
    char(*ts)[24] = calloc(n, sizeof *ts);
    char(*extra)[2048] = calloc(n, sizeof *extra);
    assert_non_null(cells);
    assert_non_null(ts);
    assert_non_null(extra);
    for (size_t r = 0; r < n; r++) {
        snprintf(ts[r], sizeof ts[r], "%" PRId64, rows[r].ts);
        extra_of(&rows[r], extra[r], sizeof extra[r]);
        const char *row[6] = {ts[r], rows[r].name, rows[r].source, rows[r].worker, rows[r].pid, extra[r]};
        memcpy(&cells[r * 6], row, sizeof row);
    }
    mkdir(d, 0755);
    fx_write(d, "SystemProfileEvents.parquet", COLS, 6, cells, n);
    free(cells);
    free(ts);
    free(extra);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxcounters-XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_rows(dir, ROWS, NROWS);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

/* ---- the brute force ---- */

static bool is_memory(const trow *x) { return strcmp(x->name, "[memory]") == 0 && strcmp(x->source, FW) == 0; }
static bool is_counter(const trow *x) { return !is_memory(x) && x->ph == 'C' && strcmp(x->source, FW) == 0; }
static bool same_text(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static bool same_lane(const trow *a, const trow *b)
{
    if (is_memory(a) != is_memory(b) || !same_text(a->worker, b->worker))
        return false;
    if (is_memory(a))
        return a->dev_type == b->dev_type && a->dev_id == b->dev_id;
    return same_text(a->pid, b->pid) && strcmp(a->name, b->name) == 0;
}

static void expect_label(const trow *x, char *out, size_t cap)
{
    char rank[32] = "";
    if (x->worker)
        snprintf(rank, sizeof rank, "rank %s / ", x->worker);
    if (!is_memory(x))
        snprintf(out, cap, "%s%s (pid %s)", rank, x->name, x->pid);
    else if (x->dev_type == 1)
        snprintf(out, cap, "%sGPU %d memory", rank, x->dev_id);
    else
        snprintf(out, cap, "%sCPU memory", rank);
}

/* The value of series `member` in row x, if it has one. */
static bool member_value(const trow *x, const char *member, double *v)
{
    for (size_t m = 0; m < MAXM && x->member[m]; m++)
        if (strcmp(x->member[m], member) == 0) {
            *v = x->value[m];
            return true;
        }
    return false;
}

/* Checks series s, named `name`, whose samples are the args member `member`, of the
 * lane whose first row is ROWS[first]. */
static void check_series(const nx_counter_series *s, size_t first, const char *name, const char *member, int64_t s0,
                         int64_t e0, uint32_t w)
{
    assert_string_equal(s->name, name);
    int64_t bt[16];
    double bv[16];
    bool have[16] = {false}, has_before = false;
    int64_t before_t = 0;
    double before_v = 0, v;
    for (size_t q = first; q < NROWS; q++) {
        const trow *x = &ROWS[q];
        if (x->ts > e0 || !same_lane(x, &ROWS[first]) || (!is_memory(x) && !is_counter(x)) ||
            !member_value(x, member, &v))
            continue;
        if (x->ts < s0) {
            if (!has_before || x->ts >= before_t)
                before_t = x->ts, before_v = v, has_before = true;
            continue;
        }
        int b = (int)(((__int128)x->ts - s0) * w / ((__int128)e0 - s0 + 1));
        if (!have[b] || v > bv[b])
            bt[b] = x->ts, bv[b] = v, have[b] = true;
    }
    assert_int_equal(s->has_before, has_before);
    if (has_before) {
        assert_int_equal(s->before_t, before_t);
        assert_true(s->before_v == before_v);
    }
    size_t k = 0;
    for (uint32_t b = 0; b < w; b++) {
        if (!have[b])
            continue;
        assert_true(k < s->n);
        assert_int_equal(s->t[k], bt[b]);
        assert_true(s->v[k] == bv[b]);
        k++;
    }
    assert_int_equal(s->n, k);
}

/* The series names of the lane whose first row is ROWS[first], in order of first appearance. */
static size_t expect_series(size_t first, int64_t e0, const char **names)
{
    if (is_memory(&ROWS[first])) {
        names[0] = "allocated";
        names[1] = "reserved";
        return 2;
    }
    size_t n = 0;
    for (size_t q = first; q < NROWS; q++) {
        if (ROWS[q].ts > e0 || !is_counter(&ROWS[q]) || !same_lane(&ROWS[q], &ROWS[first]))
            continue;
        for (size_t m = 0; m < MAXM && ROWS[q].member[m]; m++) {
            bool seen = false;
            for (size_t i = 0; i < n; i++)
                seen |= strcmp(names[i], ROWS[q].member[m]) == 0;
            if (!seen)
                names[n++] = ROWS[q].member[m];
        }
    }
    return n;
}

static const char *memory_member(const char *series)
{
    return strcmp(series, "allocated") == 0 ? "Total Allocated" : "Total Reserved";
}

/* Checks the lanes of kind `memory` in c->lanes[*at..]; *at moves past them. */
static void check_kind(const nx_counter_lanes *c, size_t *at, bool memory, int64_t s0, int64_t e0, uint32_t w)
{
    bool seen[NROWS] = {false};
    for (size_t r = 0; r < NROWS; r++) {
        const trow *x = &ROWS[r];
        if (seen[r] || x->ts > e0 || !(memory ? is_memory(x) : is_counter(x)))
            continue;
        for (size_t q = r; q < NROWS; q++)
            seen[q] |= same_lane(&ROWS[q], x);
        assert_true(*at < c->n);
        const nx_counter_lane *l = &c->lanes[(*at)++];
        char want[96];
        expect_label(x, want, sizeof want);
        assert_string_equal(l->label, want);
        assert_int_equal(l->kind, memory ? NX_COUNTER_MEMORY : NX_COUNTER_COUNTER);
        const char *names[8];
        size_t ns = expect_series(r, e0, names);
        assert_int_equal(l->n_series, ns);
        for (size_t s = 0; s < ns; s++)
            check_series(&l->series[s], r, names[s], memory ? memory_member(names[s]) : names[s], s0, e0, w);
    }
}

static void check_window(int64_t s0, int64_t e0, uint32_t w)
{
    nx_counter_lanes c;
    nx_error err = {0};
    assert_int_equal(nx_counter_lanes_read(dir, s0, e0, w, &c, &err), 0);
    size_t at = 0;
    check_kind(&c, &at, true, s0, e0, w);
    check_kind(&c, &at, false, s0, e0, w);
    assert_int_equal(at, c.n);
    nx_counter_lanes_free(&c);
}

static void test_window(void **state)
{
    (void)state;
    check_window(S, E, W);
}

static void test_windows(void **state)
{
    (void)state;
    check_window(S, E, 1);
    check_window(0, 40, 16);
    check_window(13, 13, 3);
    check_window(INT64_MIN, INT64_MAX, 7);
}

static void test_labels_and_keys(void **state)
{
    (void)state;
    nx_counter_lanes c;
    nx_error err = {0};
    assert_int_equal(nx_counter_lanes_read(dir, S, E, W, &c, &err), 0);
    assert_int_equal(c.n, 5);
    assert_true(c.lanes[0].worker_gid.null);
    assert_int_equal(c.lanes[0].device_type.v, 1);
    assert_int_equal(c.lanes[0].device_id.v, 0);
    assert_int_equal(c.lanes[2].worker_gid.v, 1);
    assert_string_equal(c.lanes[3].name, "ctr");
    assert_int_equal(c.lanes[3].process_id.v, 7);
    assert_string_equal(nx_counter_kind_at(NX_COUNTER_MEMORY)->unit, "bytes");
    nx_counter_lanes_free(&c);
}

static void test_bad_window(void **state)
{
    (void)state;
    nx_counter_lanes c;
    nx_error err = {0};
    assert_int_equal(nx_counter_lanes_read(dir, 5, 4, 1, &c, &err), -1);
    assert_non_null(strstr(err.msg, "empty"));
    assert_int_equal(nx_counter_lanes_read(dir, 0, 4, 0, &c, &err), -1);
}

static void test_absent_table(void **state)
{
    (void)state;
    char empty[96];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    mkdir(empty, 0755);
    nx_counter_lanes c;
    nx_error err = {0};
    assert_int_equal(nx_counter_lanes_read(empty, 0, 10, 4, &c, &err), 0);
    assert_int_equal(c.n, 0);
}

/* One counter row with more members than a lane may have series. */
static void test_series_cap(void **state)
{
    (void)state;
    char d[96], extra[4096];
    snprintf(d, sizeof d, "%s/cap", dir);
    mkdir(d, 0755);
    size_t n = (size_t)snprintf(extra, sizeof extra, "{\"ph\":\"C\",\"args\":{");
    for (int m = 0; m <= NX_COUNTER_MAX_SERIES; m++)
        n += (size_t)snprintf(extra + n, sizeof extra - n, "%s\"s%d\":%d", m ? "," : "", m, m);
    snprintf(extra + n, sizeof extra - n, "}}");
    static const fx_col COLS[] = {{"start_ts", NXPQ_INT64},
                                  {"name", NXPQ_STRING},
                                  {"trace_event_source", NXPQ_STRING},
                                  {"extra_attributes_json", NXPQ_STRING}};
    const char *cells[] = {"5", "wide", "framework", extra}; /* no worker_gid, process_id: the label is the name */
    fx_write(d, "SystemProfileEvents.parquet", COLS, 4, cells, 1);
    nx_counter_lanes c;
    nx_error err = {0};
    assert_int_equal(nx_counter_lanes_read(d, 0, 10, 4, &c, &err), -1);
    assert_non_null(strstr(err.msg, "\"wide\" has more than"));
    assert_non_null(strstr(err.msg, "s64"));
}

/* One counter row per name, one name more than there may be lanes. */
static void test_lane_cap(void **state)
{
    (void)state;
    char d[96];
    snprintf(d, sizeof d, "%s/lanes", dir);
    mkdir(d, 0755);
    enum { N = NX_COUNTER_MAX_LANES + 1 };
    static char ts[N][16], name[N][16];
    static const char *cells[N * 4];
    for (int r = 0; r < N; r++) {
        snprintf(ts[r], sizeof ts[r], "%d", r);
        snprintf(name[r], sizeof name[r], "c%d", r);
        const char *row[4] = {ts[r], name[r], "framework", "{\"ph\":\"C\",\"args\":{\"v\":1}}"};
        memcpy(&cells[r * 4], row, sizeof row);
    }
    static const fx_col COLS[] = {{"start_ts", NXPQ_INT64},
                                  {"name", NXPQ_STRING},
                                  {"trace_event_source", NXPQ_STRING},
                                  {"extra_attributes_json", NXPQ_STRING}};
    fx_write(d, "SystemProfileEvents.parquet", COLS, 4, cells, N);
    nx_counter_lanes c;
    nx_error err = {0};
    assert_int_equal(nx_counter_lanes_read(d, 0, N, 2, &c, &err), -1);
    assert_non_null(strstr(err.msg, "more than 256 counter lanes"));
    assert_non_null(strstr(err.msg, "\"c256\""));
    assert_int_equal(nx_counter_lanes_read(d, 0, N - 2, 2, &c, &err), 0); /* the last row after the window */
    assert_int_equal(c.n, NX_COUNTER_MAX_LANES);
    nx_counter_lanes_free(&c);
}

/* The points are held within the query budget: a width whose series do not fit. */
static void test_budget(void **state)
{
    (void)state;
    setenv("NXPROF_QUERY_MEMORY_MIB", "1", 1);
    nx_counter_lanes c;
    nx_error err = {0};
    /* 1 MiB holds 65536 points of 16 bytes: eight series of 10000 points do not fit. */
    assert_int_equal(nx_counter_lanes_read(dir, S, E, 10000, &c, &err), NX_QUERY_OVER_BUDGET);
    assert_non_null(strstr(err.msg, "NXPROF_QUERY_MEMORY_MIB"));
    assert_int_equal(nx_counter_lanes_read(dir, S, E, 1000, &c, &err), 0);
    nx_counter_lanes_free(&c);
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
}

/* Pages that start after the window's end are not read: 400 GPU samples, 8 rows a
 * page; a window over the first tenth reads a small share of the pages, one ending at
 * the last sample reads them all, and both answer the samples they hold. */
static void pages_after_the_window_are_skipped(void **state)
{
    (void)state;
    char d[96], path[160];
    snprintf(d, sizeof d, "%s/pages", dir);
    mkdir(d, 0755);
    snprintf(path, sizeof path, "%s/SystemProfileEvents.parquet", d);
    nxpq_column_spec cols[] = {{.name = "start_ts", .type = NXPQ_INT64},
                               {.name = "name", .type = NXPQ_STRING},
                               {.name = "trace_event_source", .type = NXPQ_STRING},
                               {.name = "extra_attributes_json", .type = NXPQ_STRING}};
    nxpq_writer_options wo;
    nxpq_writer_options_init(&wo);
    wo.page_rows = 8;
    nx_error err = {0};
    nxpq_writer *w = nxpq_writer_open(path, cols, 4, &wo, &err);
    assert_non_null(w);
    for (int i = 0; i < 400; i++) {
        char extra[160];
        int n = snprintf(extra, sizeof extra,
                         "{\"ph\":\"i\",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Total Allocated\":%d,"
                         "\"Total Reserved\":%d}}", i, 1000);
        assert_int_equal(nxpq_put_int64(w, 0, 1000 + 10 * i), 0);
        assert_int_equal(nxpq_put_string(w, 1, "[memory]", 8), 0);
        assert_int_equal(nxpq_put_string(w, 2, "framework", 9), 0);
        assert_int_equal(nxpq_put_string(w, 3, extra, (size_t)n), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
    nx_counter_lanes c;
    assert_int_equal(nx_counter_lanes_read(d, 1100, 1399, 1, &c, &err), 0);  /* samples 10..39 */
    assert_int_equal(c.n, 1);
    assert_int_equal(c.lanes[0].series[0].n, 1);
    assert_true(c.lanes[0].series[0].v[0] == 39);
    assert_true(c.lanes[0].series[0].has_before && c.lanes[0].series[0].before_v == 9);
    assert_true(c.stats.pages_total >= 4 * 50);
    assert_true(c.stats.pages_read * 8 < c.stats.pages_total);
    nx_counter_lanes_free(&c);
    assert_int_equal(nx_counter_lanes_read(d, 1000, 1000 + 10 * 399, 1, &c, &err), 0);
    assert_true(c.lanes[0].series[0].v[0] == 399);
    assert_int_equal(c.stats.pages_read, c.stats.pages_total);
    nx_counter_lanes_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),      cmocka_unit_test(test_windows),      cmocka_unit_test(test_labels_and_keys),
        cmocka_unit_test(test_bad_window),  cmocka_unit_test(test_absent_table), cmocka_unit_test(test_series_cap),
        cmocka_unit_test(test_lane_cap),
        cmocka_unit_test(test_budget),      cmocka_unit_test(pages_after_the_window_are_skipped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
