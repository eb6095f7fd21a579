/*
 * api_usage.c — GET /api/profiles/<name>/usage?tables=DmaUsage,HbmUsage&start=S&end=E&width=W:
 * utilisation lanes for the viewer (docs/api.md).
 *
 * Rules: tables from DmaUsage and HbmUsage (default both; unknown or repeated -> 400;
 * a table the profile lacks gives no series). Rows with timestamp in [S, E] (both
 * inclusive; null timestamps or throughputs skipped) are grouped into one series per
 * (table, pcore_idx) (null pcore_idx is its own series, reported as null), series in
 * order of first appearance. Each series is reduced to at most `width` points: with
 * L = E - S + 1 the bucket of a sample is floor((t - S) * W / L) (the sampler's rule,
 * window.h), and each occupied bucket keeps the sample with the largest
 * current_throughput (ties: the earliest in file order). Points are emitted in bucket
 * order as t = timestamp - S and v = current_throughput. At most 256 series per
 * table (more -> 500): the series are NeuronCores, so this bounds memory by width.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/profile_table.h"
#include "server/api_internal.h"

#define MAX_SERIES 256

typedef struct series {
    bool has_core;
    int64_t core;
    int64_t *t;      /* per bucket: timestamp, INT64_MIN = empty */
    double *v;
} series;

static int usage_table(const char *dir, const char *table, int64_t start, int64_t end, uint32_t width, bool *first,
                       nx_strbuf *b, nxpq_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(dir, table, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc < 0)
        return -1;
    series ser[MAX_SERIES];
    size_t n_ser = 0;
    int result = -1;
    nx_profile_scan *sc = NULL;
    int ct = nx_profile_table_find_column(t, "timestamp"), cv = nx_profile_table_find_column(t, "current_throughput"),
        cp = nx_profile_table_find_column(t, "pcore_idx");
    if (ct < 0 || cv < 0 || nx_profile_table_column(t, (size_t)ct)->type != NXPQ_INT64) {
        result = 0; /* not a usable samples table: no series */
        goto done;
    }
    nxpq_type tv = nx_profile_table_column(t, (size_t)cv)->type;
    if (tv != NXPQ_FLOAT && tv != NXPQ_DOUBLE) {
        result = 0;
        goto done;
    }
    bool have_core = cp >= 0 && nx_profile_table_column(t, (size_t)cp)->type == NXPQ_INT64;
    const char *cols[3] = {"timestamp", "current_throughput", "pcore_idx"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = have_core ? 3 : 2, .range_column = "timestamp",
                                  .range_min = start, .range_max = end};
    if (!(sc = nx_profile_scan_open(t, &so, err)))
        goto done;
    unsigned __int128 L = (unsigned __int128)((__int128)end - (__int128)start + 1);
    const nxpq_batch *bt;
    while ((rc = nx_profile_scan_next(sc, &bt, err)) > 0) {
        const nxpq_column_data *c0 = &bt->columns[0], *c1 = &bt->columns[1], *c2 = have_core ? &bt->columns[2] : NULL;
        for (size_t i = 0; i < bt->n_rows; i++) {
            if ((c0->valid && !c0->valid[i]) || (c1->valid && !c1->valid[i]))
                continue;
            int64_t ts = c0->values.i64[i];
            if (ts < start || ts > end)
                continue;
            double v = c1->type == NXPQ_FLOAT ? (double)c1->values.f32[i] : c1->values.f64[i];
            bool hc = c2 && (!c2->valid || c2->valid[i]);
            int64_t core = hc ? c2->values.i64[i] : 0;
            size_t s = 0;
            while (s < n_ser && !(ser[s].has_core == hc && ser[s].core == core))
                s++;
            if (s == n_ser) {
                if (n_ser == MAX_SERIES) {
                    snprintf(err->msg, sizeof err->msg, "%s: more than %d series", table, MAX_SERIES);
                    goto done;
                }
                ser[s] = (series){hc, core, malloc(width * sizeof(int64_t)), malloc(width * sizeof(double))};
                n_ser++;
                if (!ser[s].t || !ser[s].v) {
                    snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
                    goto done;
                }
                for (uint32_t k = 0; k < width; k++)
                    ser[s].t[k] = INT64_MIN;
            }
            uint32_t bucket = (uint32_t)((unsigned __int128)((__int128)ts - (__int128)start) * width / L);
            if (ser[s].t[bucket] == INT64_MIN || v > ser[s].v[bucket]) {
                ser[s].t[bucket] = ts;
                ser[s].v[bucket] = v;
            }
        }
    }
    if (rc < 0)
        goto done;
    for (size_t s = 0; s < n_ser; s++) {
        if (!*first)
            nx_strbuf_putc(b, ',');
        *first = false;
        nx_strbuf_puts(b, "{\"table\":");
        nx_json_str(b, table, strlen(table));
        nx_strbuf_puts(b, ",\"pcore_idx\":");
        if (ser[s].has_core)
            nx_json_i64(b, ser[s].core);
        else
            nx_strbuf_puts(b, "null");
        nx_strbuf_puts(b, ",\"t\":[");
        bool any = false;
        for (uint32_t k = 0; k < width; k++)
            if (ser[s].t[k] != INT64_MIN) {
                if (any)
                    nx_strbuf_putc(b, ',');
                any = true;
                nx_json_i64(b, ser[s].t[k] - start);
            }
        nx_strbuf_puts(b, "],\"v\":[");
        any = false;
        for (uint32_t k = 0; k < width; k++)
            if (ser[s].t[k] != INT64_MIN) {
                if (any)
                    nx_strbuf_putc(b, ',');
                any = true;
                nx_json_f64(b, ser[s].v[k]);
            }
        nx_strbuf_puts(b, "]}");
    }
    result = 0;
done:
    for (size_t s = 0; s < n_ser; s++) {
        free(ser[s].t);
        free(ser[s].v);
    }
    nx_profile_scan_close(sc);
    nx_profile_table_close(t);
    return result;
}

static const char *const TABLES[2] = {"DmaUsage", "HbmUsage"};

static bool is_usage_table(const char *name)
{
    return strcmp(name, TABLES[0]) == 0 || strcmp(name, TABLES[1]) == 0;
}

enum MHD_Result nx_api_usage(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char buf[64];
    const char *list[2];
    size_t n_list;
    if (nx_api_tables_param(r, "DmaUsage,HbmUsage", is_usage_table, "usage (DmaUsage, HbmUsage)", buf, sizeof buf,
                            list, 2, &n_list, &res) < 0)
        return res;
    bool want[2] = {false, false};
    for (size_t i = 0; i < n_list; i++)
        want[strcmp(list[i], TABLES[0]) == 0 ? 0 : 1] = true;
    int64_t start, end, width;
    if (nx_api_window_params(r, 0, &start, &end, &width, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"start\":");
    nx_json_i64(&b, start);
    nx_strbuf_puts(&b, ",\"end\":");
    nx_json_i64(&b, end);
    nx_strbuf_printf(&b, ",\"width\":%" PRId64 ",\"series\":[", width);
    bool first = true;
    nxpq_error err = {{0}};
    for (int k = 0; k < 2; k++)
        if (want[k] && usage_table(dir, TABLES[k], start, end, (uint32_t)width, &first, &b, &err) < 0) {
            free(dir);
            nx_strbuf_free(&b);
            return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
        }
    free(dir);
    nx_strbuf_puts(&b, "]}");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
