/*
 * api_profiles.c — the profile endpoints of the HTTP API (docs/api.md): the list,
 * one profile, its tracks (cached), one event's row, Summary/OpcodeSummary (a system
 * profile's summary: api_system.c).
 *
 * Rules:
 *   - listing: profile/profile_layout.h nx_layout_list (a symlinked profile pointing
 *     outside the data path is not listed), sorted by name (strcmp); what each holds (kind, size, tables, span, its device
 *     profiles, errors) is query/profile_info.h's;
 *   - device_profiles (system profiles): each with the name it is served under,
 *     where profile_info found its directory, named as nx_api_device_open_name says;
 *   - system_profile (device profiles, listing only): the first system profile, in
 *     name order, whose device_profiles open it;
 *   - metadata (one profile): Metadata's first row (query/row0.h), schema order;
 *   - tracks: query/tracks.h's answer written as docs/api.md says; the JSON is cached
 *     (server/response_cache.h) per realpath of the profile directory and fingerprint
 *     of its files;
 *   - event: query/event.h's row (the `start` parameter is its start hint), every
 *     schema field in order;
 *   - summary: a device profile's from query/device_summary.h (`top` OpcodeSummary
 *     rows, default 50, 1..10000), a system profile's from api_system.c.
 */
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/device_summary.h"
#include "query/event.h"
#include "query/profile_info.h"
#include "query/row0.h"
#include "query/system_summary.h"
#include "query/tracks.h"
#include "schema/schema.h"
#include "server/api_internal.h"
#include "server/response_cache.h"

/* A cell (query/row0.h) as a JSON value; null for a missing one. */
static void json_value(nx_strbuf *b, const nx_cell *c)
{
    if (!c || c->null) {
        nx_strbuf_puts(b, "null");
        return;
    }
    switch (c->type) {
    case NXPQ_BOOLEAN: nx_strbuf_puts(b, c->i ? "true" : "false"); break;
    case NXPQ_INT32:
    case NXPQ_INT64: nx_json_put_i64(b, c->i, true); break;
    case NXPQ_FLOAT: nx_json_put_f32(b, (float)c->f); break;
    case NXPQ_DOUBLE: nx_json_put_f64(b, c->f); break;
    case NXPQ_STRING: nx_json_put_string(b, c->s, c->len); break;
    default: nx_strbuf_puts(b, "null"); break;
    }
}

/* ---------------------------------------------------------------- listing -- */
/* What the listing says of one profile (docs/api.md "GET /api/profiles"). */
typedef struct profile_info {
    char *name;
    nx_profile_info info;    /* query/profile_info.h */
    char **open;             /* per device profile: the name it is served under, or NULL */
    const char *system;      /* device profiles in the listing: the system profile naming it, or NULL */
} profile_info;

static void info_free(profile_info *p)
{
    for (size_t i = 0; p->open && i < p->info.n_devices; i++)
        free(p->open[i]);
    free(p->open);
    nx_profile_info_free(&p->info);
    free(p->name);
}

int nx_api_device_open_name(const nx_server_ctx *srv, const char *sys, const char *sys_dir, const char *dev,
                            const char *dev_dir, char **open)
{
    *open = NULL;
    if (!dev_dir)
        return 0;
    char *name = nx_layout_device_name(sys, sys_dir, dev, dev_dir), *dir = NULL, msg[64];
    if (!name)
        return -1;
    unsigned st = nx_api_resolve_profile(srv, name, &dir, msg, sizeof msg);
    free(dir);
    if (st == 0)
        *open = name;
    else
        free(name);
    return st == MHD_HTTP_INTERNAL_SERVER_ERROR ? -1 : 0;
}

/* Fills *p for profile `name` in directory `dir`: what it holds, and the name each
 * of its device profiles is served under. -1 only when out of memory. */
static int info_read(const nx_server_ctx *srv, const char *name, const char *dir, profile_info *p)
{
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup(name)) || nx_profile_info_read(dir, &p->info) < 0)
        return -1;
    if (p->info.n_devices && !(p->open = calloc(p->info.n_devices, sizeof *p->open)))
        return -1;
    for (size_t i = 0; i < p->info.n_devices; i++) {
        const nx_profile_device *x = &p->info.devices[i];
        if (nx_api_device_open_name(srv, name, dir, x->name, x->dir, &p->open[i]) < 0)
            return -1;
    }
    return 0;
}

