/*
 * test_tracks.c — query/tracks.h: the tracks of a hand-made profile (Instruction,
 * DmaPacket, SemaphoreUpdate and SystemProfileEvents), their groups, natural order,
 * counts and extents, SystemProfileEvents' max_depth and shared parts; the same answer
 * from the timeline indexes and from scans with the indexes removed; a damaged table
 * listed in errors while the others are answered; and the view rules
 * of profile/timeline_rules.h the tracks are grouped by.
 *
 * Each event below carries the track the rules of docs/query.md give it, written out
 * by hand; the expected count, extent, depth (profile/nesting.h's rule by brute force:
 * the number of enclosing events of the track) and parts (the value every event of
 * the track has, else null) are computed from these arrays by the test itself.
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

#include "profile/timeline_index.h"
#include "profile/timeline_index_writer.h"
#include "query/tracks.h"
#include "schema/schema.h"
#include "system_fixture.h"
#include "table_fixture.h"

/* Instruction: start, end, engine, timeline_track. */
static const char *const INSTR[] = {
    "0", "10", "tensor", "qPE10",   "5", "20", "tensor", "qPE2", "6", "7",  "vector", NULL,
    "8", "30", "tensor", "",        "9", "12", "tensor", "qPE2", "11", "13", "gpsimd", "qPE02",
};
static const char *const INSTR_TRACK[] = {"qPE10", "qPE2", "vector", "tensor", "qPE2", "qPE02"};
/* DmaPacket: start, end, queue_name, queue_idx. */
static const char *const DMA[] = {
    "0", "5", NULL, "7", "1", "3", "qSync", "1", "2", "9", NULL, "12", "4", "6", NULL, NULL,
};
static const char *const DMA_TRACK[] = {"queue7", "qSync", "queue12", ""};
/* SemaphoreUpdate: timestamp, id. */
static const char *const SEM[] = {"3", "S[3]", "5", "S[10]", "7", "S[3]"};
static const char *const SEM_TRACK[] = {"S[3]", "S[10]", "S[3]"};

/* start, end, source, nc, instance, pid, tid, name; in start order. */
static const sys_event EVENTS[] = {
    {0, 100, "framework", NX_ABSENT, "i-1", 7, 1, "step", NULL},
    {10, 50, "framework", NX_ABSENT, "i-1", 7, 1, "fwd", NULL},
    {20, 30, "framework", NX_ABSENT, "i-1", 7, 1, "mm", NULL},
    {25, 28, "neuron_rt", NX_ABSENT, "i-1", 7, 1, "nrt_tensor_read", NULL},   /* no nc: the thread's track */
    {40, 200, "neuron_rt", 0, "i-1", 7, 3, "nrt_execute", NULL},
    {45, 60, "neuron_hw", 0, "i-1", 7, 3, "device_execution", NULL},
    {70, 80, "neuron_rt", 0, "i-1", 7, 4, "nrt_tensor_write", NULL},
    {90, 95, "framework", NX_ABSENT, "i-2", 8, 2, "x", NULL},
    {96, 97, "framework", NX_ABSENT, "i-2", -1325480811370686157, INT64_MIN, "y", NULL},   /* hashed string ids */
    {300, 310, "neuron_rt", 10, "i-1", 7, 5, "nrt_load", NULL},
};
#define N_EVENTS (sizeof EVENTS / sizeof EVENTS[0])
static const char *const EVENT_TRACK[] = {"i-1/7/1", "i-1/7/1", "i-1/7/1", "i-1/7/1", "nc0",
                                          "nc0",     "nc0",     "i-2/8/2", "i-2/-1325480811370686157/-9223372036854775808", "nc10"};

/* The expected tracks, in the order the rules give (group, table, natural name). */
typedef struct want_track {
    const char *table, *name;
    size_t group;
} want_track;

