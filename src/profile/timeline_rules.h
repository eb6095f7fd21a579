/*
 * timeline_rules.h — the timeline rules of a profile: which tables are
 * timelines, their timing columns, their tracks and the labels the viewer shows
 * per event. Used by the table writer's timeline indexes (process), by window
 * queries and sampling (query), by the server and, through /api/schema, by the
 * web UI, so every part of nxprof draws and counts the same tracks.
 *
 * Timeline tables and their timing (nx_timeline_find):
 *   Instruction, DmaPacket, DmaPacketAggregated, CcInstruction, CcOp,
 *   SystemProfileEvents, CoreBarriers, SbufAllocation
 *       interval events: start_ts, end_ts (INT64 ns);
 *   SemaphoreUpdate
 *       point events: timestamp (INT64 ns); start == end == timestamp below.
 * SystemProfileEvents is the one table whose events nest (nx_timeline_info.nested):
 * a track of it is a call stack, and the timeline index stores each event's
 * depth and self time (profile/nesting.h has the rule).
 *
 *
 * Track function (nx_track_kind), the one the viewer draws with:
 *   Instruction          -> timeline_track when non-null and non-empty, else engine
 *                           (a file without a timeline_track column uses engine);
 *   DmaPacket,
 *   DmaPacketAggregated  -> queue_name when non-null, else "queue<queue_idx>"
 *                           (e.g. "queue7"), else "";
 *   SemaphoreUpdate      -> id (the semaphore, e.g. "S[3]");
 *   CcInstruction        -> "CC<core_idx>" (e.g. "CC8");
 *   CcOp                 -> "stream<stream_id>" (e.g. "stream0");
 *   CoreBarriers         -> engine_name (the engine's display name, e.g. "GpSimd");
 *   SbufAllocation       -> "partition<partition>" (e.g. "partition17");
 *   SystemProfileEvents  -> framework events (trace_event_source "framework"):
 *                           "<instance_id>/<process_id>/<thread_id>", one track per
 *                           thread (e.g. "i-0b1e/4121/4121"); runtime and hardware
 *                           events (any other source): "nc<nc_idx>" (e.g. "nc0")
 *                           when nc_idx is non-null, else
 *                           "<instance_id>/<process_id>/<thread_id>". A thread
 *                           name of a row with a worker_gid (a framework trace's
 *                           rank) starts "rank<worker_gid>/" ("rank1//469/520"),
 *                           so ranks never share a thread track. A null part
 *                           is empty text ("//7"); an instance id is cut to its
 *                           first NX_TRACK_INSTANCE_MAX bytes (so a name fits
 *                           NX_TRACK_BUF);
 *   any null source value that has no fallback above -> "" (the empty track).
 * Track names are interned per query: ids are dense, 0, 1, ... in order of first
 * appearance in the scan, and valid for the life of the query.
 *
 * How the viewer shows them (nx_timeline_view, in drawing order; also served as
 * /api/schema's "viewer" member, docs/api.md):
 *   table                group      track suffix   export label (NULL: not offered)
 *   Instruction          compute    ""             "Instructions"
 *   CoreBarriers         compute    " · barriers"  "Core barriers"
 *   DmaPacketAggregated  dma        ""             "DMA transfers (aggregated by queue)"
 *   DmaPacket            dma        " · packets"   "DMA packets (individual)"
 *   SemaphoreUpdate      semaphore  ""             "Semaphore updates"
 *   CcInstruction        cc         ""             "Collective (CC) ops"
 *   CcOp                 cc         " · ops"       NULL
 *   SbufAllocation       memory     ""             "SBUF allocations"
 *   SystemProfileEvents  system     ""             NULL
 * Groups (nx_timeline_group_at, in drawing order): compute "Compute engines", dma
 * "DMA queues", semaphore "Semaphores", cc "Collectives (CC)", memory "SBUF memory",
 * system "System events".
 * colour_by: the fields whose first non-null value keys an event's colour
 * (Instruction: framework_name, raw_framework_id, hlo_name, opcode; the DMA tables:
 * track; CcInstruction: description; CcOp: operation; SystemProfileEvents: name;
 * CoreBarriers: id; SbufAllocation: tensor_name; SemaphoreUpdate: none, one colour). Default search field: Instruction opcode, the
 * DMA tables variable, CcInstruction description, CcOp operation, SemaphoreUpdate
 * id, SystemProfileEvents name, CoreBarriers compiler_operands, SbufAllocation
 * tensor_name. Default aggregate field: Instruction opcode, SystemProfileEvents
 * name, CcInstruction description, CcOp operation, CoreBarriers id, SbufAllocation
 * tensor_name, the DMA tables and SemaphoreUpdate "track".
 */
