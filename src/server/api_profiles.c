/*
 * api_profiles.c — the profile endpoints of the HTTP API (docs/api.md): the list,
 * one profile, its tracks (cached), one event's row, Summary/OpcodeSummary (a system
 * profile's summary: api_system.c).
 *
 * Rules:
 *   - listing: directories named "<name>@latest" directly in <data-path>/profiles/
 *     global that resolve (nx_api_resolve_profile: a valid name whose realpath stays
 *     in that directory; a symlinked profile pointing outside is not listed), sorted
 *     by name (strcmp);
 *   - size_bytes: sum of st_size of the regular files (lstat; symlinks not followed)
 *     directly in the profile directory (a system profile's devices/ not included);
 *   - tables: every "*.parquet" file name without the extension, and without a
 *     "_<digits>" suffix when the rest names a schema table (split tables), sorted,
 *     unique;
 *   - kind: "device" when a device timeline table (DEVICE_TABLES) is present, else
 *     "system"; null when the directory cannot be listed;
 *   - device_profiles (system profiles): the DeviceProfileList rows in table order,
 *     each with the name it is served under: where query/system_summary.h
 *     nx_device_profile_dir finds it (nested in the system profile's devices/ folder
 *     first, else the sibling <name>@latest), named as nx_api_device_open_name says;
 *   - system_profile (device profiles, listing only): the first system profile, in
 *     name order, whose device_profiles open it;
 *   - error: what could not be read (the directory, Metadata, DeviceProfileList),
 *     naming the file; the profile is listed all the same;
 *   - first_ts/last_ts: the smallest Metadata.first_hw_timestamp and the largest
 *     last_hw_timestamp over its rows (profile/profile_table.h nx_profile_span), null
 *     when missing;
 *   - tracks: query/tracks.h's answer written as docs/api.md says; the JSON is cached
 *     (server/response_cache.h) per (realpath, inode, mtime) of the profile directory;
 *   - event: query/event.h's row (the `start` parameter is its start hint), every
 *     schema field in order;
 *   - summary: a device profile's from query/device_summary.h (`top` OpcodeSummary
 *     rows, default 50, 1..10000), a system profile's from api_system.c.
 */
#define _DEFAULT_SOURCE /* realpath, strndup, dirfd */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_output.h"
#include "profile/profile_table.h"
#include "query/device_summary.h"
#include "query/event.h"
#include "query/system_summary.h"
#include "query/tracks.h"
#include "schema/schema.h"
#include "server/api_internal.h"
#include "server/response_cache.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Table name of a profile file name, or 0 when it is not a .parquet file. */
static size_t table_of_file(const char *fname, char *out, size_t cap)
{
    size_t n = strlen(fname);
    if (n <= 8 || strcmp(fname + n - 8, ".parquet") != 0 || n - 8 >= cap)
        return 0;
    n -= 8;
    memcpy(out, fname, n);
    out[n] = '\0';
    size_t k = n;
    while (k > 0 && out[k - 1] >= '0' && out[k - 1] <= '9')
        k--;
    if (k < n && k > 1 && out[k - 1] == '_') {
        out[k - 1] = '\0';
        if (nx_schema_table_find(out))
            return k - 1;
        out[k - 1] = '_';
    }
    return n;
}

/* The device timeline tables: their presence makes a profile a device profile. */
static const char *const DEVICE_TABLES[] = {"Instruction", "DmaPacketAggregated", "DmaPacket",
                                            "SemaphoreUpdate", "CcInstruction", "CcOp"};

static bool is_device_table(const char *t)
{
    for (size_t i = 0; i < sizeof DEVICE_TABLES / sizeof DEVICE_TABLES[0]; i++)
        if (strcmp(DEVICE_TABLES[i], t) == 0)
            return true;
    return false;
}

/* Reads columns of row 0 of `table`: appends a JSON object {field: value} in schema
 * order, or "null" when the table is absent/empty. -1 on read errors. */
