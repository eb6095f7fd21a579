/* test_json_scan.c — unit tests of util/json_scan, the Chrome reader's pull
 * tokenizer: the token stream and its offsets, escapes and surrogate pairs,
 * bytes that are not UTF-8, numbers beyond int64, grammar errors with their
 * offsets, the depth bound, every split of the input into reads, the input
 * cut at every byte, yajl's tree parser as an independent grammar oracle
 * on mutated documents, and the compact copy of a value (checked against
 * yajl and a whitespace-dropping copy written here) on such documents. Expected tokens are written out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "util/json_scan.h"

/* The input, handed over at most `step` bytes per read. */
typedef struct src {
    const char *text;
    size_t len, at, step;
} src;

static long read_src(void *ctx, char *dst, size_t cap, nx_error *why)
{
    (void)why;
    src *s = ctx;
    size_t n = s->len - s->at;
    if (n > cap)
        n = cap;
    if (n > s->step)
        n = s->step;
    memcpy(dst, s->text + s->at, n);
    s->at += n;
    return (long)n;
}

/* The tokens of text[0..len) as one line each ("kind@offset-end:text"), the
 * last line "EOF@n complete" / "EOF@n partial" or "FAIL@offset:message". */
static char *tokens_of(const char *text, size_t len, size_t chunk, size_t step, unsigned depth)
{
    src in = {text, len, 0, step};
    nx_json_scan s;
    assert_int_equal(nx_json_scan_init(&s, chunk, depth, read_src, &in), 0);
    static const char *const names[] = {"null", "bool", "num", "str", "{", "key", "}", "[", "]"};
    size_t cap = 256 + len * 32, n = 0;
    char *out = malloc(cap + 600);
    assert_non_null(out);
    nx_json_token t;
    for (;;) {
        nx_json_kind k = nx_json_scan_next(&s, &t);
        if (k == NX_JSON_FAIL) {
            n += (size_t)snprintf(out + n, 600, "FAIL@%llu:%s", (unsigned long long)s.err_offset, s.err);
            break;
        }
        if (k == NX_JSON_EOF) {
            n += (size_t)snprintf(out + n, 600, "EOF@%llu %s", (unsigned long long)t.offset,
                                  nx_json_scan_complete(&s) ? "complete" : "partial");
            break;
        }
        bool has_text = k == NX_JSON_STRING || k == NX_JSON_KEY || k == NX_JSON_NUMBER;
        assert_true(n + 80 + (has_text ? t.len : 0) < cap);
        n += (size_t)sprintf(out + n, "%s@%llu-%llu", names[k], (unsigned long long)t.offset,
                             (unsigned long long)t.end);
        if (has_text) {
            out[n++] = ':';
            memcpy(out + n, t.s, t.len);
            n += t.len;
            if (k != NX_JSON_NUMBER && t.plain)
                out[n++] = '+';
        }
        if (k == NX_JSON_BOOL)
            n += (size_t)sprintf(out + n, ":%d", t.b);
        out[n++] = '\n';
    }
    nx_json_scan_free(&s);
    return out;
}

static void expect_tokens(const char *text, const char *want)
{
    char *got = tokens_of(text, strlen(text), 64, SIZE_MAX, 100);
    assert_string_equal(got, want);
    free(got);
}

static void test_tokens_and_offsets(void **state)
{
    (void)state;
    expect_tokens(" {\"a\": [1, -2.5e+3, true, false, null], \"b\" : {}}\n",
                  "{@1-2\nkey@2-5:a+\n[@7-8\nnum@8-9:1\nnum@11-18:-2.5e+3\nbool@20-24:1\nbool@26-31:0\n"
                  "null@33-37\n]@37-38\nkey@40-43:b+\n{@46-47\n}@47-48\n}@48-49\nEOF@50 complete");
    /* numbers beyond int64 and any exponent are kept as their text */
    expect_tokens("[18446744073709551617, 0.000001, 1E400, -0]",
                  "[@0-1\nnum@1-21:18446744073709551617\nnum@23-31:0.000001\nnum@33-38:1E400\n"
                  "num@40-42:-0\n]@42-43\nEOF@43 complete");
    /* a bare array may stop between elements: the caller tells (partial) */
    expect_tokens("[{}, ", "[@0-1\n{@1-2\n}@2-3\nEOF@5 partial");
    expect_tokens("", "EOF@0 partial");
    expect_tokens("7", "num@0-1:7\nEOF@1 complete");
}

