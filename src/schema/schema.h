/*
 * schema.h — the profile schema catalogue.
 *
 * Every table and field nxprof knows about (the Neuron Explorer profile schema,
 * version NX_SCHEMA_VERSION) lives in ONE definition file, src/schema/catalogue.tsv.
 * At build time gen_catalogue turns it into the constant arrays behind this header,
 * so the table writers, the SchemaFields table and `nxprof schema` all read the
 * same facts and nothing is maintained twice.
 *
 * All returned pointers refer to static, immutable data; nothing here allocates
 * except nx_schema_fields_row_build(), which documents its own ownership.
 */
#ifndef NX_SCHEMA_H
#define NX_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "schema/schema_types.h"

/* The schema version the catalogue describes, e.g. "7.4.0". */
extern const char NX_SCHEMA_VERSION[];

/* How SystemProfileMetadata's first_ts/last_ts (and a system profile's
 * Metadata first_ts/last_ts) end when some framework trace's times count from
 * the trace start rather than the Unix epoch: "<ns> ns after the trace start"
 * NX_RELATIVE_TIME_SUFFIX (docs/processing.md). Written by process, read back
 * by the profile listing. */
#define NX_RELATIVE_TIME_SUFFIX " (relative time)"

/* Tables in catalogue order (alphabetical, as in the reference). */
size_t nx_schema_table_count(void);
const nx_schema_table *nx_schema_table_at(size_t i);
/* NULL when no table has that exact name. */
const nx_schema_table *nx_schema_table_find(const char *name);
/* NULL when the table has no field of that exact name. */
const nx_schema_field *nx_schema_field_find(const nx_schema_table *t, const char *name);
/* Index of the field within its table, or -1. */
int nx_schema_field_index(const nx_schema_table *t, const char *name);

size_t nx_schema_enum_count(void);
const nx_schema_enum *nx_schema_enum_at(size_t i);
/* NULL when `name` is not an enum (object types such as MemoryBandwidthPoint are not). */
const nx_schema_enum *nx_schema_enum_find(const char *name);

/* Total number of fields over all tables (656 for 7.4.0). */
size_t nx_schema_field_total(void);

/*
 * One row of the SchemaFields table: one per (table, field) of the whole catalogue.
 * Strings point into static data except enum_values, which is built on demand.
 * minimum/maximum are NaN when the catalogue states no bound (written as null).
 * format/unit/example are "" when the reference gives none (written as null).
 */
typedef struct nx_schema_fields_row {
    const char *table_name;
    const char *table_description;
    const char *field_name;
    const char *field_description;
    const char *field_example;
    const char *field_type;
    bool field_required;
    const char *field_format;
    const char *field_unit;
    double field_minimum;
    double field_maximum;
    char *field_enum_values;  /* JSON array of the enum's values, e.g. ["2x","4x"], or
                                 NULL when the field is not an enum. Owned by the caller:
                                 free() it. */
} nx_schema_fields_row;

/* Number of SchemaFields rows (== nx_schema_field_total()). */
size_t nx_schema_fields_row_count(void);
/* Fill row i (0-based, table order then field order). Returns 0, or -1 when i is out
 * of range or memory runs out (errno set). */
int nx_schema_fields_row_build(size_t i, nx_schema_fields_row *out);

#endif
