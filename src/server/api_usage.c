/*
 * api_usage.c — GET /api/profiles/<name>/usage?tables=DmaUsage,HbmUsage,SbufUsage,PsumUsage,
 * CpuUsage,HostMemUsage,SystemProfileHbmUsage&start=S&end=E&width=W: utilisation lanes for the
 * viewer (docs/api.md).
 *
 * Rules:
 * - tables: any of DmaUsage, HbmUsage, SbufUsage, PsumUsage, CpuUsage, HostMemUsage,
 *   SystemProfileHbmUsage (default "DmaUsage,HbmUsage", what the parameter meant before the
 *   memory tables existed; unknown or repeated -> 400; a table the profile lacks gives no
 *   series). Series come in that fixed table order, whatever the order asked.
 * - Each table has one value column, named by every series as "value" with its catalogue
 *   unit as "unit" (TABLES below): current_throughput ("bytes_per_second") for DmaUsage and
 *   HbmUsage, avg_util_percent ("percent") for SbufUsage and PsumUsage, util_percent
 *   ("percent") for CpuUsage, used_percent ("percent") for HostMemUsage, total_bytes
 *   ("bytes", an INT64 column: its values are written as JSON integers, compared as
 *   integers) for SystemProfileHbmUsage. A value column of another type than FLOAT, DOUBLE
 *   or INT64, or a timestamp that is not INT64, gives the table no series.
 * - Series key (TABLES below): one series per distinct key among the rows used:
 *     DmaUsage, HbmUsage, SbufUsage, PsumUsage: pcore_idx (INT64), written "pcore_idx": n;
 *     CpuUsage: cpu_id (STRING), written "cpu_id": "..." and "key": the same text. When any
 *       row scanned (every row with timestamp <= E, since CpuUsage reports "before") has
 *       cpu_id "average", only the "average" rows are used: one series, the mean over all
 *       CPUs. Otherwise every cpu_id is its own series (subject to the series cap);
 *     HostMemUsage: no key, one series, written "key": "host";
 *     SystemProfileHbmUsage: (device_idx, hbm_idx) (INT64 each), written "device_idx": d,
 *       "hbm_idx": h and "key": "device d hbm h".
 *   A null key value (or a key column the file lacks or has with another type) makes the
 *   row's key null: its own series, written as null (in "key" as the text "null", e.g.
 *   "device null hbm 1"; a null cpu_id gives "key": null). Series of the four device tables
 *   carry no "key", exactly as before the system tables were served.
 * - Rows with timestamp in [S, E] (both inclusive; null timestamps or values skipped) are
 *   grouped into their series. Each series is reduced to at most `width` points: with
 *   L = E - S + 1 the bucket of a sample is floor((t - S) * W / L) (the sampler's rule,
 *   window.h), and each occupied bucket keeps the sample with the largest value (the
 *   throughput, percent or bytes: a lane at pixel resolution shows the peaks; ties: the
 *   earliest in file order). Points are emitted in bucket order as t = timestamp - S and
 *   v = the value.
 * - "before": SbufUsage and PsumUsage are step series: processing writes only the first and
 *   last sample of a run of equal buckets (docs/processing.md), so a window inside a steady
 *   stretch may hold no sample although memory is in use. CpuUsage, HostMemUsage and
 *   SystemProfileHbmUsage are plain samples taken every few ms (a gauge holding between
 *   samples), so a window narrower than the sampling period holds none either. For these
 *   five tables each series also has "before": the sample with the largest timestamp < S
 *   (ties: the last in file order) as {"t": timestamp - S (negative), "v": value}, or null
 *   when there is none; that takes a scan of the table from its start (the memory tables
 *   hold at most one row per 10 us bucket and core, the system tables one row per sample
 *   and key). A series with a "before" but no sample in the window is reported with empty
 *   t and v. DmaUsage and HbmUsage have no "before" (their idle stretches are written as
 *   0 rows) and are read only over the window.
 * - Series are in order of first appearance among the rows used (for tables with "before"
 *   the rows before S come first).
 * - At most 256 series per table (more -> 500; for CpuUsage only when no "average" row
 *   was scanned): the series are NeuronCores, CPUs or HBM stacks, so this bounds memory by
 *   width. Offsets that do not fit int64 (windows wider than 2^63 ns) are written as
 *   decimal strings, like every integer beyond 2^53.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "server/api_internal.h"

#define MAX_SERIES 256
#define MAX_KEYS 2

/* The tables /usage serves, in response order: name, value column and its unit, the key
 * columns that split the rows into series, how a series names its key, and whether a
 * "before" sample is reported (see the rules above). */
