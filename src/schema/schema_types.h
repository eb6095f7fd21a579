/*
 * schema_types.h — the records the schema catalogue is made of: a table, its
 * fields (with how each is stored in Parquet) and a named enum.
 *
 * Their own header because two sides hold them: the arrays gen_catalogue
 * generates (catalogue_data.h) and the lookups that read those arrays and hand
 * the records out (schema.h); neither includes the other.
 */
#ifndef NX_SCHEMA_TYPES_H
#define NX_SCHEMA_TYPES_H

#include <stdbool.h>
#include <stddef.h>

/* How a field is stored in Parquet. Derived from (type, format) by the generator. */
typedef enum nx_column_type {
    NX_COL_INT64,        /* integer/int64            -> INT64                       */
    NX_COL_INT32,        /* integer/int32            -> INT32                       */
    NX_COL_FLOAT,        /* number/float             -> FLOAT                       */
    NX_COL_DOUBLE,       /* number/double            -> DOUBLE                      */
    NX_COL_STRING,       /* string, or a named enum  -> BYTE_ARRAY (STRING)         */
    NX_COL_BOOLEAN,      /* boolean                  -> BOOLEAN                     */
    NX_COL_LIST_INT64,   /* array of integer/int64   -> LIST<INT64>, 3-level form   */
    NX_COL_LIST_STRING,  /* array of string          -> LIST<STRING>, 3-level form  */
    NX_COL_OBJECT_LIST   /* array of an object type: API responses only, never written */
} nx_column_type;

typedef struct nx_schema_field {
    const char *name;
    const char *type;        /* reference spelling: "integer", "array of string", ... */
    const char *format;      /* "int64", "float", ... or ""                            */
    const char *unit;        /* "nanoseconds", "bytes", ... or ""                       */
    bool required;           /* true: the column is never null                          */
    const char *enum_name;   /* named enum or object type, or ""                        */
    const char *example;     /* example value as text, or ""                            */
    const char *description;
    nx_column_type column_type;
} nx_schema_field;

typedef struct nx_schema_table {
    const char *name;
    const char *kind;        /* timeline, samples, edges, rollup, summary, lookup,
                                metadata, diagnostics, api                          */
    bool transient;          /* computed by the API on request, never written to disk */
    const char *description;
    const nx_schema_field *fields;
    size_t n_fields;
} nx_schema_table;

typedef struct nx_schema_enum {
    const char *name;
    const char *const *values;
    size_t n_values;
} nx_schema_enum;

#endif
