/*
 * csv.c — buffered CSV writing of query results (rules in csv.h). Values are
 * formatted straight into one output buffer flushed in large writes; integers
 * use a hand-written conversion (no printf per value); only floats go through
 * snprintf, to find the shortest text that reads back exactly.
 */
#include "query/csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CSV_BUF = 1 << 18, FCACHE = 4096 };

/* Direct-mapped cache of FLOAT texts keyed by the value's bits: profile floats
 * (throughputs) repeat, and the shortest-text search costs several snprintf. */
struct nx_csv_fcache {
    uint32_t bits;
    uint8_t len;       /* 0: empty */
    char text[19];
};

int nx_csv_init(nx_csv *c, FILE *f)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->guard = true;
    c->buf = malloc(CSV_BUF);
    if (!c->buf) {
        c->failed = true;
        return -1;
    }
    c->cap = CSV_BUF;
    c->fcache = calloc(FCACHE, sizeof *c->fcache); /* optional: NULL just means no cache */
    return 0;
}

int nx_csv_flush(nx_csv *c)
{
    if (c->len && !c->failed && fwrite(c->buf, 1, c->len, c->f) != c->len)
        c->failed = true;
    c->len = 0;
    return c->failed ? -1 : 0;
}

int nx_csv_finish(nx_csv *c)
{
    int rc = nx_csv_flush(c);
    free(c->buf);
    free(c->scratch);
    free(c->fcache);
    c->fcache = NULL;
    c->buf = c->scratch = NULL;
    c->cap = c->scratch_cap = 0;
    return rc;
}

/* Room for n more bytes (flushing, or growing for one huge field). */
static bool reserve(nx_csv *c, size_t n)
{
    if (c->failed)
        return false;
    if (c->len + n <= c->cap)
        return true;
    if (nx_csv_flush(c) < 0)
        return false;
    if (n <= c->cap)
        return true;
    char *g = realloc(c->buf, n);
    if (!g) {
        c->failed = true;
        return false;
    }
    c->buf = g;
    c->cap = n;
    return true;
}

/* The separator before every field but the first of a row. */
static inline void sep(nx_csv *c)
{
    if (c->field++ && reserve(c, 1))
        c->buf[c->len++] = ',';
}

void nx_csv_end_row(nx_csv *c)
{
    if (reserve(c, 1))
        c->buf[c->len++] = '\n';
    c->field = 0;
}

void nx_csv_null(nx_csv *c) { sep(c); }

/* Decimal text of v; two digits per step from a table (integers are most cells). */
static size_t fmt_i64(char *out, int64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    char tmp[24];
    char *p = tmp + sizeof tmp;
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = pairs[d + 1];
        *--p = pairs[d];
    }
    if (u >= 10) {
        *--p = pairs[u * 2 + 1];
        *--p = pairs[u * 2];
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0)
        out[n++] = '-';
    size_t len = (size_t)(tmp + sizeof tmp - p);
    memcpy(out + n, p, len);
    return n + len;
}

void nx_csv_i64(nx_csv *c, int64_t v)
{
    sep(c);
    if (reserve(c, 24))
        c->len += fmt_i64(c->buf + c->len, v);
}

static size_t nonfinite(char *buf, double v)
{
    const char *s = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
    size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return n;
}

