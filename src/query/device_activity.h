/*
 * device_activity.h — the one place a SystemProfileEvents row is classified
 * for answers about devices and steps (device_stats.h, and any breakdown,
 * rank or insight built on them). docs/analyses.md gives the rules for users.
 *
 * A row's classification (nx_activity):
 *   - device: the accelerator the row ran on, or none (host rows):
 *       * GPU n: a framework slice whose process is labelled "GPU n"
 *         (Kineto's process_labels) or named "/device:GPU:n" (JAX's
 *         process_name, Perfetto JSON and XSpace alike);
 *       * NeuronCore n: a neuron_hw row with nc_idx n (the device's own
 *         activity; neuron_rt rows are the host's runtime calls, on none);
 *     framework rows that are not slices (instants, counters, flows: their
 *     extra_attributes_json starts with "ph") are on no device;
 *   - rank: the row's worker_gid, -1 when null (a profile of one unranked
 *     trace);
 *   - kind, for a row on a device:
 *       * Kineto (by `cat`): "kernel" -> KERNEL, "gpu_memcpy" -> MEMCPY,
 *         "gpu_memset" -> MEMSET, "gpu_user_annotation" and any other
 *         "*annotation" -> ANNOTATION, anything else -> OTHER;
 *       * JAX (no `cat`): rows of a "Stream #..." thread are the device's
 *         streams: a name starting "Memcpy"/"memcpy" -> MEMCPY,
 *         "Memset"/"memset" -> MEMSET, else KERNEL; rows of any other thread
 *         of the device ("XLA Modules", "XLA Ops", "Steps") -> ANNOTATION;
 *       * a NeuronCore's neuron_hw row -> KERNEL;
 *     a row on no device has kind NONE. Only KERNEL, MEMCPY and MEMSET are
 *     device activity (nx_activity_is_busy): annotations span work that the
 *     other rows already show, so counting them would count it twice;
 *   - profiler: the profiler's own rows, left out of operator lists by
 *     default: Kineto's "PyTorch Profiler (n)" span (`cat` "Trace") and every
 *     "ProfilerStep#N" row (host user_annotation and its gpu_user_annotation
 *     copy);
 *   - step: a host slice that marks one training step, with its number:
 *     "ProfilerStep#N" (Kineto, `cat` user_annotation, not on a device: N), or
 *     a slice whose args hold an integer `step_num` (JAX's
 *     StepTraceAnnotation, e.g. `train` with {"step_num": "3"}: 3); -1 and
 *     is_step false otherwise.
 */
#ifndef NX_QUERY_DEVICE_ACTIVITY_H
#define NX_QUERY_DEVICE_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

typedef enum nx_device_type { NX_DEVICE_NONE, NX_DEVICE_GPU, NX_DEVICE_NEURONCORE } nx_device_type;

typedef enum nx_activity_kind {
    NX_ACT_NONE,            /* not on a device */
    NX_ACT_KERNEL,
    NX_ACT_MEMCPY,
    NX_ACT_MEMSET,
    NX_ACT_ANNOTATION,      /* drawn on the device, spans other rows' work */
    NX_ACT_OTHER            /* on the device, of no kind above (e.g. a Kineto cat we do not know) */
} nx_activity_kind;

/* "kernel", "memcpy", "memset", "annotation", "other", "none". */
const char *nx_activity_kind_name(nx_activity_kind k);

/* What a row says, as the classifier reads it: strings are not NUL-terminated
 * (NULL with length 0 for a null value). */
typedef struct nx_activity_input {
    const char *name, *source, *json;
    size_t name_len, source_len, json_len;
    int64_t nc_idx;                  /* -1: null */
    int64_t worker_gid;              /* -1: null */
} nx_activity_input;

typedef struct nx_activity {
    nx_device_type device_type;
    int64_t device;                  /* the n of GPU n / NeuronCore n; -1 on none */
    int64_t rank;                    /* worker_gid, -1: null */
    nx_activity_kind kind;
    bool profiler;                   /* the profiler's own row */
    bool is_step;
    int64_t step;                    /* the step number, -1 when not a step */
} nx_activity;

