/*
 * chrome_trace.h — a streaming reader for trace.json files in the Chrome Trace
 * Event format, as the PyTorch (Kineto) and JAX profilers write them. The
 * system-profile pipeline turns their events (chrome_event.h) into framework
 * events.
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

#include "capture/chrome_event.h"
#include "util/error.h"

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