static void test_escapes_and_surrogates(void **state)
{
    (void)state;
    expect_tokens("[\"q\\\"b\\\\s\\/\\n\\t\\r\\b\\f\"]", "[@0-1\nstr@1-22:q\"b\\s/\n\t\r\b\f\n]@22-23\nEOF@23 complete");
    /* \u escapes: BMP, a surrogate pair (U+1F600), lone surrogates as U+FFFD */
    expect_tokens("[\"\\u00e9\\u20AC\\ud83d\\ude00\"]",
                  "[@0-1\nstr@1-27:\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n]@27-28\nEOF@28 complete");
    expect_tokens("[\"\\ud83dx\\ude00\\ud83d\\u0041\"]",
                  "[@0-1\nstr@1-28:\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd" "A\n]@28-29\nEOF@29 complete");
    /* "\u0000" is a NUL byte inside the string (len counts it) */
    char *got = tokens_of("[\"a\\u0000b\"]", 12, 64, SIZE_MAX, 10);
    assert_memory_equal(got, "[@0-1\nstr@1-11:a\0b\n]", 20);
    free(got);
    /* bytes that are not UTF-8, and 0x7f, are handed over as they are, not plain */
    expect_tokens("[\"\xff\xc3(\", \"a\x7f\", \"\xc3\xa9\"]",
                  "[@0-1\nstr@1-6:\xff\xc3(\nstr@8-12:a\x7f\nstr@14-18:\xc3\xa9\n]@18-19\nEOF@19 complete");
}

/* Each error: the offset just past the byte at fault, and the message. */
static void test_grammar_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{\"a\":1,,}", "{@0-1\nkey@1-4:a+\nnum@5-6:1\nFAIL@8:invalid JSON: an object key (a string) expected"},
        {"[1x]", "[@0-1\nnum@1-2:1\nFAIL@3:invalid JSON: ',' or ']' expected"},
        {"[1,]", "[@0-1\nnum@1-2:1\nFAIL@4:invalid JSON: unexpected ']' where a value was expected"},
        {"{\"a\" 1}", "{@0-1\nkey@1-4:a+\nFAIL@6:invalid JSON: ':' expected after an object key"},
        {"{} x", "{@0-1\n}@1-2\nFAIL@4:invalid JSON: trailing garbage after the top-level value"},
        {"[}", "[@0-1\nFAIL@2:invalid JSON: unexpected '}' where a value was expected"},
        {"[1}", "[@0-1\nnum@1-2:1\nFAIL@3:invalid JSON: '}' closes an array"},
        {"[tru e]", "[@0-1\nFAIL@5:invalid JSON: bad literal (expected 'true')"},
        {"[-x]", "[@0-1\nFAIL@3:invalid JSON: a digit expected in a number"},
        {"[1.e5]", "[@0-1\nFAIL@4:invalid JSON: a digit expected after '.' in a number"},
        {"[1e+]", "[@0-1\nFAIL@5:invalid JSON: a digit expected in the exponent in a number"},
        {"[01]", "[@0-1\nnum@1-2:0\nFAIL@3:invalid JSON: ',' or ']' expected"},
        {"[\"a\x01\"]", "[@0-1\nFAIL@4:invalid JSON: control byte 0x01 in a string"},
        {"[\"\\x\"]", "[@0-1\nFAIL@4:invalid JSON: bad escape '\\x' in a string"},
        {"[\"\\u12g4\"]", "[@0-1\nFAIL@7:invalid JSON: bad \\u escape in a string"},
        {"[\"\\u12\"]", "[@0-1\nFAIL@7:invalid JSON: bad \\u escape in a string"},
        {"\xef\xbb[]", "FAIL@1:invalid JSON: unexpected byte 0xef where a value was expected"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = tokens_of(cases[i].text, strlen(cases[i].text), 64, SIZE_MAX, 100);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s:\n got %s\nwant %s", cases[i].text, got, cases[i].want);
        free(got);
    }
}

