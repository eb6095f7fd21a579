/*
 * event_runs.h — the external merge sort of SystemProfileEvents' framework
 * events: runs of events, each sorted by (start, seq), written to unnamed
 * temporary files, then merged into one stream in that order.
 *
 * Why: Chrome traces are not in time order, so their events must be sorted,
 * and a trace.json of billions of events does not fit in memory. The Chrome
 * reading side (system_tables.c) buffers events up to a memory budget, sorts
 * the buffer and writes it out as a run; the merge then holds one buffered
 * record per run.
 *
 * Files: each run is an O_TMPFILE file in the directory given (the profile's
 * temporary directory, on the output's file system), so nothing is ever left
 * behind, not even after a crash; where O_TMPFILE is not supported, a mkstemp
 * file unlinked at once. Record layout (native byte order, the file never
 * outlives the process): i64 start, end, pid, tid; u64 seq, offset; u32
 * session, file; u32 lengths of name, json, stream, flow (stream/flow: 0 = absent); then
 * those bytes, each followed by a NUL.
 *
 * Offsets: a run's times may still be relative to a value known only later
 * (a file's baseTimeNanoseconds, which Kineto writes after traceEvents):
 * nx_event_runs_offset() sets what the merge adds to every start and end of
 * that run (adding one constant keeps a run sorted). A sum beyond int64 stops
 * at the int64 limit (nx_event_time_shift): that time is outside every valid
 * range, so the caller drops the event with a Warning, as for any other time
 * out of range.
 *
 * Memory of the merge: one record plus a 64 KiB read buffer per run.
 */
#ifndef NX_PROCESS_EVENT_RUNS_H
#define NX_PROCESS_EVENT_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

typedef struct nx_event_record {
    int64_t start, end, pid, tid;
    uint64_t seq;                  /* arrival order over all Chrome files: the tie-break */
    uint64_t offset;               /* byte offset of the event in its file's JSON text */
    uint32_t session;
    uint32_t file;                 /* its Chrome file, numbered by the caller */
    const char *name, *json;       /* NUL-terminated */
    const char *stream, *flow;     /* NUL-terminated, or NULL when absent */
} nx_event_record;

typedef struct nx_event_runs nx_event_runs;

/* t + add, or the int64 limit it passed: a time shifted out of int64 stays out
 * of the valid range (0..2^62-1 ns) instead of wrapping into it. */
static inline int64_t nx_event_time_shift(int64_t t, int64_t add)
{
    int64_t sum;
    if (__builtin_add_overflow(t, add, &sum))
        return add > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

/* Runs in directory `dir`. NULL and err when out of memory. */
nx_event_runs *nx_event_runs_new(const char *dir, nx_error *err);
void nx_event_runs_free(nx_event_runs *s);
size_t nx_event_runs_count(const nx_event_runs *s);

/* Starts a run of events read from `path` (named in messages; must outlive s),
 * to which nx_event_runs_add appends records in (start, seq) order. 0, or -1
 * with err. */
int nx_event_runs_begin(nx_event_runs *s, const char *path, nx_error *err);
int nx_event_runs_add(nx_event_runs *s, const nx_event_record *r, nx_error *err);
/* Ends the current run (flushes it). 0, or -1 with err. */
int nx_event_runs_end(nx_event_runs *s, nx_error *err);
/* What the merge adds to every time of run `run` (runs count from 0 in the
 * order begun). */
void nx_event_runs_offset(nx_event_runs *s, size_t run, int64_t add);

/* Merging (after the last run has ended): the records of every run in
 * (start, seq) order. nx_event_runs_next: 1 and *out (valid until the next
 * call), 0 at the end, -1 with err. */
int nx_event_runs_merge(nx_event_runs *s, nx_error *err);
int nx_event_runs_next(nx_event_runs *s, nx_event_record *out, nx_error *err);

#endif
