/*
 * instruction_table.c — the Instruction table: one row per instruction record,
 * joined with the program's instruction table by (engine, pc).
 *
 * Rows arrive in start-time order from the pipeline, so this sink writes as it
 * goes. Strings come straight from the program (no copies per row).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device_sink.h"
#include "process/row.h"

/* Column indices of Instruction, resolved once. */
#define INSTR_COLS(X)                                                                                  \
    X(start_ts) X(end_ts) X(duration_ns) X(engine) X(timeline_track) X(pcore_idx) X(opcode) X(operands) \
    X(compiler_opcode) X(compiler_operands) X(id) X(pc) X(compiler_pc) X(penguin_id) X(raw_penguin_id)   \
    X(bir_id) X(raw_bir_id) X(bir_instruction_name) X(kernel_instruction_name) X(crc_in) X(crc_out)       \
    X(evt_wait_time_ns) X(hlo_attrs) X(hlo_name) X(raw_hlo_id) X(raw_framework_id) X(layer)              \
    X(nki_source_location) X(bir_debug_info_source_location) X(instruction_chain) X(hbm_read_bytes)     \
    X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) X(spill_save_bytes) X(spill_reload_bytes) \
    X(psum_read_bytes) X(psum_write_bytes) X(psum_read_sbuf_write_bytes) X(input_queue_bytes)           \
    X(output_queue_bytes) X(weight_queue_bytes) X(performance_mode) X(tensor_instruction_type)          \
    X(tensor_elements) X(raw_flops) X(adjusted_flops) X(tensor_elements_transpose) X(flops_transpose)   \
    X(adjusted_flops_transpose) X(scalar_activation_fn)

enum {
#define X(name) IC_##name,
    INSTR_COLS(X)
#undef X
    IC_COUNT
};
typedef struct instr_cols {
    size_t at[IC_COUNT];
} instr_cols;

static const char *tensor_type_text(unsigned bits)
{
    switch (bits & 3u) {
    case NX_TENSOR_REGULAR: return "[\"REGULAR\"]";
    case NX_TENSOR_TRANSPOSE: return "[\"TRANSPOSE\"]";
    case NX_TENSOR_REGULAR | NX_TENSOR_TRANSPOSE: return "[\"REGULAR\", \"TRANSPOSE\"]";
    default: return NULL;
    }
}

static void put_instruction(nx_row *r, const instr_cols *c, const nx_device_event *ev,
                            const nx_prog_instr *in, char *idbuf, size_t idlen)
{
    const nx_trace_record *rec = ev->rec;
    int64_t start = ev->start_ns, end = ev->end_ns;
    nx_row_i64(r, c->at[IC_start_ts], start);
    nx_row_i64(r, c->at[IC_end_ts], end);
    nx_row_i64(r, c->at[IC_duration_ns], end - start);
    nx_row_str(r, c->at[IC_engine], nx_engine_name(rec->u.instr.engine));
    nx_row_opt_str(r, c->at[IC_timeline_track], in->timeline_track);
    nx_row_i64(r, c->at[IC_pcore_idx], rec->pcore);
    nx_row_str(r, c->at[IC_opcode], in->opcode);
    nx_row_str(r, c->at[IC_operands], in->operands);
    nx_row_opt_str(r, c->at[IC_compiler_opcode], in->compiler_opcode);
    nx_row_opt_str(r, c->at[IC_compiler_operands], in->compiler_operands);
    nx_row_i64(r, c->at[IC_id], ev->id);
    nx_row_i64(r, c->at[IC_pc], rec->u.instr.pc);
    nx_row_opt_i64(r, c->at[IC_compiler_pc], in->compiler_pc);
    if (in->raw_penguin_id != NX_ABSENT) {
        snprintf(idbuf, idlen, "%s:%" PRId64, in->subgraph, in->raw_penguin_id);
        nx_row_str(r, c->at[IC_penguin_id], idbuf);
    }
    nx_row_opt_i64(r, c->at[IC_raw_penguin_id], in->raw_penguin_id);
    if (in->raw_bir_id != NX_ABSENT)
        snprintf(idbuf, idlen, "%s:%" PRId64, in->subgraph, in->raw_bir_id);
    else
        snprintf(idbuf, idlen, "%s:", in->subgraph);
    nx_row_str(r, c->at[IC_bir_id], idbuf);
    nx_row_opt_i64(r, c->at[IC_raw_bir_id], in->raw_bir_id);
    nx_row_opt_str(r, c->at[IC_bir_instruction_name], in->bir_instruction_name);
    nx_row_opt_str(r, c->at[IC_kernel_instruction_name], in->kernel_instruction_name);
    if (rec->u.instr.flags & NX_INSTR_FLAG_CRC) {
        nx_row_i64(r, c->at[IC_crc_in], rec->u.instr.crc_in);
        nx_row_i64(r, c->at[IC_crc_out], rec->u.instr.crc_out);
    }
    nx_row_i64(r, c->at[IC_evt_wait_time_ns], (int64_t)nx_trace_ticks_to_ns(&ev->trace->hdr, rec->u.instr.evt_wait_ticks));
    nx_row_opt_str(r, c->at[IC_hlo_attrs], in->hlo_attrs);
    nx_row_opt_str(r, c->at[IC_hlo_name], in->hlo_name);
    nx_row_opt_i64(r, c->at[IC_raw_hlo_id], in->raw_hlo_id);
    nx_row_opt_i64(r, c->at[IC_raw_framework_id], in->raw_framework_id);
    nx_row_opt_str(r, c->at[IC_layer], in->layer);
    nx_row_opt_str(r, c->at[IC_nki_source_location], in->nki_source_location);
    nx_row_opt_str(r, c->at[IC_bir_debug_info_source_location], in->bir_debug_info_source_location);
    nx_row_opt_str(r, c->at[IC_instruction_chain], in->instruction_chain);
#define X(name) nx_row_opt_i64(r, c->at[IC_##name], in->name);
    X(hbm_read_bytes) X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) X(spill_save_bytes)
    X(spill_reload_bytes) X(psum_read_bytes) X(psum_write_bytes) X(psum_read_sbuf_write_bytes)
    X(input_queue_bytes) X(output_queue_bytes) X(weight_queue_bytes) X(tensor_elements) X(raw_flops)
    X(adjusted_flops) X(tensor_elements_transpose) X(flops_transpose) X(adjusted_flops_transpose)
