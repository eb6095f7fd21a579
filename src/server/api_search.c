/*
 * api_search.c — three answers about events, computed by the query engine and
 * written as JSON (docs/api.md):
 *   GET /api/profiles/<name>/search     query/search.h
 *   GET /api/profiles/<name>/aggregate  query/aggregate.h
 *   GET /api/profiles/<name>/flows      query/flows.h
 * Here only the parameters are checked (a 400 names the parameter) and the
 * results formatted. An event ref is {"table","ordinal","start","end","track"}.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/aggregate.h"
#include "query/flows.h"
#include "query/search.h"
#include "schema/schema.h"
#include "server/api_internal.h"

#define ALL_TIMELINES "Instruction,DmaPacketAggregated,DmaPacket,CcInstruction,SemaphoreUpdate,CcOp,SystemProfileEvents"
#define MAX_TOP 10000

static bool is_timeline_table(const char *name) { return nx_timeline_find(name) != NULL; }

static void json_ref(nx_strbuf *b, const char *table, int64_t ordinal, int64_t start, int64_t end, const char *track,
                     size_t track_len)
{
    nx_strbuf_puts(b, "{\"table\":");
    nx_json_put_string(b, table, strlen(table));
    nx_strbuf_puts(b, ",\"ordinal\":");
    nx_json_put_i64(b, ordinal, true);
    nx_strbuf_puts(b, ",\"start\":");
    nx_json_put_i64(b, start, true);
    nx_strbuf_puts(b, ",\"end\":");
    nx_json_put_i64(b, end, true);
    nx_strbuf_puts(b, ",\"track\":");
    nx_json_put_string(b, track, track_len);
}

/* Parameter `name`, one of the NULL-ended words (the first when absent): its index,
 * or -1 after queueing a 400. */
static int word_param(nx_api_req *r, const char *name, const char *const *words, enum MHD_Result *res)
{
    const char *v = nx_api_param(r, name);
    if (!v)
        return 0;
    for (int i = 0; words[i]; i++)
        if (strcmp(v, words[i]) == 0)
            return i;
    *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter '%s' must be %s or %s", name, words[0], words[1]);
    return -1;
}

/* ------------------------------------------------------------------ search -- */

