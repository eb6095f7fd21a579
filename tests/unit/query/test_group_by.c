/* test_query.c — src/query: split-file discovery and ordering of profile tables, and the
 * streaming group-by's SQL semantics (null keys, null values, ordering, overflow, two sums). */
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
#include "query/engine/group_by.h"
#include "profile/profile_table.h"

/* Writes dir/name with one INT64 column "v" holding rows [first, first + n). */
static void write_file(const char *dir, const char *name, int64_t first, int n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    nxpq_column_spec col = {.name = "v", .type = NXPQ_INT64};
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, &col, 1, NULL, &err);
    assert_non_null(w);
    for (int i = 0; i < n; i++) {
        assert_int_equal(nxpq_put_int64(w, 0, first + i), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

static void remove_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(unlink(path), 0);
}

/* All values of column v in scan order; returns the count. */
static int scan_all(nx_profile_table *t, int64_t *out, int max)
{
    static const char *const cols[] = {"v"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = 1, .batch_rows = 3};
    nx_error err;
    nx_profile_scan *s = nx_profile_scan_open(t, &so, &err);
    assert_non_null(s);
    const nxpq_batch *b;
    int n = 0, rc;
    while ((rc = nx_profile_scan_next(s, &b, &err)) > 0)
        for (size_t i = 0; i < b->n_rows && n < max; i++)
            out[n++] = b->columns[0].values.i64[i];
    assert_int_equal(rc, 0);
    nx_profile_scan_close(s);
    return n;
}

/* nx_profile_scan_each's callback: each value with the file it came from; stops
 * with an error once `stop_after` values are in (0: never). */
typedef struct each_acc {
    int64_t v[64];
    size_t file[64];
    int n, stop_after;
} each_acc;

static int each_batch(void *ctx, const nxpq_batch *b, size_t file, nx_error *err)
{
    each_acc *a = ctx;
    for (size_t i = 0; i < b->n_rows && a->n < 64; i++) {
        a->file[a->n] = file;
        a->v[a->n++] = b->columns[0].values.i64[i];
    }
    return a->stop_after && a->n >= a->stop_after ? nx_error_set(err, "stop at %d", a->n) : 0;
}

static void scan_each_calls_back_per_batch(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxq-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "T_0.parquet", 0, 4);
    write_file(dir, "T_1.parquet", 100, 2);
    nx_profile_table *t;
    nx_error err;
    assert_int_equal(nx_profile_table_open(dir, "T", &t, &err), 0);
    static const char *const cols[] = {"v"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = 1, .batch_rows = 3};
    each_acc all = {.n = 0};
    assert_int_equal(nx_profile_scan_each(t, &so, each_batch, &all, &err), 0);
    const int64_t want[] = {0, 1, 2, 3, 100, 101};
    const size_t want_file[] = {0, 0, 0, 0, 1, 1};
    assert_int_equal(all.n, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(all.v[i], want[i]);
        assert_int_equal(all.file[i], want_file[i]);
    }
    each_acc stop = {.stop_after = 3};   /* the first batch (3 rows) makes fn fail */
    assert_int_equal(nx_profile_scan_each(t, &so, each_batch, &stop, &err), -1);
    assert_string_equal(err.msg, "stop at 3");
    assert_int_equal(stop.n, 3);
    static const char *const bad[] = {"nope"};
    nx_profile_scan_options so_bad = {.columns = bad, .n_columns = 1};
    assert_int_equal(nx_profile_scan_each(t, &so_bad, each_batch, &all, &err), -1);
    nx_profile_table_close(t);
    remove_file(dir, "T_0.parquet");
    remove_file(dir, "T_1.parquet");
    assert_int_equal(rmdir(dir), 0);
}

