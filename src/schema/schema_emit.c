/* schema_emit.c — renders the catalogue as JSON and as OpenAPI 3 YAML. See schema_emit.h.
 *
 * YAML scalars are written as JSON string literals, which YAML reads as
 * double-quoted scalars; that keeps one escaping routine for both formats. */
#include "schema/schema_emit.h"

#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "util/json.h"
#include "util/strbuf.h"

static void json_field(nx_strbuf *b, const nx_schema_field *f)
{
    nx_strbuf_puts(b, "{\"name\": ");
    nx_json_put_cstr(b, f->name);
    nx_strbuf_puts(b, ", \"type\": ");
    nx_json_put_cstr(b, f->type);
    nx_strbuf_puts(b, ", \"format\": ");
    nx_json_put_cstr(b, f->format);
    nx_strbuf_puts(b, ", \"unit\": ");
    nx_json_put_cstr(b, f->unit);
    nx_strbuf_printf(b, ", \"required\": %s, \"enum\": ", f->required ? "true" : "false");
    nx_json_put_cstr(b, f->enum_name);
    nx_strbuf_puts(b, ", \"example\": ");
    nx_json_put_cstr(b, f->example);
    nx_strbuf_puts(b, ", \"description\": ");
    nx_json_put_cstr(b, f->description);
    nx_strbuf_putc(b, '}');
}

char *nx_schema_to_json(void)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\n  \"version\": ");
    nx_json_put_cstr(&b, NX_SCHEMA_VERSION);
    nx_strbuf_puts(&b, ",\n  \"tables\": [");
    for (size_t i = 0; i < nx_schema_table_count(); i++) {
        const nx_schema_table *t = nx_schema_table_at(i);
        nx_strbuf_puts(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        nx_json_put_cstr(&b, t->name);
        nx_strbuf_puts(&b, ", \"kind\": ");
        nx_json_put_cstr(&b, t->kind);
        nx_strbuf_printf(&b, ", \"transient\": %s,\n     \"description\": ", t->transient ? "true" : "false");
        nx_json_put_cstr(&b, t->description);
        nx_strbuf_puts(&b, ",\n     \"fields\": [");
        for (size_t j = 0; j < t->n_fields; j++) {
            nx_strbuf_puts(&b, j ? ",\n       " : "\n       ");
            json_field(&b, &t->fields[j]);
        }
        nx_strbuf_puts(&b, "\n     ]}");
    }
    nx_strbuf_puts(&b, "\n  ]\n}\n");
    return nx_strbuf_detach(&b);
}

/* True when s is entirely a JSON-compatible number (so it may be written bare). */
static int is_plain_number(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return 0;
    if (*p == '0' && p[1] >= '0' && p[1] <= '9')
        return 0;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

static void yaml_enum_values(nx_strbuf *b, const nx_schema_enum *e, const char *indent)
{
    nx_strbuf_printf(b, "%senum:\n", indent);
    for (size_t v = 0; v < e->n_values; v++) {
        nx_strbuf_printf(b, "%s  - ", indent);
        nx_json_put_cstr(b, e->values[v]);
        nx_strbuf_putc(b, '\n');
    }
}

/* The type part of a property: scalar, array, enum or reference to an object schema. */
static void yaml_property_type(nx_strbuf *b, const nx_schema_field *f)
{
    const char *ind = "          ";
    const nx_schema_enum *type_enum = nx_schema_enum_find(f->type);
    const nx_schema_enum *col_enum = f->enum_name[0] ? nx_schema_enum_find(f->enum_name) : NULL;
    if (type_enum) {
        nx_strbuf_printf(b, "%stype: string\n", ind);
        yaml_enum_values(b, type_enum, ind);
        return;
    }
    if (strncmp(f->type, "array of ", 9) == 0) {
        const char *item = f->type + 9;
        nx_strbuf_printf(b, "%stype: array\n%sitems:\n", ind, ind);
        if (nx_schema_table_find(item))
            nx_strbuf_printf(b, "%s  $ref: \"#/components/schemas/%s\"\n", ind, item);
        else {
            nx_strbuf_printf(b, "%s  type: %s\n", ind, item);
            if (f->format[0])
                nx_strbuf_printf(b, "%s  format: %s\n", ind, f->format);
        }
        return;
    }
    nx_strbuf_printf(b, "%stype: %s\n", ind, f->type);
    if (f->format[0])
        nx_strbuf_printf(b, "%sformat: %s\n", ind, f->format);
    if (col_enum)
        yaml_enum_values(b, col_enum, ind);
}

static void yaml_example(nx_strbuf *b, const nx_schema_field *f)
{
    if (!f->example[0])
        return;
    nx_strbuf_puts(b, "          example: ");
    int numeric = strcmp(f->type, "integer") == 0 || strcmp(f->type, "number") == 0;
    int boolean = strcmp(f->type, "boolean") == 0 &&
                  (strcmp(f->example, "true") == 0 || strcmp(f->example, "false") == 0);
    if ((numeric && is_plain_number(f->example)) || boolean)
        nx_strbuf_puts(b, f->example);
    else
        nx_json_put_cstr(b, f->example);
    nx_strbuf_putc(b, '\n');
}

static void yaml_table(nx_strbuf *b, const nx_schema_table *t)
{
    nx_strbuf_printf(b, "    %s:\n      type: object\n      description: ", t->name);
    nx_json_put_cstr(b, t->description);
    nx_strbuf_printf(b, "\n      x-nxprof-kind: %s\n      x-nxprof-transient: %s\n", t->kind,
                     t->transient ? "true" : "false");
    int any_required = 0;
    for (size_t j = 0; j < t->n_fields; j++)
        any_required |= t->fields[j].required;
    if (any_required) {
        nx_strbuf_puts(b, "      required:\n");
        for (size_t j = 0; j < t->n_fields; j++)
            if (t->fields[j].required)
                nx_strbuf_printf(b, "        - %s\n", t->fields[j].name);
    }
    nx_strbuf_puts(b, "      properties:\n");
    for (size_t j = 0; j < t->n_fields; j++) {
        const nx_schema_field *f = &t->fields[j];
        nx_strbuf_printf(b, "        %s:\n", f->name);
        yaml_property_type(b, f);
        nx_strbuf_puts(b, "          description: ");
        nx_json_put_cstr(b, f->description);
        nx_strbuf_putc(b, '\n');
        if (f->unit[0]) {
            nx_strbuf_puts(b, "          x-unit: ");
            nx_json_put_cstr(b, f->unit);
            nx_strbuf_putc(b, '\n');
        }
        if (!f->required)
            nx_strbuf_puts(b, "          nullable: true\n");
        yaml_example(b, f);
    }
}

char *nx_schema_to_yaml(void)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_printf(&b,
                     "# nxprof profile schema %s as an OpenAPI 3 document (generated from the catalogue).\n"
                     "openapi: \"3.0.3\"\n"
                     "info:\n"
                     "  title: \"nxprof profile schema\"\n"
                     "  version: \"%s\"\n"
                     "paths: {}\n"
                     "components:\n"
                     "  schemas:\n",
                     NX_SCHEMA_VERSION, NX_SCHEMA_VERSION);
    for (size_t i = 0; i < nx_schema_table_count(); i++)
        yaml_table(&b, nx_schema_table_at(i));
    for (size_t i = 0; i < nx_schema_enum_count(); i++) {
        const nx_schema_enum *e = nx_schema_enum_at(i);
        nx_strbuf_printf(&b, "    %s:\n      type: string\n", e->name);
        yaml_enum_values(&b, e, "      ");
    }
    return nx_strbuf_detach(&b);
}