/* Whether some listed table's schema has `field` ("track" always). */
static bool field_known(const char *field, const char *const *tables, size_t n)
{
    if (strcmp(field, "track") == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (nx_schema_field_find(nx_schema_table_find(tables[i]), field))
            return true;
    return false;
}

/* The position parameters into o: from, and from_ord with from_table. 0, or -1
 * after queueing a 400. */
static int position_params(nx_api_req *r, nx_search_options *o, enum MHD_Result *res)
{
    bool have_from = nx_api_param(r, "from") != NULL;
    const char *ft = nx_api_param(r, "from_table");
    bool have_ord = nx_api_param(r, "from_ord") != NULL;
    if (have_ord != (ft != NULL)) {
        *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameters 'from_ord' and 'from_table' go together");
        return -1;
    }
    if (have_ord && !have_from) {
        *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'from_ord' needs 'from'");
        return -1;
    }
    if (!have_from) {
        /* Next from the very first event; previous from after the very last. */
        o->from = o->dir == NX_SEARCH_NEXT ? INT64_MIN : INT64_MAX;
        if (o->dir == NX_SEARCH_PREV) {
            o->have_from_ord = true;
            o->from_table = o->n_tables - 1;
            o->from_ord = INT64_MAX;
        }
        return 0;
    }
    if (nx_api_int_param(r, "from", true, 0, INT64_MIN, INT64_MAX, &o->from, res) < 0 ||
        (have_ord && nx_api_int_param(r, "from_ord", true, 0, 0, INT64_MAX, &o->from_ord, res) < 0))
        return -1;
    if (!have_ord)
        return 0;
    for (size_t i = 0; i < o->n_tables; i++)
        if (strcmp(o->tables[i], ft) == 0) {
            o->have_from_ord = true;
            o->from_table = i;
            return 0;
        }
    *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'from_table' must be one of 'tables'");
    return -1;
}

static void json_value(nx_strbuf *b, const nx_search_value *v)
{
    if (v->null)
        nx_strbuf_puts(b, "null");
    else if (v->is_int)
        nx_json_put_i64(b, v->i, true);
    else
        nx_json_put_string(b, v->s, v->len);
}

static void search_json(nx_strbuf *b, const nx_search_options *o, const char *match, const nx_search_result *s)
{
    nx_strbuf_puts(b, "{\"field\":");
    nx_json_put_string(b, o->field, strlen(o->field));
    nx_strbuf_puts(b, ",\"q\":");
    nx_json_put_string(b, o->q, o->q_len);
    nx_strbuf_puts(b, ",\"match\":");
    nx_json_put_string(b, match, strlen(match));
    nx_strbuf_puts(b, ",\"total\":");
    nx_json_put_i64(b, (int64_t)s->total, true);
    nx_strbuf_puts(b, ",\"event\":");
    if (s->found) {
        json_ref(b, o->tables[s->table], s->ordinal, s->start, s->end, s->track, s->track_len);
        nx_strbuf_puts(b, ",\"label\":");
        json_value(b, &s->label);
        nx_strbuf_puts(b, "},\"position\":");
        nx_json_put_i64(b, (int64_t)s->position, true);
    } else {
        nx_strbuf_puts(b, "null,\"position\":null");
    }
    nx_strbuf_puts(b, ",\"skipped\":[");
    for (size_t i = 0; i < s->n_skipped; i++) {
        const char *t = o->tables[s->skipped[i]];
        if (i)
            nx_strbuf_putc(b, ',');
        nx_json_put_string(b, t, strlen(t));
    }
    nx_strbuf_puts(b, "]}");
}

enum MHD_Result nx_api_search(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    static const char *const matches[] = {"contains", "exact", NULL}, *const dirs[] = {"next", "prev", NULL};
    char tbuf[256];
    const char *tables[NX_TIMELINE_TABLES];
    nx_search_options o = {.tables = tables};
    if (nx_api_tables_param(r, ALL_TIMELINES, is_timeline_table, "timeline", tbuf, sizeof tbuf, tables,
                            NX_TIMELINE_TABLES, &o.n_tables, &res) < 0)
        return res;
    o.field = nx_api_param(r, "field");
    o.q = nx_api_param(r, "q");
    if (!o.field || !*o.field)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'field' is required");
    if (!field_known(o.field, tables, o.n_tables))
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST,
                            "parameter 'field': no listed table has a field '%s' (or use 'track')", o.field);
    if (!o.q || !*o.q)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'q' is required and must not be empty");
    o.q_len = strlen(o.q);
    int m = word_param(r, "match", matches, &res), d = m < 0 ? -1 : word_param(r, "dir", dirs, &res);
    if (m < 0 || d < 0)
        return res;
    o.match = m ? NX_SEARCH_EXACT : NX_SEARCH_CONTAINS;
    o.dir = d ? NX_SEARCH_PREV : NX_SEARCH_NEXT;
    if (position_params(r, &o, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_search_result s;
    nx_error err = {0};
    int rc = nx_search_run(dir, &o, &s, &err);
    free(dir);
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    search_json(&b, &o, matches[m], &s);
    nx_search_free(&s);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* --------------------------------------------------------------- aggregate -- */

/* The tracks of parameter "tracks" per listed table. */
typedef struct track_sel {
    char *buf;                        /* the parameter, cut into names in place */
    const char **names[NX_TIMELINE_TABLES];
    size_t n[NX_TIMELINE_TABLES];
} track_sel;

static void track_sel_free(track_sel *t)
{
    free(t->buf);
    for (size_t i = 0; i < NX_TIMELINE_TABLES; i++)
        free(t->names[i]);
}

/* Index of the listed table that "<T>:" at s names, or -1. */
static int table_prefix(const char *s, const char *const *tables, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(tables[i]);
        if (strncmp(s, tables[i], len) == 0 && s[len] == ':')
            return (int)i;
    }
    return -1;
}

/* Splits "tracks" (each "Table:track"; split at the commas followed by a listed
 * table's "Table:", so a track name may hold commas). 0, or -1 after queueing a
 * 400 or 500. */
static int tracks_param(nx_api_req *r, const char *const *tables, size_t n_tables, track_sel *out,
                        enum MHD_Result *res)
{
    const char *v = nx_api_param(r, "tracks");
    if (!v)
        return 0;
    if (!(out->buf = strdup(v))) {
        *res = nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
        return -1;
    }
    for (char *p = out->buf; *p;) {
        int ti = table_prefix(p, tables, n_tables);
        if (ti < 0) {
            *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST,
                                "parameter 'tracks': each entry is <table>:<track> with a table of 'tables'");
            return -1;
        }
        char *name = p + strlen(tables[ti]) + 1, *q = name;
        while (*q && !(*q == ',' && table_prefix(q + 1, tables, n_tables) >= 0))
            q++;
        char *next = *q ? q + 1 : q;
        *q = '\0';
        const char **g = realloc(out->names[ti], (out->n[ti] + 1) * sizeof *g);
        if (!g) {
            *res = nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
            return -1;
        }
        g[out->n[ti]++] = name;
        out->names[ti] = g;
        p = next;
    }
    return 0;
}

static void json_key(nx_strbuf *b, const nx_aggregate_group *g)
{
    if (g->null)
        nx_strbuf_puts(b, "null");
    else if (g->is_int)
        nx_json_put_i64(b, g->i, true);
    else
        nx_json_put_string(b, g->s, g->len);
}

static void json_self(nx_strbuf *b, const nx_aggregate *a, int64_t self)
{
    nx_strbuf_puts(b, ",\"self_ns\":");
    if (a->nested)
        nx_json_put_i64(b, self, true);
    else
        nx_strbuf_puts(b, "null");
}

static void aggregate_json(nx_strbuf *b, const char *table, const nx_aggregate *a)
{
    nx_strbuf_puts(b, "{\"table\":");
    nx_json_put_string(b, table, strlen(table));
    nx_strbuf_puts(b, ",\"by\":");
    nx_json_put_string(b, a->by, strlen(a->by));
    nx_strbuf_puts(b, ",\"events\":");
    nx_json_put_i64(b, (int64_t)a->events, true);
    nx_strbuf_puts(b, ",\"groups\":[");
    for (size_t i = 0; i < a->n_shown; i++) {
        const nx_aggregate_group *g = &a->groups[i];
        nx_strbuf_puts(b, i ? ",{\"key\":" : "{\"key\":");
        json_key(b, g);
        nx_strbuf_puts(b, ",\"count\":");
        nx_json_put_i64(b, (int64_t)g->count, true);
        nx_strbuf_puts(b, ",\"total_ns\":");
        nx_json_put_i64(b, g->total_ns, true);
        json_self(b, a, g->self_ns);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_puts(b, "],\"other\":{\"groups\":");
    nx_json_put_i64(b, (int64_t)(a->n_groups - a->n_shown), true);
    nx_strbuf_puts(b, ",\"count\":");
    nx_json_put_i64(b, (int64_t)a->other_count, true);
    nx_strbuf_puts(b, ",\"total_ns\":");
    nx_json_put_i64(b, a->other_total_ns, true);
    json_self(b, a, a->other_self_ns);
    nx_strbuf_puts(b, "}}");
}

/* The answer for a table without events in the selection. */
static nx_aggregate no_events(const char *table, const char *by)
{
    return (nx_aggregate){.by = by ? by : nx_timeline_view_find(table)->aggregate_default,
                          .nested = nx_timeline_find(table)->nested};
}

/* One table's part of the answer into b: 0, or -1 after queueing the error. */
static int aggregate_table(nx_api_req *r, const char *dir, nx_aggregate_options *o, nx_strbuf *b,
                           enum MHD_Result *res)
{
    nx_aggregate a;
    nx_error err = {0};
    int rc = nx_aggregate_run(dir, o, &a, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        a = no_events(o->table, o->by); /* a table the profile lacks (as the timeline answers it) */
        rc = 0;
    }
    if (rc == NX_AGGREGATE_BAD_BY || rc == NX_AGGREGATE_TOO_MANY) {
        *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'by': %s", err.msg);
        return -1;
    }
    if (rc != 0) {
        *res = nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
        return -1;
    }
    aggregate_json(b, o->table, &a);
    nx_aggregate_free(&a);
    return 0;
}

enum MHD_Result nx_api_aggregate(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char tbuf[256];
    const char *tables[NX_TIMELINE_TABLES];
    size_t n_tables;
    if (nx_api_tables_param(r, "Instruction", is_timeline_table, "timeline", tbuf, sizeof tbuf, tables,
                            NX_TIMELINE_TABLES, &n_tables, &res) < 0)
        return res;
    int64_t start, end, top;
    if (nx_api_int_param(r, "start", true, 0, INT64_MIN, INT64_MAX, &start, &res) < 0 ||
        nx_api_int_param(r, "end", true, 0, INT64_MIN, INT64_MAX, &end, &res) < 0 ||
        nx_api_int_param(r, "top", false, 50, 1, MAX_TOP, &top, &res) < 0)
        return res;
    if (end < start)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "'end' is before 'start'");
    const char *by = nx_api_param(r, "by");
    if (by && !*by)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'by' must not be empty");
    track_sel sel = {0};
    if (tracks_param(r, tables, n_tables, &sel, &res) < 0) {
        track_sel_free(&sel);
        return res;
    }
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0) {
        track_sel_free(&sel);
        return res;
    }
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"start\":");
    nx_json_put_i64(&b, start, true);
    nx_strbuf_puts(&b, ",\"end\":");
    nx_json_put_i64(&b, end, true);
    nx_strbuf_puts(&b, ",\"by\":");
    if (by)
        nx_json_put_string(&b, by, strlen(by));
    else
        nx_strbuf_puts(&b, "null");
    nx_strbuf_puts(&b, ",\"tables\":[");
    int rc = 0;
    for (size_t i = 0; i < n_tables && rc == 0; i++) {
        nx_aggregate_options o = {.table = tables[i], .start = start, .end = end, .by = by, .top = (size_t)top,
                                  .tracks = sel.names[i], .n_tracks = sel.n[i]};
        /* Tracks named for other tables only: this table has none selected. */
        bool none = sel.buf && sel.n[i] == 0;
        if (i)
            nx_strbuf_putc(&b, ',');
        if (none) {
            nx_aggregate empty = no_events(tables[i], by);
            aggregate_json(&b, tables[i], &empty);
        } else {
            rc = aggregate_table(r, dir, &o, &b, &res);
        }
    }
    free(dir);
    track_sel_free(&sel);
    if (rc != 0) {
        nx_strbuf_free(&b);
        return res;
    }
    nx_strbuf_puts(&b, "]}");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* ------------------------------------------------------------------- flows -- */

