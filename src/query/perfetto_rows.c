/*
 * perfetto_rows.c — the Perfetto row writer (row_writer.h): a profile's
 * timeline tables as one Perfetto protobuf trace (perfetto_trace.h), which
 * ui.perfetto.dev and trace_processor open natively (docs/query.md
 * "export-perfetto").
 *
 * Tracks (written first, from query/tracks.h, in the viewer's order): a
 * top-level track per viewer group ("Compute engines", "DMA queues",
 * "Semaphores", "Collectives (CC)", "System events"), and under it a track per
 * timeline track named as the viewer names it: the track name plus the table's
 * suffix ("qSyncIO · packets"); SystemProfileEvents' as the System Trace
 * Viewer names them (entry_track): "NeuronCore 0", and a framework thread
 * under a track for its process, named by its labels (thread_label.h:
 * "python3 (469)" / "thread 520 (pt_autograd_0)") or else "process <pid>" /
 * "thread <tid>". Every event track's
 * description is its raw track name (window.h's track rule), the key a script
 * matches the Parquet rows on.
 *
 * Slices: one per row, in each table's start-time order: a point event
 * (SemaphoreUpdate) is an instant, an interval a SLICE_BEGIN at start_ts and a
 * SLICE_END at end_ts (end_ts before start_ts is taken as start_ts). Perfetto
 * requires slices on one track to nest; an event that overlaps one still open
 * without fitting inside it goes on the track's next lane, a child track of the
 * same name (lane 1, 2, ... made as needed), so no event is dropped. Each
 * track's lanes keep a stack of open end times, so memory is the deepest
 * nesting times the lanes, never the rows. Name: the table's default search
 * field (Instruction opcode, DMA variable, CcInstruction description, CcOp
 * operation, SemaphoreUpdate id, SystemProfileEvents name), else the table's
 * name; category: the table's name. Args (debug annotations): every non-null
 * field of the row, as the details panel lists them: integers, floats,
 * booleans and strings typed, lists as JSON. Flows: perfetto_flows.c (Flow
 * rows it cannot link are counted in the writer's note).
 * Counter tracks: perfetto_counters.c, after the last table.
 */
#include <stdlib.h>
#include <string.h>

#include "query/engine/json_cell.h"
#include "query/perfetto_internal.h"
#include "query/engine/row_writer.h"
#include "query/tracks.h"
#include "util/pb_write.h"

typedef struct pf_lane {
    uint64_t uuid;
    int64_t *ends;              /* open slices' end times, innermost last */
    size_t n, cap;
} pf_lane;

typedef struct pf_track {
    uint64_t uuid;
    char *name;                 /* its descriptor's name (lanes repeat it) */
    pf_lane *lanes;
    size_t n_lanes;
} pf_track;

typedef struct pf_rows {
    nx_row_writer base;
    nx_pftrace t;
    char *dir;
    int64_t start, end;
    pf_track *tracks;
    size_t n_tracks, cap_tracks;
    nx_strmap track_of;         /* "<table>\0<track name>" -> tracks index */
    nx_strmap process_of;       /* "<rank>\0<process label>" -> uuid */
    uint64_t group_uuid[NX_TIMELINE_GROUPS];
    nx_pf_flows flows;
    /* the current table */
    const nx_schema_table *schema;
    const nx_timeline_view *view;
    bool point;
    int name_field, id_field, flow_field, flow_code;
    uint64_t *arg_iid;          /* per schema field: its interned name's iid (0: not yet) */
    uint64_t cat_iid;           /* the table's interned category (0: not yet) */
    uint32_t *win_track;        /* window track id -> tracks index + 1 (0: not looked up) */
    size_t win_cap;
    const nx_window *w;
    nx_strbuf scratch;
} pf_rows;

static int oom(nx_error *err, const char *what)
{
    snprintf(err->msg, sizeof err->msg, "Perfetto export: out of memory (%s)", what);
    return -1;
}

/* ------------------------------------------------------------ tracks -- */

static uint64_t group_track(pf_rows *p, size_t g)
{
    if (!p->group_uuid[g]) {
        nx_pftrack d = {.uuid = nx_pftrace_uuid(&p->t), .name = nx_timeline_group_at(g)->label, .rank = (int32_t)g,
                        .ordered_children = true};
        nx_pftrace_track(&p->t, &d);
        p->group_uuid[g] = d.uuid;
    }
    return p->group_uuid[g];
}

/* The track of a framework thread's process, named `label`, made when first
 * met (keyed by rank and label). 0 on out of memory. */
