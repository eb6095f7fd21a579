/* test_scan_dictionary.c — the reader's dictionary form and column-parallel
 * decoding (parquet.h nxpq_scan_options.dictionary / .threads), and the CSV
 * writer's dictionary texts (csv.h nx_csv_rows_text), against values the test
 * computes itself.
 *
 * The file: 6,000 rows in two row groups of 3,000, pages of at most 100 rows,
 * a 2,000-byte dictionary limit. Rows 0..1499 of each group repeat a few values,
 * later rows are unique, so the first group's string and int64 chunks start
 * with dictionary pages and fall back to PLAIN pages (the writer keeps the rest
 * of the column PLAIN, the second group included); the INT32 column has a small
 * dictionary in both groups; rows 200..399 of the nullable string are all null
 * (whole null pages); one column is null throughout.
 *
 * Checked, for batch sizes that align with pages, straddle the dictionary ->
 * PLAIN switch, and exceed a row group, with 1 and 3 threads:
 *   - every row of every column holds the value the generator wrote, read
 *     through whichever form the batch column is in;
 *   - with the dictionary option, some batch columns are in dictionary form and
 *     some are not (both paths ran); dict_index < dict_n; a column's two row
 *     groups' dictionaries have different dict_id, batches of one group the same;
 *   - without the option no column is in dictionary form;
 *   - nx_csv_rows_text over dictionary-form batches, with texts built for every
 *     other dictionary column (the rest formatted from the dictionary per row),
 *     and a lead column of hostile strings, writes exactly the bytes of
 *     nx_csv_text + nx_csv_cell per cell over the plain batches.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "parquet/parquet.h"
#include "query/engine/csv.h"

#include "csv_memory.h"

enum { ROWS = 6000, GROUP = 3000, REPEAT = 1500, N_COLS = 6 };

static char path[64];

/* The generator: row r's value of each column (NULL / false for null). */
static const char *s_req(int64_t r, char *buf)
{
    int64_t g = r % GROUP;
    if (g < REPEAT)
        snprintf(buf, 32, "k%d", (int)(g % 7));
    else
        snprintf(buf, 32, "u%lld", (long long)r);
    return buf;
}

static const char *s_opt(int64_t r, char *buf)
{
    int64_t g = r % GROUP;
    if (r % 5 == 0 || (g >= 200 && g < 400))
        return NULL;
    if (g < REPEAT)
        snprintf(buf, 32, "%s%d", g % 2 ? "=x" : "a,\"b\"", (int)(g % 3));
    else
        snprintf(buf, 32, "-v%lld", (long long)r);
    return buf;
}

static bool i_opt(int64_t r, int64_t *v)
{
    int64_t g = r % GROUP;
    if (r % 3 == 0)
        return false;
    *v = g < REPEAT ? (g % 4) * 1000000007LL - 2000000000LL : r * 7919;
    return true;
}

static int32_t i32_req(int64_t r)
{
    return (int32_t)(r % 11) - 5 + (r >= GROUP ? 100 : 0);
}

static const nxpq_column_spec COLS[N_COLS] = {
    {"s_req", NXPQ_STRING, false, NXPQ_ENCODE_DICTIONARY}, {"s_opt", NXPQ_STRING, true, NXPQ_ENCODE_DICTIONARY},
    {"i_opt", NXPQ_INT64, true, NXPQ_ENCODE_DICTIONARY},   {"i32", NXPQ_INT32, false, NXPQ_ENCODE_DICTIONARY},
    {"none", NXPQ_STRING, true, NXPQ_ENCODE_DICTIONARY},   {"t", NXPQ_INT64, false, NXPQ_ENCODE_PLAIN},
};

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/nx_scan_dictXXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.row_group_rows = GROUP;
    o.page_rows = 100;
    o.dictionary_max_bytes = 2000;
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, COLS, N_COLS, &o, &err);
    assert_non_null(w);
    for (int64_t r = 0; r < ROWS; r++) {
        char b1[32], b2[32];
        const char *a = s_req(r, b1), *b = s_opt(r, b2);
        int64_t v;
        assert_int_equal(nxpq_put_string(w, 0, a, strlen(a)), 0);
        assert_int_equal(b ? nxpq_put_string(w, 1, b, strlen(b)) : nxpq_put_null(w, 1), 0);
        assert_int_equal(i_opt(r, &v) ? nxpq_put_int64(w, 2, v) : nxpq_put_null(w, 2), 0);
        assert_int_equal(nxpq_put_int32(w, 3, i32_req(r)), 0);
        assert_int_equal(nxpq_put_null(w, 4), 0);
        assert_int_equal(nxpq_put_int64(w, 5, r), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!getenv("KEEP")) unlink(path); else fprintf(stderr, "%s\n", path);
    return 0;
}

