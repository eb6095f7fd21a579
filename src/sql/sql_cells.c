/*
 * sql_cells.c — a result's values as cells, read straight from DuckDB's vectors.
 *
 * The answer carries scalars: BOOLEAN; the integers (8 to 128 bits, signed and
 * unsigned) exactly; FLOAT and DOUBLE as the shortest text that reads back to the
 * same value (util/float_text.h); DECIMAL exactly, from its stored integer and
 * scale; VARCHAR bytes; DATE and TIMESTAMP (s, ms, us, ns) as ISO text; a LIST of any
 * of these (or of lists) as JSON array text. Other types (STRUCT, MAP, ENUM, BLOB,
 * INTERVAL, TIME, UUID, ...) are refused by
 * nx_sql_column_describe with a message saying to CAST the column to VARCHAR.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"
#include "util/float_text.h"
#include "util/strbuf.h"

#define SAFE_INT 9007199254740992.0 /* 2^53 */

static const char *type_name(duckdb_type t)
{
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT: return "TINYINT";
    case DUCKDB_TYPE_SMALLINT: return "SMALLINT";
    case DUCKDB_TYPE_INTEGER: return "INTEGER";
    case DUCKDB_TYPE_BIGINT: return "BIGINT";
    case DUCKDB_TYPE_UTINYINT: return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT: return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER: return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT: return "UBIGINT";
    case DUCKDB_TYPE_HUGEINT: return "HUGEINT";
    case DUCKDB_TYPE_UHUGEINT: return "UHUGEINT";
    case DUCKDB_TYPE_FLOAT: return "FLOAT";
    case DUCKDB_TYPE_DOUBLE: return "DOUBLE";
    case DUCKDB_TYPE_DECIMAL: return "DECIMAL";
    case DUCKDB_TYPE_VARCHAR: return "VARCHAR";
    case DUCKDB_TYPE_DATE: return "DATE";
    case DUCKDB_TYPE_TIMESTAMP: return "TIMESTAMP";
    case DUCKDB_TYPE_TIMESTAMP_S: return "TIMESTAMP_S";
    case DUCKDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
    case DUCKDB_TYPE_TIMESTAMP_NS: return "TIMESTAMP_NS";
    case DUCKDB_TYPE_SQLNULL: return "NULL";
    default: return NULL;
    }
}

/* Describes a value of type lt into c (zeroed by the caller): 0; 1 when the answer
 * cannot carry it (*bad set to its type id); -1 when out of memory. */
static int describe_type(duckdb_logical_type lt, nx_sql_column *c, duckdb_type *bad)
{
    c->type = duckdb_get_type_id(lt);
    const char *name = type_name(c->type);
    if (c->type == DUCKDB_TYPE_DECIMAL) {
        c->internal = duckdb_decimal_internal_type(lt);
        c->scale = duckdb_decimal_scale(lt);
        snprintf(c->type_name, sizeof c->type_name, "DECIMAL(%u,%u)", (unsigned)duckdb_decimal_width(lt),
                 (unsigned)c->scale);
        return 0;
    }
    if (name) {
        snprintf(c->type_name, sizeof c->type_name, "%s", name);
        return 0;
    }
    if (c->type != DUCKDB_TYPE_LIST) {
        *bad = c->type;
        return 1;
    }
    if (!(c->child = calloc(1, sizeof *c->child)))
        return -1;
    duckdb_logical_type child = duckdb_list_type_child_type(lt);
    int rc = describe_type(child, c->child, bad);
    duckdb_destroy_logical_type(&child);
    if (rc == 0)
        snprintf(c->type_name, sizeof c->type_name, "%.61s[]", c->child->type_name);
    return rc;
}

int nx_sql_column_describe(duckdb_result *res, size_t col, nx_sql_column *c, nx_error *err)
{
    memset(c, 0, sizeof *c);
    duckdb_logical_type lt = duckdb_column_logical_type(res, col);
    duckdb_type bad = DUCKDB_TYPE_INVALID;
    int rc = describe_type(lt, c, &bad);
    duckdb_destroy_logical_type(&lt);
    if (rc < 0)
        return nx_error_set(err, "SQL engine: out of memory");
    if (rc > 0) {
        const char *cn = duckdb_column_name(res, col);
        return nx_error_set(err,
                              "column %zu (\"%s\") has a type the answer cannot carry (DuckDB type id %d: a struct, "
                              "map, enum, blob, interval, time or the like); CAST it to VARCHAR",
                              col + 1, cn ? cn : "", (int)bad);
    }
    return 0;
}

void nx_sql_column_free(nx_sql_column *c)
{
    if (c->child) {
        nx_sql_column_free(c->child);
        free(c->child);
        c->child = NULL;
    }
    nx_strbuf_free(&c->text);
}