typedef struct usage_table_def {
    const char *name, *value, *unit;
    const char *keys[MAX_KEYS]; /* key columns, NULL-terminated: INT64, or one STRING (str_key) */
    bool str_key;
    const char *only;           /* str_key: when a row has this key, only such rows are used */
    bool labelled;              /* the series has "key": see key_words / fixed_label */
    const char *key_words[MAX_KEYS]; /* "key" = "<word0> <k0> <word1> <k1>"; NULL: the key text */
    const char *fixed_label;    /* "key" of a table without key columns */
    bool before;
} usage_table_def;

static const usage_table_def TABLES[] = {
    {"DmaUsage", "current_throughput", "bytes_per_second", {"pcore_idx"}, false, NULL, false, {NULL}, NULL, false},
    {"HbmUsage", "current_throughput", "bytes_per_second", {"pcore_idx"}, false, NULL, false, {NULL}, NULL, false},
    {"SbufUsage", "avg_util_percent", "percent", {"pcore_idx"}, false, NULL, false, {NULL}, NULL, true},
    {"PsumUsage", "avg_util_percent", "percent", {"pcore_idx"}, false, NULL, false, {NULL}, NULL, true},
    {"CpuUsage", "util_percent", "percent", {"cpu_id"}, true, "average", true, {NULL}, NULL, true},
    {"HostMemUsage", "used_percent", "percent", {NULL}, false, NULL, true, {NULL}, "host", true},
    {"SystemProfileHbmUsage", "total_bytes", "bytes", {"device_idx", "hbm_idx"}, false, NULL, true,
     {"device", "hbm"}, NULL, true},
};
#define N_TABLES (sizeof TABLES / sizeof TABLES[0])

/* A sample value: the column's own type (INT64 compared exactly, not through double). */
typedef union uval {
    double f;
    int64_t i;
} uval;