static void test_depth_is_bounded(void **state)
{
    (void)state;
    expect_tokens("[[]]", "[@0-1\n[@1-2\n]@2-3\n]@3-4\nEOF@4 complete");
    char *got = tokens_of("[[[", 3, 64, SIZE_MAX, 2);
    assert_string_equal(got, "[@0-1\n[@1-2\nFAIL@3:JSON nested deeper than 2 levels");
    free(got);
    /* a million '[' cost no more than the bound */
    size_t n = 1000000;
    char *deep = malloc(n);
    assert_non_null(deep);
    memset(deep, '[', n);
    got = tokens_of(deep, n, 4096, SIZE_MAX, 1000);
    assert_non_null(strstr(got, "FAIL@1001:JSON nested deeper than 1000 levels"));
    free(got);
    free(deep);
}

static const char sample[] =
    "{\"traceEvents\": [\n  {\"ph\": \"X\", \"name\": \"aten::mm\\u00e9\\ud83d\\ude00\", \"ts\": 1712195495519695.812,"
    " \"dur\": 2, \"pid\": 18446744073709551617, \"args\": {\"Input Dims\": [[2, 3], []], \"x\": [true, false, null],"
    " \"s\": \"a\\\"b\\\\\\/\", \"e\": -1.5E-3}},\n  {\"ph\": \"i\", \"ts\": 0}\n], \"schemaVersion\": 1}\n";

/* Every split of the text into reads gives the same tokens and offsets. */
static void test_any_split(void **state)
{
    (void)state;
    size_t len = strlen(sample);
    char *want = tokens_of(sample, len, 4096, SIZE_MAX, 100);
    assert_non_null(strstr(want, "EOF@"));
    assert_non_null(strstr(want, "complete"));
    for (size_t chunk = 1; chunk <= 9; chunk++)
        for (size_t step = 1; step <= 17; step += 4) {
            char *got = tokens_of(sample, len, chunk, step, 100);
            assert_string_equal(got, want);
            free(got);
        }
    free(want);
}

/* The text cut at every byte: never an error, never complete, and every token
 * but the last one seen is the whole text's (a number cut short ends early). */
static void test_truncated_at_every_byte(void **state)
{
    (void)state;
    size_t len = strlen(sample);
    char *whole = tokens_of(sample, len, 4096, SIZE_MAX, 100);
    for (size_t cut = 0; cut < len - 1; cut++) {   /* the last byte is the '\n' after '}' */
        char *got = tokens_of(sample, cut, 3, 5, 100);
        if (strstr(got, "FAIL") || strstr(got, "complete"))
            fail_msg("cut at %zu: %s", cut, got);
        char *last = strrchr(got, '\n');
        char *prev = last;
        if (last) {
            *last = '\0';
            prev = strrchr(got, '\n');   /* the tokens before the last one */
            size_t keep = prev ? (size_t)(prev - got) : 0;
            assert_memory_equal(got, whole, keep);
        }
        free(got);
    }
    free(whole);
}

/* xorshift: the same mutations every run */
static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* yajl accepts a value followed by a string that never ends ("{}\"abc"): it
 * reports no error for a token cut short after the top-level value. The
 * scanner refuses it as trailing garbage. True when doc ends so. */
