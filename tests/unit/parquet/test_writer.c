/*
 * test_parquet_roundtrip.c — nxprof's Parquet writer against its reader: files
 * with every column type, null pattern and list shape (null, empty, null
 * elements), written with each codec and encoding preference, with and without
 * the page index, small pages and row groups, are read back whole, in odd
 * batch sizes, projected, and pruned by a range on a sorted column; every
 * value must come back exactly, and pruning must keep every matching row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parquet/parquet.h"

enum { C_I32, C_I64, C_F32, C_F64, C_BOOL, C_STR, C_LI, C_LS, C_TS, C_REQ_STR, N_COLS };
#define ROWS 3000

static const nxpq_type col_type[N_COLS] = {NXPQ_INT32,  NXPQ_INT64,      NXPQ_FLOAT,       NXPQ_DOUBLE,
                                           NXPQ_BOOLEAN, NXPQ_STRING,    NXPQ_LIST_INT64,  NXPQ_LIST_STRING,
                                           NXPQ_INT64,  NXPQ_STRING};
static const char *const col_name[N_COLS] = {"i32", "i64", "f32", "f64", "flag", "str", "li", "ls", "ts", "req_str"};

/* ----------------------------------------------------- the data, by row */

static bool is_null(int c, int64_t r)
{
    static const int every[N_COLS] = {11, 13, 7, 10, 5, 6, 9, 8, 0, 0};
    return every[c] && r % every[c] == 0;
}

static int32_t v_i32(int64_t r)
{
    return (int32_t)((uint32_t)r * 2654435761u);
}

static int64_t v_i64(int64_t r)
{
    return r % 97 == 1 ? INT64_MIN : r % 97 == 2 ? INT64_MAX : r * 1000003 - 5000000000000;
}

static float v_f32(int64_t r)
{
    return r % 50 == 1 ? -0.0f : (float)r * 0.5f - 700.25f;
}

static double v_f64(int64_t r)
{
    return r % 41 == 1 ? NAN : r % 43 == 1 ? -INFINITY : (double)r / 3.0;
}

static int64_t v_ts(int64_t r)
{
    return 1000000000 + r * 3;
}

/* Strings: repeated short values (dictionary friendly), empty ones, long ones. */
static size_t v_str(int64_t r, char *buf)
{
    if (r % 17 == 1)
        return 0;
    if (r % 101 == 2) {
        memset(buf, 'L', 300);
        buf[0] = (char)('a' + r % 26);
        return 300;
    }
    return (size_t)sprintf(buf, "s%d\xc3\xa9", (int)(r % 37));
}

/* Lists: null (is_null), empty, or 1-4 elements. */
static size_t list_len(int64_t r)
{
    return r % 9 == 1 ? 0 : (size_t)(r % 4 + 1);
}

static int64_t v_li(int64_t r, size_t k)
{
    return r * 10 + (int64_t)k - 7;
}

/* Element k of list row r, or NULL for a null element. */
static const char *v_ls(int64_t r, size_t k, char *buf)
{
    if (k == 2)
        return NULL;
    sprintf(buf, "e%zu_%d", k, (int)(r % 5));
    return buf;
}

/* ----------------------------------------------------------- writing */

static void put_row(nxpq_writer *w, int64_t r)
{
    char buf[512];
    for (int c = 0; c < N_COLS; c++) {
        int rc = 0;
        if (is_null(c, r)) {
            assert_int_equal(nxpq_put_null(w, (size_t)c), 0);
            continue;
        }
        switch (c) {
        case C_I32: rc = nxpq_put_int32(w, c, v_i32(r)); break;
        case C_I64: rc = nxpq_put_int64(w, c, v_i64(r)); break;
        case C_F32: rc = nxpq_put_float(w, c, v_f32(r)); break;
        case C_F64: rc = nxpq_put_double(w, c, v_f64(r)); break;
        case C_BOOL: rc = nxpq_put_bool(w, c, r % 3 == 0); break;
        case C_TS: rc = nxpq_put_int64(w, c, v_ts(r)); break;
        case C_STR:
        case C_REQ_STR: rc = nxpq_put_string(w, c, buf, v_str(r, buf)); break;
        case C_LI: {
            int64_t items[4];
            for (size_t k = 0; k < list_len(r); k++)
                items[k] = v_li(r, k);
            rc = nxpq_put_list_int64(w, c, items, list_len(r));
            break;
        }
        default: {
            char ebuf[4][32];
            nxpq_str items[4];
            for (size_t k = 0; k < list_len(r); k++) {
                items[k].ptr = v_ls(r, k, ebuf[k]);
                items[k].len = items[k].ptr ? strlen(items[k].ptr) : 0;
            }
            rc = nxpq_put_list_string(w, c, items, list_len(r));
        }
        }
        assert_int_equal(rc, 0);
    }
    assert_int_equal(nxpq_end_row(w), 0);
}

