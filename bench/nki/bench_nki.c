/*
 * bench_nki.c — times the NKI answers in-process (docs/benchmarks.md "nki"):
 *
 *   bench_nki PROFILE_DIR ORDINAL...
 *
 * For a device profile with NKI tables: the first nx_nki_index_get (the index
 * built from the four lookup tables), then per Instruction ordinal the row's
 * read as /event reads it (nx_event_read, every field) and its NKI context from
 * that row (nx_nki_context_of: the cached index's lookups), and one
 * nx_nki_lines_run (the source table). Prints one JSON object: the build's
 * seconds, the median and largest of each per-row step, the source table's
 * seconds, its line count and the Instruction rows it covered, so a run on a
 * small and a large profile shows which costs grow with the Instruction table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/event.h"
#include "query/nki_context.h"
#include "query/nki_index.h"
#include "query/nki_lines.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_nki PROFILE_DIR ORDINAL...\n");
        return 2;
    }
    const char *dir = argv[1];
    size_t n = (size_t)argc - 2;
    double *read_s = calloc(n, sizeof *read_s), *ctx_s = calloc(n, sizeof *ctx_s);
    if (!read_s || !ctx_s)
        return 1;
    nx_error err = {0};
    const nx_nki_index *idx;
    double t0 = now();
    if (nx_nki_index_get(dir, &idx, &err) != 0) {
        fprintf(stderr, "bench_nki: %s\n", err.msg);
        return 1;
    }
    double build_s = now() - t0;
    size_t attributed = 0;
    for (size_t i = 0; i < n; i++) {
        nx_event ev;
        nx_nki_context c;
        t0 = now();
        if (nx_event_read(dir, "Instruction", strtoll(argv[2 + i], NULL, 10), NULL, &ev, &err) != 0) {
            fprintf(stderr, "bench_nki: ordinal %s: %s\n", argv[2 + i], err.msg);
            return 1;
        }
        double t1 = now();
        if (nx_nki_context_of(dir, &ev, &c, &err) != 0) {
            fprintf(stderr, "bench_nki: %s\n", err.msg);
            return 1;
        }
        double t2 = now();
        read_s[i] = t1 - t0;
        ctx_s[i] = t2 - t1;
        attributed += c.has_source;
        nx_nki_context_free(&c);
        nx_event_free(&ev);
    }
    nx_nki_lines lines;
    t0 = now();
    if (nx_nki_lines_run(dir, &lines, &err) != 0) {
        fprintf(stderr, "bench_nki: %s\n", err.msg);
        return 1;
    }
    double lines_s = now() - t0;
    qsort(read_s, n, sizeof *read_s, cmp_double);
    qsort(ctx_s, n, sizeof *ctx_s, cmp_double);
    printf("{\"index_build_s\": %.6f, \"rows\": %zu, \"attributed\": %zu, \"event_read_median_s\": %.6f, "
           "\"event_read_max_s\": %.6f, \"context_median_s\": %.7f, \"context_max_s\": %.7f, "
           "\"source_table_s\": %.4f, \"source_lines\": %zu, \"instructions\": %lld}\n",
           build_s, n, attributed, read_s[n / 2], read_s[n - 1], ctx_s[n / 2], ctx_s[n - 1], lines_s,
           nx_nki_lines_count(&lines), (long long)lines.instructions);
    nx_nki_lines_free(&lines);
    nx_nki_index_release(idx);
    free(read_s);
    free(ctx_s);
    return 0;
}
