/* test_window.c — src/query/engine/window.h's fast paths against the plain rules:
 *   - sampling: the sampler's cached bucket lookup (events in start order rarely
 *     cross a bucket boundary) gives the same kept events as an independent
 *     brute force of the rule in window.h (bucket = floor((clamp(start) - S) * W / L),
 *     keep the longest, then earliest start, then earliest row), for events in
 *     sorted and in shuffled order, several widths and awkward window lengths;
 *   - track ids: a window query over an Instruction file whose engine names are
 *     0..20 bytes long and differ in one byte only (the window's short-name cache
 *     keys names <= 16 bytes by overlapping loads) returns, for every row, the name
 *     that row holds, and ids in order of first appearance; the same in dictionary
 *     form (ids kept per combination of dictionary entries), with a timeline_track
 *     column that is all null in the first row groups, then null, empty or a name,
 *     over row groups with dictionaries of their own.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "query/engine/csv.h"
#include "profile/profile_table.h"
#include "query/engine/window.h"

#include "csv_memory.h"
#include "test_rand.h"


/* ------------------------------------------------------------- sampling -- */

typedef struct ev {
    uint32_t track;
    int64_t start, end, ord;
} ev;


static int cmp_ord(const void *a, const void *b)
{
    int64_t x = ((const ev *)a)->ord, y = ((const ev *)b)->ord;
    return x < y ? -1 : x > y;
}

/* The rule of window.h, written independently: per (track, bucket) the best event. */
static size_t brute(const ev *e, size_t n, int64_t S, int64_t E, uint32_t W, uint32_t n_tracks, ev *out)
{
    size_t cells = (size_t)n_tracks * W;
    ev *best = calloc(cells, sizeof *best);
    uint8_t *has = calloc(cells, 1);
    assert_non_null(best);
    assert_non_null(has);
    __int128 L = (__int128)E - S + 1;
    for (size_t i = 0; i < n; i++) {
        int64_t c = e[i].start < S ? S : e[i].start > E ? E : e[i].start;
        size_t b = (size_t)(((__int128)c - S) * W / L);
        size_t k = (size_t)e[i].track * W + b;
        __int128 d = (__int128)e[i].end - e[i].start, bd = (__int128)best[k].end - best[k].start;
        bool win = !has[k] || d > bd || (d == bd && (e[i].start < best[k].start ||
                                                     (e[i].start == best[k].start && e[i].ord < best[k].ord)));
        if (win) {
            best[k] = e[i];
            has[k] = 1;
        }
    }
    size_t m = 0;
    for (size_t k = 0; k < cells; k++)
        if (has[k])
            out[m++] = best[k];
    qsort(out, m, sizeof *out, cmp_ord);
    free(best);
    free(has);
    return m;
}

static void check_sampler(const ev *e, size_t n, int64_t S, int64_t E, uint32_t W, uint32_t n_tracks)
{
    nx_error err;
    nx_sampler *s = nx_sampler_new(S, E, W, &err);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(nx_sampler_offer(s, e[i].track, e[i].start, e[i].end, e[i].ord, 0, &err), 0);
    size_t got_n;
    const nx_sample *got = nx_sampler_result(s, &got_n, &err);
    ev *want = calloc(n ? n : 1, sizeof *want);
    assert_non_null(want);
    size_t want_n = brute(e, n, S, E, W, n_tracks, want);
    assert_int_equal(got_n, want_n);
    for (size_t i = 0; i < want_n; i++) {
        assert_int_equal(got[i].track, want[i].track);
        assert_int_equal(got[i].start, want[i].start);
        assert_int_equal(got[i].end, want[i].end);
        assert_int_equal(got[i].ordinal, want[i].ord);
        assert_int_equal(got[i].bucket, nx_sampler_bucket(s, want[i].start));
    }
    free(want);
    nx_sampler_free(s);
}

static void test_sampler_matches_rule(void **state)
{
    (void)state;
    enum { N = 20000 };
    ev *e = calloc(N, sizeof *e);
    assert_non_null(e);
    /* Windows with lengths that do not divide by the width, one near the int64 ends. */
    const int64_t windows[][2] = {{1000, 1000 + 999999}, {-5000, 77777}, {0, 0}, {INT64_MAX - 100000, INT64_MAX},
                                  {INT64_MIN, INT64_MIN + 123456}};
    const uint32_t widths[] = {1, 7, 1920, 100000};
    for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++) {
        int64_t S = windows[wi][0], E = windows[wi][1];
        __int128 L = (__int128)E - S + 1;
        for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
            /* Sorted by start (file order), few distinct durations (ties), some
             * events starting before the window. */
            int64_t t = S;
            for (size_t i = 0; i < N; i++) {
                __int128 step = L / N + 1;
                int64_t adv = (int64_t)(next_rand() % (uint64_t)step);
                if (i == 0 && S > INT64_MIN + 1000)
                    t = S - 500; /* starts before the window: bucket 0 */
                else if ((__int128)t + adv <= E)
                    t += adv;
                e[i].track = (uint32_t)(next_rand() % 3);
                e[i].start = t;
                int64_t d = (int64_t)(next_rand() % 4) * 10;
                e[i].end = t > INT64_MAX - d ? INT64_MAX : t + d;
                e[i].ord = (int64_t)i;
            }
            check_sampler(e, N, S, E, widths[k], 3);
            /* Same events offered in shuffled order: the cache must not matter. */
            for (size_t i = N - 1; i > 0; i--) {
                size_t j = (size_t)(next_rand() % (i + 1));
                ev tmp = e[i];
                e[i] = e[j];
                e[j] = tmp;
            }
            check_sampler(e, N, S, E, widths[k], 3);
        }
    }
    free(e);
}