#undef X
    nx_row_opt_str(r, c->at[IC_performance_mode], nx_performance_mode_name(in->performance_mode));
    nx_row_opt_str(r, c->at[IC_tensor_instruction_type], tensor_type_text(in->tensor_instruction_type));
    nx_row_opt_str(r, c->at[IC_scalar_activation_fn], in->scalar_activation_fn);
}

typedef struct instruction_sink {
    nx_row r;
    instr_cols c;
    char idbuf[256];
} instruction_sink;

static int instruction_open(const nx_process_ctx *ctx, void **state, nxpq_error *err)
{
    static const char *const names[] = {
#define X(name) #name,
        INSTR_COLS(X)
#undef X
    };
    instruction_sink *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory");
        return -1;
    }
    if (nx_row_open(&s->r, &ctx->dest, "Instruction", err) != 0) {
        free(s);
        return -1;
    }
    for (size_t i = 0; i < IC_COUNT; i++)
        s->c.at[i] = nx_row_col(&s->r, names[i]);
    *state = s;
    return 0;
}

static int instruction_event(void *state, const nx_device_event *ev, nxpq_error *err)
{
    instruction_sink *s = state;
    const nx_prog_instr *in = nx_program_find_instr(ev->trace->prog, ev->rec->u.instr.engine, ev->rec->u.instr.pc);
    if (!in) {   /* the reader guarantees the pc; kept as a guard against a mismatch */
        snprintf(err->msg, sizeof err->msg, "%s: instruction pc %" PRIu32 " not in the program", ev->trace->path,
                 ev->rec->u.instr.pc);
        return -1;
    }
    if (nx_row_begin(&s->r, err) != 0)
        return -1;
    put_instruction(&s->r, &s->c, ev, in, s->idbuf, sizeof s->idbuf);
    return nx_row_end(&s->r, err);
}

static int instruction_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nxpq_error *err)
{
    (void)ctx;
    instruction_sink *s = state;
    int rc = nx_row_close(&s->r, true, tables, err);
    free(s);
    return rc;
}

static void instruction_abort(void *state)
{
    instruction_sink *s = state;
    nx_row_discard(&s->r);
    free(s);
}

const nx_device_sink nx_sink_instruction = {
    .name = "Instruction",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION),
    .open = instruction_open,
    .event = instruction_event,
    .finish = instruction_finish,
    .abort = instruction_abort,
};
