/* profile_info.c — what a profile directory holds (rules in profile_info.h). */
#define _DEFAULT_SOURCE /* dirfd */
#include "query/profile_info.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_layout.h"
#include "profile/annotations.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/row0.h"
#include "schema/schema.h"
#include "util/text.h"

void nx_profile_info_free(nx_profile_info *p)
{
    for (size_t i = 0; i < p->n_tables; i++)
        free(p->tables[i]);
    free(p->tables);
    for (size_t i = 0; i < p->n_devices; i++) {
        free(p->devices[i].name);
        free(p->devices[i].dir);
    }
    free(p->devices);
    free(p->error);
    memset(p, 0, sizeof *p);
}

/* Appends msg to p->error ("; " between messages). -1 when out of memory. */
static int add_error(nx_profile_info *p, const char *msg)
{
    size_t old = p->error ? strlen(p->error) : 0, n = old + strlen(msg) + 3;
    char *e = realloc(p->error, n);
    if (!e)
        return -1;
    snprintf(e + old, n - old, "%s%s", old ? "; " : "", msg);
    p->error = e;
    return 0;
}

/* Table name of a profile file name into out, or 0 when it is not a .parquet file. */
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

static bool is_device_table(const char *t)
{
    const nx_timeline_view *v = nx_timeline_view_find(t);
    return v && strcmp(nx_timeline_group_at(v->group)->id, "system") != 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Lists the directory: size, tables, device. -1 when out of memory. */
static int list_dir(const char *dir, nx_profile_info *p)
{
    DIR *d = opendir(dir);
    if (!d) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s: %s", dir, strerror(errno));
        return add_error(p, msg);
    }
    p->readable = true;
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        struct stat st;
        char tn[256];
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        p->size += (uint64_t)st.st_size;
        if (!table_of_file(e->d_name, tn, sizeof tn))
            continue;
        if (p->n_tables == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **g = realloc(p->tables, nc * sizeof *g);
            if (!g) {
                rc = -1;
                break;
            }
            p->tables = g;
            cap = nc;
        }
        if (!(p->tables[p->n_tables] = strdup(tn)))
            rc = -1;
        else
            p->device |= is_device_table(p->tables[p->n_tables++]);
    }
    closedir(d);
    if (rc < 0)
        return -1;
    if (p->n_tables > 1) /* (an empty directory has no array: qsort(NULL, 0) is undefined) */
        qsort(p->tables, p->n_tables, sizeof *p->tables, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < p->n_tables; i++) {
        if (u && strcmp(p->tables[i], p->tables[u - 1]) == 0)
            free(p->tables[i]);
        else
            p->tables[u++] = p->tables[i];
    }
    p->n_tables = u;
    return 0;
}

/* One DeviceProfileList row into x: false when out of memory. x->dir stays NULL
 * for a name nx_device_profile_dir refuses. */
static bool device_row(const char *dir, nx_profile_device *x, const nxpq_column_data *cn, const nxpq_column_data *cc,
                       size_t i)
{
    const char *s = "";
    size_t len = 0;
    nx_column_str(cn, i, &s, &len); /* the caller skips null names */
    if (!(x->name = nx_text_dup(s, len)))
        return false;
    x->has_nc = cc && nx_column_int(cc, i, &x->nc_id);
    nx_error e = {0};
    x->dir = nx_device_profile_dir(dir, x->name, &e);
    return true;
}

/* Reads DeviceProfileList into p->devices. 0 (also without the table), 1 with
 * err (the table cannot be read), -1 when out of memory. */
static int read_devices(const char *dir, nx_profile_info *p, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, "DeviceProfileList", &t, err);
    if (rc != 0)
        return rc == NX_PROFILE_TABLE_ABSENT ? 0 : 1;
    int ci_name = nx_profile_table_find_column(t, "device_profile_name");
    int ci_nc = nx_profile_table_find_column(t, "nc_id");
    if (ci_name < 0 || nx_profile_table_column(t, (size_t)ci_name)->type != NXPQ_STRING) {
        nx_error_set(err, "%s: no string column device_profile_name", nx_profile_table_file_path(t, 0));
        nx_profile_table_close(t);
        return 1;
    }
    nxpq_type nc_type = ci_nc < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)ci_nc)->type;
    bool with_nc = nc_type == NXPQ_INT64 || nc_type == NXPQ_INT32;
    const char *cols[] = {"device_profile_name", "nc_id"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = with_nc ? 2 : 1};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    size_t rows = (size_t)nx_profile_table_num_rows(t);
    rc = s ? 0 : 1;
    if (s && rows > 0 && !(p->devices = calloc(rows, sizeof *p->devices)))
        rc = -1;
    const nxpq_batch *b;
    int more;
    while (rc == 0 && (more = nx_profile_scan_next(s, &b, err)) != 0) {
        if (more < 0) {
            rc = 1;
            break;
        }
        const nxpq_column_data *cn = &b->columns[0], *cc = with_nc ? &b->columns[1] : NULL;
        for (size_t i = 0; rc == 0 && i < b->n_rows && p->n_devices < rows; i++)
            if ((!cn->valid || cn->valid[i]) && !device_row(dir, &p->devices[p->n_devices++], cn, cc, i))
                rc = -1;
    }
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    return rc;
}

/* Whether SystemProfileMetadata says the times are relative (profile_info.h).
 * 0, 1 with err (unreadable: named in the answer), or -1 when out of memory. */
static int read_relative(const char *dir, nx_profile_info *p, nx_error *err)
{
    nx_row0 r;
    if (nx_row0_read(dir, "SystemProfileMetadata", &r, err) != 0)
        return 1;
    size_t k = strlen(NX_RELATIVE_TIME_SUFFIX);
    for (size_t i = 0; i < r.n; i++) {
        const nx_cell *c = &r.cells[i];
        if (c->name && strcmp(c->name, "first_ts") == 0 && c->type == NXPQ_STRING && !c->null && c->len >= k)
            p->relative_time = memcmp(c->s + c->len - k, NX_RELATIVE_TIME_SUFFIX, k) == 0;
    }
    nx_row0_free(&r);
    return 0;
}

/* The counts of the profile's saved annotations; an unreadable file is an error. */
static int read_annotations(const char *dir, nx_profile_info *p)
{
    nx_annotations a;
    nx_error err = {0};
    if (nx_annotations_load(dir, &a, &err) < 0)
        return add_error(p, err.msg);
    p->n_markers = a.n_markers;
    p->n_regions = a.n_regions;
    nx_annotations_free(&a);
    return 0;
}

int nx_profile_info_read(const char *profile_dir, nx_profile_info *out)
{
    memset(out, 0, sizeof *out);
    int rc = list_dir(profile_dir, out);
    if (rc == 0 && out->readable) {
        nx_error err = {0};
        int span = nx_profile_span(profile_dir, &out->first_ts, &out->last_ts, &err);
        out->has_span = span == 0;
        if (span < 0)
            rc = add_error(out, err.msg);
        int rel = rc == 0 && !out->device ? read_relative(profile_dir, out, &err) : 0;
        if (rel > 0)
            rc = add_error(out, err.msg);
        if (rc == 0)
            rc = read_annotations(profile_dir, out);
        int dev = rc == 0 && !out->device ? read_devices(profile_dir, out, &err) : 0;
        if (dev > 0)
            rc = add_error(out, err.msg);
        else if (dev < 0)
            rc = -1;
    }
    if (rc != 0)
        nx_profile_info_free(out);
    return rc;
}