static bool yajl_trailing_quote(const char *doc, size_t n)
{
    const char *q = memchr(doc, '"', n) ? strrchr(doc, '"') : NULL;
    if (!q)
        return false;
    char *got = tokens_of(doc, (size_t)(q - doc), 64, SIZE_MAX, 100);
    bool value_then_quote = strstr(got, "complete") != NULL;
    free(got);
    return value_then_quote;
}

/* Accept or reject as yajl's tree parser does, on the sample mutated at
 * random (ASCII only: yajl's tree parser validates UTF-8, which the scanner
 * leaves to its caller; no '\v' or '\f', which yajl takes for whitespace). */
static void test_grammar_agrees_with_yajl(void **state)
{
    (void)state;
    static const char alphabet[] = "{}[]:,\"\\ \n0123456789-+.eEtrufalsnu\x01x";
    size_t len = strlen(sample);
    char *doc = malloc(len + 16);
    assert_non_null(doc);
    uint64_t x = 88172645463325252ull;
    unsigned accepted = 0, rejected = 0, yajl_lenient = 0;
    for (int i = 0; i < 20000; i++) {
        memcpy(doc, sample, len + 1);
        size_t n = len;
        for (int m = 0, edits = 1 + (int)(rnd(&x) % 3); m < edits; m++) {
            size_t at = rnd(&x) % n;
            char c = alphabet[rnd(&x) % (sizeof alphabet - 1)];
            switch (rnd(&x) % 3) {
            case 0: doc[at] = c; break;
            case 1: memmove(doc + at, doc + at + 1, n - at), n--; break;
            default: memmove(doc + at + 1, doc + at, n - at + 1), doc[at] = c, n++; break;
            }
        }
        doc[n] = '\0';
        char *got = tokens_of(doc, n, 7, 11, 100);
        bool ours = strstr(got, "EOF@") && strstr(got, "complete");
        free(got);
        char errbuf[128];
        yajl_val v = yajl_tree_parse(doc, errbuf, sizeof errbuf);
        bool theirs = v != NULL;
        yajl_tree_free(v);
        if (theirs && !ours && yajl_trailing_quote(doc, n)) {
            yajl_lenient++;
            continue;
        }
        if (ours != theirs)
            fail_msg("yajl %s, json_scan %s: %s", theirs ? "accepts" : "refuses", ours ? "accepts" : "refuses", doc);
        accepted += ours, rejected += !ours;
    }
    /* the mutations reach both sides; yajl's leniency is the exception */
    assert_true(accepted > 1000 && rejected > 1000 && yajl_lenient < 100);
    free(doc);
}

/* The compact copy's expectation, computed apart: text with the whitespace
 * outside strings dropped. */
static size_t compact(const char *text, size_t n, char *out)
{
    size_t o = 0;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (!in_string && (c == ' ' || c == '\n' || c == '\r' || c == '\t'))
            continue;
        out[o++] = c;
        if (in_string && c == '\\')
            out[o++] = text[++i];
        else if (c == '"')
            in_string = !in_string;
    }
    return o;
}

/* True when text[0..n) is printable ASCII without a backslash: the copy must
 * then take every value yajl accepts. */
static bool plain_text(const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (text[i] < 0x20 || text[i] > 0x7e || text[i] == '\\')
            return false;
    return true;
}

/* nx_json_scan_copy_value on a mutated object after a key: when it takes the
 * value, yajl accepts the document, the copy is its compact text, and the
 * tokens go on after it; when it declines, nothing was consumed, and it
 * declines plain text only when yajl refuses it. */
