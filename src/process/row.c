/* row.c — catalogue rows with null filling and required-field checks (see row.h). */
#include "process/row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/program_file.h"

int nx_row_open(nx_row *r, const nx_table_dest *dest, const char *table, nxpq_error *err)
{
    memset(r, 0, sizeof *r);
    r->tw = nx_table_writer_open(dest->dir, table, dest->max_rows, dest->base, err);
    if (!r->tw)
        return -1;
    r->s = nx_table_writer_schema(r->tw);
    r->set = calloc(r->s->n_fields, sizeof *r->set);
    if (!r->set) {
        nx_table_writer_abort(r->tw);
        r->tw = NULL;
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
        return -1;
    }
    return 0;
}

int nx_row_begin(nx_row *r, nxpq_error *err)
{
    r->w = nx_table_begin_row(r->tw, err);
    if (!r->w)
        return -1;
    memset(r->set, 0, r->s->n_fields * sizeof *r->set);
    r->rc = 0;
    return 0;
}

size_t nx_row_col(nx_row *r, const char *name)
{
    int c = nx_schema_field_index(r->s, name);
    if (c < 0) {
        r->missing = name;
        return SIZE_MAX;
    }
    return (size_t)c;
}

static bool known(nx_row *r, size_t c)
{
    if (c < r->s->n_fields)
        return true;
    if (r->rc == 0)
        r->rc = -1;
    return false;
}

static void mark(nx_row *r, size_t c, int rc)
{
    r->set[c] = true;
    if (rc != 0 && r->rc == 0)
        r->rc = rc;
}

static void out_of_range(nx_row *r, size_t c)
{
    r->bad = r->s->fields[c].name;
    if (r->rc == 0)
        r->rc = -1;
    r->set[c] = true;
}

void nx_row_i64(nx_row *r, size_t c, int64_t v)
{
    if (!known(r, c))
        return;
    if (r->s->fields[c].column_type == NX_COL_INT32) {
        if (v < INT32_MIN || v > INT32_MAX)
            out_of_range(r, c);
        else
            mark(r, c, nxpq_put_int32(r->w, c, (int32_t)v));
    } else {
        mark(r, c, nxpq_put_int64(r->w, c, v));
    }
}

void nx_row_num(nx_row *r, size_t c, double v)
{
    if (!known(r, c))
        return;
    if (r->s->fields[c].column_type == NX_COL_FLOAT)
        mark(r, c, nxpq_put_float(r->w, c, (float)v));
    else
        mark(r, c, nxpq_put_double(r->w, c, v));
}

void nx_row_bool(nx_row *r, size_t c, bool v)
{
    if (known(r, c))
        mark(r, c, nxpq_put_bool(r->w, c, v));
}

void nx_row_strn(nx_row *r, size_t c, const char *s, size_t len)
{
    if (known(r, c))
        mark(r, c, nxpq_put_string(r->w, c, s, len));
}

void nx_row_str(nx_row *r, size_t c, const char *s)
{
    nx_row_strn(r, c, s, strlen(s));
}

void nx_row_list_i64(nx_row *r, size_t c, const int64_t *v, size_t n)
{
    if (known(r, c))
        mark(r, c, nxpq_put_list_int64(r->w, c, v, n));
}

void nx_row_opt_i64(nx_row *r, size_t c, int64_t v)
{
    if (v != NX_ABSENT)
        nx_row_i64(r, c, v);
}

void nx_row_opt_str(nx_row *r, size_t c, const char *s)
{
    if (s && *s)
        nx_row_str(r, c, s);
}

int nx_row_end(nx_row *r, nxpq_error *err)
{
    if (r->missing) {
        snprintf(err->msg, sizeof err->msg, "%s: the catalogue has no field %s", r->s->name, r->missing);
        return -1;
    }
    if (r->bad) {
        snprintf(err->msg, sizeof err->msg, "%s: value of %s out of range for its column type", r->s->name,
                 r->bad);
        return -1;
    }
    for (size_t c = 0; c < r->s->n_fields; c++) {
        if (r->set[c])
            continue;
        if (r->s->fields[c].required) {
            snprintf(err->msg, sizeof err->msg, "%s: no value for required field %s", r->s->name,
                     r->s->fields[c].name);
            return -1;
        }
        mark(r, c, nxpq_put_null(r->w, c));
    }
    if (r->rc != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: could not store a value", r->s->name);
        return -1;
    }
    return nx_table_end_row(r->tw, err);
}

uint64_t nx_row_count(const nx_row *r)
{
    return r->tw ? nx_table_writer_rows(r->tw) : 0;
}

int nx_row_close(nx_row *r, bool ok, unsigned *tables, nxpq_error *err)
{
    int rc = 0;
    if (r->tw) {
        if (ok && nx_table_writer_rows(r->tw) > 0) {
            rc = nx_table_writer_close(r->tw, err);
            if (rc == 0)
                (*tables)++;
        } else {
            nx_table_writer_abort(r->tw);
        }
    }
    free(r->set);
    memset(r, 0, sizeof *r);
    return rc;
}

void nx_row_discard(nx_row *r)
{
    unsigned ignored = 0;
    nxpq_error e;
    nx_row_close(r, false, &ignored, &e);
}
