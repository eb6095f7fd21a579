/*
 * sql_guard.c — what keeps a query read-only (sql.h "Safety").
 *
 * Two layers. The engine is locked down once, after the catalogue's views exist and
 * before any user text runs: files are readable only inside the profile directories
 * (allowed_directories, then enable_external_access off, which also refuses ATTACH,
 * COPY ... TO a file, INSTALL and LOAD), nothing spilled to temporary files (a query
 * past the memory limit fails instead), and lock_configuration forbids every later
 * SET. Extensions are neither installed nor loaded on demand (set at open, sql.c):
 * the ones nxprof links (parquet, json, icu, core functions) are built in.
 * Then each query is checked before it runs: exactly one statement, of SELECT type
 * (DESCRIBE, SUMMARIZE, SHOW, VALUES and WITH are SELECTs to the engine), or EXPLAIN
 * [ANALYZE] of such a statement, calling none of the table functions that change the
 * engine's state or run SQL text (DENIED_FUNCTIONS). Anything else is refused by its statement type, and a
 * SELECT whose binding needs a file outside the profile (read_csv('/etc/passwd'),
 * glob, read_text) fails with the engine's permission error, which is reported as a
 * refusal too.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql/sql_internal.h"
#include "util/strbuf.h"

/* The directory `dir` as an SQL string literal with a trailing '/' (so a sibling
 * "dir2" is not inside it), single quotes doubled. */
static void put_dir_literal(nx_strbuf *b, const char *dir)
{
    nx_strbuf_putc(b, '\'');
    for (; *dir; dir++) {
        if (*dir == '\'')
            nx_strbuf_putc(b, '\'');
        nx_strbuf_putc(b, *dir);
    }
    nx_strbuf_puts(b, "/'");
}

int nx_sql_lockdown(duckdb_connection con, char *const *dirs, size_t n_dirs, nx_error *err)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "SET allowed_directories = [");
    for (size_t i = 0; i < n_dirs; i++) {
        if (i)
            nx_strbuf_putc(&b, ',');
        put_dir_literal(&b, dirs[i]);
    }
    /* No spilling: an in-memory database would write its temporary files into the
     * working directory; a query past the memory limit fails instead. */
    nx_strbuf_puts(&b, "];\nSET temp_directory = '';\nSET enable_external_access = false;\n"
                       "SET lock_configuration = true;\n");
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        return nx_error_set(err, "SQL engine: out of memory");
    }
    duckdb_result res;
    int rc = 0;
    if (duckdb_query(con, b.data, &res) == DuckDBError)
        rc = nx_error_set(err, "SQL engine: locking the engine down failed: %s", duckdb_result_error(&res));
    duckdb_destroy_result(&res);
    nx_strbuf_free(&b);
    return rc;
}

static const char *statement_name(duckdb_statement_type t)
{
    static const char *const names[] = {
        [DUCKDB_STATEMENT_TYPE_INSERT] = "INSERT",   [DUCKDB_STATEMENT_TYPE_UPDATE] = "UPDATE",
        [DUCKDB_STATEMENT_TYPE_DELETE] = "DELETE",   [DUCKDB_STATEMENT_TYPE_PREPARE] = "PREPARE",
        [DUCKDB_STATEMENT_TYPE_CREATE] = "CREATE",   [DUCKDB_STATEMENT_TYPE_EXECUTE] = "EXECUTE",
        [DUCKDB_STATEMENT_TYPE_ALTER] = "ALTER",     [DUCKDB_STATEMENT_TYPE_TRANSACTION] = "a transaction",
        [DUCKDB_STATEMENT_TYPE_COPY] = "COPY",       [DUCKDB_STATEMENT_TYPE_ANALYZE] = "ANALYZE",
        [DUCKDB_STATEMENT_TYPE_VARIABLE_SET] = "SET VARIABLE",
        [DUCKDB_STATEMENT_TYPE_CREATE_FUNC] = "CREATE FUNCTION",
        [DUCKDB_STATEMENT_TYPE_DROP] = "DROP",       [DUCKDB_STATEMENT_TYPE_EXPORT] = "EXPORT",
        [DUCKDB_STATEMENT_TYPE_PRAGMA] = "PRAGMA",   [DUCKDB_STATEMENT_TYPE_VACUUM] = "VACUUM",
        [DUCKDB_STATEMENT_TYPE_CALL] = "CALL",       [DUCKDB_STATEMENT_TYPE_SET] = "SET",
        [DUCKDB_STATEMENT_TYPE_LOAD] = "LOAD or INSTALL", [DUCKDB_STATEMENT_TYPE_ATTACH] = "ATTACH",
        [DUCKDB_STATEMENT_TYPE_DETACH] = "DETACH",   [DUCKDB_STATEMENT_TYPE_COPY_DATABASE] = "COPY DATABASE",
        [DUCKDB_STATEMENT_TYPE_UPDATE_EXTENSIONS] = "UPDATE EXTENSIONS",
        [DUCKDB_STATEMENT_TYPE_MERGE_INTO] = "MERGE INTO",
    };
    if ((size_t)t < sizeof names / sizeof names[0] && names[t])
        return names[t];
    return "a statement that is not a SELECT";
}

