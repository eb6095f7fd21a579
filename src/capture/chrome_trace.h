/*
 * chrome_trace.h — a streaming reader for trace.json files in the Chrome Trace
 * Event format, as the PyTorch (Kineto) and JAX profilers write them. The
 * system-profile pipeline turns their events into framework events.
 *
 * Input: `.json` or `.json.gz` (util/gzip_input reads both, by the content, so
 * the name does not matter; bytes after a gzip member that start no other
 * member are an error), in either of the format's two forms:
 *   {"traceEvents": [ {...}, ... ], "schemaVersion": 1, ...}   object form
 *   [ {...}, {...}, ... ]                                       bare-array form
 * In the bare-array form the closing ']' may be missing (the format allows it,
 * so that a crashed process still leaves a readable trace); the input must
 * then end between two events. Any other truncation is an error.
 *
 * Streaming: the file is decompressed in chunks into the tokenizer's buffer
 * (util/json_scan.h, a pull scanner written for trace files); each event is
 * assembled from the tokens of its own object and handed to a callback, then
 * forgotten. Memory is bounded by the largest single token and event (and by
 * the caps on "args" and top-level values below), never by the file size: no
 * document tree is built. Numbers reach the reader as their source text, which
 * is what lets "ts" be converted to nanoseconds exactly. docs/architecture.md
 * ("The JSON layer") says why this tokenizer and not a library.
 *
 * Events are delivered in file order, one call per element of traceEvents,
 * whatever the phase. In particular:
 *   - B and E events are delivered separately, as they come; pairing them
 *     (per pid/tid, as a stack) is the processor's job, not the reader's.
 *   - M (metadata: process_name, thread_name, ...) events are delivered too;
 *     their payload is in args. They alone may lack "ts" (has_ts false).
 *   - C (counter) events carry their series in args.
 *   - Phases the reader does not know (flow s/t/f, async b/e/n, ...) are passed
 *     through unchanged: ph is any single character.
 *   - Events are not sorted by ts; Chrome traces are not in time order.
 *
 * Fields read from each event (all others, e.g. "tts", "cname", "id2", are
 * skipped): ph, name, cat, ts, dur, pid, tid, id, bind_id, s, bp, flow_in,
 * flow_out, args. A key given the JSON value null counts as absent. Repeated
 * keys: the last one wins, as with JSON.parse. Accepted as real tools write
 * them: "ts"/"dur" as a number or as a string holding a JSON number
 * ("12.5"); a numeric pid/tid/id/bind_id that is not an int64 integer (Kineto
 * writes ids above INT64_MAX) is delivered as a string reference holding the
 * number's text; strings that are not valid UTF-8 are delivered with each
 * offending byte replaced by U+FFFD (util/json.h), in names and in args alike.
 *
 * Skipped elements: one odd element never refuses the trace. An element that
 * is not an object, an event without "ph" (e.g. the empty {} JAX writes last),
 * with a "ph" that is not a one-character string, without "ts" (except M), with
 * a "ts"/"dur" string that is not a number, or with a known key holding a value
 * of the wrong JSON type, is not delivered as an event: the skipped callback
 * gets its index, offset and the first reason found, and reading goes on.
 *
 * Fatal (the document itself is broken): any JSON syntax error; JSON nested
 * more than 1000 levels deep; a top-level value that is neither an object nor
 * an array; a top-level object without exactly one "traceEvents" array;
 * truncation (below). A ts or dur beyond ±2^63 ns is not an error but sets the
 * event's time_overflow, so one damaged event spoils only itself.
 *
 * Times: "ts" and "dur" are microseconds, written as decimals with fractions
 * ("1712195495519695.812"). They are converted from their digits to int64
 * nanoseconds without floating point (a double cannot hold that example), and
 * rounded to the nearest nanosecond, halves away from zero, when there are
 * more than three fractional digits. The top-level "displayTimeUnit" ("ns" or
 * "ms") changes only how viewers label the axis, never the unit of ts, so it
 * is not applied here (it reaches the toplevel callback like any other key).
 *
 * Errors: functions that can fail return -1 or NULL and fill an nx_error
 * whose message names the file, the byte offset in the JSON text (after gzip
 * decompression) and, inside traceEvents, the event's index. The offset points
 * just past the offending byte.
 * gzip errors (corrupt or truncated stream, junk after a member) name the
 * offset in the compressed file instead. Events before an error have been delivered already. Nothing
 * here prints or exits.
 *
 * Threads: a reader is used by one thread; distinct readers are independent.
 */
#ifndef NX_CHROME_TRACE_H
#define NX_CHROME_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"


/* A string from the trace: s is NUL-terminated (len excludes the NUL; a
 * "\u0000" escape makes strlen(s) < len) or NULL when the key is absent. */
typedef struct nx_chrome_text {
    const char *s;
    size_t len;
} nx_chrome_text;

