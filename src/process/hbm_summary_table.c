/*
 * hbm_summary_table.c — HbmUsageSummaryByType: how a NeuronCore's device memory
 * (HBM) is divided between usage categories, derived from the session's
 * device-memory snapshots (device_mem.tsv, the rows of SystemProfileHbmUsage):
 * no record kind of its own. Rules (docs/processing.md, "HbmUsageSummaryByType"):
 *
 * - The HBM of a trace's NeuronCore is the snapshots' (device_idx, hbm_idx) =
 *   (the trace header's neuron_device_idx, neuroncore_idx): each NeuronCore of a
 *   device has its own HBM, as the simulator and the runtime number them.
 * - Its summary is the snapshot of that HBM with the largest total (the sum of
 *   its categories; the first such in file order): the peak, when everything the
 *   core loaded is resident. One row per category with bytes > 0, in
 *   SystemProfileHbmUsage's column order: neuron_device_idx, neuroncore_idx,
 *   usage_type = the category (its column name without "_bytes", e.g.
 *   "weights"), usage_bytes. So the rows add up to a total the memory lane shows.
 * - No device_mem.tsv, or no snapshot of that HBM: no rows (no table).
 *
 * The file is read once in finish(); memory: one snapshot per trace.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/system_capture.h"
#include "process/device_sink.h"
#include "process/row.h"

typedef struct peak {
    bool found;
    nx_sys_hbm_sample s;
} peak;

static int hbm_open(const nx_process_ctx *ctx, void **state, nxpq_error *err)
{
    (void)err;
    *state = NULL;
    if (!ctx->device_mem_path || ctx->n_traces == 0)
        return 0;
    *state = (void *)ctx;   /* finish() does the work; a non-NULL state says so */
    return 0;
}

static int hbm_event(void *state, const nx_device_event *ev, nxpq_error *err)
{
    (void)state, (void)ev, (void)err;
    return 0;
}

/* The peak snapshot of every trace's HBM, from one pass over the file. */
static int find_peaks(const nx_process_ctx *ctx, peak *best, nxpq_error *err)
{
    nx_sys_reader *rd;
    nx_cap_error cerr = {{0}};
    if (nx_sys_reader_open(ctx->device_mem_path, NX_SYS_DEVICE_MEM, &rd, &cerr) != 0) {
        snprintf(err->msg, sizeof err->msg, "HbmUsageSummaryByType: %.480s", cerr.msg);
        return -1;
    }
    nx_sys_record rec;
    int rc;
    while ((rc = nx_sys_reader_next(rd, &rec, &cerr)) == 1) {
        const nx_sys_hbm_sample *h = &rec.u.hbm;
        for (size_t t = 0; t < ctx->n_traces; t++) {
            const nx_trace_header *hd = &ctx->traces[t].hdr;
            if (h->device_idx != hd->neuron_device_idx || h->hbm_idx != hd->neuroncore_idx)
                continue;
            if (!best[t].found || h->total_bytes > best[t].s.total_bytes)
                best[t] = (peak){true, *h};
        }
    }
    nx_sys_reader_close(rd);
    if (rc < 0) {
        snprintf(err->msg, sizeof err->msg, "HbmUsageSummaryByType: %.480s", cerr.msg);
        return -1;
    }
    return 0;
}

static int write_rows(const nx_process_ctx *ctx, const peak *best, unsigned *tables, nxpq_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "HbmUsageSummaryByType", err) != 0)
        return -1;
    size_t c_dev = nx_row_col(&r, "neuron_device_idx"), c_nc = nx_row_col(&r, "neuroncore_idx"),
           c_type = nx_row_col(&r, "usage_type"), c_bytes = nx_row_col(&r, "usage_bytes");
    for (size_t t = 0; t < ctx->n_traces; t++) {
        for (unsigned c = 0; best[t].found && c < NX_HBM_CATEGORY_COUNT; c++) {
            if (best[t].s.bytes[c] <= 0)
                continue;
            const char *col = nx_sys_hbm_column(c);
            size_t len = strlen(col) - strlen("_bytes");   /* every column ends "_bytes" */
            if (nx_row_begin(&r, err) != 0)
                goto fail;
            nx_row_i64(&r, c_dev, ctx->traces[t].hdr.neuron_device_idx);
            nx_row_i64(&r, c_nc, ctx->traces[t].hdr.neuroncore_idx);
            nx_row_strn(&r, c_type, col, len);
            nx_row_i64(&r, c_bytes, best[t].s.bytes[c]);
            if (nx_row_end(&r, err) != 0)
                goto fail;
        }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int hbm_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nxpq_error *err)
{
    if (!state)
        return 0;
    peak *best = calloc(ctx->n_traces, sizeof *best);
    if (!best) {
        snprintf(err->msg, sizeof err->msg, "HbmUsageSummaryByType: out of memory");
        return -1;
    }
    int rc = find_peaks(ctx, best, err);
    if (rc == 0)
        rc = write_rows(ctx, best, tables, err);
    free(best);
    return rc;
}

static void hbm_abort(void *state)
{
    (void)state;
}

const nx_device_sink nx_sink_hbm_summary = {
    .name = "HbmUsageSummaryByType",
    .kinds = NX_KIND_BIT(NX_REC_EXECUTION),
    .open = hbm_open,
    .event = hbm_event,
    .finish = hbm_finish,
    .abort = hbm_abort,
};