/* q past blanks and comments (-- to the line's end, and block comments). */
static const char *skip_blank(const char *q)
{
    for (;;) {
        while (isspace((unsigned char)*q))
            q++;
        if (q[0] == '-' && q[1] == '-') {
            q += strcspn(q, "\n");
        } else if (q[0] == '/' && q[1] == '*') {
            const char *end = strstr(q + 2, "*/");
            if (!end)
                return q;
            q = end + 2;
        } else {
            return q;
        }
    }
}

/* True when the query's first word opens a read-only statement. PRAGMA is refused
 * here although the engine turns some PRAGMAs into SELECTs: a PRAGMA is a setting's
 * form, and sql.h answers SELECTs. The statement type is checked after this. */
static bool read_only_start(const char *q)
{
    static const char *const words[] = {"SELECT", "WITH", "VALUES", "FROM", "TABLE", "DESCRIBE",
                                        "SUMMARIZE", "SHOW", "EXPLAIN"};
    q = skip_blank(q);
    if (*q == '(')
        return true;
    size_t n = 0;
    while (isalpha((unsigned char)q[n]))
        n++;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (n == strlen(words[i]) && strncasecmp(q, words[i], n) == 0)
            return true;
    return false;
}

/* Table functions a SELECT may call that change the engine's state for every later
 * query (logging, profiling, the parser in use, checkpoints), or that run SQL text the
 * check never saw (query, query_table, json_execute_serialized_sql): refused by name. */
static const char *const DENIED_FUNCTIONS[] = {
    "enable_logging",   "disable_logging",   "truncate_duckdb_logs", "enable_profiling",
    "disable_profiling", "enable_peg_parser", "disable_peg_parser",   "checkpoint",
    "force_checkpoint", "query",             "query_table",          "json_execute_serialized_sql",
};

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The first denied function called in q: a denied name as a whole word (any case,
 * quoted or not), then blanks or comments, then '('. The whole text is scanned, string
 * literals and comments too, so a name hidden in a string (query('...')) is caught; a
 * false alarm only refuses a query. NULL when none. */
static const char *denied_call(const char *q)
{
    for (const char *p = q; *p; p++) {
        if (!word_char(*p) || (p > q && word_char(p[-1])))
            continue;
        size_t n = 0;
        while (word_char(p[n]))
            n++;
        for (size_t i = 0; i < sizeof DENIED_FUNCTIONS / sizeof DENIED_FUNCTIONS[0]; i++) {
            if (n != strlen(DENIED_FUNCTIONS[i]) || strncasecmp(p, DENIED_FUNCTIONS[i], n) != 0)
                continue;
            const char *after = p + n + (p[n] == '"');
            if (*skip_blank(after) == '(')
                return DENIED_FUNCTIONS[i];
        }
        p += n - 1;
    }
    return NULL;
}

/* The text after a leading "EXPLAIN [ANALYZE|ANALYSE]" (and the blanks around it), or
 * NULL when `query` does not start that way. */
