/*
 * api_timeline.c — GET /api/profiles/<name>/timeline: the sampled events of a window
 * per table and track, in the compact encoding of docs/api.md.
 *
 * Sampling is src/query/sampled_pass.h (one event per track and pixel bucket: the
 * longest, ties by earliest start then earliest row, on two threads), exactly
 * what `nxprof export-csv --width W` keeps, so the screen and a sampled export
 * agree. Per table two passes over the window: the first reads only the timing
 * and track columns and samples; the second reads the label columns and picks the
 * kept rows by ordinal (rows come in ordinal order in both passes, so one merge
 * suffices). Track ids are the first pass's (in order of first appearance);
 * tracks are emitted in that order. String labels are indices into the response's `strings`
 * array (interned per response; -1 = null); integer labels are numbers or null.
 * Instruction's `framework_name` label is derived, not a column: the framework_name
 * of the first FrameworkInstruction row (file order) whose raw_framework_id equals
 * the instruction's raw_framework_id (null when none, or without that table), so the
 * viewer can colour by framework operator.
 * Memory: O(tracks x width) per table, never O(events).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_table.h"
#include "query/sampled_pass.h"
#include "profile/timeline_index.h"
#include "query/window.h"
#include "server/api_internal.h"
#include "server/response_cache.h"

#define MAX_TABLES NX_TIMELINE_TABLES
#define MAX_LABELS NX_TLX_MAX_LABELS

/* ---- string interning (open addressing over offsets into one buffer) ---- */
typedef struct strtab {
    nx_strbuf bytes;      /* concatenated strings */
    size_t *off, *len;    /* per string */
    size_t n, cap;
    int32_t *slots;       /* hash slots: index + 1, 0 = empty */
    size_t n_slots;
    bool failed;
} strtab;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int32_t strtab_add(strtab *t, const char *s, size_t n)
{
    if (t->failed)
        return -1;
    if (2 * (t->n + 1) > t->n_slots) {
        size_t ns = t->n_slots ? t->n_slots * 2 : 1024;
        int32_t *sl = calloc(ns, sizeof *sl);
        if (!sl) {
            t->failed = true;
            return -1;
        }
        for (size_t i = 0; i < t->n; i++) {
            size_t h = (size_t)hash_bytes(t->bytes.data + t->off[i], t->len[i]) & (ns - 1);
            while (sl[h])
                h = (h + 1) & (ns - 1);
            sl[h] = (int32_t)i + 1;
        }
        free(t->slots);
        t->slots = sl;
        t->n_slots = ns;
    }
    size_t h = (size_t)hash_bytes(s, n) & (t->n_slots - 1);
    while (t->slots[h]) {
        size_t i = (size_t)t->slots[h] - 1;
        if (t->len[i] == n && memcmp(t->bytes.data + t->off[i], s, n) == 0)
            return (int32_t)i;
        h = (h + 1) & (t->n_slots - 1);
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        size_t *o = realloc(t->off, nc * sizeof *o);
        if (o)
            t->off = o;
        size_t *l = o ? realloc(t->len, nc * sizeof *l) : NULL;
        if (!o || !l) {
            t->failed = true;
            return -1;
        }
        t->len = l;
        t->cap = nc;
    }
    t->off[t->n] = t->bytes.len;
    t->len[t->n] = n;
    nx_strbuf_append(&t->bytes, s, n);
    nx_strbuf_putc(&t->bytes, '\0'); /* keeps data non-NULL for empty strings */
    if (nx_strbuf_failed(&t->bytes)) {
        t->failed = true;
        return -1;
    }
    t->slots[h] = (int32_t)t->n + 1;
    return (int32_t)t->n++;
}

