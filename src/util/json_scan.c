/*
 * json_scan.c — see json_scan.h.
 *
 * The scan keeps buf[pos..end) unread. A token is lexed from its first byte;
 * when the buffer ends inside it (LEX_MORE), the unread tail moves to the front,
 * more is read after it and the token is lexed again from its start. The buffer
 * doubles whenever the tail fills more than half of it, so a token of L bytes
 * costs O(L) however it is split.
 */
#include "util/json_scan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum lex { LEX_OK, LEX_MORE, LEX_ERR };

/* What may come next. */
enum state {
    G_VALUE,       /* a value (the top level, after ':' or an array's ',') */
    G_FIRST_VALUE, /* after '[': a value or ']' */
    G_FIRST_KEY,   /* after '{': a key or '}' */
    G_KEY,         /* after an object's ',': a key */
    G_COLON,       /* after a key */
    G_AFTER,       /* after a value in a container: ',' or its close */
    G_DONE         /* after the top-level value: nothing */
};

int nx_json_scan_init(nx_json_scan *s, size_t chunk, unsigned max_depth, nx_json_read_fn read, void *ctx)
{
    *s = (nx_json_scan){.read = read, .ctx = ctx, .size = chunk ? chunk : 1, .max_depth = max_depth,
                        .state = G_VALUE, .text = NX_STRBUF_INIT};
    s->buf = malloc(s->size);
    s->stack = malloc(max_depth + 1u);
    if (!s->buf || !s->stack) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    return 0;
}

void nx_json_scan_free(nx_json_scan *s)
{
    free(s->buf);
    free(s->stack);
    nx_strbuf_free(&s->text);
    s->buf = NULL;
    s->stack = NULL;
}

bool nx_json_scan_complete(const nx_json_scan *s)
{
    return s->state == G_DONE;
}

__attribute__((format(printf, 3, 4))) static enum lex fail_at(nx_json_scan *s, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    s->err_offset = s->base + at + 1;
    return LEX_ERR;
}

/* More input after the unread tail: 1, 0 at the end of the input, -1 on error. */
static int refill(nx_json_scan *s)
{
    if (s->eof)
        return 0;
    size_t tail = s->end - s->pos;
    if (tail > s->size / 2) {
        size_t want = s->size * 2;
        char *b = want > s->size ? realloc(s->buf, want) : NULL;
        if (!b) {
            snprintf(s->err, sizeof s->err, "out of memory for a JSON token of %zu bytes", tail);
            s->err_offset = s->base + s->end;
            return -1;
        }
        s->buf = b;
        s->size = want;
    }
    if (s->pos > 0) {
        memmove(s->buf, s->buf + s->pos, tail);
        s->base += s->pos;
        s->pos = 0;
        s->end = tail;
    }
    nx_error why = {0};
    long n = s->read(s->ctx, s->buf + s->end, s->size - s->end, &why);
    if (n < 0) {
        snprintf(s->err, sizeof s->err, "%.255s", why.msg);
        s->read_failed = true;
        return -1;
    }
    if (n == 0) {
        s->eof = true;
        return 0;
    }
    s->end += (size_t)n;
    return 1;
}

bool nx_json_scan_skip_prefix(nx_json_scan *s, const char *prefix, size_t n)
{
    while (s->end - s->pos < n && refill(s) > 0)
        ;
    if (s->end - s->pos < n || memcmp(s->buf + s->pos, prefix, n) != 0)
        return false;
    s->pos += n;
    return true;
}

/* ---- strings ---------------------------------------------------------------- */

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* True when some byte of w is '"', '\\', a control byte, 0x7f or above. */
static inline bool has_special(uint64_t w)
{
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\'), d = w ^ (ONES * 0x7f);
    uint64_t zero = ((q - ONES) & ~q) | ((b - ONES) & ~b) | ((d - ONES) & ~d);
    uint64_t ctl = (w - ONES * 0x20) & ~w;
    return ((zero | ctl) & HIGHS) != 0 || (w & HIGHS) != 0;
}

