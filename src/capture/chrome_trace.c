/*
 * chrome_trace.c — see chrome_trace.h.
 *
 * The tokenizer (json_scan.h) hands over one JSON token at a time to
 * on_token(), a state machine over where we are in the document (before the top-level
 * value, in the top-level object, in traceEvents, in one event, ...). Values
 * that are kept as JSON text ("args", top-level values) or skipped (unknown
 * keys holding objects or arrays) are handed to a small "capture" sub-machine
 * that re-serialises tokens compactly, or merely tracks nesting when skipping,
 * until the value is complete. An event's "args" first tries the tokenizer's
 * compact copy (nx_json_scan_copy_value), which hands over the same text
 * without a token per member; whatever it does not take (escapes, non-ASCII,
 * a value cut by the buffer's end, malformed text) goes the token way.
 *
 * Per-event storage (strings, args text) lives in buffers reused from one
 * event to the next, so the steady state allocates nothing.
 */
#include "capture/chrome_trace.h"
#include "capture/framework_source.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/json_readahead.h"
#include "util/json_scan.h"
#include "util/gzip_input.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/run_control.h"

/* Keeps a hostile "[[[[..." from costing memory (the tokenizer refuses it). */
#define MAX_DEPTH 1000

/* The read-ahead (json_readahead.h): 4 MiB in flight keeps the tokenizer fed
 * between two wake-ups of the reading thread. */
#define READ_AHEAD_BLOCK (1u << 20)
#define READ_AHEAD_BLOCKS 4u

typedef nx_json_kind tok_kind;
#define T_NULL NX_JSON_NULL
#define T_BOOL NX_JSON_BOOL
#define T_NUMBER NX_JSON_NUMBER
#define T_STRING NX_JSON_STRING
#define T_START_MAP NX_JSON_START_MAP
#define T_KEY NX_JSON_KEY
#define T_END_MAP NX_JSON_END_MAP
#define T_START_ARRAY NX_JSON_START_ARRAY
#define T_END_ARRAY NX_JSON_END_ARRAY

static const char *const tok_names[] = {
    "null", "a boolean", "a number", "a string", "an object", "a key", "'}'", "an array", "']'"
};

/* Where the next token falls. */
typedef enum where {
    W_START,      /* before the top-level value */
    W_TOP,        /* in the top-level object: a key or '}' */
    W_TOP_EVENTS, /* after the key "traceEvents": its array */
    W_EVENTS,     /* in traceEvents: an event or ']' */
    W_EVENT,      /* in an event: a key or '}' */
    W_FIELD,      /* after an event's key: its value */
    W_END         /* after the top-level value */
} where;

/* The event keys the reader keeps; F_OTHER values are skipped. */
typedef enum field {
    F_OTHER, F_PH, F_NAME, F_CAT, F_S, F_BP, F_TS, F_DUR, F_PID, F_TID, F_ID, F_BIND_ID,
    F_FLOW_IN, F_FLOW_OUT, F_ARGS, F_COUNT
} field;

static const char *const field_names[F_COUNT] = {
    "", "ph", "name", "cat", "s", "bp", "ts", "dur", "pid", "tid", "id", "bind_id",
    "flow_in", "flow_out", "args"
};

typedef enum capture_purpose { CAP_ARGS, CAP_SKIP, CAP_TOPLEVEL } capture_purpose;

/* Re-serialises (or, with out NULL, skips) one JSON value token by token. */
typedef struct capture {
    bool active;
    capture_purpose purpose;
    nx_strbuf *out;      /* NULL: skip without keeping anything */
    size_t limit;        /* text beyond this many bytes is dropped */
    bool too_large;
    unsigned depth;      /* open containers inside the value */
    bool need_comma;     /* the last thing written was a complete value */
    bool after_key;      /* the last thing written was "key": */
} capture;

/* A string stored in the per-event buffer, by offset since the buffer moves. */
typedef struct stored {
    bool present;
    size_t off, len;
} stored;

typedef struct ref_slot {
    nx_chrome_ref_kind kind;
    int64_t num;
    stored str;
} ref_slot;

