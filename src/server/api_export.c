/*
 * api_export.c — GET /api/profiles/<name>/export/<Table>.csv: one timeline table of
 * a window as CSV, streamed, byte-identical to `nxprof export-csv` with the same
 * window, width (or --no-sample) and --max-rows (rules: src/cli/cmd_export_csv.c,
 * docs/query.md; values: src/query/csv.h).
 *
 * Same algorithm as export-csv, step by step:
 *   header "timeline_track,<schema fields in schema order>"; a schema field missing
 *   from the files, or of a type the reader cannot decode, is an empty column;
 *   sampled: pass 1 (timing + track columns) runs nx_sampler over the window, pass 2
 *   streams the window with every present field and writes the rows whose ordinal was
 *   kept; unsampled: pass 2 writes every row of the window; at most max_rows rows.
 * Truncation must be known before the headers go out, so it is decided up front:
 *   sampled: the sampling pass gives the exact kept count (truncated when > max_rows);
 *   unsampled: a counting pass over the timing columns only, stopped at max_rows + 1
 *   rows (cheap: no string columns are decoded).
 * Then the body is produced on demand by MHD's content-reader callback: each call
 * writes rows of the next window batch through nx_csv into a pending buffer (via a
 * stdio cookie stream) and hands out as much as MHD asks for. Memory: one batch of
 * rows plus the sampler, never the whole export.
 * Parameters: start, end (required, int64 ns, end >= start), sampled 0|1 (default 1),
 * width 1..10000 (default 1920; refused with sampled=0), max_rows 1..10,000,000
 * (default 1,000,000).
 */
#define _GNU_SOURCE /* fopencookie */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/csv.h"
#include "query/profile_table.h"
#include "query/window.h"
#include "schema/schema.h"
#include "server/api_internal.h"

#define MAX_ROWS_LIMIT 10000000

typedef struct export_state {
    nx_profile_table *t;
    const nx_schema_table *schema;
    const char **proj;
    size_t n_proj;
    int *batch_col;
    nx_window *w;              /* the row pass */
    nx_sampler *sampler;
    const nx_sample *samples;  /* NULL when unsampled */
    size_t n_samples, next;
    bool sampled;
    int64_t max_rows, written;
    FILE *f;                   /* cookie stream into pending */
    nx_csv csv;
    bool csv_open;
    char *pending;
    size_t plen, pcap, poff;
    bool eof;                  /* the row pass is complete */
    bool failed;
} export_state;

static ssize_t cookie_write(void *cookie, const char *data, size_t n)
{
    export_state *s = cookie;
    if (s->plen + n > s->pcap) {
        size_t nc = s->pcap ? s->pcap : 65536;
        while (nc < s->plen + n)
            nc *= 2;
        char *g = realloc(s->pending, nc);
        if (!g)
            return -1;
        s->pending = g;
        s->pcap = nc;
    }
    memcpy(s->pending + s->plen, data, n);
    s->plen += n;
    return (ssize_t)n;
}

static void state_free(void *cls)
{
    export_state *s = cls;
    if (!s)
        return;
    if (s->csv_open)
        nx_csv_finish(&s->csv);
    if (s->f)
        fclose(s->f);
    nx_window_close(s->w);
    nx_sampler_free(s->sampler);
    nx_profile_table_close(s->t);
    free(s->proj);
    free(s->batch_col);
    free(s->pending);
    free(s);
}

