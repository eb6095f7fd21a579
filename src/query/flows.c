/*
 * flows.c — the predecessors and successors of one event (rules in flows.h).
 *
 * Device events: the Flow rows of each side are collected as edges (the other
 * end's table and id, dependency_type, gap_time); each linked table is then
 * scanned once over [least, greatest] wanted id to give every edge its row
 * (ordinal and start), and a one-instant window at that start gives its end
 * and track. SystemProfileEvents: one window pass over all time reading
 * flow_id, comparing each row's values with the event's.
 */
#include "query/flows.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/event.h"
#include "query/engine/window.h"
#include "util/text.h"

/* Flow's names of the tables it links (docs/processing.md "Flow"). */
static const struct {
    const char *flow, *table;
} LINKED[] = {{"instruction", "Instruction"}, {"dma_block", "DmaPacketAggregated"}};
#define N_LINKED (sizeof LINKED / sizeof LINKED[0])

static void ref_free(nx_flow_ref *r)
{
    free(r->track);
    free(r->dependency_type);
    free(r->flow_id);
}

void nx_flows_free(nx_flows *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_pred; i++)
        ref_free(&f->pred[i]);
    for (size_t i = 0; i < f->n_succ; i++)
        ref_free(&f->succ[i]);
    free(f->pred);
    free(f->succ);
    *f = (nx_flows){0};
}

/* A growing list of refs, cut at NX_FLOWS_MAX. */
typedef struct ref_list {
    nx_flow_ref *v;
    size_t n, cap;
} ref_list;