static void strtab_free(strtab *t)
{
    nx_strbuf_free(&t->bytes);
    free(t->off);
    free(t->len);
    free(t->slots);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Fills label 3 (framework_name) of each Instruction sample from label 2
 * (raw_framework_id) through FrameworkInstruction. 0, or -1 with err. */
static int framework_names(const char *dir, size_t n_samples, size_t nl, const int64_t *lab_i, int32_t *lab_s,
                           uint8_t *lab_ok, strtab *strs, nxpq_error *err)
{
    int64_t *ids = malloc(n_samples * sizeof *ids);
    int32_t *name = NULL;
    if (!ids) {
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < n_samples; i++)
        if (lab_ok[i * nl + 2])
            ids[n++] = lab_i[i * nl + 2];
    qsort(ids, n, sizeof *ids, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || ids[u - 1] != ids[i])
            ids[u++] = ids[i];
    nx_profile_table *t = NULL;
    nx_profile_scan *sc = NULL;
    int result = -1;
    if (u == 0 || nx_profile_table_open(dir, "FrameworkInstruction", &t, err) != 0 ||
        nx_profile_table_find_column(t, "raw_framework_id") < 0 ||
        nx_profile_table_find_column(t, "framework_name") < 0) {
        result = 0; /* no names to give (absent or unreadable lookup): labels stay null */
        goto done;
    }
    if (nx_profile_table_column(t, (size_t)nx_profile_table_find_column(t, "raw_framework_id"))->type != NXPQ_INT64 ||
        nx_profile_table_column(t, (size_t)nx_profile_table_find_column(t, "framework_name"))->type != NXPQ_STRING) {
        result = 0;
        goto done;
    }
    if (!(name = malloc(u * sizeof *name))) {
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory");
        goto done;
    }
    for (size_t i = 0; i < u; i++)
        name[i] = -2; /* not seen yet */
    static const char *const cols[] = {"raw_framework_id", "framework_name"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = 2};
    if (!(sc = nx_profile_scan_open(t, &so, err)))
        goto done;
    const nxpq_batch *b;
    int rc;
    while ((rc = nx_profile_scan_next(sc, &b, err)) > 0) {
        const nxpq_column_data *ci = &b->columns[0], *cn = &b->columns[1];
        for (size_t r = 0; r < b->n_rows; r++) {
            if (ci->valid && !ci->valid[r])
                continue;
            int64_t *hit = bsearch(&ci->values.i64[r], ids, u, sizeof *ids, cmp_i64);
            if (!hit || name[hit - ids] != -2)
                continue;
            name[hit - ids] = (cn->valid && !cn->valid[r])
                                  ? -1
                                  : strtab_add(strs, cn->data + cn->offsets[r],
                                               (size_t)(cn->offsets[r + 1] - cn->offsets[r]));
        }
    }
    if (rc < 0)
        goto done;
    if (strs->failed) {
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_samples; i++) {
        if (!lab_ok[i * nl + 2])
            continue;
        int64_t *hit = bsearch(&lab_i[i * nl + 2], ids, u, sizeof *ids, cmp_i64);
        if (hit && name[hit - ids] >= 0) {
            lab_ok[i * nl + 3] = 1;
            lab_s[i * nl + 3] = name[hit - ids];
        }
    }
    result = 0;
done:
    nx_profile_scan_close(sc);
    nx_profile_table_close(t);
    free(ids);
    free(name);
    return result;
}

/* One table's part of the response, appended to b. 0, or -1 with err. */
static int table_part(const char *dir, const char *table, int64_t start, int64_t end, uint32_t width, strtab *strs,
                      nx_strbuf *b, nxpq_error *err)
{
    const char *const *labels = nx_timeline_labels(table);   /* timeline_index.h: the viewer's labels */
    size_t n_labels = 0;
    while (labels && n_labels < MAX_LABELS && labels[n_labels])
        n_labels++;

    nx_strbuf_puts(b, "{\"table\":");
    nx_json_str(b, table, strlen(table));
    nx_profile_table *t = NULL;
    int result = -1;
    nx_window *w2 = NULL;
    nx_sampled sp = {0};
    int64_t *lab_i = NULL;     /* per sample and label: integer value */
    int32_t *lab_s = NULL;     /* per sample and label: string index */
    uint8_t *lab_ok = NULL;    /* per sample and label: non-null */
    size_t *order = NULL, *first = NULL;
    int64_t in_window = 0;
    const nx_sample *samples = NULL;
    size_t n_samples = 0;
    const char *proj[MAX_LABELS];
    int lab_col[MAX_LABELS];   /* batch column of label (second pass), or -1 */
    int lab_idx[MAX_LABELS];   /* label of the timeline index, or -1 */
    bool lab_is_str[MAX_LABELS] = {false};
    size_t n_proj = 0;
    int rc = nx_sampled_pass(dir, table, start, end, width, &sp, err);
    if (rc < 0)
        return -1;
    bool present = rc == 0;
    if (present) {
        samples = sp.samples;
        n_samples = sp.n;
        in_window = (int64_t)sp.in_window;
    }
    /* Labels come from the timeline index when it answered and holds them all;
     * else from a second pass over the table's label columns. */
    const nx_tlx *x = sp.index && nx_tlx_labels_complete(sp.index) ? sp.index : NULL;
    if (present && !x && nx_profile_table_open(dir, table, &t, err) < 0)
        goto done;
    for (size_t l = 0; l < n_labels; l++) {
        lab_col[l] = lab_idx[l] = -1;
        if (strcmp(labels[l], "framework_name") == 0) {
            lab_is_str[l] = true; /* derived below */
            continue;
        }
        if (x) {
            lab_idx[l] = nx_tlx_label_find(x, labels[l]);
            lab_is_str[l] = lab_idx[l] >= 0 && nx_tlx_label_is_string(x, lab_idx[l]);
            continue;
        }
        if (!t)
            continue;
        int c = nx_profile_table_find_column(t, labels[l]);
        if (c < 0)
            continue;
        nxpq_type ty = nx_profile_table_column(t, (size_t)c)->type;
        if (ty != NXPQ_STRING && ty != NXPQ_INT64 && ty != NXPQ_INT32)
            continue;
        lab_is_str[l] = ty == NXPQ_STRING;
        lab_col[l] = (int)n_proj;
        proj[n_proj++] = labels[l];
    }
    size_t nl = n_labels ? n_labels : 1;
    if (n_samples > 0) {
        lab_i = calloc(n_samples * nl, sizeof *lab_i);
        lab_s = calloc(n_samples * nl, sizeof *lab_s);
        lab_ok = calloc(n_samples * nl, 1);
        if (!lab_i || !lab_s || !lab_ok) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
            goto done;
        }
    }
    for (size_t i = 0; x && i < n_samples; i++) {
        for (size_t l = 0; l < n_labels; l++) {
            const char *str;
            size_t len;
            size_t at = i * nl + l;
            if (lab_idx[l] < 0 || !nx_tlx_label_value(x, samples[i].tag, lab_idx[l], &lab_i[at], &str, &len))
                continue;
            lab_ok[at] = 1;
            if (lab_is_str[l])
                lab_s[at] = strtab_add(strs, str, len);
        }
    }
    if (x && strs->failed) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
        goto done;
    }
    if (t && n_samples > 0 && n_proj > 0) {
        nx_window_options wo = {.start = start, .end = end, .columns = proj, .n_columns = n_proj};
        if (!(w2 = nx_window_open(t, &wo, err)))
            goto done;
        size_t next = 0;
        nx_window_batch wb;
        while (next < n_samples && (rc = nx_window_next(w2, &wb, err)) > 0) {
            int64_t base = nx_row_ordinal(wb.file, wb.batch->first_row);
            for (size_t k = 0; k < wb.n_rows && next < n_samples; k++) {
                int64_t ord = base + wb.rows[k];
                while (next < n_samples && samples[next].ordinal < ord)
                    next++;
                if (next == n_samples || samples[next].ordinal != ord)
                    continue;
                size_t row = wb.rows[k];
                for (size_t l = 0; l < n_labels; l++) {
                    if (lab_col[l] < 0)
                        continue;
                    const nxpq_column_data *c = &wb.batch->columns[lab_col[l]];
                    if (c->valid && !c->valid[row])
                        continue;
                    size_t at = next * nl + l;
                    lab_ok[at] = 1;
                    if (c->type == NXPQ_STRING) {
                        lab_s[at] = strtab_add(strs, c->data + c->offsets[row],
                                               (size_t)(c->offsets[row + 1] - c->offsets[row]));
                    } else if (c->type == NXPQ_INT64) {
                        lab_i[at] = c->values.i64[row];
                    } else {
                        lab_i[at] = c->values.i32[row];
                    }
                }
                next++;
            }
        }
        if (rc < 0)
            goto done;
        if (strs->failed) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
            goto done;
        }
    }
    if (strcmp(table, "Instruction") == 0 && n_samples > 0 &&
        framework_names(dir, n_samples, nl, lab_i, lab_s, lab_ok, strs, err) < 0)
        goto done;
    /* Group samples by track id, keeping ordinal order inside each track. */
    size_t n_tracks = sp.n_tracks;
    if (!(order = malloc((n_samples + 1) * sizeof *order)) || !(first = calloc(n_tracks + 2, sizeof *first))) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
        goto done;
    }
    for (size_t i = 0; i < n_samples; i++)
        first[samples[i].track + 1]++;
    for (size_t k = 0; k < n_tracks; k++)
        first[k + 1] += first[k];
    {
        size_t *fill = calloc(n_tracks + 1, sizeof *fill);
        if (!fill) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
            goto done;
        }
        for (size_t i = 0; i < n_samples; i++) {
            uint32_t tr = samples[i].track;
            order[first[tr] + fill[tr]++] = i;
        }
        free(fill);
    }
    nx_strbuf_printf(b, ",\"rows_in_window\":%" PRId64 ",\"sampled\":%zu,\"label_fields\":[", in_window, n_samples);
    for (size_t l = 0; l < n_labels; l++) {
        if (l)
            nx_strbuf_putc(b, ',');
        nx_json_str(b, labels[l], strlen(labels[l]));
    }
    nx_strbuf_puts(b, "],\"tracks\":[");
    bool any = false;
    for (uint32_t tr = 0; tr < n_tracks; tr++) {
        size_t a = first[tr], z = first[tr + 1];
        if (a == z)
            continue;
        if (any)
            nx_strbuf_putc(b, ',');
        any = true;
        nx_strbuf_puts(b, "{\"track\":");
        nx_json_str(b, sp.names[tr], sp.name_len[tr]);
        nx_strbuf_puts(b, ",\"start\":[");
        for (size_t i = a; i < z; i++) {
            if (i > a)
                nx_strbuf_putc(b, ',');
            nx_json_i128(b, (__int128)samples[order[i]].start - start);
        }
        nx_strbuf_puts(b, "],\"dur\":[");
        for (size_t i = a; i < z; i++) {
            if (i > a)
                nx_strbuf_putc(b, ',');
            nx_json_i128(b, (__int128)samples[order[i]].end - samples[order[i]].start);
        }
        nx_strbuf_puts(b, "],\"ord\":[");
        for (size_t i = a; i < z; i++) {
            if (i > a)
                nx_strbuf_putc(b, ',');
            nx_json_i64(b, samples[order[i]].ordinal);
        }
        nx_strbuf_puts(b, "],\"labels\":{");
        for (size_t l = 0; l < n_labels; l++) {
            if (l)
                nx_strbuf_putc(b, ',');
            nx_json_str(b, labels[l], strlen(labels[l]));
            nx_strbuf_puts(b, ":[");
            for (size_t i = a; i < z; i++) {
                if (i > a)
                    nx_strbuf_putc(b, ',');
                size_t at = order[i] * nl + l;
                if (lab_is_str[l])
                    nx_json_i64(b, lab_ok[at] ? lab_s[at] : -1);
                else if (lab_ok[at])
                    nx_json_i64(b, lab_i[at]);
                else
                    nx_strbuf_puts(b, "null");
            }
            nx_strbuf_putc(b, ']');
        }
        nx_strbuf_puts(b, "}}");
    }
    nx_strbuf_puts(b, "]}");
    result = 0;
