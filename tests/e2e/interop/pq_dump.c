/*
 * pq_dump.c — `pq_suite dump FILE [--range COLUMN MIN MAX] [--batch ROWS]`:
 * reads FILE with nxprof's reader (nxpq_reader_open + nxpq_scan over every
 * supported column, optionally pruned by an int range) and prints it as JSON in
 * the shape pq_suite's FILE.json uses, so the JS interop test can compare our
 * reading of files DuckDB and Polars wrote with what they read back:
 *
 *   {"file": ..., "rows": N, "row_groups": G, "created_by": ...,
 *    "unsupported": [names], "batches": [[first_row, n_rows], ...],
 *    "stats": {"row_groups_total", "row_groups_read", "pages_total", "pages_read"},
 *    "columns": [{"name", "type", "nullable", "physical_type", "values": [...]}]}
 *
 * Values of all batches are concatenated; "batches" says which file rows they are.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq_suite.h"

static void put_value(nx_strbuf *j, const nxpq_column_data *c, size_t i)
{
    if (c->valid && !c->valid[i]) {
        nx_strbuf_puts(j, "null");
        return;
    }
    switch (c->type) {
    case NXPQ_BOOLEAN: nx_strbuf_puts(j, c->values.b[i] ? "true" : "false"); return;
    case NXPQ_INT32: nx_strbuf_printf(j, "%" PRId32, c->values.i32[i]); return;
    case NXPQ_INT64: pqs_json_int64(j, c->values.i64[i]); return;
    case NXPQ_FLOAT: pqs_json_float(j, c->values.f32[i]); return;
    case NXPQ_DOUBLE: pqs_json_double(j, c->values.f64[i]); return;
    case NXPQ_STRING:
        pqs_json_string(j, c->data + c->offsets[i], (size_t)(c->offsets[i + 1] - c->offsets[i]));
        return;
    case NXPQ_LIST_INT64:
    case NXPQ_LIST_STRING:
        nx_strbuf_putc(j, '[');
        for (uint64_t e = c->list_offsets[i]; e < c->list_offsets[i + 1]; e++) {
            if (e > c->list_offsets[i])
                nx_strbuf_putc(j, ',');
            if (c->element_valid && !c->element_valid[e])
                nx_strbuf_puts(j, "null");
            else if (c->type == NXPQ_LIST_INT64)
                pqs_json_int64(j, c->values.i64[e]);
            else
                pqs_json_string(j, c->data + c->offsets[e], (size_t)(c->offsets[e + 1] - c->offsets[e]));
        }
        nx_strbuf_putc(j, ']');
        return;
    default: nx_strbuf_puts(j, "\"?\""); return;
    }
}

int pqs_dump(int argc, char **argv)
{
    const char *path = argv[0];
    const char *range_col = NULL;
    int64_t rmin = 0, rmax = 0;
    size_t batch_rows = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--range") == 0 && i + 3 < argc) {
            range_col = argv[i + 1];
            rmin = strtoll(argv[i + 2], NULL, 10);
            rmax = strtoll(argv[i + 3], NULL, 10);
            i += 3;
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            batch_rows = (size_t)strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "pq_suite dump: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    nx_error err;
    nxpq_reader *r = nxpq_reader_open(path, &err);
    if (!r) {
        fprintf(stderr, "pq_suite dump: %s\n", err.msg);
        return 1;
    }
    size_t nc = nxpq_reader_num_columns(r);
    size_t *proj = malloc((nc ? nc : 1) * sizeof *proj);
    nx_strbuf *vals = calloc(nc ? nc : 1, sizeof *vals);
    if (!proj || !vals) {
        nxpq_reader_close(r);
        free(proj);
        free(vals);
        return 1;
    }
    size_t np = 0;
    nx_strbuf j = NX_STRBUF_INIT;
    nx_strbuf_puts(&j, "{\"file\":");
    pqs_json_string(&j, path, strlen(path));
    nx_strbuf_printf(&j, ",\"rows\":%" PRId64 ",\"row_groups\":%zu,\"created_by\":", nxpq_reader_num_rows(r),
                     nxpq_reader_num_row_groups(r));
    const char *cb = nxpq_reader_created_by(r);
    if (cb)
        pqs_json_string(&j, cb, strlen(cb));
    else
        nx_strbuf_puts(&j, "null");
    nx_strbuf_puts(&j, ",\"unsupported\":[");
    size_t nu = 0;
    for (size_t i = 0; i < nc; i++) {
        const nxpq_column_info *ci = nxpq_reader_column(r, i);
        if (ci->type == NXPQ_UNSUPPORTED) {
            if (nu++)
                nx_strbuf_putc(&j, ',');
            pqs_json_string(&j, ci->name, strlen(ci->name));
        } else {
            proj[np++] = i;
        }
    }
    nx_strbuf_puts(&j, "],\"batches\":[");

    nxpq_range range;
    nxpq_scan_options so;
    memset(&so, 0, sizeof so);
    so.columns = proj;
    so.n_columns = np;
    so.batch_rows = batch_rows;
    if (range_col) {
        int c = nxpq_reader_find_column(r, range_col);
        if (c < 0) {
            fprintf(stderr, "pq_suite dump: %s: no column '%s'\n", path, range_col);
            nxpq_reader_close(r);
            return 1;
        }
        range.column = (size_t)c;
        range.min = rmin;
        range.max = rmax;
        so.ranges = &range;
        so.n_ranges = 1;
    }
    int rc = 0;
    nxpq_scan *s = nxpq_scan_open(r, &so, &err);
    if (!s) {
        fprintf(stderr, "pq_suite dump: %s\n", err.msg);
        rc = 1;
    }
    const nxpq_batch *b;
    size_t nb = 0;
    int got;
    while (s && (got = nxpq_scan_next(s, &b, &err)) == 1) {
        nx_strbuf_printf(&j, "%s[%" PRId64 ",%zu]", nb++ ? "," : "", b->first_row, b->n_rows);
        if (b->n_columns != np) {
            fprintf(stderr, "pq_suite dump: batch has %zu columns, projected %zu\n", b->n_columns, np);
            rc = 1;
            break;
        }
        for (size_t c = 0; c < np; c++)
            for (size_t i = 0; i < b->n_rows; i++) {
                if (vals[c].len)
                    nx_strbuf_putc(&vals[c], ',');
                else
                    nx_strbuf_putc(&vals[c], ' '); /* marks "started" so the next value gets a comma */
                put_value(&vals[c], &b->columns[c], i);
            }
    }
    if (s && got < 0) {
        fprintf(stderr, "pq_suite dump: %s\n", err.msg);
        rc = 1;
    }
    nxpq_scan_stats st;
    memset(&st, 0, sizeof st);
    if (s) {
        nxpq_scan_get_stats(s, &st);
        nxpq_scan_close(s);
    }
    nx_strbuf_printf(&j, "],\"stats\":{\"row_groups_total\":%" PRIu64 ",\"row_groups_read\":%" PRIu64
                         ",\"pages_total\":%" PRIu64 ",\"pages_read\":%" PRIu64 "},\"columns\":[",
                     st.row_groups_total, st.row_groups_read, st.pages_total, st.pages_read);
    for (size_t c = 0; c < np; c++) {
        const nxpq_column_info *ci = nxpq_reader_column(r, proj[c]);
        nx_strbuf_printf(&j, "%s\n{\"name\":", c ? "," : "");
        pqs_json_string(&j, ci->name, strlen(ci->name));
        nx_strbuf_printf(&j, ",\"type\":\"%s\",\"nullable\":%s,\"physical_type\":%d,\"values\":[",
                         pqs_type_json(ci->type), ci->nullable ? "true" : "false", ci->physical_type);
        if (vals[c].len)
            nx_strbuf_append(&j, vals[c].data + 1, vals[c].len - 1);
        nx_strbuf_puts(&j, "]}");
        nx_strbuf_free(&vals[c]);
    }
    nx_strbuf_puts(&j, "]}\n");
    if (rc == 0) {
        if (j.failed || fwrite(j.data, 1, j.len, stdout) != j.len || fflush(stdout) != 0) {
            fprintf(stderr, "pq_suite dump: cannot write the output\n");
            rc = 1;
        }
    }
    nx_strbuf_free(&j);
    free(vals);
    free(proj);
    nxpq_reader_close(r);
    return rc;
}