/* The event being assembled. */
typedef struct event_state {
    uint64_t offset;
    stored ph, name, cat, s, bp;
    bool has_ts, has_dur, flow_in, flow_out, has_args, args_too_large;
    bool ts_over, dur_over;   /* the value does not fit int64 ns (then 0) */
    int64_t ts, dur;
    ref_slot pid, tid, id, bind_id;
    bool bad;                 /* unusable: delivered to the skipped callback */
    char why[200];            /* the first reason it is unusable */
} event_state;

struct nx_chrome_reader {
    char *path;
    nx_gzip_input *src;   /* the file, decompressed when gzip */
    nx_readahead *ahead;  /* src read on a thread of its own */
    size_t chunk_size, max_args, max_toplevel;
    bool used;            /* nx_chrome_read() runs once */
    bool bare_array;

    /* parsing */
    nx_json_scan scan;
    bool scan_ready;      /* scan was initialised */
    uint64_t tok_end;     /* JSON-text offset just past the current token */
    bool plain;           /* the current string token is plain (json_scan.h) */
    const nx_chrome_handlers *h;
    nx_error *err;
    int stop;             /* a callback's stop value, or 0 */
    bool failed;          /* err is filled */
    where where;
    bool seen_events;     /* traceEvents found (object form) */
    uint64_t index;       /* traceEvents elements begun so far */
    bool in_event;
    field field;
    event_state ev;
    nx_strbuf strs;       /* this event's strings, NUL-separated */
    nx_strbuf args;       /* this event's args text */
    capture cap;
    nx_strbuf top_key, top_json;
};

static uint64_t cur_offset(const nx_chrome_reader *r)
{
    return r->tok_end;
}

/* Fills err with "<path>: byte <off>[: event #<i>]: <message>" and returns 0,
 * the "stop reading" value, so callers can `return fail_at(...)`. */
__attribute__((format(printf, 3, 4))) static int fail_at(nx_chrome_reader *r, uint64_t off, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (r->in_event)
        snprintf(r->err->msg, sizeof r->err->msg, "%s: byte %llu: event #%llu: %s", r->path,
                 (unsigned long long)off, (unsigned long long)(r->index - 1), what);
    else
        snprintf(r->err->msg, sizeof r->err->msg, "%s: byte %llu: %s", r->path, (unsigned long long)off, what);
    r->failed = true;
    return 0;
}

#define fail(r, ...) fail_at((r), cur_offset(r), __VA_ARGS__)

static int out_of_memory(nx_chrome_reader *r)
{
    return fail(r, "out of memory");
}

/* nx_strbuf_append with its common case (room left) inline: the reader
 * appends a few bytes per token. */
static inline void sb_add(nx_strbuf *b, const char *s, size_t n)
{
    if (!b->failed && b->cap - b->len > n) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    nx_strbuf_append(b, s, n);
}

static void sb_reset(nx_strbuf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* ---- numbers ---------------------------------------------------------- */

/*
 * Converts JSON number text (already validated by the tokenizer: -?int(.frac)?(e[+-]?exp)?)
 * to int64 value * 10^scale, exactly, rounding to the nearest integer with
 * halves away from zero. *inexact says whether rounding dropped anything.
 * Returns false when the result does not fit in int64.
 *
 * The digits d1..dn of int and frac together form an integer D, and the value
 * is D * 10^(exp - nfrac + scale). With keep = nint + exp + scale, the
 * result's magnitude is the first `keep` digits of D (times 10^(keep-n) when
 * keep > n), plus one if digit keep+1 is 5 or more.
 */
static bool decimal_to_int64(const char *s, size_t len, int scale, int64_t *out, bool *inexact)
{
    size_t i = 0;
    bool neg = len > 0 && s[0] == '-';
    if (neg)
        i++;
    size_t int_start = i;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    size_t int_end = i, frac_start = i, frac_end = i;
    if (i < len && s[i] == '.') {
        frac_start = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        frac_end = i;
    }
    long long exp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        /* Saturate: any exponent beyond a million digits overflows or
         * underflows int64 anyway, and this keeps the sums below in range. */
        for (; i < len; i++)
            if (exp < 1000000)
                exp = exp * 10 + (s[i] - '0');
        if (eneg)
            exp = -exp;
    }
    size_t nint = int_end - int_start, nfrac = frac_end - frac_start;
    long long n = (long long)(nint + nfrac);
    long long keep = (long long)nint + exp + scale;

    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    bool nonzero_dropped = false;
    int round_digit = 0;
    for (long long k = 0; k < n; k++) {
        size_t pos = k < (long long)nint ? int_start + (size_t)k : frac_start + (size_t)(k - (long long)nint);
        int d = s[pos] - '0';
        if (k < keep) {
            if (acc > (limit - (uint64_t)d) / 10)
                return false;
            acc = acc * 10 + (uint64_t)d;
        } else {
            if (k == keep)
                round_digit = d;
            nonzero_dropped |= d != 0;
        }
    }
    for (long long k = n; k < keep && acc != 0; k++) {
        if (acc > limit / 10)
            return false;
        acc *= 10;
    }
    if (round_digit >= 5) {
        if (acc == limit)
            return false;
        acc++;
    }
    *inexact = nonzero_dropped;
    *out = neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
    return true;
}