done:
    nx_window_close(w2);
    nx_sampled_free(&sp);
    nx_profile_table_close(t);
    free(lab_i);
    free(lab_s);
    free(lab_ok);
    free(order);
    free(first);
    return result;
}

static bool is_timeline_table(const char *name)
{
    return nx_timeline_find(name) != NULL;
}

enum MHD_Result nx_api_timeline(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    const char *tables_s = nx_api_param(r, "tables");
    if (!tables_s)
        tables_s = "Instruction";
    char tbuf[256];
    const char *tables[MAX_TABLES];
    size_t n_tables;
    if (nx_api_tables_param(r, "Instruction", is_timeline_table, "timeline", tbuf, sizeof tbuf, tables, MAX_TABLES,
                            &n_tables, &res) < 0)
        return res;
    int64_t start, end, width;
    if (nx_api_window_params(r, 0, &start, &end, &width, &res) < 0)
        return res;
    if (start == INT64_MIN && end == INT64_MAX)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "the window is too wide");
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    /* A zoomed-out window scans most of the table: the viewer's whole-profile view
     * (and any view it returns to) is answered from the cache the second time. */
    struct stat st;
    char key[512];
    snprintf(key, sizeof key, "timeline|%s|%" PRId64 "|%" PRId64 "|%" PRId64, tables_s, start, end, width);
    bool cacheable = stat(dir, &st) == 0;
    nx_strbuf b = NX_STRBUF_INIT;
    if (cacheable && nx_response_cache_get(dir, &st, key, &b)) {
        free(dir);
        return nx_api_json(r, MHD_HTTP_OK, &b);
    }
    strtab strs = {.bytes = NX_STRBUF_INIT};
    nx_strbuf parts = NX_STRBUF_INIT;
    nxpq_error err = {{0}};
    for (size_t i = 0; i < n_tables; i++) {
        if (i)
            nx_strbuf_putc(&parts, ',');
        if (table_part(dir, tables[i], start, end, (uint32_t)width, &strs, &parts, &err) < 0) {
            nx_strbuf_free(&parts);
            strtab_free(&strs);
            free(dir);
            return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
        }
    }
    nx_strbuf_puts(&b, "{\"start\":");
    nx_json_i64(&b, start);
    nx_strbuf_puts(&b, ",\"end\":");
    nx_json_i64(&b, end);
    nx_strbuf_printf(&b, ",\"width\":%" PRId64 ",\"strings\":[", width);
    for (size_t i = 0; i < strs.n; i++) {
        if (i)
            nx_strbuf_putc(&b, ',');
        nx_json_str(&b, strs.bytes.data + strs.off[i], strs.len[i]);
    }
    nx_strbuf_puts(&b, "],\"tables\":[");
    if (parts.len)
        nx_strbuf_append(&b, parts.data, parts.len);
    nx_strbuf_puts(&b, "]}");
    nx_strbuf_free(&parts);
    strtab_free(&strs);
    if (cacheable && !b.failed)
        nx_response_cache_put(dir, &st, key, b.data, b.len);
    free(dir);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
