/* json.c — JSON string escaping, numbers and top-level member scanning (rules in json.h). */
#include "util/json.h"

#include <math.h>
#include <string.h>

#include "util/decimal.h"

/* The length of the UTF-8 sequence at p (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when p does not start one. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || n > avail)
        return 0;
    for (size_t j = 1; j < n; j++)
        if ((p[j] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
        (c == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

size_t nx_json_escape_char(const char *s, size_t len, char *out, size_t *used)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char c = (unsigned char)s[0];
    *used = 1;
    switch (c) {
    case '"': return memcpy(out, "\\\"", 2), 2;
    case '\\': return memcpy(out, "\\\\", 2), 2;
    case '\n': return memcpy(out, "\\n", 2), 2;
    case '\r': return memcpy(out, "\\r", 2), 2;
    case '\t': return memcpy(out, "\\t", 2), 2;
    default: break;
    }
    if (c < 0x20 || c == 0x7f) {
        memcpy(out, "\\u00", 4);
        out[4] = hex[c >> 4];
        out[5] = hex[c & 15];
        return 6;
    }
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    size_t n = utf8_len((const unsigned char *)s, len);
    if (n == 0)
        return memcpy(out, "\\ufffd", 6), 6;
    memcpy(out, s, n);
    *used = n;
    return n;
}

size_t nx_json_escape(char *out, const char *s, size_t len)
{
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {   /* the common case, inline */
            out[k++] = (char)c;
            i++;
            continue;
        }
        size_t used;
        k += nx_json_escape_char(s + i, len - i, out + k, &used);
        i += used;
    }
    out[k++] = '"';
    return k;
}

void nx_json_put_string(nx_strbuf *b, const char *s, size_t len)
{
    char *out = nx_strbuf_reserve(b, NX_JSON_ESCAPE_MAX * len + 2);
    if (out)
        nx_strbuf_commit(b, nx_json_escape(out, s, len));
}

void nx_json_put_utf8(nx_strbuf *b, const char *s, size_t len)
{
    size_t run = 0;   /* s[i - run, i) is valid: appended in one go */
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t n = c < 0x80 ? 1 : utf8_len((const unsigned char *)s + i, len - i);
        if (n) {
            run += n;
            i += n;
            continue;
        }
        nx_strbuf_append(b, s + i - run, run);
        nx_strbuf_append(b, "\xef\xbf\xbd", 3);
        run = 0;
        i++;
    }
    nx_strbuf_append(b, s + len - run, run);
}

/* JavaScript numbers are exact only up to 2^53 - 1, and profile timestamps are
 * Unix nanoseconds (~1.8e18). */
#define JSON_SAFE_INT INT64_C(9007199254740991)

void nx_json_put_i64(nx_strbuf *b, int64_t v, bool safe)
{
    char *out = nx_strbuf_reserve(b, 26);
    if (!out)
        return;
    /* Without printf: the timeline writes hundreds of thousands of these per response. */
    bool quote = safe && (v > JSON_SAFE_INT || v < -JSON_SAFE_INT);
    size_t n = 0;
    if (quote)
        out[n++] = '"';
    n += nx_i64_text(out + n, v);
    if (quote)
        out[n++] = '"';
    out[n] = '\0';
    nx_strbuf_commit(b, n);
}

void nx_json_put_i64_member(nx_strbuf *b, const char *key, int64_t v, bool safe)
{
    nx_strbuf_printf(b, ",\"%s\":", key);
    nx_json_put_i64(b, v, safe);
}

/* The JSON text of v, a double or (single) a float's value, into buf
 * (NX_FLOAT_TEXT_MAX bytes); its length. */
