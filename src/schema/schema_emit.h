/*
 * schema_emit.h — the catalogue as documents: OpenAPI 3 YAML and plain JSON.
 *
 * Both return a malloc'd, NUL-terminated document (the caller frees it), or NULL
 * when memory runs out. The JSON shape is
 *   {"version":..., "tables":[{"name","kind","transient","description",
 *     "fields":[{"name","type","format","unit","required","enum","example","description"}]}]}
 * with "required" a boolean and "" wherever the reference gives no value.
 * The YAML is an OpenAPI 3.0 document whose components.schemas holds one object
 * per table (plus one string schema per enum).
 */
#ifndef NX_SCHEMA_EMIT_H
#define NX_SCHEMA_EMIT_H

char *nx_schema_to_json(void);
char *nx_schema_to_yaml(void);

#endif