typedef struct config {
    nxpq_codec codec;
    nxpq_encoding_pref enc;
    bool page_index;
    uint32_t page_bytes;
    uint64_t row_group_rows;
    bool masked;             /* scalar columns through the masked batch puts */
    bool delta_fallback;     /* options delta_fallback and dictionary_skip_distinct, with a
                                dictionary limit small enough that every int column leaves it */
} config;

/* Rows [r0, r0 + n) column by column: the scalar columns through the masked
 * batch forms (int64 values into the INT32 column, doubles into the FLOAT one),
 * strings through the string array form, lists row by row. */
static void put_rows_masked(nxpq_writer *w, int64_t r0, size_t n)
{
    int64_t iv[64];
    double dv[64];
    uint8_t bv[64], valid[64];
    nxpq_str sv[64];
    char sbuf[64][512];
    for (int c = 0; c < N_COLS; c++) {
        for (size_t i = 0; i < n; i++)
            valid[i] = !is_null(c, r0 + (int64_t)i);
        int rc = 0;
        switch (c) {
        case C_I32:
        case C_I64:
        case C_TS:
            for (size_t i = 0; i < n; i++)
                iv[i] = c == C_I32 ? v_i32(r0 + (int64_t)i) : c == C_I64 ? v_i64(r0 + (int64_t)i) : v_ts(r0 + (int64_t)i);
            rc = nxpq_put_int64_masked(w, c, iv, c == C_TS ? NULL : valid, n);
            break;
        case C_F32:
        case C_F64:
            for (size_t i = 0; i < n; i++)
                dv[i] = c == C_F32 ? (double)v_f32(r0 + (int64_t)i) : v_f64(r0 + (int64_t)i);
            rc = nxpq_put_double_masked(w, c, dv, valid, n);
            break;
        case C_BOOL:
            for (size_t i = 0; i < n; i++)
                bv[i] = (r0 + (int64_t)i) % 3 == 0;
            rc = nxpq_put_bool_masked(w, c, bv, valid, n);
            break;
        case C_STR:
        case C_REQ_STR:
            for (size_t i = 0; i < n; i++) {
                sv[i].len = v_str(r0 + (int64_t)i, sbuf[i]);
                sv[i].ptr = valid[i] ? sbuf[i] : NULL;
            }
            rc = nxpq_put_string_array(w, c, sv, n);
            break;
        default:
            for (size_t i = 0; i < n && rc == 0; i++) {
                int64_t r = r0 + (int64_t)i;
                if (!valid[i]) {
                    rc = nxpq_put_null(w, c);
                } else if (c == C_LI) {
                    int64_t items[4];
                    for (size_t k = 0; k < list_len(r); k++)
                        items[k] = v_li(r, k);
                    rc = nxpq_put_list_int64(w, c, items, list_len(r));
                } else {
                    char ebuf[4][32];
                    nxpq_str items[4];
                    for (size_t k = 0; k < list_len(r); k++) {
                        items[k].ptr = v_ls(r, k, ebuf[k]);
                        items[k].len = items[k].ptr ? strlen(items[k].ptr) : 0;
                    }
                    rc = nxpq_put_list_string(w, c, items, list_len(r));
                }
            }
        }
        assert_int_equal(rc, 0);
    }
    assert_int_equal(nxpq_end_rows(w, n), 0);
}

