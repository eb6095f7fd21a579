/*
 * memory_hbm.c — the HBM half of the Memory view's answer (memory.h): the bytes
 * of HbmUsageSummaryByType summed per usage category, largest first.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/memory.h"

/* The category named s[0..len), added when new; NULL and err past the cap or out of memory. */
static nx_hbm_category *category(nx_memory *m, const char *s, size_t len, nxpq_error *err)
{
    for (size_t i = 0; i < m->n_hbm; i++)
        if (strlen(m->hbm[i].usage_type) == len && memcmp(m->hbm[i].usage_type, s, len) == 0)
            return &m->hbm[i];
    if (m->n_hbm == NX_MEMORY_MAX_CATEGORIES) {
        nxpq_error_set(err, "HbmUsageSummaryByType: more than %d usage_type values", NX_MEMORY_MAX_CATEGORIES);
        return NULL;
    }
    char *name = malloc(len + 1);
    nx_hbm_category *grown = realloc(m->hbm, (m->n_hbm + 1) * sizeof *m->hbm);
    if (grown)
        m->hbm = grown;
    if (!name || !grown) {
        free(name);
        nxpq_error_set(err, "HbmUsageSummaryByType: out of memory");
        return NULL;
    }
    memcpy(name, s, len);
    name[len] = '\0';
    m->hbm[m->n_hbm] = (nx_hbm_category){name, 0};
    return &m->hbm[m->n_hbm++];
}

static int add_batch(void *ctx, const nxpq_batch *b, size_t file, nxpq_error *err)
{
    (void)file;
    nx_memory *m = ctx;
    for (size_t i = 0; i < b->n_rows; i++) {
        const char *s;
        size_t len;
        int64_t bytes;
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
static int check_columns(nx_profile_table *t, nxpq_error *err)
{
    const char *name[2] = {"usage_type", "usage_bytes"};
    for (int k = 0; k < 2; k++) {
        int c = nx_profile_table_find_column(t, name[k]);
        nxpq_type ty = c >= 0 ? nx_profile_table_column(t, (size_t)c)->type : NXPQ_BOOLEAN;
        bool ok = k == 0 ? ty == NXPQ_STRING : ty == NXPQ_INT64 || ty == NXPQ_INT32;
        if (!ok) {
            nxpq_error_set(err, "%s: column '%s' is missing or not %s", nx_profile_table_file_path(t, 0), name[k],
                           k == 0 ? "a string" : "an integer");
            return -1;
        }
    }
    return 0;
}

int nx_memory_read_hbm(const char *profile_dir, nx_memory *m, nxpq_error *err)
{
    nx_profile_table *t;
    int rc = nx_profile_table_open(profile_dir, "HbmUsageSummaryByType", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    m->has_hbm = true;
    const char *cols[2] = {"usage_type", "usage_bytes"};
    nx_profile_scan_options o = {.columns = cols, .n_columns = 2};
    rc = check_columns(t, err);
    if (rc == 0)
        rc = nx_profile_scan_each(t, &o, add_batch, m, err);
    nx_profile_table_close(t);
    if (rc == 0 && m->n_hbm)
        qsort(m->hbm, m->n_hbm, sizeof *m->hbm, cmp_category);
    return rc;
}