static uint64_t process_track(pf_rows *p, const nx_track_entry *e, const char *label, int32_t rank, nx_error *err)
{
    nx_strbuf *k = &p->scratch;
    k->len = 0;
    nx_strbuf_printf(k, "%lld", e->worker.ok ? (long long)e->worker.i : -1LL);
    nx_strbuf_putc(k, '\0');
    nx_strbuf_puts(k, label);
    uint64_t uuid;
    if (nx_strbuf_failed(k))
        return oom(err, "track names"), 0;
    if (nx_strmap_get(&p->process_of, k->data, k->len, &uuid))
        return uuid;
    nx_pftrack d = {.uuid = nx_pftrace_uuid(&p->t), .parent = group_track(p, e->view->group), .name = label,
                    .rank = rank, .ordered_children = true};
    if (nx_strmap_put(&p->process_of, k->data, k->len, d.uuid) < 0)
        return oom(err, "track names"), 0;
    nx_pftrace_track(&p->t, &d);
    return d.uuid;
}

/* Adds a track of `table` named `raw` (window.h's name) with descriptor name
 * `name` under parent; its index into *index. 0 or -1. */
static int add_track(pf_rows *p, const char *table, const char *raw, size_t raw_len, const char *name,
                     uint64_t parent, int32_t rank, size_t *index, nx_error *err)
{
    if (p->n_tracks == p->cap_tracks) {
        size_t cap = p->cap_tracks ? p->cap_tracks * 2 : 64;
        pf_track *g = realloc(p->tracks, cap * sizeof *g);
        if (!g)
            return oom(err, "tracks");
        p->tracks = g;
        p->cap_tracks = cap;
    }
    nx_strbuf *k = &p->scratch;
    k->len = 0;
    nx_strbuf_append(k, table, strlen(table) + 1);
    nx_strbuf_append(k, raw, raw_len);
    pf_track *tr = &p->tracks[p->n_tracks];
    *tr = (pf_track){.uuid = nx_pftrace_uuid(&p->t), .name = strdup(name)};
    if (nx_strbuf_failed(k) || !tr->name || nx_strmap_put(&p->track_of, k->data, k->len, p->n_tracks) < 0) {
        free(tr->name);
        return oom(err, "tracks");
    }
    char *desc = strndup(raw, raw_len);
    if (!desc)
        return oom(err, "tracks");
    nx_pftrack d = {.uuid = tr->uuid, .parent = parent, .name = name, .description = desc, .rank = rank};
    nx_pftrace_track(&p->t, &d);
    free(desc);
    *index = p->n_tracks++;
    return 0;
}

/* The descriptor of track entry e (rules above): SystemProfileEvents tracks as
 * the System Trace Viewer names them (web/js/layout.js): "NeuronCore <n>"; a
 * labelled thread under its process's label (a ranked one's starts "rank <w> /
 * "); another thread as "thread <tid>" under "process <pid>"; else the track
 * name. 0 or -1. */
static int entry_track(pf_rows *p, const nx_track_entry *e, int32_t rank, nx_error *err)
{
    uint64_t parent = group_track(p, e->view->group);
    const char *name = e->name;
    char buf[600], proc[300];
    if (e->has_parts && e->nc.ok) {
        snprintf(buf, sizeof buf, "NeuronCore %lld", (long long)e->nc.i);
        name = buf;
    } else if (e->has_parts && e->labelled && e->process_label && e->thread_label) {
        if (!(parent = process_track(p, e, e->process_label, rank, err)))
            return -1;
        name = e->thread_label;
    } else if (e->has_parts && e->pid.ok && e->tid.ok) {
        if (e->worker.ok)
            snprintf(proc, sizeof proc, "rank %lld / process %lld", (long long)e->worker.i, (long long)e->pid.i);
        else
            snprintf(proc, sizeof proc, "process %lld", (long long)e->pid.i);
        if (!(parent = process_track(p, e, proc, rank, err)))
            return -1;
        snprintf(buf, sizeof buf, "thread %lld", (long long)e->tid.i);
        name = buf;
    } else if (e->view->track_suffix[0]) {
        snprintf(buf, sizeof buf, "%s%s", e->name, e->view->track_suffix);
        name = buf;
    }
    size_t index;
    return add_track(p, e->view->table, e->name, e->name_len, name, parent, rank, &index, err);
}