#ifndef NX_PROFILE_TIMELINE_RULES_H
#define NX_PROFILE_TIMELINE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

typedef enum nx_track_kind {
    NX_TRACK_INSTRUCTION,
    NX_TRACK_DMA,
    NX_TRACK_SEMAPHORE,
    NX_TRACK_CC_CORE,
    NX_TRACK_CC_STREAM,
    NX_TRACK_SYSTEM,
    NX_TRACK_ENGINE,
    NX_TRACK_PARTITION
} nx_track_kind;

typedef struct nx_timeline_info {
    const char *table;
    const char *start_column;   /* start_ts, or timestamp for point tables */
    const char *end_column;     /* end_ts, or NULL for point tables */
    nx_track_kind track;
    bool nested;                /* events nest per track (profile/nesting.h) */
} nx_timeline_info;

/* How many timeline tables there are (nx_timeline_count()), for arrays sized at compile time. */
#define NX_TIMELINE_TABLES 9

/* The timing and track rule of a timeline table, or NULL when `table` has none. */
const nx_timeline_info *nx_timeline_find(const char *table);
/* All timeline tables with a track rule (Instruction, DmaPacketAggregated,
 * DmaPacket, CcInstruction, SemaphoreUpdate, CcOp, SystemProfileEvents,
 * CoreBarriers, SbufAllocation). */
size_t nx_timeline_count(void);
const nx_timeline_info *nx_timeline_at(size_t i);

/* A row's identity across a split table: (file << 40) | row within the file. */
static inline int64_t nx_row_ordinal(size_t file, int64_t row) { return ((int64_t)file << 40) | row; }

/* Most columns a track name is made of (SystemProfileEvents: trace_event_source,
 * nc_idx, instance_id, process_id, thread_id, worker_gid). */
#define NX_TRACK_MAX_SOURCES 6
/* Bytes of the buffer nx_track_name may write a name into; an instance id is
 * cut to NX_TRACK_INSTANCE_MAX bytes so that the longest name fits: "rank" and
 * an int64 (24), "/", the instance, "/" and two int64s (42). */
#define NX_TRACK_BUF 352
#define NX_TRACK_INSTANCE_MAX 255
_Static_assert(NX_TRACK_BUF >= 4 + 20 + 1 + NX_TRACK_INSTANCE_MAX + 2 * (1 + 20), "the longest track name fits");

/* The columns a track is named from, in the rule's order: col[k] (NULL past the
 * n-th); is_int[k]: an integer column (else a string); required[k]: a table
 * without it cannot be read as a timeline (window queries fail naming it). */
typedef struct nx_track_source {
    const char *col[NX_TRACK_MAX_SOURCES];
    bool is_int[NX_TRACK_MAX_SOURCES], required[NX_TRACK_MAX_SOURCES];
    size_t n;
} nx_track_source;
nx_track_source nx_track_sources(nx_track_kind kind);

/* One row's source values, indexed like nx_track_source.col (ok[k] false: null
 * or no such column; s/len for string columns, i for integer ones), and the
 * track name they give by the rules above: a pointer to a value's bytes or to
 * buf (NX_TRACK_BUF bytes); *len gets its length. */
typedef struct nx_track_values {
    const char *s[NX_TRACK_MAX_SOURCES];
    size_t len[NX_TRACK_MAX_SOURCES];
    int64_t i[NX_TRACK_MAX_SOURCES];
    bool ok[NX_TRACK_MAX_SOURCES];
} nx_track_values;
const char *nx_track_name(nx_track_kind kind, const nx_track_values *v, char *buf, size_t *len);

/* The track name of row i of batch b, whose column cols[k] holds source k of
 * src (-1: the batch lacks it); plain or dictionary-form columns. Same result
 * and buffer rule as nx_track_name. */