static void write_file(const char *path, const config *cfg)
{
    nxpq_column_spec spec[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        bool ints = col_type[c] == NXPQ_INT32 || col_type[c] == NXPQ_INT64 || col_type[c] == NXPQ_LIST_INT64;
        spec[c] = (nxpq_column_spec){col_name[c], col_type[c], c != C_TS && c != C_REQ_STR,
                                     cfg->enc == NXPQ_ENCODE_DELTA && !ints ? NXPQ_ENCODE_AUTO : cfg->enc};
    }
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.codec = cfg->codec;
    o.write_page_index = cfg->page_index;
    o.page_bytes = cfg->page_bytes;
    o.row_group_rows = cfg->row_group_rows;
    if (cfg->delta_fallback) {
        o.delta_fallback = o.dictionary_skip_distinct = true;
        o.dictionary_max_bytes = 256;
    }
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, spec, N_COLS, &o, &err);
    if (!w)
        fail_msg("writer: %s", err.msg);
    for (int64_t r = 0; r < ROWS;) {
        if (!cfg->masked) {
            put_row(w, r++);
            continue;
        }
        size_t n = (size_t)(ROWS - r) < 37 ? (size_t)(ROWS - r) : 37;   /* odd batches cross pages */
        put_rows_masked(w, r, n);
        r += (int64_t)n;
    }
    if (nxpq_writer_close(w, &err) != 0)
        fail_msg("writer: %s", err.msg);
}

/* ----------------------------------------------------------- checking */

static bool same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static void check_string(const nxpq_column_data *d, uint64_t i, const char *want, size_t len, int64_t r)
{
    if (d->offsets[i + 1] - d->offsets[i] != len || memcmp(d->data + d->offsets[i], want, len) != 0)
        fail_msg("row %lld: string differs", (long long)r);
}

static void check_list(const nxpq_column_data *d, size_t i, int c, int64_t r)
{
    uint64_t lo = d->list_offsets[i], n = d->list_offsets[i + 1] - lo;
    if (n != list_len(r))
        fail_msg("%s row %lld: %llu elements, want %zu", col_name[c], (long long)r, (unsigned long long)n,
                 list_len(r));
    for (uint64_t k = 0; k < n; k++) {
        char buf[32];
        if (c == C_LI) {
            assert_true(!d->element_valid || d->element_valid[lo + k]);
            assert_true(d->values.i64[lo + k] == v_li(r, k));
            continue;
        }
        const char *want = v_ls(r, k, buf);
        assert_int_equal(d->element_valid ? d->element_valid[lo + k] : 1, want != NULL);
        check_string(d, lo + k, want ? want : "", want ? strlen(want) : 0, r);
    }
}

/* Row i of batch column d must be row r of column c. */
static void check_value(const nxpq_column_data *d, size_t i, int c, int64_t r)
{
    bool present = !d->valid || d->valid[i];
    if (present != !is_null(c, r))
        fail_msg("%s row %lld: null mismatch", col_name[c], (long long)r);
    if (!present)
        return;
    char buf[512];
    int32_t i32 = v_i32(r);
    int64_t i64 = c == C_TS ? v_ts(r) : v_i64(r);
    float f32 = v_f32(r);
    double f64 = v_f64(r);
    bool ok = true;
    switch (c) {
    case C_I32: ok = d->values.i32[i] == i32; break;
    case C_I64:
    case C_TS: ok = d->values.i64[i] == i64; break;
    case C_F32: ok = same_bits(&d->values.f32[i], &f32, 4); break;
    case C_F64: ok = same_bits(&d->values.f64[i], &f64, 8) || (isnan(f64) && isnan(d->values.f64[i])); break;
    case C_BOOL: ok = d->values.b[i] == (r % 3 == 0); break;
    case C_STR:
    case C_REQ_STR: check_string(d, i, buf, v_str(r, buf), r); break;
    default: check_list(d, i, c, r);
    }
    if (!ok)
        fail_msg("%s row %lld: value differs", col_name[c], (long long)r);
}

/* Scans with the given projection and range; checks every row returned, and
 * returns how many there were. When `range` is set, every row whose ts is
 * in it must be among them. */
