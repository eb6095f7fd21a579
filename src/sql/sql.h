/*
 * sql.h — read-only SQL over profiles: the one engine behind `nxprof sql`, the
 * reference-compatible query API (/api/v1/db/<name>/_search) and anything else that
 * asks a question in SQL.
 *
 * Relations: every table of a profile (a split table's files as one) is a relation
 * under its own name. Opened on a data path, every profile is also a schema named
 * after its display name ("run-nd0-nc0"."Instruction"), and each unqualified name is
 * the union of that table over all profiles with a `profile_name` column added
 * (docs/sql.md). Opened on one profile directory (or with `profile` set), the
 * unqualified names are that profile's tables, without `profile_name`.
 *
 * Safety: a query is exactly one read-only SELECT (WITH ... SELECT, VALUES, DESCRIBE
 * and SUMMARIZE of a relation, EXPLAIN of a SELECT included); everything else (DDL, DML,
 * ATTACH, COPY, SET, PRAGMA, INSTALL/LOAD, several statements, functions that read
 * files or the network) is refused with NX_SQL_REFUSED before anything runs. Every
 * query runs under a time limit and a row limit (nx_sql_limits).
 *
 * Threads: an nx_sql may be shared by threads; each nx_sql_run is independent.
 */
#ifndef NX_SQL_H
#define NX_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

typedef struct nx_sql nx_sql;

typedef enum nx_sql_status {
    NX_SQL_OK = 0,
    NX_SQL_REFUSED = 1,  /* not a single read-only SELECT: the message says why (HTTP 400) */
    NX_SQL_FAILED = 2,   /* the engine rejected or could not run it: syntax, unknown name (400) */
    NX_SQL_TIMEOUT = 3,  /* interrupted at the time limit (HTTP 408 in the API) */
    NX_SQL_INTERNAL = 4, /* out of memory, unreadable file (500) */
} nx_sql_status;

typedef struct nx_sql_limits {
    double timeout_s;  /* > 0; the default is NX_SQL_DEFAULT_TIMEOUT_S */
    uint64_t max_rows; /* > 0; rows past it are not returned and the answer says so */
} nx_sql_limits;

#define NX_SQL_DEFAULT_TIMEOUT_S 30.0
#define NX_SQL_DEFAULT_MAX_ROWS 100000u

typedef enum nx_sql_format { NX_SQL_TEXT, NX_SQL_CSV, NX_SQL_JSON } nx_sql_format;

/* Opens `path`: a profile directory (system or device), or a data path (the folder
 * holding profiles/global). `profile` (NULL for none) picks one profile of a data
 * path by display name. NULL with err naming the path when nothing there is a profile. */
nx_sql *nx_sql_open(const char *path, const char *profile, nx_error *err);
void nx_sql_close(nx_sql *db);

/* Runs `query` and appends its answer to `out` in `format`:
 *   NX_SQL_JSON: {"columns":[..],"types":[..],"rows":[[..],..],"row_count":N,
 *                 "truncated":bool,"row_limit":M} (types as the engine names them;
 *                 integers beyond 2^53 as strings, NaN/inf as null),
 *   NX_SQL_CSV:  RFC 4180 with a header line,
 *   NX_SQL_TEXT: an aligned table for a terminal, then "(N rows)" and a line saying
 *                when the row limit cut it.
 * On anything but NX_SQL_OK, err says why and `out` is left as it was. */
nx_sql_status nx_sql_run(nx_sql *db, const char *query, const nx_sql_limits *limits, nx_sql_format format,
                         nx_strbuf *out, nx_error *err);

/* What an answer held, for callers that report it outside the text (a CSV answer has
 * no room to say it was cut). */
typedef struct nx_sql_answer_info {
    uint64_t rows;   /* rows in the answer */
    bool truncated;  /* the row limit left rows out */
} nx_sql_answer_info;

/* nx_sql_run, also filling *info (on NX_SQL_OK). */
nx_sql_status nx_sql_run_info(nx_sql *db, const char *query, const nx_sql_limits *limits, nx_sql_format format,
                              nx_strbuf *out, nx_sql_answer_info *info, nx_error *err);

#endif
