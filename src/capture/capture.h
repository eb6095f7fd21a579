/*
 * capture.h — the capture directory: its layout, file names, discovery, and the
 * error and warning conventions every capture reader shares.
 *
 * A capture (docs/capture-format.md, "Directory layout") is
 *
 *   ROOT/<instance-id>_pid_<pid>/<timestamp>/
 *       program_<hash>.nxprog                 the compiled program   (program_file.h)
 *       trace_<hash>_nd<D>_nc<C>.nxtrace      one per NeuronCore     (device_trace.h)
 *       runtime_events.tsv cpu_usage.tsv host_mem.tsv                (system_capture.h)
 *       device_mem.tsv                                               (system_capture.h)
 *       *.json / *.json.gz, ...               framework traces: every name a
 *                                             framework source reads (framework_source.h)
 *
 * where <hash> is XXH3_64bits of the program file's bytes as 16 lowercase hex
 * digits: a trace belongs to the program whose hash it names. A ROOT holding no
 * session directories but Chrome trace files directly is a framework-only
 * capture (one session, instance "" and pid -1).
 *
 * Errors: fatal problems (the input cannot be trusted; the caller exits 1) come
 * back as -1 with an nx_error whose message names the file and the byte
 * offset or line, and says what was expected. Non-fatal problems (the reference
 * tool reports them as Warning rows and carries on) go to an nx_cap_warner
 * callback and never stop a reader. Nothing here prints or exits.
 */
#ifndef NX_CAPTURE_H
#define NX_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"


/* A non-fatal problem. `where` is a byte offset for binary files and a line
 * number for text files (NX_CAP_NOWHERE when neither applies); `category` is a
 * short label for Warning.category ("Invalid Data", "Missing Data"). */
#define NX_CAP_NOWHERE UINT64_MAX
typedef void (*nx_cap_warn_fn)(void *ctx, const char *path, uint64_t where,
                               const char *category, const char *message);
typedef struct nx_cap_warner {
    nx_cap_warn_fn fn;   /* NULL: warnings are dropped */
    void *ctx;
} nx_cap_warner;

/* Calls the warner (if any) with a formatted message (readers, and the
 * processor for problems it finds in what they read). */
void nx_cap_warn(const nx_cap_warner *w, const char *path, uint64_t where, const char *category,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The five NeuronCore engines. Their numbers are part of the file formats. */
typedef enum nx_engine {
    NX_ENGINE_TENSOR = 0,
    NX_ENGINE_VECTOR = 1,
    NX_ENGINE_SCALAR = 2,
    NX_ENGINE_GPSIMD = 3,
    NX_ENGINE_SYNC = 4,
    NX_ENGINE_COUNT = 5
} nx_engine;
#define NX_ENGINE_NONE 0xFF   /* "no engine" in u8 engine fields */

/* "tensor", "vector", ... (Instruction.engine); NULL when e >= NX_ENGINE_COUNT. */
const char *nx_engine_name(unsigned e);
/* "Tensor", "Vector", ... (SemaphoreUpdate.update_source, timeline tracks). */
const char *nx_engine_display_name(unsigned e);
/* Hardware block names "PE", "DVE", "ACT", "Pool", "SP" (CcOp.trigger_engine). */
const char *nx_engine_hw_name(unsigned e);

/* --- file names ------------------------------------------------------------ */

#define NX_CAP_NAME_MAX 96   /* room for any name the functions below produce */

/* "program_<hash>.nxprog" */
void nx_cap_program_name(uint64_t hash, char out[NX_CAP_NAME_MAX]);
/* "trace_<hash>_nd<device>_nc<core>.nxtrace" */
void nx_cap_trace_name(uint64_t hash, uint32_t device, uint32_t core, char out[NX_CAP_NAME_MAX]);
/* Parse those names back; false when `name` does not follow the pattern exactly. */
bool nx_cap_parse_program_name(const char *name, uint64_t *hash);
bool nx_cap_parse_trace_name(const char *name, uint64_t *hash, uint32_t *device, uint32_t *core);
/* "<instance-id>_pid_<pid>": false (out untouched) when it would not fit or the
 * instance id is empty or holds '/', '_' or a control character. */
bool nx_cap_session_dir_name(const char *instance_id, uint32_t pid, char out[NX_CAP_NAME_MAX]);

#define NX_CAP_RUNTIME_EVENTS_FILE "runtime_events.tsv"
#define NX_CAP_CPU_USAGE_FILE "cpu_usage.tsv"
#define NX_CAP_HOST_MEM_FILE "host_mem.tsv"
#define NX_CAP_DEVICE_MEM_FILE "device_mem.tsv"

/* --- discovery ------------------------------------------------------------- */

typedef struct nx_cap_trace_file {
    char *path;
    uint32_t device, core;       /* from the file name */
} nx_cap_trace_file;

typedef struct nx_cap_program_file {
    char *path;
    uint64_t hash;               /* from the file name; the reader checks the content */
    nx_cap_trace_file *traces;   /* sorted by (device, core) */
    size_t n_traces;
} nx_cap_program_file;

typedef struct nx_cap_session {
    char *dir;                   /* the <timestamp> directory (or ROOT, framework-only) */
    char *instance_id;           /* "" for a framework-only capture */
    int64_t pid;                 /* -1 for a framework-only capture */
    char *timestamp;             /* the directory name: decimal digits ("" framework-only) */
    nx_cap_program_file *programs;   /* sorted by hash */
    size_t n_programs;
    char *runtime_events_path;   /* NULL when absent */
    char *cpu_usage_path;
    char *host_mem_path;
    char *device_mem_path;       /* device (HBM) memory snapshots */
    char **chrome_traces;        /* framework traces (framework_source.h), sorted by name */
    size_t n_chrome_traces;
} nx_cap_session;

typedef struct nx_capture {
    char *root;
    nx_cap_session *sessions;    /* sorted by directory path */
    size_t n_sessions;
} nx_capture;

/*
 * Finds every session under `root` and pairs traces with programs by the hash in
 * their names. Fatal: root unreadable or holding no session and no Chrome trace;
 * a trace or program file whose name does not follow the pattern; a trace whose
 * program is not in its directory. Warnings: unrecognised files in a session
 * directory, a program without traces. On success *out must be released with
 * nx_capture_free(); on failure it is left empty.
 */
int nx_capture_discover(const char *root, nx_capture *out, const nx_cap_warner *warn,
                        nx_error *err);
void nx_capture_free(nx_capture *cap);

#endif
