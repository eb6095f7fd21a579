/*
 * api_export.c — GET /api/profiles/<name>/export/<Table>.csv (or .json): one
 * timeline table of a window as CSV (JSON rows), streamed, byte-identical to
 * `nxprof export-csv` (--format json) with the same window, width (or
 * --no-sample) and --max-rows (rules: src/cli/cmd_export_csv.c, docs/query.md;
 * values: src/query/engine/csv.h, src/query/engine/json_rows.c). The parameters are one export
 * request (src/query/export_request.h), the CLI's: same defaults and limits.
 *
 * The rows come from src/query/export.h, the engine `nxprof export-csv` uses, opened
 * with count_first: truncation must be known before the headers go out, and the
 * first pass tells it (sampled: the exact kept count; unsampled: a count over the
 * timing columns only, stopped at max_rows + 1).
 * Then the body is produced on demand by MHD's content-reader callback: each call
 * hands the rows of the next window batch to the format's row writer, which
 * writes into a pending buffer (via a stdio cookie stream), and hands out as much
 * as MHD asks for. Memory: one batch of rows plus the sampler, never the whole
 * export.
 * Parameters: start, end (required, int64 ns, end >= start), sampled 0|1 (default 1),
 * width 1..1048576 (default 1920; refused with sampled=0), max_rows >= 1
 * (default 1,000,000).
 */
#define _GNU_SOURCE /* fopencookie */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/export.h"
#include "query/export_request.h"
#include "query/engine/row_writer.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "server/api_internal.h"

static const nx_export_names URL_NAMES = {"start", "end", "width", "sampled=0", "max_rows"};

typedef struct export_state {
    nx_export *x;
    FILE *f;                   /* cookie stream into pending */
    nx_row_writer *w;
    char *pending;
    size_t plen, pcap, poff;
    bool eof;                  /* the row pass is complete */
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
    if (s->w)
        s->w->ops->free(s->w);
    if (s->f)
        fclose(s->f);
    nx_export_close(s->x);
    free(s->pending);
    free(s);
}

/* Writes the rows of the next window batch into pending. 1 more to come, 0
 * done, -1 error. */
static int produce(export_state *s)
{
    nx_error err = {0};
    int rc = nx_export_next(s->x, s->w, &err);
    if (rc == 0 && (s->w->ops->end_table(s->w, &err) < 0 || s->w->ops->finish(s->w, &err) < 0))
        return -1;
    if (rc >= 0 && (s->w->ops->flush(s->w, &err) < 0 || fflush(s->f) != 0))
        return -1;
    return rc;
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
        s->eof = rc == 0;
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

/* The export request of the URL's parameters into q (export_request.h). 0, or
 * -1 with *res the error response. */
static int request_params(nx_api_req *r, nx_export_request *q, enum MHD_Result *res)
{
    int64_t start, end, sampled, width, max_rows;
    char msg[NX_EXPORT_MSG];
    nx_export_request_init(q, &URL_NAMES);
    if (nx_api_int_param(r, "start", true, 0, INT64_MIN, INT64_MAX, &start, res) < 0 ||
        nx_api_int_param(r, "end", true, 0, INT64_MIN, INT64_MAX, &end, res) < 0 ||
        nx_api_int_param(r, "width", false, NX_EXPORT_DEFAULT_WIDTH, 1, NX_EXPORT_MAX_WIDTH, &width, res) < 0 ||
        nx_api_int_param(r, "sampled", false, 1, 0, 1, &sampled, res) < 0 ||
        nx_api_int_param(r, "max_rows", false, NX_EXPORT_DEFAULT_MAX_ROWS, 1, INT64_MAX, &max_rows, res) < 0)
        return -1;
    nx_export_request_set_ns(q, false, start);
    nx_export_request_set_ns(q, true, end);
    if ((nx_api_param(r, "width") && nx_export_request_set_width(q, width, msg) < 0) ||
        nx_export_request_set_max_rows(q, max_rows, msg) < 0)
        goto bad;
    if (!sampled)
        nx_export_request_set_no_sample(q);
    if (nx_export_request_check(q, msg) == 0)
        return 0;
bad:
    *res = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "%s", msg);
    return -1;
}