static int hex4(const unsigned char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1 - i;   /* which digit is bad */
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(nx_strbuf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
    }
    nx_strbuf_append(b, u, n);
}

/* The \u escape at p (p[0] == 'u', four hex digits known to be in the string,
 * or a '"' that fails them): its code point into s->text; the bytes used. */
static enum lex unicode_escape(nx_json_scan *s, const unsigned char *p, const unsigned char *q, size_t *used)
{
    int v = hex4(p + 1);
    if (v < 0)
        return fail_at(s, (size_t)((const char *)p + 1 + (-1 - v) - s->buf), "invalid JSON: bad \\u escape in a string");
    *used = 5;
    if (v >= 0xd800 && v <= 0xdbff && q - p >= 11 && p[5] == '\\' && p[6] == 'u') {
        int lo = hex4(p + 7);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
            put_utf8(&s->text, 0x10000u + (((unsigned)v - 0xd800u) << 10) + ((unsigned)lo - 0xdc00u));
            *used = 11;
            return LEX_OK;
        }
    }
    put_utf8(&s->text, v >= 0xd800 && v <= 0xdfff ? 0xfffdu : (unsigned)v);
    return LEX_OK;
}

/* The string p[0..q) (between the quotes) with its escapes resolved, into s->text. */
static enum lex decode(nx_json_scan *s, const unsigned char *p, const unsigned char *q)
{
    static const char simple[256] = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
                                     ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t'};
    s->text.len = 0;
    while (p < q) {
        const unsigned char *bs = memchr(p, '\\', (size_t)(q - p));
        if (!bs)
            bs = q;
        nx_strbuf_append(&s->text, (const char *)p, (size_t)(bs - p));
        if (bs == q)
            break;
        if (bs[1] == 'u') {
            size_t used = 0;
            if (unicode_escape(s, bs + 1, q, &used) != LEX_OK)
                return LEX_ERR;
            p = bs + 1 + used;
            continue;
        }
        if (!simple[bs[1]])
            return fail_at(s, (size_t)((const char *)bs + 1 - s->buf), "invalid JSON: bad escape '\\%c' in a string",
                           bs[1]);
        nx_strbuf_putc(&s->text, simple[bs[1]]);
        p = bs + 2;
    }
    if (nx_strbuf_failed(&s->text))
        return fail_at(s, (size_t)((const char *)q - s->buf), "out of memory for a JSON string");
    return LEX_OK;
}

/* Past the 8-byte words from p on that hold no quote, backslash, control or
 * non-ASCII byte (has_special), a word at a time. */
static const unsigned char *skip_plain_words(const unsigned char *p, const unsigned char *e)
{
    while (e - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (has_special(w))
            break;
        p += 8;
    }
    return p;
}

/* The string whose opening quote is at buf[pos]. */
static enum lex lex_string(nx_json_scan *s, nx_json_token *t)
{
    const unsigned char *start = (const unsigned char *)s->buf + s->pos + 1, *p = start;
    const unsigned char *e = (const unsigned char *)s->buf + s->end;
    bool escaped = false, high = false;
    for (;;) {
        p = skip_plain_words(p, e);
        if (p >= e)
            return LEX_MORE;
        unsigned c = *p;
        if (c == '"')
            break;
        if (c == '\\') {
            if (e - p < 2)
                return LEX_MORE;
            escaped = true;
            p += 2;
            continue;
        }
        if (c < 0x20)
            return fail_at(s, (size_t)((const char *)p - s->buf), "invalid JSON: control byte 0x%02x in a string", c);
        high |= c >= 0x7f;
        p++;
    }
    t->plain = !escaped && !high;
    if (escaped) {
        if (decode(s, start, p) != LEX_OK)
            return LEX_ERR;
        t->s = s->text.data;
        t->len = s->text.len;
    } else {
        t->s = (const char *)start;
        t->len = (size_t)(p - start);
    }
    s->pos = (size_t)((const char *)p + 1 - s->buf);
    return LEX_OK;
}