typedef struct series {
    bool has_k[MAX_KEYS]; /* int keys: present (not null) */
    int64_t k[MAX_KEYS];
    char *ks;             /* string key (malloc'd), NULL when null */
    size_t ks_len;
    int64_t *t;           /* per bucket: timestamp, INT64_MIN = empty */
    uval *v;
    bool has_before;      /* the latest sample before S */
    int64_t before_t;
    uval before_v;
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

static void free_series(series *s)
{
    free(s->t);
    free(s->v);
    free(s->ks);
}

static bool key_equal(const series *s, const bool *hk, const int64_t *k, size_t nk, const char *ks, size_t ks_len,
                      bool str_key)
{
    if (str_key)
        return ks ? s->ks && s->ks_len == ks_len && memcmp(s->ks, ks, ks_len) == 0 : !s->ks;
    for (size_t j = 0; j < nk; j++)
        if (s->has_k[j] != hk[j] || (hk[j] && s->k[j] != k[j]))
            return false;
    return true;
}

/* a > b in the value column's type. */
static bool val_gt(uval a, uval b, bool is_int)
{
    return is_int ? a.i > b.i : a.f > b.f;
}

static void json_val(nx_strbuf *b, uval v, bool is_int)
{
    if (is_int)
        nx_json_i64(b, v.i);
    else
        nx_json_f64(b, v.f);
}

/* The series' identifying fields: each key column by name, then "key" for labelled tables. */
static void json_key(nx_strbuf *b, const usage_table_def *def, size_t nk, const series *s)
{
    for (size_t j = 0; j < nk; j++) {
        nx_strbuf_printf(b, ",\"%s\":", def->keys[j]);
        if (def->str_key) {
            if (s->ks)
                nx_json_str(b, s->ks, s->ks_len);
            else
                nx_strbuf_puts(b, "null");
        } else if (s->has_k[j])
            nx_json_i64(b, s->k[j]);
        else
            nx_strbuf_puts(b, "null");
    }
    if (!def->labelled)
        return;
    nx_strbuf_puts(b, ",\"key\":");
    if (def->fixed_label) {
        nx_json_str(b, def->fixed_label, strlen(def->fixed_label));
    } else if (def->str_key) {
        if (s->ks)
            nx_json_str(b, s->ks, s->ks_len);
        else
            nx_strbuf_puts(b, "null");
    } else {
        char lab[128]; /* two words of <= 8 bytes and two int64s fit */
        size_t n = 0;
        for (size_t j = 0; j < nk && n < sizeof lab; j++) {
            char num[24];
            if (s->has_k[j])
                snprintf(num, sizeof num, "%" PRId64, s->k[j]);
            else
                strcpy(num, "null");
            n += (size_t)snprintf(lab + n, sizeof lab - n, "%s%s%s%s", j ? " " : "",
                                  def->key_words[j] ? def->key_words[j] : "", def->key_words[j] ? " " : "", num);
        }
        nx_json_str(b, lab, n < sizeof lab ? n : sizeof lab - 1);
    }
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
    int ct = nx_profile_table_find_column(t, "timestamp"), cv = nx_profile_table_find_column(t, def->value);
    if (ct < 0 || cv < 0 || nx_profile_table_column(t, (size_t)ct)->type != NXPQ_INT64) {
        result = 0; /* not a usable samples table: no series */
        goto done;
    }
    nxpq_type tv = nx_profile_table_column(t, (size_t)cv)->type;
    if (tv != NXPQ_FLOAT && tv != NXPQ_DOUBLE && tv != NXPQ_INT64) {
        result = 0;
        goto done;
    }
    bool is_int = tv == NXPQ_INT64;
    /* Projection: timestamp, value, then the key columns the file has with the right type
     * (a missing one reads as null: batch column index -1). */
    const char *cols[2 + MAX_KEYS] = {"timestamp", def->value};
    size_t n_cols = 2, nk = 0;
    int kcol[MAX_KEYS];
    while (nk < MAX_KEYS && def->keys[nk]) {
        int c = nx_profile_table_find_column(t, def->keys[nk]);
        kcol[nk] = -1;
        if (c >= 0 && nx_profile_table_column(t, (size_t)c)->type == (def->str_key ? NXPQ_STRING : NXPQ_INT64)) {
            kcol[nk] = (int)n_cols;
            cols[n_cols++] = def->keys[nk];
        }
        nk++;
    }
    nx_profile_scan_options so = {.columns = cols, .n_columns = n_cols, .range_column = "timestamp",
                                  .range_min = def->before ? INT64_MIN : start, .range_max = end};
    if (!(sc = nx_profile_scan_open(t, &so, err)))
        goto done;
    unsigned __int128 L = (unsigned __int128)((__int128)end - (__int128)start + 1);
    size_t only_len = def->only ? strlen(def->only) : 0;
    bool only_seen = false, overflow = false;
    size_t hint = 0; /* rows of consecutive keys (CPUs, HBMs) come in turn: try the next one first */
    const nxpq_batch *bt;
    while ((rc = nx_profile_scan_next(sc, &bt, err)) > 0) {
        const nxpq_column_data *c0 = &bt->columns[0], *c1 = &bt->columns[1];
        for (size_t i = 0; i < bt->n_rows; i++) {
            if ((c0->valid && !c0->valid[i]) || (c1->valid && !c1->valid[i]))
                continue;
            int64_t ts = c0->values.i64[i];
            if (ts > end || (ts < start && !def->before))
                continue;
            uval v;
            if (is_int)
                v.i = c1->values.i64[i];
            else
                v.f = c1->type == NXPQ_FLOAT ? (double)c1->values.f32[i] : c1->values.f64[i];
            bool hk[MAX_KEYS] = {false};
            int64_t k[MAX_KEYS] = {0};
            const char *ks = NULL;
            size_t ks_len = 0;
            for (size_t j = 0; j < nk; j++) {
                if (kcol[j] < 0)
                    continue;
                const nxpq_column_data *ck = &bt->columns[kcol[j]];
                if (ck->valid && !ck->valid[i])
                    continue;
                hk[j] = true;
                if (def->str_key) {
                    ks = ck->data + ck->offsets[i];
                    ks_len = (size_t)(ck->offsets[i + 1] - ck->offsets[i]);
                } else
                    k[j] = ck->values.i64[i];
            }
            if (def->only) {
                bool is_only = ks && ks_len == only_len && memcmp(ks, def->only, only_len) == 0;
                if (is_only && !only_seen) { /* from now on only these rows: drop the per-key series */
                    only_seen = true;
                    for (size_t s = 0; s < n_ser; s++)
                        free_series(&ser[s]);
                    n_ser = 0;
                    hint = 0;
                    overflow = false;
                }
                if (only_seen && !is_only)
                    continue;
            }
            size_t s = n_ser;
            if (hint < n_ser && key_equal(&ser[hint], hk, k, nk, ks, ks_len, def->str_key))
                s = hint;
            else
                for (size_t q = 0; q < n_ser; q++)
                    if (key_equal(&ser[q], hk, k, nk, ks, ks_len, def->str_key)) {
                        s = q;
                        break;
                    }
            if (s == n_ser) {
                if (n_ser == MAX_SERIES) {
                    if (def->only) { /* an "average" row may still come: fail only at the end */
                        overflow = true;
                        continue;
                    }
                    snprintf(err->msg, sizeof err->msg, "%s: more than %d series", table, MAX_SERIES);
                    goto done;
                }
                ser[s] = (series){.t = malloc(width * sizeof(int64_t)), .v = malloc(width * sizeof(uval))};
                n_ser++;
                for (size_t j = 0; j < nk; j++) {
                    ser[s].has_k[j] = hk[j];
                    ser[s].k[j] = k[j];
                }
                bool ok = ser[s].t && ser[s].v;
                if (ks) {
                    ser[s].ks = malloc(ks_len + 1);
                    ser[s].ks_len = ks_len;
                    if (ser[s].ks) {
                        memcpy(ser[s].ks, ks, ks_len);
                        ser[s].ks[ks_len] = '\0';
                    } else
                        ok = false;
                }
                if (!ok) {
                    snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
                    goto done;
                }
                for (uint32_t q = 0; q < width; q++)
                    ser[s].t[q] = INT64_MIN;
            }
            hint = s + 1;
            if (ts < start) { /* before the window: the latest wins, ties the later */
                if (!ser[s].has_before || ts >= ser[s].before_t) {
                    ser[s].has_before = true;
                    ser[s].before_t = ts;
                    ser[s].before_v = v;
                }
                continue;
            }
            uint32_t bucket = (uint32_t)((unsigned __int128)((__int128)ts - (__int128)start) * width / L);
            if (ser[s].t[bucket] == INT64_MIN || val_gt(v, ser[s].v[bucket], is_int)) {
                ser[s].t[bucket] = ts;
                ser[s].v[bucket] = v;
            }
        }
    }
    if (rc < 0)
        goto done;
    if (overflow) {
        snprintf(err->msg, sizeof err->msg, "%s: more than %d series", table, MAX_SERIES);
        goto done;
    }
    for (size_t s = 0; s < n_ser; s++) {
        if (!*first)
            nx_strbuf_putc(b, ',');
        *first = false;
        nx_strbuf_puts(b, "{\"table\":");
        nx_json_str(b, table, strlen(table));
        json_key(b, def, nk, &ser[s]);
        nx_strbuf_printf(b, ",\"value\":\"%s\",\"unit\":\"%s\"", def->value, def->unit);
        if (def->before) {
            nx_strbuf_puts(b, ",\"before\":");
            if (ser[s].has_before) {
                nx_strbuf_puts(b, "{\"t\":");
                json_offset(b, ser[s].before_t, start);
                nx_strbuf_puts(b, ",\"v\":");
                json_val(b, ser[s].before_v, is_int);
                nx_strbuf_putc(b, '}');
            } else
                nx_strbuf_puts(b, "null");
        }
        nx_strbuf_puts(b, ",\"t\":[");
        bool any = false;
        for (uint32_t q = 0; q < width; q++)
            if (ser[s].t[q] != INT64_MIN) {
                if (any)
                    nx_strbuf_putc(b, ',');
                any = true;
                json_offset(b, ser[s].t[q], start);
            }
        nx_strbuf_puts(b, "],\"v\":[");
        any = false;
        for (uint32_t q = 0; q < width; q++)
            if (ser[s].t[q] != INT64_MIN) {
                if (any)
                    nx_strbuf_putc(b, ',');
                any = true;
                json_val(b, ser[s].v[q], is_int);
            }
        nx_strbuf_puts(b, "]}");
    }
    result = 0;
done:
    for (size_t s = 0; s < n_ser; s++)
        free_series(&ser[s]);
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
    char buf[160]; /* all seven names with commas: 81 bytes */
    const char *list[N_TABLES];
    size_t n_list;
    if (nx_api_tables_param(r, "DmaUsage,HbmUsage", is_usage_table,
                            "usage (DmaUsage, HbmUsage, SbufUsage, PsumUsage, CpuUsage, HostMemUsage, "
                            "SystemProfileHbmUsage)",
                            buf, sizeof buf, list, N_TABLES, &n_list, &res) < 0)
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
