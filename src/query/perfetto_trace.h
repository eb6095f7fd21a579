/*
 * perfetto_trace.h — the packet layer of the Perfetto export: a Trace (a
 * stream of TracePacket messages, Perfetto's protobuf trace format) written
 * to a FILE through a buffer, with track descriptors, track events and
 * interned names. Field numbers are those of Perfetto's protos
 * (protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto,
 * track_descriptor.proto, counter_descriptor.proto, debug_annotation.proto,
 * interned_data/interned_data.proto).
 *
 * Sequence: every packet is on one sequence (trusted_packet_sequence_id
 * NX_PF_SEQUENCE). The first packet clears its incremental state
 * (SEQ_INCREMENTAL_STATE_CLEARED); every event packet is marked
 * SEQ_NEEDS_INCREMENTAL_STATE and carries, in its InternedData, the names it
 * is the first to use: event names, debug annotation names and categories
 * get iids 1, 2, ... per kind. Past NX_PF_MAX_INTERNED names of a kind,
 * nx_pftrace_intern returns 0 and the caller writes the name inline, so
 * memory stays bounded by that many names.
 * Timestamps are absolute ns on Perfetto's default trace clock.
 * Errors: allocation failures and write errors are sticky; nx_pftrace_flush
 * and nx_pftrace_finish report them (0 or -1).
 */
#ifndef NX_QUERY_PERFETTO_TRACE_H
#define NX_QUERY_PERFETTO_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strbuf.h"
#include "util/strmap.h"

#define NX_PF_SEQUENCE 1
#define NX_PF_MAX_INTERNED (1u << 18)

/* TrackEvent.Type */
enum { NX_PF_SLICE_BEGIN = 1, NX_PF_SLICE_END = 2, NX_PF_INSTANT = 3, NX_PF_COUNTER = 4 };
/* The interned kinds. */
enum { NX_PF_EVENT_NAME, NX_PF_ARG_NAME, NX_PF_CATEGORY, NX_PF_KINDS };
/* TrackEvent fields a caller writes between nx_pftrace_event_begin and _end. */
enum {
    NX_PF_TE_CATEGORY_IIDS = 3, NX_PF_TE_DEBUG_ANNOTATIONS = 4, NX_PF_TE_NAME_IID = 10,
    NX_PF_TE_NAME = 23, NX_PF_TE_CATEGORIES = 22, NX_PF_TE_COUNTER_VALUE = 30,
    NX_PF_TE_DOUBLE_COUNTER_VALUE = 44, NX_PF_TE_FLOW_IDS = 47, NX_PF_TE_TERMINATING_FLOW_IDS = 48
};
/* DebugAnnotation fields. */
enum {
    NX_PF_DA_NAME_IID = 1, NX_PF_DA_BOOL = 2, NX_PF_DA_INT = 4, NX_PF_DA_DOUBLE = 5, NX_PF_DA_STRING = 6,
    NX_PF_DA_JSON = 9, NX_PF_DA_NAME = 10
};
/* CounterDescriptor.Unit */
enum { NX_PF_UNIT_NONE = 0, NX_PF_UNIT_TIME_NS = 1, NX_PF_UNIT_COUNT = 2, NX_PF_UNIT_BYTES = 3 };

typedef struct nx_pftrace {
    FILE *f;
    nx_strbuf buf;                  /* whole packets not yet written */
    nx_strbuf interned;             /* the InternedData body of the packet being built */
    nx_strmap names[NX_PF_KINDS];
    uint64_t next_uuid;
    bool failed;
    size_t packet, event;           /* the open event's handles */
} nx_pftrace;

/* A track descriptor. */
typedef struct nx_pftrack {
    uint64_t uuid, parent;          /* parent 0: a top-level track */
    const char *name, *description; /* NUL-terminated; description may be NULL */
    int32_t rank;                   /* sibling_order_rank */
    bool ordered_children;          /* child_ordering EXPLICIT: children by rank */
    bool counter;                   /* a counter track: */
    int unit;                       /*   NX_PF_UNIT_* */
    const char *unit_name;          /*   or NULL */
} nx_pftrack;

/* Starts the trace (the first packet). 0 or -1 (out of memory). */
int nx_pftrace_init(nx_pftrace *t, FILE *f);
/* A new track uuid (1, 2, ...). */
uint64_t nx_pftrace_uuid(nx_pftrace *t);
void nx_pftrace_track(nx_pftrace *t, const nx_pftrack *d);
/* The iid of name s of `kind`, interned in the packet being built when new; 0
 * past NX_PF_MAX_INTERNED (write it inline). Only between event_begin/_end. */
uint64_t nx_pftrace_intern(nx_pftrace *t, int kind, const char *s, size_t len);
/* Opens an event packet at ts on `track` of `type`; the caller appends
 * TrackEvent fields to t->buf (util/pb_write.h), then calls event_end. */
void nx_pftrace_event_begin(nx_pftrace *t, int64_t ts, int type, uint64_t track);
void nx_pftrace_event_end(nx_pftrace *t);
/* Writes the complete packets when over 1 MiB are buffered (force: any). 0 or -1. */
int nx_pftrace_flush(nx_pftrace *t, bool force);
/* Flushes and frees (does not close f). 0, or -1 after any failure. */
int nx_pftrace_finish(nx_pftrace *t);
void nx_pftrace_free(nx_pftrace *t);

#endif
