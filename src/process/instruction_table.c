/*
 * instruction_table.c — the Instruction table: one row per instruction record,
 * joined with the program's instruction table by (engine, pc).
 *
 * stack_frame_ids: the ids of the frame chain from the outermost caller to
 * the instruction's stack_frame_id, as "[id, id, ...]" with the StackFrame ids
 * of stack_frames.h; null when the instruction has no frame.
 *
 * Rows arrive in start-time order from the pipeline, so this sink writes as it
 * goes. String columns are referenced, not copied (see texts_build()).
 */
#include <inttypes.h>
#include <stdbool.h>
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

/* Every string column of a row is a property of the program instruction, so
 * each instruction's present strings are found (and the derived ids formatted)
 * once, at open; a record then stores references: no strlen, copy or printf per
 * row. The strings live in the program, in the frame index or in `owned`, all
 * of which outlast the table. */
typedef struct text_ref {
    uint32_t ic;                     /* IC_* column */
    uint32_t len;
    const char *ptr;
} text_ref;

typedef struct instr_texts {
    size_t first, count;             /* into prog_texts.refs */
} instr_texts;

typedef struct prog_texts {
    instr_texts *by_instr;           /* per program instruction */
    text_ref *refs;
    size_t n_refs, cap_refs;
    char **owned;                    /* formatted ids */
    size_t n_owned;
} prog_texts;

static void put_instruction(nx_row *r, const instr_cols *c, const nx_device_event *ev,
                            const nx_prog_instr *in, const prog_texts *pt, const instr_texts *it)
{
    const nx_trace_record *rec = ev->rec;
    int64_t start = ev->start_ns, end = ev->end_ns;
    nx_row_i64(r, c->at[IC_start_ts], start);
    nx_row_i64(r, c->at[IC_end_ts], end);
    nx_row_i64(r, c->at[IC_duration_ns], end - start);
    nx_row_i64(r, c->at[IC_pcore_idx], rec->pcore);
    nx_row_i64(r, c->at[IC_id], ev->id);
    nx_row_i64(r, c->at[IC_pc], rec->u.instr.pc);
    nx_row_opt_i64(r, c->at[IC_compiler_pc], in->compiler_pc);
    nx_row_opt_i64(r, c->at[IC_raw_penguin_id], in->raw_penguin_id);
    nx_row_opt_i64(r, c->at[IC_raw_bir_id], in->raw_bir_id);
    if (rec->u.instr.flags & NX_INSTR_FLAG_CRC) {
        nx_row_i64(r, c->at[IC_crc_in], rec->u.instr.crc_in);
        nx_row_i64(r, c->at[IC_crc_out], rec->u.instr.crc_out);
    }
    nx_row_i64(r, c->at[IC_evt_wait_time_ns], (int64_t)nx_trace_ticks_to_ns(&ev->trace->hdr, rec->u.instr.evt_wait_ticks));
    nx_row_opt_i64(r, c->at[IC_raw_hlo_id], in->raw_hlo_id);
    nx_row_opt_i64(r, c->at[IC_raw_framework_id], in->raw_framework_id);
#define X(name) nx_row_opt_i64(r, c->at[IC_##name], in->name);
    X(hbm_read_bytes) X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) X(spill_save_bytes)
    X(spill_reload_bytes) X(psum_read_bytes) X(psum_write_bytes) X(psum_read_sbuf_write_bytes)
    X(input_queue_bytes) X(output_queue_bytes) X(weight_queue_bytes) X(tensor_elements) X(raw_flops)
    X(adjusted_flops) X(tensor_elements_transpose) X(flops_transpose) X(adjusted_flops_transpose)
#undef X
    for (size_t k = 0; k < it->count; k++) {
        const text_ref *t = &pt->refs[it->first + k];
        nx_row_str_ref(r, c->at[t->ic], t->ptr, t->len);
    }
}

typedef struct instruction_sink {
    nx_row r;
    instr_cols c;
    prog_texts *texts;               /* per program */
    nx_frame_index frames;           /* stack_frame_ids text per program frame (stack_frames.h) */
    size_t n_progs;
} instruction_sink;

