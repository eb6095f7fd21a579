/*
 * chrome_trace.c — see chrome_trace.h.
 *
 * yajl calls back once per JSON token. Every callback funnels into on_token(),
 * a state machine over where we are in the document (before the top-level
 * value, in the top-level object, in traceEvents, in one event, ...). Values
 * that are kept as JSON text ("args", top-level values) or skipped (unknown
 * keys holding objects or arrays) are handed to a small "capture" sub-machine
 * that re-serialises tokens compactly, or merely tracks nesting when skipping,
 * until the value is complete.
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
#include <yajl/yajl_parse.h>

#include "util/gzip_input.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/run_control.h"

/* yajl's own stack grows without limit; this keeps a hostile "[[[[..." from
 * growing it (and our depth counter) with the file. */
#define MAX_DEPTH 1000

typedef enum tok_kind {
    T_NULL, T_BOOL, T_NUMBER, T_STRING, T_START_MAP, T_KEY, T_END_MAP, T_START_ARRAY, T_END_ARRAY
} tok_kind;

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
    unsigned char *buf;
    size_t chunk_size, max_args, max_toplevel;
    size_t buf_size;      /* bytes of buf: chunk_size, more while a token outgrows it */
    uint64_t tokens;      /* tokens seen so far (to tell a chunk that ends none) */
    bool used;            /* nx_chrome_read() runs once */
    unsigned bom;         /* bytes of a leading UTF-8 BOM matched; 4 once past the start */
    bool bare_array;

    /* parsing */
    yajl_handle yh;
    const nx_chrome_handlers *h;
    nx_chrome_error *err;
    int stop;             /* a callback's stop value, or 0 */
    bool failed;          /* err is filled */
    bool finishing;       /* inside yajl_complete_parse: offsets are the end */
    uint64_t chunk_start; /* JSON-text offset of the chunk being parsed */
    uint64_t total;       /* JSON-text bytes read so far */
    where where;
    unsigned depth;
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
    if (r->finishing)
        return r->total;
    return r->chunk_start + yajl_get_bytes_consumed(r->yh);
}

/* Fills err with "<path>: byte <off>[: event #<i>]: <message>" and returns 0,
 * yajl's "cancel" value, so callers can `return fail_at(...)`. */
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

static void sb_reset(nx_strbuf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* ---- numbers ---------------------------------------------------------- */

/*
 * Converts JSON number text (already validated by yajl: -?int(.frac)?(e[+-]?exp)?)
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
    nx_json_put_utf8(&r->strs, s, len);   /* yajl does not validate UTF-8: repaired here */
    size_t kept = r->strs.len - off;
    nx_strbuf_putc(&r->strs, '\0');
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
    nx_strbuf_append(c->out, s, n);
}