static int row0_object(const char *dir, const char *table, nx_strbuf *b)
{
    nx_profile_table *t = NULL;
    nxpq_error err = {{0}};
    int rc = nx_profile_table_open(dir, table, &t, &err);
    const nx_schema_table *st = nx_schema_table_find(table);
    if (rc != 0 || !st) {
        nx_strbuf_puts(b, "null");
        return rc < 0 ? -1 : 0;
    }
    const char **cols = calloc(st->n_fields + 1, sizeof *cols);
    int *where = calloc(st->n_fields + 1, sizeof *where);
    int result = -1;
    nx_profile_scan *s = NULL;
    if (!cols || !where)
        goto done;
    size_t nc = 0;
    for (size_t i = 0; i < st->n_fields; i++) {
        int c = nx_profile_table_find_column(t, st->fields[i].name);
        if (c < 0 || nx_profile_table_column(t, (size_t)c)->type == NXPQ_UNSUPPORTED) {
            where[i] = -1;
            continue;
        }
        where[i] = (int)nc;
        cols[nc++] = st->fields[i].name;
    }
    const nxpq_batch *batch = NULL;
    if (nc > 0) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = nc, .batch_rows = 16};
        if (!(s = nx_profile_scan_open(t, &so, &err)))
            goto done;
        if (nx_profile_scan_next(s, &batch, &err) < 0)
            goto done;
    }
    if (!batch || batch->n_rows == 0) {
        nx_strbuf_puts(b, "null");
    } else {
        nx_strbuf_putc(b, '{');
        for (size_t i = 0; i < st->n_fields; i++) {
            if (i)
                nx_strbuf_putc(b, ',');
            nx_json_str(b, st->fields[i].name, strlen(st->fields[i].name));
            nx_strbuf_putc(b, ':');
            if (where[i] < 0)
                nx_strbuf_puts(b, "null");
            else
                nx_json_cell(b, &batch->columns[where[i]], 0);
        }
        nx_strbuf_putc(b, '}');
    }
    result = 0;
done:
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    free(cols);
    free(where);
    return result;
}

/* ---------------------------------------------------------------- listing -- */
/* One row of a system profile's DeviceProfileList. */
typedef struct device_ref {
    char *name;     /* device_profile_name */
    bool has_nc;
    int64_t nc_id;
    char *open;     /* the name it is served under (api_internal.h), NULL when absent */
} device_ref;

/* What the listing says of one profile (docs/api.md "GET /api/profiles"). */
typedef struct profile_info {
    char *name;
    bool readable, device;   /* the directory was listed; a device timeline table is in it */
    uint64_t size;
    char **tables;           /* sorted, unique */
    size_t n_tables;
    bool has_span;
    int64_t first, last;
    device_ref *devs;        /* system profiles: their DeviceProfileList rows */
    size_t n_devs;
    const char *system;      /* device profiles in the listing: the system profile naming it, or NULL */
    nx_strbuf error;         /* what could not be read ("; " between messages) */
} profile_info;

static void devices_free(device_ref *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(d[i].name);
        free(d[i].open);
    }
    free(d);
}

static void info_free(profile_info *p)
{
    free(p->name);
    for (size_t i = 0; i < p->n_tables; i++)
        free(p->tables[i]);
    free(p->tables);
    devices_free(p->devs, p->n_devs);
    nx_strbuf_free(&p->error);
}

static void info_error(profile_info *p, const char *msg)
{
    if (p->error.len)
        nx_strbuf_puts(&p->error, "; ");
    nx_strbuf_puts(&p->error, msg);
}

int nx_api_device_open_name(const nx_server_ctx *srv, const char *sys, const char *sys_dir, const char *dev,
                            const char *dev_dir, char **open)
{
    *open = NULL;
    if (!dev_dir)
        return 0;
    size_t sl = strlen(sys_dir);
    bool nested = strncmp(dev_dir, sys_dir, sl) == 0 && dev_dir[sl] == '/';
    size_t n = strlen(sys) + strlen(dev) + sizeof NX_API_NESTED_DIR + 2;
    char *name = malloc(n), *dir = NULL, msg[64];
    if (!name)
        return -1;
    if (nested)
        snprintf(name, n, "%s/%s/%s", sys, NX_API_NESTED_DIR, dev);
    else
        snprintf(name, n, "%s", dev);
    unsigned st = nx_api_resolve_profile(srv, name, &dir, msg, sizeof msg);
    free(dir);
    if (st == 0)
        *open = name;
    else
        free(name);
    return st == MHD_HTTP_INTERNAL_SERVER_ERROR ? -1 : 0;
}

