/*
 * memory.h — the Memory view's answer for a device profile and a time window:
 * SBUF allocations as rectangles (partition range x time interval, with their
 * address range and owner) and HBM use by category. Behind
 * GET /api/profiles/<n>/memory (docs/api.md) and the viewer's Memory view.
 *
 * SBUF (SbufAllocation):
 * - Window: window.h's rule (an allocation is kept when end_ts >= start AND
 *   start_ts <= end) on SbufAllocation's timeline rule, whose track is the partition
 *   (timeline_rules.h NX_TRACK_PARTITION).
 * - Sampling: window.h's sampler with `width` buckets per partition: each
 *   occupied (partition, bucket) keeps one allocation, the longest, ties by the
 *   earliest start, then the earliest row. So the answer is at most
 *   partitions x width rows whatever the table's size, and its buckets come from
 *   the query memory budget (budget.h; NX_QUERY_OVER_BUDGET past it).
 * - Merge: kept rows of one allocation spread over adjacent partitions (the same
 *   pcore_idx, start_ts, end_ts, start_address, end_address, op_source_type,
 *   opcode, operands, queue_name, block_id, tensor_name and hlo_name; nulls equal
 *   each other) become one rectangle over the partition range [lo, hi].
 *   Rectangles are ordered by start, then partition, then address.
 * - owner: the first non-null, non-empty of tensor_name, hlo_name, opcode,
 *   queue_name; else "" (the viewer colours by it).
 * - partitions: the SBUF's partition count for the axis, NX_SBUF_PARTITIONS, or
 *   one past the highest partition a row in the window names when that is more.
 * - A drawn row with a negative partition, a null address, or an end_address
 *   below its start_address is an error naming the file and row.
 *
 * HBM (HbmUsageSummaryByType): a static summary (the table has no time
 * column), the same for every window: usage_bytes summed per usage_type over
 * the profile's NeuronCores, largest first (ties by name); rows with a null
 * usage_type or usage_bytes are skipped and counted in hbm_skipped.
 *
 * Either table may be absent (has_sbuf / has_hbm false): not an error.
 */
#ifndef NX_QUERY_MEMORY_H
#define NX_QUERY_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

#define NX_SBUF_PARTITIONS 128
#define NX_MEMORY_MAX_CATEGORIES 256

typedef struct nx_memory_rect {
    int64_t start, end;                 /* the allocation's interval, ns */
    int64_t partition_lo, partition_hi; /* inclusive */
    int64_t start_address, end_address; /* bytes within each partition */
    int64_t pcore_idx, block_id;
    bool has_pcore_idx, has_block_id;
    char *owner;                        /* never NULL (see above) */
    char *op_source_type, *opcode, *operands, *queue_name, *tensor_name, *hlo_name; /* NULL: null */
    int64_t ordinal;                    /* the lowest partition's row (timeline_rules.h nx_row_ordinal) */
} nx_memory_rect;

typedef struct nx_hbm_category {
    char *usage_type;
    int64_t bytes;
} nx_hbm_category;

typedef struct nx_memory {
    bool has_sbuf, has_hbm;
    nx_memory_rect *rects;
    size_t n_rects;
    uint64_t in_window;                 /* SbufAllocation rows in the window, kept or not */
    uint64_t kept;                      /* rows kept by the sampler (before the merge) */
    int64_t partitions;
    nx_hbm_category *hbm;
    size_t n_hbm;
    int64_t hbm_total;
    uint64_t hbm_skipped;
} nx_memory;

/* 0 (*out filled; release with nx_memory_free), NX_QUERY_OVER_BUDGET (budget.h)
 * or -1 with err naming the table, file or row. start <= end, width >= 1. */
int nx_memory_read(const char *profile_dir, int64_t start, int64_t end, uint32_t width, nx_memory *out,
                   nx_error *err);
void nx_memory_free(nx_memory *m);
/* The HBM half alone (memory_hbm.c): fills m's has_hbm, hbm, n_hbm, hbm_total and
 * hbm_skipped from the profile's HbmUsageSummaryByType, else from its system
 * profile's rows of its NeuronCore (profile_layout.h nx_layout_system_dir). 0, or -1 with err naming the file. */
int nx_memory_read_hbm(const char *profile_dir, nx_memory *m, nx_error *err);

#endif
