/*
 * api_usage.c — GET /api/profiles/<name>/usage?tables=DmaUsage,HbmUsage,SbufUsage,PsumUsage
 * &start=S&end=E&width=W: utilisation lanes for the viewer (docs/api.md).
 *
 * Rules:
 * - tables: any of DmaUsage, HbmUsage, SbufUsage, PsumUsage (default "DmaUsage,HbmUsage",
 *   what the parameter meant before the memory tables existed; unknown or repeated -> 400;
 *   a table the profile lacks gives no series). Series come in the fixed table order
 *   DmaUsage, HbmUsage, SbufUsage, PsumUsage, whatever the order asked.
 * - The value column: current_throughput (unit "bytes_per_second") for DmaUsage and
 *   HbmUsage, avg_util_percent (unit "percent") for SbufUsage and PsumUsage. Every series
 *   says so: "value" = the column's name, "unit" = its catalogue unit.
 * - Rows with timestamp in [S, E] (both inclusive; null timestamps or values skipped) are
 *   grouped into one series per (table, pcore_idx) (null pcore_idx is its own series,
 *   reported as null). Each series is reduced to at most `width` points: with
 *   L = E - S + 1 the bucket of a sample is floor((t - S) * W / L) (the sampler's rule,
 *   window.h), and each occupied bucket keeps the sample with the largest value (the
 *   throughput, or the percent: a lane at pixel resolution shows the peaks; ties: the
 *   earliest in file order). Points are emitted in bucket order as t = timestamp - S and
 *   v = the value.
 * - Percent tables are step series: processing writes only the first and last sample of a
 *   run of equal buckets (docs/processing.md), so a window inside a steady stretch may hold
 *   no sample although memory is in use. For them each series also has "before": the
 *   sample with the largest timestamp < S (ties: the last in file order) as
 *   {"t": timestamp - S (negative), "v": value}, or null when there is none; that takes a
 *   scan of the table from its start (the memory tables hold at most one row per 10 us
 *   bucket and core). A series with a "before" but no sample in the window is reported
 *   with empty t and v. Series are in order of first appearance among the rows scanned
 *   (for percent tables those before S come first).
 * - At most 256 series per table (more -> 500): the series are NeuronCores, so this
 *   bounds memory by width. Offsets that do not fit int64 (windows wider than 2^63 ns)
 *   are written as decimal strings, like every integer beyond 2^53.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/profile_table.h"
#include "server/api_internal.h"

#define MAX_SERIES 256

/* The tables /usage serves: name, value column, its unit, and whether it is a step series
 * (run-compressed by processing, so a "before" sample is reported). */
typedef struct usage_table_def {
    const char *name, *value, *unit;
    bool step;
} usage_table_def;

static const usage_table_def TABLES[] = {
    {"DmaUsage", "current_throughput", "bytes_per_second", false},
    {"HbmUsage", "current_throughput", "bytes_per_second", false},
    {"SbufUsage", "avg_util_percent", "percent", true},
    {"PsumUsage", "avg_util_percent", "percent", true},
};
#define N_TABLES (sizeof TABLES / sizeof TABLES[0])

typedef struct series {
    bool has_core;
    int64_t core;
    int64_t *t;      /* per bucket: timestamp, INT64_MIN = empty */
    double *v;
    bool has_before; /* step tables: the latest sample before S */
    int64_t before_t;
    double before_v;
} series;

/* ts - start as JSON: a number, or a decimal string beyond int64 (and beyond 2^53, by
 * nx_json_i64's rule). */
static void json_offset(nx_strbuf *b, int64_t ts, int64_t start)
{
    __int128 d = (__int128)ts - (__int128)start;
    if (d >= INT64_MIN && d <= INT64_MAX) {
        nx_json_i64(b, (int64_t)d);
        return;
    }
    char tmp[48];
    size_t k = 0;
    unsigned __int128 u = d < 0 ? (unsigned __int128)(-d) : (unsigned __int128)d;
    do {
        tmp[k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    nx_strbuf_putc(b, '"');
    if (d < 0)
        nx_strbuf_putc(b, '-');
    while (k)
        nx_strbuf_putc(b, tmp[--k]);
    nx_strbuf_putc(b, '"');
}

static int usage_table(const char *dir, const usage_table_def *def, int64_t start, int64_t end, uint32_t width,
                       bool *first, nx_strbuf *b, nxpq_error *err)
{
    const char *table = def->name;
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
    int ct = nx_profile_table_find_column(t, "timestamp"), cv = nx_profile_table_find_column(t, def->value),
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
    const char *cols[3] = {"timestamp", def->value, "pcore_idx"};
    /* Step tables: from the table's start, for the "before" samples. */
    nx_profile_scan_options so = {.columns = cols, .n_columns = have_core ? 3 : 2, .range_column = "timestamp",
                                  .range_min = def->step ? INT64_MIN : start, .range_max = end};
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
            if (ts > end || (ts < start && !def->step))
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
                ser[s] = (series){.has_core = hc, .core = core, .t = malloc(width * sizeof(int64_t)),
                                  .v = malloc(width * sizeof(double))};
                n_ser++;
                if (!ser[s].t || !ser[s].v) {
                    snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
                    goto done;
                }
                for (uint32_t k = 0; k < width; k++)
                    ser[s].t[k] = INT64_MIN;
            }
            if (ts < start) { /* step table, before the window: the latest wins, ties the later */
                if (!ser[s].has_before || ts >= ser[s].before_t) {
                    ser[s].has_before = true;
                    ser[s].before_t = ts;
                    ser[s].before_v = v;
                }
                continue;
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
        nx_strbuf_printf(b, ",\"value\":\"%s\",\"unit\":\"%s\"", def->value, def->unit);
        if (def->step) {
            nx_strbuf_puts(b, ",\"before\":");
            if (ser[s].has_before) {
                nx_strbuf_puts(b, "{\"t\":");
                json_offset(b, ser[s].before_t, start);
                nx_strbuf_puts(b, ",\"v\":");
                nx_json_f64(b, ser[s].before_v);
                nx_strbuf_putc(b, '}');
            } else
                nx_strbuf_puts(b, "null");
        }
        nx_strbuf_puts(b, ",\"t\":[");
        bool any = false;
        for (uint32_t k = 0; k < width; k++)
            if (ser[s].t[k] != INT64_MIN) {
                if (any)
                    nx_strbuf_putc(b, ',');
                any = true;
                json_offset(b, ser[s].t[k], start);
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

static bool is_usage_table(const char *name)
{
    for (size_t k = 0; k < N_TABLES; k++)
        if (strcmp(name, TABLES[k].name) == 0)
            return true;
    return false;
}

enum MHD_Result nx_api_usage(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char buf[64];
    const char *list[N_TABLES];
    size_t n_list;
    if (nx_api_tables_param(r, "DmaUsage,HbmUsage", is_usage_table,
                            "usage (DmaUsage, HbmUsage, SbufUsage, PsumUsage)", buf, sizeof buf, list, N_TABLES,
                            &n_list, &res) < 0)
        return res;
    bool want[N_TABLES] = {false};
    for (size_t i = 0; i < n_list; i++)
        for (size_t k = 0; k < N_TABLES; k++)
            if (strcmp(list[i], TABLES[k].name) == 0)
                want[k] = true;
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
    for (size_t k = 0; k < N_TABLES; k++)
        if (want[k] && usage_table(dir, &TABLES[k], start, end, (uint32_t)width, &first, &b, &err) < 0) {
            free(dir);
            nx_strbuf_free(&b);
            return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
        }
    free(dir);
    nx_strbuf_puts(&b, "]}");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