/* Reads the DeviceProfileList of system profile `sys` (directory `dir`) into
 * devs and n, each row resolved to the name it is served under. 0; 1 when the
 * profile has no DeviceProfileList; -1 with err (naming the file). */
static int device_list_read(const nx_server_ctx *srv, const char *sys, const char *dir, device_ref **devs, size_t *n,
                            nxpq_error *err)
{
    *devs = NULL;
    *n = 0;
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, "DeviceProfileList", &t, err);
    if (rc != 0)
        return rc == NX_PROFILE_TABLE_ABSENT ? 1 : -1;
    const char *file = nx_profile_table_file_path(t, 0);
    int ci_name = nx_profile_table_find_column(t, "device_profile_name");
    int ci_nc = nx_profile_table_find_column(t, "nc_id");
    if (ci_name < 0 || nx_profile_table_column(t, (size_t)ci_name)->type != NXPQ_STRING) {
        snprintf(err->msg, sizeof err->msg, "%s: no string column device_profile_name", file);
        nx_profile_table_close(t);
        return -1;
    }
    nxpq_type nc_type = ci_nc < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)ci_nc)->type;
    bool with_nc = nc_type == NXPQ_INT64 || nc_type == NXPQ_INT32;
    const char *cols[] = {"device_profile_name", "nc_id"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = with_nc ? 2 : 1};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    size_t rows = (size_t)nx_profile_table_num_rows(t), k = 0;
    device_ref *d = s && rows > 0 ? calloc(rows, sizeof *d) : NULL;
    int result = s ? 0 : -1;
    if (s && rows > 0 && !d) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", file);
        result = -1;
    }
    const nxpq_batch *b;
    while (result == 0 && (rc = nx_profile_scan_next(s, &b, err)) != 0) {
        if (rc < 0) {
            result = -1;
            break;
        }
        const nxpq_column_data *cn = &b->columns[0], *cc = with_nc ? &b->columns[1] : NULL;
        for (size_t i = 0; i < b->n_rows && k < rows; i++) {
            if (cn->valid && !cn->valid[i])
                continue;
            device_ref *x = &d[k++];
            x->name = strndup(cn->data + cn->offsets[i], (size_t)(cn->offsets[i + 1] - cn->offsets[i]));
            x->has_nc = cc && (!cc->valid || cc->valid[i]);
            if (x->has_nc)
                x->nc_id = cc->type == NXPQ_INT64 ? cc->values.i64[i] : cc->values.i32[i];
            bool oom = !x->name;
            if (!oom) {
                /* Where the summary looks for it; NULL (a name it refuses): nowhere. */
                nxpq_error e = {{0}};
                char *dd = nx_device_profile_dir(dir, x->name, &e);
                oom = nx_api_device_open_name(srv, sys, dir, x->name, dd, &x->open) < 0;
                free(dd);
            }
            if (oom) {
                snprintf(err->msg, sizeof err->msg, "%s: out of memory", file);
                result = -1;
                break;
            }
        }
    }
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    *devs = d;
    *n = k;
    return result;
}

/* Fills *p for profile `name` in directory `dir`. Problems reading a file go to
 * p->error; -1 only when out of memory. */
