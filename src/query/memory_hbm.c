/*
 * memory_hbm.c — the HBM half of the Memory view's answer (memory.h): the bytes
 * of HbmUsageSummaryByType summed per usage category, largest first. `process`
 * writes the table in the system profile, one set of rows per NeuronCore; a device
 * profile's view reads its own NeuronCore's there (a table in the device profile
 * itself, as another tool may write it, comes first).
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_layout.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/memory.h"
#include "query/row0.h"

/* Which rows count: all of the device profile's own table, or, read from its system
 * profile (where `process` writes the table), those of its NeuronCore. */
typedef struct hbm_scan {
    nx_memory *m;
    bool filter;
    int64_t device, core;
} hbm_scan;

/* The category named s[0..len), added when new; NULL and err past the cap or out of memory. */
static nx_hbm_category *category(nx_memory *m, const char *s, size_t len, nx_error *err)
{
    for (size_t i = 0; i < m->n_hbm; i++)
        if (strlen(m->hbm[i].usage_type) == len && memcmp(m->hbm[i].usage_type, s, len) == 0)
            return &m->hbm[i];
    if (m->n_hbm == NX_MEMORY_MAX_CATEGORIES) {
        nx_error_set(err, "HbmUsageSummaryByType: more than %d usage_type values", NX_MEMORY_MAX_CATEGORIES);
        return NULL;
    }
    char *name = malloc(len + 1);
    nx_hbm_category *grown = realloc(m->hbm, (m->n_hbm + 1) * sizeof *m->hbm);
    if (grown)
        m->hbm = grown;
    if (!name || !grown) {
        free(name);
        nx_error_set(err, "HbmUsageSummaryByType: out of memory");
        return NULL;
    }
    memcpy(name, s, len);
    name[len] = '\0';
    m->hbm[m->n_hbm] = (nx_hbm_category){name, 0};
    return &m->hbm[m->n_hbm++];
}

static int add_batch(void *ctx, const nxpq_batch *b, size_t file, nx_error *err)
{
    (void)file;
    hbm_scan *h = ctx;
    nx_memory *m = h->m;
    for (size_t i = 0; i < b->n_rows; i++) {
        const char *s;
        size_t len;
        int64_t bytes, device, core;
        if (h->filter && (!nx_column_int(&b->columns[2], i, &device) || !nx_column_int(&b->columns[3], i, &core) ||
                          device != h->device || core != h->core))
            continue;
        if (!nx_column_str(&b->columns[0], i, &s, &len) || !nx_column_int(&b->columns[1], i, &bytes)) {
            m->hbm_skipped++;
            continue;
        }
        nx_hbm_category *c = category(m, s, len, err);
        if (!c)
            return -1;
        c->bytes += bytes;
        m->hbm_total += bytes;
    }
    return 0;
}

static int cmp_category(const void *x, const void *y)
{
    const nx_hbm_category *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(a->usage_type, b->usage_type);
}

/* Each column must be there with its catalogue type, else an error naming the file. */
static int check_columns(nx_profile_table *t, int n, nx_error *err)
{
    const char *name[4] = {"usage_type", "usage_bytes", "neuron_device_idx", "neuroncore_idx"};
    for (int k = 0; k < n; k++) {
        int c = nx_profile_table_find_column(t, name[k]);
        nxpq_type ty = c >= 0 ? nx_profile_table_column(t, (size_t)c)->type : NXPQ_BOOLEAN;
        bool ok = k == 0 ? ty == NXPQ_STRING : ty == NXPQ_INT64 || ty == NXPQ_INT32;
        if (!ok) {
            nx_error_set(err, "%s: column '%s' is missing or not %s", nx_profile_table_file_path(t, 0), name[k],
                           k == 0 ? "a string" : "an integer");
            return -1;
        }
    }
    return 0;
}

static bool is_int(nxpq_type t)
{
    return t == NXPQ_INT32 || t == NXPQ_INT64;
}

/* The device profile's NeuronCore (Metadata's neuron_device_idx, neuroncore_idx):
 * 1 when known, 0 when not (no Metadata, or the fields are null), -1 on error. */
static int device_core(const char *profile_dir, hbm_scan *h, nx_error *err)
{
    nx_row0 r;
    if (nx_row0_read(profile_dir, "Metadata", &r, err) < 0)
        return -1;
    const nx_cell *d = nx_row0_field(&r, "neuron_device_idx"), *c = nx_row0_field(&r, "neuroncore_idx");
    int known = r.has_row && d && c && !d->null && !c->null && is_int(d->type) && is_int(c->type);
    if (known)
        h->device = d->i, h->core = c->i;
    nx_row0_free(&r);
    return known;
}

/* Opens HbmUsageSummaryByType: the device profile's own, else its system profile's
 * with h->filter set to the device's NeuronCore. NX_PROFILE_TABLE_ABSENT when
 * neither holds it. */
static int open_table(const char *profile_dir, hbm_scan *h, nx_profile_table **t, nx_error *err)
{
    int rc = nx_profile_table_open(profile_dir, "HbmUsageSummaryByType", t, err);
    if (rc != NX_PROFILE_TABLE_ABSENT)
        return rc;
    char *sys = nx_layout_system_dir(profile_dir);
    if (!sys)
        return NX_PROFILE_TABLE_ABSENT;
    int known = device_core(profile_dir, h, err);
    rc = known < 0 ? -1 : known == 0 ? NX_PROFILE_TABLE_ABSENT
                                     : nx_profile_table_open(sys, "HbmUsageSummaryByType", t, err);
    free(sys);
    h->filter = true;
    return rc;
}

int nx_memory_read_hbm(const char *profile_dir, nx_memory *m, nx_error *err)
{
    nx_profile_table *t;
    hbm_scan h = {.m = m};
    int rc = open_table(profile_dir, &h, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    m->has_hbm = true;
    const char *cols[4] = {"usage_type", "usage_bytes", "neuron_device_idx", "neuroncore_idx"};
    nx_profile_scan_options o = {.columns = cols, .n_columns = h.filter ? 4 : 2};
    rc = check_columns(t, h.filter ? 4 : 2, err);
    if (rc == 0)
        rc = nx_profile_scan_each(t, &o, add_batch, &h, err);
    nx_profile_table_close(t);
    if (rc == 0 && m->n_hbm)
        qsort(m->hbm, m->n_hbm, sizeof *m->hbm, cmp_category);
    return rc;
}
