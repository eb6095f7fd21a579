/*
 * usage_summary.h — DmaUsageSummary: the DmaUsage samples grouped into coarse
 * time buckets per pcore_idx, for drawing DMA bandwidth zoomed out.
 *
 * Rules (docs/processing.md, "DMA tables"):
 * - Buckets are NX_USAGE_SUMMARY_NS (1 ms, 100 DmaUsage buckets) wide, aligned
 *   to multiples of that width in Unix ns; a DmaUsage sample at timestamp ts
 *   falls in the bucket starting at floor(ts / W) x W.
 * - One row per (bucket, pcore_idx) holding at least one DmaUsage row: the sum
 *   of current_throughput (each as DmaUsage stores it, a FLOAT, summed in double), the sum and the maximum of total_transfer_bytes, the
 *   number of samples, and bucket_resolution_ns = W. The samples are DmaUsage's
 *   rows as written (its empty stretches keep only their first and last zero
 *   samples, and those are the ones counted).
 * - Rows in timestamp order, ties in pcore_idx order.
 *
 * The caller feeds the samples in timestamp order (the order DmaUsage is
 * written in). Memory: one accumulator per pcore.
 */
#ifndef NX_USAGE_SUMMARY_H
#define NX_USAGE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "process/row.h"

#define NX_USAGE_SUMMARY_NS 1000000
#define NX_USAGE_SUMMARY_SERIES 8    /* pcore_idx < NX_TRACE_MAX_PCORES */

typedef struct nx_usage_summary_acc {
    int64_t count, sum_total, max_total;
    double sum_throughput;
} nx_usage_summary_acc;

typedef struct nx_usage_summary {
    nx_row r;
    size_t c_ts, c_pcore, c_sum_thr, c_sum_total, c_max_total, c_count, c_res;
    bool any;
    int64_t cur;                     /* the open bucket */
    nx_usage_summary_acc acc[NX_USAGE_SUMMARY_SERIES];
} nx_usage_summary;

int nx_usage_summary_open(nx_usage_summary *u, const nx_table_dest *dest, nx_error *err);
/* One DmaUsage sample; ts >= every earlier ts, pcore < NX_USAGE_SUMMARY_SERIES. */
int nx_usage_summary_add(nx_usage_summary *u, int64_t ts, unsigned pcore, double throughput, int64_t total,
                         nx_error *err);
/* Writes the open bucket and closes the table (counted in *tables). */
int nx_usage_summary_finish(nx_usage_summary *u, unsigned *tables, nx_error *err);
void nx_usage_summary_discard(nx_usage_summary *u);

#endif