static int info_read(const nx_server_ctx *srv, const char *name, const char *dir, profile_info *p)
{
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup(name)))
        return -1;
    DIR *d = opendir(dir);
    if (!d) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s: %s", dir, strerror(errno));
        info_error(p, msg);
        return nx_strbuf_failed(&p->error) ? -1 : 0;
    }
    p->readable = true;
    size_t cap = 0;
    bool oom = false;
    struct dirent *e;
    int dfd = dirfd(d);
    while (!oom && (e = readdir(d)) != NULL) {
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        p->size += (uint64_t)st.st_size;
        char tn[256];
        if (!table_of_file(e->d_name, tn, sizeof tn))
            continue;
        if (p->n_tables == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **g = realloc(p->tables, nc * sizeof *g);
            if (!g) {
                oom = true;
                break;
            }
            p->tables = g;
            cap = nc;
        }
        if (!(p->tables[p->n_tables] = strdup(tn)))
            oom = true;
        else
            p->device |= is_device_table(p->tables[p->n_tables++]);
    }
    closedir(d);
    if (oom)
        return -1;
    qsort(p->tables, p->n_tables, sizeof *p->tables, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < p->n_tables; i++) {
        if (u && strcmp(p->tables[i], p->tables[u - 1]) == 0)
            free(p->tables[i]);
        else
            p->tables[u++] = p->tables[i];
    }
    p->n_tables = u;
    nxpq_error err = {{0}};
    int rc = nx_profile_span(dir, &p->first, &p->last, &err);
    p->has_span = rc == 0;
    if (rc < 0)
        info_error(p, err.msg);
    if (!p->device && device_list_read(srv, name, dir, &p->devs, &p->n_devs, &err) < 0)
        info_error(p, err.msg);
    return nx_strbuf_failed(&p->error) ? -1 : 0;
}

/* Appends the profile's JSON object, without its closing brace; with_system: a device
 * profile's system_profile too (the listing's relation between profiles). */
static void info_json(const profile_info *p, bool with_system, nx_strbuf *b)
{
    nx_strbuf_puts(b, "{\"name\":");
    nx_json_str(b, p->name, strlen(p->name));
    nx_strbuf_printf(b, ",\"kind\":%s,\"size_bytes\":%" PRIu64 ",\"first_ts\":",
                     !p->readable ? "null" : p->device ? "\"device\"" : "\"system\"", p->size);
    if (p->has_span)
        nx_json_i64(b, p->first);
    else
        nx_strbuf_puts(b, "null");
    nx_strbuf_puts(b, ",\"last_ts\":");
    if (p->has_span)
        nx_json_i64(b, p->last);
    else
        nx_strbuf_puts(b, "null");
    nx_strbuf_puts(b, ",\"tables\":[");
    for (size_t i = 0; i < p->n_tables; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        nx_json_str(b, p->tables[i], strlen(p->tables[i]));
    }
    nx_strbuf_putc(b, ']');
    if (p->readable && !p->device) {
        nx_strbuf_puts(b, ",\"device_profiles\":[");
        for (size_t i = 0; i < p->n_devs; i++) {
            const device_ref *x = &p->devs[i];
            nx_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
            nx_json_str(b, x->name, strlen(x->name));
            nx_strbuf_puts(b, ",\"nc_id\":");
            if (x->has_nc)
                nx_json_i64(b, x->nc_id);
            else
                nx_strbuf_puts(b, "null");
            nx_strbuf_printf(b, ",\"exists\":%s,\"open\":", x->open ? "true" : "false");
            if (x->open)
                nx_json_str(b, x->open, strlen(x->open));
            else
                nx_strbuf_puts(b, "null");
            nx_strbuf_putc(b, '}');
        }
        nx_strbuf_putc(b, ']');
    }
    if (p->device && with_system) {
        nx_strbuf_puts(b, ",\"system_profile\":");
        if (p->system)
            nx_json_str(b, p->system, strlen(p->system));
        else
            nx_strbuf_puts(b, "null");
    }
    if (p->error.len) {
        nx_strbuf_puts(b, ",\"error\":");
        nx_json_str(b, p->error.data, p->error.len);
    }
}

static int info_cmp(const void *a, const void *b)
{
    return strcmp(((const profile_info *)a)->name, ((const profile_info *)b)->name);
}

/* Every profile of the data path ("<name>@latest" directly in the root that
 * resolves), read and sorted by name, device profiles marked with the first system
 * profile (in name order) whose DeviceProfileList names them. 0, or -1 when out of
 * memory. */
