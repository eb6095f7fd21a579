/*
 * sbuf_allocation.c — SbufAllocation rows from the finished live ranges of SBUF
 * allocations (rules in sbuf_allocation.h).
 */
#include "process/device/sbuf_allocation.h"

#include <stdio.h>
#include <string.h>

typedef struct range {
    const nx_program *prog;
    int64_t end;
    uint32_t alloc;
    uint8_t pcore;
} range;

int nx_sbuf_rows_open(nx_sbuf_rows *s, const nx_table_dest *dest, nx_error *err)
{
    memset(s, 0, sizeof *s);
    nx_reorder_init(&s->q, sizeof(range));
    if (nx_row_open(&s->r, dest, "SbufAllocation", err) != 0)
        return -1;
    s->c_start = nx_row_col(&s->r, "start_ts");
    s->c_end = nx_row_col(&s->r, "end_ts");
    s->c_saddr = nx_row_col(&s->r, "start_address");
    s->c_eaddr = nx_row_col(&s->r, "end_address");
    s->c_part = nx_row_col(&s->r, "partition");
    s->c_src = nx_row_col(&s->r, "op_source_type");
    s->c_opcode = nx_row_col(&s->r, "opcode");
    s->c_operands = nx_row_col(&s->r, "operands");
    s->c_block = nx_row_col(&s->r, "block_id");
    s->c_tensor = nx_row_col(&s->r, "tensor_name");
    s->c_hlo = nx_row_col(&s->r, "hlo_name");
    s->c_pcore = nx_row_col(&s->r, "pcore_idx");
    return 0;
}

int nx_sbuf_rows_add(nx_sbuf_rows *s, const nx_program *prog, uint32_t alloc, unsigned pcore, int64_t start,
                     int64_t end, nx_error *err)
{
    const nx_prog_alloc *a = &prog->allocs[alloc];
    if (a->memory != NX_MEM_SBUF || a->end_address == 0)
        return 0;
    range x = {prog, end, alloc, (uint8_t)pcore};
    if (nx_reorder_push(&s->q, start, &x) != 0) {
        snprintf(err->msg, sizeof err->msg, "SbufAllocation: out of memory");
        return -1;
    }
    return 0;
}

/* The rows of one range: one per partition. */
static int write_range(nx_sbuf_rows *s, int64_t start, const range *x, nx_error *err)
{
    const nx_prog_alloc *a = &x->prog->allocs[x->alloc];
    const nx_prog_instr *in = nx_program_find_instr(x->prog, a->live_engine, a->live_pc);
    for (unsigned p = a->first_partition; p < (unsigned)a->first_partition + a->partition_count; p++) {
        nx_row *r = &s->r;
        if (nx_row_begin(r, err) != 0)
            return -1;
        nx_row_i64(r, s->c_start, start);
        nx_row_i64(r, s->c_end, x->end);
        nx_row_i64(r, s->c_saddr, (int64_t)a->end_address - (int64_t)a->bytes_per_partition);
        nx_row_i64(r, s->c_eaddr, a->end_address);
        nx_row_i64(r, s->c_part, p);
        nx_row_str(r, s->c_src, "instruction");
        if (in) {   /* the reader validated it: always found */
            nx_row_opt_str(r, s->c_opcode, in->opcode);
            nx_row_opt_str(r, s->c_operands, in->operands);
            nx_row_opt_str(r, s->c_hlo, in->hlo_name);
        }
        nx_row_i64(r, s->c_block, x->alloc);
        nx_row_str(r, s->c_tensor, a->name);
        nx_row_i64(r, s->c_pcore, x->pcore);
        if (nx_row_end(r, err) != 0)
            return -1;
    }
    return 0;
}

int nx_sbuf_rows_drain(nx_sbuf_rows *s, int64_t watermark, nx_error *err)
{
    while (nx_reorder_ready(&s->q, watermark)) {
        if (write_range(s, nx_reorder_top_key(&s->q), nx_reorder_top(&s->q), err) != 0)
            return -1;
        nx_reorder_pop(&s->q);
    }
    return 0;
}

int nx_sbuf_rows_finish(nx_sbuf_rows *s, int rc, unsigned *tables, nx_error *err)
{
    if (rc == 0)
        rc = nx_sbuf_rows_drain(s, INT64_MAX, err);
    nx_reorder_free(&s->q);
    return nx_row_finish(&s->r, rc, tables, err);
}

void nx_sbuf_rows_discard(nx_sbuf_rows *s)
{
    nx_reorder_free(&s->q);
    nx_row_discard(&s->r);
}