/* "<Table>.<ext>" of a per-table format into table and *format. 0 or -1. */
static int split_file(const char *file, char *table, size_t cap, const nx_row_format **format)
{
    const char *dot = strrchr(file, '.');
    *format = NULL;
    for (size_t i = 0; dot && nx_row_format_at(i); i++)
        if (nx_row_format_at(i)->per_table && strcmp(nx_row_format_at(i)->extension, dot) == 0)
            *format = nx_row_format_at(i);
    if (!*format || dot == file || (size_t)(dot - file) >= cap)
        return -1;
    memcpy(table, file, (size_t)(dot - file));
    table[dot - file] = '\0';
    return 0;
}

enum MHD_Result nx_api_export(nx_api_req *r, const char *name, const char *file)
{
    enum MHD_Result res;
    char table[64];
    const nx_row_format *format;
    if (split_file(file, table, sizeof table, &format) < 0)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "export path must be /export/<Table>.csv or <Table>.json");
    if (!nx_timeline_find(table))
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "not an exportable timeline table");
    nx_export_request q;
    if (request_params(r, &q, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;

    export_state *s = calloc(1, sizeof *s);
    nx_error err = {0};
    if (!s) {
        free(dir);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    nx_export_options eo = {.start = q.start, .end = q.end, .width = q.width, .max_rows = q.max_rows,
                            .count_first = true};
    int rc = nx_export_open(dir, table, &eo, &s->x, &err);
    if (rc != 0) {
        free(dir);
        state_free(s);
        return rc == NX_PROFILE_TABLE_ABSENT ? nx_api_error(r, MHD_HTTP_NOT_FOUND, "the profile has no %s table", table)
                                             : nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    }
    bool truncated = nx_export_truncated(s->x);
    int64_t body_rows = nx_export_planned_rows(s->x);

    cookie_io_functions_t io = {.write = cookie_write};
    nx_row_target target = {.profile_dir = dir, .start = q.start, .end = q.end};
    if (!(target.f = s->f = fopencookie(s, "w", io)) || !(s->w = format->open(&target, &err)) ||
        nx_export_begin(s->x, s->w, &err) < 0 || s->w->ops->flush(s->w, &err) < 0 || fflush(s->f) != 0)
        goto oom;
    free(dir);
    dir = NULL;

    /* HEAD: the same headers without a body. libmicrohttpd 0.9.75 would still send the
     * chunked terminator of a callback response, which HTTP clients reject, so HEAD
     * gets an empty buffer response instead. */
    struct MHD_Response *resp;
    if (!r->conn && !r->head) {
        /* Without a connection (api_internal.h) the body is produced here, in full,
         * through the same content reader MHD would call. */
        char chunk[4096];
        uint64_t pos = 0;
        for (;;) {
            ssize_t n = reader(s, pos, chunk, sizeof chunk);
            if (n == MHD_CONTENT_READER_END_OF_STREAM || n == MHD_CONTENT_READER_END_WITH_ERROR)
                break;
            if (r->body)
                nx_strbuf_append(r->body, chunk, (size_t)n);
            pos += (uint64_t)n;
        }
    }
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
    const char *leaf = strrchr(name, '/'); /* a nested device profile: its own name */
    safe_name(safe, sizeof safe, leaf ? leaf + 1 : name);
    snprintf(fname, sizeof fname, "%s_%s_%" PRId64 "_%" PRId64 "%s", safe, table, q.start, q.end, format->extension);
    snprintf(hdr, sizeof hdr, "attachment; filename=\"%s\"", fname);
    MHD_add_response_header(resp, "Content-Type",
                            strcmp(format->name, "csv") == 0 ? "text/csv; charset=utf-8" : "application/json");
    MHD_add_response_header(resp, "Content-Disposition", hdr);
    snprintf(num, sizeof num, "%" PRId64, body_rows);
    MHD_add_response_header(resp, "X-Nxprof-Rows", num);
    if (truncated)
        MHD_add_response_header(resp, "X-Nxprof-Truncated", "true");
    MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                            "X-Nxprof-Truncated, X-Nxprof-Rows, Content-Disposition");
    enum MHD_Result ret = nx_api_queue(r, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
oom:
    free(dir);
    state_free(s);
    return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: out of memory", table);
}