/* The decimal text of a 128-bit magnitude with an optional sign, into buf. */
static size_t u128_text(unsigned __int128 v, bool negative, char *buf)
{
    char tmp[48];
    size_t n = 0;
    while (v > UINT64_MAX) { /* 128-bit division is a library call: only for the high digits */
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    }
    uint64_t w = (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + (int)(w % 10));
        w /= 10;
    } while (w);
    size_t k = 0;
    if (negative)
        buf[k++] = '-';
    while (n)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
    return k;
}

static void int_cell(nx_sql_cell *cell, __int128 v)
{
    cell->kind = NX_SQL_CELL_INT;
    cell->big = v > (__int128)SAFE_INT || v < -(__int128)SAFE_INT;
    unsigned __int128 mag = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    cell->len = u128_text(mag, v < 0, cell->buf);
    cell->s = cell->buf;
}

static void uint_cell(nx_sql_cell *cell, unsigned __int128 v)
{
    cell->kind = NX_SQL_CELL_INT;
    cell->big = v > (unsigned __int128)SAFE_INT;
    cell->len = u128_text(v, false, cell->buf);
    cell->s = cell->buf;
}

/* util/float_text.h's text of v (a FLOAT's as the float). */
static void real_cell(nx_sql_cell *cell, double v, bool is_float)
{
    cell->kind = NX_SQL_CELL_REAL;
    cell->s = cell->buf;
    cell->finite = isfinite(v);
    cell->len = is_float ? nx_f32_text(cell->buf, (float)v) : nx_f64_text(cell->buf, v);
}

/* A DECIMAL's stored integer v with `scale` digits after the point, exactly. */
static void decimal_cell(nx_sql_cell *cell, __int128 v, unsigned scale)
{
    char digits[48];
    unsigned __int128 mag = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    size_t n = u128_text(mag, false, digits), k = 0;
    cell->kind = NX_SQL_CELL_REAL;
    cell->finite = true;
    cell->s = cell->buf;
    if (v < 0)
        cell->buf[k++] = '-';
    if (n <= scale) { /* 0.00ddd */
        cell->buf[k++] = '0';
        cell->buf[k++] = '.';
        for (size_t z = n; z < scale; z++)
            cell->buf[k++] = '0';
        memcpy(cell->buf + k, digits, n);
        k += n;
    } else {
        memcpy(cell->buf + k, digits, n - scale);
        k += n - scale;
        if (scale) {
            cell->buf[k++] = '.';
            memcpy(cell->buf + k, digits + n - scale, scale);
            k += scale;
        }
    }
    cell->buf[k] = '\0';
    cell->len = k;
}

/* Shifted as unsigned: a left shift of a negative value is undefined; the conversion
 * back to signed is GCC's and clang's two's complement. */
static __int128 hugeint_value(duckdb_hugeint h)
{
    return (__int128)(((unsigned __int128)(uint64_t)h.upper << 64) | h.lower);
}

static void timestamp_cell(nx_sql_cell *cell, int64_t v, int64_t per_second, int digits)
{
    int64_t secs = v / per_second, frac = v % per_second;
    if (frac < 0) {
        frac += per_second;
        secs--;
    }
    duckdb_timestamp_struct ts = duckdb_from_timestamp((duckdb_timestamp){secs * 1000000});
    cell->kind = NX_SQL_CELL_TEXT;
    cell->s = cell->buf;
    int n = snprintf(cell->buf, sizeof cell->buf, "%04" PRId32 "-%02d-%02d %02d:%02d:%02d", ts.date.year,
                     ts.date.month, ts.date.day, ts.time.hour, ts.time.min, ts.time.sec);
    if (frac && digits) { /* as the engine prints it: trailing zeros of the fraction dropped */
        n += snprintf(cell->buf + n, sizeof cell->buf - (size_t)n, ".%0*" PRId64, digits, frac);
        while (cell->buf[n - 1] == '0')
            n--;
    }
    cell->len = (size_t)n;
}

static void decimal_read(const nx_sql_column *c, const void *data, size_t row, nx_sql_cell *cell)
{
    __int128 v;
    switch (c->internal) {
    case DUCKDB_TYPE_SMALLINT: v = ((const int16_t *)data)[row]; break;
    case DUCKDB_TYPE_INTEGER: v = ((const int32_t *)data)[row]; break;
    case DUCKDB_TYPE_BIGINT: v = ((const int64_t *)data)[row]; break;
    default: v = hugeint_value(((const duckdb_hugeint *)data)[row]); break;
    }
    decimal_cell(cell, v, c->scale);
}

static void null_cell(nx_sql_cell *cell)
{
    cell->kind = NX_SQL_CELL_NULL;
    cell->s = "";
    cell->len = 0;
}