/* Appends r (taking its strings): 0, 1 when the list is full (r freed), -1 out of memory (r freed). */
static int ref_push(ref_list *l, nx_flow_ref *r)
{
    if (l->n == NX_FLOWS_MAX) {
        ref_free(r);
        return 1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        nx_flow_ref *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            ref_free(r);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *r;
    return 0;
}

static int cmp_ref(const void *a, const void *b)
{
    const nx_flow_ref *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->ordinal != y->ordinal)
        return x->ordinal < y->ordinal ? -1 : 1;
    int c = strcmp(x->table, y->table);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* ------------------------------------------------------------ device side -- */

typedef struct edge {
    size_t linked;               /* LINKED index of the other end's table, N_LINKED: another table */
    int64_t id;
    bool pred;                   /* a predecessor (else a successor) */
    bool found;
    nx_flow_ref ref;             /* dependency_type, gap_time; then ordinal and start when found */
} edge;

typedef struct edges {
    edge *v;
    size_t n, cap;
    size_t per_side[2];          /* successors, predecessors collected */
} edges;

static void edges_free(edges *e)
{
    for (size_t i = 0; i < e->n; i++)
        ref_free(&e->v[i].ref);
    free(e->v);
}

static size_t linked_by_flow_name(const char *s, size_t len)
{
    for (size_t i = 0; i < N_LINKED; i++)
        if (strlen(LINKED[i].flow) == len && memcmp(LINKED[i].flow, s, len) == 0)
            return i;
    return N_LINKED;
}

enum { C_IN_ID, C_OUT_ID, C_IN_TABLE, C_OUT_TABLE, C_DEP, C_GAP, N_FLOW_COLS };
static const char *const FLOW_COLS[N_FLOW_COLS] = {"in_id", "out_id", "in_table", "out_table", "dependency_type",
                                                   "gap_time"};

/* The edges of one side of event (flow name `self`, id x): pred reads the rows whose
 * out end is the event. 0, or -1. */
static int flow_side(nx_profile_table *flow, const char *self, int64_t x, bool pred, edges *out, bool *truncated,
                     nx_error *err)
{
    const char *cols[N_FLOW_COLS];
    int at[N_FLOW_COLS];
    size_t n = 0;
    for (int k = 0; k < N_FLOW_COLS; k++) {
        at[k] = -1;
        if (nx_profile_table_find_column(flow, FLOW_COLS[k]) >= 0) {
            at[k] = (int)n;
            cols[n++] = FLOW_COLS[k];
        } else if (k < C_DEP) {
            return nx_error_set(err, "Flow: has no '%s' column", FLOW_COLS[k]);
        }
    }
    int mine_id = pred ? C_OUT_ID : C_IN_ID, mine_table = pred ? C_OUT_TABLE : C_IN_TABLE;
    int other_id = pred ? C_IN_ID : C_OUT_ID, other_table = pred ? C_IN_TABLE : C_OUT_TABLE;
    nx_profile_scan_options so = {.columns = cols, .n_columns = n, .range_column = FLOW_COLS[mine_id],
                                  .range_min = x, .range_max = x};
    nx_profile_scan *s = nx_profile_scan_open(flow, &so, err);
    if (!s)
        return -1;
    const nxpq_batch *b;
    int more;
    size_t slen = strlen(self);
    while ((more = nx_profile_scan_next(s, &b, err)) > 0) {
        const nxpq_column_data *c = b->columns;
        for (size_t i = 0; i < b->n_rows; i++) {
            int64_t id, oid;
            const char *tn, *on;
            size_t tl, ol;
            if (!nx_column_int(&c[at[mine_id]], i, &id) || id != x || !nx_column_str(&c[at[mine_table]], i, &tn, &tl) ||
                tl != slen || memcmp(tn, self, slen) != 0 || !nx_column_int(&c[at[other_id]], i, &oid))
                continue;
            if (out->per_side[pred] == NX_FLOWS_MAX) {
                *truncated = true;
                continue;
            }
            if (out->n == out->cap) {
                size_t cap = out->cap ? out->cap * 2 : 8;
                edge *v = realloc(out->v, cap * sizeof *v);
                if (!v)
                    goto oom;
                out->v = v;
                out->cap = cap;
            }
            edge *e = &out->v[out->n];
            *e = (edge){.linked = N_LINKED, .id = oid, .pred = pred, .ref.seq = out->n};
            if (nx_column_str(&c[at[other_table]], i, &on, &ol))
                e->linked = linked_by_flow_name(on, ol);
            const char *dep;
            size_t dl;
            if (at[C_DEP] >= 0 && nx_column_str(&c[at[C_DEP]], i, &dep, &dl) &&
                !(e->ref.dependency_type = nx_text_dup(dep, dl)))
                goto oom;
            e->ref.has_gap = at[C_GAP] >= 0 && nx_column_int(&c[at[C_GAP]], i, &e->ref.gap_time);
            out->n++;
            out->per_side[pred]++;
        }
    }
    nx_profile_scan_close(s);
    return more < 0 ? -1 : 0;
oom:
    nx_profile_scan_close(s);
    return nx_error_set(err, "Flow: out of memory reading the flows of %s %lld", self, (long long)x);
}

/* Gives the edges to table LINKED[li] their row: ordinal and start. 0, or -1. */
static int find_rows(nx_profile_table *t, size_t li, edges *es, nx_error *err)
{
    const nx_timeline_info *info = nx_timeline_find(LINKED[li].table);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < es->n; i++)
        if (es->v[i].linked == li) {
            lo = es->v[i].id < lo ? es->v[i].id : lo;
            hi = es->v[i].id > hi ? es->v[i].id : hi;
        }
    if (lo > hi || nx_profile_table_find_column(t, "id") < 0)
        return 0;
    const char *cols[2] = {"id", info->start_column};
    nx_profile_scan_options so = {.columns = cols, .n_columns = 2, .range_column = "id", .range_min = lo,
                                  .range_max = hi};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    if (!s)
        return -1;
    const nxpq_batch *b;
    int more;
    while ((more = nx_profile_scan_next(s, &b, err)) > 0) {
        int64_t base = nx_row_ordinal(nx_profile_scan_file(s), b->first_row);
        for (size_t i = 0; i < b->n_rows; i++) {
            int64_t id, start;
            if (!nx_column_int(&b->columns[0], i, &id) || id < lo || id > hi ||
                !nx_column_int(&b->columns[1], i, &start))
                continue;
            for (size_t k = 0; k < es->n; k++) {
                edge *e = &es->v[k];
                if (e->linked == li && !e->found && e->id == id) {
                    e->found = true;
                    e->ref.ordinal = base + (int64_t)i;
                    e->ref.start = start;
                }
            }
        }
    }
    nx_profile_scan_close(s);
    return more < 0 ? -1 : 0;
}

/* The end and track of the row `ordinal` starting at r->start, from a one-instant
 * window. 0 (found false when the window does not hold it), or -1. */