static int64_t scan_check(nxpq_reader *r, const size_t *cols, size_t n_cols, const nxpq_range *range,
                          size_t batch_rows, nxpq_scan_stats *st)
{
    nxpq_scan_options o = {.columns = cols, .n_columns = n_cols, .ranges = range, .n_ranges = range != NULL,
                           .batch_rows = batch_rows};
    nx_error err;
    nxpq_scan *s = nxpq_scan_open(r, &o, &err);
    if (!s)
        fail_msg("scan: %s", err.msg);
    static bool seen[ROWS];
    memset(seen, 0, sizeof seen);
    const nxpq_batch *b;
    int64_t total = 0, last = -1;
    int rc;
    while ((rc = nxpq_scan_next(s, &b, &err)) == 1) {
        assert_true(b->n_rows > 0 && b->n_rows <= batch_rows && b->first_row > last);
        for (size_t j = 0; j < n_cols; j++)
            for (size_t i = 0; i < b->n_rows; i++)
                check_value(&b->columns[j], i, (int)cols[j], b->first_row + (int64_t)i);
        for (size_t i = 0; i < b->n_rows; i++)
            seen[b->first_row + (int64_t)i] = true;
        last = b->first_row + (int64_t)b->n_rows - 1;
        total += (int64_t)b->n_rows;
    }
    if (rc != 0)
        fail_msg("scan: %s", err.msg);
    for (int64_t row = 0; range && row < ROWS; row++)
        if (v_ts(row) >= range->min && v_ts(row) <= range->max && !seen[row])
            fail_msg("row %lld matches the range but was pruned", (long long)row);
    nxpq_scan_get_stats(s, st);
    nxpq_scan_close(s);
    return total;
}

static void check_file(const char *path, const config *cfg)
{
    nx_error err;
    nxpq_reader *r = nxpq_reader_open(path, &err);
    if (!r)
        fail_msg("reader: %s", err.msg);
    assert_int_equal(nxpq_reader_num_rows(r), ROWS);
    assert_int_equal(nxpq_reader_num_columns(r), N_COLS);
    size_t all[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        const nxpq_column_info *ci = nxpq_reader_column(r, (size_t)c);
        assert_string_equal(ci->name, col_name[c]);
        assert_int_equal(ci->type, col_type[c]);
        assert_int_equal(ci->nullable, c != C_TS && c != C_REQ_STR);
        all[c] = (size_t)c;
    }
    nxpq_scan_stats st;
    assert_int_equal(scan_check(r, all, N_COLS, NULL, 65536, &st), ROWS);
    assert_int_equal(st.pages_read, st.pages_total);
    assert_int_equal(scan_check(r, all, N_COLS, NULL, 17, &st), ROWS);
    const size_t some[] = {C_LS, C_TS, C_F32};
    assert_int_equal(scan_check(r, some, 3, NULL, 1000, &st), ROWS);

    /* ts is sorted: a narrow range must prune row groups, and pages when the
     * page index is there, yet keep every matching row. */
    nxpq_range range = {C_TS, v_ts(1500), v_ts(1520)};
    int64_t got = scan_check(r, all, N_COLS, &range, 64, &st);
    assert_true(got >= 21);
    assert_true(st.row_groups_read < st.row_groups_total);
    if (cfg->page_index) {
        assert_true(st.pages_read < st.pages_total);
        assert_true(got < (int64_t)cfg->row_group_rows);
    } else {
        assert_int_equal(got, (int64_t)cfg->row_group_rows);
    }
    nxpq_range none = {C_TS, 0, 10};
    assert_int_equal(scan_check(r, all, N_COLS, &none, 64, &st), 0);
    assert_int_equal(st.row_groups_read, 0);
    nxpq_reader_close(r);
}

static void round_trip(const config *cfg)
{
    char path[] = "/tmp/nxpq_roundtripXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, cfg);
    check_file(path, cfg);
    unlink(path);
}

static void test_codecs(void **state)
{
    (void)state;
    const nxpq_codec codecs[] = {NXPQ_UNCOMPRESSED, NXPQ_SNAPPY, NXPQ_ZSTD};
    for (size_t i = 0; i < 3; i++) {
        config cfg = {codecs[i], NXPQ_ENCODE_AUTO, true, 2048, 1000, false, false};
        round_trip(&cfg);
    }
}

static void test_encodings(void **state)
{
    (void)state;
    const nxpq_encoding_pref encs[] = {NXPQ_ENCODE_PLAIN, NXPQ_ENCODE_DICTIONARY, NXPQ_ENCODE_DELTA};
    for (size_t i = 0; i < 3; i++) {
        config cfg = {NXPQ_ZSTD, encs[i], true, 1024, 700, false, false};
        round_trip(&cfg);
    }
}