/* The input of row r from plain (not dictionary) string columns of a batch,
 * each NULL when not projected; nc_idx and worker_gid -1 (set them when the
 * answer needs them). */
void nx_activity_input_of(const nxpq_column_data *name, const nxpq_column_data *source,
                          const nxpq_column_data *json, size_t r, nx_activity_input *in);

/* Whether a name is one the profiler gives its own rows ("ProfilerStep#N",
 * "PyTorch Profiler (n)"), for callers that see names alone (a diff grouped by
 * name); a row's `profiler` flag also needs its cat (rules above). */
bool nx_activity_profiler_name(const char *name, size_t len);

/* Classifies one row by the rules above. */
void nx_activity_classify(const nx_activity_input *in, nx_activity *out);

/* Whether the kind is device activity (kernel, memcpy or memset). */
static inline bool nx_activity_is_busy(nx_activity_kind k)
{
    return k == NX_ACT_KERNEL || k == NX_ACT_MEMCPY || k == NX_ACT_MEMSET;
}

/* Whether a row's name is a collective communication: a substring, in any
 * case, of "nccl", "gloo", "c10d::", "record_param_comms", "allreduce",
 * "all_reduce", "all-reduce", "allgather", "all_gather", "all-gather",
 * "reducescatter", "reduce_scatter", "reduce-scatter", "alltoall",
 * "all_to_all", "all-to-all", "collective-permute" or "sendrecv". This covers
 * NCCL kernels (ncclDevKernel_AllReduce_...), PyTorch's CPU-side ops
 * (c10d::allreduce_, record_param_comms), gloo's annotations
 * (gloo:all_reduce) and XLA's collective ops (all-reduce.3). Bare words such
 * as "broadcast" or "send" are not enough: aten::broadcast_tensors is not a
 * collective. */
bool nx_activity_is_collective(const char *name, size_t len);

/* Whether a host row's name is a CUDA runtime call that copies synchronously:
 * it starts "cudaMemcpy" and holds no "Async" (cudaMemcpy, cudaMemcpy2D,
 * cudaMemcpyToSymbol, ...; not cudaMemcpyAsync). Such a call blocks the host
 * until the copy is done. */
bool nx_activity_is_sync_copy(const char *name, size_t len);

/* The device's display name into out (at least 32 bytes): "GPU 0",
 * "NeuronCore 3", "" for none. */
void nx_device_name(nx_device_type t, int64_t n, char *out, size_t cap);

/* One classified row as the scan delivers it. name and json are valid during
 * the callback only. */
typedef struct nx_activity_row {
    int64_t ordinal;                 /* timeline_rules.h nx_row_ordinal (file, row) */
    int64_t start_ns, end_ns;
    const char *name;
    size_t name_len;
    const char *json;                /* extra_attributes_json, "" when null (args
                                        such as a kernel's correlation or a
                                        memcpy's bytes) */
    size_t json_len;
    nx_activity a;
} nx_activity_row;

/* Called for every row of SystemProfileEvents, in table order (start order,
 * as process writes it). Returns 0 to go on, -1 (err set) to stop. */
typedef int (*nx_activity_fn)(void *ctx, const nx_activity_row *row, nx_error *err);

/* Reads SystemProfileEvents of profile `dir` once and calls fn for each row.
 * A row whose end_ts is before its start_ts is an error naming it. 0,
 * NX_PROFILE_TABLE_ABSENT (no such table), or -1 with err (the table or file,
 * a missing column, or fn's error). */
int nx_activity_scan(const char *dir, nx_activity_fn fn, void *ctx, nx_error *err);

/* ------------------------------------------------------------ intervals -- */

typedef struct nx_interval {
    int64_t start, end;              /* end >= start */
} nx_interval;

/* Sorts iv[0..n) by start and merges it in place into its union: disjoint,
 * non-touching intervals in start order (two that touch, one's end equal to
 * the other's start, become one). Returns the new count. */
size_t nx_interval_union(nx_interval *iv, size_t n);

/* The total length of the parts of the union u[0..n) (as nx_interval_union
 * leaves it) inside [lo, hi); false when it exceeds int64 (*len unchanged). */
bool nx_interval_length(const nx_interval *u, size_t n, int64_t lo, int64_t hi, int64_t *len);

#endif
