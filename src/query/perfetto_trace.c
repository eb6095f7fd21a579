/*
 * perfetto_trace.c — Perfetto trace packets (see perfetto_trace.h).
 */
#include "query/perfetto_trace.h"

#include <string.h>

#include "util/pb_write.h"

/* Trace, TracePacket and descriptor fields (Perfetto's protos). */
enum {
    TRACE_PACKET = 1,
    TP_TIMESTAMP = 8, TP_SEQUENCE_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED_DATA = 12, TP_SEQUENCE_FLAGS = 13,
    TP_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
    TE_TYPE = 9, TE_TRACK_UUID = 11,
    TD_UUID = 1, TD_NAME = 2, TD_PARENT_UUID = 5, TD_COUNTER = 8, TD_CHILD_ORDERING = 11, TD_SIBLING_ORDER_RANK = 12,
    TD_DESCRIPTION = 14, CHILD_ORDERING_EXPLICIT = 3,
    CD_UNIT = 3, CD_UNIT_NAME = 6,
    INTERNED_IID = 1, INTERNED_NAME = 2
};
/* InternedData's field per kind: event_names, debug_annotation_names, event_categories. */
static const uint32_t INTERNED_FIELD[NX_PF_KINDS] = {2, 3, 1};

int nx_pftrace_init(nx_pftrace *t, FILE *f)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    size_t p = nx_pbw_begin(&t->buf, TRACE_PACKET);
    nx_pbw_varint(&t->buf, TP_SEQUENCE_ID, NX_PF_SEQUENCE);
    nx_pbw_varint(&t->buf, TP_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    nx_pbw_end(&t->buf, p);
    return nx_strbuf_failed(&t->buf) ? -1 : 0;
}

uint64_t nx_pftrace_uuid(nx_pftrace *t)
{
    return ++t->next_uuid;
}

void nx_pftrace_track(nx_pftrace *t, const nx_pftrack *d)
{
    nx_strbuf *b = &t->buf;
    size_t p = nx_pbw_begin(b, TRACE_PACKET);
    nx_pbw_varint(b, TP_SEQUENCE_ID, NX_PF_SEQUENCE);
    size_t td = nx_pbw_begin(b, TP_TRACK_DESCRIPTOR);
    nx_pbw_varint(b, TD_UUID, d->uuid);
    if (d->parent)
        nx_pbw_varint(b, TD_PARENT_UUID, d->parent);
    nx_pbw_bytes(b, TD_NAME, d->name, strlen(d->name));
    if (d->description)
        nx_pbw_bytes(b, TD_DESCRIPTION, d->description, strlen(d->description));
    if (d->ordered_children)
        nx_pbw_varint(b, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
    nx_pbw_varint(b, TD_SIBLING_ORDER_RANK, (uint64_t)(int64_t)d->rank);
    if (d->counter) {
        size_t cd = nx_pbw_begin(b, TD_COUNTER);
        if (d->unit)
            nx_pbw_varint(b, CD_UNIT, (uint64_t)d->unit);
        if (d->unit_name)
            nx_pbw_bytes(b, CD_UNIT_NAME, d->unit_name, strlen(d->unit_name));
        nx_pbw_end(b, cd);
    }
    nx_pbw_end(b, td);
    nx_pbw_end(b, p);
}

uint64_t nx_pftrace_intern(nx_pftrace *t, int kind, const char *s, size_t len)
{
    nx_strmap *m = &t->names[kind];
    uint64_t iid;
    if (nx_strmap_get(m, s, len, &iid))
        return iid;
    if (m->n >= NX_PF_MAX_INTERNED)
        return 0;
    iid = m->n + 1;
    if (nx_strmap_put(m, s, len, iid) < 0) {
        t->failed = true;
        return 0;
    }
    size_t e = nx_pbw_begin(&t->interned, INTERNED_FIELD[kind]);
    nx_pbw_varint(&t->interned, INTERNED_IID, iid);
    nx_pbw_bytes(&t->interned, INTERNED_NAME, s, len);
    nx_pbw_end(&t->interned, e);
    return iid;
}

void nx_pftrace_event_begin(nx_pftrace *t, int64_t ts, int type, uint64_t track)
{
    nx_strbuf *b = &t->buf;
    t->packet = nx_pbw_begin(b, TRACE_PACKET);
    nx_pbw_varint(b, TP_TIMESTAMP, (uint64_t)ts);
    nx_pbw_varint(b, TP_SEQUENCE_ID, NX_PF_SEQUENCE);
    nx_pbw_varint(b, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    t->event = nx_pbw_begin(b, TP_TRACK_EVENT);
    nx_pbw_varint(b, TE_TYPE, (uint64_t)type);
    nx_pbw_varint(b, TE_TRACK_UUID, track);
}

void nx_pftrace_event_end(nx_pftrace *t)
{
    nx_strbuf *b = &t->buf;
    nx_pbw_end(b, t->event);
    if (t->interned.len) {
        nx_pbw_bytes(b, TP_INTERNED_DATA, t->interned.data, t->interned.len);
        t->failed |= nx_strbuf_failed(&t->interned);
        t->interned.len = 0;
    }
    nx_pbw_end(b, t->packet);
}

int nx_pftrace_flush(nx_pftrace *t, bool force)
{
    if (t->failed || nx_strbuf_failed(&t->buf)) {
        t->failed = true;
        return -1;
    }
    if (!force && t->buf.len < (1u << 20))
        return 0;
    if (t->buf.len && fwrite(t->buf.data, 1, t->buf.len, t->f) != t->buf.len)
        t->failed = true;
    t->buf.len = 0;
    return t->failed ? -1 : 0;
}

int nx_pftrace_finish(nx_pftrace *t)
{
    int rc = nx_pftrace_flush(t, true);
    if (rc == 0 && fflush(t->f) != 0)
        rc = -1;
    nx_pftrace_free(t);
    return rc;
}

void nx_pftrace_free(nx_pftrace *t)
{
    nx_strbuf_free(&t->buf);
    nx_strbuf_free(&t->interned);
    for (int k = 0; k < NX_PF_KINDS; k++)
        nx_strmap_free(&t->names[k]);
}
