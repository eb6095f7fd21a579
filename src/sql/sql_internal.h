/*
 * sql_internal.h — the parts of the SQL engine (sql.h), one concern per file:
 *   sql_catalogue.c  the relations: which profiles and tables, as views over their files;
 *   sql_guard.c      the lock-down of the engine and the check that a query is one
 *                    read-only SELECT;
 *   sql_cells.c      a result's values as cells (typed text), read from DuckDB's vectors;
 *   sql_format.c     the answer in JSON, CSV or text;
 *   sql.c            open, close and the runner (time and row limits).
 * Only these files include duckdb.h.
 */
#ifndef NX_SQL_INTERNAL_H
#define NX_SQL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <duckdb.h>

#include "sql/sql.h"
#include "util/error.h"

/* ---------------------------------------------------------------- catalogue -- */

typedef struct nx_sql_catalogue {
    nx_strbuf ddl;   /* the statements that create the relations, each ending in ";\n" */
    char **dirs;     /* the real paths of the profile directories the relations read */
    size_t n_dirs;
} nx_sql_catalogue;

/* The relations of `path` (sql.h nx_sql_open's rules): 0, or -1 with err naming the
 * path (nothing there is a profile, `profile` is not one of the data path's, out of
 * memory). */
int nx_sql_catalogue_build(const char *path, const char *profile, nx_sql_catalogue *c, nx_error *err);
void nx_sql_catalogue_free(nx_sql_catalogue *c);

/* ------------------------------------------------------------------- guard -- */

/* Locks the engine down after the catalogue is created and before any user text runs:
 * extensions neither installed nor loaded, files readable only inside dirs, the
 * configuration locked. 0, or -1 with err. */
int nx_sql_lockdown(duckdb_connection con, char *const *dirs, size_t n_dirs, nx_error *err);

/* Prepares `query` when it is exactly one read-only statement (sql.h "Safety"):
 * NX_SQL_OK with *out set (duckdb_destroy_prepare it), NX_SQL_REFUSED or NX_SQL_FAILED
 * (a syntax error, an unknown name) with err. */
nx_sql_status nx_sql_prepare_checked(duckdb_connection con, const char *query, duckdb_prepared_statement *out,
                                     nx_error *err);

/* ------------------------------------------------------------------- cells -- */

typedef enum nx_sql_kind {
    NX_SQL_CELL_NULL,
    NX_SQL_CELL_BOOL,   /* "true" / "false" */
    NX_SQL_CELL_INT,    /* an exact integer's decimal text */
    NX_SQL_CELL_REAL,   /* a float's or decimal's text; "nan", "inf", "-inf" when not finite */
    NX_SQL_CELL_TEXT,   /* a string's bytes (also dates and timestamps) */
    NX_SQL_CELL_JSON,   /* a list, as JSON array text ([1,null,"a"]) */
} nx_sql_kind;

typedef struct nx_sql_cell {
    nx_sql_kind kind;
    const char *s;      /* the text: into buf or into the engine's vector */
    size_t len;
    bool finite;        /* REAL: false for nan and infinities */
    bool big;           /* INT: beyond +-2^53, what a JSON reader's double cannot hold */
    char buf[64];
} nx_sql_cell;

/* A column of a result (or a list's elements): its type as the engine names it, and
 * how to read it. */
typedef struct nx_sql_column {
    duckdb_type type;
    duckdb_type internal;          /* DECIMAL: its storage type */
    uint8_t scale;                 /* DECIMAL */
    char type_name[64];
    struct nx_sql_column *child;   /* LIST: its elements */
    nx_strbuf text;                /* LIST: the current cell's JSON text */
} nx_sql_column;

/* Describes column `col` of `res`: 0, or -1 with err when the answer cannot carry its
 * type (structs, maps and the like: the message says to CAST it to VARCHAR). */
int nx_sql_column_describe(duckdb_result *res, size_t col, nx_sql_column *c, nx_error *err);
void nx_sql_column_free(nx_sql_column *c);

/* The cell of `row` of vector `v` (a column described as c). A list's text lives in
 * c until the next read of c. false when memory ran out (the cell is then null). */
bool nx_sql_cell_read(nx_sql_column *c, duckdb_vector v, size_t row, nx_sql_cell *cell);

/* ------------------------------------------------------------------ format -- */

typedef struct nx_sql_writer {
    nx_sql_format format;
    nx_strbuf *out;
    size_t n_cols;
    uint64_t rows;
    /* TEXT: every cell's text, NUL-separated, kept until the widths are known */
    nx_strbuf cells;
    bool *right;           /* TEXT: the column is numeric (aligned right) */
} nx_sql_writer;

/* Appends a cell as a JSON value (the JSON answer's rule, also a list's elements). */
void nx_sql_json_value(nx_strbuf *b, const nx_sql_cell *c);

/* Starts an answer of n_cols columns into out: 0, or -1 when out of memory. */
int nx_sql_writer_begin(nx_sql_writer *w, nx_sql_format format, nx_strbuf *out, size_t n_cols,
                        const char *const *names, const nx_sql_column *cols);
void nx_sql_writer_cell(nx_sql_writer *w, size_t col, const nx_sql_cell *cell);
void nx_sql_writer_row_end(nx_sql_writer *w);
/* Ends the answer (row count, the row limit when truncated); frees what it holds. */
void nx_sql_writer_end(nx_sql_writer *w, bool truncated, uint64_t row_limit);
void nx_sql_writer_free(nx_sql_writer *w);

#endif