static void instruction_sink_free(instruction_sink *s)
{
    for (size_t i = 0; s->texts && i < s->n_progs; i++) {
        prog_texts *pt = &s->texts[i];
        for (size_t k = 0; k < pt->n_owned; k++)
            free(pt->owned[k]);
        free(pt->owned);
        free(pt->refs);
        free(pt->by_instr);
    }
    free(s->texts);
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

/* References text for column ic; NULL (and "" unless keep_empty) means absent:
 * the column stays null. */
static int add_text(prog_texts *pt, unsigned ic, const char *text, bool keep_empty)
{
    if (!text || (!*text && !keep_empty))
        return 0;
    if (pt->n_refs == pt->cap_refs) {
        size_t cap = pt->cap_refs ? pt->cap_refs * 2 : 256;
        text_ref *x = realloc(pt->refs, cap * sizeof *x);
        if (!x)
            return -1;
        pt->refs = x;
        pt->cap_refs = cap;
    }
    size_t len = strlen(text);
    if (len > UINT32_MAX)
        return -1;
    pt->refs[pt->n_refs++] = (text_ref){.ic = ic, .len = (uint32_t)len, .ptr = text};
    return 0;
}

static int add_ref(prog_texts *pt, unsigned ic, const char *text)
{
    return add_text(pt, ic, text, false);
}

/* Formats an id into pt->owned and references it. */
static int add_id(prog_texts *pt, unsigned ic, const char *subgraph, int64_t id)
{
    char *t = id_text(subgraph, id);
    if (!t)
        return -1;
    pt->owned[pt->n_owned++] = t;
    return add_ref(pt, ic, t);
}

static int texts_build(instruction_sink *s, const nx_process_ctx *ctx)
{
    s->texts = calloc(ctx->n_progs + 1, sizeof *s->texts);
    if (!s->texts)
        return -1;
    s->n_progs = ctx->n_progs;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        prog_texts *pt = &s->texts[p];
        pt->by_instr = calloc(g->n_instrs + 1, sizeof *pt->by_instr);
        pt->owned = calloc(2 * g->n_instrs + 1, sizeof *pt->owned);
        if (!pt->by_instr || !pt->owned)
            return -1;
        for (size_t i = 0; i < g->n_instrs; i++) {
            const nx_prog_instr *in = &g->instrs[i];
            pt->by_instr[i].first = pt->n_refs;
            const char *frames = NULL;
            if (in->stack_frame_id >= 0 && (size_t)in->stack_frame_id < s->frames.prog_frames[p])
                frames = s->frames.path[p][in->stack_frame_id];
            /* opcode is never empty (the reader checks); operands may be empty text. */
            if (add_ref(pt, IC_engine, nx_engine_name(in->engine)) != 0 ||
                add_text(pt, IC_operands, in->operands, true) != 0 ||
                add_ref(pt, IC_timeline_track, in->timeline_track) != 0 || add_ref(pt, IC_opcode, in->opcode) != 0 ||
                add_ref(pt, IC_compiler_opcode, in->compiler_opcode) != 0 ||
                add_ref(pt, IC_compiler_operands, in->compiler_operands) != 0 ||
                add_ref(pt, IC_bir_instruction_name, in->bir_instruction_name) != 0 ||
                add_ref(pt, IC_kernel_instruction_name, in->kernel_instruction_name) != 0 ||
                add_ref(pt, IC_hlo_attrs, in->hlo_attrs) != 0 || add_ref(pt, IC_hlo_name, in->hlo_name) != 0 ||
                add_ref(pt, IC_layer, in->layer) != 0 || add_ref(pt, IC_nki_source_location, in->nki_source_location) != 0 ||
                add_ref(pt, IC_bir_debug_info_source_location, in->bir_debug_info_source_location) != 0 ||
                add_ref(pt, IC_instruction_chain, in->instruction_chain) != 0 ||
                add_ref(pt, IC_performance_mode, nx_performance_mode_name(in->performance_mode)) != 0 ||
                add_ref(pt, IC_tensor_instruction_type, tensor_type_text(in->tensor_instruction_type)) != 0 ||
                add_ref(pt, IC_scalar_activation_fn, in->scalar_activation_fn) != 0 ||
                add_ref(pt, IC_stack_frame_ids, frames) != 0 ||
                add_id(pt, IC_bir_id, in->subgraph, in->raw_bir_id) != 0 ||
                (in->raw_penguin_id != NX_ABSENT && add_id(pt, IC_penguin_id, in->subgraph, in->raw_penguin_id) != 0))
                return -1;
            pt->by_instr[i].count = pt->n_refs - pt->by_instr[i].first;
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
    if (texts_build(s, ctx) != 0) {
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
    const nx_prog_instr *in = ev->instr;
    if (nx_row_begin(&s->r, err) != 0)
        return -1;
    const prog_texts *pt = &s->texts[ev->trace->prog_index];
    put_instruction(&s->r, &s->c, ev, in, pt, &pt->by_instr[in - ev->trace->prog->instrs]);
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