/* A JSON string literal for s[0..n) (util/json.h's escaping). */
static void cap_put_string(capture *c, const char *s, size_t n)
{
    if (!c->out || c->too_large)
        return;
    size_t before = c->out->len;
    if (n + 2 > c->limit - before) {   /* the literal is at least that long */
        c->too_large = true;
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
 * complete. Returns yajl's continue (1) or cancel (0). */
static int cap_token(nx_chrome_reader *r, tok_kind k, const char *s, size_t len, int b)
{
    capture *c = &r->cap;
    switch (k) {
    case T_KEY:
        if (c->need_comma)
            cap_put(c, ",", 1);
        cap_put_string(c, s, len);
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
        cap_put_string(c, s, len);
        break;
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

static field lookup_field(const char *s, size_t len)
{
    for (int f = F_OTHER + 1; f < F_COUNT; f++)
        if (strlen(field_names[f]) == len && memcmp(field_names[f], s, len) == 0)
            return (field)f;
    return F_OTHER;
}

/* Marks the event unusable for the first reason found, and reads on: one odd
 * event costs itself, never the trace. Returns yajl's continue. */
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
    r->tokens++;
    if (k == T_START_MAP || k == T_START_ARRAY) {
        if (++r->depth > MAX_DEPTH)
            return fail(r, "JSON nested deeper than %d levels", MAX_DEPTH);
    } else if (k == T_END_MAP || k == T_END_ARRAY) {
        r->depth--;
    }
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
    /* yajl rejects anything after the top-level value before calling back. */
    return fail(r, "unexpected %s after the end of the trace", tok_names[k]);
}

static int cb_null(void *ctx) { return on_token(ctx, T_NULL, NULL, 0, 0); }
static int cb_bool(void *ctx, int b) { return on_token(ctx, T_BOOL, NULL, 0, b); }
static int cb_number(void *ctx, const char *s, size_t len) { return on_token(ctx, T_NUMBER, s, len, 0); }
static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    return on_token(ctx, T_STRING, (const char *)s, len, 0);
}
static int cb_start_map(void *ctx) { return on_token(ctx, T_START_MAP, NULL, 0, 0); }
static int cb_key(void *ctx, const unsigned char *s, size_t len)
{
    return on_token(ctx, T_KEY, (const char *)s, len, 0);
}
static int cb_end_map(void *ctx) { return on_token(ctx, T_END_MAP, NULL, 0, 0); }
static int cb_start_array(void *ctx) { return on_token(ctx, T_START_ARRAY, NULL, 0, 0); }
static int cb_end_array(void *ctx) { return on_token(ctx, T_END_ARRAY, NULL, 0, 0); }

/* yajl_number set means yajl_integer and yajl_double are never called. */
static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_key, cb_end_map, cb_start_array, cb_end_array,
};

/* ---- public API --------------------------------------------------------------- */

nx_chrome_reader *nx_chrome_open(const char *path, const nx_chrome_options *opts, nx_chrome_error *err)
{
    nx_chrome_options o = opts ? *opts : (nx_chrome_options){0};
    nx_chrome_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
        return NULL;
    }
    /* Reads grow with a long token (next_read_size); 1 GiB bounds one. */
    r->chunk_size = o.chunk_size == 0 ? 64 * 1024 : o.chunk_size > (1u << 30) ? (1u << 30) : o.chunk_size;
    r->max_args = o.max_args_bytes ? o.max_args_bytes : 64 * 1024;
    r->max_toplevel = o.max_toplevel_bytes ? o.max_toplevel_bytes : 4 * 1024 * 1024;
    r->path = strdup(path);
    r->buf = malloc(r->chunk_size);
    r->buf_size = r->chunk_size;
    if (!r->path || !r->buf) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", path);
        nx_chrome_close(r);
        return NULL;
    }
    char why[200];
    r->src = nx_gzip_input_open(path, why, sizeof why);
    if (!r->src) {
        snprintf(err->msg, sizeof err->msg, "%s: %s", path, why);
        nx_chrome_close(r);
        return NULL;
    }
    return r;
}

/* A yajl status other than ok: our own error, a callback's stop, or yajl's. */
static int parse_fail(nx_chrome_reader *r, yajl_status st, const unsigned char *chunk, size_t n)
{
    if (st == yajl_status_client_canceled)
        return r->failed ? -1 : r->stop;
    unsigned char *m = yajl_get_error(r->yh, 0, chunk, n);
    if (!m) {
        fail(r, "invalid JSON");
        return -1;
    }
    /* yajl's message ends with a newline */
    m[strcspn((char *)m, "\n")] = '\0';
    fail(r, "invalid JSON: %s", (char *)m);
    yajl_free_error(r->yh, m);
    return -1;
}

/* Bytes to read next. yajl lexes a token that spans chunks again from its
 * first byte with every chunk, so a token of L bytes fed in fixed chunks costs
 * O(L^2): while chunks end no token, each read is twice the last (up to 1 GiB),
 * which keeps the cost O(L); the first chunk that ends a token returns to
 * chunk_size. 0, or -1 when out of memory. */
static int next_read_size(nx_chrome_reader *r, bool token_ended, size_t last, size_t *size)
{
    size_t want = token_ended || last >= (1u << 30) ? r->chunk_size : last * 2;
    if (want > r->buf_size) {
        unsigned char *b = realloc(r->buf, want);
        if (!b)
            return fail(r, "out of memory for a JSON token longer than %zu bytes", last);
        r->buf = b;
        r->buf_size = want;
    }
    *size = want;
    return 0;
}

/* Up to size bytes into r->buf, fewer only at the end of the input: the count,
 * or -1 with why filled. nx_gzip_input_read hands over at most what it holds
 * (128 KiB of a plain file), and a read grown for a long token must reach yajl
 * whole, or the token is lexed again every 128 KiB (next_read_size). */