/* Row i of a batch column as the test reads it: *present, and the string or
 * integer, from either form. */
static bool col_string(const nxpq_column_data *c, size_t i, const char **s, size_t *len)
{
    if (c->valid && !c->valid[i])
        return false;
    if (c->dict_index) {
        assert_true(c->dict_index[i] < c->dict_n);
        *s = c->dict_strs[c->dict_index[i]].ptr;
        *len = c->dict_strs[c->dict_index[i]].len;
    } else {
        *s = c->data + c->offsets[i];
        *len = (size_t)(c->offsets[i + 1] - c->offsets[i]);
    }
    return true;
}

static bool col_int(const nxpq_column_data *c, size_t i, int64_t *v)
{
    if (c->valid && !c->valid[i])
        return false;
    if (c->dict_index) {
        assert_true(c->dict_index[i] < c->dict_n);
        uint32_t d = c->dict_index[i];
        *v = c->type == NXPQ_INT64 ? c->dict_values.i64[d] : c->dict_values.i32[d];
    } else {
        *v = c->type == NXPQ_INT64 ? c->values.i64[i] : c->values.i32[i];
    }
    return true;
}

static void want_string(const nxpq_column_data *c, size_t i, const char *want)
{
    const char *s;
    size_t len;
    bool present = col_string(c, i, &s, &len);
    assert_int_equal(present, want != NULL);
    if (want) {
        assert_int_equal(len, strlen(want));
        assert_memory_equal(s, want, len);
    }
}

static void scan_and_check(size_t batch_rows, int threads, bool dictionary)
{
    nx_error err;
    nxpq_reader *r = nxpq_reader_open(path, &err);
    assert_non_null(r);
    nxpq_scan_options o = {.batch_rows = batch_rows, .threads = threads, .dictionary = dictionary};
    nxpq_scan *s = nxpq_scan_open(r, &o, &err);
    assert_non_null(s);
    const nxpq_batch *b;
    int rc;
    int64_t next = 0;
    size_t dict_cols = 0, plain_cols = 0;
    uint64_t group_id[2][4] = {{0}};
    while ((rc = nxpq_scan_next(s, &b, &err)) > 0) {
        assert_int_equal(b->first_row, next);
        assert_int_equal(b->n_columns, N_COLS);
        for (size_t c = 0; c < 4; c++) {
            const nxpq_column_data *col = &b->columns[c];
            if (col->dict_index) {
                dict_cols++;
                uint64_t *id = &group_id[b->first_row / GROUP][c];
                if (*id == 0)
                    *id = col->dict_id;
                assert_int_equal(col->dict_id, *id);
            } else {
                plain_cols++;
            }
        }
        for (size_t i = 0; i < b->n_rows; i++) {
            int64_t row = b->first_row + (int64_t)i, v, want;
            char buf[32];
            want_string(&b->columns[0], i, s_req(row, buf));
            want_string(&b->columns[1], i, s_opt(row, buf));
            bool present = i_opt(row, &want);
            assert_int_equal(col_int(&b->columns[2], i, &v), present);
            if (present)
                assert_int_equal(v, want);
            assert_true(col_int(&b->columns[3], i, &v));
            assert_int_equal(v, i32_req(row));
            want_string(&b->columns[4], i, NULL);
            assert_true(col_int(&b->columns[5], i, &v));
            assert_int_equal(v, row);
            assert_null(b->columns[5].dict_index); /* PLAIN-only column */
        }
        next += (int64_t)b->n_rows;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(next, ROWS);
    if (dictionary) {
        assert_true(dict_cols > 0);
        assert_true(plain_cols > 0);
        for (size_t c = 0; c < 4; c++)
            if (group_id[0][c] && group_id[1][c])
                assert_true(group_id[0][c] != group_id[1][c]);
        assert_true(group_id[0][3] != 0 && group_id[1][3] != 0); /* i32: never falls back */
        if (batch_rows <= REPEAT) /* a batch inside the repeating rows: dictionary form */
            assert_true(group_id[0][0] != 0);
    } else {
        assert_int_equal(dict_cols, 0);
    }
    nxpq_scan_close(s);
    nxpq_reader_close(r);
}

static void test_values_every_form(void **state)
{
    (void)state;
    static const size_t batches[] = {7, 100, 250, 1499, 1501, 5000, 65536};
    for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
        for (int threads = 1; threads <= 3; threads += 2) {
            scan_and_check(batches[k], threads, true);
            scan_and_check(batches[k], threads, false);
        }
    }
}