static int list_all(const nx_server_ctx *srv, profile_info **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    char *root = realpath(srv->root, NULL);
    DIR *d = root ? opendir(root) : NULL;
    free(root);
    if (!d)
        return 0; /* no data path yet: an empty listing */
    profile_info *ps = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 7 || strcmp(e->d_name + len - 7, "@latest") != 0)
            continue;
        char *name = strndup(e->d_name, len - 7), *dir = NULL, msg[400];
        unsigned st = name ? nx_api_resolve_profile(srv, name, &dir, msg, sizeof msg) : MHD_HTTP_INTERNAL_SERVER_ERROR;
        if (st == 0 && n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            profile_info *g = realloc(ps, nc * sizeof *g);
            if (g) {
                ps = g;
                cap = nc;
            } else {
                st = MHD_HTTP_INTERNAL_SERVER_ERROR;
            }
        }
        if (st == 0) {
            rc = info_read(srv, name, dir, &ps[n]);
            n++;
        } else if (st == MHD_HTTP_INTERNAL_SERVER_ERROR) {
            rc = -1;
        } /* else an invalid name or one resolving outside the data path: not listed */
        free(name);
        free(dir);
    }
    closedir(d);
    if (rc == 0) {
        qsort(ps, n, sizeof *ps, info_cmp);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < ps[i].n_devs; j++) {
                profile_info key = {.name = ps[i].devs[j].open};
                profile_info *dev = key.name ? bsearch(&key, ps, n, sizeof *ps, info_cmp) : NULL;
                if (dev && dev->device && !dev->system)
                    dev->system = ps[i].name;
            }
    }
    *out = ps;
    *count = n;
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
        info_json(&ps[i], true, &b);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "]}");
    list_free(ps, n);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

enum MHD_Result nx_api_profile(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    profile_info p;
    int rc = info_read(r->srv, name, dir, &p);
    nx_strbuf b = NX_STRBUF_INIT;
    if (rc == 0) {
        info_json(&p, false, &b);
        nx_strbuf_puts(&b, ",\"metadata\":");
        if (row0_object(dir, "Metadata", &b) < 0)
            rc = 1;
        nx_strbuf_putc(&b, '}');
    }
    info_free(&p);
    free(dir);
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
        nx_json_str(b, p->s, p->len);
    else
        nx_json_i64(b, p->i);
}

static void json_track(nx_strbuf *b, const nx_track_entry *t)
{
    nx_strbuf_puts(b, "{\"table\":");
    nx_json_str(b, t->view->table, strlen(t->view->table));
    nx_strbuf_puts(b, ",\"track\":");
    nx_json_str(b, t->name, t->name_len);
    nx_strbuf_printf(b, ",\"count\":%" PRId64 ",\"first_ts\":", t->count);
    nx_json_i64(b, t->first_ts);
    nx_strbuf_puts(b, ",\"last_ts\":");
    nx_json_i64(b, t->last_ts);
    nx_strbuf_printf(b, ",\"max_depth\":%" PRIu32, t->max_depth);
    if (t->has_parts) {
        json_part(b, "source", &t->source, true);
        json_part(b, "instance", &t->instance, true);
        json_part(b, "pid", &t->pid, false);
        json_part(b, "tid", &t->tid, false);
        json_part(b, "nc", &t->nc, false);
    }
    nx_strbuf_putc(b, '}');
}