/* Appends the profile's JSON object, without its closing brace; with_system: a device
 * profile's system_profile too (the listing's relation between profiles). */
static void info_json(const nx_server_ctx *srv, const profile_info *p, bool with_system, nx_strbuf *b)
{
    const nx_profile_info *x = &p->info;
    nx_strbuf_puts(b, "{\"name\":");
    nx_json_put_string(b, p->name, strlen(p->name));
    nx_strbuf_printf(b, ",\"kind\":%s,\"size_bytes\":%" PRIu64 ",\"first_ts\":",
                     !x->readable ? "null" : x->device ? "\"device\"" : "\"system\"", x->size);
    if (x->has_span)
        nx_json_put_i64(b, x->first_ts, true);
    else
        nx_strbuf_puts(b, "null");
    nx_strbuf_puts(b, ",\"last_ts\":");
    if (x->has_span)
        nx_json_put_i64(b, x->last_ts, true);
    else
        nx_strbuf_puts(b, "null");
    if (x->relative_time)   /* query/profile_info.h */
        nx_strbuf_puts(b, ",\"relative_time\":true");
    nx_strbuf_printf(b, ",\"annotations\":{\"markers\":%zu,\"regions\":%zu}", x->n_markers, x->n_regions);
    nx_strbuf_puts(b, ",\"tables\":[");
    for (size_t i = 0; i < x->n_tables; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        nx_json_put_string(b, x->tables[i], strlen(x->tables[i]));
    }
    nx_strbuf_putc(b, ']');
    if (x->readable && !x->device) {
        nx_strbuf_puts(b, ",\"device_profiles\":[");
        for (size_t i = 0; i < x->n_devices; i++) {
            const nx_profile_device *d = &x->devices[i];
            nx_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
            nx_json_put_string(b, d->name, strlen(d->name));
            nx_strbuf_puts(b, ",\"nc_id\":");
            if (d->has_nc)
                nx_json_put_i64(b, d->nc_id, true);
            else
                nx_strbuf_puts(b, "null");
            nx_strbuf_printf(b, ",\"exists\":%s,\"open\":", p->open[i] ? "true" : "false");
            if (p->open[i])
                nx_json_put_string(b, p->open[i], strlen(p->open[i]));
            else
                nx_strbuf_puts(b, "null");
            nx_strbuf_putc(b, '}');
        }
        nx_strbuf_putc(b, ']');
    }
    if (x->device && with_system) {
        nx_strbuf_puts(b, ",\"system_profile\":");
        if (p->system)
            nx_json_put_string(b, p->system, strlen(p->system));
        else
            nx_strbuf_puts(b, "null");
    }
    if (x->error) {
        nx_strbuf_puts(b, ",\"error\":");
        nx_api_json_message(srv, b, x->error);
    }
}

static int info_cmp(const void *a, const void *b)
{
    return strcmp(((const profile_info *)a)->name, ((const profile_info *)b)->name);
}

/* Every profile of the data path (profile_layout.h nx_layout_list), read, device
 * profiles marked with the first system profile (in name order) whose
 * DeviceProfileList names them. 0, or -1 when out of memory. */
static int list_all(const nx_server_ctx *srv, profile_info **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    nx_layout_profile *lp;
    size_t n;
    if (nx_layout_list(srv->root, &lp, &n) < 0)
        return -1;
    profile_info *ps = n ? calloc(n, sizeof *ps) : NULL;
    int rc = n && !ps ? -1 : 0;
    size_t done = 0;
    while (rc == 0 && done < n) {
        rc = info_read(srv, lp[done].name, lp[done].dir, &ps[done]);
        done++;
    }
    nx_layout_list_free(lp, n);
    if (rc == 0)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < ps[i].info.n_devices; j++) {
                profile_info key = {.name = ps[i].open[j]};
                profile_info *dev = key.name ? bsearch(&key, ps, n, sizeof *ps, info_cmp) : NULL;
                if (dev && dev->info.device && !dev->system)
                    dev->system = ps[i].name;
            }
    *out = ps;
    *count = done;
    return rc;
}