/* The lead column: hostile track names (quotes, commas, a formula, a long one). */
static const char *const LEADS[] = {"tensor", "", "=cmd", "a,b", "q\"q", "-3",
                                    "a very long track name that is longer than thirty-two bytes"};
#define N_LEADS (sizeof LEADS / sizeof LEADS[0])

static void test_rows_text_equal_cells(void **state)
{
    (void)state;
    static const size_t batches[] = {100, 250, 5000};
    nxpq_str lead_strs[N_LEADS];
    for (size_t i = 0; i < N_LEADS; i++)
        lead_strs[i] = (nxpq_str){LEADS[i], strlen(LEADS[i])};
    for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
        nx_error err;
        nxpq_reader *r1 = nxpq_reader_open(path, &err), *r2 = nxpq_reader_open(path, &err);
        assert_non_null(r1);
        assert_non_null(r2);
        nxpq_scan_options o1 = {.batch_rows = batches[k], .dictionary = true, .threads = 2};
        nxpq_scan_options o2 = {.batch_rows = batches[k]};
        nxpq_scan *s1 = nxpq_scan_open(r1, &o1, &err), *s2 = nxpq_scan_open(r2, &o2, &err);
        assert_non_null(s1);
        assert_non_null(s2);
        nx_csv_dict_text texts[N_COLS], lead;
        memset(texts, 0, sizeof texts);
        memset(&lead, 0, sizeof lead);
        assert_int_equal(nx_csv_dict_text_build_strings(&lead, lead_strs, N_LEADS, true), 0);
        mem fast, plain;
        mem_open(&fast);
        mem_open(&plain);
        const nxpq_batch *b1, *b2;
        int rc1, rc2;
        size_t n_batches = 0;
        while ((rc1 = nxpq_scan_next(s1, &b1, &err)) > 0) {
            n_batches++;
            rc2 = nxpq_scan_next(s2, &b2, &err);
            assert_int_equal(rc2, 1);
            assert_int_equal(b1->n_rows, b2->n_rows);
            const nxpq_column_data *cols[N_COLS + 1];
            const nx_csv_dict_text *tp[N_COLS + 1];
            for (size_t c = 0; c < N_COLS; c++) {
                cols[c] = &b1->columns[c];
                tp[c] = NULL;
                /* Texts for every other dictionary column (alternating per batch): the
                 * others take the per-row dictionary paths. */
                if (cols[c]->dict_index && (c + n_batches) % 2 == 0 &&
                    (texts[c].id == cols[c]->dict_id || nx_csv_dict_text_build(&texts[c], cols[c], true) == 0))
                    tp[c] = &texts[c];
            }
            cols[N_COLS] = NULL; /* an absent column: an empty field */
            tp[N_COLS] = NULL;
            uint32_t *rows = malloc(b1->n_rows * sizeof *rows), *lead_idx = malloc(b1->n_rows * sizeof *lead_idx);
            assert_non_null(rows);
            assert_non_null(lead_idx);
            size_t n = 0;
            for (size_t i = 0; i < b1->n_rows; i++) {
                if (i % 4 == 3)
                    continue; /* a row selection, as a window keeps */
                rows[n] = (uint32_t)i;
                lead_idx[n++] = (uint32_t)((b1->first_row + (int64_t)i) % N_LEADS);
            }
            nx_csv_rows_text(&fast.c, &lead, lead_idx, cols, tp, N_COLS + 1, rows, n);
            for (size_t j = 0; j < n; j++) {
                nx_csv_text(&plain.c, LEADS[lead_idx[j]], strlen(LEADS[lead_idx[j]]));
                for (size_t c = 0; c < N_COLS; c++)
                    nx_csv_cell(&plain.c, &b2->columns[c], rows[j]);
                nx_csv_null(&plain.c);
                nx_csv_end_row(&plain.c);
            }
            free(rows);
            free(lead_idx);
        }
        assert_int_equal(rc1, 0);
        assert_int_equal(nxpq_scan_next(s2, &b2, &err), 0);
        char *a = mem_close(&fast), *b = mem_close(&plain);
        assert_true(fast.len > 100000);
        assert_int_equal(fast.len, plain.len);
        assert_memory_equal(a, b, plain.len);
        free(a);
        free(b);
        for (size_t c = 0; c < N_COLS; c++)
            nx_csv_dict_text_free(&texts[c]);
        nx_csv_dict_text_free(&lead);
        nxpq_scan_close(s1);
        nxpq_scan_close(s2);
        nxpq_reader_close(r1);
        nxpq_reader_close(r2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_every_form),
        cmocka_unit_test(test_rows_text_equal_cells),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