/* ---- per-event strings ------------------------------------------------- */

static bool store_string(nx_chrome_reader *r, stored *dst, const char *s, size_t len)
{
    size_t off = r->strs.len;
    if (r->plain)
        sb_add(&r->strs, s, len);
    else
        nx_json_put_utf8(&r->strs, s, len);   /* the tokenizer does not validate UTF-8: repaired here */
    size_t kept = r->strs.len - off;
    sb_add(&r->strs, "", 1);
    if (nx_strbuf_failed(&r->strs))
        return false;
    *dst = (stored){true, off, kept};
    return true;
}

static nx_chrome_text text_of(const nx_chrome_reader *r, const stored *st)
{
    if (!st->present)
        return (nx_chrome_text){NULL, 0};
    return (nx_chrome_text){r->strs.data + st->off, st->len};
}

static nx_chrome_ref ref_of(const nx_chrome_reader *r, const ref_slot *slot)
{
    nx_chrome_ref ref = {slot->kind, slot->num, {NULL, 0}};
    if (slot->kind == NX_CHROME_REF_STRING)
        ref.str = text_of(r, &slot->str);
    return ref;
}

/* ---- capture: compact re-serialisation of one value ---------------------- */

static void cap_begin(nx_chrome_reader *r, capture_purpose purpose, nx_strbuf *out, size_t limit)
{
    if (out)
        sb_reset(out);
    r->cap = (capture){.active = true, .purpose = purpose, .out = out, .limit = limit};
}

static void cap_put(capture *c, const char *s, size_t n)
{
    if (!c->out || c->too_large)
        return;
    if (n > c->limit - c->out->len) {
        c->too_large = true;
        return;
    }
    sb_add(c->out, s, n);
}

/* A JSON string literal for s[0..n) (util/json.h's escaping; a plain string,
 * json_scan.h, needs none). */
static void cap_put_string(capture *c, const char *s, size_t n, bool plain)
{
    if (!c->out || c->too_large)
        return;
    size_t before = c->out->len;
    if (n + 2 > c->limit - before) {   /* the literal is at least that long */
        c->too_large = true;
        return;
    }
    if (plain) {
        char *o = nx_strbuf_reserve(c->out, n + 2);
        if (o) {
            o[0] = '"';
            memcpy(o + 1, s, n);
            o[n + 1] = '"';
            nx_strbuf_commit(c->out, n + 2);
        }
        return;
    }
    nx_json_put_string(c->out, s, n);
    if (c->out->len - before > c->limit - before) {
        c->out->len = before;
        c->too_large = true;
    }
}

static void cap_value_prefix(capture *c)
{
    if (c->after_key)
        c->after_key = false;
    else if (c->need_comma)
        cap_put(c, ",", 1);
}

static int cap_done(nx_chrome_reader *r);

/* One token of the captured value; finishes the capture when the value is
 * complete. Returns 1 to go on or 0 to stop. */