/* Integer pages that leave their dictionary are written DELTA_BINARY_PACKED:
 * every value comes back, and the file is smaller than with PLAIN fallback
 * (the ts, i64 and list columns grow by small steps). */
static void test_delta_fallback(void **state)
{
    (void)state;
    const nxpq_encoding_pref encs[] = {NXPQ_ENCODE_AUTO, NXPQ_ENCODE_DICTIONARY};
    for (size_t i = 0; i < 2; i++)
        for (int masked = 0; masked < 2; masked++) {
            config cfg = {NXPQ_ZSTD, encs[i], true, 1024, 700, masked, true};
            round_trip(&cfg);
        }
    long size[2];
    for (int d = 0; d < 2; d++) {
        config cfg = {NXPQ_UNCOMPRESSED, NXPQ_ENCODE_AUTO, true, 1024, 700, false, d};
        char path[] = "/tmp/nxpq_roundtripXXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        write_file(path, &cfg);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        size[d] = ftell(f);
        fclose(f);
        unlink(path);
    }
    assert_true(size[1] < size[0] - 3 * ROWS);
}

static void test_without_page_index(void **state)
{
    (void)state;
    config cfg = {NXPQ_SNAPPY, NXPQ_ENCODE_AUTO, false, 1024, 600, false, false};
    round_trip(&cfg);
}

static void test_masked_batches(void **state)
{
    (void)state;
    const nxpq_encoding_pref encs[] = {NXPQ_ENCODE_AUTO, NXPQ_ENCODE_PLAIN, NXPQ_ENCODE_DELTA};
    for (size_t i = 0; i < 3; i++) {
        config cfg = {NXPQ_ZSTD, encs[i], true, 1024, 700, true, false};
        round_trip(&cfg);
    }
}

/* The masked forms refuse what a row-at-a-time put would: a null in a required
 * column and an INT32 overflow, naming the column and the row. */
static void test_masked_refusals(void **state)
{
    (void)state;
    nxpq_column_spec spec[2] = {{"req", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
                                {"narrow", NXPQ_INT32, true, NXPQ_ENCODE_AUTO}};
    char path[] = "/tmp/nxpq_maskedXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    nx_error err;
    int64_t v[3] = {1, 2, 3};
    uint8_t valid[3] = {1, 0, 1};
    nxpq_writer *w = nxpq_writer_open(path, spec, 2, NULL, &err);
    assert_non_null(w);
    assert_int_equal(nxpq_put_int64_masked(w, 0, v, valid, 3), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "'req' is required: null at row 1"));
    w = nxpq_writer_open(path, spec, 2, NULL, &err);
    assert_non_null(w);
    int64_t big[2] = {5, (int64_t)INT32_MAX + 1};
    assert_int_equal(nxpq_put_int64_masked(w, 1, big, NULL, 2), -1);
    assert_int_equal(nxpq_writer_close(w, &err), -1);
    assert_non_null(strstr(err.msg, "'narrow'"));
    assert_non_null(strstr(err.msg, "INT32"));
    unlink(path);
}

static void test_one_big_row_group(void **state)
{
    (void)state;
    config cfg = {NXPQ_UNCOMPRESSED, NXPQ_ENCODE_AUTO, true, 1 << 20, 1 << 20, false, false};
    char path[] = "/tmp/nxpq_roundtripXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, &cfg);
    nx_error err;
    nxpq_reader *r = nxpq_reader_open(path, &err);
    assert_non_null(r);
    size_t all[N_COLS];
    for (size_t c = 0; c < N_COLS; c++)
        all[c] = c;
    nxpq_scan_stats st;
    assert_int_equal(scan_check(r, all, N_COLS, NULL, 999, &st), ROWS);
    assert_int_equal(st.row_groups_total, 1);
    nxpq_reader_close(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codecs),
        cmocka_unit_test(test_encodings),
        cmocka_unit_test(test_without_page_index),
        cmocka_unit_test(test_delta_fallback),
        cmocka_unit_test(test_one_big_row_group),
        cmocka_unit_test(test_masked_batches),
        cmocka_unit_test(test_masked_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
