/*
 * sql.c — nx_sql_open, nx_sql_close and nx_sql_run (sql.h): an in-memory DuckDB
 * database holding the catalogue's views, locked down before it is handed out; each
 * run on its own connection, so runs on several threads are independent and an
 * interrupt stops only its own query.
 *
 * Limits. Time: a timer thread interrupts the run's connection at the deadline, and
 * again every few milliseconds until the run notices (an interrupt that lands between
 * the engine's steps could otherwise be missed); the run then answers NX_SQL_TIMEOUT.
 * Rows: the result is streamed chunk by chunk and fetching stops at max_rows; the
 * answer is marked truncated when any row was left.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sql/sql_internal.h"

struct nx_sql {
    duckdb_database db;
};

nx_sql *nx_sql_open(const char *path, const char *profile, nx_error *err)
{
    nx_sql_catalogue cat;
    if (nx_sql_catalogue_build(path, profile, &cat, err) != 0)
        return NULL;
    nx_sql *s = calloc(1, sizeof *s);
    duckdb_config cfg = NULL;
    duckdb_connection con = NULL;
    char *open_err = NULL;
    int rc = -1;
    if (!s || duckdb_create_config(&cfg) == DuckDBError) {
        nx_error_set(err, "SQL engine: out of memory");
        goto done;
    }
    /* Extensions nxprof does not link are neither downloaded nor loaded. */
    duckdb_set_config(cfg, "autoinstall_known_extensions", "false");
    duckdb_set_config(cfg, "autoload_known_extensions", "false");
    duckdb_set_config(cfg, "allow_community_extensions", "false");
    if (duckdb_open_ext(NULL, &s->db, cfg, &open_err) == DuckDBError) {
        nx_error_set(err, "SQL engine: %s", open_err ? open_err : "cannot start");
        goto done;
    }
    duckdb_result res;
    if (duckdb_connect(s->db, &con) == DuckDBError) {
        nx_error_set(err, "SQL engine: cannot connect");
        goto done;
    }
    /* Parquet footers are read once per open (at the views' creation), not at every
     * query: a 1 ms window over a 10M-row table is then a few pages' work. */
    if (duckdb_query(con, "SET GLOBAL parquet_metadata_cache = true", &res) == DuckDBError) {
        nx_error_set(err, "SQL engine: %s", duckdb_result_error(&res));
        duckdb_destroy_result(&res);
        goto done;
    }
    duckdb_destroy_result(&res);
    if (duckdb_query(con, cat.ddl.data, &res) == DuckDBError) {
        nx_error_set(err, "%s: creating the relations failed: %s", path, duckdb_result_error(&res));
        duckdb_destroy_result(&res);
        goto done;
    }
    duckdb_destroy_result(&res);
    rc = nx_sql_lockdown(con, cat.dirs, cat.n_dirs, err);
done:
    if (open_err)
        duckdb_free(open_err);
    duckdb_disconnect(&con);
    duckdb_destroy_config(&cfg);
    nx_sql_catalogue_free(&cat);
    if (rc != 0) {
        nx_sql_close(s);
        return NULL;
    }
    return s;
}

void nx_sql_close(nx_sql *db)
{
    if (!db)
        return;
    duckdb_close(&db->db);
    free(db);
}

/* ------------------------------------------------------------- time limit -- */

typedef struct sql_timer {
    duckdb_connection con;
    struct timespec deadline;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, fired;
    pthread_t thread;
} sql_timer;