/* ---- numbers and literals ---------------------------------------------------- */

static inline bool digit(unsigned c)
{
    return c - '0' < 10u;
}

/* Scans the number at p: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * Returns where it stops; *what stays NULL when the number is well formed up
 * to there, else names the fault at the returned byte (at e: the text ran
 * out where a digit was due). */
static const unsigned char *number_scan(const unsigned char *p, const unsigned char *e, const char **what)
{
#define NEED(what_)                                                                               \
    do {                                                                                          \
        if (p >= e || !digit(*p)) {                                                               \
            *what = (what_);                                                                      \
            return p;                                                                             \
        }                                                                                         \
    } while (0)
    if (*p == '-')
        p++;
    NEED("a digit expected");
    if (*p++ != '0')
        while (p < e && digit(*p))
            p++;
    if (p < e && *p == '.') {
        p++;
        NEED("a digit expected after '.'");
        while (p < e && digit(*p))
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        NEED("a digit expected in the exponent");
        while (p < e && digit(*p))
            p++;
    }
#undef NEED
    return p;
}

/* The number at buf[pos]. */
static enum lex lex_number(nx_json_scan *s, nx_json_token *t)
{
    const unsigned char *b = (const unsigned char *)s->buf, *e = b + s->end;
    const char *what = NULL;
    const unsigned char *p = number_scan(b + s->pos, e, &what);
    if (what)
        return p >= e ? LEX_MORE : fail_at(s, (size_t)(p - b), "invalid JSON: %s in a number", what);
    if (p == e && !s->eof)
        return LEX_MORE;   /* more digits may follow */
    t->s = (const char *)b + s->pos;
    t->len = (size_t)(p - (b + s->pos));
    s->pos = (size_t)(p - b);
    return LEX_OK;
}

static const char *literal_word(char c)
{
    return c == 't' ? "true" : c == 'f' ? "false" : "null";
}

static enum lex lex_literal(nx_json_scan *s, nx_json_token *t)
{
    const char *p = s->buf + s->pos;
    const char *word = literal_word(*p);
    size_t n = strlen(word), have = s->end - s->pos;
    for (size_t i = 1; i < n; i++) {
        if (i >= have)
            return LEX_MORE;
        if (p[i] != word[i])
            return fail_at(s, s->pos + i, "invalid JSON: bad literal (expected '%s')", word);
    }
    t->kind = *p == 'n' ? NX_JSON_NULL : NX_JSON_BOOL;
    t->b = *p == 't';
    s->pos += n;
    return LEX_OK;
}

/* ---- grammar ----------------------------------------------------------------- */

static void value_done(nx_json_scan *s)
{
    s->state = s->depth == 0 ? G_DONE : G_AFTER;
}

static enum lex open_container(nx_json_scan *s, nx_json_token *t, bool object)
{
    if (s->depth >= s->max_depth)
        return fail_at(s, s->pos, "JSON nested deeper than %u levels", s->max_depth);
    s->stack[s->depth++] = object;
    s->state = object ? G_FIRST_KEY : G_FIRST_VALUE;
    t->kind = object ? NX_JSON_START_MAP : NX_JSON_START_ARRAY;
    s->pos++;
    return LEX_OK;
}

static enum lex close_container(nx_json_scan *s, nx_json_token *t, char c)
{
    bool object = s->stack[s->depth - 1];
    if (c != (object ? '}' : ']'))
        return fail_at(s, s->pos, "invalid JSON: '%c' closes %s", c, object ? "an object" : "an array");
    s->depth--;
    t->kind = object ? NX_JSON_END_MAP : NX_JSON_END_ARRAY;
    s->pos++;
    value_done(s);
    return LEX_OK;
}

