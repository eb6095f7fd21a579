/*
 * json_cell.h — a batch cell (parquet.h nxpq_column_data, plain or dictionary
 * form) as a JSON value, the one rule of the HTTP API's answers and of the
 * JSON-rows export (json_rows.c): null for a null; integers exact, past 2^53 - 1 in
 * magnitude as decimal strings (util/json.h nx_json_put_i64 "safe"); floats in
 * their shortest round-trip text, NaN and infinities as null (util/json.h
 * nx_json_put_f64/f32); booleans; strings escaped by util/json.h; lists as
 * arrays.
 */
#ifndef NX_QUERY_JSON_CELL_H
#define NX_QUERY_JSON_CELL_H

#include <stddef.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

/* Row i of a batch column as a JSON value (null for nulls, lists as arrays). */
void nx_json_cell(nx_strbuf *b, const nxpq_column_data *col, size_t i);

#endif
