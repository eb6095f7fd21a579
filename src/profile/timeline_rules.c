/* timeline_rules.c — the timeline tables, their tracks and labels (rules in timeline_rules.h). */
#include "profile/timeline_rules.h"

#include <string.h>

#include "schema/schema.h"

static const nx_timeline_info TIMELINES[] = {
    {"Instruction", "start_ts", "end_ts", NX_TRACK_INSTRUCTION, false},
    {"DmaPacketAggregated", "start_ts", "end_ts", NX_TRACK_DMA, false},
    {"DmaPacket", "start_ts", "end_ts", NX_TRACK_DMA, false},
    {"CcInstruction", "start_ts", "end_ts", NX_TRACK_CC_CORE, false},
    {"SemaphoreUpdate", "timestamp", NULL, NX_TRACK_SEMAPHORE, false},
    {"CcOp", "start_ts", "end_ts", NX_TRACK_CC_STREAM, false},
    {"SystemProfileEvents", "start_ts", "end_ts", NX_TRACK_SYSTEM, true},
    {"CoreBarriers", "start_ts", "end_ts", NX_TRACK_ENGINE, false},
    {"SbufAllocation", "start_ts", "end_ts", NX_TRACK_PARTITION, false},
};
#define N_TIMELINES (sizeof TIMELINES / sizeof TIMELINES[0])
_Static_assert(N_TIMELINES == NX_TIMELINE_TABLES, "NX_TIMELINE_TABLES must count TIMELINES");

size_t nx_timeline_count(void) { return N_TIMELINES; }
const nx_timeline_info *nx_timeline_at(size_t i) { return i < N_TIMELINES ? &TIMELINES[i] : NULL; }

const nx_timeline_info *nx_timeline_find(const char *table)
{
    for (size_t i = 0; i < N_TIMELINES; i++)
        if (strcmp(TIMELINES[i].table, table) == 0)
            return &TIMELINES[i];
    return NULL;
}

static const struct {
    const char *table;
    const char *labels[NX_TLX_MAX_LABELS + 1];
} LABELS[] = {
    {"Instruction", {"opcode", "hlo_name", "raw_framework_id", "framework_name", NULL}},
    {"DmaPacketAggregated", {"transfer_bytes", "queue_type", NULL}},
    {"DmaPacket", {"transfer_bytes", NULL}},
    {"CcInstruction", {"description", NULL}},
    {"CcOp", {"operation", NULL}},
    {"SemaphoreUpdate", {"value", NULL}},
    {"SystemProfileEvents", {"name", "trace_event_source", NULL}},
    {"CoreBarriers", {"id", "semaphore", NULL}},
    {"SbufAllocation", {"tensor_name", "opcode", NULL}},
};

const char *const *nx_timeline_labels(const char *table)
{
    for (size_t i = 0; i < sizeof LABELS / sizeof LABELS[0]; i++)
        if (strcmp(LABELS[i].table, table) == 0)
            return LABELS[i].labels;
    return NULL;
}

enum { G_COMPUTE, G_DMA, G_SEMAPHORE, G_CC, G_MEMORY, G_SYSTEM };

static const nx_timeline_group GROUPS[] = {
    [G_COMPUTE] = {"compute", "Compute engines"}, [G_DMA] = {"dma", "DMA queues"},
    [G_SEMAPHORE] = {"semaphore", "Semaphores"},  [G_CC] = {"cc", "Collectives (CC)"},
    [G_MEMORY] = {"memory", "SBUF memory"},       [G_SYSTEM] = {"system", "System events"},
};
_Static_assert(sizeof GROUPS / sizeof GROUPS[0] == NX_TIMELINE_GROUPS, "NX_TIMELINE_GROUPS must count GROUPS");

const nx_timeline_group *nx_timeline_group_at(size_t i) { return i < NX_TIMELINE_GROUPS ? &GROUPS[i] : NULL; }

#define MIDDOT "\xc2\xb7" /* U+00B7 in UTF-8 */