static int fill_ref(nx_profile_table *t, nx_flow_ref *r, bool *found, nx_error *err)
{
    nx_window_options wo = {.start = r->start, .end = r->start};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        return -1;
    nx_window_batch b;
    int more;
    *found = false;
    while (!*found && (more = nx_window_next(w, &b, err)) > 0) {
        int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
        for (size_t k = 0; k < b.n_rows && !*found; k++) {
            if (base + b.rows[k] != r->ordinal)
                continue;
            size_t len;
            const char *name = nx_window_track_name(w, b.track[k], &len);
            r->end = b.end[k];
            if (!(r->track = nx_text_dup(name, len))) {
                nx_window_close(w);
                return nx_error_set(err, "%s: out of memory", nx_profile_table_name(t));
            }
            r->track_len = len;
            *found = true;
        }
    }
    nx_window_close(w);
    return *found || more >= 0 ? 0 : -1;
}

/* Resolves every edge to table LINKED[li]. 0, or -1. */
static int resolve(const char *dir, size_t li, edges *es, nx_error *err)
{
    nx_profile_table *t;
    int rc = nx_profile_table_open(dir, LINKED[li].table, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc < 0)
        return -1;
    rc = find_rows(t, li, es, err);
    for (size_t i = 0; i < es->n && rc == 0; i++) {
        edge *e = &es->v[i];
        if (e->linked == li && e->found) {
            e->ref.table = LINKED[li].table;
            rc = fill_ref(t, &e->ref, &e->found, err);
        }
    }
    nx_profile_table_close(t);
    return rc;
}

static int device_flows(const char *dir, size_t self, int64_t x, nx_flows *out, nx_error *err)
{
    out->device = true;
    nx_profile_table *flow;
    int rc = nx_profile_table_open(dir, "Flow", &flow, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc < 0)
        return -1;
    edges es = {0};
    rc = flow_side(flow, LINKED[self].flow, x, true, &es, &out->truncated, err);
    if (rc == 0)
        rc = flow_side(flow, LINKED[self].flow, x, false, &es, &out->truncated, err);
    nx_profile_table_close(flow);
    for (size_t li = 0; li < N_LINKED && rc == 0; li++)
        rc = resolve(dir, li, &es, err);
    ref_list lists[2] = {{0}};
    for (size_t i = 0; i < es.n && rc == 0; i++) {
        edge *e = &es.v[i];
        if (!e->found) {
            out->unresolved++;
            continue;
        }
        if (ref_push(&lists[e->pred], &e->ref) < 0)
            rc = nx_error_set(err, "Flow: out of memory");
        e->ref = (nx_flow_ref){0}; /* the list owns its strings now */
    }
    edges_free(&es);
    out->succ = lists[0].v;
    out->n_succ = lists[0].n;
    out->pred = lists[1].v;
    out->n_pred = lists[1].n;
    return rc;
}

/* ------------------------------------------------------ SystemProfileEvents -- */

/* The non-null values of row i of list column c (LIST_STRING), as (ptr, len) pairs
 * into vals (cap entries); returns their count. */
static size_t list_values(const nxpq_column_data *c, size_t i, nxpq_str *vals, size_t cap)
{
    if (c->valid && !c->valid[i])
        return 0;
    size_t n = 0;
    for (uint64_t j = c->list_offsets[i]; j < c->list_offsets[i + 1] && n < cap; j++)
        if (!c->element_valid || c->element_valid[j])
            vals[n++] = (nxpq_str){c->data + c->offsets[j], (size_t)(c->offsets[j + 1] - c->offsets[j])};
    return n;
}

/* Index of the first of mine[0..n) that row i of c holds, or -1. */
static int shared_value(const nxpq_column_data *c, size_t i, const nxpq_str *mine, size_t n)
{
    if (c->valid && !c->valid[i])
        return -1;
    for (size_t m = 0; m < n; m++)
        for (uint64_t j = c->list_offsets[i]; j < c->list_offsets[i + 1]; j++) {
            size_t len = (size_t)(c->offsets[j + 1] - c->offsets[j]);
            if ((!c->element_valid || c->element_valid[j]) && len == mine[m].len &&
                memcmp(c->data + c->offsets[j], mine[m].ptr, len) == 0)
                return (int)m;
        }
    return -1;
}

