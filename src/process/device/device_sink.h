/*
 * device_sink.h — how the device tables plug into the device pipeline.
 *
 * The pipeline (device_pipeline.c) reads every device trace of a capture once
 * and hands each record, in one global order, to every sink that asked for its
 * kind. The order is by Unix start time (ties: trace order, then file order),
 * so a sink that writes one row per record writes a table sorted by start time
 * with no buffering of its own. Sinks that emit rows later than the record that
 * starts them (a DMA block ends with its last packet) reorder with
 * process/device/reorder.h, whose watermark is the current event time.
 *
 * A sink is independent of every other sink: it sees the records and the
 * program, and keeps whatever state its tables need. Ids that more than one
 * table must agree on (Instruction.id, DmaPacketAggregated.id, referred to by
 * DmaPacket and Flow) are assigned by the pipeline and carried in the event.
 *
 * Memory: a sink's state must be bounded by the program and the capture's
 * shape (engines, queues, IR ids), never by the number of events.
 */
#ifndef NX_DEVICE_SINK_H
#define NX_DEVICE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/device_trace.h"
#include "capture/program_file.h"
#include "parquet/parquet.h"
#include "process/process_options.h"
#include "process/row.h"

/* One device trace as sinks see it. */
typedef struct nx_device_trace {
    size_t index;                    /* capture order, 0.. */
    const char *path;
    nx_trace_header hdr;
    nx_trace_clock clock;            /* hdr's tick rate, prepared (device_trace.h) */
    const nx_program *prog;
    size_t prog_index;               /* into nx_process_ctx.progs */
    /* Set once every record is read: for the sinks' finish(), not for event(). */
    bool any;                        /* at least one record */
    int64_t first_ns, last_ns;       /* Unix ns over every record's start and end */
    uint64_t records;
} nx_device_trace;

/* What every sink may read. */
typedef struct nx_process_ctx {
    const nx_process_options *o;
    nx_table_dest dest;              /* for nx_row_open(): the temporary profile directory */
    nx_program *const *progs;
    size_t n_progs;
    const uint32_t *prog_pcores;     /* per program: the largest pcore_count of its traces */
    const nx_device_trace *traces;
    size_t n_traces;
    /* Non-fatal problems found while processing (Warning rows and stderr); NULL or a
     * NULL fn drops them. Only for finish(): it is not safe from a sink's thread. */
    const nx_cap_warner *warn;
    /* NULL, or where the Summary sink leaves its row for the processor to
     * finish after every other table (summary_table.h). */
    struct nx_summary_hold *summary_hold;
    /* NULL, or nonzero once the run must stop: a signal number (SIGINT, SIGTERM),
     * or -1 when another profile of the run failed. Checked every 64Ki records. */
    const _Atomic int *cancel;
} nx_process_ctx;

/* One record, converted. */
typedef struct nx_device_event {
    const nx_device_trace *trace;
    const nx_trace_record *rec;
    int64_t start_ns;                /* Unix ns of rec->ts */
    int64_t end_ns;                  /* Unix ns of rec->end; start_ns for point kinds */
    int64_t id;                      /* instruction: Instruction.id; dma_block: DmaPacketAggregated.id;
                                        dma_packet: DmaPacket.id; otherwise the kind's sequence number */
    int64_t block_id;                /* dma_packet: its block's DmaPacketAggregated.id; else -1 */
    uint64_t offset;                 /* the record's byte offset in its trace file, for messages */
    const nx_prog_instr *instr;      /* instruction: the program's entry for (engine, pc), found
                                        once by the pipeline (never NULL); else NULL */
} nx_device_event;

#define NX_KIND_BIT(k) (1u << (k))
#define NX_KIND_ALL 0x3FEu           /* kinds 1..9 */

typedef struct nx_device_sink {
    const char *name;                /* for messages: "Instruction", "DMA tables", ... */
    unsigned kinds;                  /* NX_KIND_BIT()s of the records it wants */
    /* Prepares state (*state may stay NULL when the sink has nothing to do). NULL for a
     * sink with no state: its state is NULL. */
    int (*open)(const nx_process_ctx *ctx, void **state, nx_error *err);
    /* One record of its kinds; NULL when kinds is 0 (a sink that writes from the
     * program alone, in finish). */
    int (*event)(void *state, const nx_device_event *ev, nx_error *err);
    /* After the last record: writes what is left, closes its tables (counting
     * each written one in *tables) and frees state, also on error. */
    int (*finish)(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err);
    /* Stops without writing; frees state. NULL when there is no state to free. */
    void (*abort)(void *state);
} nx_device_sink;

/* The sinks, in the order they are opened and fed (device_sinks.c). */
extern const nx_device_sink *const nx_device_sinks[];
extern const size_t nx_device_sink_count;

/* Unix ns of a tick count of trace t. */
int64_t nx_trace_unix_ns(const nx_trace_header *h, uint64_t ticks);

#endif