/* A list's elements as a JSON array, in c->text. */
static bool list_cell(nx_sql_column *c, duckdb_vector v, const void *d, size_t row, nx_sql_cell *cell)
{
    const duckdb_list_entry *e = &((const duckdb_list_entry *)d)[row];
    duckdb_vector child = duckdb_list_vector_get_child(v);
    nx_strbuf *b = &c->text;
    b->len = 0; /* reused from the last cell of the column */
    nx_strbuf_putc(b, '[');
    bool ok = true;
    for (uint64_t i = 0; i < e->length; i++) {
        nx_sql_cell el;
        if (i)
            nx_strbuf_putc(b, ',');
        ok &= nx_sql_cell_read(c->child, child, (size_t)(e->offset + i), &el);
        nx_sql_json_value(b, &el);
    }
    nx_strbuf_putc(b, ']');
    if (!ok || nx_strbuf_failed(b)) {
        null_cell(cell);
        return false;
    }
    cell->kind = NX_SQL_CELL_JSON;
    cell->s = b->data;
    cell->len = b->len;
    return true;
}

bool nx_sql_cell_read(nx_sql_column *c, duckdb_vector v, size_t row, nx_sql_cell *cell)
{
    uint64_t *valid = duckdb_vector_get_validity(v);
    cell->finite = cell->big = false;
    if ((valid && !duckdb_validity_row_is_valid(valid, row)) || c->type == DUCKDB_TYPE_SQLNULL) {
        null_cell(cell);
        return true;
    }
    const void *d = duckdb_vector_get_data(v);
    switch (c->type) {
    case DUCKDB_TYPE_LIST: return list_cell(c, v, d, row, cell);
    case DUCKDB_TYPE_BOOLEAN: {
        bool b = ((const bool *)d)[row];
        cell->kind = NX_SQL_CELL_BOOL;
        cell->s = b ? "true" : "false";
        cell->len = b ? 4 : 5;
        break;
    }
    case DUCKDB_TYPE_TINYINT: int_cell(cell, ((const int8_t *)d)[row]); break;
    case DUCKDB_TYPE_SMALLINT: int_cell(cell, ((const int16_t *)d)[row]); break;
    case DUCKDB_TYPE_INTEGER: int_cell(cell, ((const int32_t *)d)[row]); break;
    case DUCKDB_TYPE_BIGINT: int_cell(cell, ((const int64_t *)d)[row]); break;
    case DUCKDB_TYPE_UTINYINT: uint_cell(cell, ((const uint8_t *)d)[row]); break;
    case DUCKDB_TYPE_USMALLINT: uint_cell(cell, ((const uint16_t *)d)[row]); break;
    case DUCKDB_TYPE_UINTEGER: uint_cell(cell, ((const uint32_t *)d)[row]); break;
    case DUCKDB_TYPE_UBIGINT: uint_cell(cell, ((const uint64_t *)d)[row]); break;
    case DUCKDB_TYPE_HUGEINT: int_cell(cell, hugeint_value(((const duckdb_hugeint *)d)[row])); break;
    case DUCKDB_TYPE_UHUGEINT: {
        duckdb_uhugeint u = ((const duckdb_uhugeint *)d)[row];
        uint_cell(cell, ((unsigned __int128)u.upper << 64) | u.lower);
        break;
    }
    case DUCKDB_TYPE_FLOAT: real_cell(cell, ((const float *)d)[row], true); break;
    case DUCKDB_TYPE_DOUBLE: real_cell(cell, ((const double *)d)[row], false); break;
    case DUCKDB_TYPE_DECIMAL: decimal_read(c, d, row, cell); break;
    case DUCKDB_TYPE_DATE: {
        duckdb_date_struct ds = duckdb_from_date(((const duckdb_date *)d)[row]);
        cell->kind = NX_SQL_CELL_TEXT;
        cell->s = cell->buf;
        cell->len = (size_t)snprintf(cell->buf, sizeof cell->buf, "%04" PRId32 "-%02d-%02d", ds.year, ds.month,
                                     ds.day);
        break;
    }
    case DUCKDB_TYPE_TIMESTAMP: timestamp_cell(cell, ((const int64_t *)d)[row], 1000000, 6); break;
    case DUCKDB_TYPE_TIMESTAMP_S: timestamp_cell(cell, ((const int64_t *)d)[row], 1, 0); break;
    case DUCKDB_TYPE_TIMESTAMP_MS: timestamp_cell(cell, ((const int64_t *)d)[row], 1000, 3); break;
    case DUCKDB_TYPE_TIMESTAMP_NS: timestamp_cell(cell, ((const int64_t *)d)[row], 1000000000, 9); break;
    default: { /* VARCHAR: nx_sql_column_describe let nothing else through */
        duckdb_string_t *s = &((duckdb_string_t *)d)[row];
        cell->kind = NX_SQL_CELL_TEXT;
        cell->s = duckdb_string_t_data(s);
        cell->len = duckdb_string_t_length(*s);
        break;
    }
    }
    return true;
}