static int system_flows(const char *dir, const char *table, int64_t ordinal, int64_t start, const nxpq_str *mine,
                        size_t n_mine, nx_flows *out, nx_error *err)
{
    nx_profile_table *t;
    if (nx_profile_table_open(dir, table, &t, err) != 0)
        return -1;
    const char *cols[1] = {"flow_id"};
    nx_window_options wo = {.start = INT64_MIN, .end = INT64_MAX, .columns = cols, .n_columns = 1};
    nx_window *w = nx_window_open(t, &wo, err);
    ref_list lists[2] = {{0}};
    int rc = w ? 0 : -1, more = 0;
    nx_window_batch b;
    while (rc == 0 && (more = nx_window_next(w, &b, err)) > 0) {
        const nxpq_column_data *c = &b.batch->columns[0];
        int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
        for (size_t k = 0; k < b.n_rows && rc == 0; k++) {
            size_t i = b.rows[k];
            int64_t ord = base + (int64_t)i;
            bool none = c->list_offsets[i] == c->list_offsets[i + 1] || ord == ordinal;
            int m = none ? -1 : shared_value(c, i, mine, n_mine);
            if (m < 0)
                continue;
            size_t len;
            const char *name = nx_window_track_name(w, b.track[k], &len);
            nx_flow_ref r = {.table = table, .ordinal = ord, .start = b.start[k], .end = b.end[k], .track_len = len,
                             .track = nx_text_dup(name, len), .flow_id = nx_text_dup(mine[m].ptr, mine[m].len),
                             .seq = lists[0].n + lists[1].n};
            bool pred = b.start[k] < start || (b.start[k] == start && ord < ordinal);
            int p = r.track && r.flow_id ? ref_push(&lists[pred], &r) : (ref_free(&r), -1);
            if (p > 0)
                out->truncated = true;
            if (p < 0)
                rc = nx_error_set(err, "%s: out of memory collecting flows", table);
        }
    }
    if (more < 0)
        rc = -1;
    nx_window_close(w);
    nx_profile_table_close(t);
    out->succ = lists[0].v;
    out->n_succ = lists[0].n;
    out->pred = lists[1].v;
    out->n_pred = lists[1].n;
    return rc;
}

/* ------------------------------------------------------------------ run -- */

static bool event_int(const nx_event *ev, const char *field, int64_t *v)
{
    int f = nx_schema_field_index(ev->schema, field);
    const nxpq_column_data *c = f >= 0 ? nx_event_field(ev, (size_t)f) : NULL;
    return c && (c->type == NXPQ_INT64 || c->type == NXPQ_INT32) && nx_column_int(c, ev->row, v);
}

int nx_flows_run(const char *profile_dir, const char *table, int64_t ordinal, const int64_t *start_hint,
                 nx_flows *out, nx_error *err)
{
    *out = (nx_flows){0};
    nx_event ev;
    static const char *const own[] = {"id", "flow_id"};
    int rc = nx_event_read_fields(profile_dir, table, ordinal, start_hint, own, 2, &ev, err);
    if (rc == NX_EVENT_NONE)
        return NX_FLOWS_NO_EVENT;
    if (rc != 0)
        return rc;
    int64_t x;
    for (size_t li = 0; li < N_LINKED; li++)
        if (strcmp(table, LINKED[li].table) == 0 && event_int(&ev, "id", &x))
            rc = device_flows(profile_dir, li, x, out, err);
    const nx_timeline_info *info = nx_timeline_find(table);
    int f = nx_schema_field_index(ev.schema, "flow_id");
    const nxpq_column_data *c = f >= 0 ? nx_event_field(&ev, (size_t)f) : NULL;
    int64_t start;
    if (info && info->nested && c && c->type == NXPQ_LIST_STRING && event_int(&ev, info->start_column, &start)) {
        nxpq_str mine[NX_FLOWS_OWN];
        size_t n = list_values(c, ev.row, mine, NX_FLOWS_OWN);
        /* The values point into the event's batch, which lives until nx_event_free. */
        if (n)
            rc = system_flows(profile_dir, table, ordinal, start, mine, n, out, err);
    }
    nx_event_free(&ev);
    if (rc == 0) {
        if (out->n_pred > 1)
            qsort(out->pred, out->n_pred, sizeof *out->pred, cmp_ref);
        if (out->n_succ > 1)
            qsort(out->succ, out->n_succ, sizeof *out->succ, cmp_ref);
    } else {
        nx_flows_free(out);
    }
    return rc;
}
