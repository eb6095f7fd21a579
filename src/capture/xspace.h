/*
 * xspace.h — a reader of XSpace protobuf files (`*.xplane.pb`), the profile that
 * `jax.profiler.trace` and TensorFlow's profiler write (message layout:
 * docs/capture-format.md "XSpace"). It delivers the same events
 * (chrome_event.h), through the same callback, as the Chrome trace reader
 * (chrome_trace.h) gives for the trace JSON that JAX derives from the same
 * XSpace, so the system pipeline consumes either source unchanged.
 *
 * Reading: the file is mapped (util/file_map.h) and walked with a strict
 * protobuf wire-format cursor (util/pb_wire.h); no message tree is built. Per
 * plane, the event and stat metadata maps are held (their names copied, sized
 * by the plane), then events are decoded and delivered one at a time.
 *
 * What is delivered, plane by plane, for each plane with at least one line:
 *   - one 'M' event "process_name", args {"name": plane name}; pid = the
 *     plane's index in XSpace.planes (from 0);
 *   - one 'M' event "thread_name" per line, args {"name": display_name, else
 *     name}; tid = display_id, else id, cut to its low 32 bits (as JAX's JSON);
 *   - then one 'X' event per XEvent of its lines, in file order: name = the
 *     event metadata's display_name, else its name; ts_ns = line.timestamp_ns
 *     + offset_ps / 1000 and dur_ns = duration_ps / 1000, each rounded to the
 *     nearest nanosecond, halves away from zero; args = a JSON object of
 *     strings, keys in byte order: "long_name" (the metadata's name, when a
 *     display_name is shown), then the metadata's stats, then the event's (a
 *     later stat of one name replaces an earlier one). Values as JAX's JSON
 *     writes them: int64/uint64 in decimal, double as printf "%.6g",
 *     str_value as is, ref_value the referenced stat metadata's name,
 *     bytes_value in lower-case hex, an unset value "".
 * Left out, as JAX's JSON leaves them out (and counted in nx_xspace_counts):
 * events whose metadata name is one of the profiler's internal ones
 * (MemoryAllocation, MemoryDeallocation, the tf.data producer/consumer
 * markers), and events with num_occurrences instead of offset_ps (aggregates
 * without a time). The internal stats (_pt, _p, _ct, _c, _r, program_id,
 * symbol_id, flops, bytes_accessed) are left out of args. Times are passed
 * through as the file has them: JAX writes line timestamps relative to the
 * profile start, as its JSON shows them.
 *
 * Validation (each an error): any wire-format fault (pb_wire.h); a known field
 * with the wrong wire type; a string field that is not UTF-8; an event or stat
 * whose metadata id is not in its plane's maps; a negative duration; a time
 * beyond ±2^63 ns. Unknown fields are skipped. Errors fill an nx_error:
 *   "<file>: byte <offset>: XSpace.planes[2].lines[0].events[17]: <what>"
 * Events before an error have been delivered already. Nothing prints or exits.
 */
#ifndef NX_XSPACE_H
#define NX_XSPACE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/chrome_event.h"
#include "util/error.h"

typedef struct nx_xspace_options {
    size_t max_args_bytes;   /* cap on one event's args text; 0 means 64 KiB
                                (past it: args.s NULL, args_too_large true; so is an
                                event with more stats than this, counting its
                                metadata's: reading stops there) */
} nx_xspace_options;

typedef struct nx_xspace_counts {
    uint64_t planes, lines;       /* all of them, with or without events */
    uint64_t events;              /* X events delivered */
    uint64_t internal_events;     /* left out: the profiler's internal events */
    uint64_t aggregated_events;   /* left out: num_occurrences, no time */
    uint64_t hostnames;           /* XSpace.hostnames entries */
} nx_xspace_counts;

/* Reads the XSpace file at path (a regular file) and delivers its events to
 * h->event, and the first of XSpace.hostnames to h->toplevel as the member
 * "hostname" (its JSON string), as a Chrome trace's top-level "hostname" would
 * come (the processor's rank per host). opts and counts may be NULL. Returns
 * 0, -1 with *err filled, or the callback's stop value. */
int nx_xspace_read_file(const char *path, const nx_xspace_options *opts, const nx_chrome_handlers *h,
                        nx_xspace_counts *counts, nx_error *err);

/* The same over size bytes in memory; name is what errors call the input. */
int nx_xspace_read_bytes(const char *name, const void *data, size_t size, const nx_xspace_options *opts,
                         const nx_chrome_handlers *h, nx_xspace_counts *counts, nx_error *err);

#endif
