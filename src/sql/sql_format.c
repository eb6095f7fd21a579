/*
 * sql_format.c — an SQL answer as JSON, CSV or an aligned text table (sql.h).
 *
 * JSON: {"columns":[..],"types":[..],"rows":[[..],..],"row_count":N,"truncated":b,
 *   "row_limit":M}; strings through util/json (invalid UTF-8 as U+FFFD), integers
 *   beyond +-2^53 as decimal strings, non-finite reals as null.
 * CSV: RFC 4180, a header line of the column names, LF line ends; a field holding a
 *   comma, a double quote, CR or LF is quoted (quotes doubled), an empty string is ""
 *   so it differs from null (an empty field); reals nan, inf, -inf. Values are written
 *   as the engine gave them: no spreadsheet formula guard, since a query's answer is
 *   data for scripts (export-csv's guard is for spreadsheets).
 * Text: the column names, a rule, then one line per row, numbers aligned right, null
 *   as NULL, control bytes as spaces; then "(N rows)" and, when the row limit cut
 *   the answer, a line saying so. Widths count UTF-8 characters, so every row is
 *   buffered until the end.
 */
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"
#include "util/json.h"

int nx_sql_writer_begin(nx_sql_writer *w, nx_sql_format format, nx_strbuf *out, size_t n_cols,
                        const char *const *names, const nx_sql_column *cols)
{
    memset(w, 0, sizeof *w);
    w->format = format;
    w->out = out;
    w->n_cols = n_cols;
    if (format == NX_SQL_TEXT) {
        w->right = calloc(n_cols ? n_cols : 1, sizeof *w->right);
        if (!w->right)
            return -1;
        for (size_t i = 0; i < n_cols; i++) {
            nx_strbuf_append(&w->cells, names[i], strlen(names[i]) + 1);
            duckdb_type t = cols[i].type;
            w->right[i] = t != DUCKDB_TYPE_VARCHAR && t != DUCKDB_TYPE_BOOLEAN && t != DUCKDB_TYPE_DATE &&
                          t != DUCKDB_TYPE_TIMESTAMP && t != DUCKDB_TYPE_TIMESTAMP_S &&
                          t != DUCKDB_TYPE_TIMESTAMP_MS && t != DUCKDB_TYPE_TIMESTAMP_NS;
        }
        return nx_strbuf_failed(&w->cells) ? -1 : 0;
    }
    if (format == NX_SQL_CSV) {
        for (size_t i = 0; i < n_cols; i++) {
            nx_sql_cell c = {.kind = NX_SQL_CELL_TEXT, .s = names[i], .len = strlen(names[i])};
            nx_sql_writer_cell(w, i, &c);
        }
        nx_strbuf_putc(out, '\n');
        return 0;
    }
    nx_strbuf_puts(out, "{\"columns\":[");
    for (size_t i = 0; i < n_cols; i++) {
        if (i)
            nx_strbuf_putc(out, ',');
        nx_json_put_cstr(out, names[i]);
    }
    nx_strbuf_puts(out, "],\"types\":[");
    for (size_t i = 0; i < n_cols; i++) {
        if (i)
            nx_strbuf_putc(out, ',');
        nx_json_put_cstr(out, cols[i].type_name);
    }
    nx_strbuf_puts(out, "],\"rows\":[");
    return 0;
}

static bool csv_needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
            return true;
    return false;
}

static void csv_cell(nx_strbuf *out, size_t col, const nx_sql_cell *c)
{
    if (col)
        nx_strbuf_putc(out, ',');
    if (c->kind == NX_SQL_CELL_NULL)
        return;
    if (c->kind != NX_SQL_CELL_TEXT || !csv_needs_quotes(c->s, c->len)) {
        nx_strbuf_append(out, c->s, c->len);
        return;
    }
    nx_strbuf_putc(out, '"');
    for (size_t i = 0; i < c->len; i++) {
        if (c->s[i] == '"')
            nx_strbuf_putc(out, '"');
        nx_strbuf_putc(out, c->s[i]);
    }
    nx_strbuf_putc(out, '"');
}

