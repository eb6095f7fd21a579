/* row0.c — the first row of a profile table (rules in row0.h). */
#include "query/row0.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"

bool nx_cell_type_ok(nxpq_type t)
{
    return t == NXPQ_INT32 || t == NXPQ_INT64 || t == NXPQ_BOOLEAN || t == NXPQ_FLOAT || t == NXPQ_DOUBLE ||
           t == NXPQ_STRING;
}

void nx_cell_free(nx_cell *c)
{
    free(c->name);
    free(c->s);
}

bool nx_cell_set(nx_cell *x, const nxpq_column_data *col, size_t r)
{
    x->type = col->type;
    x->null = col->valid && !col->valid[r];
    if (x->null)
        return true;
    switch (col->type) {
    case NXPQ_INT32: x->i = col->values.i32[r]; break;
    case NXPQ_INT64: x->i = col->values.i64[r]; break;
    case NXPQ_BOOLEAN: x->i = col->values.b[r] != 0; break;
    case NXPQ_FLOAT: x->f = col->values.f32[r]; break;
    case NXPQ_DOUBLE: x->f = col->values.f64[r]; break;
    case NXPQ_STRING:
        x->len = (size_t)(col->offsets[r + 1] - col->offsets[r]);
        if (!(x->s = malloc(x->len + 1)))
            return false;
        memcpy(x->s, col->data + col->offsets[r], x->len);
        x->s[x->len] = '\0';
        break;
    default: x->null = true; break;
    }
    return true;
}

void nx_row0_free(nx_row0 *r)
{
    for (size_t i = 0; i < r->n; i++)
        nx_cell_free(&r->cells[i]);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

const nx_cell *nx_row0_field(const nx_row0 *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->cells[i].name, name) == 0)
            return &r->cells[i];
    return NULL;
}

/* The cells of t's scalar columns (null) and their names for the scan. -1 when out of memory. */
static int columns(nx_profile_table *t, nx_row0 *out, const char **names)
{
    for (size_t c = 0; c < nx_profile_table_num_columns(t); c++) {
        const nxpq_column_info *ci = nx_profile_table_column(t, c);
        if (!nx_cell_type_ok(ci->type))
            continue;
        nx_cell *x = &out->cells[out->n];
        *x = (nx_cell){.type = ci->type, .null = true, .name = strdup(ci->name)};
        if (!x->name)
            return -1;
        names[out->n++] = ci->name;
    }
    return 0;
}

int nx_row0_read(const char *profile_dir, const char *table, nx_row0 *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    nx_profile_table *t;
    int rc = nx_profile_table_open(profile_dir, table, &t, err);
    if (rc != 0)
        return rc == NX_PROFILE_TABLE_ABSENT ? 0 : -1;
    out->present = true;
    out->rows = nx_profile_table_num_rows(t);
    size_t nc = nx_profile_table_num_columns(t);
    const char **names = calloc(nc + 1, sizeof *names);
    nx_profile_scan *s = NULL;
    rc = -1;
    if (!names || !(out->cells = calloc(nc + 1, sizeof *out->cells)) || columns(t, out, names) < 0)
        goto oom;
    if (out->n > 0 && out->rows > 0) {
        nx_profile_scan_options so = {.columns = names, .n_columns = out->n, .batch_rows = 16};
        const nxpq_batch *b;
        int more = (s = nx_profile_scan_open(t, &so, err)) ? nx_profile_scan_next(s, &b, err) : -1;
        if (more < 0)
            goto done;
        out->has_row = more > 0 && b->n_rows > 0;
        for (size_t c = 0; out->has_row && c < out->n; c++)
            if (!nx_cell_set(&out->cells[c], &b->columns[c], 0))
                goto oom;
    }
    rc = 0;
    goto done;
oom:
    nx_error_set(err, "%s: out of memory", table);
done:
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    free(names);
    if (rc != 0)
        nx_row0_free(out);
    return rc;
}