static size_t number_text(char *buf, double v, bool single)
{
    if (!isfinite(v)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    return single ? nx_f32_text(buf, (float)v) : nx_f64_text(buf, v);
}

static void put_number(nx_strbuf *b, double v, bool single)
{
    char *out = nx_strbuf_reserve(b, NX_FLOAT_TEXT_MAX);
    if (out)
        nx_strbuf_commit(b, number_text(out, v, single));
}

const char *nx_json_f64_text(char *buf, double v)
{
    number_text(buf, v, false);
    return buf;
}

const char *nx_json_f32_text(char *buf, float v)
{
    number_text(buf, v, true);
    return buf;
}

void nx_json_put_f64(nx_strbuf *b, double v) { put_number(b, v, false); }

void nx_json_put_f32(nx_strbuf *b, float v) { put_number(b, v, true); }

void nx_json_put_f64_member(nx_strbuf *b, const char *key, double v)
{
    nx_strbuf_printf(b, ",\"%s\":", key);
    nx_json_put_f64(b, v);
}

void nx_json_put_cstr(nx_strbuf *b, const char *s)
{
    nx_json_put_string(b, s, strlen(s));
}

/* ------------------------------------------------------------- scanning -- */

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Past the string literal at p (on its opening quote); NULL when unterminated. */
static const char *skip_string(const char *p, const char *e)
{
    for (p++; p < e; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Past the value at p: a string, an object or array (nested ones and their
 * strings skipped), or a scalar up to the ',', '}', ']' or whitespace that
 * ends it. NULL when the value is unterminated. */
static const char *skip_value(const char *p, const char *e)
{
    if (p < e && *p == '"')
        return skip_string(p, e);
    int depth = 0;
    while (p < e) {
        char c = *p;
        if (c == '"') {
            if (!(p = skip_string(p, e)))
                return NULL;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            return p;
        }
        p++;
    }
    return depth == 0 ? p : NULL;
}

bool nx_json_members_begin(nx_json_iter *it, const char *js, size_t len)
{
    const char *e = js + len, *p = skip_ws(js, e);
    if (p >= e || *p != '{')
        return false;
    it->p = skip_ws(p + 1, e);
    it->e = e;
    return true;
}

bool nx_json_members_next(nx_json_iter *it, const char **key, size_t *klen, const char **val, size_t *vlen)
{
    const char *p = it->p, *e = it->e;
    if (p >= e || *p != '"')
        return false;
    const char *k = p + 1, *ke = skip_string(p, e);
    if (!ke)
        return false;
    p = skip_ws(ke, e);
    if (p >= e || *p != ':')
        return false;
    p = skip_ws(p + 1, e);
    const char *v = p;
    if (!(p = skip_value(p, e)) || p == v)
        return false;
    *key = k;
    *klen = (size_t)(ke - 1 - k);
    *val = v;
    *vlen = (size_t)(p - v);
    p = skip_ws(p, e);
    if (p < e && *p == ',')
        p = skip_ws(p + 1, e);
    it->p = p;
    return true;
}

bool nx_json_member(const char *js, size_t len, const char *key, const char **val, size_t *vlen)
{
    size_t want = strlen(key), klen;
    const char *k;
    nx_json_iter it;
    if (!nx_json_members_begin(&it, js, len))
        return false;
    while (nx_json_members_next(&it, &k, &klen, val, vlen))
        if (klen == want && memcmp(k, key, want) == 0)
            return true;
    return false;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80)
        return o[0] = (char)cp, 1;
    if (cp < 0x800)
        return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3F)), o[2] = (char)(0x80 | (cp & 0x3F)), 3;
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The code point of the \u escape at p (after "\u"), joined with a following
 * low surrogate escape; *p advanced. -1 on bad hex; a lone surrogate is U+FFFD. */
static long unicode_escape(const char **pp, const char *e)
{
    const char *p = *pp;
    int u = e - p >= 4 ? hex4(p) : -1;
    if (u < 0)
        return -1;
    p += 4;
    unsigned cp = (unsigned)u;
    if (cp >= 0xD800 && cp < 0xDC00 && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
        int lo = hex4(p + 2);
        if (lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (unsigned)(lo - 0xDC00);
            p += 6;
        }
    }
    *pp = p;
    return cp >= 0xD800 && cp < 0xE000 ? 0xFFFD : (long)cp;
}

/* Decodes the literal's content p[0..e) into out; false on a bad escape. The
 * result is never longer than the literal. */
static bool decode_string(const char *p, const char *e, char *out, size_t *n)
{
    size_t k = 0;
    while (p < e) {
        if (*p != '\\') {
            out[k++] = *p++;
            continue;
        }
        if (++p >= e)
            return false;
        char c = *p++;
        switch (c) {
        case '"': case '\\': case '/': out[k++] = c; break;
        case 'b': out[k++] = '\b'; break;
        case 'f': out[k++] = '\f'; break;
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'u': {
            long cp = unicode_escape(&p, e);
            if (cp < 0)
                return false;
            k += put_utf8(out + k, (unsigned)cp);
            break;
        }
        default: return false;
        }
    }
    *n = k;
    return true;
}

bool nx_json_string_member(const char *js, size_t len, const char *key, char *out, size_t cap, size_t *n)
{
    const char *v;
    size_t vlen, got;
    if (!nx_json_member(js, len, key, &v, &vlen) || vlen < 2 || *v != '"' || vlen - 2 > cap - *n ||
        !decode_string(v + 1, v + vlen - 1, out + *n, &got))
        return false;
    *n += got;
    return true;
}