static void json_cell(nx_strbuf *out, size_t col, const nx_sql_cell *c, bool first_of_answer)
{
    if (col == 0)
        nx_strbuf_puts(out, first_of_answer ? "\n[" : ",\n[");
    else
        nx_strbuf_putc(out, ',');
    switch (c->kind) {
    case NX_SQL_CELL_NULL:
        nx_strbuf_puts(out, "null");
        break;
    case NX_SQL_CELL_TEXT:
        nx_json_put_string(out, c->s, c->len);
        break;
    case NX_SQL_CELL_INT:
        if (c->big)
            nx_json_put_string(out, c->s, c->len);
        else
            nx_strbuf_append(out, c->s, c->len);
        break;
    case NX_SQL_CELL_REAL:
        if (c->finite)
            nx_strbuf_append(out, c->s, c->len);
        else
            nx_strbuf_puts(out, "null");
        break;
    case NX_SQL_CELL_BOOL:
        nx_strbuf_append(out, c->s, c->len);
        break;
    }
}

static void text_cell(nx_strbuf *cells, const nx_sql_cell *c)
{
    if (c->kind == NX_SQL_CELL_NULL) {
        nx_strbuf_append(cells, "NULL", 5);
        return;
    }
    char *p = nx_strbuf_reserve(cells, c->len + 1);
    if (!p)
        return;
    for (size_t i = 0; i < c->len; i++)
        p[i] = (unsigned char)c->s[i] < 0x20 ? ' ' : c->s[i];
    p[c->len] = '\0';
    nx_strbuf_commit(cells, c->len + 1);
}

void nx_sql_writer_cell(nx_sql_writer *w, size_t col, const nx_sql_cell *cell)
{
    if (w->format == NX_SQL_CSV)
        csv_cell(w->out, col, cell);
    else if (w->format == NX_SQL_JSON)
        json_cell(w->out, col, cell, w->rows == 0);
    else
        text_cell(&w->cells, cell);
}

void nx_sql_writer_row_end(nx_sql_writer *w)
{
    if (w->format == NX_SQL_CSV)
        nx_strbuf_putc(w->out, '\n');
    else if (w->format == NX_SQL_JSON)
        nx_strbuf_putc(w->out, ']');
    w->rows++;
}

/* UTF-8 characters in s (continuation bytes not counted). */
static size_t text_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void text_pad(nx_strbuf *out, size_t n)
{
    while (n--)
        nx_strbuf_putc(out, ' ');
}

static void text_table(nx_sql_writer *w)
{
    size_t n = w->n_cols, *width = calloc(n ? n : 1, sizeof *width);
    if (!width) {
        w->out->failed = true;
        return;
    }
    const char *p = w->cells.data, *end = w->cells.data + w->cells.len;
    for (size_t i = 0; p && p < end; i++, p += strlen(p) + 1) {
        size_t tw = text_width(p);
        if (tw > width[i % n])
            width[i % n] = tw;
    }
    p = w->cells.data;
    for (size_t i = 0; p && p < end; i++, p += strlen(p) + 1) {
        size_t col = i % n, pad = width[col] - text_width(p);
        bool right = i >= n && w->right[col] && strcmp(p, "NULL") != 0;
        if (col)
            nx_strbuf_puts(w->out, " | ");
        if (right)
            text_pad(w->out, pad);
        nx_strbuf_puts(w->out, p);
        if (!right && col + 1 < n)
            text_pad(w->out, pad);
        if (col + 1 == n) {
            nx_strbuf_putc(w->out, '\n');
            for (size_t c = 0; i + 1 == n && c < n; c++) {
                if (c)
                    nx_strbuf_puts(w->out, "-+-");
                for (size_t k = 0; k < width[c]; k++)
                    nx_strbuf_putc(w->out, '-');
            }
            if (i + 1 == n)
                nx_strbuf_putc(w->out, '\n');
        }
    }
    free(width);
}

void nx_sql_writer_end(nx_sql_writer *w, bool truncated, uint64_t row_limit)
{
    if (w->format == NX_SQL_JSON) {
        nx_strbuf_printf(w->out, "],\"row_count\":%llu,\"truncated\":%s,\"row_limit\":%llu}\n",
                         (unsigned long long)w->rows, truncated ? "true" : "false", (unsigned long long)row_limit);
    } else if (w->format == NX_SQL_TEXT) {
        if (nx_strbuf_failed(&w->cells))
            w->out->failed = true;
        else if (w->n_cols)
            text_table(w);
        nx_strbuf_printf(w->out, "(%llu row%s)\n", (unsigned long long)w->rows, w->rows == 1 ? "" : "s");
        if (truncated)
            nx_strbuf_printf(w->out, "(stopped at the row limit of %llu rows; more rows were left out)\n",
                             (unsigned long long)row_limit);
    }
    nx_sql_writer_free(w);
}

void nx_sql_writer_free(nx_sql_writer *w)
{
    nx_strbuf_free(&w->cells);
    free(w->right);
    w->right = NULL;
}
