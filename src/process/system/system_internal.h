/*
 * system_internal.h — what the files of the system half of `process` share;
 * system_tables.h is the interface. The files, one concern each:
 *   system_tables.c     the entry: runtime TSV sources, instance ids, time span
 *   framework_buffer.c  the buffer of framework events: sort, spill, merge
 *   framework_events.c  framework traces into that buffer: every kind of event,
 *                       B/E and async b/e pairing, pid/tid mapping, per-file Warnings
 *   framework_kinds.c   what each kind of event becomes: its attributes JSON,
 *                       async tracks, ids and flow keys
 *   framework_tally.c   what became of each element of a framework trace
 *   framework_names.c   process and thread names from metadata (M) events
 *   framework_ranks.c   the rank of each framework trace (worker_gid, flow scope)
 *   system_events.c     SystemProfileEvents: runtime and framework events merged
 *   system_samples.c    CpuUsage, HostMemUsage, SystemProfileHbmUsage (and through
 *                       hbm_summary.c HbmUsageSummaryByType)
 *   system_metadata.c   SystemProfileMetadata, and Metadata without device traces
 */
#ifndef NX_SYSTEM_INTERNAL_H
#define NX_SYSTEM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/chrome_event.h"
#include "capture/system_capture.h"
#include "process/device/device_sink.h"
#include "process/system/event_runs.h"
#include "process/system/system_result.h"
#include "util/strbuf.h"

/* Framework events buffered before they are sorted and spilled as a run
 * (event_runs.h); NXPROF_FRAMEWORK_SORT_BYTES in the environment sets another
 * budget (tests use small ones). */
#define NX_FRAMEWORK_SORT_BUDGET ((size_t)256 << 20)
/* Cap on the buffer whatever the budget: only B (and async b) events still
 * waiting for their E (e) cannot be spilled. */
#define NX_FRAMEWORK_MEMORY_LIMIT ((size_t)2 << 30)

/* ------------------------------------------------ framework_buffer.c -- */

typedef struct fw_event {
    int64_t start, end;          /* ns; relative to the file's base until its file is read */
    int64_t pid, tid;
    uint64_t seq;                /* arrival order over all Chrome files: the tie-break */
    uint64_t offset;             /* the event's byte offset in its file's JSON text (a B's for a pair) */
    uint64_t name, json, stream, flow;   /* arena offsets; 0 is "" */
    uint64_t link;               /* open B (b): index+1 of the stack's previous open one; 0: none */
    uint32_t session;
    uint32_t file;               /* its Chrome file, in the order write_events reads them */
    uint8_t open;                /* a B (b) waiting for its E (e) */
    uint8_t dropped;
    char ph;                     /* the event's phase (a pair's: its B's or b's) */
} fw_event;
_Static_assert(sizeof(fw_event) == 104, "the docs say a buffered framework event takes 104 bytes");

/* A stack of open events: B events per (pid, tid), or async b events per
 * (pid, nx_fw_async_key(cat, id)) with async set. */
typedef struct fw_thread {
    int64_t pid, tid;
    uint64_t top;                /* index+1 of the stack's latest open event; 0: none */
    bool used;
    bool async;
} fw_thread;

typedef struct nx_fw_names nx_fw_names;   /* framework_names.c */
typedef struct nx_fw_ranks nx_fw_ranks;   /* framework_ranks.c */

typedef struct fw_buffer {
    fw_event *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    bool over_limit, oom;
    uint64_t next_seq;
    size_t budget;               /* bytes of v and arena before a spill */
    const char *run_dir;         /* where runs are written (the profile's temporary directory) */
    nx_event_runs *runs;         /* NULL until the first spill */
    nx_fw_names *names;          /* the process and thread names of every file */
    nx_fw_ranks *ranks;          /* the rank of every file */
} fw_buffer;

/* Empties b and readies it to buffer events; runs go to run_dir. False on OOM. */
bool nx_fw_init(fw_buffer *b, const char *run_dir);
/* Copies s[0..len) into the arena: its offset (0 for ""), UINT64_MAX on OOM or
 * over the limit (b->oom / b->over_limit say which). */
uint64_t nx_fw_put(fw_buffer *b, const char *s, size_t len);
/* A new zeroed event with the next seq, or NULL (b->oom / b->over_limit). */
fw_event *nx_fw_add(fw_buffer *b);
const char *nx_fw_str(const fw_buffer *b, uint64_t off);
/* Bytes held by the events and their strings. */
size_t nx_fw_bytes(const fw_buffer *b);
int nx_fw_spill(fw_buffer *b, size_t first, const char *path, fw_thread *threads, size_t tcap, size_t *own_run,
                nx_error *err);
