/*
 * test_sql.c — the SQL engine (src/sql/sql.h) on a tiny profile made in the test
 * (`synth --preset tiny`, 2 NeuronCores, processed into a data path and into one
 * --output-file profile): answers checked against what the profile reader says
 * (row counts from the Parquet footers), every refused form refused with the status
 * NX_SQL_REFUSED and the output left as it was, the row and time limits, the three
 * formats exactly (lists as JSON arrays), and the data path's relations (schemas, profile_name, --profile).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/processor.h"
#include "profile/profile_output.h"
#include "profile/profile_table.h"
#include "sql/sql.h"
#include "synth/synth.h"

static char tmp[] = "/tmp/nx_test_sql_XXXXXX";
static char cap[256], dp[256], prof[256], dev0[300];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmp))
        return -1;
    snprintf(cap, sizeof cap, "%s/cap", tmp);
    snprintf(dp, sizeof dp, "%s/dp", tmp);
    snprintf(prof, sizeof prof, "%s/prof", tmp);
    snprintf(dev0, sizeof dev0, "%s/profiles/global/run-nd0-nc0@latest", dp);
    nx_synth_options so = {.out_dir = cap, .preset = NX_SYNTH_TINY, .cores = 2, .seed = 1, .system = true};
    nx_synth_stats ss;
    nx_error err = {0};
    if (nx_synth_run(&so, &ss, &err) != 0)
        return fprintf(stderr, "synth: %s\n", err.msg), -1;
    nx_synth_stats_free(&ss);
    nx_process_options po = {.capture_dir = cap, .data_path = dp, .display_name = "run"};
    nx_process_stats ps;
    if (nx_process_run(&po, &ps, &err) != 0)
        return fprintf(stderr, "process: %s\n", err.msg), -1;
    nx_process_stats_free(&ps);
    po = (nx_process_options){.capture_dir = cap, .output_file = prof};
    if (nx_process_run(&po, &ps, &err) != 0)
        return fprintf(stderr, "process: %s\n", err.msg), -1;
    nx_process_stats_free(&ps);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return nx_remove_tree(tmp);
}

/* Runs q on db; the status, and the answer in *out (NUL-terminated, caller frees). */
static nx_sql_status run(nx_sql *db, const char *q, uint64_t max_rows, double timeout, nx_sql_format f, char **out,
                         nx_error *err)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, ""); /* an empty answer is "" */
    nx_sql_limits lim = {timeout, max_rows};
    nx_sql_status st = nx_sql_run(db, q, &lim, f, &b, err);
    *out = nx_strbuf_detach(&b);
    return st;
}

static int64_t table_rows(const char *dir, const char *table)
{
    nx_profile_table *t;
    nx_error err;
    assert_int_equal(nx_profile_table_open(dir, table, &t, &err), 0);
    int64_t n = nx_profile_table_num_rows(t);
    nx_profile_table_close(t);
    return n;
}

