/*
 * bench_query.c — times the sampled window query (the pass that picks what the
 * viewer draws and a sampled export writes) without any CSV writing, for
 * bench/query/run.mjs.
 *
 *   bench_query PROFILE_DIR TABLE START END WIDTH RUNS [all]
 *
 * Each run calls nx_sampled_pass (src/query/engine/sampled_pass.h) over [START, END]
 * (inclusive ns), exactly as `nxprof export-csv`'s first pass and the server's
 * timeline do: from the table's timeline index when it has one, else the
 * two-thread scan (NXPROF_NO_TIMELINE_INDEX=1 forces the scan).
 * With "all", each run instead scans the window on one thread projecting every
 * decodable column of the table (the cost of decoding what a full export reads)
 * and samples the rows, still without CSV.
 * Prints one JSON object: the per-run seconds, the number of samples, rows in
 * the window, tracks, pages read of the last run, whether the index answered,
 * and an FNV-1a checksum over the samples' (track name, start, end, depth for
 * a table whose events nest, ordinal) so
 * the caller can see every run (and both paths) returned the same thing.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/profile_table.h"
#include "query/engine/sampled_pass.h"
#include "query/engine/window.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n);

static uint64_t sample_sum(uint64_t sum, const char *name, size_t len, const nx_sample *r, const uint32_t *depth)
{
    sum = fnv(sum, name, len);
    sum = fnv(sum, &r->start, sizeof r->start);
    sum = fnv(sum, &r->end, sizeof r->end);
    if (depth)
        sum = fnv(sum, depth, sizeof *depth);
    return fnv(sum, &r->ordinal, sizeof r->ordinal);
}

/* One run of the sampled pass; fills the result figures. */
static int run_sampled(const char *dir, const char *table, int64_t start, int64_t end, uint32_t width, size_t *n_samples,
                       uint64_t *in_window, size_t *n_tracks, nxpq_scan_stats *st, uint64_t *sum, bool *indexed,
                       double *seconds)
{
    nx_error err = {0};
    nx_sampled sp;
    double t0 = now();
    if (nx_sampled_pass(dir, table, start, end, width, &sp, &err) != 0) {
        fprintf(stderr, "bench_query: %s\n", err.msg);
        return -1;
    }
    *seconds = now() - t0;
    *n_samples = sp.n;
    *in_window = sp.in_window;
    *n_tracks = sp.n_tracks;
    *st = sp.stats;
    *indexed = sp.index != NULL;
    *sum = 1469598103934665603ull;
    for (size_t i = 0; i < sp.n; i++)
        *sum = sample_sum(*sum, sp.names[sp.samples[i].track], sp.name_len[sp.samples[i].track], &sp.samples[i],
                          sp.depth ? &sp.depth[i] : NULL);
    nx_sampled_free(&sp);
    return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 7 && !(argc == 8 && strcmp(argv[7], "all") == 0)) {
        fprintf(stderr, "usage: bench_query PROFILE_DIR TABLE START END WIDTH RUNS [all]\n");
        return 2;
    }
    const char *dir = argv[1], *table = argv[2];
    int64_t start = strtoll(argv[3], NULL, 10), end = strtoll(argv[4], NULL, 10);
    uint32_t width = (uint32_t)strtoul(argv[5], NULL, 10);
    int runs = atoi(argv[6]);
    if (runs < 1 || width < 1 || end < start) {
        fprintf(stderr, "bench_query: bad arguments\n");
        return 2;
    }
    printf("{\"seconds\":[");
    size_t n_samples = 0, n_tracks = 0;
    uint64_t in_window = 0, sum = 0;
    nxpq_scan_stats st = {0};
    bool indexed = false;
    for (int run = 0; run < runs; run++) {
        if (argc == 7) {
            double secs;
            if (run_sampled(dir, table, start, end, width, &n_samples, &in_window, &n_tracks, &st, &sum, &indexed,
                            &secs) != 0)
                return 1;
            printf("%s%.6f", run ? "," : "", secs);
            continue;
        }
        nx_error err = {0};
        double t0 = now();
        nx_profile_table *t = NULL;
        if (nx_profile_table_open(dir, table, &t, &err) != 0) {
            fprintf(stderr, "bench_query: %s\n", err.msg);
            return 1;
        }
        const char *cols[512];
        size_t n_cols = 0;
        for (size_t i = 0; argc == 8 && i < nx_profile_table_num_columns(t) && n_cols < 512; i++)
            if (nx_profile_table_column(t, i)->type != NXPQ_UNSUPPORTED)
                cols[n_cols++] = nx_profile_table_column(t, i)->name;
        nx_window_options wo = {.start = start, .end = end, .columns = cols, .n_columns = n_cols};
        nx_window *w = nx_window_open(t, &wo, &err);
        nx_sampler *s = w ? nx_sampler_new(start, end, width, &err) : NULL;
        if (!s) {
            fprintf(stderr, "bench_query: %s\n", err.msg);
            return 1;
        }
        nx_window_batch b;
        int rc;
        in_window = 0;
        while ((rc = nx_window_next(w, &b, &err)) > 0) {
            in_window += b.n_rows;
            if (nx_sampler_add(s, &b, &err) < 0) {
                rc = -1;
                break;
            }
        }
        const nx_sample *res = rc == 0 ? nx_sampler_result(s, &n_samples, &err) : NULL;
        if (rc < 0 || n_samples == SIZE_MAX) {
            fprintf(stderr, "bench_query: %s\n", err.msg);
            return 1;
        }
        double t1 = now();
        nx_window_stats(w, &st);
        n_tracks = nx_window_track_count(w);
        sum = 1469598103934665603ull;
        for (size_t i = 0; i < n_samples; i++) {
            size_t len;
            const char *name = nx_window_track_name(w, res[i].track, &len);
            sum = sample_sum(sum, name, len, &res[i], NULL);
        }
        nx_sampler_free(s);
        nx_window_close(w);
        nx_profile_table_close(t);
        printf("%s%.6f", run ? "," : "", t1 - t0);
    }
    printf("],\"samples\":%zu,\"rows_in_window\":%" PRIu64 ",\"tracks\":%zu,\"pages_read\":%" PRIu64
           ",\"pages_total\":%" PRIu64 ",\"index\":%s,\"checksum\":\"%016" PRIx64 "\"}\n",
           n_samples, in_window, n_tracks, st.pages_read, st.pages_total, indexed ? "true" : "false", sum);
    return 0;
}
