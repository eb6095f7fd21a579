/*
 * test_parquet_dictionary.c — caller-known dictionaries (nxpq_set_dictionary_*,
 * nxpq_put_dict_masked) against the ordinary puts.
 *
 * parquet.h promises that a column written as indices into a caller dictionary
 * gives the same file, byte for byte, as the ordinary puts of the values the
 * indices stand for. Each case writes one file each way from the same key
 * sequence (keys -> per-key values computed here: repeated strings, empty and
 * long strings, null entries, duplicated entries, ints with nulls, an INT32
 * column) with the same batches, compares the files' bytes, and reads the
 * dictionary-written file back, checking every value against the key tables.
 * Cases cover small pages, several row groups, a dictionary limit small enough
 * to force the PLAIN fallback in the middle of a chunk, the PLAIN encoding
 * preference, inline and threaded encoding, and files without a page index.
 * A column of all-distinct values checks that the dictionary gives way to
 * PLAIN (parquet.h, dictionary_skip_distinct) the same way in both. Refusals: ordinary puts into a dictionary column, a dictionary set after the
 * first row, an index past the end, a null in a required column, an INT32
 * entry out of range (only when a row uses it).
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

#include "parquet/parquet.h"

enum { C_TS, C_STR, C_REQ_STR, C_I64, C_I32, C_PLAIN_STR, C_UNIQ, N_COLS };
#define N_KEYS 700
#define ROWS 20000

static char key_text[N_KEYS][400];
static nxpq_str key_str[N_KEYS];      /* C_STR, C_PLAIN_STR: NULL ptr = null */
static nxpq_str key_req[N_KEYS];      /* C_REQ_STR: never null, few distinct */
static int64_t key_i64[N_KEYS];
static uint8_t key_i64_valid[N_KEYS];
static int64_t key_i32[N_KEYS];
static int64_t uniq[ROWS];            /* C_UNIQ: row r is entry r, all distinct (dictionary gives way) */

static void build_keys(void)
{
    static const char *const engines[] = {"tensor", "vector", "scalar", "gpsimd", "sync"};
    for (int k = 0; k < N_KEYS; k++) {
        char *t = key_text[k];
        if (k % 23 == 5) {
            key_str[k] = (nxpq_str){NULL, 0};
        } else if (k % 19 == 3) {
            key_str[k] = (nxpq_str){t, 0};                              /* empty, not null */
        } else if (k % 97 == 7) {
            memset(t, 'x', 350);
            t[0] = (char)('a' + k % 26);
            key_str[k] = (nxpq_str){t, 350};
        } else {
            /* about 200 distinct values over 700 keys: entries repeat */
            key_str[k] = (nxpq_str){t, (size_t)sprintf(t, "op_%d\xc3\xa9", (k * 7) % 211)};
        }
        key_req[k] = (nxpq_str){engines[k % 5], strlen(engines[k % 5])};
        key_i64_valid[k] = k % 13 != 4;
        key_i64[k] = k % 31 == 2 ? INT64_MIN : k % 37 == 2 ? INT64_MAX : (int64_t)(k % 150) * 4096 - 100000;
        key_i32[k] = (int64_t)(k % 90) - 45;
    }
    for (int64_t r = 0; r < ROWS; r++)
        uniq[r] = r * 7919 - 3;
}

/* The key of row r: a skewed, repeating sequence that reaches every key. */
static uint32_t row_key(int64_t r)
{
    uint64_t x = (uint64_t)r * 2654435761u;
    return (uint32_t)(r % 5 == 0 ? (uint64_t)r % N_KEYS : (x >> 7) % (N_KEYS / 4 + (uint64_t)(r / 3000) * 60));
}

