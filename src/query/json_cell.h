/*
 * json_cell.h — a batch cell (parquet.h nxpq_column_data, plain or dictionary
 * form) as a JSON value, the one rule of the HTTP API's answers and of the
 * JSON-rows export (json_rows.c): null for a null; integers exact, past 2^53 - 1 in
 * magnitude as decimal strings (util/json.h nx_json_put_i64 "safe"); floats in
 * their shortest round-trip text (csv.h), NaN and infinities as the strings
 * "nan", "inf", "-inf"; booleans; strings escaped by util/json.h; lists as
 * arrays.
 */
#ifndef NX_QUERY_JSON_CELL_H
#define NX_QUERY_JSON_CELL_H

#include <stddef.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

/* A double: shortest round-trip text; NaN and infinities as the strings "nan", "inf", "-inf". */
void nx_json_f64(nx_strbuf *b, double v);
/* A float: shortest text that reads back as the same float; NaN and infinities as above. */
void nx_json_f32(nx_strbuf *b, float v);
/* Row i of a batch column as a JSON value (null for nulls, lists as arrays). */
void nx_json_cell(nx_strbuf *b, const nxpq_column_data *col, size_t i);

#endif
