/*
 * csv.c — buffered CSV writing of query results (rules in csv.h). Values are
 * formatted straight into one output buffer flushed in large writes; integers
 * use a hand-written conversion (no printf per value); only floats go through
 * snprintf, in util/float_text.h, to find the shortest text that reads back exactly.
 *
 * Speed (bench/query): the buffer check is an inline compare with a
 * out-of-line slow path; integers are written forward after counting their
 * digits; the quoting scan is one table lookup per byte; nx_csv_row_cells
 * writes a whole row with one check per cell and no per-cell calls for numbers.
 * nx_csv_row_cells and nx_csv_cell give identical bytes (test_query_fast.c).
 *
 * Dictionary texts (nx_csv_dict_text) hold each dictionary entry's finished
 * field, padded so a row copies a constant 32 bytes for short ones;
 * nx_csv_rows_text writes many rows from a per-call plan of the columns (a
 * column null in all the rows of the call, or absent, is merged with its null
 * neighbours into one run of separators), keeping the write position in locals.
 * Both give the bytes of nx_csv_cell (test_scan_dictionary.c).
 */
#include "query/engine/csv.h"

#include <stdlib.h>
#include <string.h>

#include "util/decimal.h"
#include "util/float_text.h"
#include "util/json.h"

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

int nx_csv_init_memory(nx_csv *c)
{
    return nx_csv_init(c, NULL);
}

int nx_csv_append(nx_csv *dst, nx_csv *src)
{
    if (src->failed)
        dst->failed = true;
    if (dst->failed || !dst->f || nx_csv_flush(dst) < 0 ||
        (src->len && fwrite(src->buf, 1, src->len, dst->f) != src->len))
        dst->failed = true;
    src->len = 0;
    src->field = 0;
    return dst->failed ? -1 : 0;
}

