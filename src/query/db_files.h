/*
 * db_files.h — a profile's tables and the Parquet files that hold them, as the
 * reference-compatible API's listDbFiles answers (docs/api.md "Reference-compatible
 * query API"):
 *   - tables: query/profile_info.h's table names (split tables as one, sorted);
 *   - files: each table's files in order (profile/profile_table.h: <T>.parquet, or
 *     <T>_0.parquet .. <T>_k.parquet), named relative to the profile directory, with
 *     their size (stat's st_size) and row count (from the file's footer, which the
 *     table's reader holds anyway: no data page is read);
 *   - a table whose files cannot be opened (a gap in the numbering, a damaged
 *     footer) keeps its name with no files and `error` naming the file at fault; the
 *     other tables are listed all the same.
 */
#ifndef NX_QUERY_DB_FILES_H
#define NX_QUERY_DB_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

typedef struct nx_db_file {
    char *name;          /* relative to the profile directory */
    uint64_t size;
    int64_t rows;
} nx_db_file;

typedef struct nx_db_table {
    char *name;
    nx_db_file *files;
    size_t n_files;
    int64_t rows;        /* the files' rows together */
    uint64_t size;       /* the files' sizes together */
    char *error;         /* NULL, or why the table's files could not be read */
} nx_db_table;

typedef struct nx_db_files {
    nx_db_table *tables;
    size_t n_tables;
} nx_db_files;

/* Lists profile_dir (rules above). 0 (*out filled; nx_db_files_free it), or -1 with
 * err naming the directory that could not be listed, or saying memory ran out. */
int nx_db_files_read(const char *profile_dir, nx_db_files *out, nx_error *err);
void nx_db_files_free(nx_db_files *f);

#endif