/* Names 0..20 bytes ("", "a", "ab", ...), each also with one byte changed to 'Z'
 * at every position: all distinct. */
static size_t make_names(char names[][24])
{
    size_t n = 0;
    for (size_t len = 0; len <= 20; len++) {
        char base[24];
        for (size_t j = 0; j < len; j++)
            base[j] = (char)('a' + j);
        base[len] = '\0';
        memcpy(names[n++], base, len + 1);
        for (size_t pos = 0; pos < len; pos++) {
            memcpy(names[n], base, len + 1);
            names[n++][pos] = 'Z';
        }
    }
    return n;
}

/* The track rule of Instruction: timeline_track when non-null and non-empty, else engine. */
static const char *instruction_track(const char *ttrack, const char *engine)
{
    return ttrack && *ttrack ? ttrack : engine;
}

static void test_window_track_names(void **state)
{
    (void)state;
    static char names[300][24];
    size_t n_names = make_names(names);
    char dir[] = "/tmp/nxprof-test-query-fast-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/Instruction.parquet", dir);
    nxpq_column_spec cols[] = {
        {.name = "start_ts", .type = NXPQ_INT64},
        {.name = "end_ts", .type = NXPQ_INT64},
        {.name = "engine", .type = NXPQ_STRING, .nullable = true},
        {.name = "timeline_track", .type = NXPQ_STRING, .nullable = true},
    };
    nxpq_writer_options wopt;
    nxpq_writer_options_init(&wopt);
    wopt.row_group_rows = 700;
    wopt.page_rows = 100;
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, 4, &wopt, &err);
    assert_non_null(w);
    enum { ROWS = 5000 };
    static const char *const ttracks[] = {NULL, "", "qSync", "qPE0", NULL, NULL};
    size_t which[ROWS];
    const char *tt[ROWS];
    for (size_t i = 0; i < ROWS; i++) {
        /* Every name in order first (ids = first appearance), then a mix. */
        which[i] = i < n_names ? i : (size_t)(next_rand() % n_names);
        tt[i] = i < 1400 ? NULL : ttracks[next_rand() % 6];
        assert_int_equal(nxpq_put_int64(w, 0, (int64_t)i * 10), 0);
        assert_int_equal(nxpq_put_int64(w, 1, (int64_t)i * 10 + 5), 0);
        assert_int_equal(nxpq_put_string(w, 2, names[which[i]], strlen(names[which[i]])), 0);
        assert_int_equal(tt[i] ? nxpq_put_string(w, 3, tt[i], strlen(tt[i])) : nxpq_put_null(w, 3), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);

    nx_profile_table *t = NULL;
    assert_int_equal(nx_profile_table_open(dir, "Instruction", &t, &err), 0);
    for (int dict = 0; dict < 2; dict++) {
        nx_window_options wo = {.start = 0, .end = ROWS * 10, .batch_rows = 333, .dictionary = dict};
        nx_window *q = nx_window_open(t, &wo, &err);
        assert_non_null(q);
        nx_window_batch b;
        size_t seen = 0, both = 0, engine_only = 0;
        int rc;
        while ((rc = nx_window_next(q, &b, &err)) > 0) {
            /* The projection: start_ts, end_ts, then the track's timeline_track, engine. */
            bool tt_dict = b.batch->columns[2].dict_index != NULL, engine_dict = b.batch->columns[3].dict_index != NULL;
            both += tt_dict && engine_dict;
            engine_only += !tt_dict && engine_dict;
            for (size_t k = 0; k < b.n_rows; k++) {
                size_t row = (size_t)b.batch->first_row + b.rows[k];
                const char *want = instruction_track(tt[row], names[which[row]]);
                size_t len;
                const char *got = nx_window_track_name(q, b.track[k], &len);
                assert_int_equal(len, strlen(want));
                assert_memory_equal(got, want, len);
                if (row < n_names)
                    assert_int_equal(b.track[k], row); /* first appearance order */
                seen++;
            }
        }
        assert_int_equal(rc, 0);
        assert_int_equal(seen, ROWS);
        assert_int_equal(nx_window_track_count(q), n_names + 2);
        /* In dictionary form: batches with both columns so, and the first ones with
         * timeline_track all null (plain), so both ways of keying the ids ran. */
        assert_true(dict ? both > 5 && engine_only > 2 : both + engine_only == 0);
        nx_window_close(q);
    }
    nx_profile_table_close(t);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampler_matches_rule),
        cmocka_unit_test(test_window_track_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