const char *nx_track_of_row(nx_track_kind kind, const nx_track_source *src, const nxpq_batch *b, const int *cols,
                            size_t i, char *buf, size_t *len);

/* The name of an integer-keyed track ("queue7", "CC8", "stream0", "nc0") into
 * buf (at least 32 bytes): kind NX_TRACK_DMA (the queue_idx fallback),
 * NX_TRACK_CC_CORE, NX_TRACK_CC_STREAM or NX_TRACK_SYSTEM (nc_idx). Returns its
 * length. */
size_t nx_track_int_name(nx_track_kind kind, int64_t v, char *buf);

/* Most label fields of a timeline table (nx_timeline_labels). */
#define NX_TLX_MAX_LABELS 4

/* The label fields the viewer shows per event of a timeline table (NULL-ended,
 * at most NX_TLX_MAX_LABELS), or NULL for other tables. "framework_name" is
 * derived from raw_framework_id (query/timeline.h), not stored. */
const char *const *nx_timeline_labels(const char *table);

/* ------------------------------------------------------- the viewer's view -- */

#define NX_TIMELINE_GROUPS 6

typedef struct nx_timeline_group {
    const char *id, *label;
} nx_timeline_group;

/* Group i < NX_TIMELINE_GROUPS in drawing order, or NULL. */
const nx_timeline_group *nx_timeline_group_at(size_t i);

typedef struct nx_timeline_view {
    const char *table;
    size_t group;                                   /* nx_timeline_group_at index */
    const char *track_suffix;                       /* UTF-8, "" for none */
    const char *export_label;                       /* NULL: not offered by the export dialog */
    const char *colour_by[NX_TLX_MAX_LABELS + 1];   /* NULL-ended; "track" is the track name */
    const char *search_default;                     /* a column of the table */
    const char *aggregate_default;                  /* a column of the table, or "track" */
} nx_timeline_view;

/* Timeline table i < NX_TIMELINE_TABLES in drawing order (rules above), or NULL. */
const nx_timeline_view *nx_timeline_view_at(size_t i);
/* The view of timeline table `table`, or NULL. */
const nx_timeline_view *nx_timeline_view_find(const char *table);

/* Whether label field `label` of timeline table `table` holds text (its catalogue
 * type is string; the derived "framework_name" too), else an integer. */
bool nx_timeline_label_is_string(const char *table, const char *label);

/* Most fields nx_timeline_search_fields / nx_timeline_aggregate_fields give. */
#define NX_TIMELINE_MAX_FIELDS 80

/* The fields a search of `table` takes, into out (cap entries), returning their
 * count: the default search field, then every other string or integer column of
 * the table in catalogue order, then "track". */
size_t nx_timeline_search_fields(const char *table, const char **out, size_t cap);
/* The fields an aggregate of `table` groups by, into out, returning their count:
 * the default aggregate field, then "track", then the label fields that are
 * columns (nx_timeline_labels less the derived framework_name), each once. */
size_t nx_timeline_aggregate_fields(const char *table, const char **out, size_t cap);

/* Row i of a batch column as an integer (INT32/INT64, plain or dictionary
 * form) or a string; false when null. */
static inline bool nx_column_int(const nxpq_column_data *c, size_t i, int64_t *v)
{
    if (c->valid && !c->valid[i])
        return false;
    if (c->dict_index) { /* a dictionary-form batch */
        uint32_t d = c->dict_index[i];
        *v = c->type == NXPQ_INT64 ? c->dict_values.i64[d] : c->dict_values.i32[d];
        return true;
    }
    *v = c->type == NXPQ_INT64 ? c->values.i64[i] : c->values.i32[i];
    return true;
}

static inline bool nx_column_str(const nxpq_column_data *c, size_t i, const char **s, size_t *len)
{
    if (c->valid && !c->valid[i])
        return false;
    if (c->dict_index) {
        const nxpq_str *e = &c->dict_strs[c->dict_index[i]];
        *s = e->ptr;
        *len = e->len;
        return true;
    }
    *s = c->data + c->offsets[i];
    *len = (size_t)(c->offsets[i + 1] - c->offsets[i]);
    return true;
}

#endif
