/*
 * flows.h — the events linked to one event: its predecessors and successors.
 *
 * Device events (Instruction, DmaPacketAggregated): from the Flow table
 * (docs/processing.md "Flow"), whose in_table / out_table name the linked
 * tables as "instruction" (ids are Instruction.id) and "dma_block" (ids are
 * DmaPacketAggregated.id); the `in` end is the producer. For an event E with
 * id x in table T (Flow's name t):
 *   predecessors  the `in` end of every Flow row with out_table = t and
 *                 out_id = x;
 *   successors    the `out` end of every Flow row with in_table = t and
 *                 in_id = x;
 * each with the row's dependency_type and gap_time (null when null or when
 * Flow lacks the column). The other end is the row of its table whose id
 * column equals the id (the first such row in table order); a Flow row whose
 * other end names another table, or an id no row has, is counted in
 * `unresolved` and not listed. An event with a null id, or a profile without
 * Flow, has none.
 *
 * SystemProfileEvents: the events sharing a value of the list column flow_id
 * with E (E itself excluded): predecessors are those before E in (start,
 * ordinal) order, successors those after it; each carries the first value of
 * E's flow_id list it shares (only the first NX_FLOWS_OWN values of E's list
 * are compared; null values never match).
 *
 * Other tables have no flows. Each list is in (start, ordinal, table name)
 * order, refs to the same event in Flow row order, and holds
 * at most NX_FLOWS_MAX refs: beyond that the first NX_FLOWS_MAX in the order
 * the table's rows are read (start order for timeline tables nxprof writes)
 * are kept and `truncated` is set.
 *
 * Cost: E's id, flow_id and start columns are read as query/event.h reads a
 * row (nx_event_read_fields; a start hint makes it one page); a device
 * event's Flow rows are found with two scans pruned by page statistics on
 * out_id and on in_id ([x, x]); each linked table is scanned
 * over its id and start columns pruned to [least, greatest] wanted id (ids
 * grow with the rows in nxprof's tables), then each ref's end and track come
 * from a one-instant window at its start. A SystemProfileEvents event with
 * flow ids costs one pass over the table's timing, track and flow_id columns.
 */
#ifndef NX_QUERY_FLOWS_H
#define NX_QUERY_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

/* nx_flows_run: the table has no row with that ordinal. */
enum { NX_FLOWS_NO_EVENT = 2 };
#define NX_FLOWS_MAX 1000
#define NX_FLOWS_OWN 64

typedef struct nx_flow_ref {
    const char *table;            /* the linked event's timeline table (static text) */
    int64_t ordinal, start, end;  /* end == start for point events */
    char *track;                  /* malloc'd, NUL-terminated */
    size_t track_len;
    char *dependency_type;        /* device: NULL for null; malloc'd */
    bool has_gap;
    int64_t gap_time;
    char *flow_id;                /* SystemProfileEvents: the shared value; malloc'd */
    size_t seq;                   /* the order it was found in (ties of the list order) */
} nx_flow_ref;

typedef struct nx_flows {
    bool device;                  /* from Flow (dependency_type, gap_time), else flow_id */
    nx_flow_ref *pred, *succ;
    size_t n_pred, n_succ;
    uint64_t unresolved;          /* device: Flow rows whose other end was not found */
    bool truncated;               /* a list was cut at NX_FLOWS_MAX */
} nx_flows;

/* The flows of row `ordinal` of `table` (a catalogue table) of profile_dir;
 * start_hint: the row's start, or NULL (event.h). 0 (*out filled; nx_flows_free
 * it), NX_PROFILE_TABLE_ABSENT, NX_FLOWS_NO_EVENT, or -1 with err naming the
 * table or file. */
int nx_flows_run(const char *profile_dir, const char *table, int64_t ordinal, const int64_t *start_hint,
                 nx_flows *out, nx_error *err);
void nx_flows_free(nx_flows *f);

#endif