static int write_tracks(pf_rows *p, nx_error *err)
{
    nx_tracks tr;
    if (nx_tracks_read(p->dir, &tr, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < tr.n && rc == 0; i++)
        rc = entry_track(p, &tr.tracks[i], (int32_t)i, err);
    nx_tracks_free(&tr);
    return rc;
}

/* The tracks index of window track id `id` of the current table, made when
 * the track list did not have it. -1 on out of memory. */
static int64_t row_track(pf_rows *p, uint32_t id, nx_error *err)
{
    if (id >= p->win_cap) {
        size_t cap = id + 1 > p->win_cap * 2 ? id + 1 : p->win_cap * 2;
        uint32_t *g = realloc(p->win_track, cap * sizeof *g);
        if (!g)
            return oom(err, "tracks");
        memset(g + p->win_cap, 0, (cap - p->win_cap) * sizeof *g);
        p->win_track = g;
        p->win_cap = cap;
    }
    if (p->win_track[id])
        return p->win_track[id] - 1;
    size_t len;
    const char *raw = nx_window_track_name(p->w, id, &len);
    nx_strbuf *k = &p->scratch;
    k->len = 0;
    nx_strbuf_append(k, p->view->table, strlen(p->view->table) + 1);
    nx_strbuf_append(k, raw, len);
    uint64_t index;
    if (nx_strbuf_failed(k))
        return oom(err, "tracks");
    if (!nx_strmap_get(&p->track_of, k->data, k->len, &index)) {
        char name[600];
        size_t at;
        snprintf(name, sizeof name, "%.*s%s", (int)len, raw, p->view->track_suffix);
        if (add_track(p, p->view->table, raw, len, name, group_track(p, p->view->group), (int32_t)p->n_tracks, &at,
                      err) < 0)
            return -1;
        index = at;
    }
    p->win_track[id] = (uint32_t)index + 1;
    return (int64_t)index;
}

/* ------------------------------------------------------------ slices -- */

static void put_end(pf_rows *p, pf_lane *l)
{
    nx_pftrace_event_begin(&p->t, l->ends[--l->n], NX_PF_SLICE_END, l->uuid);
    nx_pftrace_event_end(&p->t);
}

/* The lane of track tr an interval [s, e] goes on: the first whose innermost
 * open slice (after closing those ended by s) contains it; a new lane when none
 * does. Its end is pushed. NULL on out of memory. */
static pf_lane *take_lane(pf_rows *p, pf_track *tr, int64_t s, int64_t e)
{
    for (size_t i = 0;; i++) {
        if (i == tr->n_lanes) {
            pf_lane *g = realloc(tr->lanes, (i + 1) * sizeof *g);
            if (!g)
                return NULL;
            tr->lanes = g;
            g[i] = (pf_lane){.uuid = tr->uuid};
            if (i > 0) {
                nx_pftrack d = {.uuid = nx_pftrace_uuid(&p->t), .parent = tr->uuid, .name = tr->name,
                                .rank = (int32_t)i};
                nx_pftrace_track(&p->t, &d);
                g[i].uuid = d.uuid;
            }
            tr->n_lanes++;
        }
        pf_lane *l = &tr->lanes[i];
        while (l->n && l->ends[l->n - 1] <= s)
            put_end(p, l);
        if (l->n && l->ends[l->n - 1] < e)
            continue;
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 8;
            int64_t *g = realloc(l->ends, cap * sizeof *g);
            if (!g)
                return NULL;
            l->ends = g;
            l->cap = cap;
        }
        l->ends[l->n++] = e;
        return l;
    }
}

/* The arg's name: its iid, interned on first use and then kept per field (a
 * row has dozens of args; looking each name up per row cost more than the
 * rest of the row). */
static void put_arg_name(pf_rows *p, size_t f)
{
    const char *name = p->schema->fields[f].name;
    uint64_t iid = p->arg_iid[f];
    if (!iid)
        iid = p->arg_iid[f] = nx_pftrace_intern(&p->t, NX_PF_ARG_NAME, name, strlen(name));
    if (iid)
        nx_pbw_varint(&p->t.buf, NX_PF_DA_NAME_IID, iid);
    else
        nx_pbw_bytes(&p->t.buf, NX_PF_DA_NAME, name, strlen(name));
}

