/*
 * test_sql_cache.c — the query API's open SQL engines (src/server/sql_cache.h) on
 * hand-made one-table profiles: a second take of an unchanged profile gets the same
 * engine; a table rewritten (another size) gets a new one, which answers the new
 * rows, while a request still holding the old one can run it to the end; more
 * profiles than the cache holds evict the least recently used; a directory that is
 * no profile is an error; everything is closed by nx_sql_cache_clear (the ASan build
 * would report a leak otherwise).
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/sql_cache.h"
#include "table_fixture.h"

static char root[64];
static const fx_col one[] = {{"v", NXPQ_INT64}};

/* Profile directory number i under root, holding Summary.parquet with `rows` rows. */
static void make_profile(char *dir, size_t cap, int i, size_t rows)
{
    snprintf(dir, cap, "%s/p%d", root, i);
    mkdir(dir, 0755);
    const char *cells[8] = {"1", "2", "3", "4", "5", "6", "7", "8"};
    fx_write(dir, "Summary.parquet", one, 1, cells, rows);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/nxsqlcache-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    nx_sql_cache_clear();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* COUNT(*) of Summary through db, as the JSON answer's text. */
static void count_is(nx_sql *db, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_error err = {0};
    nx_sql_limits lim = {.timeout_s = 10, .max_rows = 10};
    assert_int_equal(nx_sql_run(db, "SELECT COUNT(*) AS n FROM Summary", &lim, NX_SQL_JSON, &b, &err), NX_SQL_OK);
    nx_strbuf_putc(&b, '\0');
    assert_non_null(strstr(b.data, want));
    nx_strbuf_free(&b);
}

static void kept_and_renewed(void **state)
{
    (void)state;
    char dir[128];
    make_profile(dir, sizeof dir, 0, 3);
    nx_error err = {0};
    nx_sql *a = NULL, *b = NULL, *c = NULL;
    nx_sql_lease *la = nx_sql_cache_take(dir, &a, &err);
    assert_non_null(la);
    count_is(a, "[3]],\"row_count\":1");
    nx_sql_lease *lb = nx_sql_cache_take(dir, &b, &err);
    assert_ptr_equal(a, b); /* unchanged: the same engine, shared */
    nx_sql_cache_return(lb);
    /* Rewritten with other rows: a new engine, while la still holds (and can use) the old. */
    make_profile(dir, sizeof dir, 0, 5);
    nx_sql_lease *lc = nx_sql_cache_take(dir, &c, &err);
    assert_non_null(lc);
    assert_ptr_not_equal(a, c);
    count_is(c, "[5]],\"row_count\":1");
    nx_sql_cache_return(la); /* the old engine's last user: closed now */
    nx_sql *d = NULL;
    nx_sql_lease *ld = nx_sql_cache_take(dir, &d, &err);
    assert_ptr_equal(c, d);
    nx_sql_cache_return(ld);
    nx_sql_cache_return(lc);
}

static void least_recently_used_goes(void **state)
{
    (void)state;
    char dirs[12][128];
    nx_sql *db = NULL;
    nx_error err = {0};
    for (int i = 0; i < 12; i++) {
        make_profile(dirs[i], sizeof dirs[i], 10 + i, 1);
        nx_sql_lease *l = nx_sql_cache_take(dirs[i], &db, &err);
        assert_non_null(l);
        nx_sql_cache_return(l);
    }
    /* The most recent is kept; the first was evicted, so taking it opens anew. */
    nx_sql *again = NULL;
    nx_sql_lease *l = nx_sql_cache_take(dirs[11], &again, &err);
    assert_ptr_equal(again, db);
    nx_sql_cache_return(l);
    l = nx_sql_cache_take(dirs[0], &again, &err);
    assert_non_null(l);
    count_is(again, "[1]],\"row_count\":1");
    nx_sql_cache_return(l);
}

static void not_a_profile(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/empty", root);
    mkdir(dir, 0755);
    nx_sql *db = NULL;
    nx_error err = {0};
    assert_null(nx_sql_cache_take(dir, &db, &err));
    assert_true(err.msg[0] != '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_and_renewed),
        cmocka_unit_test(least_recently_used_goes),
        cmocka_unit_test(not_a_profile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