static void *timer_main(void *arg)
{
    sql_timer *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->done) {
        struct timespec until = t->deadline;
        if (t->fired) { /* keep interrupting every 5 ms until the run stops */
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 5000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
        }
        if (pthread_cond_timedwait(&t->cv, &t->mu, &until) == ETIMEDOUT && !t->done) {
            t->fired = true;
            duckdb_interrupt(t->con);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static int timer_start(sql_timer *t, duckdb_connection con, double seconds)
{
    memset(t, 0, sizeof *t);
    t->con = con;
    clock_gettime(CLOCK_REALTIME, &t->deadline);
    double whole = (double)(time_t)seconds;
    t->deadline.tv_sec += (time_t)seconds;
    t->deadline.tv_nsec += (long)((seconds - whole) * 1e9);
    if (t->deadline.tv_nsec >= 1000000000) {
        t->deadline.tv_sec++;
        t->deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (pthread_create(&t->thread, NULL, timer_main, t) != 0) {
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        return -1;
    }
    return 0;
}

/* Stops the timer; true when it fired. */
static bool timer_stop(sql_timer *t)
{
    pthread_mutex_lock(&t->mu);
    t->done = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    return t->fired;
}

static bool timer_fired(sql_timer *t)
{
    pthread_mutex_lock(&t->mu);
    bool f = t->fired;
    pthread_mutex_unlock(&t->mu);
    return f;
}

/* ----------------------------------------------------------------- fetch -- */

/* Writes the result's rows, at most max_rows; *truncated when rows were left. */
static nx_sql_status write_rows(duckdb_result *res, nx_sql_writer *w, nx_sql_column *cols, uint64_t max_rows,
                                sql_timer *timer, bool *truncated, nx_error *err)
{
    size_t n = w->n_cols;
    duckdb_data_chunk chunk;
    bool ok = true;
    *truncated = false;
    while ((chunk = duckdb_fetch_chunk(*res)) != NULL) {
        size_t rows = duckdb_data_chunk_get_size(chunk);
        if (rows > 0 && w->rows >= max_rows) {
            *truncated = true;
            duckdb_destroy_data_chunk(&chunk);
            break;
        }
        for (size_t r = 0; r < rows && w->rows < max_rows; r++) {
            for (size_t c = 0; c < n; c++) {
                nx_sql_cell cell;
                ok &= nx_sql_cell_read(&cols[c], duckdb_data_chunk_get_vector(chunk, c), r, &cell);
                nx_sql_writer_cell(w, c, &cell);
            }
            nx_sql_writer_row_end(w);
            if (w->rows == max_rows && r + 1 < rows)
                *truncated = true;
        }
        duckdb_destroy_data_chunk(&chunk);
        if (*truncated || !ok || timer_fired(timer))
            break;
    }
    if (!ok) {
        nx_error_set(err, "SQL engine: out of memory writing a list");
        return NX_SQL_INTERNAL;
    }
    if (timer_fired(timer))
        return NX_SQL_TIMEOUT;
    const char *e = duckdb_result_error(res);
    if (e) {
        nx_error_set(err, "%s", e);
        return duckdb_result_error_type(res) == DUCKDB_ERROR_INTERRUPT ? NX_SQL_TIMEOUT : NX_SQL_FAILED;
    }
    return NX_SQL_OK;
}

/* Starts the streamed result of stmt into *res (duckdb_destroy_result it on
 * NX_SQL_OK). The calling thread works on the query's tasks until its result is ready,
 * with DuckDB's threads beside it: a GROUP BY over 10M rows then takes the time of a
 * materialised result (fetching from a streamed result straight away leaves the final
 * pipelines to fewer threads, about 1.6x slower). */
static nx_sql_status run_pending(duckdb_prepared_statement stmt, duckdb_result *res, sql_timer *timer,
                                 nx_error *err)
{
    duckdb_pending_result pending = NULL;
    if (duckdb_pending_prepared_streaming(stmt, &pending) == DuckDBError) {
        const char *e = pending ? duckdb_pending_error(pending) : NULL;
        nx_error_set(err, "%s", e ? e : "the query could not start");
        duckdb_destroy_pending(&pending);
        return NX_SQL_FAILED;
    }
    duckdb_pending_state ps;
    while (((ps = duckdb_pending_execute_task(pending)) == DUCKDB_PENDING_RESULT_NOT_READY ||
            ps == DUCKDB_PENDING_NO_TASKS_AVAILABLE) &&
           !timer_fired(timer))
        if (ps == DUCKDB_PENDING_NO_TASKS_AVAILABLE) /* the other threads hold every task: leave them the cores */
            nanosleep(&(struct timespec){0, 50000}, NULL);
    nx_sql_status st = NX_SQL_OK;
    if (ps == DUCKDB_PENDING_ERROR) { /* the engine's own message (executing it would wrap it in another) */
        const char *e = duckdb_pending_error(pending);
        nx_error_set(err, "%s", e ? e : "the query failed");
        st = timer_fired(timer) ? NX_SQL_TIMEOUT : NX_SQL_FAILED;
    } else if (duckdb_execute_pending(pending, res) == DuckDBError) {
        const char *e = duckdb_result_error(res);
        nx_error_set(err, "%s", e ? e : "the query failed");
        st = duckdb_result_error_type(res) == DUCKDB_ERROR_INTERRUPT ? NX_SQL_TIMEOUT : NX_SQL_FAILED;
        duckdb_destroy_result(res);
    }
    duckdb_destroy_pending(&pending);
    return st;
}

/* Runs the checked statement into `answer`. */
static nx_sql_status execute(duckdb_prepared_statement stmt, const nx_sql_limits *lim, nx_sql_format format,
                             nx_strbuf *answer, sql_timer *timer, nx_sql_answer_info *info, nx_error *err)
{
    duckdb_result res;
    nx_sql_status st = run_pending(stmt, &res, timer, err);
    if (st != NX_SQL_OK)
        return st;
    size_t n = duckdb_column_count(&res);
    nx_sql_column *cols = calloc(n ? n : 1, sizeof *cols);
    const char **names = calloc(n ? n : 1, sizeof *names);
    st = cols && names ? NX_SQL_OK : NX_SQL_INTERNAL;
    if (st != NX_SQL_OK)
        nx_error_set(err, "SQL engine: out of memory");
    for (size_t c = 0; st == NX_SQL_OK && c < n; c++) {
        names[c] = duckdb_column_name(&res, c);
        if (nx_sql_column_describe(&res, c, &cols[c], err) != 0)
            st = NX_SQL_FAILED;
    }
    nx_sql_writer w;
    if (st == NX_SQL_OK && nx_sql_writer_begin(&w, format, answer, n, names, cols) != 0) {
        nx_sql_writer_free(&w);
        st = NX_SQL_INTERNAL;
        nx_error_set(err, "SQL engine: out of memory");
    }
    if (st == NX_SQL_OK) {
        st = write_rows(&res, &w, cols, lim->max_rows, timer, &info->truncated, err);
        info->rows = w.rows;
        if (st == NX_SQL_OK)
            nx_sql_writer_end(&w, info->truncated, lim->max_rows);
        else
            nx_sql_writer_free(&w);
    }
    for (size_t c = 0; cols && c < n; c++)
        nx_sql_column_free(&cols[c]);
    free(cols);
    free(names);
    duckdb_destroy_result(&res);
    return st;
}

nx_sql_status nx_sql_run(nx_sql *db, const char *query, const nx_sql_limits *limits, nx_sql_format format,
                         nx_strbuf *out, nx_error *err)
{
    nx_sql_answer_info info;
    return nx_sql_run_info(db, query, limits, format, out, &info, err);
}

nx_sql_status nx_sql_run_info(nx_sql *db, const char *query, const nx_sql_limits *limits, nx_sql_format format,
                              nx_strbuf *out, nx_sql_answer_info *info, nx_error *err)
{
    memset(info, 0, sizeof *info);
    nx_sql_limits lim = {NX_SQL_DEFAULT_TIMEOUT_S, NX_SQL_DEFAULT_MAX_ROWS};
    if (limits && limits->timeout_s > 0)
        lim.timeout_s = limits->timeout_s;
    if (limits && limits->max_rows > 0)
        lim.max_rows = limits->max_rows;
    duckdb_connection con = NULL;
    if (duckdb_connect(db->db, &con) == DuckDBError) {
        nx_error_set(err, "SQL engine: cannot connect");
        return NX_SQL_INTERNAL;
    }
    sql_timer timer;
    if (timer_start(&timer, con, lim.timeout_s) != 0) {
        duckdb_disconnect(&con);
        nx_error_set(err, "SQL engine: cannot start the timer thread");
        return NX_SQL_INTERNAL;
    }
    nx_strbuf answer = NX_STRBUF_INIT;
    duckdb_prepared_statement stmt = NULL;
    nx_sql_status st = nx_sql_prepare_checked(con, query, &stmt, err);
    if (st == NX_SQL_OK)
        st = execute(stmt, &lim, format, &answer, &timer, info, err);
    duckdb_destroy_prepare(&stmt);
    if (timer_stop(&timer) && (st == NX_SQL_OK || st == NX_SQL_FAILED || st == NX_SQL_TIMEOUT)) {
        st = NX_SQL_TIMEOUT;
        nx_error_set(err, "the query ran past its time limit of %g s and was stopped", lim.timeout_s);
    }
    duckdb_disconnect(&con);
    if (st == NX_SQL_OK && nx_strbuf_failed(&answer)) {
        st = NX_SQL_INTERNAL;
        nx_error_set(err, "SQL engine: out of memory writing the answer");
    }
    if (st == NX_SQL_OK)
        nx_strbuf_append(out, answer.data, answer.len);
    nx_strbuf_free(&answer);
    return st;
}