static int cap_token(nx_chrome_reader *r, tok_kind k, const char *s, size_t len, int b)
{
    capture *c = &r->cap;
    switch (k) {
    case T_KEY:
        if (c->need_comma)
            cap_put(c, ",", 1);
        cap_put_string(c, s, len, r->plain);
        cap_put(c, ":", 1);
        c->after_key = true;
        return 1;
    case T_START_MAP:
    case T_START_ARRAY:
        cap_value_prefix(c);
        cap_put(c, k == T_START_MAP ? "{" : "[", 1);
        c->need_comma = false;
        c->depth++;
        return 1;
    case T_END_MAP:
    case T_END_ARRAY:
        cap_put(c, k == T_END_MAP ? "}" : "]", 1);
        c->depth--;
        break;
    case T_NULL:
        cap_value_prefix(c);
        cap_put(c, "null", 4);
        break;
    case T_BOOL:
        cap_value_prefix(c);
        cap_put(c, b ? "true" : "false", b ? 4 : 5);
        break;
    case T_NUMBER:
        cap_value_prefix(c);
        cap_put(c, s, len);
        break;
    case T_STRING:
        cap_value_prefix(c);
        cap_put_string(c, s, len, r->plain);
        break;
    case NX_JSON_EOF:
    case NX_JSON_FAIL:
        return 1;   /* read_all hands over neither */
    }
    c->need_comma = true;
    if (c->out && nx_strbuf_failed(c->out))
        return out_of_memory(r);
    if (c->depth > 0)
        return 1;
    c->active = false;
    return cap_done(r);
}

/* The captured value is complete: hand it where it belongs. */
static int cap_done(nx_chrome_reader *r)
{
    capture *c = &r->cap;
    switch (c->purpose) {
    case CAP_ARGS:
        r->ev.has_args = true;
        r->ev.args_too_large = c->too_large;
        return 1;
    case CAP_SKIP:
        return 1;
    case CAP_TOPLEVEL:
        break;
    }
    if (!r->h->toplevel)
        return 1;
    nx_chrome_toplevel tl = {
        .key = {r->top_key.data, r->top_key.len},
        .json = {c->too_large ? NULL : r->top_json.data, c->too_large ? 0 : r->top_json.len},
        .too_large = c->too_large,
    };
    r->stop = r->h->toplevel(r->h->ctx, &tl);
    return r->stop == 0;
}

/* ---- events ---------------------------------------------------------------- */

/* By length first: every event has several keys, so this is on the hot path. */
static field lookup_field(const char *s, size_t len)
{
    static const field by_len[9][4] = {
        [1] = {F_S}, [2] = {F_PH, F_TS, F_ID, F_BP}, [3] = {F_CAT, F_DUR, F_PID, F_TID},
        [4] = {F_NAME, F_ARGS}, [7] = {F_BIND_ID, F_FLOW_IN}, [8] = {F_FLOW_OUT},
    };
    if (len >= 9)
        return F_OTHER;
    for (int i = 0; i < 4 && by_len[len][i] != F_OTHER; i++)
        if (memcmp(field_names[by_len[len][i]], s, len) == 0)
            return by_len[len][i];
    return F_OTHER;
}

/* Marks the event unusable for the first reason found, and reads on: one odd
 * event costs itself, never the trace. Returns 1 (go on). */
__attribute__((format(printf, 2, 3))) static int event_bad(nx_chrome_reader *r, const char *fmt, ...)
{
    if (r->ev.bad)
        return 1;
    r->ev.bad = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->ev.why, sizeof r->ev.why, fmt, ap);
    va_end(ap);
    return 1;
}

static int wrong_type(nx_chrome_reader *r, field f, const char *want, tok_kind k)
{
    return event_bad(r, "\"%s\" must be %s, found %s", field_names[f], want, tok_names[k]);
}

/* True when s[0..len) is a JSON number's text (RFC 8259 grammar), as some
 * writers put "ts" in a string. */
static bool is_number_text(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && s[i] == '-')
        i++;
    if (i >= len || s[i] < '0' || s[i] > '9')
        return false;
    if (s[i] == '0')
        i++;
    else
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
    if (i < len && s[i] == '.') {
        size_t d = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    return i == len;
}

static int set_string(nx_chrome_reader *r, stored *dst, const char *s, size_t len)
{
    return store_string(r, dst, s, len) ? 1 : out_of_memory(r);
}