int nx_csv_flush(nx_csv *c)
{
    if (!c->f) /* memory mode: the bytes stay until nx_csv_append takes them */
        return c->failed ? -1 : 0;
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

/* Slow path of reserve(): flush, or grow for one huge field. */
static __attribute__((noinline)) bool reserve_slow(nx_csv *c, size_t n)
{
    if (c->failed)
        return false;
    if (c->f && nx_csv_flush(c) < 0)
        return false;
    if (c->len + n <= c->cap)
        return true;
    size_t want = c->len + n;
    if (!c->f && want < 2 * c->cap)
        want = 2 * c->cap; /* memory mode grows geometrically */
    char *g = realloc(c->buf, want);
    if (!g) {
        c->failed = true;
        return false;
    }
    c->buf = g;
    c->cap = want;
    return true;
}

/* Room for n more bytes. Inline fast path: this runs once per cell. (After a
 * failure len is 0 and cap stays, so a failed writer keeps taking the slow path,
 * which refuses.) */
static inline bool reserve(nx_csv *c, size_t n)
{
    if (__builtin_expect(c->len + n <= c->cap && !c->failed, 1))
        return true;
    return reserve_slow(c, n);
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

void nx_csv_i64(nx_csv *c, int64_t v)
{
    sep(c);
    if (reserve(c, 24))
        c->len += nx_i64_text(c->buf + c->len, v);
}

/* FLOAT text of v into o (>= 32 bytes free), through the cache; returns the length. */
static size_t f32_text(nx_csv *c, char *o, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    struct nx_csv_fcache *e = c->fcache ? &c->fcache[(bits * 2654435761u) >> 20] : NULL;
    if (e && e->len && e->bits == bits) {
        memcpy(o, e->text, e->len);
        return e->len;
    }
    size_t n = nx_f32_text(o, v);
    if (e && n <= sizeof e->text) {
        e->bits = bits;
        e->len = (uint8_t)n;
        memcpy(e->text, o, n);
    }
    return n;
}

void nx_csv_f32(nx_csv *c, float v)
{
    sep(c);
    if (reserve(c, 32))
        c->len += f32_text(c, c->buf + c->len, v);
}

void nx_csv_f64(nx_csv *c, double v)
{
    sep(c);
    if (reserve(c, 32))
        c->len += nx_f64_text(c->buf + c->len, v);
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

/* First bytes that may need the guard: = + - @ TAB CR. */
static const unsigned char GUARD_CH[256] = {['='] = 1, ['+'] = 1, ['-'] = 1, ['@'] = 1, ['\t'] = 1, ['\r'] = 1};

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

/* Bytes that force quoting: , " LF CR. */
static const unsigned char QUOTE_CH[256] = {['\n'] = 1, ['\r'] = 1, [','] = 1, ['"'] = 1};

/* Writes a field (after the separator) with an optional leading apostrophe. The
 * common case (no byte that needs quoting) is one table-driven scan and a copy. */
static void put_field(nx_csv *c, const char *s, size_t len, bool apostrophe)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char any = 0;
    for (size_t i = 0; i < len; i++)
        any |= QUOTE_CH[u[i]];
    bool quote = any || (len == 0 && !apostrophe);
    if (!reserve(c, 2 * len + 3))
        return;
    char *o = c->buf + c->len;
    if (quote)
        *o++ = '"';
    if (apostrophe)
        *o++ = '\'';
    if (!any) {
        memcpy(o, s, len);
        o += len;
    } else {
        for (size_t i = 0; i < len; i++) {
            if (s[i] == '"')
                *o++ = '"';
            *o++ = s[i];
        }
    }
    if (quote)
        *o++ = '"';
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
    if (!scratch_reserve(c, used, NX_JSON_ESCAPE_MAX * len + 2))
        return used;
    return used + nx_json_escape(c->scratch + used, s, len);
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
            used += nx_i64_text(c->scratch + used, col->values.i64[j]);
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
    if (col->dict_index) { /* dictionary form: STRING, INT32 or INT64 */
        uint32_t d = col->dict_index[i];
        if (col->type == NXPQ_STRING)
            nx_csv_text(c, col->dict_strs[d].ptr, col->dict_strs[d].len);
        else
            nx_csv_i64(c, col->type == NXPQ_INT64 ? col->dict_values.i64[d] : col->dict_values.i32[d]);
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

/* Widest fixed-size cell plus its separator: a FLOAT/DOUBLE text is < 32 bytes,
 * an integer <= 20, "false" 5. */
enum { FIXED_CELL_MAX = 34 };

/* Bytes copied at once for a short dictionary text: the texts carry this much
 * padding and FIXED_CELL_MAX covers it, so the copy has a constant size. */
enum { TEXT_COPY = 32 };

static inline void row_cells(nx_csv *c, const nxpq_column_data *const *cols, const nx_csv_dict_text *const *texts,
                             size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++) {
        const nxpq_column_data *col = cols[k];
        if (!reserve(c, FIXED_CELL_MAX))
            return;
        char *o = c->buf + c->len;
        if (c->field++)
            *o++ = ',';
        c->len = (size_t)(o - c->buf);
        if (!col || (col->valid && !col->valid[i]))
            continue;
        if (col->dict_index) {
            uint32_t d = col->dict_index[i];
            const nx_csv_dict_text *t = texts ? texts[k] : NULL;
            if (t && t->id == col->dict_id) {
                const char *s = t->w.buf + t->off[d];
                size_t len = t->off[d + 1] - t->off[d];
                if (len <= TEXT_COPY) {
                    memcpy(o, s, TEXT_COPY);
                } else {
                    if (!reserve(c, len))
                        return;
                    memcpy(c->buf + c->len, s, len);
                }
                c->len += len;
            } else if (col->type == NXPQ_STRING) {
                const char *s = col->dict_strs[d].ptr;
                size_t len = col->dict_strs[d].len;
                put_field(c, s, len, c->guard && len && GUARD_CH[(unsigned char)s[0]] && nx_csv_needs_guard(s, len));
            } else {
                c->len += nx_i64_text(o, col->type == NXPQ_INT64 ? col->dict_values.i64[d] : col->dict_values.i32[d]);
            }
            continue;
        }
        switch (col->type) {
        case NXPQ_INT64: c->len += nx_i64_text(o, col->values.i64[i]); break;
        case NXPQ_INT32: c->len += nx_i64_text(o, col->values.i32[i]); break;
        case NXPQ_STRING: {
            const char *s = col->data + col->offsets[i];
            size_t len = (size_t)(col->offsets[i + 1] - col->offsets[i]);
            put_field(c, s, len, c->guard && len && GUARD_CH[(unsigned char)s[0]] && nx_csv_needs_guard(s, len));
            break;
        }
        case NXPQ_FLOAT: c->len += f32_text(c, o, col->values.f32[i]); break;
        case NXPQ_DOUBLE: c->len += nx_f64_text(o, col->values.f64[i]); break;
        case NXPQ_BOOLEAN:
            memcpy(o, col->values.b[i] ? "true" : "false", col->values.b[i] ? 4 : 5);
            c->len += col->values.b[i] ? 4 : 5;
            break;
        case NXPQ_LIST_INT64:
        case NXPQ_LIST_STRING: list_cell(c, col, i); break;
        case NXPQ_UNSUPPORTED: break;
        }
    }
}

void nx_csv_row_cells(nx_csv *c, const nxpq_column_data *const *cols, size_t n, size_t i)
{
    row_cells(c, cols, NULL, n, i);
}

void nx_csv_row_cells_text(nx_csv *c, const nxpq_column_data *const *cols, const nx_csv_dict_text *const *texts,
                           size_t n, size_t i)
{
    row_cells(c, cols, texts, n, i);
}

/* ---------------------------------------------------- dictionary texts -- */

void nx_csv_dict_text_free(nx_csv_dict_text *t)
{
    if (t->w_open)
        nx_csv_finish(&t->w);
    free(t->off);
    memset(t, 0, sizeof *t);
}

/* Builds t from entries: the strings strs[0..n) when strs, else col's dictionary. */
static int text_build(nx_csv_dict_text *t, const nxpq_column_data *col, const nxpq_str *strs, size_t n,
                      uint64_t id, bool guard)
{
    t->id = 0;
    if (!t->w_open) {
        if (nx_csv_init_memory(&t->w) < 0)
            return -1;
        t->w_open = true;
    }
    if (n + 2 > t->off_cap) {
        uint32_t *g = realloc(t->off, (n + 2) * sizeof *g);
        if (!g)
            return -1;
        t->off = g;
        t->off_cap = n + 2;
    }
    nx_csv *w = &t->w;
    w->len = 0;
    w->failed = false;
    w->guard = guard;
    for (size_t d = 0; d < n; d++) {
        if (w->len > UINT32_MAX - 64)
            return -1;
        t->off[d] = (uint32_t)w->len;
        w->field = 0; /* each entry is a first field: no separator */
        if (strs)
            nx_csv_text(w, strs[d].ptr, strs[d].len);
        else if (col->type == NXPQ_STRING)
            nx_csv_text(w, col->dict_strs[d].ptr, col->dict_strs[d].len);
        else
            nx_csv_i64(w, col->type == NXPQ_INT64 ? col->dict_values.i64[d] : col->dict_values.i32[d]);
    }
    if (w->len > UINT32_MAX - 64 || !reserve(w, TEXT_COPY) || w->failed)
        return -1;
    t->off[n] = t->off[n + 1] = (uint32_t)w->len; /* entry n: a null row (empty field) */
    memset(w->buf + w->len, 0, TEXT_COPY);         /* padding for the constant-size copy */
    t->id = id;
    return 0;
}

int nx_csv_dict_text_build(nx_csv_dict_text *t, const nxpq_column_data *col, bool guard)
{
    t->id = 0;
    if (!col->dict_index || !col->dict_id)
        return -1;
    return text_build(t, col, NULL, col->dict_n, col->dict_id, guard);
}

int nx_csv_dict_text_build_strings(nx_csv_dict_text *t, const nxpq_str *strs, size_t n, bool guard)
{
    return text_build(t, NULL, strs, n, 1, guard);
}

/* ---------------------------------------------------------- many rows -- */

enum { PLAN_MAX = 256 };

/* PLAN_MAX separators (a run of null columns). */
static const char COMMAS[PLAN_MAX + 1] = ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,"
                                         ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,"
                                         ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,"
                                         ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,";

typedef enum { P_NULL, P_TEXT, P_I64, P_DICT_I64, P_DICT_I32, P_STR, P_DICT_STR, P_OTHER } plan_kind;

/* One column of nx_csv_rows_text, resolved once per call. */
typedef struct plan_col {
    plan_kind kind;
    const uint8_t *valid;
    const uint32_t *idx;     /* P_TEXT */
    const uint32_t *off;
    const char *text;
    const int64_t *i64;      /* P_I64, P_DICT_I64 (the dictionary) */
    const int32_t *i32;      /* P_DICT_I32 */
    const nxpq_str *strs;    /* P_DICT_STR */
    const uint64_t *offsets; /* P_STR */
    const char *data;
    size_t nulls;            /* P_NULL: columns (separators) it stands for */
    const nxpq_column_data *col;
} plan_col;

void nx_csv_rows_text(nx_csv *c, const nx_csv_dict_text *lead, const uint32_t *lead_idx,
                      const nxpq_column_data *const *cols, const nx_csv_dict_text *const *texts, size_t n,
                      const uint32_t *rows, size_t n_rows)
{
    plan_col plan[PLAN_MAX];
    if (n > PLAN_MAX) { /* wider than any schema table: the one-row path */
        for (size_t j = 0; j < n_rows; j++) {
            c->field = 0;
            sep(c);
            if (reserve(c, (size_t)(lead->off[lead_idx[j] + 1] - lead->off[lead_idx[j]]))) {
                memcpy(c->buf + c->len, lead->w.buf + lead->off[lead_idx[j]],
                       lead->off[lead_idx[j] + 1] - lead->off[lead_idx[j]]);
                c->len += lead->off[lead_idx[j] + 1] - lead->off[lead_idx[j]];
            }
            row_cells(c, cols, texts, n, rows[j]);
            nx_csv_end_row(c);
        }
        return;
    }
    /* Columns null in every row of the call (absent, or a null page run) become
     * P_NULL without a valid array, and runs of P_NULL merge into one entry
     * writing `nulls` separators. */
    size_t lo = n_rows ? rows[0] : 0, span = n_rows ? (size_t)rows[n_rows - 1] - lo + 1 : 0;
    size_t np = 0;
    for (size_t k = 0; k < n; k++) {
        const nxpq_column_data *col = cols[k];
        const nx_csv_dict_text *t = texts ? texts[k] : NULL;
        plan_col *p = &plan[np];
        *p = (plan_col){.kind = P_OTHER, .col = col, .nulls = 1};
        if (!col || (col->valid && !memchr(col->valid + lo, 1, span))) {
            if (np && plan[np - 1].kind == P_NULL) {
                plan[np - 1].nulls++;
                continue;
            }
            *p = (plan_col){.kind = P_NULL, .nulls = 1};
        } else if (col->dict_index && t && t->id == col->dict_id) {
            /* No valid array: a null row's index (dict_n) has an empty text. */
            *p = (plan_col){.kind = P_TEXT, .idx = col->dict_index, .off = t->off, .text = t->w.buf, .col = col};
        } else if (col->dict_index) {
            p->valid = col->valid;
            p->idx = col->dict_index;
            p->kind = col->type == NXPQ_INT64 ? P_DICT_I64 : col->type == NXPQ_INT32 ? P_DICT_I32 : P_DICT_STR;
            p->i64 = col->dict_values.i64;
            p->i32 = col->dict_values.i32;
            p->strs = col->dict_strs;
        } else if (col->type == NXPQ_INT64) {
            p->kind = P_I64;
            p->valid = col->valid;
            p->i64 = col->values.i64;
        } else if (col->type == NXPQ_STRING) {
            p->kind = P_STR;
            p->valid = col->valid;
            p->offsets = col->offsets;
            p->data = col->data;
        }
        np++;
    }
    /* The write position lives in locals (stores through char * would otherwise
     * make the compiler reload c->len after every byte written). Each cell has
     * room for FIXED_CELL_MAX bytes; longer texts reserve their own. */
    char *o = c->buf + c->len;
    const char *lim = c->buf + c->cap;
#define SYNC() (c->len = (size_t)(o - c->buf))
#define RELOAD() (o = c->buf + c->len, lim = c->buf + c->cap)
#define ROOM(need)                                                                                                    \
    do {                                                                                                              \
        if (__builtin_expect((size_t)(lim - o) < (need) || c->failed, 0)) {                                           \
            SYNC();                                                                                                   \
            if (!reserve_slow(c, (need)))                                                                             \
                return;                                                                                               \
            RELOAD();                                                                                                 \
        }                                                                                                             \
    } while (0)
    for (size_t j = 0; j < n_rows; j++) {
        size_t i = rows[j];
        uint32_t ld = lead_idx[j];
        size_t len = lead->off[ld + 1] - lead->off[ld];
        ROOM(len + TEXT_COPY);
        memcpy(o, lead->w.buf + lead->off[ld], TEXT_COPY);
        if (len > TEXT_COPY)
            memcpy(o, lead->w.buf + lead->off[ld], len);
        o += len;
        for (size_t k = 0; k < np; k++) {
            const plan_col *p = &plan[k];
            if (p->kind == P_NULL) {
                ROOM(PLAN_MAX);
                memcpy(o, COMMAS, p->nulls);
                o += p->nulls;
                continue;
            }
            ROOM(FIXED_CELL_MAX);
            *o++ = ',';
            if (p->valid && !p->valid[i])
                continue;
            switch (p->kind) {
            case P_NULL: break;
            case P_TEXT: {
                uint32_t d = p->idx[i];
                const char *s = p->text + p->off[d];
                len = p->off[d + 1] - p->off[d];
                if (__builtin_expect(len <= TEXT_COPY, 1)) {
                    memcpy(o, s, TEXT_COPY);
                } else {
                    ROOM(len);
                    memcpy(o, s, len);
                }
                o += len;
                break;
            }
            case P_I64: o += nx_i64_text(o, p->i64[i]); break;
            case P_DICT_I64: o += nx_i64_text(o, p->i64[p->idx[i]]); break;
            case P_DICT_I32: o += nx_i64_text(o, p->i32[p->idx[i]]); break;
            case P_STR:
            case P_DICT_STR: {
                const char *s;
                if (p->kind == P_STR) {
                    s = p->data + p->offsets[i];
                    len = (size_t)(p->offsets[i + 1] - p->offsets[i]);
                } else {
                    s = p->strs[p->idx[i]].ptr;
                    len = p->strs[p->idx[i]].len;
                }
                /* The common text (not empty, nothing to quote, no guard): a copy. */
                const unsigned char *u = (const unsigned char *)s;
                unsigned char any = len == 0 || (c->guard && GUARD_CH[u[0]]);
                for (size_t b = 0; b < len; b++)
                    any |= QUOTE_CH[u[b]];
                if (!any) {
                    ROOM(len);
                    memcpy(o, s, len);
                    o += len;
                } else {
                    SYNC();
                    put_field(c, s, len, c->guard && len && GUARD_CH[u[0]] && nx_csv_needs_guard(s, len));
                    RELOAD();
                }
                break;
            }
            case P_OTHER:
                /* Everything else (floats, booleans, lists, plain strings, dictionaries
                 * without texts) through the one-row path, for this one cell. */
                o--;
                SYNC();
                c->field = 1;
                row_cells(c, &p->col, NULL, 1, i);
                RELOAD();
                break;
            }
        }
        ROOM(1);
        *o++ = '\n';
    }
    SYNC();
    c->field = 0;
#undef SYNC
#undef RELOAD
#undef ROOM
}