size_t nx_csv_format_f32(char *buf, float v)
{
    if (!isfinite(v))
        return nonfinite(buf, v);
    int n = 0;
    /* If the shortest round-trip text has <= 6 digits, %.6g prints exactly it
     * (float precision is far finer than a 6-digit step), so start at 6. */
    for (int p = 6; p <= 9; p++) {
        n = snprintf(buf, 32, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    return (size_t)n;
}

size_t nx_csv_format_f64(char *buf, double v)
{
    if (!isfinite(v))
        return nonfinite(buf, v);
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(buf, 32, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return (size_t)n;
}

void nx_csv_f32(nx_csv *c, float v)
{
    sep(c);
    if (!reserve(c, 32))
        return;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    struct nx_csv_fcache *e = c->fcache ? &c->fcache[(bits * 2654435761u) >> 20] : NULL;
    if (e && e->len && e->bits == bits) {
        memcpy(c->buf + c->len, e->text, e->len);
        c->len += e->len;
        return;
    }
    size_t n = nx_csv_format_f32(c->buf + c->len, v);
    if (e && n <= sizeof e->text) {
        e->bits = bits;
        e->len = (uint8_t)n;
        memcpy(e->text, c->buf + c->len, n);
    }
    c->len += n;
}

void nx_csv_f64(nx_csv *c, double v)
{
    sep(c);
    if (reserve(c, 32))
        c->len += nx_csv_format_f64(c->buf + c->len, v);
}

void nx_csv_bool(nx_csv *c, bool v)
{
    sep(c);
    if (reserve(c, 5)) {
        memcpy(c->buf + c->len, v ? "true" : "false", v ? 4 : 5);
        c->len += v ? 4 : 5;
    }
}

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* [+-]?digits[.digits][(e|E)[+-]?digits] */
static bool plain_number(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    size_t d = i;
    while (i < len && is_digit(s[i]))
        i++;
    if (i == d)
        return false;
    if (i < len && s[i] == '.') {
        size_t f = ++i;
        while (i < len && is_digit(s[i]))
            i++;
        if (i == f)
            return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t e = i;
        while (i < len && is_digit(s[i]))
            i++;
        if (i == e)
            return false;
    }
    return i == len;
}

bool nx_csv_needs_guard(const char *s, size_t len)
{
    if (len == 0)
        return false;
    switch (s[0]) {
    case '=': case '+': case '-': case '@': case '\t': case '\r':
        return !plain_number(s, len);
    default:
        return false;
    }
}

/* Writes a field (after the separator) with an optional leading apostrophe. */
static void put_field(nx_csv *c, const char *s, size_t len, bool apostrophe)
{
    bool quote = len == 0 && !apostrophe;
    for (size_t i = 0; i < len && !quote; i++) {
        char ch = s[i];
        quote = ch == ',' || ch == '"' || ch == '\n' || ch == '\r';
    }
    if (!reserve(c, 2 * len + 3))
        return;
    char *o = c->buf + c->len;
    if (quote)
        *o++ = '"';
    if (apostrophe)
        *o++ = '\'';
    if (!quote) {
        memcpy(o, s, len);
        o += len;
    } else {
        for (size_t i = 0; i < len; i++) {
            if (s[i] == '"')
                *o++ = '"';
            *o++ = s[i];
        }
        *o++ = '"';
    }
    c->len = (size_t)(o - c->buf);
}

void nx_csv_text(nx_csv *c, const char *s, size_t len)
{
    sep(c);
    put_field(c, s, len, c->guard && nx_csv_needs_guard(s, len));
}

void nx_csv_plain(nx_csv *c, const char *s, size_t len)
{
    sep(c);
    put_field(c, s, len, false);
}

/* ----------------------------------------------------------- JSON lists -- */

static bool scratch_reserve(nx_csv *c, size_t used, size_t n)
{
    if (used + n <= c->scratch_cap)
        return true;
    size_t cap = c->scratch_cap ? c->scratch_cap : 256;
    while (cap < used + n)
        cap *= 2;
    char *g = realloc(c->scratch, cap);
    if (!g) {
        c->failed = true;
        return false;
    }
    c->scratch = g;
    c->scratch_cap = cap;
    return true;
}

static size_t json_string(nx_csv *c, size_t used, const char *s, size_t len)
{
    if (!scratch_reserve(c, used, 6 * len + 2))
        return used;
    char *o = c->scratch + used;
    *o++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            *o++ = '\\';
            *o++ = (char)ch;
        } else if (ch == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        } else if (ch == '\t') {
            *o++ = '\\';
            *o++ = 't';
        } else if (ch == '\r') {
            *o++ = '\\';
            *o++ = 'r';
        } else if (ch < 0x20) {
            o += snprintf(o, 7, "\\u%04x", ch);
        } else {
            *o++ = (char)ch;
        }
    }
    *o++ = '"';
    return (size_t)(o - c->scratch);
}

static void list_cell(nx_csv *c, const nxpq_column_data *col, size_t i)
{
    size_t used = 0;
    uint64_t a = col->list_offsets[i], b = col->list_offsets[i + 1];
    if (!scratch_reserve(c, 0, 2))
        return;
    c->scratch[used++] = '[';
    for (uint64_t j = a; j < b && !c->failed; j++) {
        if (!scratch_reserve(c, used, 26))
            return;
        if (j > a)
            c->scratch[used++] = ',';
        if (col->element_valid && !col->element_valid[j]) {
            memcpy(c->scratch + used, "null", 4);
            used += 4;
        } else if (col->type == NXPQ_LIST_INT64) {
            used += fmt_i64(c->scratch + used, col->values.i64[j]);
        } else {
            used = json_string(c, used, col->data + col->offsets[j], (size_t)(col->offsets[j + 1] - col->offsets[j]));
        }
    }
    if (!scratch_reserve(c, used, 1))
        return;
    c->scratch[used++] = ']';
    put_field(c, c->scratch, used, false);
}

void nx_csv_cell(nx_csv *c, const nxpq_column_data *col, size_t i)
{
    if (col->valid && !col->valid[i]) {
        sep(c);
        return;
    }
    switch (col->type) {
    case NXPQ_BOOLEAN: nx_csv_bool(c, col->values.b[i] != 0); return;
    case NXPQ_INT32: nx_csv_i64(c, col->values.i32[i]); return;
    case NXPQ_INT64: nx_csv_i64(c, col->values.i64[i]); return;
    case NXPQ_FLOAT: nx_csv_f32(c, col->values.f32[i]); return;
    case NXPQ_DOUBLE: nx_csv_f64(c, col->values.f64[i]); return;
    case NXPQ_STRING:
        nx_csv_text(c, col->data + col->offsets[i], (size_t)(col->offsets[i + 1] - col->offsets[i]));
        return;
    case NXPQ_LIST_INT64:
    case NXPQ_LIST_STRING:
        sep(c);
        list_cell(c, col, i);
        return;
    case NXPQ_UNSUPPORTED: sep(c); return;
    }
}
