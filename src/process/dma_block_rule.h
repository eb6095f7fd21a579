/*
 * dma_block_rule.h — when a DMA block is complete: the one rule shared by every
 * sink that follows blocks (dma_tables.c for DmaPacketAggregated and Flow,
 * instruction_table.c for Instruction.dma_trigger_*), so a block's packets are
 * counted the same way everywhere.
 *
 * A block is open from its dma_block record until it completes. Each sink keeps
 * the open blocks of one (trace, pcore, queue) in a FIFO in arrival order (the
 * blocks of a queue complete in order) and applies:
 *   (a) a packet of a later block of the same (trace, pcore, queue) arrives:
 *       every block before it in the FIFO is complete
 *       (nx_dma_block_done_by_later_packet);
 *   (b) the pipeline passes the end of the trace's current execution record
 *       (an event starts after it: nx_dma_execution_passed) and the block at the
 *       head of a FIFO has at least one packet, all of its packets seen so far
 *       having ended by then (an execution ends after its DMA work): that head is
 *       complete, then the next one is tried, stopping at the first that is not
 *       (nx_dma_block_done_by_execution);
 *   (c) the capture ends: every open block is complete.
 * A packet that arrives for a block already completed by (b) is not counted for
 * that block.
 * Block ids here are the pipeline's (nx_device_event.id of the dma_block record,
 * nx_device_event.block_id of its packets): within a queue they grow with the
 * blocks' order.
 */
#ifndef NX_DMA_BLOCK_RULE_H
#define NX_DMA_BLOCK_RULE_H

#include <stdbool.h>
#include <stdint.h>

/* Rule (a): is the open block `open_id` complete once a packet of block
 * `packet_block_id` of the same queue arrives? */
static inline bool nx_dma_block_done_by_later_packet(int64_t open_id, int64_t packet_block_id)
{
    return open_id < packet_block_id;
}

/* Rule (b), first half: has an event starting at `now` passed the execution end
 * `exec_end` (INT64_MAX: no execution pending)? */
static inline bool nx_dma_execution_passed(int64_t exec_end, int64_t now)
{
    return exec_end < now;
}

/* Rule (b), second half: is a FIFO head with `packets` packets whose latest end
 * is `end` complete at the execution end `exec_end`? */
static inline bool nx_dma_block_done_by_execution(uint32_t packets, int64_t end, int64_t exec_end)
{
    return packets > 0 && end <= exec_end;
}

#endif