/* After the last file (last_path, for messages): the events ready in (start,
 * seq) order, from the merged runs or the sorted buffer. */
int nx_fw_finish(fw_buffer *b, const char *last_path, nx_error *err);
int nx_fw_next(fw_buffer *b, size_t *fi, nx_event_record *out, nx_error *err);
void nx_fw_free(fw_buffer *b);

/* ------------------------------------------------ framework_events.c -- */

/* Reads every framework trace of every session into b (nx_fw_init'ed), in
 * session then file order, and finishes it; the per-file problems go to warn. */
int nx_fw_read_all(const nx_capture *cap, const nx_cap_warner *warn, fw_buffer *b, nx_system_result *res, nx_error *err);

/* ------------------------------------------------- framework_kinds.c -- */

/* Separates the flow keys of one event in fw_event.flow (system_events.c splits them). */
#define NX_FW_FLOW_SEP '\x1f'

/* X and B events are slices: their attributes have no "ph" member. */
bool nx_fw_is_slice(char ph);
/* The text of an id or bind_id: a number in decimal, a string as written (up
 * to a "\u0000"), in out; NULL when absent, or on OOM (nx_strbuf_failed(out)). */
const char *nx_fw_ref_text(const nx_chrome_ref *r, nx_strbuf *out);
/* The thread_id of the async track of `name` in category `cat`:
 * -1 - (XXH3_64bits("async\x1f" cat "\x1f" name) >> 1). */
int64_t nx_fw_async_track(const char *cat, const char *name);
/* The stack key of async events with category `cat` and id `id` (within a pid). */
int64_t nx_fw_async_key(const char *cat, const char *id);
/* The top-level args members a slice's row uses, found in one pass over its
 * args text (every event has one; three lookups cost three passes). Each is
 * the first member of that name: a string's raw content (between the quotes,
 * escapes kept) or a scalar's text; NULL when absent, null or an
 * object/array, and all NULL for an event that is not a slice. */
typedef struct nx_fw_slice_args {
    const char *stream, *flow_id, *correlation;
    size_t stream_len, flow_id_len, correlation_len;
} nx_fw_slice_args;
void nx_fw_slice_args_find(const nx_chrome_event *ev, nx_fw_slice_args *a);
/* ev's flow keys into list (reset), NX_FW_FLOW_SEP between them (that byte
 * inside a key becomes U+FFFD): a slice's args.flow_id, else args.correlation
 * (a, from nx_fw_slice_args_find), then "<cat>:<bind_id>"; a flow event's
 * (s, t, f) "<cat>:<id>" (id: its text, or NULL); none for the other kinds.
 * scratch: for the bind_id text. */
void nx_fw_flows(nx_strbuf *list, const nx_chrome_event *ev, const nx_fw_slice_args *a, const char *id,
                 nx_strbuf *scratch);
/* extra_attributes_json of ev into b (reset), as system_events.c's header
 * says: "ph" first unless a slice, then "cat", "pid"/"tid", "id" (id, when
 * not NULL; not for slices), "s", "bp", a slice's "flow_in"/"flow_out",
 * "args", "args_truncated", and "thread_name" (thread_name, for an async row,
 * whose numeric tid is then kept too). */
void nx_fw_attrs(nx_strbuf *b, const nx_chrome_event *ev, const char *id, const char *thread_name);

/* ------------------------------------------------ framework_names.c -- */

/* Process and thread names from M events, per file (rules in framework_names.c). */
nx_fw_names *nx_fw_names_new(void);
void nx_fw_names_free(nx_fw_names *t);
/* Keeps the name or sort index ev (an M event of file `file`, its pid/tid
 * mapped) gives. 1 when it gave one, 0 when it is no such event, -1 when out
 * of memory. */
int nx_fw_names_add(nx_fw_names *t, uint32_t file, const nx_chrome_event *ev, int64_t pid, int64_t tid);
/* After the last file: ready for nx_fw_names_extend. */
void nx_fw_names_seal(nx_fw_names *t);
/* When (file, pid, tid) has names: the JSON object `json` with them added as
 * members (process_name, process_labels, process_sort_index, thread_name,
 * thread_sort_index, those known) into out (reset), and true; else false. */
bool nx_fw_names_extend(const nx_fw_names *t, uint32_t file, int64_t pid, int64_t tid, const char *json,
                        nx_strbuf *out);

