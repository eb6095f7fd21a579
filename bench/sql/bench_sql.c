/*
 * bench_sql.c — the in-process time of an SQL query (src/sql/sql.h), without the
 * process start and the output: bench_sql PATH QUERY RUNS opens PATH once, runs QUERY
 * RUNS times into a CSV answer that is thrown away, and prints one line:
 *   open_ms=<open> first_ms=<first run> median_ms=<median of the later runs> rows=<N>
 * (bench/sql/run.py reads it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sql/sql.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 4 || atoi(argv[3]) < 2) {
        fprintf(stderr, "usage: bench_sql PATH QUERY RUNS (RUNS >= 2)\n");
        return 2;
    }
    int runs = atoi(argv[3]);
    nx_error err = {0};
    double t0 = now_ms();
    nx_sql *db = nx_sql_open(argv[1], NULL, &err);
    double open_ms = now_ms() - t0;
    if (!db) {
        fprintf(stderr, "bench_sql: %s\n", err.msg);
        return 1;
    }
    double *ms = calloc((size_t)runs, sizeof *ms);
    nx_sql_limits lim = {NX_SQL_DEFAULT_TIMEOUT_S, UINT64_MAX};
    nx_sql_answer_info info = {0};
    for (int i = 0; ms && i < runs; i++) {
        nx_strbuf out = NX_STRBUF_INIT;
        t0 = now_ms();
        nx_sql_status st = nx_sql_run_info(db, argv[2], &lim, NX_SQL_CSV, &out, &info, &err);
        ms[i] = now_ms() - t0;
        nx_strbuf_free(&out);
        if (st != NX_SQL_OK) {
            fprintf(stderr, "bench_sql: %s\n", err.msg);
            free(ms);
            nx_sql_close(db);
            return 1;
        }
    }
    nx_sql_close(db);
    if (!ms) {
        fprintf(stderr, "bench_sql: out of memory\n");
        return 1;
    }
    double first = ms[0];
    qsort(ms + 1, (size_t)runs - 1, sizeof *ms, cmp_double);
    printf("open_ms=%.2f first_ms=%.2f median_ms=%.2f rows=%llu\n", open_ms, first, ms[1 + (runs - 1) / 2],
           (unsigned long long)info.rows);
    free(ms);
    return 0;
}
