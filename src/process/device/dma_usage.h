/*
 * dma_usage.h — DmaUsage / HbmUsage: DMA throughput sampled over fixed time buckets,
 * one time series per pcore_idx.
 *
 * Rules (docs/processing.md, "DMA tables"):
 * - Buckets are NX_USAGE_BUCKET_NS (10 us) wide and aligned to multiples of that
 *   width in Unix ns: bucket b covers [b*W, (b+1)*W); a sample's timestamp is its
 *   bucket's start b*W.
 * - A packet moves its transfer_bytes at a constant rate over [start, end]; each
 *   bucket gets the bytes of the part of that interval it covers (a packet with
 *   start == end puts all its bytes in the bucket holding start).
 * - current_throughput = bytes in the bucket / W, in bytes per second;
 *   total_transfer_bytes = bytes of the series up to the bucket's end (rounded).
 * - One series per pcore_idx, summed over every device trace (the tables carry no
 *   NeuronCore column). A series starts at the bucket of its first packet. Buckets
 *   with bytes are written; of a run of empty buckets only the first and the last
 *   are written (as zero samples), so a line plot drops to zero and rises again
 *   at the right time while the row count stays bounded by the active buckets.
 *   Trailing empty buckets after a series' last packet: only the first.
 * - Rows are written in timestamp order (ties: pcore_idx order).
 *
 * Short packets (ending within NX_USAGE_RING buckets) are split over their
 * buckets at once into a small ring; longer ones go through a rate heap.
 * The caller feeds packets in start-time order. Memory: the packets still in
 * flight per series, never the number of packets or buckets.
 */
#ifndef NX_DMA_USAGE_H
#define NX_DMA_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "process/device/reorder.h"
#include "process/row.h"
#include "process/device/usage_summary.h"

#define NX_USAGE_BUCKET_NS 10000
#define NX_USAGE_MAX_SERIES 8        /* pcore_idx < NX_TRACE_MAX_PCORES */
#define NX_USAGE_RING 64             /* packets within this many buckets skip the rate heap */

typedef struct nx_usage_active {
    int64_t end;
    double rate;                     /* bytes per ns */
} nx_usage_active;

typedef struct nx_usage_series {
    bool started, in_gap;
    int64_t gap_start;               /* bucket of the first empty bucket of the run */
    int64_t cursor;                  /* ns up to which bytes are counted */
    double rate;                     /* sum of the active long packets' rates */
    double bucket_bytes, total;
    double ring[NX_USAGE_RING];      /* bytes of short packets, bucket b at b % NX_USAGE_RING */
    int64_t ring_last;               /* last bucket with ring bytes, or below the open one */
    nx_usage_active *heap;           /* min-heap by end */
    size_t n, cap;
} nx_usage_series;

typedef struct nx_usage {
    const char *table;
    nx_row r;
    size_t c_ts, c_thr, c_total, c_pcore;
    bool any;
    int64_t cur;                     /* the open bucket (same for every series) */
    nx_usage_series s[NX_USAGE_MAX_SERIES];
    nx_reorder q;                    /* finished samples, held one bucket for late zeros */
    nx_usage_summary *summary;       /* NULL, or fed every row as it is written (DmaUsageSummary) */
} nx_usage;

int nx_usage_open(nx_usage *u, const nx_table_dest *dest, const char *table, nx_error *err);
/* Closes every bucket that ends at or before `now` (the current event start). */
int nx_usage_advance(nx_usage *u, int64_t now, nx_error *err);
/* A packet of `bytes` over [start, end] on series `pcore`; start >= every earlier start. */
int nx_usage_add(nx_usage *u, unsigned pcore, int64_t start, int64_t end, int64_t bytes, nx_error *err);
/* Closes the remaining buckets and the table (counted in *tables); frees u. */
int nx_usage_finish(nx_usage *u, unsigned *tables, nx_error *err);
void nx_usage_discard(nx_usage *u);

#endif