/* ------------------------------------------------ framework_ranks.c -- */

/* The rank of each framework file (rules in framework_ranks.c). */
nx_fw_ranks *nx_fw_ranks_new(void);
void nx_fw_ranks_free(nx_fw_ranks *r);
/* Keeps what top-level member tl of file `file` (at `path`) says of its rank
 * (distributedInfo.rank, hostname); an unusable rank is a Warning. -1 when
 * out of memory, else 0. */
int nx_fw_ranks_toplevel(nx_fw_ranks *r, uint32_t file, const nx_chrome_toplevel *tl, const char *path,
                         const nx_cap_warner *warn);
/* The rank a file's base name gives ("rank-3", "rank_3", "rank3"), or -1. */
int64_t nx_fw_rank_from_name(const char *path);
/* After the last file of cap: every file's rank; conflicts are Warnings. -1
 * when out of memory. */
int nx_fw_ranks_resolve(nx_fw_ranks *r, const nx_capture *cap, const nx_cap_warner *warn);
/* File `file`'s rank, or -1 when it has none. */
int64_t nx_fw_rank_of(const nx_fw_ranks *r, uint32_t file);

/* ------------------------------------------------ framework_tally.c -- */

/* What became of the elements of one framework trace. */
typedef struct nx_fw_tally {
    uint64_t unnamed;            /* M events that give no name: not stored */
    uint64_t skipped;            /* elements the source could not use as events or left out */
    const char *later_category;  /* Warning category of those past the first 20 */
    char unit[16];               /* displayTimeUnit as JSON text ("" when absent) */
} nx_fw_tally;

/* The events of one trace kept, by kind (a pair counts once in pairs). */
typedef struct nx_fw_kept {
    uint64_t x, pairs, instants, counters, async_pairs, async_n, flows, other, names;
} nx_fw_kept;

/* An element the source skipped: a Warning (the first 20 per file) of `category`
 * (NULL: "Invalid Data"), counted. */
void nx_fw_tally_skipped(nx_fw_tally *t, const nx_cap_warner *warn, const char *path, uint64_t index,
                         uint64_t offset, const char *category, const char *reason);
/* The file's displayTimeUnit value, as JSON text. */
void nx_fw_tally_unit(nx_fw_tally *t, const char *json);
/* Whether a file's times count from the trace start: no base time, and its
 * `stored` events all end before 10^12 µs (max_ns their largest end). */
bool nx_fw_tally_relative(bool has_base, uint64_t stored, int64_t max_ns);
/* The end of the file: Warnings for the skipped past 20, for the M events not
 * stored, for relative times (res->relative_time set) and for a
 * displayTimeUnit other than "ms"; then one line on stderr: "<path>: kept N
 * events (X: a, B/E: b, i: c, C: d, b/e: e, n: f, s/t/f: g, other: h, M names:
 * n), not stored yet M (M: m), warned W" (the "not stored yet" part only when
 * M > 0). `warned`: events the processor dropped with a Warning (skipped ones
 * are added here). */
void nx_fw_tally_finish(const nx_fw_tally *t, const nx_cap_warner *warn, const char *path, const nx_fw_kept *kept,
                        uint64_t warned, bool relative_ts, nx_system_result *res);

/* --------------------------------------------------- system_tables.c -- */

typedef struct rt_source {
    nx_sys_reader *r;
    nx_sys_record rec;
    bool has;
    size_t session;
    const char *path;
} rt_source;

const char *nx_sys_instance_of(const nx_cap_session *s);
void nx_sys_span_add(nx_system_result *res, int64_t first, int64_t last);
/* Opens the `kind` file of every session that has one, each positioned on its
 * first record, into src[0..*n). On failure the ones opened are in src[0..*n). */
int nx_sys_open_sources(const nx_capture *cap, nx_sys_kind kind, rt_source *src, size_t *n, nx_error *err);

/* ------------------------------------------------------ the tables -- */

int nx_system_write_events(const nx_capture *cap, const nx_process_ctx *ctx, const nx_cap_warner *warn,
                           unsigned *tables, nx_system_result *res, nx_error *err);
int nx_system_write_samples(const nx_capture *cap, const nx_process_ctx *ctx, nx_sys_kind kind, unsigned *tables,
                            nx_system_result *res, nx_error *err);
int nx_system_write_metadata(const nx_process_ctx *ctx, const nx_system_result *res, unsigned *tables,
                             nx_error *err);

#endif
