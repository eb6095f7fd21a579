/* schema.c — lookups over the generated catalogue and the SchemaFields rows. See schema.h. */
#include "schema/schema.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema/catalogue_data.h"
#include "util/json.h"
#include "util/strbuf.h"

size_t nx_schema_table_count(void)
{
    return nx_catalogue_n_tables;
}

const nx_schema_table *nx_schema_table_at(size_t i)
{
    return i < nx_catalogue_n_tables ? &nx_catalogue_tables[i] : NULL;
}

const nx_schema_table *nx_schema_table_find(const char *name)
{
    for (size_t i = 0; i < nx_catalogue_n_tables; i++)
        if (strcmp(nx_catalogue_tables[i].name, name) == 0)
            return &nx_catalogue_tables[i];
    return NULL;
}

int nx_schema_field_index(const nx_schema_table *t, const char *name)
{
    for (size_t i = 0; i < t->n_fields; i++)
        if (strcmp(t->fields[i].name, name) == 0)
            return (int)i;
    return -1;
}

const nx_schema_field *nx_schema_field_find(const nx_schema_table *t, const char *name)
{
    int i = nx_schema_field_index(t, name);
    return i < 0 ? NULL : &t->fields[i];
}

size_t nx_schema_enum_count(void)
{
    return nx_catalogue_n_enums;
}

const nx_schema_enum *nx_schema_enum_at(size_t i)
{
    return i < nx_catalogue_n_enums ? &nx_catalogue_enums[i] : NULL;
}

const nx_schema_enum *nx_schema_enum_find(const char *name)
{
    for (size_t i = 0; i < nx_catalogue_n_enums; i++)
        if (strcmp(nx_catalogue_enums[i].name, name) == 0)
            return &nx_catalogue_enums[i];
    return NULL;
}

size_t nx_schema_field_total(void)
{
    size_t n = 0;
    for (size_t i = 0; i < nx_catalogue_n_tables; i++)
        n += nx_catalogue_tables[i].n_fields;
    return n;
}

size_t nx_schema_fields_row_count(void)
{
    return nx_schema_field_total();
}

/* A field is an enum either through its enum column or by having an enum as its type. */
static const nx_schema_enum *field_enum(const nx_schema_field *f)
{
    const nx_schema_enum *e = f->enum_name[0] ? nx_schema_enum_find(f->enum_name) : NULL;
    return e ? e : nx_schema_enum_find(f->type);
}

int nx_schema_fields_row_build(size_t i, nx_schema_fields_row *out)
{
    for (size_t t = 0; t < nx_catalogue_n_tables; t++) {
        const nx_schema_table *tab = &nx_catalogue_tables[t];
        if (i >= tab->n_fields) {
            i -= tab->n_fields;
            continue;
        }
        const nx_schema_field *f = &tab->fields[i];
        *out = (nx_schema_fields_row){
            .table_name = tab->name,
            .table_description = tab->description,
            .field_name = f->name,
            .field_description = f->description,
            .field_example = f->example,
            .field_type = f->type,
            .field_required = f->required,
            .field_format = f->format,
            .field_unit = f->unit,
            .field_minimum = NAN,
            .field_maximum = NAN,
            .field_enum_values = NULL,
        };
        const nx_schema_enum *e = field_enum(f);
        if (e) {
            nx_strbuf b = NX_STRBUF_INIT;
            nx_strbuf_putc(&b, '[');
            for (size_t v = 0; v < e->n_values; v++) {
                if (v)
                    nx_strbuf_putc(&b, ',');
                nx_json_put_cstr(&b, e->values[v]);
            }
            nx_strbuf_putc(&b, ']');
            out->field_enum_values = nx_strbuf_detach(&b);
            if (!out->field_enum_values) {
                errno = ENOMEM;
                return -1;
            }
        }
        return 0;
    }
    errno = ERANGE;
    return -1;
}
