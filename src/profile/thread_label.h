/*
 * thread_label.h — the label of a framework event's thread, from the names its
 * trace gave in metadata and process stores in extra_attributes_json
 * (docs/processing.md "Process and thread names"), read like Perfetto's UI:
 * "<process> / <thread>", where
 *   <process> = process_labels when present and not "CPU" (Kineto labels each
 *               GPU "process" "GPU <n>" and its host process "CPU": the GPU's
 *               label is what tells its tracks apart, the name what tells host
 *               processes apart); else "<process_name> (<pid>)"; else the
 *               original pid string ("Spans"); else "Global" for an instant
 *               of global scope ("s":"g": Kineto writes its "Record Window
 *               End" so, with a blank pid and tid); else "process <pid>";
 *   <thread>  = thread_name, without leading and trailing blanks (Kineto
 *               writes "stream 7 "); else the original tid string ("PyTorch
 *               Profiler"); else "instant events" for an instant of global
 *               scope; else "thread <tid>".
 * e.g. "python3 (469) / thread 520 (pt_autograd_0)", "GPU 0 / stream 7",
 * "/device:GPU:0 (1) / Stream #14(Compute)", "Spans / PyTorch Profiler".
 * An event of a framework trace with a rank (worker_gid N) has the process
 * part "rank N / <process>" ("rank 1 / GPU 0 / stream 7", "rank 1 / python3
 * (469) / thread 520"), and always a label.
 * An event with none of those names or strings and no rank has no label (0):
 * callers keep its track name.
 */
#ifndef NX_PROFILE_THREAD_LABEL_H
#define NX_PROFILE_THREAD_LABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/profile_table.h"

/* Longest label written (longer ones are cut at a UTF-8 character boundary). */
#define NX_THREAD_LABEL_MAX 256

/* Room for one part (process or thread) of a label, NUL included. */
#define NX_THREAD_PART_MAX (NX_THREAD_LABEL_MAX + 32)

/* The <process> and <thread> parts (NX_THREAD_PART_MAX bytes each), the
 * process part after "rank <rank> / " when rank >= 0; false when neither is
 * named and there is no rank (then they hold "process <pid>", "thread <tid>"). */
bool nx_thread_label_parts(const char *json, size_t len, int64_t pid, int64_t tid, int64_t rank, char *proc,
                           char *thread);

/* The order Perfetto lists threads in: process_sort_index (else the pid),
 * then thread_sort_index (else the tid), read from the same JSON. */
void nx_thread_sort_keys(const char *json, size_t len, int64_t pid, int64_t tid, int64_t *process_sort,
                         int64_t *thread_sort);

/* Writes the label of the event whose extra_attributes_json is json[0..len),
 * whose process_id/thread_id are pid/tid and whose worker_gid is rank (-1:
 * null) into out (NX_THREAD_LABEL_MAX + 1 bytes, NUL-terminated); returns its
 * length, or 0 when it has no label. */
size_t nx_thread_label(const char *json, size_t len, int64_t pid, int64_t tid, int64_t rank, char *out);

/* The columns of SystemProfileEvents a row's label is read from, in plain (not
 * dictionary) form: extra_attributes_json, trace_event_source (strings),
 * process_id, thread_id, worker_gid (INT32 or INT64). */
typedef struct nx_thread_label_cols {
    const nxpq_column_data *json, *source, *pid, *tid, *worker;
} nx_thread_label_cols;

/* nx_thread_label of row r when it is a framework event (trace_event_source
 * "framework") with the first four values (worker_gid may be null); 0 otherwise. */
size_t nx_thread_label_of_row(const nx_thread_label_cols *c, size_t r, char *out);

/* Those five columns' names, in that order, for a projection; and whether the
 * table has them with those types. */
#define NX_THREAD_LABEL_COLUMNS 5
extern const char *const nx_thread_label_columns[NX_THREAD_LABEL_COLUMNS];
bool nx_thread_label_columns_ok(const nx_profile_table *t);

#endif