static const nx_timeline_view VIEWS[] = {
    {"Instruction", G_COMPUTE, "", "Instructions", {"framework_name", "raw_framework_id", "hlo_name", "opcode", NULL},
     "opcode", "opcode"},
    {"CoreBarriers", G_COMPUTE, " " MIDDOT " barriers", "Core barriers", {"id", NULL}, "compiler_operands", "id"},
    {"DmaPacketAggregated", G_DMA, "", "DMA transfers (aggregated by queue)", {"track", NULL}, "variable", "track"},
    {"DmaPacket", G_DMA, " " MIDDOT " packets", "DMA packets (individual)", {"track", NULL}, "variable", "track"},
    {"SemaphoreUpdate", G_SEMAPHORE, "", "Semaphore updates", {NULL}, "id", "track"},
    {"CcInstruction", G_CC, "", "Collective (CC) ops", {"description", NULL}, "description", "description"},
    {"CcOp", G_CC, " " MIDDOT " ops", NULL, {"operation", NULL}, "operation", "operation"},
    {"SbufAllocation", G_MEMORY, "", "SBUF allocations", {"tensor_name", NULL}, "tensor_name", "tensor_name"},
    {"SystemProfileEvents", G_SYSTEM, "", "System and framework events", {"name", NULL}, "name", "name"},
};
_Static_assert(sizeof VIEWS / sizeof VIEWS[0] == NX_TIMELINE_TABLES, "one view per timeline table");

const nx_timeline_view *nx_timeline_view_at(size_t i) { return i < NX_TIMELINE_TABLES ? &VIEWS[i] : NULL; }

const nx_timeline_view *nx_timeline_view_find(const char *table)
{
    for (size_t i = 0; i < NX_TIMELINE_TABLES; i++)
        if (strcmp(VIEWS[i].table, table) == 0)
            return &VIEWS[i];
    return NULL;
}

/* The label the server derives instead of reading it (nx_timeline_labels). */
static bool is_derived(const char *table, const char *label)
{
    return strcmp(table, "Instruction") == 0 && strcmp(label, "framework_name") == 0;
}

static bool field_is(const nx_schema_field *f, const char *type) { return f && strcmp(f->type, type) == 0; }

bool nx_timeline_label_is_string(const char *table, const char *label)
{
    if (is_derived(table, label))
        return true;
    const nx_schema_table *st = nx_schema_table_find(table);
    return field_is(st ? nx_schema_field_find(st, label) : NULL, "string");
}

/* Appends name to out[0..*n) unless it is there already or out is full. */
static void put_once(const char **out, size_t cap, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(out[i], name) == 0)
            return;
    if (*n < cap)
        out[(*n)++] = name;
}

size_t nx_timeline_search_fields(const char *table, const char **out, size_t cap)
{
    const nx_timeline_view *v = nx_timeline_view_find(table);
    const nx_schema_table *st = nx_schema_table_find(table);
    size_t n = 0;
    if (!v || !st)
        return 0;
    put_once(out, cap, &n, v->search_default);
    for (size_t i = 0; i < st->n_fields; i++)
        if (field_is(&st->fields[i], "string") || field_is(&st->fields[i], "integer"))
            put_once(out, cap, &n, st->fields[i].name);
    put_once(out, cap, &n, "track");
    return n;
}

size_t nx_timeline_aggregate_fields(const char *table, const char **out, size_t cap)
{
    const nx_timeline_view *v = nx_timeline_view_find(table);
    const char *const *labels = nx_timeline_labels(table);
    size_t n = 0;
    if (!v || !labels)
        return 0;
    put_once(out, cap, &n, v->aggregate_default);
    put_once(out, cap, &n, "track");
    for (size_t i = 0; labels[i]; i++)
        if (!is_derived(table, labels[i]))
            put_once(out, cap, &n, labels[i]);
    return n;
}

/* Appends the decimal text of v at buf + n; returns the new length. */
static size_t put_decimal(char *buf, size_t n, int64_t v)
{
    char tmp[24];
    size_t k = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[n++] = '-';
    while (k)
        buf[n++] = tmp[--k];
    return n;
}

/* The track name of an integer key: prefix + decimal v into buf; returns the length. */
size_t nx_track_int_name(nx_track_kind kind, int64_t v, char *buf)
{
    const char *prefix = kind == NX_TRACK_DMA        ? "queue"
                         : kind == NX_TRACK_CC_CORE  ? "CC"
                         : kind == NX_TRACK_SYSTEM   ? "nc"
                         : kind == NX_TRACK_PARTITION ? "partition"
                                                     : "stream";
    size_t n = strlen(prefix);
    memcpy(buf, prefix, n);
    return put_decimal(buf, n, v);
}