static enum lex value(nx_json_scan *s, nx_json_token *t, char c)
{
    enum lex rc;
    switch (c) {
    case '{':
        return open_container(s, t, true);
    case '[':
        return open_container(s, t, false);
    case '"':
        t->kind = NX_JSON_STRING;
        rc = lex_string(s, t);
        break;
    case 't':
    case 'f':
    case 'n':
        rc = lex_literal(s, t);
        break;
    default:
        if (c != '-' && !digit((unsigned char)c))
            return (c > 0x20 && c < 0x7f)
                       ? fail_at(s, s->pos, "invalid JSON: unexpected '%c' where a value was expected", c)
                       : fail_at(s, s->pos, "invalid JSON: unexpected byte 0x%02x where a value was expected",
                                 (unsigned char)c);
        t->kind = NX_JSON_NUMBER;
        rc = lex_number(s, t);
        break;
    }
    if (rc == LEX_OK)
        value_done(s);
    return rc;
}

/* One step at buf[pos] (not whitespace): LEX_OK with a token, or with
 * t->kind NX_JSON_EOF for punctuation that makes none (',' and ':'). */
static enum lex step(nx_json_scan *s, nx_json_token *t, char c)
{
    switch (s->state) {
    case G_DONE:
        return fail_at(s, s->pos, "invalid JSON: trailing garbage after the top-level value");
    case G_COLON:
        if (c != ':')
            return fail_at(s, s->pos, "invalid JSON: ':' expected after an object key");
        s->pos++;
        s->state = G_VALUE;
        t->kind = NX_JSON_EOF;
        return LEX_OK;
    case G_AFTER:
        if (c == ',') {
            s->pos++;
            s->state = s->stack[s->depth - 1] ? G_KEY : G_VALUE;
            t->kind = NX_JSON_EOF;
            return LEX_OK;
        }
        if (c == '}' || c == ']')
            return close_container(s, t, c);
        return fail_at(s, s->pos, "invalid JSON: ',' or '%c' expected", s->stack[s->depth - 1] ? '}' : ']');
    case G_FIRST_KEY:
        if (c == '}')
            return close_container(s, t, c);
        /* fall through */
    case G_KEY:
        if (c != '"')
            return fail_at(s, s->pos, "invalid JSON: an object key (a string) expected");
        t->kind = NX_JSON_KEY;
        enum lex rc = lex_string(s, t);
        if (rc != LEX_OK)
            return rc;
        s->state = G_COLON;
        return LEX_OK;
    case G_FIRST_VALUE:
        if (c == ']')
            return close_container(s, t, c);
        /* fall through */
    default:
        return value(s, t, c);
    }
}

static inline bool space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

nx_json_kind nx_json_scan_next(nx_json_scan *s, nx_json_token *t)
{
    t->s = NULL;   /* what a token of another kind leaves unset */
    t->len = 0;
    t->b = t->plain = false;
    for (;;) {
        /* locals: through s, each byte's load and store would go to memory */
        const char *p = s->buf + s->pos, *e = s->buf + s->end;
        while (p < e && space(*p))
            p++;
        s->pos = (size_t)(p - s->buf);
        if (p == e) {
            int got = refill(s);
            if (got < 0)
                return t->kind = NX_JSON_FAIL;
            if (got == 0)
                break;
            continue;
        }
        size_t at = s->pos;
        enum lex rc = step(s, t, s->buf[at]);
        if (rc == LEX_ERR)
            return t->kind = NX_JSON_FAIL;
        if (rc == LEX_MORE) {
            bool was_eof = s->eof;
            int got = refill(s);
            if (got < 0)
                return t->kind = NX_JSON_FAIL;
            if (got == 0 && was_eof)
                break;   /* the input ends inside this token */
            continue;    /* more text, or the end just found: a number may end there */
        }
        if (t->kind == NX_JSON_EOF)
            continue;   /* ',' or ':' */
        t->offset = s->base + at;
        t->end = s->base + s->pos;
        return t->kind;
    }
    t->offset = t->end = s->base + s->end;
    return t->kind = NX_JSON_EOF;
}

/* ---- the compact copy (nx_json_scan_copy_value) ------------------------------ */

/* Values nested deeper are left to the token path. */
#define COPY_DEPTH 64