/* Field f of batch row i as a debug annotation; nothing for a null. */
static void put_arg(pf_rows *p, size_t f, const nxpq_column_data *c, size_t i)
{
    if (!c || (c->valid && !c->valid[i]) || c->type == NXPQ_UNSUPPORTED)
        return;
    nx_strbuf *b = &p->t.buf;
    size_t h = nx_pbw_begin(b, NX_PF_TE_DEBUG_ANNOTATIONS);
    put_arg_name(p, f);
    int64_t v = 0;
    const char *s = "";
    size_t len = 0;
    switch (c->type) {
    case NXPQ_INT32:
    case NXPQ_INT64: nx_column_int(c, i, &v); nx_pbw_varint(b, NX_PF_DA_INT, (uint64_t)v); break;
    case NXPQ_FLOAT: nx_pbw_double(b, NX_PF_DA_DOUBLE, c->values.f32[i]); break;
    case NXPQ_DOUBLE: nx_pbw_double(b, NX_PF_DA_DOUBLE, c->values.f64[i]); break;
    case NXPQ_BOOLEAN: nx_pbw_varint(b, NX_PF_DA_BOOL, c->values.b[i] != 0); break;
    case NXPQ_STRING: nx_column_str(c, i, &s, &len); nx_pbw_bytes(b, NX_PF_DA_STRING, s, len); break;
    default:
        p->scratch.len = 0;
        nx_json_cell(&p->scratch, c, i);
        nx_pbw_bytes(b, NX_PF_DA_JSON, p->scratch.data, p->scratch.len);
        break;
    }
    nx_pbw_end(b, h);
}

static void put_name(pf_rows *p, const nx_row_batch *rb, size_t i)
{
    const char *s = p->schema->name;
    size_t len = strlen(s);
    char num[24];
    const nxpq_column_data *c = p->name_field >= 0 ? rb->cells[p->name_field] : NULL;
    int64_t v;
    if (c && c->type == NXPQ_STRING && nx_column_str(c, i, &s, &len)) {
        /* s, len set */
    } else if (c && (c->type == NXPQ_INT64 || c->type == NXPQ_INT32) && nx_column_int(c, i, &v)) {
        len = (size_t)snprintf(num, sizeof num, "%lld", (long long)v);
        s = num;
    }
    uint64_t iid = nx_pftrace_intern(&p->t, NX_PF_EVENT_NAME, s, len);
    if (iid)
        nx_pbw_varint(&p->t.buf, NX_PF_TE_NAME_IID, iid);
    else
        nx_pbw_bytes(&p->t.buf, NX_PF_TE_NAME, s, len);
}

/* The begin (or instant) of window row k of the batch on lane uuid. */
static void put_event(pf_rows *p, const nx_row_batch *rb, size_t k, int type, uint64_t uuid)
{
    size_t i = rb->b->rows[k];
    nx_pftrace_event_begin(&p->t, rb->b->start[k], type, uuid);
    put_name(p, rb, i);
    uint64_t cat = p->cat_iid;
    if (!cat)
        cat = p->cat_iid = nx_pftrace_intern(&p->t, NX_PF_CATEGORY, p->schema->name, strlen(p->schema->name));
    if (cat)
        nx_pbw_varint(&p->t.buf, NX_PF_TE_CATEGORY_IIDS, cat);
    else
        nx_pbw_bytes(&p->t.buf, NX_PF_TE_CATEGORIES, p->schema->name, strlen(p->schema->name));
    int64_t id;
    if (p->flow_code != NX_PF_FLOW_NONE && p->id_field >= 0 && rb->cells[p->id_field] &&
        nx_column_int(rb->cells[p->id_field], i, &id))
        nx_pf_flows_put(&p->flows, p->flow_code, id, &p->t);
    if (p->flow_field >= 0 && rb->cells[p->flow_field])
        nx_pf_list_flows_put(rb->cells[p->flow_field], i, &p->t);
    for (size_t f = 0; f < p->schema->n_fields; f++)
        put_arg(p, f, rb->cells[f], i);
    nx_pftrace_event_end(&p->t);
}

static int rows(nx_row_writer *base, const nx_row_batch *rb, nx_error *err)
{
    pf_rows *p = (pf_rows *)base;
    p->w = rb->w;
    for (size_t j = 0; j < rb->n; j++) {
        size_t k = nx_row_batch_k(rb, j);
        int64_t at = row_track(p, rb->b->track[k], err);
        if (at < 0)
            return -1;
        pf_track *tr = &p->tracks[at];
        if (p->point) {
            put_event(p, rb, k, NX_PF_INSTANT, tr->uuid);
        } else {
            int64_t s = rb->b->start[k], e = rb->b->end[k] < s ? s : rb->b->end[k];
            pf_lane *l = take_lane(p, tr, s, e);
            if (!l)
                return oom(err, "open slices");
            put_event(p, rb, k, NX_PF_SLICE_BEGIN, l->uuid);
        }
        if (nx_pftrace_flush(&p->t, false) < 0) {
            snprintf(err->msg, sizeof err->msg, "%s: error writing the Perfetto trace", p->schema->name);
            return -1;
        }
    }
    return 0;
}