/* ts and dur: microseconds as written (a number, or a string holding one),
 * kept as nanoseconds. A time beyond int64 ns is one damaged event, not a
 * damaged file: it is delivered with time_overflow set, and the caller drops
 * it (a Warning). */
static int set_time(nx_chrome_reader *r, field f, tok_kind k, const char *s, size_t len, bool *has, int64_t *ns,
                    bool *over)
{
    if (k == T_STRING && !is_number_text(s, len))
        return event_bad(r, "\"%s\" \"%.*s\" is not a number", field_names[f], (int)(len > 32 ? 32 : len), s);
    if (k != T_NUMBER && k != T_STRING)
        return wrong_type(r, f, "a number", k);
    bool inexact;
    *over = !decimal_to_int64(s, len, 3, ns, &inexact);
    if (*over)
        *ns = 0;
    *has = true;
    return 1;
}

static int set_ref(nx_chrome_reader *r, field f, tok_kind k, const char *s, size_t len, ref_slot *slot)
{
    if (k == T_STRING) {
        slot->kind = NX_CHROME_REF_STRING;
        return set_string(r, &slot->str, s, len);
    }
    if (k != T_NUMBER)
        return wrong_type(r, f, "a number or a string", k);
    bool inexact;
    if (!decimal_to_int64(s, len, 0, &slot->num, &inexact) || inexact) {
        /* Kineto writes ids above INT64_MAX: kept as the number's text. */
        slot->kind = NX_CHROME_REF_STRING;
        return set_string(r, &slot->str, s, len);
    }
    slot->kind = NX_CHROME_REF_NUMBER;
    return 1;
}

/* The value of the event key r->field. */
static int field_value(nx_chrome_reader *r, tok_kind k, const char *s, size_t len, int b)
{
    field f = r->field;
    event_state *e = &r->ev;
    if (f == F_OTHER) {
        if (k != T_START_MAP && k != T_START_ARRAY)
            return 1;
        cap_begin(r, CAP_SKIP, NULL, 0);
        return cap_token(r, k, s, len, b);
    }
    if (k == T_NULL) {
        /* null stands for absent, also undoing an earlier repeat of the key */
        stored none = {false, 0, 0};
        ref_slot no_ref = {NX_CHROME_REF_ABSENT, 0, none};
        switch (f) {
        case F_PH: e->ph = none; break;
        case F_NAME: e->name = none; break;
        case F_CAT: e->cat = none; break;
        case F_S: e->s = none; break;
        case F_BP: e->bp = none; break;
        case F_TS: e->has_ts = false; break;
        case F_DUR: e->has_dur = false; break;
        case F_PID: e->pid = no_ref; break;
        case F_TID: e->tid = no_ref; break;
        case F_ID: e->id = no_ref; break;
        case F_BIND_ID: e->bind_id = no_ref; break;
        case F_FLOW_IN: e->flow_in = false; break;
        case F_FLOW_OUT: e->flow_out = false; break;
        case F_ARGS: e->has_args = e->args_too_large = false; break;
        case F_OTHER: case F_COUNT: break;
        }
        return 1;
    }
    switch (f) {
    case F_PH:
        if (k != T_STRING)
            return wrong_type(r, f, "a one-character string", k);
        if (len != 1)
            return event_bad(r, "\"ph\" must be one character, found \"%.*s\"", (int)(len > 16 ? 16 : len), s);
        return set_string(r, &e->ph, s, len);
    case F_NAME:
    case F_CAT:
    case F_S:
    case F_BP:
        if (k != T_STRING)
            return wrong_type(r, f, "a string", k);
        return set_string(r, f == F_NAME ? &e->name : f == F_CAT ? &e->cat : f == F_S ? &e->s : &e->bp, s, len);
    case F_TS:
        return set_time(r, f, k, s, len, &e->has_ts, &e->ts, &e->ts_over);
    case F_DUR:
        return set_time(r, f, k, s, len, &e->has_dur, &e->dur, &e->dur_over);
    case F_PID:
        return set_ref(r, f, k, s, len, &e->pid);
    case F_TID:
        return set_ref(r, f, k, s, len, &e->tid);
    case F_ID:
        return set_ref(r, f, k, s, len, &e->id);
    case F_BIND_ID:
        return set_ref(r, f, k, s, len, &e->bind_id);
    case F_FLOW_IN:
    case F_FLOW_OUT:
        if (k != T_BOOL)
            return wrong_type(r, f, "a boolean", k);
        *(f == F_FLOW_IN ? &e->flow_in : &e->flow_out) = b != 0;
        return 1;
    case F_ARGS:
        cap_begin(r, CAP_ARGS, &r->args, r->max_args);
        return cap_token(r, k, s, len, b);
    case F_OTHER:
    case F_COUNT:
        break;
    }
    return 1;   /* F_OTHER was handled above; F_COUNT is not a field */
}