static inline const unsigned char *skip_space(const unsigned char *p, const unsigned char *e)
{
    while (p < e && space((char)*p))
        p++;
    return p;
}

/* Past the plain string (json_scan.h) whose opening quote is at p, or NULL
 * when it is not plain or does not end before e. */
static const unsigned char *plain_string_end(const unsigned char *p, const unsigned char *e)
{
    p++;
    for (;;) {
        p = skip_plain_words(p, e);
        if (p >= e)
            return NULL;
        if (*p == '"')
            return p + 1;
        if (*p < 0x20 || *p >= 0x7f || *p == '\\')
            return NULL;
        p++;
    }
}

/* Past the scalar (string, number or literal) at p, or NULL when it is not
 * one the copy takes whole before e. */
static const unsigned char *scalar_end(const unsigned char *p, const unsigned char *e)
{
    if (*p == '"')
        return plain_string_end(p, e);
    if (*p == 't' || *p == 'f' || *p == 'n') {
        const char *word = literal_word((char)*p);
        size_t n = strlen(word);
        return (size_t)(e - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
    }
    const char *what = NULL;
    const unsigned char *q = number_scan(p, e, &what);
    return what || q >= e ? NULL : q;   /* at e, more digits may follow */
}

bool nx_json_scan_copy_value(nx_json_scan *s, nx_strbuf *out, size_t limit, uint64_t *end)
{
    const unsigned char *b = (const unsigned char *)s->buf, *e = b + s->end;
    const unsigned char *p = skip_space(b + s->pos, e);
    if (s->state == G_COLON) {
        if (p == e || *p != ':')
            return false;
        p = skip_space(p + 1, e);
    } else if (s->state != G_VALUE) {
        return false;
    }
    if (p == e || (*p != '{' && *p != '['))
        return false;
    /* The compact form is never longer than the text it comes from. */
    size_t room = (size_t)(e - p) < limit ? (size_t)(e - p) : limit;
    char *o = nx_strbuf_reserve(out, room);
    if (!o)
        return false;   /* the token path reports it */
    char *const o0 = o, *const oe = o + room;
    unsigned char stack[COPY_DEPTH];   /* per open container: 1 object, 0 array */
    unsigned depth = 0;
    int st = G_VALUE;
    for (;;) {
        p = skip_space(p, e);
        if (p == e)
            return false;
        unsigned c = *p;
        const unsigned char *q = p + 1;   /* past this token */
        if ((c == '}' && (st == G_AFTER || st == G_FIRST_KEY)) || (c == ']' && (st == G_AFTER || st == G_FIRST_VALUE))) {
            if (c != (stack[depth - 1] ? '}' : ']'))
                return false;
            depth--;
            st = G_AFTER;
        } else if (st == G_AFTER) {
            if (c != ',')
                return false;
            st = stack[depth - 1] ? G_KEY : G_VALUE;
        } else if (st == G_COLON) {
            if (c != ':')
                return false;
            st = G_VALUE;
        } else if (st == G_FIRST_KEY || st == G_KEY) {
            if (c != '"' || !(q = plain_string_end(p, e)))
                return false;
            st = G_COLON;
        } else if (c == '{' || c == '[') {
            if (depth == COPY_DEPTH || s->depth + depth >= s->max_depth)
                return false;
            stack[depth++] = c == '{';
            st = c == '{' ? G_FIRST_KEY : G_FIRST_VALUE;
        } else {
            if (!(q = scalar_end(p, e)))
                return false;
            st = G_AFTER;
        }
        size_t n = (size_t)(q - p);
        if (n > (size_t)(oe - o))
            return false;   /* over limit: the token path marks it too large */
        if (n == 1)
            *o = (char)c;   /* punctuation, the most frequent: no call */
        else
            memcpy(o, p, n);
        o += n;
        p = q;
        if (depth == 0)
            break;
    }
    nx_strbuf_commit(out, (size_t)(o - o0));
    s->pos = (size_t)(p - b);
    value_done(s);
    *end = s->base + s->pos;
    return true;
}