static int field_index(const nx_schema_table *s, const char *name)
{
    for (size_t f = 0; name && f < s->n_fields; f++)
        if (strcmp(s->fields[f].name, name) == 0)
            return (int)f;
    return -1;
}

static int begin_table(nx_row_writer *base, const nx_row_table *t, nx_error *err)
{
    pf_rows *p = (pf_rows *)base;
    p->schema = t->schema;
    p->view = nx_timeline_view_find(t->table);
    p->point = t->timeline->end_column == NULL;
    p->name_field = field_index(t->schema, p->view->search_default);
    p->id_field = field_index(t->schema, "id");
    p->flow_field = strcmp(t->table, "SystemProfileEvents") == 0 ? field_index(t->schema, "flow_id") : -1;
    p->flow_code = nx_pf_flow_code(t->table);
    if (p->win_track)
        memset(p->win_track, 0, p->win_cap * sizeof *p->win_track);
    p->cat_iid = 0;
    free(p->arg_iid);
    if (!(p->arg_iid = calloc(t->schema->n_fields + 1, sizeof *p->arg_iid)))
        return oom(err, "arg names");
    return 0;
}

/* Closes every open slice (innermost first). */
static int end_table(nx_row_writer *base, nx_error *err)
{
    pf_rows *p = (pf_rows *)base;
    for (size_t i = 0; i < p->n_tracks; i++)
        for (size_t l = 0; l < p->tracks[i].n_lanes; l++)
            while (p->tracks[i].lanes[l].n)
                put_end(p, &p->tracks[i].lanes[l]);
    if (nx_pftrace_flush(&p->t, false) == 0)
        return 0;
    snprintf(err->msg, sizeof err->msg, "%s: error writing the Perfetto trace", p->schema->name);
    return -1;
}

static int flush(nx_row_writer *base, nx_error *err)
{
    pf_rows *p = (pf_rows *)base;
    if (nx_pftrace_flush(&p->t, true) == 0)
        return 0;
    snprintf(err->msg, sizeof err->msg, "error writing the Perfetto trace");
    return -1;
}

static int finish(nx_row_writer *base, nx_error *err)
{
    pf_rows *p = (pf_rows *)base;
    if (p->flows.unresolved)
        snprintf(base->note, sizeof base->note,
                 "%llu Flow rows name a table other than instruction and dma_block, or a null end: no arrow drawn",
                 (unsigned long long)p->flows.unresolved);
    if (nx_pf_counters_write(&p->t, p->dir, p->start, p->end, err) < 0)
        return -1;
    return flush(base, err);
}

static void pf_free(nx_row_writer *base)
{
    pf_rows *p = (pf_rows *)base;
    if (!p)
        return;
    for (size_t i = 0; i < p->n_tracks; i++) {
        for (size_t l = 0; l < p->tracks[i].n_lanes; l++)
            free(p->tracks[i].lanes[l].ends);
        free(p->tracks[i].lanes);
        free(p->tracks[i].name);
    }
    free(p->tracks);
    nx_strmap_free(&p->track_of);
    nx_strmap_free(&p->process_of);
    nx_pf_flows_free(&p->flows);
    nx_pftrace_free(&p->t);
    nx_strbuf_free(&p->scratch);
    free(p->win_track);
    free(p->arg_iid);
    free(p->dir);
    free(p);
}

static const nx_row_writer_ops OPS = {begin_table, rows, end_table, flush, finish, pf_free};

static nx_row_writer *perfetto_rows_open(const nx_row_target *target, nx_error *err)
{
    pf_rows *p = calloc(1, sizeof *p);
    if (!p) {
        oom(err, "the writer");
        return NULL;
    }
    p->base.ops = &OPS;
    p->start = target->start;
    p->end = target->end;
    if (!(p->dir = strdup(target->profile_dir)) || nx_pftrace_init(&p->t, target->f) < 0) {
        oom(err, "the writer");
        pf_free(&p->base);
        return NULL;
    }
    if (nx_pf_flows_read(p->dir, &p->flows, err) < 0 || write_tracks(p, err) < 0) {
        pf_free(&p->base);
        return NULL;
    }
    return &p->base;
}

const nx_row_format nx_format_perfetto = {"perfetto", ".pftrace", false, perfetto_rows_open};
