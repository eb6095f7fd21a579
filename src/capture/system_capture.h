/*
 * system_capture.h — the system capture's four TAB-separated files: runtime
 * events (runtime_events.tsv), CPU utilisation (cpu_usage.tsv), host memory
 * (host_mem.tsv) and device (HBM) memory by category (device_mem.tsv, optional
 * like the others). Line 1 is "#nxprof <kind> <version>", line 2 the column
 * names, then one record per line, sorted by the first column. Format:
 * docs/capture-format.md, "System capture". (Chrome trace.json files have a
 * reader of their own.)
 *
 * device_mem.tsv: columns timestamp_ns, device_idx, hbm_idx, then one column
 * per usage category, named exactly as the SystemProfileHbmUsage field
 * (`<category>_bytes`, catalogue order, total_bytes excluded). Every field is
 * a non-negative int64. The reader computes total_bytes = the sum of the
 * categories and rejects a line whose sum overflows int64.
 *
 * The reader streams line by line in constant memory (lines up to 1 MiB) and
 * rejects anything off-format with "<path>: line N: <what was expected>". The
 * writer refuses values the reader would reject (tabs or control characters in
 * text, end before start), so its files always read back.
 */
#ifndef NX_SYSTEM_CAPTURE_H
#define NX_SYSTEM_CAPTURE_H

#include <stdint.h>

#include "capture/capture.h"
#include "util/strbuf.h"

#define NX_SYS_VERSION 1
#define NX_SYS_NULL INT64_MIN        /* an empty optional integer column */
#define NX_SYS_CPU_AVERAGE (-1)      /* cpu column "average" */

typedef enum nx_sys_kind { NX_SYS_RUNTIME_EVENTS, NX_SYS_CPU_USAGE, NX_SYS_HOST_MEM, NX_SYS_DEVICE_MEM } nx_sys_kind;
#define NX_SYS_KIND_COUNT 4
/* "runtime-events", "cpu-usage", "host-memory", "device-memory" (the version line's kind). */
const char *nx_sys_kind_tag(nx_sys_kind k);
/* The file name of that kind inside a session directory. */
const char *nx_sys_file_name(nx_sys_kind k);

typedef struct nx_sys_runtime_event {
    int64_t start_ns, end_ns;        /* Unix ns */
    const char *source;              /* "neuron_rt" or "neuron_hw" */
    const char *name;
    int64_t pid, tid;
    int64_t nc_idx, worker_gid;      /* NX_SYS_NULL when empty */
    const char *flow_ids;            /* "" or "12,13" */
    const char *attributes;          /* "" or "key=value;key=value" */
} nx_sys_runtime_event;

typedef struct nx_sys_cpu_sample {
    int64_t timestamp_ns;
    int64_t cpu;                     /* CPU number, or NX_SYS_CPU_AVERAGE */
    double util_percent;             /* 0..100 */
} nx_sys_cpu_sample;

typedef struct nx_sys_mem_sample {
    int64_t timestamp_ns;
    int64_t used_bytes, total_bytes;
} nx_sys_mem_sample;

/* The HBM usage categories of device_mem.tsv, in SystemProfileHbmUsage's
 * catalogue order (src/schema/catalogue.tsv); X(name) for each. The column
 * and table field of category `name` is "name_bytes". */
#define NX_SYS_HBM_CATEGORIES(X)                                                                         \
    X(generic) X(tensor_instructions) X(scalar_instructions) X(gpsimd_instructions) X(io) X(dram_spill)  \
    X(weights) X(profiler_buffers) X(scalar_table) X(vector_instructions) X(sync_instructions)          \
    X(shared_scratchpad) X(tensors) X(ucode_lib) X(gpsimd_stdio) X(collectives) X(scratchpad)           \
    X(dma_rings_runtime) X(dma_rings_spill) X(dma_rings_io) X(dma_rings_collectives) X(unknown)

typedef enum nx_sys_hbm_category {
#define NX_SYS_HBM_ENUM_(name) NX_HBM_##name,
    NX_SYS_HBM_CATEGORIES(NX_SYS_HBM_ENUM_)
#undef NX_SYS_HBM_ENUM_
    NX_HBM_CATEGORY_COUNT
} nx_sys_hbm_category;

/* "generic_bytes", ... : the column name of category c (c < NX_HBM_CATEGORY_COUNT). */
const char *nx_sys_hbm_column(unsigned c);

typedef struct nx_sys_hbm_sample {
    int64_t timestamp_ns;
    int64_t device_idx, hbm_idx;
    int64_t bytes[NX_HBM_CATEGORY_COUNT];   /* indexed by nx_sys_hbm_category */
    int64_t total_bytes;         /* reader: the sum of bytes[] (checked for overflow); writer: ignored */
} nx_sys_hbm_sample;

typedef struct nx_sys_record {
    uint64_t line;                   /* 1-based line number in the file */
    union {
        nx_sys_runtime_event runtime;
        nx_sys_cpu_sample cpu;
        nx_sys_mem_sample mem;
        nx_sys_hbm_sample hbm;
    } u;
} nx_sys_record;

typedef struct nx_sys_reader nx_sys_reader;

/* Opens `path` and checks its version and header lines against `kind`. */
int nx_sys_reader_open(const char *path, nx_sys_kind kind, nx_sys_reader **out, nx_error *err);
/* 1: *rec holds the next record (its strings live until the next call); 0: end;
 * -1: a fatal problem in *err. */
int nx_sys_reader_next(nx_sys_reader *r, nx_sys_record *rec, nx_error *err);
void nx_sys_reader_close(nx_sys_reader *r);

/* Appends attributes "k=v;k2=v2" as a JSON object of strings ({} when empty),
 * for SystemProfileEvents.extra_attributes_json. */
void nx_sys_attributes_to_json(const char *attributes, nx_strbuf *out);

typedef struct nx_sys_writer nx_sys_writer;

/* Creates `path` and writes the version and header lines of `kind`. */
int nx_sys_writer_open(const char *path, nx_sys_kind kind, nx_sys_writer **out, nx_error *err);
int nx_sys_write_runtime(nx_sys_writer *w, const nx_sys_runtime_event *e, nx_error *err);
int nx_sys_write_cpu(nx_sys_writer *w, const nx_sys_cpu_sample *s, nx_error *err);
int nx_sys_write_mem(nx_sys_writer *w, const nx_sys_mem_sample *s, nx_error *err);
/* Refuses a negative field or categories whose sum overflows int64 (s->total_bytes is not written). */
int nx_sys_write_hbm(nx_sys_writer *w, const nx_sys_hbm_sample *s, nx_error *err);
/* Flushes and closes; always releases w. */
int nx_sys_writer_close(nx_sys_writer *w, nx_error *err);

#endif