static void split_files_in_numeric_order(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxq-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* 20 files, so lexical order (T_10 before T_2) would differ from numeric order,
     * and more than the table keeps readers for (files 16.. are opened by the scan). */
    enum { N_FILES = 20 };
    for (int i = 0; i < N_FILES; i++) {
        char name[64];
        snprintf(name, sizeof name, "T_%d.parquet", i);
        write_file(dir, name, i * 10, i % 3 + 1);
    }
    write_file(dir, "TT_0.parquet", 999, 1);   /* another table sharing the prefix */
    write_file(dir, "T_x.parquet", 999, 1);    /* not a split file */
    write_file(dir, "T_007.parquet", 999, 1);  /* leading zeros: not a split file */
    nx_profile_table *t;
    nx_error err;
    assert_int_equal(nx_profile_table_open(dir, "T", &t, &err), 0);
    assert_int_equal(nx_profile_table_file_count(t), N_FILES);
    int64_t want_rows = 0;
    int64_t want[64];
    int nw = 0;
    for (int i = 0; i < N_FILES; i++)
        for (int j = 0; j < i % 3 + 1; j++, want_rows++)
            want[nw++] = i * 10 + j;
    assert_int_equal(nx_profile_table_num_rows(t), want_rows);
    for (int i = 0; i < N_FILES; i++)
        assert_int_equal(nx_profile_table_file_rows(t, (size_t)i), i % 3 + 1);
    assert_int_equal(nx_profile_table_file_rows(t, N_FILES), 0);
    for (int pass = 0; pass < 2; pass++) { /* the second scan reuses the kept readers */
        int64_t got[64];
        assert_int_equal(scan_all(t, got, 64), nw);
        for (int i = 0; i < nw; i++)
            assert_int_equal(got[i], want[i]);
    }
    nx_profile_table_close(t);

    /* A gap is an error; so are both layouts at once; a missing table is ABSENT. */
    remove_file(dir, "T_5.parquet");
    assert_int_equal(nx_profile_table_open(dir, "T", &t, &err), -1);
    assert_non_null(strstr(err.msg, "T_5.parquet is missing"));
    write_file(dir, "T_5.parquet", 50, 1);
    write_file(dir, "T.parquet", 0, 1);
    assert_int_equal(nx_profile_table_open(dir, "T", &t, &err), -1);
    assert_non_null(strstr(err.msg, "ambiguous"));
    assert_int_equal(nx_profile_table_open(dir, "Nope", &t, &err), NX_PROFILE_TABLE_ABSENT);
    assert_null(t);
    /* A single file. */
    assert_int_equal(nx_profile_table_open(dir, "TT", &t, &err), 0);
    assert_int_equal(nx_profile_table_file_count(t), 1);
    nx_profile_table_close(t);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void group_by_sql_semantics(void **state)
{
    (void)state;
    /* key1 string (nullable), key2 int64 (nullable), value (nullable). */
    static const char data[] = "bab" "a" "b";
    uint64_t offs[] = {0, 1, 2, 3, 4, 4, 5, 5};   /* b a b a <null> b <null> */
    uint8_t kvalid[] = {1, 1, 1, 1, 0, 1, 0};
    int64_t k2[] = {1, 1, 1, 2, 0, 1, 0};
    uint8_t k2valid[] = {1, 1, 1, 1, 1, 1, 0};
    int64_t v[] = {10, 5, 7, 15, 3, 100, 4};
    uint8_t vvalid[] = {1, 1, 1, 1, 1, 0, 1};
    nxpq_column_data c1 = {.type = NXPQ_STRING, .valid = kvalid, .offsets = offs, .data = data};
    nxpq_column_data c2 = {.type = NXPQ_INT64, .valid = k2valid, .values.i64 = k2};
    const nxpq_column_data *keys[] = {&c1, &c2};
    nxpq_type types[] = {NXPQ_STRING, NXPQ_INT64};
    nx_error err;
    nx_group_by *g = nx_group_by_new(types, 2, &err);
    assert_non_null(g);
    nx_group_values vals[] = {{v, vvalid}};
    assert_int_equal(nx_group_by_add(g, keys, vals, 1, 7, &err), 0);
    /* groups: (b,1): 3 rows, sum 17 (100 is null) ; (a,1): 5 ; (a,2): 15 ; (null,0): 3 ; (null,null): 4 */
    assert_int_equal(nx_group_by_count(g), 5);
    assert_int_equal(nx_group_by_sort(g, 0, &err), 0);
    static const struct { const char *k1; int64_t k2; bool k2null; int64_t count, sum; } want[] = {
        {"b", 1, false, 3, 17}, {"a", 2, false, 1, 15}, {"a", 1, false, 1, 5},
        {NULL, 0, true, 1, 4}, {NULL, 0, false, 1, 3},
    };
    for (size_t i = 0; i < 5; i++) {
        nx_group_key a, b;
        nx_group_by_key(g, i, 0, &a);
        nx_group_by_key(g, i, 1, &b);
        const nx_group_stats *st = nx_group_by_stats(g, i);
        if (want[i].k1) {
            assert_false(a.null);
            assert_int_equal(a.len, strlen(want[i].k1));
            assert_memory_equal(a.s, want[i].k1, a.len);
        } else {
            assert_true(a.null);
        }
        assert_int_equal(b.null, want[i].k2null);
        if (!b.null)
            assert_int_equal(b.i, want[i].k2);
        assert_int_equal(st->count, want[i].count);
        assert_int_equal(st->sum[0], want[i].sum);
    }
    nx_group_stats tot = nx_group_by_totals(g);
    assert_int_equal(tot.count, 7);
    assert_int_equal(tot.sum[0], 44);
    assert_int_equal(tot.n_values[0], 6);
    nx_group_by_free(g);
}

static void group_by_ties_nulls_and_overflow(void **state)
{
    (void)state;
    /* Equal sums: key ascending, bytewise, shorter prefix first, null last. */
    static const char data[] = "abab" "Z";
    uint64_t offs[] = {0, 2, 3, 3, 5};   /* "ab" "a" <null> "bZ"... */
    uint8_t valid[] = {1, 1, 0, 1};
    int64_t v[] = {5, 5, 5, 5};
    nxpq_column_data c = {.type = NXPQ_STRING, .valid = valid, .offsets = offs, .data = data};
    const nxpq_column_data *keys[] = {&c};
    nxpq_type ty = NXPQ_STRING;
    nx_error err;
    nx_group_by *g = nx_group_by_new(&ty, 1, &err);
    nx_group_values vals[] = {{v, NULL}};
    assert_int_equal(nx_group_by_add(g, keys, vals, 1, 4, &err), 0);
    assert_int_equal(nx_group_by_sort(g, 0, &err), 0);
    const char *order[] = {"a", "ab", "bZ", NULL};
    for (size_t i = 0; i < 4; i++) {
        nx_group_key k;
        nx_group_by_key(g, i, 0, &k);
        if (!order[i]) {
            assert_true(k.null);
            continue;
        }
        assert_false(k.null);
        assert_int_equal(k.len, strlen(order[i]));
        assert_memory_equal(k.s, order[i], k.len);
    }
    /* Count-only: ordered by count. */
    nx_group_by_free(g);
    g = nx_group_by_new(&ty, 1, &err);
    uint64_t offs2[] = {0, 1, 2, 3, 4};
    static const char d2[] = "xyyz";
    nxpq_column_data c2 = {.type = NXPQ_STRING, .offsets = offs2, .data = d2};
    const nxpq_column_data *keys2[] = {&c2};
    assert_int_equal(nx_group_by_add(g, keys2, NULL, 0, 4, &err), 0);
    assert_int_equal(nx_group_by_sort(g, 0, &err), 0);   /* no sums: by count */
    nx_group_key k;
    nx_group_by_key(g, 0, 0, &k);
    assert_memory_equal(k.s, "y", 1);
    assert_int_equal(nx_group_by_stats(g, 0)->count, 2);
    nx_group_by_free(g);
    /* Overflow is an error, not a wrap. */
    int64_t big[] = {INT64_MAX, 1};
    int64_t kk[] = {1, 1};
    nxpq_column_data ci = {.type = NXPQ_INT64, .values.i64 = kk};
    const nxpq_column_data *keys3[] = {&ci};
    nxpq_type ti = NXPQ_INT64;
    g = nx_group_by_new(&ti, 1, &err);
    nx_group_values bigv[] = {{big, NULL}};
    assert_int_equal(nx_group_by_add(g, keys3, bigv, 1, 2, &err), -1);
    assert_non_null(strstr(err.msg, "overflow"));
    nx_group_by_free(g);
    /* Unsupported key types are refused. */
    nxpq_type td = NXPQ_DOUBLE;
    assert_null(nx_group_by_new(&td, 1, &err));
}

static void group_by_many_groups(void **state)
{
    (void)state;
    /* Enough groups to grow the hash table several times; every group must come back once. */
    enum { N = 100000, G = 20000 };
    int64_t *k = malloc(N * sizeof *k), *v = malloc(N * sizeof *v);
    assert_non_null(k);
    assert_non_null(v);
    for (int i = 0; i < N; i++) {
        k[i] = (int64_t)((i * 7919L) % G);
        v[i] = k[i];
    }
    nxpq_column_data c = {.type = NXPQ_INT64, .values.i64 = k};
    const nxpq_column_data *keys[] = {&c};
    nxpq_type ty = NXPQ_INT64;
    nx_error err;
    nx_group_by *g = nx_group_by_new(&ty, 1, &err);
    nx_group_values vals[] = {{v, NULL}};
    assert_int_equal(nx_group_by_add(g, keys, vals, 1, N, &err), 0);
    assert_int_equal(nx_group_by_count(g), G);
    assert_int_equal(nx_group_by_sort(g, 0, &err), 0);
    for (size_t i = 0; i < G; i++) {
        nx_group_key key;
        nx_group_by_key(g, i, 0, &key);
        assert_int_equal(key.i, G - 1 - (int64_t)i);   /* sum = 5 * key: descending keys */
        assert_int_equal(nx_group_by_stats(g, i)->count, N / G);
        assert_int_equal(nx_group_by_stats(g, i)->sum[0], key.i * (N / G));
    }
    nx_group_by_free(g);
    free(k);
    free(v);
}

static void group_by_two_sums(void **state)
{
    (void)state;
    /* Two value columns: each sums its own non-null values; the order follows the
     * sum asked for (the second here), ties by key. */
    int64_t k[] = {1, 2, 1, 3, 2};
    int64_t a[] = {10, 1, 10, 5, 1};
    int64_t b[] = {1, 9, 1, 2, 0};
    uint8_t bvalid[] = {1, 1, 1, 0, 1};
    nxpq_column_data c = {.type = NXPQ_INT64, .values.i64 = k};
    const nxpq_column_data *keys[] = {&c};
    nxpq_type ty = NXPQ_INT64;
    nx_error err;
    nx_group_by *g = nx_group_by_new(&ty, 1, &err);
    nx_group_values vals[] = {{a, NULL}, {b, bvalid}};
    assert_int_equal(nx_group_by_add(g, keys, vals, 2, 5, &err), 0);
    assert_int_equal(nx_group_by_sort(g, 1, &err), 0);
    static const struct { int64_t key, s0, s1, n1; } want[] = {{2, 2, 9, 2}, {1, 20, 2, 2}, {3, 5, 0, 0}};
    for (size_t i = 0; i < 3; i++) {
        nx_group_key key;
        nx_group_by_key(g, i, 0, &key);
        const nx_group_stats *st = nx_group_by_stats(g, i);
        assert_int_equal(key.i, want[i].key);
        assert_int_equal(st->sum[0], want[i].s0);
        assert_int_equal(st->sum[1], want[i].s1);
        assert_int_equal(st->n_values[1], want[i].n1);   /* key 3: a null second sum, sorted last */
    }
    assert_int_equal(nx_group_by_totals(g).sum[1], 11);
    assert_int_equal(nx_group_by_sort(g, 0, &err), 0);
    nx_group_key key;
    nx_group_by_key(g, 0, 0, &key);
    assert_int_equal(key.i, 1);
    assert_int_equal(nx_group_by_add(g, keys, vals, NX_GROUP_SUMS + 1, 5, &err), -1);
    nx_group_by_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_files_in_numeric_order),
        cmocka_unit_test(group_by_sql_semantics),
        cmocka_unit_test(group_by_ties_nulls_and_overflow),
        cmocka_unit_test(group_by_many_groups),
        cmocka_unit_test(group_by_two_sums),
        cmocka_unit_test(scan_each_calls_back_per_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
