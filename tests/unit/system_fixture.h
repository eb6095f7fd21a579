/* system_fixture.h — tiny system profiles for the unit tests: a SystemProfileEvents
 * table written through process/row.h (so its timeline index is written the way
 * `process` writes it), and small Parquet files with only the columns a test needs. */
#ifndef NX_TEST_SYSTEM_FIXTURE_H
#define NX_TEST_SYSTEM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "capture/program_file.h"
#include "parquet/parquet.h"
#include "process/row.h"

typedef struct sys_event {
    int64_t start, end;
    const char *source;              /* trace_event_source */
    int64_t nc;                      /* NX_ABSENT: null */
    const char *instance;
    int64_t pid, tid;
    const char *name;
    const char *json;                /* extra_attributes_json, NULL: null */
} sys_event;

static inline void fixture_rmrf(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* dir (created) gets SystemProfileEvents from ev[0..n), in that order, split every
 * max_rows rows (0: one file); worker_gid = rank[i] (rank NULL or rank[i] < 0: null). */
static inline void write_ranked_events(const char *dir, const sys_event *ev, const int64_t *rank, size_t n,
                                       uint64_t max_rows)
{
    mkdir(dir, 0755);
    nx_table_dest dest = {.dir = dir, .max_rows = max_rows};
    nx_row r;
    nx_error err = {0};
    unsigned tables = 0;
    assert_int_equal(nx_row_open(&r, &dest, "SystemProfileEvents", &err), 0);
    size_t c_id = nx_row_col(&r, "id"), c_name = nx_row_col(&r, "name"), c_start = nx_row_col(&r, "start_ts"),
           c_end = nx_row_col(&r, "end_ts"), c_dur = nx_row_col(&r, "duration_ns"),
           c_src = nx_row_col(&r, "trace_event_source"), c_inst = nx_row_col(&r, "instance_id"),
           c_pid = nx_row_col(&r, "process_id"), c_tid = nx_row_col(&r, "thread_id"), c_nc = nx_row_col(&r, "nc_idx"),
           c_json = nx_row_col(&r, "extra_attributes_json"), c_worker = nx_row_col(&r, "worker_gid");
    for (size_t i = 0; i < n; i++) {
        const sys_event *e = &ev[i];
        assert_int_equal(nx_row_begin(&r, &err), 0);
        nx_row_i64(&r, c_id, (int64_t)i);
        nx_row_str(&r, c_name, e->name ? e->name : "op");
        nx_row_i64(&r, c_start, e->start);
        nx_row_i64(&r, c_end, e->end);
        nx_row_i64(&r, c_dur, e->end - e->start);
        nx_row_str(&r, c_src, e->source ? e->source : "framework");
        nx_row_str(&r, c_inst, e->instance ? e->instance : "i-1");
        nx_row_i64(&r, c_pid, e->pid);
        nx_row_i64(&r, c_tid, e->tid);
        nx_row_opt_i64(&r, c_nc, e->nc);
        if (e->json)
            nx_row_str(&r, c_json, e->json);
        if (rank && rank[i] >= 0)
            nx_row_i64(&r, c_worker, rank[i]);
        assert_int_equal(nx_row_end(&r, &err), 0);
    }
    assert_int_equal(nx_row_close(&r, true, &tables, &err), 0);
}

/* write_ranked_events without ranks. */
static inline void write_events(const char *dir, const sys_event *ev, size_t n, uint64_t max_rows)
{
    write_ranked_events(dir, ev, NULL, n, max_rows);
}

/* dir/<table>.parquet with one row: INT64 columns names[0..n_int), then FLOAT
 * columns names[n_int..n) with values v[...] (as int64 or float). */
static inline void write_row0(const char *dir, const char *table, const char *const *names, size_t n_int, size_t n,
                       const double *v, int rows)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.parquet", dir, table);
    nxpq_column_spec cols[8];
    for (size_t i = 0; i < n; i++)
        cols[i] = (nxpq_column_spec){.name = names[i], .type = i < n_int ? NXPQ_INT64 : NXPQ_FLOAT};
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, n, NULL, &err);
    assert_non_null(w);
    for (int r = 0; r < rows; r++) {
        for (size_t i = 0; i < n; i++) {
            if (i < n_int)
                assert_int_equal(nxpq_put_int64(w, i, (int64_t)v[i] + r), 0);
            else
                assert_int_equal(nxpq_put_float(w, i, (float)v[i]), 0);
        }
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

#endif