static const nxpq_column_spec specs[N_COLS] = {
    {"ts", NXPQ_INT64, false, NXPQ_ENCODE_DELTA},
    {"str", NXPQ_STRING, true, NXPQ_ENCODE_AUTO},
    {"req_str", NXPQ_STRING, false, NXPQ_ENCODE_AUTO},
    {"i64", NXPQ_INT64, true, NXPQ_ENCODE_AUTO},
    {"i32", NXPQ_INT32, true, NXPQ_ENCODE_DICTIONARY},
    {"plain_str", NXPQ_STRING, true, NXPQ_ENCODE_PLAIN},
    {"uniq", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
};

/* Some rows are null through the mask rather than through their entry. */
static bool row_masked(int64_t r)
{
    return r % 29 == 11;
}

static void write_file(const char *path, const nxpq_writer_options *o, bool dict)
{
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, specs, N_COLS, o, &err);
    assert_non_null(w);
    if (dict) {
        assert_int_equal(nxpq_set_dictionary_strings(w, C_STR, key_str, N_KEYS), 0);
        assert_int_equal(nxpq_set_dictionary_strings(w, C_REQ_STR, key_req, N_KEYS), 0);
        assert_int_equal(nxpq_set_dictionary_int64(w, C_I64, key_i64, key_i64_valid, N_KEYS), 0);
        assert_int_equal(nxpq_set_dictionary_int64(w, C_I32, key_i32, NULL, N_KEYS), 0);
        assert_int_equal(nxpq_set_dictionary_strings(w, C_PLAIN_STR, key_str, N_KEYS), 0);
        assert_int_equal(nxpq_set_dictionary_int64(w, C_UNIQ, uniq, NULL, ROWS), 0);
    }
    enum { B = 777 };   /* odd batches: page cuts fall inside them */
    static int64_t ts[B], i64[B];
    static uint32_t keys[B], rows[B];
    static uint8_t mask[B], i64_valid[B];
    static nxpq_str strs[B], reqs[B];
    for (int64_t r0 = 0; r0 < ROWS; r0 += B) {
        size_t n = ROWS - r0 < B ? (size_t)(ROWS - r0) : B;
        for (size_t i = 0; i < n; i++) {
            int64_t r = r0 + (int64_t)i;
            uint32_t k = row_key(r);
            ts[i] = 1000 + r * 7;
            keys[i] = k;
            rows[i] = (uint32_t)r;
            mask[i] = !row_masked(r);
            strs[i] = mask[i] ? key_str[k] : (nxpq_str){NULL, 0};
            reqs[i] = key_req[k];
        }
        assert_int_equal(nxpq_put_int64_array(w, C_TS, ts, n), 0);
        if (dict) {
            assert_int_equal(nxpq_put_dict_masked(w, C_STR, keys, mask, n), 0);
            assert_int_equal(nxpq_put_dict_masked(w, C_REQ_STR, keys, NULL, n), 0);
            assert_int_equal(nxpq_put_dict_masked(w, C_I64, keys, mask, n), 0);
            assert_int_equal(nxpq_put_dict_masked(w, C_I32, keys, mask, n), 0);
            assert_int_equal(nxpq_put_dict_masked(w, C_PLAIN_STR, keys, mask, n), 0);
            assert_int_equal(nxpq_put_dict_masked(w, C_UNIQ, rows, NULL, n), 0);
        } else {
            assert_int_equal(nxpq_put_string_array(w, C_STR, strs, n), 0);
            assert_int_equal(nxpq_put_string_array(w, C_REQ_STR, reqs, n), 0);
            for (size_t i = 0; i < n; i++) {
                i64[i] = key_i64[keys[i]];
                i64_valid[i] = mask[i] && key_i64_valid[keys[i]];
            }
            assert_int_equal(nxpq_put_int64_masked(w, C_I64, i64, i64_valid, n), 0);
            for (size_t i = 0; i < n; i++)
                i64[i] = key_i32[keys[i]];
            assert_int_equal(nxpq_put_int64_masked(w, C_I32, i64, mask, n), 0);
            assert_int_equal(nxpq_put_string_array(w, C_PLAIN_STR, strs, n), 0);
            assert_int_equal(nxpq_put_int64_array(w, C_UNIQ, uniq + r0, n), 0);
        }
        assert_int_equal(nxpq_end_rows(w, n), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static bool str_eq(const nxpq_column_data *c, size_t i, const nxpq_str *want)
{
    size_t len = (size_t)(c->offsets[i + 1] - c->offsets[i]);
    return len == want->len && memcmp(c->data + c->offsets[i], want->ptr, len) == 0;
}

/* Every value of the dictionary-written file, from the key tables. */
static void check_values(const char *path)
{
    nx_error err;
    nxpq_reader *rd = nxpq_reader_open(path, &err);
    assert_non_null(rd);
    assert_int_equal(nxpq_reader_num_rows(rd), ROWS);
    nxpq_scan_options so = {.batch_rows = 1000};
    nxpq_scan *sc = nxpq_scan_open(rd, &so, &err);
    assert_non_null(sc);
    const nxpq_batch *b;
    int64_t r = 0;
    int rc;
    while ((rc = nxpq_scan_next(sc, &b, &err)) == 1) {
        for (size_t i = 0; i < b->n_rows; i++, r++) {
            uint32_t k = row_key(r);
            bool m = row_masked(r);
            const nxpq_column_data *c = b->columns;
            assert_int_equal(c[C_TS].values.i64[i], 1000 + r * 7);
            for (int col = C_STR; col <= C_PLAIN_STR; col += C_PLAIN_STR - C_STR) {
                bool present = !c[col].valid || c[col].valid[i];
                assert_int_equal(present, !m && key_str[k].ptr != NULL);
                if (present)
                    assert_true(str_eq(&c[col], i, &key_str[k]));
            }
            assert_true(str_eq(&c[C_REQ_STR], i, &key_req[k]));
            bool p64 = !c[C_I64].valid || c[C_I64].valid[i];
            assert_int_equal(p64, !m && key_i64_valid[k]);
            if (p64)
                assert_true(c[C_I64].values.i64[i] == key_i64[k]);
            bool p32 = !c[C_I32].valid || c[C_I32].valid[i];
            assert_int_equal(p32, !m);
            if (p32)
                assert_int_equal(c[C_I32].values.i32[i], key_i32[k]);
            assert_true(c[C_UNIQ].values.i64[i] == uniq[r]);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(r, ROWS);
    nxpq_scan_close(sc);
    nxpq_reader_close(rd);
}

static void same_file_both_ways(const nxpq_writer_options *o)
{
    char a[] = "/tmp/nx_dict_a_XXXXXX", b[] = "/tmp/nx_dict_b_XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    assert_true(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    write_file(a, o, false);
    write_file(b, o, true);
    size_t la, lb;
    unsigned char *da = slurp(a, &la), *db = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    free(da);
    free(db);
    check_values(b);
    unlink(a);
    unlink(b);
}

static void test_defaults(void **state)
{
    (void)state;
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    same_file_both_ways(&o);
}

static void test_small_pages_and_row_groups(void **state)
{
    (void)state;
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.page_rows = 1000;
    o.page_bytes = 3000;     /* cut by PLAIN bytes, long strings included */
    o.dictionary_skip_distinct = true;
    o.row_group_rows = 6000;
    o.threads = 2;
    same_file_both_ways(&o);
    o.threads = 1;
    o.codec = NXPQ_UNCOMPRESSED;
    same_file_both_ways(&o);
}

static void test_dictionary_fallback(void **state)
{
    (void)state;
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.page_rows = 500;
    o.row_group_rows = 8000;
    o.dictionary_max_bytes = 600;   /* outgrown in the middle of a page */
    same_file_both_ways(&o);
    o.threads = 1;
    o.write_page_index = false;     /* page statistics go into the page headers */
    same_file_both_ways(&o);
}

static void test_refusals(void **state)
{
    (void)state;
    nx_error err;
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.threads = 1;
    const char *path = "/tmp/nx_dict_refusals.parquet";
    uint32_t k0 = 0, k_past = N_KEYS, k_null = 5;   /* key 5: a null entry of key_str */

    /* an ordinary put into a dictionary column */
    nxpq_writer *w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    assert_non_null(w);
    assert_int_equal(nxpq_set_dictionary_strings(w, C_STR, key_str, N_KEYS), 0);
    assert_int_equal(nxpq_put_string(w, C_STR, "a", 1), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "caller dictionary"));

    /* a dictionary on a DELTA column, or of the wrong kind */
    w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    assert_int_equal(nxpq_set_dictionary_int64(w, C_TS, key_i64, NULL, N_KEYS), -1);
    nxpq_writer_abort(w);
    w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    assert_int_equal(nxpq_set_dictionary_int64(w, C_STR, key_i64, NULL, N_KEYS), -1);
    nxpq_writer_abort(w);

    /* a dictionary after the first row */
    w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    int64_t one = 1;
    nxpq_put_int64_array(w, C_TS, &one, 1);
    nxpq_put_string(w, C_STR, "a", 1);
    nxpq_put_string(w, C_REQ_STR, "a", 1);
    nxpq_put_null(w, C_I64);
    nxpq_put_null(w, C_I32);
    nxpq_put_null(w, C_PLAIN_STR);
    nxpq_put_int64(w, C_UNIQ, 1);
    assert_int_equal(nxpq_end_rows(w, 1), 0);
    assert_int_equal(nxpq_set_dictionary_strings(w, C_PLAIN_STR, key_str, N_KEYS), -1);
    nxpq_writer_abort(w);

    /* an index past the end */
    w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    assert_int_equal(nxpq_set_dictionary_strings(w, C_STR, key_str, N_KEYS), 0);
    assert_int_equal(nxpq_put_dict_masked(w, C_STR, &k_past, NULL, 1), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "past the last entry"));

    /* a null entry in a required column */
    w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    assert_int_equal(nxpq_set_dictionary_strings(w, C_REQ_STR, key_str, N_KEYS), 0);
    assert_int_equal(nxpq_put_dict_masked(w, C_REQ_STR, &k0, NULL, 1), 0);
    assert_int_equal(nxpq_put_dict_masked(w, C_REQ_STR, &k_null, NULL, 1), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "required"));

    /* an INT32 entry out of range: accepted until a row uses it; a null through
     * the mask does not use it */
    int64_t wide[2] = {7, (int64_t)INT32_MAX + 1};
    uint32_t k1 = 1;
    uint8_t off = 0;
    w = nxpq_writer_open(path, specs, N_COLS, &o, &err);
    assert_int_equal(nxpq_set_dictionary_int64(w, C_I32, wide, NULL, 2), 0);
    assert_int_equal(nxpq_put_dict_masked(w, C_I32, &k0, NULL, 1), 0);
    assert_int_equal(nxpq_put_dict_masked(w, C_I32, &k1, &off, 1), 0);
    assert_int_equal(nxpq_put_dict_masked(w, C_I32, &k1, NULL, 1), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "does not fit INT32"));
    unlink(path);
}

int main(void)
{
    build_keys();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_small_pages_and_row_groups),
        cmocka_unit_test(test_dictionary_fallback),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
