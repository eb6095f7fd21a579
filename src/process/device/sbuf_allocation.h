/*
 * sbuf_allocation.h — SbufAllocation: the SBUF address ranges the program's
 * static allocations held and when, one row per (live range, partition).
 *
 * The live ranges are SbufUsage's (memory_usage.c, docs/processing.md
 * "SbufUsage, PsumUsage"); this module turns each finished range of an SBUF
 * allocation whose MEMORY_ALLOCATIONS record has an end_address into rows:
 * start_ts/end_ts = the range, start_address = end_address - bytes_per_partition,
 * end_address, one row per partition of [first_partition, first_partition +
 * partition_count), op_source_type "instruction", opcode / operands / hlo_name of
 * the instruction that made it live, block_id = the allocation's record index,
 * tensor_name = its name, pcore_idx. Rows are written in start_ts order (ties:
 * the order the ranges were given, then partition order): a range waits until
 * the caller's watermark says no range still open starts before it.
 */
#ifndef NX_SBUF_ALLOCATION_H
#define NX_SBUF_ALLOCATION_H

#include <stdint.h>

#include "capture/program_file.h"
#include "parquet/parquet.h"
#include "process/device/reorder.h"
#include "process/row.h"

typedef struct nx_sbuf_rows {
    nx_row r;
    size_t c_start, c_end, c_saddr, c_eaddr, c_part, c_src, c_opcode, c_operands, c_block, c_tensor, c_hlo,
        c_pcore;
    nx_reorder q;                    /* finished ranges by start */
} nx_sbuf_rows;

int nx_sbuf_rows_open(nx_sbuf_rows *s, const nx_table_dest *dest, nx_error *err);
/* A finished live range [start, end] of allocation `alloc` of program `prog`
 * on `pcore`; nothing for a PSUM allocation or one without an end_address. */
int nx_sbuf_rows_add(nx_sbuf_rows *s, const nx_program *prog, uint32_t alloc, unsigned pcore, int64_t start,
                     int64_t end, nx_error *err);
/* Writes the ranges starting at or before `watermark`. */
int nx_sbuf_rows_drain(nx_sbuf_rows *s, int64_t watermark, nx_error *err);
/* Writes what is left and closes the table (counted in *tables) when rc is 0, else discards it. */
int nx_sbuf_rows_finish(nx_sbuf_rows *s, int rc, unsigned *tables, nx_error *err);
void nx_sbuf_rows_discard(nx_sbuf_rows *s);

#endif
