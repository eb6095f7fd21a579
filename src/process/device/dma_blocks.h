/*
 * dma_blocks.h — the open DMA blocks of a capture and when each one is complete:
 * the one rule shared by every sink that follows blocks (dma_tables.c for
 * DmaPacketAggregated and Flow, instruction_table.c for Instruction.dma_trigger_*),
 * so a block's packets are counted the same way everywhere.
 *
 * A block is open from its dma_block record until it completes. The open blocks
 * of one (trace, pcore, queue) wait in a FIFO in arrival order (the blocks of a
 * queue complete in order) and complete when:
 *   (a) a packet of a later block of the same (trace, pcore, queue) arrives:
 *       every block before it in the FIFO is complete;
 *   (b) the pipeline passes the end of the trace's current execution record (an
 *       event starts after it) and the block at the head of a FIFO has at least
 *       one packet, all of its packets seen so far having ended by then (an
 *       execution ends after its DMA work): that head is complete, then the next
 *       one is tried, stopping at the first that is not;
 *   (c) the capture ends (nx_dma_blocks_finish): every open block is complete.
 * A packet that arrives for a block already completed by (b) counts for no block.
 * Block ids are the pipeline's (nx_device_event.id of the dma_block record,
 * nx_device_event.block_id of its packets): within a queue they grow with the
 * blocks' order.
 *
 * Each sink keeps its own open-block type, which must begin with nx_dma_open;
 * the tracker fills the header and calls the sink's `done` with a copy of each
 * block as it completes (already out of its FIFO). Memory: the blocks in flight.
 */
#ifndef NX_DMA_BLOCKS_H
#define NX_DMA_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "process/device/device_sink.h"
#include "util/ring.h"
#include "util/error.h"

/* The first member of every open block. */
typedef struct nx_dma_open {
    int64_t id;                      /* the pipeline's block id */
    int64_t end;                     /* latest end of its packets so far */
    uint32_t npk;                    /* its packets so far */
} nx_dma_open;

/* A block of trace `trace` (capture order), pcore and queue is complete; `block`
 * is a copy valid until the call returns. 0, or -1 with err. */
typedef int (*nx_dma_done_fn)(void *sink, size_t trace, unsigned pcore, unsigned queue, const void *block,
                              nx_error *err);

typedef struct nx_dma_trace_blocks {
    unsigned pcores;
    size_t nq;                       /* the program's queues */
    nx_ring *fifos;                  /* pcores x queues: the sink's open blocks, oldest first */
    int64_t exec_end;                /* end of the current execution, INT64_MAX if none pending */
} nx_dma_trace_blocks;

typedef struct nx_dma_blocks {
    size_t elem;                     /* bytes of the sink's open-block type */
    nx_dma_done_fn done;
    void *sink;
    nx_dma_trace_blocks *traces;     /* per trace (readable: e.g. to scan the open blocks) */
    size_t n_traces;
    int64_t deadline;                /* earliest exec_end over the traces */
    void *copy;                      /* a completing block, out of its FIFO */
} nx_dma_blocks;

/* 0, or -1 (out of memory; nx_dma_blocks_free() still applies). */
int nx_dma_blocks_init(nx_dma_blocks *b, const nx_process_ctx *ctx, size_t elem, nx_dma_done_fn done, void *sink);
void nx_dma_blocks_free(nx_dma_blocks *b);
/* First thing for every event the sink gets, in the pipeline's order: rule (b)
 * for the traces whose execution the event starts after, then an execution
 * record's end is noted. 0 or the done callback's -1. */
int nx_dma_blocks_event(nx_dma_blocks *b, const nx_device_event *ev, nx_error *err);
/* A dma_block record: `block` (elem bytes; its header is set here) joins its FIFO.
 * 0, or -1 (out of memory, err says so). */
int nx_dma_blocks_add(nx_dma_blocks *b, const nx_device_event *ev, void *block, nx_error *err);
/* A dma_packet record: rule (a), then *open = its block with the packet counted in
 * the header (npk, end), or NULL when its block was completed already.
 * 0 or the done callback's -1. */
int nx_dma_blocks_packet(nx_dma_blocks *b, const nx_device_event *ev, void **open, nx_error *err);
/* Rule (c): every open block completes. 0 or the done callback's -1. */
int nx_dma_blocks_finish(nx_dma_blocks *b, nx_error *err);

#endif
