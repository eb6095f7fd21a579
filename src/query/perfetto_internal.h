/*
 * perfetto_internal.h — what the Perfetto row writer's files share
 * (perfetto_rows.c: tracks, slices, args; perfetto_flows.c: the flow ids of a
 * row; perfetto_counters.c: the counter tracks).
 */
#ifndef NX_QUERY_PERFETTO_INTERNAL_H
#define NX_QUERY_PERFETTO_INTERNAL_H

#include <stdint.h>

#include "parquet/parquet.h"
#include "query/perfetto_trace.h"

/* ---- flows (perfetto_flows.c) ---- */

/* One end of a Flow row: the event (its table's code and id) and the flow. */
typedef struct nx_pf_flow_end {
    int code;                   /* NX_PF_FLOW_INSTRUCTION or NX_PF_FLOW_DMA_BLOCK */
    int64_t id;
    uint64_t flow;              /* the flow id: the Flow row's ordinal + 1 */
    bool terminating;           /* the `out` end (the consumer) */
} nx_pf_flow_end;

enum { NX_PF_FLOW_INSTRUCTION, NX_PF_FLOW_DMA_BLOCK, NX_PF_FLOW_NONE };

typedef struct nx_pf_flows {
    nx_pf_flow_end *ends;       /* sorted by (code, id) */
    size_t n;
    uint64_t unresolved;        /* Flow rows naming another table, or with a null end */
} nx_pf_flows;

/* The Flow table of profile_dir, both ends of each row. 0 (a profile without
 * Flow gives none), or -1 with err naming the table. Memory: 24 bytes per end. */
int nx_pf_flows_read(const char *profile_dir, nx_pf_flows *out, nx_error *err);
void nx_pf_flows_free(nx_pf_flows *f);
/* The Flow table's code of a timeline table (Instruction, DmaPacketAggregated),
 * or NX_PF_FLOW_NONE. */
int nx_pf_flow_code(const char *table);
/* Appends flow_ids / terminating_flow_ids of the event (code, id) to the open
 * TrackEvent in t. */
void nx_pf_flows_put(const nx_pf_flows *f, int code, int64_t id, nx_pftrace *t);
/* Appends flow_ids for row i of a SystemProfileEvents flow_id list column: one
 * id per non-null value (a hash of the text, top bit set), so every event
 * sharing a value is linked, in time order. */
void nx_pf_list_flows_put(const nxpq_column_data *col, size_t i, nx_pftrace *t);

/* ---- counters (perfetto_counters.c) ---- */

/* Points per counter series: the lanes are reduced to this many buckets over
 * the window (usage.h, counter_lanes.h), one sample each. */
#define NX_PF_COUNTER_WIDTH 50000

/* The usage lanes and framework counter lanes of profile_dir over [start, end]
 * as counter tracks under one "Counters" track: descriptors, then every point.
 * An open end (INT64_MIN, INT64_MAX) is the profile's span (Metadata); a
 * profile without one has no counter tracks. 0, or -1 with err. */
int nx_pf_counters_write(nx_pftrace *t, const char *profile_dir, int64_t start, int64_t end, nx_error *err);

#endif
