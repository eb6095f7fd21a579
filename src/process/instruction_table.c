/*
 * instruction_table.c — the Instruction table: one row per instruction record,
 * joined with the program's instruction table by (engine, pc).
 *
 * stack_frame_ids: the ids of the frame chain from the outermost caller to
 * the instruction's stack_frame_id, as "[id, id, ...]" with the StackFrame ids
 * of stack_frames.h; null when the instruction has no frame.
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
#include "process/stack_frames.h"

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
    X(adjusted_flops_transpose) X(scalar_activation_fn) X(stack_frame_ids)

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

/* The derived id strings of one program instruction, formatted once at open
 * rather than per record: "<subgraph>:<raw id>" ("<subgraph>:" without a BIR id). */
typedef struct instr_ids {
    char *penguin_id;                /* NULL when the instruction has no Penguin id */
    char *bir_id;
} instr_ids;

static void put_instruction(nx_row *r, const instr_cols *c, const nx_device_event *ev,
                            const nx_prog_instr *in, const instr_ids *ids)
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
    if (in->raw_penguin_id != NX_ABSENT)
        nx_row_str(r, c->at[IC_penguin_id], ids->penguin_id);
    nx_row_opt_i64(r, c->at[IC_raw_penguin_id], in->raw_penguin_id);
    nx_row_str(r, c->at[IC_bir_id], ids->bir_id);
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
    instr_ids **ids;                 /* per program, per instruction index */
    nx_frame_index frames;           /* stack_frame_ids text per program frame (stack_frames.h) */
    size_t n_progs;
} instruction_sink;

static void instruction_sink_free(instruction_sink *s)
{
    for (size_t i = 0; i < s->n_progs; i++) {
        for (size_t k = 0; s->ids[i] && s->ids[i][k].bir_id; k++) {
            free(s->ids[i][k].penguin_id);
            free(s->ids[i][k].bir_id);
        }
        free(s->ids[i]);
    }
    free(s->ids);
    nx_frame_index_free(&s->frames);
    free(s);
}

/* "<subgraph>:<id>", or "<subgraph>:" for NX_ABSENT; malloc'd. */
static char *id_text(const char *subgraph, int64_t id)
{
    size_t n = strlen(subgraph) + 24;
    char *t = malloc(n);
    if (t) {
        if (id != NX_ABSENT)
            snprintf(t, n, "%s:%" PRId64, subgraph, id);
        else
            snprintf(t, n, "%s:", subgraph);
    }
    return t;
}

static int ids_build(instruction_sink *s, const nx_process_ctx *ctx)
{
    s->ids = calloc(ctx->n_progs + 1, sizeof *s->ids);
    if (!s->ids)
        return -1;
    s->n_progs = ctx->n_progs;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        s->ids[p] = calloc(g->n_instrs + 1, sizeof **s->ids);
        if (!s->ids[p])
            return -1;
        for (size_t i = 0; i < g->n_instrs; i++) {
            const nx_prog_instr *in = &g->instrs[i];
            instr_ids *d = &s->ids[p][i];
            d->bir_id = id_text(in->subgraph, in->raw_bir_id);
            if (!d->bir_id)
                return -1;
            if (in->raw_penguin_id != NX_ABSENT && !(d->penguin_id = id_text(in->subgraph, in->raw_penguin_id)))
                return -1;
        }
    }
    return 0;
}

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
    if (nx_frame_index_build(ctx->progs, ctx->n_progs, &s->frames, "Instruction", err->msg, sizeof err->msg) != 0) {
        instruction_sink_free(s);
        return -1;
    }
    if (ids_build(s, ctx) != 0) {
        instruction_sink_free(s);
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory");
        return -1;
    }
    if (nx_row_open(&s->r, &ctx->dest, "Instruction", err) != 0) {
        instruction_sink_free(s);
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
    put_instruction(&s->r, &s->c, ev, in, &s->ids[ev->trace->prog_index][in - ev->trace->prog->instrs]);
    /* stack_frame_ids: the frame chain text, precomputed per program frame. */
    if (in->stack_frame_id >= 0 && (size_t)in->stack_frame_id < s->frames.prog_frames[ev->trace->prog_index])
        nx_row_str(&s->r, s->c.at[IC_stack_frame_ids], s->frames.path[ev->trace->prog_index][in->stack_frame_id]);
    return nx_row_end(&s->r, err);
}

static int instruction_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nxpq_error *err)
{
    (void)ctx;
    instruction_sink *s = state;
    int rc = nx_row_close(&s->r, true, tables, err);
    instruction_sink_free(s);
    return rc;
}

static void instruction_abort(void *state)
{
    instruction_sink *s = state;
    nx_row_discard(&s->r);
    instruction_sink_free(s);
}

const nx_device_sink nx_sink_instruction = {
    .name = "Instruction",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION),
    .open = instruction_open,
    .event = instruction_event,
    .finish = instruction_finish,
    .abort = instruction_abort,
};