static void test_copy_value(void **state)
{
    (void)state;
    static const char value[] = "{\"Input Dims\": [[2, 3], []], \"x\": [true, false, null],\n"
                                "  \"s\": \"a b\", \"e\": -1.5E-3, \"n\": {\"k\": 0, \"l\": {}}}";
    static const char alphabet[] = "{}[]:,\"\\ \n0123456789-+.eEtrufalsnu\x01x";
    const char *head = "{\"a\" : ";
    size_t hn = strlen(head), len = strlen(value);
    char *doc = malloc(hn + len + 16), *want = malloc(len + 16);
    assert_non_null(doc);
    assert_non_null(want);
    uint64_t x = 2463534242ull;
    unsigned taken = 0, declined = 0;
    for (int i = 0; i < 20000; i++) {
        char *v = doc + hn;
        memcpy(doc, head, hn);
        memcpy(v, value, len + 1);
        size_t n = len;
        for (int m = 0, edits = (int)(rnd(&x) % 3); m < edits; m++) {
            size_t at = rnd(&x) % n;
            char c = alphabet[rnd(&x) % (sizeof alphabet - 1)];
            switch (rnd(&x) % 3) {
            case 0: v[at] = c; break;
            case 1: memmove(v + at, v + at + 1, n - at), n--; break;
            default: memmove(v + at + 1, v + at, n - at + 1), v[at] = c, n++; break;
            }
        }
        memcpy(v + n, "}", 2);
        size_t dn = hn + n + 1;
        char errbuf[128];
        yajl_val tree = yajl_tree_parse(doc, errbuf, sizeof errbuf);
        bool valid = tree != NULL;
        yajl_tree_free(tree);

        src in = {doc, dn, 0, SIZE_MAX};
        nx_json_scan s;
        assert_int_equal(nx_json_scan_init(&s, dn + 1, 100, read_src, &in), 0);
        nx_json_token t;
        assert_int_equal(nx_json_scan_next(&s, &t), NX_JSON_START_MAP);
        assert_int_equal(nx_json_scan_next(&s, &t), NX_JSON_KEY);
        nx_strbuf out = NX_STRBUF_INIT;
        uint64_t end = 0;
        size_t pos = s.pos;
        if (nx_json_scan_copy_value(&s, &out, 4096, &end)) {
            /* a mutation may end the value early ("{..}, \"k\": 1"): what was taken is a value */
            assert_true(end > hn && end <= dn);
            char *taken_text = strndup(v, (size_t)end - hn);
            assert_non_null(taken_text);
            tree = yajl_tree_parse(taken_text, errbuf, sizeof errbuf);
            if (!tree || (!YAJL_IS_OBJECT(tree) && !YAJL_IS_ARRAY(tree)))
                fail_msg("copied what yajl refuses as a value (%s): %s", errbuf, taken_text);
            yajl_tree_free(tree);
            free(taken_text);
            size_t wn = compact(v, (size_t)end - hn, want);
            assert_int_equal(out.len, wn);
            assert_memory_equal(out.data, want, wn);
            /* the tokens after it are the token path's: the scan went on from the right place */
            nx_json_kind k;
            while ((k = nx_json_scan_next(&s, &t)) != NX_JSON_EOF && k != NX_JSON_FAIL)
                assert_true(t.offset >= end);
            assert_int_equal(k == NX_JSON_EOF && nx_json_scan_complete(&s), valid);
            taken++;
        } else {
            assert_int_equal(s.pos, pos);
            assert_int_equal(out.len, 0);
            if (valid && plain_text(v, n) && (v[0] == '{' || v[0] == '['))
                fail_msg("declined a plain value yajl accepts: %s", doc);
            declined++;
        }
        nx_strbuf_free(&out);
        nx_json_scan_free(&s);
    }
    /* both ways are reached */
    assert_true(taken > 1000 && declined > 1000);
    free(doc);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_and_offsets),
        cmocka_unit_test(test_escapes_and_surrogates),
        cmocka_unit_test(test_grammar_errors),
        cmocka_unit_test(test_depth_is_bounded),
        cmocka_unit_test(test_any_split),
        cmocka_unit_test(test_truncated_at_every_byte),
        cmocka_unit_test(test_grammar_agrees_with_yajl),
        cmocka_unit_test(test_copy_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
