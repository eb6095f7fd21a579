/*
 * hbm_summary.h — HbmUsageSummaryByType, a system profile table: how each
 * NeuronCore's device memory (HBM) is divided between usage categories, from the
 * device-memory snapshots (device_mem.tsv, the rows of SystemProfileHbmUsage).
 *
 * Rules (docs/processing.md, "HbmUsageSummaryByType"):
 * - One HBM per (device_idx, hbm_idx) of the snapshots; it is NeuronCore hbm_idx
 *   of device device_idx (each NeuronCore of a device has its own HBM, as the
 *   simulator and the runtime number them): neuron_device_idx = device_idx,
 *   neuroncore_idx = hbm_idx.
 * - Its summary is its snapshot with the largest total_bytes (the first such in
 *   the merged order of SystemProfileHbmUsage): the peak, when everything the core
 *   loaded is resident. One row per category with bytes > 0, in
 *   SystemProfileHbmUsage's column order; usage_type = the category (its column
 *   name without "_bytes", e.g. "weights"), usage_bytes. The rows of one HBM add
 *   up to a total_bytes the memory lane shows.
 * - HBMs in (device_idx, hbm_idx) order. No snapshot: no table.
 *
 * Memory: one snapshot per HBM.
 */
#ifndef NX_HBM_SUMMARY_H
#define NX_HBM_SUMMARY_H

#include <stddef.h>

#include "capture/system_capture.h"
#include "parquet/parquet.h"
#include "process/row.h"

typedef struct nx_hbm_summary {
    nx_sys_hbm_sample *peak;         /* one per HBM, in order of first snapshot */
    size_t n, cap;
} nx_hbm_summary;

/* One snapshot, in SystemProfileHbmUsage's order. -1: out of memory. */
int nx_hbm_summary_add(nx_hbm_summary *h, const nx_sys_hbm_sample *s);
/* Writes the table (counted in *tables; none when no snapshot came). */
int nx_hbm_summary_write(nx_hbm_summary *h, const nx_table_dest *dest, unsigned *tables, nx_error *err);
void nx_hbm_summary_free(nx_hbm_summary *h);

#endif