static void list_free(profile_info *ps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        info_free(&ps[i]);
    free(ps);
}

enum MHD_Result nx_api_profiles(nx_api_req *r)
{
    profile_info *ps;
    size_t n;
    if (list_all(r->srv, &ps, &n) < 0) {
        list_free(ps, n);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"profiles\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            nx_strbuf_putc(&b, ',');
        info_json(r->srv, &ps[i], true, &b);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "]}");
    list_free(ps, n);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* Appends the first row of `table` (query/row0.h) as a JSON object of its schema's
 * fields in order, or null without the table or a row. */
static void row0_json(nx_strbuf *b, const char *table, const nx_row0 *r)
{
    const nx_schema_table *st = nx_schema_table_find(table);
    if (!r->has_row || !st) {
        nx_strbuf_puts(b, "null");
        return;
    }
    for (size_t f = 0; f < st->n_fields; f++) {
        nx_strbuf_putc(b, f ? ',' : '{');
        nx_json_put_string(b, st->fields[f].name, strlen(st->fields[f].name));
        nx_strbuf_putc(b, ':');
        json_value(b, nx_row0_field(r, st->fields[f].name));
    }
    nx_strbuf_putc(b, '}');
}

enum MHD_Result nx_api_profile(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    profile_info p;
    nx_row0 meta = {0};
    nx_error err = {0};
    int rc = info_read(r->srv, name, dir, &p);
    if (rc == 0 && nx_row0_read(dir, "Metadata", &meta, &err) < 0)
        rc = 1;
    free(dir);
    nx_strbuf b = NX_STRBUF_INIT;
    if (rc == 0) {
        info_json(r->srv, &p, false, &b);
        nx_strbuf_puts(&b, ",\"metadata\":");
        row0_json(&b, "Metadata", &meta);
        nx_strbuf_putc(&b, '}');
    }
    info_free(&p);
    nx_row0_free(&meta);
    if (rc != 0) {
        nx_strbuf_free(&b);
        return rc < 0 ? nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory")
                      : nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the Metadata table of '%s'", name);
    }
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* ---------------------------------------------------------------- tracks -- */
static void json_part(nx_strbuf *b, const char *key, const nx_track_part *p, bool text)
{
    nx_strbuf_printf(b, ",\"%s\":", key);
    if (!p->ok)
        nx_strbuf_puts(b, "null");
    else if (text)
        nx_json_put_string(b, p->s, p->len);
    else
        nx_json_put_i64(b, p->i, true);
}

static void json_track(nx_strbuf *b, const nx_track_entry *t)
{
    nx_strbuf_puts(b, "{\"table\":");
    nx_json_put_string(b, t->view->table, strlen(t->view->table));
    nx_strbuf_puts(b, ",\"track\":");
    nx_json_put_string(b, t->name, t->name_len);
    nx_strbuf_printf(b, ",\"count\":%" PRId64 ",\"first_ts\":", t->count);
    nx_json_put_i64(b, t->first_ts, true);
    nx_strbuf_puts(b, ",\"last_ts\":");
    nx_json_put_i64(b, t->last_ts, true);
    nx_strbuf_printf(b, ",\"max_depth\":%" PRIu32, t->max_depth);
    if (t->has_parts) {
        json_part(b, "instance", &t->instance, true);
        json_part(b, "pid", &t->pid, false);
        json_part(b, "tid", &t->tid, false);
        json_part(b, "nc", &t->nc, false);
        json_part(b, "rank", &t->worker, false);
    }
    if (t->labelled) {   /* names from the trace's metadata (query/tracks.h) */
        nx_strbuf_puts(b, ",\"process_label\":");
        nx_json_put_string(b, t->process_label, strlen(t->process_label));
        nx_strbuf_puts(b, ",\"thread_label\":");
        nx_json_put_string(b, t->thread_label, strlen(t->thread_label));
    }
    nx_strbuf_putc(b, '}');
}

/* The tracks JSON of a profile directory (query/tracks.h). NULL (err set) on failure;
 * *complete false when a table could not be read (the answer lists it in "errors"). */
static char *tracks_json(const nx_server_ctx *srv, const char *dir, const char *name, bool *complete,
                         nx_error *err)
{
    nx_tracks t;
    if (nx_tracks_read(dir, &t, err) != 0)
        return NULL;
    *complete = t.n_errors == 0;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"profile\":");
    nx_json_put_string(&b, name, strlen(name));
    nx_strbuf_puts(&b, ",\"first_ts\":");
    if (t.have_span)
        nx_json_put_i64(&b, t.first_ts, true);
    else
        nx_strbuf_puts(&b, "null");
    nx_strbuf_puts(&b, ",\"last_ts\":");
    if (t.have_span)
        nx_json_put_i64(&b, t.last_ts, true);
    else
        nx_strbuf_puts(&b, "null");
    nx_strbuf_puts(&b, ",\"groups\":[");
    for (size_t g = 0; g < NX_TIMELINE_GROUPS; g++) {
        const nx_timeline_group *gr = nx_timeline_group_at(g);
        nx_strbuf_printf(&b, "%s{\"group\":\"%s\",\"label\":\"%s\",\"tracks\":[", g ? "," : "", gr->id, gr->label);
        for (size_t i = t.group_first[g]; i < t.group_first[g + 1]; i++) {
            if (i > t.group_first[g])
                nx_strbuf_putc(&b, ',');
            json_track(&b, &t.tracks[i]);
        }
        nx_strbuf_puts(&b, "]}");
    }
    nx_strbuf_puts(&b, "],\"errors\":[");
    for (size_t i = 0; i < t.n_errors; i++) {
        nx_strbuf_printf(&b, "%s{\"table\":\"%s\",\"error\":", i ? "," : "", t.errors[i].table);
        nx_api_json_message(srv, &b, t.errors[i].error);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "]}");
    nx_tracks_free(&t);
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        nx_error_set(err, "tracks: out of memory");
        return NULL;
    }
    return nx_strbuf_detach(&b);
}

