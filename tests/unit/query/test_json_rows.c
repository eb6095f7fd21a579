/* test_json_rows.c — the JSON-rows row writer (query/engine/json_rows.c) and the cell
 * rule it shares with the API (query/engine/json_cell.h), through query/export.h on an
 * Instruction table written here, read back with yajl (an independent parser):
 *   - one object per row in file order, "track" first (the engine), then every
 *     schema field; fields the file lacks are null;
 *   - strings with quotes, backslashes, control bytes, a leading '=' (no formula
 *     guard in JSON) and invalid UTF-8 (as U+FFFD) decode to the expected text,
 *     also when the reader hands them in dictionary form;
 *   - integers exact up to 2^53 - 1 in magnitude, beyond as decimal strings
 *     (timestamps among them); null as null;
 *   - an empty window is "[]".
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
#include <yajl/yajl_tree.h>

#include "query/export.h"
#include "query/engine/row_writer.h"

static const char *const OPS[] = {"A\"q\\b", "=1+2", "ctl\x01\ttab", "bad\xff", "A\"q\\b", NULL};
static const char *const WANT_OPS[] = {"A\"q\\b", "=1+2", "ctl\x01\ttab", "bad\xef\xbf\xbd", "A\"q\\b", NULL};
#define ROWS 6

static void write_table(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/Instruction.parquet", dir);
    nxpq_column_spec cols[] = {{.name = "start_ts", .type = NXPQ_INT64},
                               {.name = "end_ts", .type = NXPQ_INT64},
                               {.name = "engine", .type = NXPQ_STRING},
                               {.name = "opcode", .type = NXPQ_STRING, .nullable = true},
                               {.name = "id", .type = NXPQ_INT64, .nullable = true},
                               {.name = "evt_wait_time_ns", .type = NXPQ_INT64, .nullable = true}};
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, 6, &o, &err);
    assert_non_null(w);
    for (int i = 0; i < ROWS; i++) {
        assert_int_equal(nxpq_put_int64(w, 0, 1766074687851567794 + i), 0);
        assert_int_equal(nxpq_put_int64(w, 1, 1766074687851567794 + i + 5), 0);
        assert_int_equal(nxpq_put_string(w, 2, "tensor", 6), 0);
        assert_int_equal(OPS[i] ? nxpq_put_string(w, 3, OPS[i], strlen(OPS[i])) : nxpq_put_null(w, 3), 0);
        assert_int_equal(i == 2 ? nxpq_put_null(w, 4) : nxpq_put_int64(w, 4, i == 3 ? (1LL << 53) - 1 : i), 0);
        assert_int_equal(nxpq_put_int64(w, 5, i == 4 ? (1LL << 53) + 1 : -i), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

static char *export_json(const char *dir, int64_t start, int64_t end)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    nx_error err = {0};
    nx_row_target t = {.f = f, .profile_dir = dir, .start = start, .end = end};
    nx_row_writer *w = nx_row_format_find("json")->open(&t, &err);
    assert_non_null(w);
    nx_export *x;
    nx_export_options o = {.start = start, .end = end, .max_rows = 100};
    assert_int_equal(nx_export_open(dir, "Instruction", &o, &x, &err), 0);
    assert_int_equal(nx_export_begin(x, w, &err), 0);
    int rc;
    while ((rc = nx_export_next(x, w, &err)) > 0)
        ;
    assert_int_equal(rc, 0);
    assert_int_equal(w->ops->end_table(w, &err), 0);
    assert_int_equal(w->ops->finish(w, &err), 0);
    w->ops->free(w);
    nx_export_close(x);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static yajl_val member(yajl_val o, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(o, path, yajl_t_any);
}

static void test_rows(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-json-rows-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_table(dir);
    char *text = export_json(dir, 0, INT64_MAX);
    char errbuf[256];
    yajl_val doc = yajl_tree_parse(text, errbuf, sizeof errbuf);
    assert_non_null(doc);
    assert_true(YAJL_IS_ARRAY(doc));
    assert_int_equal(doc->u.array.len, ROWS);
    for (size_t i = 0; i < ROWS; i++) {
        yajl_val r = doc->u.array.values[i];
        assert_true(YAJL_IS_OBJECT(r));
        assert_string_equal(r->u.object.keys[0], "track");
        assert_string_equal(YAJL_GET_STRING(member(r, "track")), "tensor");
        assert_true(YAJL_IS_INTEGER(member(r, "duration_ns")) == false);
        assert_true(YAJL_IS_NULL(member(r, "duration_ns")));   /* not in the file */
        yajl_val op = member(r, "opcode");
        if (WANT_OPS[i])
            assert_string_equal(YAJL_GET_STRING(op), WANT_OPS[i]);
        else
            assert_true(YAJL_IS_NULL(op));
        yajl_val id = member(r, "id");
        if (i == 2)
            assert_true(YAJL_IS_NULL(id));
        else
            assert_true(YAJL_GET_INTEGER(id) == (i == 3 ? (1LL << 53) - 1 : (long long)i));
        yajl_val wait = member(r, "evt_wait_time_ns");
        if (i == 4)
            assert_string_equal(YAJL_GET_STRING(wait), "9007199254740993");
        else
            assert_true(YAJL_GET_INTEGER(wait) == -(long long)i);
        /* start_ts is past 2^53: a decimal string. */
        char want[32];
        snprintf(want, sizeof want, "%lld", 1766074687851567794LL + (long long)i);
        assert_string_equal(YAJL_GET_STRING(member(r, "start_ts")), want);
    }
    yajl_tree_free(doc);
    free(text);
    text = export_json(dir, 0, 5);
    assert_string_equal(text, "[]\n");
    free(text);
    char path[256];
    snprintf(path, sizeof path, "%s/Instruction.parquet", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