/* Writes the rows of the next window batch. 1 more to come, 0 done, -1 error. */
static int produce(export_state *s)
{
    if (s->written == s->max_rows || (s->sampled && s->next == s->n_samples))
        return 0;
    nxpq_error err = {{0}};
    nx_window_batch b;
    int rc = nx_window_next(s->w, &b, &err);
    if (rc <= 0)
        return rc;
    int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
    for (size_t k = 0; k < b.n_rows; k++) {
        if (s->sampled) {
            int64_t ord = base + b.rows[k];
            while (s->next < s->n_samples && s->samples[s->next].ordinal < ord)
                s->next++;
            if (s->next == s->n_samples)
                break;
            if (s->samples[s->next].ordinal != ord)
                continue;
            s->next++;
        }
        if (s->written == s->max_rows)
            break;
        size_t tlen;
        const char *tname = nx_window_track_name(s->w, b.track[k], &tlen);
        nx_csv_text(&s->csv, tname, tlen);
        size_t row = b.rows[k];
        for (size_t f = 0; f < s->schema->n_fields; f++) {
            if (s->batch_col[f] < 0)
                nx_csv_null(&s->csv);
            else
                nx_csv_cell(&s->csv, &b.batch->columns[s->batch_col[f]], row);
        }
        nx_csv_end_row(&s->csv);
        s->written++;
    }
    return 1;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    export_state *s = cls;
    while (s->poff == s->plen && !s->eof) {
        s->poff = s->plen = 0;
        int rc = produce(s);
        if (rc < 0)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (rc == 0) {
            s->eof = true;
            s->csv_open = false;
            if (nx_csv_finish(&s->csv) < 0 || fflush(s->f) != 0)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        } else if (nx_csv_flush(&s->csv) < 0 || fflush(s->f) != 0) {
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    if (s->poff == s->plen)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = s->plen - s->poff;
    if (n > max)
        n = max;
    memcpy(buf, s->pending + s->poff, n);
    s->poff += n;
    return (ssize_t)n;
}

static void safe_name(char *out, size_t cap, const char *in)
{
    size_t k = 0;
    for (; *in && k + 1 < cap; in++) {
        char c = *in;
        out[k++] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                           c == '-' || c == '_'
                       ? c
                       : '_';
    }
    out[k] = '\0';
}

enum MHD_Result nx_api_export(nx_api_req *r, const char *name, const char *file)
{
    enum MHD_Result res;
    char table[64];
    size_t fl = strlen(file);
    if (fl <= 4 || fl - 4 >= sizeof table || strcmp(file + fl - 4, ".csv") != 0)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "export path must be /export/<Table>.csv");
    memcpy(table, file, fl - 4);
    table[fl - 4] = '\0';
    if (!nx_timeline_find(table))
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "not an exportable timeline table");
    int64_t start, end, sampled, width, max_rows;
    if (nx_api_window_params(r, 1920, &start, &end, &width, &res) < 0 ||
        nx_api_int_param(r, "sampled", false, 1, 0, 1, &sampled, &res) < 0 ||
        nx_api_int_param(r, "max_rows", false, 1000000, 1, MAX_ROWS_LIMIT, &max_rows, &res) < 0)
        return res;
    if (!sampled && nx_api_param(r, "width"))
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "'width' applies only with sampled=1");
    if (sampled && start == INT64_MIN && end == INT64_MAX)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "the window is too wide to sample");
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;

    export_state *s = calloc(1, sizeof *s);
    nxpq_error err = {{0}};
    if (!s) {
        free(dir);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    s->sampled = sampled != 0;
    s->max_rows = max_rows;
    int rc = nx_profile_table_open(dir, table, &s->t, &err);
    free(dir);
    if (rc != 0) {
        state_free(s);
        return rc == NX_PROFILE_TABLE_ABSENT ? nx_api_error(r, MHD_HTTP_NOT_FOUND, "the profile has no %s table", table)
                                             : nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    }
    s->schema = nx_schema_table_find(table);
    size_t n = s->schema ? s->schema->n_fields : 0;
    if (!s->schema || !(s->proj = calloc(n + 1, sizeof *s->proj)) ||
        !(s->batch_col = calloc(n + 1, sizeof *s->batch_col)))
        goto oom;
    for (size_t i = 0; i < n; i++) {
        const char *fname = s->schema->fields[i].name;
        int c = nx_profile_table_find_column(s->t, fname);
        if (c < 0 || nx_profile_table_column(s->t, (size_t)c)->type == NXPQ_UNSUPPORTED) {
            s->batch_col[i] = -1;
            continue;
        }
        s->batch_col[i] = (int)s->n_proj;
        s->proj[s->n_proj++] = fname;
    }

    /* Up-front pass: exact row count (sampled) or a count stopped at max_rows + 1. */
    int64_t rows = 0;
    {
        nx_window_options wo = {.start = start, .end = end};
        nx_window *w = nx_window_open(s->t, &wo, &err);
        if (!w)
            goto fail;
        if (s->sampled && !(s->sampler = nx_sampler_new(start, end, (uint32_t)width, &err))) {
            nx_window_close(w);
            goto fail;
        }
        nx_window_batch b;
        bool add_failed = false;
        while ((rc = nx_window_next(w, &b, &err)) > 0) {
            if (s->sampled) {
                if (nx_sampler_add(s->sampler, &b, &err) < 0) {
                    add_failed = true;
                    break;
                }
            } else {
                rows += (int64_t)b.n_rows;
                if (rows > max_rows)
                    break;
            }
        }
        nx_window_close(w);
        if (rc < 0 || add_failed)
            goto fail;
        if (s->sampled) {
            s->samples = nx_sampler_result(s->sampler, &s->n_samples, &err);
            if (s->n_samples == SIZE_MAX)
                goto fail;
            rows = (int64_t)s->n_samples;
        }
    }
    bool truncated = rows > max_rows;
    int64_t body_rows = truncated ? max_rows : rows;

    cookie_io_functions_t io = {.write = cookie_write};
    if (!(s->f = fopencookie(s, "w", io)) || nx_csv_init(&s->csv, s->f) < 0)
        goto oom;
    s->csv_open = true;
    nx_csv_plain(&s->csv, "timeline_track", 14);
    for (size_t i = 0; i < n; i++)
        nx_csv_plain(&s->csv, s->schema->fields[i].name, strlen(s->schema->fields[i].name));
    nx_csv_end_row(&s->csv);
    if (nx_csv_flush(&s->csv) < 0 || fflush(s->f) != 0)
        goto oom;
    if (!s->sampled || s->n_samples > 0) {
        nx_window_options wo = {.start = start, .end = end, .columns = s->proj, .n_columns = s->n_proj};
        if (!(s->w = nx_window_open(s->t, &wo, &err)))
            goto fail;
    } /* else: nothing after the header; produce() returns 0 at once */

    /* HEAD: the same headers without a body. libmicrohttpd 0.9.75 would still send the
     * chunked terminator of a callback response, which HTTP clients reject, so HEAD
     * gets an empty buffer response instead. */
    struct MHD_Response *resp;
    if (r->head) {
        state_free(s);
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, reader, s, state_free);
        if (!resp)
            state_free(s);
    }
    if (!resp)
        return MHD_NO;
    char fname[512], safe[256], hdr[600], num[32];
    safe_name(safe, sizeof safe, name);
    snprintf(fname, sizeof fname, "%s_%s_%" PRId64 "_%" PRId64 ".csv", safe, table, start, end);
    snprintf(hdr, sizeof hdr, "attachment; filename=\"%s\"", fname);
    MHD_add_response_header(resp, "Content-Type", "text/csv; charset=utf-8");
    MHD_add_response_header(resp, "Content-Disposition", hdr);
    snprintf(num, sizeof num, "%" PRId64, body_rows);
    MHD_add_response_header(resp, "X-Nxprof-Rows", num);
    if (truncated)
        MHD_add_response_header(resp, "X-Nxprof-Truncated", "true");
    MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                            "X-Nxprof-Truncated, X-Nxprof-Rows, Content-Disposition");
    nx_api_common_headers(resp);
    enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
oom:
    state_free(s);
    return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: out of memory", table);
fail:
    state_free(s);
    return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg[0] ? err.msg : "export failed");
}
