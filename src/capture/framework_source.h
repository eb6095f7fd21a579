/*
 * framework_source.h — the formats framework events are read from, behind one
 * small interface, and the registry that lists them (framework_sources.c), as
 * process/device/device_sinks.c lists the device tables: a new format is a new file
 * defining one nx_framework_source plus one line in the registry.
 *
 * A source is chosen by the file's name alone (capture discovery has nothing
 * else when it lists a directory): the first source with a suffix the name
 * ends with reads it. Every source delivers its events as nx_chrome_event
 * values through nx_chrome_handlers, in the Chrome Trace Event model
 * (chrome_event.h), so the processor turns every format into rows one way.
 *
 * Sources today:
 *   - Chrome JSON (chrome_trace.c): `*.json`, `*.json.gz` — the Chrome Trace
 *     Event format as PyTorch's Kineto writes it, and Perfetto's JSON traces
 *     (JAX's create_perfetto_trace=True), which are the same format; one
 *     entry serves both.
 *   - XSpace protobuf (xspace.c): `*.xplane.pb` — what jax.profiler.trace
 *     (and TensorFlow's profiler) write by default; events it leaves out (as
 *     JAX's JSON does) are reported through the skipped callback.
 */
#ifndef NX_FRAMEWORK_SOURCE_H
#define NX_FRAMEWORK_SOURCE_H

#include <stddef.h>

#include "capture/chrome_event.h"
#include "util/error.h"

typedef struct nx_framework_source {
    const char *name;                /* for messages: "Chrome JSON" */
    const char *const *suffixes;     /* file-name endings it reads, NULL-terminated */
    /* Reads the whole file, calling h's callbacks in file order. Returns 0 at
     * the end, -1 with *err naming the file (and offset) on a fatal error, or
     * a callback's stop value (as nx_chrome_read). */
    int (*read)(const char *path, const nx_chrome_handlers *h, nx_error *err);
} nx_framework_source;

extern const nx_framework_source *const nx_framework_sources[];
extern const size_t nx_framework_source_count;

/* The source that reads the file called `name` (a base name or a path), or
 * NULL when no source claims it. */
const nx_framework_source *nx_framework_source_for(const char *name);

/* The names every source reads, for messages ("*.json, *.json.gz"), into
 * buf[0..cap) (cut when it does not fit). */
void nx_framework_source_patterns(char *buf, size_t cap);

#endif