static void event_begin(nx_chrome_reader *r)
{
    r->ev = (event_state){.offset = cur_offset(r) - 1};
    sb_reset(&r->strs);
    r->index++;
    r->in_event = true;
}

/* An element of traceEvents that cannot be used: to the skipped callback. */
static int skipped(nx_chrome_reader *r, uint64_t index, uint64_t offset, char ph, const char *why)
{
    if (!r->h->skipped)
        return 1;
    nx_chrome_skipped sk = {.index = index, .offset = offset, .ph = ph, .reason = why};
    r->stop = r->h->skipped(r->h->ctx, &sk);
    return r->stop == 0;
}

/* The event's '}': check it and deliver it. */
static int event_end(nx_chrome_reader *r)
{
    event_state *e = &r->ev;
    char ph = e->ph.present ? r->strs.data[e->ph.off] : '\0';
    if (!e->ph.present)
        event_bad(r, "the event has no \"ph\"");
    else if (!e->has_ts && ph != 'M')
        event_bad(r, "the '%c' event has no \"ts\"", ph);
    r->in_event = false;
    if (e->bad)
        return skipped(r, r->index - 1, e->offset, ph, e->why);
    if (!r->h->event)
        return 1;
    bool args_ok = e->has_args && !e->args_too_large;
    nx_chrome_event out = {
        .index = r->index - 1,
        .offset = e->offset,
        .ph = ph,
        .name = text_of(r, &e->name),
        .cat = text_of(r, &e->cat),
        .has_ts = e->has_ts,
        .ts_ns = e->has_ts ? e->ts : 0,
        .has_dur = e->has_dur,
        .dur_ns = e->has_dur ? e->dur : 0,
        .time_overflow = (e->has_ts && e->ts_over) || (e->has_dur && e->dur_over),
        .pid = ref_of(r, &e->pid),
        .tid = ref_of(r, &e->tid),
        .id = ref_of(r, &e->id),
        .bind_id = ref_of(r, &e->bind_id),
        .s = text_of(r, &e->s),
        .bp = text_of(r, &e->bp),
        .flow_in = e->flow_in,
        .flow_out = e->flow_out,
        .args = {args_ok ? r->args.data : NULL, args_ok ? r->args.len : 0},
        .args_too_large = e->args_too_large,
    };
    r->stop = r->h->event(r->h->ctx, &out);
    return r->stop == 0;
}

/* ---- the document state machine ------------------------------------------- */

/* An element of traceEvents that is not an object: skipped (an array with
 * everything in it), and said to the skipped callback. */
static int not_an_object(nx_chrome_reader *r, tok_kind k, const char *s, size_t len, int b)
{
    char why[64];
    snprintf(why, sizeof why, "the element is %s, not an object", tok_names[k]);
    uint64_t index = r->index++;
    if (!skipped(r, index, cur_offset(r) - (k == T_START_ARRAY), 0, why))
        return 0;
    if (k != T_START_ARRAY)
        return 1;
    cap_begin(r, CAP_SKIP, NULL, 0);
    return cap_token(r, k, s, len, b);
}