static const want_track WANT[] = {
    {"Instruction", "qPE2", 0},  {"Instruction", "qPE02", 0}, {"Instruction", "qPE10", 0},
    {"Instruction", "tensor", 0}, {"Instruction", "vector", 0}, {"DmaPacket", "", 1},
    {"DmaPacket", "qSync", 1},    {"DmaPacket", "queue7", 1},   {"DmaPacket", "queue12", 1},
    {"SemaphoreUpdate", "S[3]", 2}, {"SemaphoreUpdate", "S[10]", 2}, {"SystemProfileEvents", "i-1/7/1", 5},
    {"SystemProfileEvents", "i-2/-1325480811370686157/-9223372036854775808", 5},
    {"SystemProfileEvents", "i-2/8/2", 5}, {"SystemProfileEvents", "nc0", 5}, {"SystemProfileEvents", "nc10", 5},
};
#define N_WANT (sizeof WANT / sizeof WANT[0])

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxtracks-XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_events(dir, EVENTS, N_EVENTS, 0); /* through process/row.h: with its timeline index */
    fx_write(dir, "Instruction.parquet",
             (fx_col[]){{"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}, {"engine", NXPQ_STRING},
                                  {"timeline_track", NXPQ_STRING}},
             4, INSTR, 6);
    fx_write(dir, "DmaPacket.parquet",
             (fx_col[]){{"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}, {"queue_name", NXPQ_STRING},
                                  {"queue_idx", NXPQ_INT64}},
             4, DMA, 4);
    fx_write(dir, "SemaphoreUpdate.parquet",
             (fx_col[]){{"timestamp", NXPQ_INT64}, {"id", NXPQ_STRING}}, 2, SEM, 3);
    nx_error err = {0};
    uint64_t rows;
    assert_int_equal(nx_tlx_build(dir, "Instruction", &rows, &err), 0);
    assert_int_equal(rows, 6);
    nx_tlx *x; /* both indexes are usable: the first read answers from them */
    assert_int_equal(nx_tlx_open(dir, "Instruction", &x, NULL), 0);
    nx_tlx_close(x);
    assert_int_equal(nx_tlx_open(dir, "SystemProfileEvents", &x, NULL), 0);
    assert_true(nx_tlx_has_nesting(x));
    nx_tlx_close(x);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

/* count, first, last of track `name` of a table given as rows of cells (start at
 * column 0, end at column 1 unless point). */
static void expect_cells(const char *const *cells, size_t n_cols, const char *const *tracks, size_t rows, bool point,
                         const char *name, int64_t *count, int64_t *first, int64_t *last)
{
    *count = 0;
    for (size_t r = 0; r < rows; r++) {
        if (strcmp(tracks[r], name) != 0)
            continue;
        int64_t s = strtoll(cells[r * n_cols], NULL, 10), e = point ? s : strtoll(cells[r * n_cols + 1], NULL, 10);
        if (!(*count)++ || s < *first)
            *first = s;
        if (*count == 1 || e > *last)
            *last = e;
    }
}

/* Brute force of nesting.h: the events of B's track that enclose B (equal intervals: the earlier row). */
static uint32_t depth_of(size_t b)
{
    uint32_t d = 0;
    for (size_t a = 0; a < N_EVENTS; a++) {
        if (a == b || strcmp(EVENT_TRACK[a], EVENT_TRACK[b]) != 0)
            continue;
        bool encloses = EVENTS[a].start <= EVENTS[b].start && EVENTS[b].end <= EVENTS[a].end;
        bool equal = EVENTS[a].start == EVENTS[b].start && EVENTS[a].end == EVENTS[b].end;
        if (encloses && (!equal || a < b))
            d++;
    }
    return d;
}

/* The parts each SystemProfileEvents track's name gives (tracks.h), written out by hand:
 * a thread's track its instance, pid and tid; a NeuronCore's its nc. */
static const struct {
    const char *track, *instance;
    int64_t pid, tid, nc;   /* NX_ABSENT: null */
} PARTS[] = {
    {"i-1/7/1", "i-1", 7, 1, NX_ABSENT},
    {"i-2/8/2", "i-2", 8, 2, NX_ABSENT},
    {"i-2/-1325480811370686157/-9223372036854775808", "i-2", -1325480811370686157, INT64_MIN, NX_ABSENT},
    {"nc0", NULL, NX_ABSENT, NX_ABSENT, 0},
    {"nc10", NULL, NX_ABSENT, NX_ABSENT, 10},
};

static void expect_int_part(const nx_track_part *p, int64_t v)
{
    assert_int_equal(p->ok, v != NX_ABSENT);
    if (v != NX_ABSENT)
        assert_int_equal(p->i, v);
}

static void expect_parts(const nx_track_entry *t)
{
    for (size_t i = 0; i < sizeof PARTS / sizeof PARTS[0]; i++) {
        if (strcmp(PARTS[i].track, t->name) != 0)
            continue;
        assert_int_equal(t->instance.ok, PARTS[i].instance != NULL);
        if (PARTS[i].instance)
            assert_string_equal(t->instance.s, PARTS[i].instance);
        expect_int_part(&t->pid, PARTS[i].pid);
        expect_int_part(&t->tid, PARTS[i].tid);
        expect_int_part(&t->nc, PARTS[i].nc);
        return;
    }
    fail_msg("track %s has no expected parts", t->name);
}

static void check_system_track(const nx_track_entry *t)
{
    int64_t count = 0, first = 0, last = 0;
    uint32_t depth = 0;
    for (size_t i = 0; i < N_EVENTS; i++)
        if (strcmp(EVENT_TRACK[i], t->name) == 0) {
            if (!count++ || EVENTS[i].start < first)
                first = EVENTS[i].start;
            if (count == 1 || EVENTS[i].end > last)
                last = EVENTS[i].end;
            if (depth_of(i) > depth)
                depth = depth_of(i);
        }
    assert_int_equal(t->count, count);
    assert_int_equal(t->first_ts, first);
    assert_int_equal(t->last_ts, last);
    assert_int_equal(t->max_depth, depth);
    assert_true(t->has_parts);
    expect_parts(t);
}

static void check_tracks(const nx_tracks *t)
{
    assert_int_equal(t->n_errors, 0);
    assert_int_equal(t->n, N_WANT);
    for (size_t i = 0; i < N_WANT; i++) {
        const nx_track_entry *e = &t->tracks[i];
        assert_string_equal(e->view->table, WANT[i].table);
        assert_string_equal(e->name, WANT[i].name);
        assert_int_equal(e->name_len, strlen(WANT[i].name));
        assert_int_equal(e->view->group, WANT[i].group);
        int64_t count = 0, first = 0, last = 0;
        if (strcmp(e->view->table, "Instruction") == 0)
            expect_cells(INSTR, 4, INSTR_TRACK, 6, false, e->name, &count, &first, &last);
        else if (strcmp(e->view->table, "DmaPacket") == 0)
            expect_cells(DMA, 4, DMA_TRACK, 4, false, e->name, &count, &first, &last);
        else if (strcmp(e->view->table, "SemaphoreUpdate") == 0)
            expect_cells(SEM, 2, SEM_TRACK, 3, true, e->name, &count, &first, &last);
        else {
            check_system_track(e);
            continue;
        }
        assert_int_equal(e->count, count);
        assert_int_equal(e->first_ts, first);
        assert_int_equal(e->last_ts, last);
        assert_int_equal(e->max_depth, 0);
        assert_false(e->has_parts);
    }
    /* Groups: compute 0..5, dma 5..9, semaphore 9..11, cc and memory empty, system 11..16. */
    static const size_t first[NX_TIMELINE_GROUPS + 1] = {0, 5, 9, 11, 11, 11, 16};
    for (size_t g = 0; g <= NX_TIMELINE_GROUPS; g++)
        assert_int_equal(t->group_first[g], first[g]);
    assert_true(t->have_span);
    assert_int_equal(t->first_ts, 0);
    assert_int_equal(t->last_ts, 310);
}

static void tracks_from_indexes_and_scans(void **state)
{
    (void)state;
    nx_tracks t;
    nx_error err = {0};
    assert_int_equal(nx_tracks_read(dir, &t, &err), 0);
    check_tracks(&t);
    nx_tracks_free(&t);
    /* Without the indexes: the Instruction tracks by a scan, SystemProfileEvents'
     * depths computed from the table. */
    char path[200];
    snprintf(path, sizeof path, "%s/.Instruction.nxtl", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/.SystemProfileEvents.nxtl", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(nx_tracks_read(dir, &t, &err), 0);
    check_tracks(&t);
    nx_tracks_free(&t);
}

static void no_timeline_tables(void **state)
{
    (void)state;
    char empty[64];
    snprintf(empty, sizeof empty, "/tmp/nxtracks-empty-XXXXXX");
    assert_non_null(mkdtemp(empty));
    nx_tracks t;
    nx_error err = {0};
    assert_int_equal(nx_tracks_read(empty, &t, &err), 0);
    assert_int_equal(t.n, 0);
    assert_false(t.have_span);
    for (size_t g = 0; g <= NX_TIMELINE_GROUPS; g++)
        assert_int_equal(t.group_first[g], 0);
    nx_tracks_free(&t);
    fixture_rmrf(empty);
}

/* A damaged table has no tracks and its error, naming it; the others are listed. */
static void unreadable_table_names_it(void **state)
{
    (void)state;
    char bad[64], path[200];
    snprintf(bad, sizeof bad, "/tmp/nxtracks-bad-XXXXXX");
    assert_non_null(mkdtemp(bad));
    fx_write(bad, "SemaphoreUpdate.parquet", (fx_col[]){{"timestamp", NXPQ_INT64}, {"id", NXPQ_STRING}}, 2, SEM, 3);
    snprintf(path, sizeof path, "%s/CcOp.parquet", bad);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not parquet", f);
    fclose(f);
    nx_tracks t;
    nx_error err = {0};
    assert_int_equal(nx_tracks_read(bad, &t, &err), 0);
    assert_int_equal(t.n_errors, 1);
    assert_string_equal(t.errors[0].table, "CcOp");
    assert_non_null(strstr(t.errors[0].error, "CcOp.parquet"));
    assert_int_equal(t.n, 2);   /* S[3] and S[10] */
    for (size_t i = 0; i < t.n; i++)
        assert_string_equal(t.tracks[i].view->table, "SemaphoreUpdate");
    assert_true(t.have_span);
    assert_int_equal(t.first_ts, 3);
    assert_int_equal(t.last_ts, 7);
    nx_tracks_free(&t);
    fixture_rmrf(bad);
}

/* The view rules of timeline_rules.h: one view per timeline table, in group order; the
 * search and aggregate fields start with the defaults and hold only what the table has. */
static void view_rules(void **state)
{
    (void)state;
    size_t last_group = 0;
    for (size_t i = 0; i < NX_TIMELINE_TABLES; i++) {
        const nx_timeline_view *v = nx_timeline_view_at(i);
        assert_non_null(nx_timeline_find(v->table));
        assert_ptr_equal(nx_timeline_view_find(v->table), v);
        assert_true(v->group >= last_group && v->group < NX_TIMELINE_GROUPS);
        last_group = v->group;
        const nx_schema_table *st = nx_schema_table_find(v->table);
        const char *f[NX_TIMELINE_MAX_FIELDS];
        size_t n = nx_timeline_search_fields(v->table, f, NX_TIMELINE_MAX_FIELDS);
        assert_true(n >= 2);
        assert_string_equal(f[0], v->search_default);
        assert_string_equal(f[n - 1], "track");
        for (size_t k = 0; k + 1 < n; k++) {
            const nx_schema_field *sf = nx_schema_field_find(st, f[k]);
            assert_non_null(sf);
            assert_true(strcmp(sf->type, "string") == 0 || strcmp(sf->type, "integer") == 0);
            for (size_t j = 0; j < k; j++)
                assert_string_not_equal(f[j], f[k]);
        }
        n = nx_timeline_aggregate_fields(v->table, f, NX_TIMELINE_MAX_FIELDS);
        assert_string_equal(f[0], v->aggregate_default);
        for (size_t k = 0; k < n; k++)
            assert_true(strcmp(f[k], "track") == 0 || nx_schema_field_find(st, f[k]));
    }
    assert_null(nx_timeline_view_at(NX_TIMELINE_TABLES));
    assert_null(nx_timeline_view_find("Summary"));
    assert_string_equal(nx_timeline_group_at(NX_TIMELINE_GROUPS - 1)->id, "system");
    assert_true(nx_timeline_label_is_string("Instruction", "opcode"));
    assert_true(nx_timeline_label_is_string("Instruction", "framework_name"));
    assert_false(nx_timeline_label_is_string("Instruction", "raw_framework_id"));
    assert_false(nx_timeline_label_is_string("SemaphoreUpdate", "value"));
}

/* Ranked threads (worker_gid, a framework trace's rank): two ranks with the same
 * instance, pid and tid are two tracks "rank<N>/<instance>/<pid>/<tid>" with the rank
 * as a part, after the tracks without a rank and in rank order (rank 10 after rank 2,
 * whatever the order of their events), from the index and from a scan alike. */
static void ranked_threads(void **state)
{
    (void)state;
    char rd[128];
    snprintf(rd, sizeof rd, "%s/ranked", dir);
    static const sys_event ev[] = {
        {1, 9, "framework", NX_ABSENT, "i-1", 5, 6, "a", "{}"},   /* rank 10 */
        {2, 8, "framework", NX_ABSENT, "i-1", 5, 6, "b", "{}"},   /* rank 2 */
        {3, 4, "framework", NX_ABSENT, "i-1", 5, 6, "c", "{}"},   /* no rank */
        {5, 7, "framework", NX_ABSENT, "i-1", 5, 6, "d", "{}"},   /* rank 2 */
    };
    static const int64_t rank[] = {10, 2, -1, 2};
    static const struct { const char *name; int64_t rank, count; } want[] = {
        {"i-1/5/6", -1, 1}, {"rank2/i-1/5/6", 2, 2}, {"rank10/i-1/5/6", 10, 1}};
    write_ranked_events(rd, ev, rank, 4, 0);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {   /* the same from a scan */
            char idx[200];
            snprintf(idx, sizeof idx, "%s/.SystemProfileEvents.nxtl", rd);
            assert_int_equal(unlink(idx), 0);
        }
        nx_tracks t;
        nx_error err = {0};
        assert_int_equal(nx_tracks_read(rd, &t, &err), 0);
        assert_int_equal(t.n, 3);
        for (size_t i = 0; i < 3; i++) {
            const nx_track_entry *e = &t.tracks[i];
            assert_string_equal(e->name, want[i].name);
            assert_int_equal(e->count, want[i].count);
            assert_true(e->has_parts && e->pid.ok && e->tid.ok && e->instance.ok);
            assert_int_equal(e->pid.i, 5);
            assert_int_equal(e->tid.i, 6);
            assert_string_equal(e->instance.s, "i-1");
            assert_int_equal(e->worker.ok, want[i].rank >= 0);
            if (want[i].rank >= 0)
                assert_int_equal(e->worker.i, want[i].rank);
            assert_true(e->labelled == (want[i].rank >= 0));   /* a rank alone labels a thread */
            if (e->labelled)
                assert_non_null(strstr(e->process_label, want[i].rank == 2 ? "rank 2 / " : "rank 10 / "));
        }
        nx_tracks_free(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tracks_from_indexes_and_scans),
        cmocka_unit_test(no_timeline_tables),
        cmocka_unit_test(unreadable_table_names_it),
        cmocka_unit_test(view_rules),
        cmocka_unit_test(ranked_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