static long read_chunk(nx_chrome_reader *r, size_t size, char *why, size_t why_size)
{
    size_t got = 0;
    while (got < size) {
        int stopped = nx_run_stopped();   /* SIGINT/SIGTERM: checked once a read of at most 128 KiB */
        if (stopped) {
            nx_run_stopped_message(stopped, why, why_size);
            return -1;
        }
        long n = nx_gzip_input_read(r->src, r->buf + got, size - got, why, why_size);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

/* A UTF-8 byte-order mark (EF BB BF) opening the text is not JSON; some
 * Windows tools write one. It is passed over (offsets still count it), even
 * split over reads. Returns how many bytes of buf[0..n) to pass over. A start
 * that turns out to be no BOM has the bytes matched in earlier reads fed to
 * yajl first (*st its answer), so it reports the text as it is. */
static size_t skip_bom(nx_chrome_reader *r, const unsigned char *buf, size_t n, yajl_status *st)
{
    static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
    size_t i = 0;
    *st = yajl_status_ok;
    while (r->bom < 3 && i < n && buf[i] == bom[r->bom])
        r->bom++, i++;
    if (r->bom == 3) {
        r->bom = 4;
        return i;
    }
    if (i == n)
        return i;   /* all of buf is a BOM's beginning: the next read tells */
    size_t earlier = r->bom - i;
    r->bom = 4;
    if (earlier > 0) {
        uint64_t start = r->chunk_start;
        r->chunk_start -= earlier;   /* they came before this read: offsets as one read gives */
        *st = yajl_parse(r->yh, bom, earlier);
        if (*st == yajl_status_ok)
            r->chunk_start = start;
    }
    return 0;
}

static int read_all(nx_chrome_reader *r)
{
    size_t size = r->chunk_size;
    for (;;) {
        char why[256];
        long n = read_chunk(r, size, why, sizeof why);
        if (n < 0) {
            snprintf(r->err->msg, sizeof r->err->msg, "%s: %s", r->path, why);
            return -1;
        }
        if (n == 0)
            break;
        r->chunk_start = r->total;
        r->total += (uint64_t)n;
        uint64_t tokens = r->tokens;
        size_t skip = 0;
        yajl_status st = yajl_status_ok;
        if (r->bom < 4) {
            skip = skip_bom(r, r->buf, (size_t)n, &st);
            if (st != yajl_status_ok)
                return parse_fail(r, st, NULL, 0);
            r->chunk_start += skip;
        }
        st = yajl_parse(r->yh, r->buf + skip, (size_t)n - skip);
        if (st != yajl_status_ok)
            return parse_fail(r, st, r->buf + skip, (size_t)n - skip);
        if (next_read_size(r, r->tokens != tokens, size, &size) != 0)
            return -1;
    }
    r->finishing = true;
    yajl_status st = yajl_complete_parse(r->yh);
    if (st != yajl_status_ok)
        return parse_fail(r, st, NULL, 0);
    /* Partial values are allowed only so that a bare array may lack its ']'
     * (the format permits it) when the input stops between two events. */
    if (r->where == W_END || (r->bare_array && r->where == W_EVENTS))
        return 0;
    if (r->where == W_START)
        fail(r, "empty file: no JSON value");
    else
        fail(r, "the trace is truncated: the JSON text ends inside %s",
             r->in_event ? "an event" : r->where == W_EVENTS ? "traceEvents" : "the top-level object");
    return -1;
}

int nx_chrome_read(nx_chrome_reader *r, const nx_chrome_handlers *h, nx_chrome_error *err)
{
    if (r->used) {
        snprintf(err->msg, sizeof err->msg, "%s: the trace was already read", r->path);
        return -1;
    }
    r->used = true;
    r->h = h;
    r->err = err;
    r->yh = yajl_alloc(&callbacks, NULL, r);
    if (!r->yh) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->path);
        return -1;
    }
    yajl_config(r->yh, yajl_allow_partial_values, 1);
    /* Invalid UTF-8 in a string is one odd name, not a broken file: strings
     * are repaired (U+FFFD) as they are kept, util/json.h. */
    yajl_config(r->yh, yajl_dont_validate_strings, 1);
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
    if (r->yh)
        yajl_free(r->yh);
    nx_gzip_input_close(r->src);
    nx_strbuf_free(&r->strs);
    nx_strbuf_free(&r->args);
    nx_strbuf_free(&r->top_key);
    nx_strbuf_free(&r->top_json);
    free(r->buf);
    free(r->path);
    free(r);
}

/* ------------------------------------------------------- framework source -- */

static int read_chrome_json(const char *path, const nx_chrome_handlers *h, nx_chrome_error *err)
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