/* The tracks JSON of a profile directory (query/tracks.h). NULL (err set) on failure. */
static char *tracks_json(const char *dir, const char *name, nxpq_error *err)
{
    nx_tracks t;
    if (nx_tracks_read(dir, &t, err) != 0)
        return NULL;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"profile\":");
    nx_json_str(&b, name, strlen(name));
    nx_strbuf_puts(&b, ",\"first_ts\":");
    if (t.have_span)
        nx_json_i64(&b, t.first_ts);
    else
        nx_strbuf_puts(&b, "null");
    nx_strbuf_puts(&b, ",\"last_ts\":");
    if (t.have_span)
        nx_json_i64(&b, t.last_ts);
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
    nx_strbuf_puts(&b, "]}");
    nx_tracks_free(&t);
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        nxpq_error_set(err, "tracks: out of memory");
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
    struct stat st;
    if (stat(dir, &st) != 0) {
        free(dir);
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no such profile");
    }
    nx_strbuf b = NX_STRBUF_INIT;
    if (!nx_response_cache_get(dir, &st, "tracks", &b)) {
        nxpq_error err = {{0}};
        char *json = tracks_json(dir, name, &err);
        if (!json) {
            free(dir);
            return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
        }
        nx_strbuf_puts(&b, json);
        nx_response_cache_put(dir, &st, "tracks", json, strlen(json));
        free(json);
    }
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
    int64_t ord, hint = 0;
    if (nx_api_int_param(r, "ordinal", true, 0, 0, INT64_MAX, &ord, &res) < 0)
        return res;
    bool have_hint = nx_api_param(r, "start") != NULL;
    if (have_hint && nx_api_int_param(r, "start", false, 0, INT64_MIN, INT64_MAX, &hint, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_event ev;
    nxpq_error err = {{0}};
    int rc = nx_event_read(dir, table, ord, have_hint ? &hint : NULL, &ev, &err);
    free(dir);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "the profile has no %s table", table);
    if (rc == NX_EVENT_NONE)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no such event");
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"table\":");
    nx_json_str(&b, table, strlen(table));
    nx_strbuf_puts(&b, ",\"ordinal\":");
    nx_json_i64(&b, ord);
    nx_strbuf_puts(&b, ",\"fields\":[");
    for (size_t f = 0; f < st->n_fields; f++) {
        nx_strbuf_puts(&b, f ? ",{\"name\":" : "{\"name\":");
        nx_json_str(&b, st->fields[f].name, strlen(st->fields[f].name));
        nx_strbuf_puts(&b, ",\"type\":");
        nx_json_str(&b, st->fields[f].type, strlen(st->fields[f].type));
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
        nx_json_str(&b, ev.track, ev.track_len);
    }
    nx_strbuf_putc(&b, '}');
    nx_event_free(&ev);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* --------------------------------------------------------------- summary -- */
static void json_value(nx_strbuf *b, const nx_cell *c)
{
    if (!c || c->null) {
        nx_strbuf_puts(b, "null");
        return;
    }
    switch (c->type) {
    case NXPQ_BOOLEAN: nx_strbuf_puts(b, c->i ? "true" : "false"); break;
    case NXPQ_INT32:
    case NXPQ_INT64: nx_json_i64(b, c->i); break;
    case NXPQ_FLOAT: nx_json_f32(b, (float)c->f); break;
    case NXPQ_DOUBLE: nx_json_f64(b, c->f); break;
    case NXPQ_STRING: nx_json_str(b, c->s, c->len); break;
    default: nx_strbuf_puts(b, "null"); break;
    }
}

/* A JSON array of the names of st's fields, in schema order. */
static void json_names(nx_strbuf *b, const nx_schema_table *st)
{
    nx_strbuf_putc(b, '[');
    for (size_t f = 0; f < st->n_fields; f++) {
        if (f)
            nx_strbuf_putc(b, ',');
        nx_json_str(b, st->fields[f].name, strlen(st->fields[f].name));
    }
    nx_strbuf_putc(b, ']');
}

/* The device profile's summary (query/device_summary.h) as docs/api.md says. */
static enum MHD_Result device_summary(nx_api_req *r, const char *dir, int64_t top)
{
    nx_device_summary d;
    nxpq_error err = {{0}};
    if (nx_device_summary_read(dir, (size_t)top, &d, &err) < 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    const nx_schema_table *ss = nx_schema_table_find("Summary"), *os = nx_schema_table_find("OpcodeSummary");
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"kind\":\"device\",\"summary\":");
    if (d.has_row) {
        for (size_t f = 0; f < ss->n_fields; f++) {
            nx_strbuf_putc(&b, f ? ',' : '{');
            nx_json_str(&b, ss->fields[f].name, strlen(ss->fields[f].name));
            nx_strbuf_putc(&b, ':');
            json_value(&b, nx_device_summary_field(&d, ss->fields[f].name));
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
    nx_strbuf_printf(&b, "],\"total_rows\":%" PRId64 "}}", d.have_opcodes ? d.opcode_rows : 0);
    nx_device_summary_free(&d);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

enum MHD_Result nx_api_summary(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    int64_t top;
    if (nx_api_int_param(r, "top", false, 50, 1, 10000, &top, &res) < 0)
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
    bool device = p.device;
    info_free(&p);
    res = device ? device_summary(r, dir, top) : nx_api_system_summary(r, name, dir);
    free(dir);
    return res;
}