static const char *after_explain(const char *q)
{
    q = skip_blank(q);
    if (strncasecmp(q, "EXPLAIN", 7) != 0 || !isspace((unsigned char)q[7]))
        return NULL;
    q += 7;
    while (isspace((unsigned char)*q))
        q++;
    if ((strncasecmp(q, "ANALYZE", 7) == 0 || strncasecmp(q, "ANALYSE", 7) == 0) && isspace((unsigned char)q[7]))
        for (q += 7; isspace((unsigned char)*q); q++)
            ;
    return q;
}

static nx_sql_status prepare_one(duckdb_connection con, const char *query, bool explained,
                                 duckdb_prepared_statement *out, nx_error *err)
{
    if (!*skip_blank(query)) {
        nx_error_set(err, "refused: the query is empty");
        return NX_SQL_REFUSED;
    }
    duckdb_extracted_statements ext = NULL;
    idx_t n = duckdb_extract_statements(con, query, &ext);
    nx_sql_status st = NX_SQL_OK;
    const char *e = n == 0 ? duckdb_extract_statements_error(ext) : NULL;
    if (n == 0 && e) {
        nx_error_set(err, "%s", e);
        st = NX_SQL_FAILED;
    } else if (n == 1 && !read_only_start(query)) {
        nx_error_set(err, "refused: only a read-only SELECT is answered (SELECT, WITH, VALUES, FROM, TABLE, "
                            "DESCRIBE, SUMMARIZE, SHOW, or EXPLAIN of one); this query starts with \"%.20s\"",
                       skip_blank(query));
        st = NX_SQL_REFUSED;
    } else if (n == 1 && (e = denied_call(query)) != NULL) {
        nx_error_set(err, "refused: %s() changes the engine's state or runs SQL text unchecked; a query only "
                            "reads", e);
        st = NX_SQL_REFUSED;
    } else if (n != 1) {
        nx_error_set(err, "refused: a query is exactly one SELECT statement; this text holds %llu",
                       (unsigned long long)n);
        st = NX_SQL_REFUSED;
    } else if (duckdb_prepare_extracted_statement(con, ext, 0, out) == DuckDBError) {
        e = duckdb_prepare_error(*out);
        bool permission = e && strncmp(e, "Permission Error", 16) == 0;
        nx_error_set(err, "%s%s", permission ? "refused: it reads outside the profile: " : "", e ? e : "?");
        st = permission ? NX_SQL_REFUSED : NX_SQL_FAILED;
        duckdb_destroy_prepare(out);
    }
    duckdb_destroy_extracted(&ext);
    if (st != NX_SQL_OK)
        return st;
    duckdb_statement_type t = duckdb_prepared_statement_type(*out);
    if (t == DUCKDB_STATEMENT_TYPE_SELECT)
        return NX_SQL_OK;
    if (t == DUCKDB_STATEMENT_TYPE_EXPLAIN && !explained) {
        /* EXPLAIN ANALYZE runs its statement: it must be a SELECT itself. */
        const char *inner = after_explain(query);
        duckdb_prepared_statement check = NULL;
        if (!inner)
            st = NX_SQL_REFUSED;
        else
            st = prepare_one(con, inner, true, &check, err);
        duckdb_destroy_prepare(&check);
        if (st == NX_SQL_OK)
            return NX_SQL_OK;
        if (!inner)
            nx_error_set(err, "refused: EXPLAIN is answered in the form EXPLAIN [ANALYZE] SELECT ...");
    } else {
        nx_error_set(err, "refused: only a read-only SELECT is answered; this is %s%s", explained ? "EXPLAIN of " : "",
                       statement_name(t));
        st = NX_SQL_REFUSED;
    }
    duckdb_destroy_prepare(out);
    return st;
}

nx_sql_status nx_sql_prepare_checked(duckdb_connection con, const char *query, duckdb_prepared_statement *out,
                                     nx_error *err)
{
    *out = NULL;
    if (!query) {
        nx_error_set(err, "refused: the query is empty");
        return NX_SQL_REFUSED;
    }
    return prepare_one(con, query, false, out, err);
}