static void flow_refs(nx_strbuf *b, const nx_flows *f, const nx_flow_ref *v, size_t n)
{
    nx_strbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        const nx_flow_ref *x = &v[i];
        if (i)
            nx_strbuf_putc(b, ',');
        json_ref(b, x->table, x->ordinal, x->start, x->end, x->track, x->track_len);
        if (f->device) {
            nx_strbuf_puts(b, ",\"dependency_type\":");
            if (x->dependency_type)
                nx_json_put_string(b, x->dependency_type, strlen(x->dependency_type));
            else
                nx_strbuf_puts(b, "null");
            nx_strbuf_puts(b, ",\"gap_time\":");
            if (x->has_gap)
                nx_json_put_i64(b, x->gap_time, true);
            else
                nx_strbuf_puts(b, "null");
        } else {
            nx_strbuf_puts(b, ",\"flow_id\":");
            nx_json_put_string(b, x->flow_id, strlen(x->flow_id));
        }
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_putc(b, ']');
}

enum MHD_Result nx_api_flows(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    const char *table = nx_api_param(r, "table");
    if (!table)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'table' is required");
    if (!is_timeline_table(table))
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'table' must be a timeline table");
    int64_t ord, hint;
    const int64_t *start;
    if (nx_api_event_params(r, &ord, &hint, &start, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_flows f;
    nx_error err = {0};
    int rc = nx_flows_run(dir, table, ord, start, &f, &err);
    free(dir);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "the profile has no %s table", table);
    if (rc == NX_FLOWS_NO_EVENT)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no such event");
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"table\":");
    nx_json_put_string(&b, table, strlen(table));
    nx_strbuf_puts(&b, ",\"ordinal\":");
    nx_json_put_i64(&b, ord, true);
    nx_strbuf_puts(&b, ",\"predecessors\":");
    flow_refs(&b, &f, f.pred, f.n_pred);
    nx_strbuf_puts(&b, ",\"successors\":");
    flow_refs(&b, &f, f.succ, f.n_succ);
    nx_strbuf_puts(&b, ",\"unresolved\":");
    nx_json_put_i64(&b, (int64_t)f.unresolved, true);
    nx_strbuf_printf(&b, ",\"truncated\":%s}", f.truncated ? "true" : "false");
    nx_flows_free(&f);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