enum MHD_Result nx_api_tracks(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    /* Taken before the tables are read: a file changed while they are read gives
     * the next request another fingerprint. */
    char *fp = nx_response_cache_fingerprint(dir);
    nx_strbuf b = NX_STRBUF_INIT;
    if (!fp || !nx_response_cache_get(dir, fp, "tracks", &b)) {
        nx_error err = {0};
        bool complete;
        char *json = tracks_json(r->srv, dir, name, &complete, &err);
        if (!json) {
            free(fp);
            free(dir);
            return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
        }
        nx_strbuf_puts(&b, json);
        if (fp && complete)   /* a table that failed is read again next time */
            nx_response_cache_put(dir, fp, "tracks", json, strlen(json));
        free(json);
    }
    free(fp);
    free(dir);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* ----------------------------------------------------------------- event -- */
enum MHD_Result nx_api_event(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    const char *table = nx_api_param(r, "table");
    if (!table)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'table' is required");
    const nx_schema_table *st = nx_schema_table_find(table);
    if (!st || st->transient)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "unknown table");
    int64_t ord, hint;
    const int64_t *start;
    if (nx_api_event_params(r, &ord, &hint, &start, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_event ev;
    nx_error err = {0};
    int rc = nx_event_read(dir, table, ord, start, &ev, &err);
    if (rc != 0)
        free(dir);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "the profile has no %s table", table);
    if (rc == NX_EVENT_NONE)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no such event");
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"table\":");
    nx_json_put_string(&b, table, strlen(table));
    nx_strbuf_puts(&b, ",\"ordinal\":");
    nx_json_put_i64(&b, ord, true);
    nx_strbuf_puts(&b, ",\"fields\":[");
    for (size_t f = 0; f < st->n_fields; f++) {
        nx_strbuf_puts(&b, f ? ",{\"name\":" : "{\"name\":");
        nx_json_put_string(&b, st->fields[f].name, strlen(st->fields[f].name));
        nx_strbuf_puts(&b, ",\"type\":");
        nx_json_put_string(&b, st->fields[f].type, strlen(st->fields[f].type));
        nx_strbuf_puts(&b, ",\"value\":");
        const nxpq_column_data *c = nx_event_field(&ev, f);
        if (c)
            nx_json_cell(&b, c, ev.row);
        else
            nx_strbuf_puts(&b, "null");
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_putc(&b, ']');
    if (ev.has_track) {
        nx_strbuf_puts(&b, ",\"track\":");
        nx_json_put_string(&b, ev.track, ev.track_len);
    }
    rc = strcmp(table, "Instruction") == 0 ? nx_api_nki_member(&b, dir, &ev, &err) : 0;
    nx_event_free(&ev);
    free(dir);
    if (rc != 0) {
        nx_strbuf_free(&b);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    }
    nx_strbuf_putc(&b, '}');
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* --------------------------------------------------------------- summary -- */
/* A JSON array of the names of st's fields, in schema order. */
static void json_names(nx_strbuf *b, const nx_schema_table *st)
{
    nx_strbuf_putc(b, '[');
    for (size_t f = 0; f < st->n_fields; f++) {
        if (f)
            nx_strbuf_putc(b, ',');
        nx_json_put_string(b, st->fields[f].name, strlen(st->fields[f].name));
    }
    nx_strbuf_putc(b, ']');
}

/* The device profile's summary (query/device_summary.h) as docs/api.md says. */
static enum MHD_Result device_summary(nx_api_req *r, const char *dir, int64_t top)
{
    nx_device_summary d;
    nx_error err = {0};
    if (nx_device_summary_read(dir, (size_t)top, &d, &err) < 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    const nx_schema_table *ss = nx_schema_table_find("Summary"), *os = nx_schema_table_find("OpcodeSummary");
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"kind\":\"device\",\"summary\":");
    if (d.summary.has_row) {
        for (size_t f = 0; f < ss->n_fields; f++) {
            nx_strbuf_putc(&b, f ? ',' : '{');
            nx_json_put_string(&b, ss->fields[f].name, strlen(ss->fields[f].name));
            nx_strbuf_putc(&b, ':');
            json_value(&b, nx_row0_field(&d.summary, ss->fields[f].name));
        }
        nx_strbuf_putc(&b, '}');
    } else {
        nx_strbuf_puts(&b, "null");
    }
    nx_strbuf_puts(&b, ",\"opcode_summary\":{\"columns\":");
    json_names(&b, os);
    nx_strbuf_puts(&b, ",\"rows\":[");
    for (size_t i = 0; i < d.n_opcodes; i++) {
        nx_strbuf_puts(&b, i ? ",[" : "[");
        for (size_t f = 0; f < NX_OPCODE_FIELDS; f++) {
            if (f)
                nx_strbuf_putc(&b, ',');
            json_value(&b, &d.opcodes[i][f]);
        }
        nx_strbuf_putc(&b, ']');
    }
    nx_strbuf_printf(&b, "],\"total_rows\":%" PRId64 "},\"nki_coverage\":", d.have_opcodes ? d.opcode_rows : 0);
    if (d.nki.present) {
        nx_strbuf_puts(&b, "{\"percent\":");
        nx_json_put_f64(&b, nx_nki_coverage_percent(&d.nki));
        nx_strbuf_printf(&b, ",\"kernel_ns\":%" PRId64 ",\"total_ns\":%" PRId64 ",\"kernel_instructions\":%" PRId64
                             ",\"instructions\":%" PRId64 "}}", d.nki.kernel_ns, d.nki.total_ns,
                         d.nki.kernel_instructions, d.nki.instructions);
    } else
        nx_strbuf_puts(&b, "null}");
    nx_device_summary_free(&d);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

enum MHD_Result nx_api_summary(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    int64_t top, rank, profiler_rows;
    if (nx_api_int_param(r, "top", false, 50, 1, 10000, &top, &res) < 0 ||
        nx_api_int_param(r, "rank", false, -1, 0, INT64_MAX, &rank, &res) < 0 ||
        nx_api_int_param(r, "profiler_rows", false, 0, 0, 1, &profiler_rows, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    profile_info p;
    if (info_read(r->srv, name, dir, &p) < 0) {
        info_free(&p);
        free(dir);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    bool device = p.info.device;
    info_free(&p);
    if (device && rank >= 0)
        res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "rank: %s is a device profile; ranks are a system profile's", name);
    else
        res = device ? device_summary(r, dir, top)
                     : nx_api_system_summary(r, name, dir, rank, profiler_rows == 1);
    free(dir);
    return res;
}
