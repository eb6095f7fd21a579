/* events_fixture.h — random timeline tables for the unit tests of search and
 * aggregates, with every event also kept in memory so that the tests can work
 * the answers out by brute force.
 *
 * Instruction: start_ts, end_ts (null for some rows: no event), engine,
 * timeline_track (null or empty for most rows: the track is then the engine),
 * opcode (nullable string), id, split over two files, the first with its
 * strings PLAIN and the second dictionary-encoded, in row groups of 50 rows and
 * pages of 10, so scans meet both forms, several dictionaries and pruning.
 * SemaphoreUpdate (point events): timestamp, id (the track), value (INT32,
 * dictionary-encoded), double_set_or_clear (boolean). Starts are drawn from a
 * small range, so equal starts (within and across tables) are common. */
#ifndef NX_TEST_EVENTS_FIXTURE_H
#define NX_TEST_EVENTS_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parquet/parquet.h"
#include "profile/timeline_rules.h"
#include "test_rand.h"

enum { FX_INSTRUCTION, FX_SEMAPHORE };

typedef struct fx_event {
    int table;                 /* FX_INSTRUCTION or FX_SEMAPHORE */
    int64_t start, end;        /* end == start for semaphores */
    bool event;                /* false: a null end (no event) */
    char track[16];            /* the track name by the rule */
    const char *engine, *ttrack, *opcode;  /* Instruction; NULL: null */
    int64_t id;                /* Instruction id, SemaphoreUpdate value */
    int64_t ordinal;
} fx_event;

static const char *const FX_OPCODES[] = {"MATMUL", "TensorTensor", "matmul_t", "ACTIVATE", "LdWeights", ""};
static const char *const FX_ENGINES[] = {"pe", "act", "pool", "dve"};

static int fx_cmp_start(const void *a, const void *b)
{
    const fx_event *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void fx_write_instructions(const char *dir, fx_event *ev, size_t n, size_t split)
{
    nxpq_writer_options wo;
    nxpq_writer_options_init(&wo);
    wo.row_group_rows = 50;
    wo.page_rows = 10;
    for (size_t f = 0; f < 2; f++) {
        nxpq_encoding_pref str = f == 0 ? NXPQ_ENCODE_PLAIN : NXPQ_ENCODE_DICTIONARY;
        nxpq_column_spec cols[] = {
            {.name = "start_ts", .type = NXPQ_INT64},
            {.name = "end_ts", .type = NXPQ_INT64, .nullable = true},
            {.name = "engine", .type = NXPQ_STRING, .encoding = str},
            {.name = "timeline_track", .type = NXPQ_STRING, .nullable = true, .encoding = str},
            {.name = "opcode", .type = NXPQ_STRING, .nullable = true, .encoding = str},
            {.name = "id", .type = NXPQ_INT64},
        };
        char path[600];
        snprintf(path, sizeof path, "%s/Instruction_%zu.parquet", dir, f);
        nx_error err = {0};
        nxpq_writer *w = nxpq_writer_open(path, cols, 6, &wo, &err);
        assert_non_null(w);
        int64_t row = 0;
        for (size_t i = 0; i < n; i++) {
            fx_event *e = &ev[i];
            if (e->table != FX_INSTRUCTION || (f == 0) != (e->ordinal < (int64_t)split))
                continue;
            assert_int_equal(nxpq_put_int64(w, 0, e->start), 0);
            assert_int_equal(e->event ? nxpq_put_int64(w, 1, e->end) : nxpq_put_null(w, 1), 0);
            assert_int_equal(nxpq_put_string(w, 2, e->engine, strlen(e->engine)), 0);
            assert_int_equal(e->ttrack ? nxpq_put_string(w, 3, e->ttrack, strlen(e->ttrack)) : nxpq_put_null(w, 3), 0);
            assert_int_equal(e->opcode ? nxpq_put_string(w, 4, e->opcode, strlen(e->opcode)) : nxpq_put_null(w, 4), 0);
            assert_int_equal(nxpq_put_int64(w, 5, e->id), 0);
            assert_int_equal(nxpq_end_row(w), 0);
            e->ordinal = nx_row_ordinal(f, row++);
        }
        assert_int_equal(nxpq_writer_close(w, &err), 0);
    }
}

static void fx_write_semaphores(const char *dir, fx_event *ev, size_t n)
{
    nxpq_writer_options wo;
    nxpq_writer_options_init(&wo);
    wo.row_group_rows = 40;
    wo.page_rows = 8;
    nxpq_column_spec cols[] = {
        {.name = "timestamp", .type = NXPQ_INT64},
        {.name = "id", .type = NXPQ_STRING, .encoding = NXPQ_ENCODE_DICTIONARY},
        {.name = "value", .type = NXPQ_INT32, .encoding = NXPQ_ENCODE_DICTIONARY},
        {.name = "double_set_or_clear", .type = NXPQ_BOOLEAN},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/SemaphoreUpdate.parquet", dir);
    nx_error err = {0};
    nxpq_writer *w = nxpq_writer_open(path, cols, 4, &wo, &err);
    assert_non_null(w);
    int64_t row = 0;
    for (size_t i = 0; i < n; i++) {
        fx_event *e = &ev[i];
        if (e->table != FX_SEMAPHORE)
            continue;
        assert_int_equal(nxpq_put_int64(w, 0, e->start), 0);
        assert_int_equal(nxpq_put_string(w, 1, e->track, strlen(e->track)), 0);
        assert_int_equal(nxpq_put_int32(w, 2, (int32_t)e->id), 0);
        assert_int_equal(nxpq_put_bool(w, 3, e->id % 2 == 0), 0);
        assert_int_equal(nxpq_end_row(w), 0);
        e->ordinal = row++;
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

/* n random events (about a sixth semaphores) in start order, written to dir
 * (created): Instruction rows split after the first `split` of them. */
static void fx_make(const char *dir, fx_event *ev, size_t n, size_t split)
{
    mkdir(dir, 0755);
    for (size_t i = 0; i < n; i++) {
        fx_event *e = &ev[i];
        memset(e, 0, sizeof *e);
        e->table = next_rand() % 6 == 0 ? FX_SEMAPHORE : FX_INSTRUCTION;
        e->start = 1000 + (int64_t)(next_rand() % (n * 2));
        e->event = true;
        if (e->table == FX_SEMAPHORE) {
            e->end = e->start;
            e->id = (int64_t)(next_rand() % 5) - 1;
            snprintf(e->track, sizeof e->track, "S[%d]", (int)(next_rand() % 3));
            continue;
        }
        e->end = e->start + (int64_t)(next_rand() % 40);
        e->event = next_rand() % 25 != 0;
        e->engine = FX_ENGINES[next_rand() % 4];
        uint64_t t = next_rand() % 8;
        e->ttrack = t == 0 ? "qSync" : t == 1 ? "" : NULL;
        e->opcode = next_rand() % 10 == 0 ? NULL : FX_OPCODES[next_rand() % 6];
        e->id = (int64_t)i;
        snprintf(e->track, sizeof e->track, "%s", e->ttrack && *e->ttrack ? e->ttrack : e->engine);
    }
    qsort(ev, n, sizeof *ev, fx_cmp_start);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].table == FX_INSTRUCTION)
            ev[i].ordinal = (int64_t)k++; /* the row number across both files, until written */
    fx_write_instructions(dir, ev, n, split);
    fx_write_semaphores(dir, ev, n);
}

static inline void fx_rmrf(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

#endif
