/*
 * csv.h — a buffered CSV writer for query results (export-csv, and the viewer's
 * CSV download), with the value rules of docs/query.md:
 *
 *   separator ',' ; rows end with "\n" (LF) ; UTF-8 bytes written unchanged.
 *   Quoting (RFC 4180): a field is enclosed in double quotes when it contains a
 *     comma, a double quote, CR or LF, and a double quote inside is doubled. An
 *     empty string is written as "" so it differs from a null.
 *   null                      -> empty field (nothing between the commas);
 *   INT32/INT64               -> exact decimal, e.g. -42;
 *   FLOAT / DOUBLE            -> the shortest text that reads back to the same
 *                                value (util/float_text.h); NaN -> nan,
 *                                infinities -> inf / -inf;
 *   BOOLEAN                   -> true / false;
 *   LIST<INT64>, LIST<STRING> -> a JSON array ([1,2], ["a",null]; JSON string
 *                                escaping as in util/json.h), then CSV-quoted;
 *   STRING (text cells)       -> the bytes, with the formula-injection guard:
 * Formula-injection guard (spreadsheets run a cell starting with = + - @ as a
 *   formula, and some treat a leading TAB or CR the same way): a text cell whose
 *   first byte is one of = + - @ TAB CR gets a leading apostrophe ('), which
 *   spreadsheets show as "text, not formula" — unless the whole cell is a plain
 *   decimal number ([+-]?digits[.digits][(e|E)[+-]digits], e.g. "-3", "+1.5e3"),
 *   which cannot run anything and stays as it is. Numeric columns (integers,
 *   floats) are never altered, so negative numbers stay numbers. The guard
 *   applies to text cells only (not to the header, nor to JSON lists, which
 *   start with '['), and can be turned off (nx_csv.guard = false).
 *
 * Errors: write errors are sticky; nx_csv_flush/nx_csv_finish report them.
 */
#ifndef NX_QUERY_CSV_H
#define NX_QUERY_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parquet/parquet.h"

typedef struct nx_csv {
    FILE *f;
    char *buf;          /* pending output */
    size_t len, cap;
    char *scratch;      /* JSON list text */
    size_t scratch_cap;
    struct nx_csv_fcache *fcache; /* recent FLOAT texts by bit pattern (they repeat a lot) */
    size_t field;       /* fields written in the current row */
    bool guard;         /* formula-injection guard on text cells (default true) */
    bool failed;        /* a write or allocation failed */
} nx_csv;

/* 0, or -1 when the buffer cannot be allocated. */
int nx_csv_init(nx_csv *c, FILE *f);
/* Memory mode (no FILE): the buffer grows instead of being written; its bytes
 * are moved into a file-backed writer by nx_csv_append. Lets a second thread
 * format rows that are written later, in order. 0 or -1. */
int nx_csv_init_memory(nx_csv *c);
/* Writes dst's pending bytes, then src's (a memory-mode writer), and empties src
 * for reuse. A failure of either makes dst fail. 0 or -1. */
int nx_csv_append(nx_csv *dst, nx_csv *src);
/* Flushes and frees the buffers (does not close f). 0, or -1 after any failure. */
int nx_csv_finish(nx_csv *c);
/* Writes the buffered bytes to f. 0 or -1. */
int nx_csv_flush(nx_csv *c);

void nx_csv_null(nx_csv *c);
void nx_csv_i64(nx_csv *c, int64_t v);
void nx_csv_f32(nx_csv *c, float v);
void nx_csv_f64(nx_csv *c, double v);
void nx_csv_bool(nx_csv *c, bool v);
/* A text cell: formula guard, then quoting. */
void nx_csv_text(nx_csv *c, const char *s, size_t len);
/* A field with quoting only (header names, JSON). */
void nx_csv_plain(nx_csv *c, const char *s, size_t len);
/* Row i of a batch column, by its type (rules above). */
void nx_csv_cell(nx_csv *c, const nxpq_column_data *col, size_t i);
void nx_csv_end_row(nx_csv *c);
/* Row i of n columns as the next n fields, each exactly as nx_csv_cell would write
 * it; cols[k] == NULL writes a null (empty) field. The fast path of an export: one
 * buffer check per cell, integers and floats formatted in place. */
void nx_csv_row_cells(nx_csv *c, const nxpq_column_data *const *cols, size_t n, size_t i);

/* Cell texts of one dictionary (nxpq_column_data's dictionary form): entry d's
 * complete field, exactly what nx_csv_cell writes for a row holding it (quoting
 * and the formula guard applied; no separator), in text[off[d] .. off[d + 1]);
 * entry dict_n (a null row's index, parquet.h) is empty, as a null cell is.
 * Built once per dictionary, so an export formats each distinct value once and
 * copies it per row. Memory: about the dictionary's formatted size. */
typedef struct nx_csv_dict_text {
    uint64_t id;        /* dict_id of the column it was built for; 0: none */
    uint32_t *off;
    size_t off_cap;
    nx_csv w;           /* memory writer holding the texts (+ 32 bytes of padding) */
    bool w_open;
} nx_csv_dict_text;

/* (Re)builds t for col (in dictionary form) with the guard setting `guard`.
 * 0, or -1 (out of memory, or texts over 4 GiB; t is then left empty). */
int nx_csv_dict_text_build(nx_csv_dict_text *t, const nxpq_column_data *col, bool guard);
void nx_csv_dict_text_free(nx_csv_dict_text *t);
/* Builds t from n strings (text cells, e.g. track names); its id is 1. 0 or -1. */
int nx_csv_dict_text_build_strings(nx_csv_dict_text *t, const nxpq_str *strs, size_t n, bool guard);
/* n_rows whole rows: for row j, the text cell lead_idx[j] of lead (built from
 * strings), then the n cells of batch row rows[j] (rows ascending; as nx_csv_row_cells_text
 * writes them), then the row end. Same bytes as those calls one by one; the fast
 * path of an export (one room check per cell, the write position kept in
 * registers, a plan of the columns resolved once per call). */
void nx_csv_rows_text(nx_csv *c, const nx_csv_dict_text *lead, const uint32_t *lead_idx,
                      const nxpq_column_data *const *cols, const nx_csv_dict_text *const *texts, size_t n,
                      const uint32_t *rows, size_t n_rows);
/* nx_csv_row_cells, where texts (may be NULL, as may texts[k]) holds cell
 * texts: a column in dictionary form whose dict_id matches texts[k]->id is
 * written by copying the entry's text. Same bytes as nx_csv_row_cells. */
void nx_csv_row_cells_text(nx_csv *c, const nxpq_column_data *const *cols, const nx_csv_dict_text *const *texts,
                           size_t n, size_t i);

/* Helpers, exposed for tests and the viewer. */
/* Whether a text cell gets the apostrophe. */
bool nx_csv_needs_guard(const char *s, size_t len);

#endif
