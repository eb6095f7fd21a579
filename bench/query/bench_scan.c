/*
 * bench_scan.c — times the whole-table queries of the viewer's search and area
 * aggregates in-process (no HTTP, no JSON), for bench/query/search_aggregate.py.
 *
 *   bench_scan PROFILE_DIR TABLE FIELD Q FROM START END RUNS THREADS
 *
 * Each run calls nx_search_run (query/search.h: FIELD contains Q, the next
 * match at or after FROM, over TABLE) and nx_aggregate_run (query/aggregate.h:
 * TABLE grouped by FIELD over [START, END], all tracks) with THREADS threads
 * per table (0: min(cores, row groups)). Prints one JSON object: the per-run
 * seconds of each, wall and CPU (all threads, user + system), the search's total, position and the start of the match
 * found, and the aggregate's events and its groups' (key, count, total_ns)
 * sorted by key, so the caller can check both against DuckDB.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/aggregate.h"
#include "query/search.h"

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of every thread of the process: on a shared machine the measure that
 * wall time cannot give, and the sum over the workers that shows what a split costs. */
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static void print_seconds(const char *name, const double *s, int runs)
{
    printf("\"%s\": [", name);
    for (int i = 0; i < runs; i++)
        printf("%s%.6f", i ? ", " : "", s[i]);
    printf("], ");
}

static int cmp_groups(const void *pa, const void *pb)
{
    const nx_aggregate_group *x = pa, *y = pb;
    if (x->null || y->null)
        return x->null - y->null;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The groups as JSON, keys printed as they are (the bench's keys are opcodes: plain ASCII). */
static void print_groups(nx_aggregate *a)
{
    qsort(a->groups, a->n_groups, sizeof *a->groups, cmp_groups);
    printf("\"groups\": [");
    for (size_t i = 0; i < a->n_groups; i++) {
        const nx_aggregate_group *g = &a->groups[i];
        if (g->null)
            printf("%s[null, %" PRIu64 ", %" PRId64 "]", i ? ", " : "", g->count, g->total_ns);
        else
            printf("%s[\"%.*s\", %" PRIu64 ", %" PRId64 "]", i ? ", " : "", (int)g->len, g->s, g->count, g->total_ns);
    }
    printf("]");
}

int main(int argc, char **argv)
{
    if (argc != 10) {
        fprintf(stderr, "usage: bench_scan PROFILE_DIR TABLE FIELD Q FROM START END RUNS THREADS\n");
        return 2;
    }
    const char *dir = argv[1], *tables[1] = {argv[2]};
    int runs = atoi(argv[8]);
    if (runs < 1 || runs > 100) {
        fprintf(stderr, "bench_scan: RUNS is 1 to 100\n");
        return 2;
    }
    nx_search_options so = {.tables = tables, .n_tables = 1, .field = argv[3], .q = argv[4], .q_len = strlen(argv[4]),
                            .from = strtoll(argv[5], NULL, 10), .threads = atoi(argv[9])};
    nx_aggregate_options ao = {.table = argv[2], .start = strtoll(argv[6], NULL, 10), .end = strtoll(argv[7], NULL, 10),
                               .by = argv[3], .top = SIZE_MAX, .threads = so.threads};
    double ts[100], ta[100], cs[100], ca[100];
    nx_search_result r = {0};
    nx_aggregate a = {0};
    nx_error err = {0};
    for (int i = 0; i < runs; i++) {
        nx_search_free(&r);
        nx_aggregate_free(&a);
        double t0 = now(), c0 = cpu();
        if (nx_search_run(dir, &so, &r, &err) != 0) {
            fprintf(stderr, "bench_scan: search: %s\n", err.msg);
            return 1;
        }
        double t1 = now(), c1 = cpu();
        if (nx_aggregate_run(dir, &ao, &a, &err) != 0) {
            fprintf(stderr, "bench_scan: aggregate: %s\n", err.msg);
            return 1;
        }
        ts[i] = t1 - t0;
        cs[i] = c1 - c0;
        ta[i] = now() - t1;
        ca[i] = cpu() - c1;
    }
    printf("{");
    print_seconds("search_s", ts, runs);
    print_seconds("aggregate_s", ta, runs);
    print_seconds("search_cpu_s", cs, runs);
    print_seconds("aggregate_cpu_s", ca, runs);
    printf("\"total\": %" PRIu64 ", \"position\": %" PRIu64 ", \"found_start\": %" PRId64 ", \"events\": %" PRIu64
           ", ",
           r.total, r.position, r.found ? r.start : INT64_MIN, a.events);
    print_groups(&a);
    printf("}\n");
    nx_search_free(&r);
    nx_aggregate_free(&a);
    return 0;
}
