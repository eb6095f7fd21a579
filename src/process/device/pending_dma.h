/*
 * pending_dma.h — PendingDma: how many DMA transfers are in flight on each
 * pcore, as a series of change points, derived from the DMA blocks
 * (DmaPacketAggregated rows): no record kind of its own.
 *
 * Rules (docs/processing.md, "DMA tables"):
 * - A transfer is a DmaPacketAggregated row; it is pending over [start_ts, end_ts):
 *   +1 at its start, -1 at its end, on its pcore_idx, summed over every device
 *   trace of the profile (like DmaUsage).
 * - One row per (timestamp, pcore_idx) at which the count changes: the count
 *   from that time on. Starts and ends at one instant are netted first, so a
 *   zero-length transfer, or one that starts as another ends, writes nothing.
 * - Rows in timestamp order, ties in pcore_idx order.
 *
 * The caller gives the transfers in start order (the order DmaPacketAggregated
 * is written in). Memory: the transfers still in flight.
 */
#ifndef NX_PENDING_DMA_H
#define NX_PENDING_DMA_H

#include <stdint.h>

#include "parquet/parquet.h"
#include "process/device/dma_usage.h"
#include "process/device/reorder.h"
#include "process/row.h"

typedef struct nx_pending_dma {
    nx_row r;
    size_t c_ts, c_value, c_pcore;
    nx_reorder q;                    /* (time, pcore, +1/-1) not yet written */
    int64_t count[NX_USAGE_MAX_SERIES];
} nx_pending_dma;

int nx_pending_open(nx_pending_dma *p, const nx_table_dest *dest, nx_error *err);
/* A transfer on `pcore` pending over [start, end); start >= every earlier start. */
int nx_pending_add(nx_pending_dma *p, unsigned pcore, int64_t start, int64_t end, nx_error *err);
/* Writes what is left and closes the table (counted in *tables). */
int nx_pending_finish(nx_pending_dma *p, unsigned *tables, nx_error *err);
void nx_pending_discard(nx_pending_dma *p);

#endif