const char *nx_track_of_row(nx_track_kind kind, const nx_track_source *src, const nxpq_batch *b, const int *cols,
                            size_t i, char *buf, size_t *len)
{
    nx_track_values v;
    for (size_t k = 0; k < src->n; k++) {
        v.ok[k] = false;
        if (cols[k] < 0)
            continue;
        const nxpq_column_data *c = &b->columns[cols[k]];
        v.ok[k] = src->is_int[k] ? nx_column_int(c, i, &v.i[k]) : nx_column_str(c, i, &v.s[k], &v.len[k]);
    }
    return nx_track_name(kind, &v, buf, len);
}

nx_track_source nx_track_sources(nx_track_kind kind)
{
    switch (kind) {
    case NX_TRACK_INSTRUCTION:
        return (nx_track_source){{"timeline_track", "engine"}, {false, false}, {false, true}, 2};
    case NX_TRACK_DMA: return (nx_track_source){{"queue_name", "queue_idx"}, {false, true}, {false, false}, 2};
    case NX_TRACK_SEMAPHORE: return (nx_track_source){{"id"}, {false}, {true}, 1};
    case NX_TRACK_CC_CORE: return (nx_track_source){{"core_idx"}, {true}, {true}, 1};
    case NX_TRACK_CC_STREAM: return (nx_track_source){{"stream_id"}, {true}, {true}, 1};
    case NX_TRACK_ENGINE: return (nx_track_source){{"engine_name"}, {false}, {true}, 1};
    case NX_TRACK_PARTITION: return (nx_track_source){{"partition"}, {true}, {true}, 1};
    case NX_TRACK_SYSTEM:
        return (nx_track_source){{"trace_event_source", "nc_idx", "instance_id", "process_id", "thread_id",
                                  "worker_gid"},
                                 {false, true, false, true, true, true},
                                 {true, false, false, true, true, false},
                                 6};
    }
    return (nx_track_source){{NULL}, {false}, {false}, 0};
}

/* "[rank<worker_gid>/]<instance_id>/<process_id>/<thread_id>" of
 * SystemProfileEvents' sources 5, 2, 3, 4 into buf (a null part is empty; a
 * null worker_gid gives no prefix). */
static size_t thread_name(const nx_track_values *v, char *buf)
{
    size_t n = 0;
    if (v->ok[5]) {
        memcpy(buf, "rank", 4);
        n = put_decimal(buf, 4, v->i[5]);
        buf[n++] = '/';
    }
    if (v->ok[2]) {
        size_t len = v->len[2] < NX_TRACK_INSTANCE_MAX ? v->len[2] : NX_TRACK_INSTANCE_MAX;
        memcpy(buf + n, v->s[2], len);
        n += len;
    }
    buf[n++] = '/';
    if (v->ok[3])
        n = put_decimal(buf, n, v->i[3]);
    buf[n++] = '/';
    if (v->ok[4])
        n = put_decimal(buf, n, v->i[4]);
    return n;
}

const char *nx_track_name(nx_track_kind kind, const nx_track_values *v, char *buf, size_t *len)
{
    switch (kind) {
    case NX_TRACK_INSTRUCTION:
        if (v->ok[0] && v->len[0] > 0)
            return *len = v->len[0], v->s[0];
        if (v->ok[1])
            return *len = v->len[1], v->s[1];
        break;
    case NX_TRACK_DMA:
        if (v->ok[0])
            return *len = v->len[0], v->s[0];
        if (v->ok[1])
            return *len = nx_track_int_name(NX_TRACK_DMA, v->i[1], buf), buf;
        break;
    case NX_TRACK_SEMAPHORE:
    case NX_TRACK_ENGINE:
        if (v->ok[0])
            return *len = v->len[0], v->s[0];
        break;
    case NX_TRACK_CC_CORE:
    case NX_TRACK_CC_STREAM:
    case NX_TRACK_PARTITION:
        if (v->ok[0])
            return *len = nx_track_int_name(kind, v->i[0], buf), buf;
        break;
    case NX_TRACK_SYSTEM: {
        bool framework = v->ok[0] && v->len[0] == 9 && memcmp(v->s[0], "framework", 9) == 0;
        if (!framework && v->ok[1])
            return *len = nx_track_int_name(NX_TRACK_SYSTEM, v->i[1], buf), buf;
        return *len = thread_name(v, buf), buf;
    }
    }
    *len = 0;
    return "";
}

