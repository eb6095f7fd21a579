/*
 * schema_fields_write.c — test helper: writes DIR/SchemaFields.parquet with the
 * processor's table writer, for tests/e2e/js/schema_fields.test.mjs to read with DuckDB.
 *
 *   schema_fields_write DIR
 *
 * Exit status 0, or 1 with the writer's message on stderr, 2 for bad usage.
 */
#include <stdio.h>

#include "profile/table_writer.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: schema_fields_write DIR\n");
        return 2;
    }
    nx_error err;
    if (nx_write_schema_fields(argv[1], NULL, &err) < 0) {
        fprintf(stderr, "schema_fields_write: %s\n", err.msg);
        return 1;
    }
    return 0;
}
