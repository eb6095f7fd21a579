/*
 * engine_breakdown.h — where a NeuronCore's time went, from a device profile's
 * Instruction, CcOp and DmaPacket tables (docs/analyses.md, "Neuron
 * device profiles"): the device-profile side of breakdown.h. All times are
 * integer nanoseconds; nothing is counted twice.
 *
 *   - window: the first start to the last end over every row of the three
 *     tables (rows with a null start_ts or end_ts are not events and are
 *     skipped; an end before its start is an error naming the table and row);
 *   - engines: per Instruction.engine (a null engine is "(none)"), its
 *     instruction count, busy_ns = the length of the union of its
 *     instructions' intervals and idle_ns = window_ns - busy_ns; in name order;
 *   - temporal, with breakdown.h's precedence: compute = the union of every
 *     instruction (any engine), communication = CcOp time not under compute,
 *     memory = DmaPacket time under neither, idle = the rest, so compute_ns +
 *     communication_ns + memory_ns + idle_ns = window_ns exactly;
 *     overlapped_cc_ns = the CcOp time under compute and overlap_pct =
 *     overlapped_cc_ns / all CcOp time (-1 without CcOp rows);
 *   - cc: the CcOp rows' count and the length of their union;
 *   - dma: the DmaPacket rows' count, the sum of transfer_bytes, the length of
 *     their union (dma_busy_ns) and bytes per busy ns (= GB/s, 0 when none).
 * Memory: 16 bytes per row of the three tables.
 */
#ifndef NX_QUERY_ENGINE_BREAKDOWN_H
#define NX_QUERY_ENGINE_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

typedef struct nx_eb_engine {
    char *name;
    int64_t count, busy_ns, idle_ns;
} nx_eb_engine;

typedef struct nx_engine_breakdown {
    int64_t start_ns, end_ns, window_ns;
    int64_t compute_ns, communication_ns, overlapped_cc_ns, memory_ns, idle_ns;
    double overlap_pct;              /* -1: no CcOp rows */
    int64_t cc_count, cc_ns;
    int64_t dma_count, dma_bytes, dma_busy_ns;
    double dma_gbps;
    nx_eb_engine *engines;
    size_t n_engines;
} nx_engine_breakdown;

/* Reads the engine breakdown of device profile `dir`. 0, NX_PROFILE_TABLE_ABSENT
 * (no Instruction table: not a device profile; *out empty), or -1 with err
 * naming the table, row or what overflowed. */
int nx_engine_breakdown_read(const char *dir, nx_engine_breakdown *out, nx_error *err);
void nx_engine_breakdown_free(nx_engine_breakdown *b);

/* The answer as one JSON object {"kind":"device", the members above,
 * "engines":[{"engine","count","busy_ns","idle_ns"}]}; overlap_pct null when
 * -1. With safe_ints, integers beyond +-2^53 are decimal strings. */
void nx_engine_breakdown_json(const nx_engine_breakdown *b, bool safe_ints, nx_strbuf *out);

#endif