static void test_count_matches_reader(void **state)
{
    (void)state;
    nx_error err;
    nx_sql *db = nx_sql_open(dev0, NULL, &err);
    assert_non_null(db);
    char *out, want[128];
    assert_int_equal(run(db, "SELECT COUNT(*) AS n FROM Instruction", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    snprintf(want, sizeof want, "n\n%lld\n", (long long)table_rows(dev0, "Instruction"));
    assert_string_equal(out, want);
    free(out);
    /* A join of two tables of the profile */
    assert_int_equal(run(db, "SELECT COUNT(*) FROM Instruction i JOIN HloInstruction h ON i.raw_hlo_id = h.id "
                             "WHERE false", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    free(out);
    nx_sql_close(db);
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const refused[] = {
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_parquet('/etc/x.parquet')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM read_blob('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "COPY (SELECT 1) TO '/tmp/nx_test_sql_copy.csv'",
        "COPY Instruction TO '/tmp/nx_test_sql_copy.parquet'",
        "ATTACH '/tmp/nx_test_sql_attach.db' AS x",
        "DETACH x",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET threads = 1",
        "RESET threads",
        "PRAGMA version",
        "PRAGMA enable_profiling",
        "CREATE TABLE t AS SELECT 1",
        "CREATE VIEW v AS SELECT 1",
        "CREATE MACRO m(x) AS x",
        "DROP VIEW Instruction",
        "INSERT INTO Instruction SELECT * FROM Instruction",
        "UPDATE Instruction SET opcode = 'x'",
        "DELETE FROM Instruction",
        "ALTER VIEW Instruction RENAME TO y",
        "EXPORT DATABASE '/tmp/nx_test_sql_export'",
        "CALL pragma_version()",
        "BEGIN TRANSACTION",
        "CHECKPOINT",
        "USE main",
        "SELECT 1; SELECT 2",
        "SELECT 1; DROP VIEW Instruction",
        "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
        "SELECT * FROM enable_logging()",
        "SELECT * FROM \"Enable_Profiling\" /* comment */ ()",
        "SELECT * FROM system.main.enable_peg_parser()",
        "SELECT * FROM checkpoint()",
        "SUMMARIZE SELECT * FROM truncate_duckdb_logs()",
        "EXPLAIN ANALYZE SELECT * FROM disable_logging()",
        "SELECT * FROM query('SELECT 1')",
        "SELECT * FROM query_table('Metadata')",
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
        "",
        "  -- only a comment\n",
    };
    nx_error err;
    nx_sql *db = nx_sql_open(dev0, NULL, &err);
    assert_non_null(db);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        nx_strbuf b = NX_STRBUF_INIT;
        nx_strbuf_puts(&b, "before");
        nx_sql_limits lim = {5, 10};
        nx_sql_status st = nx_sql_run(db, refused[i], &lim, NX_SQL_JSON, &b, &err);
        if (st != NX_SQL_REFUSED)
            fail_msg("not refused (%d): %s: %s", (int)st, refused[i], err.msg);
        assert_non_null(strstr(err.msg, "refused"));
        assert_string_equal(b.data, "before");
        nx_strbuf_free(&b);
    }
    /* Nothing was written, and the views are all still there. */
    struct stat st;
    assert_int_not_equal(stat("/tmp/nx_test_sql_copy.csv", &st), 0);
    assert_int_not_equal(stat("/tmp/nx_test_sql_copy.parquet", &st), 0);
    assert_int_not_equal(stat("/tmp/nx_test_sql_attach.db", &st), 0);
    assert_int_not_equal(stat("/tmp/nx_test_sql_export", &st), 0);
    char *out;
    assert_int_equal(run(db, "SELECT COUNT(*) > 0 FROM Instruction", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    free(out);
    assert_int_equal(run(db, "SELECT current_setting('threads') > 0", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    free(out);
    /* Read-only forms the engine answers */
    static const char *const answered[] = {
        "DESCRIBE Instruction", "SUMMARIZE Metadata", "SHOW TABLES", "VALUES (1), (2)",
        "WITH a AS (SELECT 1 AS x) SELECT * FROM a", "FROM Metadata SELECT ntff_version",
        "EXPLAIN SELECT COUNT(*) FROM Instruction", "EXPLAIN ANALYZE SELECT COUNT(*) FROM Instruction",
        "/* a comment */ SELECT 1", "(SELECT 1)", "SELECT 'checkpoint' AS query",
    };
    for (size_t i = 0; i < sizeof answered / sizeof answered[0]; i++) {
        if (run(db, answered[i], 10, 5, NX_SQL_TEXT, &out, &err) != NX_SQL_OK)
            fail_msg("not answered: %s: %s", answered[i], err.msg);
        free(out);
    }
    nx_sql_close(db);
}

static void test_failed_and_open_errors(void **state)
{
    (void)state;
    nx_error err;
    nx_sql *db = nx_sql_open(dev0, NULL, &err);
    assert_non_null(db);
    char *out;
    assert_int_equal(run(db, "SELEC 1", 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_FAILED);
    assert_non_null(strstr(err.msg, "syntax"));
    free(out);
    /* An error when the query starts (a cast out of range), told as the engine says it */
    assert_int_equal(run(db, "SELECT 300::TINYINT", 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_FAILED);
    assert_non_null(strstr(err.msg, "Conversion Error"));
    assert_null(strstr(err.msg, "pending"));
    free(out);
    assert_int_equal(run(db, "SELECT * FROM NoSuchTable", 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_FAILED);
    assert_non_null(strstr(err.msg, "NoSuchTable"));
    free(out);
    assert_int_equal(run(db, "SELECT {'a': 1} AS st", 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_FAILED);
    assert_non_null(strstr(err.msg, "CAST it to VARCHAR"));
    free(out);
    nx_sql_close(db);
    char path[300];
    snprintf(path, sizeof path, "%s/none", tmp);
    assert_null(nx_sql_open(path, NULL, &err));
    assert_non_null(strstr(err.msg, path));
    assert_null(nx_sql_open(cap, NULL, &err)); /* a capture is not a profile */
    assert_non_null(strstr(err.msg, "not a profile"));
    assert_null(nx_sql_open(dp, "no-such", &err));
    assert_non_null(strstr(err.msg, "no-such"));
    assert_null(nx_sql_open(prof, "run", &err)); /* --profile needs a data path */
}

static void test_limits(void **state)
{
    (void)state;
    nx_error err;
    nx_sql *db = nx_sql_open(dev0, NULL, &err);
    assert_non_null(db);
    char *out;
    assert_int_equal(run(db, "SELECT range AS r FROM range(5000)", 3000, 5, NX_SQL_JSON, &out, &err), NX_SQL_OK);
    assert_non_null(strstr(out, "\"row_count\":3000,\"truncated\":true,\"row_limit\":3000}"));
    assert_non_null(strstr(out, "\n[2999]]"));
    free(out);
    assert_int_equal(run(db, "SELECT range AS r FROM range(5000)", 5000, 5, NX_SQL_JSON, &out, &err), NX_SQL_OK);
    assert_non_null(strstr(out, "\"row_count\":5000,\"truncated\":false,\"row_limit\":5000}"));
    free(out);
    /* A limit that falls on a chunk's end (2048 rows a chunk) still sees the rows after it. */
    assert_int_equal(run(db, "SELECT range AS r FROM range(4097)", 2048, 5, NX_SQL_JSON, &out, &err), NX_SQL_OK);
    assert_non_null(strstr(out, "\"row_count\":2048,\"truncated\":true"));
    free(out);
    assert_int_equal(run(db, "SELECT range AS r FROM range(3)", 2, 5, NX_SQL_TEXT, &out, &err), NX_SQL_OK);
    assert_non_null(strstr(out, "(2 rows)\n(stopped at the row limit of 2 rows"));
    free(out);
    /* Ten billion rows of a cross join cannot finish in 0.2 s. */
    assert_int_equal(run(db, "SELECT SUM(a.range * b.range) FROM range(100000) a, range(100000) b", 10, 0.2,
                         NX_SQL_JSON, &out, &err),
                     NX_SQL_TIMEOUT);
    assert_non_null(strstr(err.msg, "time limit"));
    assert_string_equal(out, "");
    free(out);
    /* The engine answers again after an interrupt. */
    assert_int_equal(run(db, "SELECT 1 AS one", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "one\n1\n");
    free(out);
    nx_sql_close(db);
}

static void test_formats(void **state)
{
    (void)state;
    nx_error err;
    nx_sql *db = nx_sql_open(dev0, NULL, &err);
    assert_non_null(db);
    const char *q = "SELECT 'a,b\"c' AS s, NULL AS n, '' AS e, 1.50 AS d, 9007199254740993 AS big, -7 AS i, "
                    "true AS t, CAST('nan' AS DOUBLE) AS x, 0.1::DOUBLE AS f, DATE '2024-01-02' AS dt";
    char *out;
    assert_int_equal(run(db, q, 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "s,n,e,d,big,i,t,x,f,dt\n\"a,b\"\"c\",,\"\",1.50,9007199254740993,-7,true,nan,0.1,2024-01-02\n");
    free(out);
    assert_int_equal(run(db, q, 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "{\"columns\":[\"s\",\"n\",\"e\",\"d\",\"big\",\"i\",\"t\",\"x\",\"f\",\"dt\"],"
                             "\"types\":[\"VARCHAR\",\"INTEGER\",\"VARCHAR\",\"DECIMAL(3,2)\",\"BIGINT\",\"INTEGER\","
                             "\"BOOLEAN\",\"DOUBLE\",\"DOUBLE\",\"DATE\"],\"rows\":[\n"
                             "[\"a,b\\\"c\",null,\"\",1.50,\"9007199254740993\",-7,true,null,0.1,\"2024-01-02\"]],"
                             "\"row_count\":1,\"truncated\":false,\"row_limit\":10}\n");
    free(out);
    assert_int_equal(run(db, "SELECT 'ab' AS name, 12 AS n UNION ALL SELECT 'long name', NULL ORDER BY 1", 10, 5,
                         NX_SQL_TEXT, &out, &err),
                     NX_SQL_OK);
    assert_string_equal(out, "name      | n\n----------+-----\nab        |   12\nlong name | NULL\n(2 rows)\n");
    free(out);
    /* Integers to 128 bits and decimals exactly, timestamps as the engine prints them */
    assert_int_equal(run(db, "SELECT -5::HUGEINT a, -170141183460469231731687303715884105727::HUGEINT b, "
                             "340282366920938463463374607431768211455::UHUGEINT c, -12.345::DECIMAL(30,3) d, "
                             "-0.05::DECIMAL(4,2) e, 18446744073709551615::UBIGINT f, (-128)::TINYINT g, "
                             "TIMESTAMP '1969-12-31 23:59:59.25' h, TIMESTAMP_NS '2024-01-02 03:04:05.000000007' i",
                         10, 5, NX_SQL_CSV, &out, &err),
                     NX_SQL_OK);
    assert_string_equal(out, "a,b,c,d,e,f,g,h,i\n-5,-170141183460469231731687303715884105727,"
                             "340282366920938463463374607431768211455,-12.345,-0.05,18446744073709551615,-128,"
                             "1969-12-31 23:59:59.25,2024-01-02 03:04:05.000000007\n");
    free(out);
    /* Lists as JSON arrays: in the JSON answer as arrays, in CSV as quoted text */
    const char *lists = "SELECT [[1, 2], [3]] AS ll, ['a,b', NULL] AS s, []::INT[] AS e, NULL::INT[] AS n, "
                        "[9007199254740993, -1] AS big";
    assert_int_equal(run(db, lists, 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "{\"columns\":[\"ll\",\"s\",\"e\",\"n\",\"big\"],\"types\":[\"INTEGER[][]\",\"VARCHAR[]\","
                             "\"INTEGER[]\",\"INTEGER[]\",\"BIGINT[]\"],\"rows\":[\n[[[1,2],[3]],[\"a,b\",null],[],null,"
                             "[\"9007199254740993\",-1]]],\"row_count\":1,\"truncated\":false,\"row_limit\":10}\n");
    free(out);
    assert_int_equal(run(db, lists, 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "ll,s,e,n,big\n\"[[1,2],[3]]\",\"[\"\"a,b\"\",null]\",[],,\"[\"\"9007199254740993\"\",-1]\"\n");
    free(out);
    assert_int_equal(run(db, "SELECT 1 AS x WHERE false", 10, 5, NX_SQL_JSON, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "{\"columns\":[\"x\"],\"types\":[\"INTEGER\"],\"rows\":[],\"row_count\":0,"
                             "\"truncated\":false,\"row_limit\":10}\n");
    free(out);
    nx_sql_close(db);
}

static void test_data_path(void **state)
{
    (void)state;
    nx_error err;
    nx_sql *db = nx_sql_open(dp, NULL, &err);
    if (!db)
        fail_msg("%s", err.msg);
    char *out;
    assert_int_equal(run(db, "SELECT profile_name, COUNT(*) AS n FROM Instruction GROUP BY 1 ORDER BY 1", 10, 5,
                         NX_SQL_CSV, &out, &err),
                     NX_SQL_OK);
    char want[512], d1[300];
    snprintf(d1, sizeof d1, "%s/profiles/global/run-nd0-nc1@latest", dp);
    snprintf(want, sizeof want, "profile_name,n\nrun-nd0-nc0,%lld\nrun-nd0-nc1,%lld\n",
             (long long)table_rows(dev0, "Instruction"), (long long)table_rows(d1, "Instruction"));
    assert_string_equal(out, want);
    free(out);
    assert_int_equal(run(db, "SELECT COUNT(*) AS n FROM \"run-nd0-nc1\".Instruction", 10, 5, NX_SQL_CSV, &out, &err),
                     NX_SQL_OK);
    snprintf(want, sizeof want, "n\n%lld\n", (long long)table_rows(d1, "Instruction"));
    assert_string_equal(out, want);
    free(out);
    /* Metadata is in every profile: the union has a row from each. */
    assert_int_equal(run(db, "SELECT profile_name FROM Metadata ORDER BY 1", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    assert_string_equal(out, "profile_name\nrun\nrun-nd0-nc0\nrun-nd0-nc1\n");
    free(out);
    nx_sql_close(db);
    /* --profile: that profile's tables unqualified, without profile_name */
    db = nx_sql_open(dp, "run", &err);
    assert_non_null(db);
    assert_int_equal(run(db, "SELECT COUNT(*) AS n FROM SystemProfileEvents", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_OK);
    char sys[300];
    snprintf(sys, sizeof sys, "%s/profiles/global/run@latest", dp);
    snprintf(want, sizeof want, "n\n%lld\n", (long long)table_rows(sys, "SystemProfileEvents"));
    assert_string_equal(out, want);
    free(out);
    assert_int_equal(run(db, "SELECT profile_name FROM SystemProfileEvents", 10, 5, NX_SQL_CSV, &out, &err),
                     NX_SQL_FAILED);
    free(out);
    assert_int_equal(run(db, "SELECT * FROM Instruction", 10, 5, NX_SQL_CSV, &out, &err), NX_SQL_FAILED);
    free(out);
    nx_sql_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_matches_reader), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_failed_and_open_errors), cmocka_unit_test(test_limits),
        cmocka_unit_test(test_formats), cmocka_unit_test(test_data_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