static int on_token(nx_chrome_reader *r, tok_kind k, const char *s, size_t len, int b)
{
    if (r->cap.active)
        return cap_token(r, k, s, len, b);

    switch (r->where) {
    case W_START:
        if (k == T_START_MAP) {
            r->where = W_TOP;
            return 1;
        }
        if (k == T_START_ARRAY) {
            r->bare_array = true;
            r->where = W_EVENTS;
            return 1;
        }
        return fail(r, "a Chrome trace is a JSON object or array, found %s", tok_names[k]);
    case W_TOP:
        if (k == T_END_MAP) {
            if (!r->seen_events)
                return fail(r, "the top-level object has no \"traceEvents\"");
            r->where = W_END;
            return 1;
        }
        if (len == 11 && memcmp(s, "traceEvents", 11) == 0) {
            if (r->seen_events)
                return fail(r, "\"traceEvents\" appears twice");
            r->seen_events = true;
            r->where = W_TOP_EVENTS;
            return 1;
        }
        if (!r->h->toplevel) {
            cap_begin(r, CAP_TOPLEVEL, NULL, 0);
            return 1;
        }
        sb_reset(&r->top_key);
        nx_strbuf_append(&r->top_key, s, len);
        if (nx_strbuf_failed(&r->top_key))
            return out_of_memory(r);
        cap_begin(r, CAP_TOPLEVEL, &r->top_json, r->max_toplevel);
        return 1;
    case W_TOP_EVENTS:
        if (k != T_START_ARRAY)
            return fail(r, "\"traceEvents\" must be an array, found %s", tok_names[k]);
        r->where = W_EVENTS;
        return 1;
    case W_EVENTS:
        if (k == T_END_ARRAY) {
            r->where = r->bare_array ? W_END : W_TOP;
            return 1;
        }
        if (k != T_START_MAP)
            return not_an_object(r, k, s, len, b);
        event_begin(r);
        r->where = W_EVENT;
        return 1;
    case W_EVENT:
        if (k == T_END_MAP) {
            r->where = W_EVENTS;
            return event_end(r);
        }
        r->field = lookup_field(s, len);
        r->where = W_FIELD;
        return 1;
    case W_FIELD:
        r->where = W_EVENT;
        return field_value(r, k, s, len, b);
    case W_END:
        break;
    }
    /* the tokenizer rejects anything after the top-level value */
    return fail(r, "unexpected %s after the end of the trace", tok_names[k]);
}

/* ---- public API --------------------------------------------------------------- */

nx_chrome_reader *nx_chrome_open(const char *path, const nx_chrome_options *opts, nx_error *err)
{
    nx_chrome_options o = opts ? *opts : (nx_chrome_options){0};
    nx_chrome_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
        return NULL;
    }
    /* The tokenizer's buffer grows with a long token; 1 GiB bounds the first. */
    r->chunk_size = o.chunk_size == 0 ? 64 * 1024 : o.chunk_size > (1u << 30) ? (1u << 30) : o.chunk_size;
    r->max_args = o.max_args_bytes ? o.max_args_bytes : 64 * 1024;
    r->max_toplevel = o.max_toplevel_bytes ? o.max_toplevel_bytes : 4 * 1024 * 1024;
    r->path = strdup(path);
    if (!r->path) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
        nx_chrome_close(r);
        return NULL;
    }
    nx_error why = {0};
    r->src = nx_gzip_input_open(path, &why);
    if (!r->src) {
        nx_error_at(err, path, NULL, NULL, NX_ERROR_NOWHERE, "%s", why.msg);
        nx_chrome_close(r);
        return NULL;
    }
    return r;
}

/* Fills dst (up to cap bytes) from the file, fewer only at its end: the
 * count, or -1 with why filled. The read-ahead hands over at most one block
 * at a time, so this loops; a stop request (SIGINT/SIGTERM) is checked once
 * per block at most. */