/* pid, tid, id and bind_id are numbers in most traces but strings in some
 * (Kineto writes "pid": "Spans", flow ids may be "0x1f"); both forms are kept
 * as written. */
typedef enum nx_chrome_ref_kind {
    NX_CHROME_REF_ABSENT = 0,
    NX_CHROME_REF_NUMBER,      /* num holds the value */
    NX_CHROME_REF_STRING       /* str holds the value */
} nx_chrome_ref_kind;

typedef struct nx_chrome_ref {
    nx_chrome_ref_kind kind;
    int64_t num;
    nx_chrome_text str;
} nx_chrome_ref;

/* One element of traceEvents. Every pointer in it is valid only during the
 * callback that receives it: copy what you keep. */
typedef struct nx_chrome_event {
    uint64_t index;        /* position in traceEvents, from 0 */
    uint64_t offset;       /* byte offset of the event's '{' in the JSON text */
    char ph;               /* phase: 'X','B','E','i','I','C','M', or any other */
    nx_chrome_text name;   /* s NULL when absent (E events often omit it) */
    nx_chrome_text cat;
    bool has_ts;           /* false only for M events without "ts" */
    int64_t ts_ns;
    bool has_dur;          /* "dur": X events; present on others is passed on */
    int64_t dur_ns;
    bool time_overflow;    /* "ts" or "dur" beyond the int64 ns range: that value is 0 */
    nx_chrome_ref pid, tid;
    nx_chrome_ref id, bind_id;   /* flow and async ids, when present */
    nx_chrome_text s;      /* instant-event scope: "g", "p" or "t" */
    nx_chrome_text bp;     /* flow binding point: "e" for enclosing slice */
    bool flow_in, flow_out;
    /* "args" re-serialised as compact JSON (numbers keep their source text,
     * strings are re-escaped); s NULL when absent or when it exceeded
     * max_args_bytes, which args_too_large tells apart. */
    nx_chrome_text args;
    bool args_too_large;
} nx_chrome_event;

/* A top-level key of the object form other than traceEvents ("schemaVersion",
 * "deviceProperties", "distributedInfo", "traceName", ...), with its value
 * re-serialised as compact JSON; json.s NULL and too_large true when the value
 * exceeded max_toplevel_bytes. Valid only during the callback. */
typedef struct nx_chrome_toplevel {
    nx_chrome_text key;
    nx_chrome_text json;
    bool too_large;
} nx_chrome_toplevel;

/* An element of traceEvents that cannot be used as an event (see "Skipped
 * elements" above). Valid only during the callback. */
typedef struct nx_chrome_skipped {
    uint64_t index;        /* position in traceEvents, from 0 */
    uint64_t offset;       /* byte offset of the element in the JSON text */
    char ph;               /* its phase when it had a usable one, else '\0' */
    const char *reason;    /* e.g. "the event has no \"ph\"" */
    const char *category;  /* NULL: the element is unusable ("Invalid Data"); else the
                              Warning category of an event the source leaves out on
                              purpose (the XSpace reader: "Not Stored") */
} nx_chrome_skipped;

/* Callbacks return 0 to go on, or a positive value to stop reading, which
 * nx_chrome_read() then returns as is. Any may be NULL: a NULL toplevel
 * callback means top-level values are skipped without being buffered; a NULL
 * skipped callback means unusable elements are passed over unsaid. */
typedef struct nx_chrome_handlers {
    int (*event)(void *ctx, const nx_chrome_event *ev);
    int (*toplevel)(void *ctx, const nx_chrome_toplevel *tl);
    void *ctx;
    int (*skipped)(void *ctx, const nx_chrome_skipped *sk);
} nx_chrome_handlers;

typedef struct nx_chrome_options {
    size_t chunk_size;          /* the tokenizer's first buffer; 0 means 64 KiB, at most 1 GiB
                                   (it doubles while one token outgrows it: time stays linear) */
    size_t max_args_bytes;      /* cap on one event's args text; 0 means 64 KiB */
    size_t max_toplevel_bytes;  /* cap on one top-level value; 0 means 4 MiB */
} nx_chrome_options;

typedef struct nx_chrome_reader nx_chrome_reader;

/* Opens `path` (plain or gzip'd JSON). opts may be NULL for the defaults.
 * Returns NULL and fills *err when the file cannot be opened. */
nx_chrome_reader *nx_chrome_open(const char *path, const nx_chrome_options *opts, nx_error *err);

/* Reads the whole file, calling h's callbacks in file order. Call once per
 * reader. Returns 0 at the end of a valid trace, -1 with *err filled on any
 * error (after which no more callbacks come), or a callback's stop value. */
int nx_chrome_read(nx_chrome_reader *r, const nx_chrome_handlers *h, nx_error *err);

/* True once nx_chrome_read() has seen a bare-array trace. */
bool nx_chrome_is_bare_array(const nx_chrome_reader *r);

void nx_chrome_close(nx_chrome_reader *r);

#endif