static long read_text(void *ctx, char *dst, size_t cap, nx_error *why)
{
    nx_chrome_reader *r = ctx;
    size_t got = 0;
    while (got < cap) {
        int stopped = nx_run_stopped();
        if (stopped) {
            nx_run_stopped_message(stopped, why);
            return -1;
        }
        long n = nx_readahead_read(r->ahead, dst + got, cap - got, why);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

/* The tokenizer failed: a read error (no JSON offset) or a syntax error. */
static int scan_failed(nx_chrome_reader *r)
{
    if (r->scan.read_failed) {
        snprintf(r->err->msg, sizeof r->err->msg, "%s: %s", r->path, r->scan.err);
        return -1;
    }
    fail_at(r, r->scan.err_offset, "%s", r->scan.err);
    return -1;
}

/* The event's args through the tokenizer's compact copy (json_scan.h), which
 * gives the text cap_token() would build: true when it took them. */
static bool copy_args(nx_chrome_reader *r)
{
    sb_reset(&r->args);
    if (!nx_json_scan_copy_value(&r->scan, &r->args, r->max_args, &r->tok_end))
        return false;
    r->ev.has_args = true;
    r->ev.args_too_large = false;
    r->where = W_EVENT;
    return true;
}

static int read_all(nx_chrome_reader *r)
{
    /* A UTF-8 byte-order mark (EF BB BF) opening the text is not JSON; some
     * Windows tools write one. It is passed over; offsets still count it. */
    nx_json_scan_skip_prefix(&r->scan, "\xef\xbb\xbf", 3);
    nx_json_token t;
    for (;;) {
        if (r->where == W_FIELD && r->field == F_ARGS && copy_args(r))
            continue;
        nx_json_kind k = nx_json_scan_next(&r->scan, &t);
        if (k == NX_JSON_FAIL)
            return scan_failed(r);
        r->tok_end = t.end;
        if (k == NX_JSON_EOF)
            break;
        r->plain = t.plain;
        if (!on_token(r, k, t.s, t.len, t.b))
            return r->failed ? -1 : r->stop;
    }
    /* Partial values are allowed only so that a bare array may lack its ']'
     * (the format permits it) when the input stops between two events. */
    if (r->where == W_END || (r->bare_array && r->where == W_EVENTS && !r->cap.active))
        return 0;
    if (r->where == W_START)
        fail(r, "empty file: no JSON value");
    else
        fail(r, "the trace is truncated: the JSON text ends inside %s",
             r->in_event ? "an event" : r->where == W_EVENTS ? "traceEvents" : "the top-level object");
    return -1;
}

int nx_chrome_read(nx_chrome_reader *r, const nx_chrome_handlers *h, nx_error *err)
{
    if (r->used) {
        snprintf(err->msg, sizeof err->msg, "%s: the trace was already read", r->path);
        return -1;
    }
    r->used = true;
    r->h = h;
    r->err = err;
    if (nx_json_scan_init(&r->scan, r->chunk_size, MAX_DEPTH, read_text, r) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->path);
        return -1;
    }
    r->scan_ready = true;
    nx_error why = {0};
    r->ahead = nx_readahead_start(r->src, READ_AHEAD_BLOCK, READ_AHEAD_BLOCKS, &why);
    if (!r->ahead) {
        nx_error_at(err, r->path, NULL, NULL, NX_ERROR_NOWHERE, "%s", why.msg);
        return -1;
    }
    return read_all(r);
}

bool nx_chrome_is_bare_array(const nx_chrome_reader *r)
{
    return r->bare_array;
}

void nx_chrome_close(nx_chrome_reader *r)
{
    if (!r)
        return;
    if (r->scan_ready)
        nx_json_scan_free(&r->scan);
    nx_readahead_stop(r->ahead);   /* before src, which its thread reads */
    nx_gzip_input_close(r->src);
    nx_strbuf_free(&r->strs);
    nx_strbuf_free(&r->args);
    nx_strbuf_free(&r->top_key);
    nx_strbuf_free(&r->top_json);
    free(r->path);
    free(r);
}

/* ------------------------------------------------------- framework source -- */

static int read_chrome_json(const char *path, const nx_chrome_handlers *h, nx_error *err)
{
    nx_chrome_reader *r = nx_chrome_open(path, NULL, err);
    if (!r)
        return -1;
    int rc = nx_chrome_read(r, h, err);
    nx_chrome_close(r);
    return rc;
}

static const char *const chrome_suffixes[] = {".json", ".json.gz", NULL};

const nx_framework_source nx_source_chrome_json = {
    .name = "Chrome JSON",
    .suffixes = chrome_suffixes,
    .read = read_chrome_json,
};
