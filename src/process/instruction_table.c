/*
 * instruction_table.c — the Instruction table: one row per instruction record,
 * joined with the program's instruction table by (engine, pc).
 *
 * From the record: start_ts, end_ts, duration_ns (end - start), pcore_idx, id
 * (nx_device_event.id), crc_in and crc_out (only when the record's CRC flag is
 * set, else null), evt_wait_time_ns (the record's wait ticks in ns).
 *
 * From the program instruction, everything else:
 *   engine               the engine's name (nx_engine_name);
 *   pc, compiler_pc, raw_penguin_id, raw_bir_id, raw_hlo_id, raw_framework_id
 *   and the byte / flop counts (hbm_read_bytes ... adjusted_flops_transpose)
 *                        the instruction's values; NX_ABSENT is null;
 *   operands             the operand text, "" kept as "" (the field is required);
 *   timeline_track, opcode, compiler_opcode, compiler_operands,
 *   bir_instruction_name, kernel_instruction_name, hlo_attrs, hlo_name, layer,
 *   nki_source_location, bir_debug_info_source_location, instruction_chain,
 *   scalar_activation_fn the instruction's text; NULL or "" is null;
 *   performance_mode     nx_performance_mode_name(), null when absent;
 *   tensor_instruction_type  ["REGULAR"], ["TRANSPOSE"] or ["REGULAR", "TRANSPOSE"]
 *                        by the NX_TENSOR_* bits, null when none is set;
 *   bir_id               "<subgraph>:<raw_bir_id>", or "<subgraph>:" when the
 *                        raw id is absent (never null: the field is required);
 *   penguin_id           "<subgraph>:<raw_penguin_id>", null when the raw id is absent;
 *   stack_frame_ids      the ids of the frame chain from the outermost caller to
 *                        the instruction's stack_frame_id, as "[id, id, ...]" with
 *                        the StackFrame ids of stack_frames.h; null when the
 *                        instruction has no frame (or an id past the program's frames).
 *
 * Since those columns are functions of the program instruction, they are keyed
 * columns (row.h): their values are laid out once per program instruction at
 * open, the key being the instruction's index over all programs (program p's
 * instructions follow those of programs 0..p-1), and each row stores only the
 * key. The Parquet writer holds the values as dictionaries and never hashes a
 * value per row. Rows arrive in start-time order from the pipeline, so this
 * sink writes as it goes.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device_sink.h"
#include "process/row.h"
#include "process/stack_frames.h"

/* Columns filled from the record, per row. */
#define RECORD_COLS(X) \
    X(start_ts) X(end_ts) X(duration_ns) X(pcore_idx) X(id) X(crc_in) X(crc_out) X(evt_wait_time_ns)

/* Keyed string columns (values per program instruction). */
#define KEYED_STRS(X)                                                                                        \
    X(engine) X(timeline_track) X(opcode) X(operands) X(compiler_opcode) X(compiler_operands) X(penguin_id) \
    X(bir_id) X(bir_instruction_name) X(kernel_instruction_name) X(hlo_attrs) X(hlo_name) X(layer)         \
    X(nki_source_location) X(bir_debug_info_source_location) X(instruction_chain) X(performance_mode)       \
    X(tensor_instruction_type) X(scalar_activation_fn) X(stack_frame_ids)

/* Keyed integer columns that are the instruction's field of the same name. */
#define KEYED_FIELD_INTS(X)                                                                                  \
    X(compiler_pc) X(raw_penguin_id) X(raw_bir_id) X(raw_hlo_id) X(raw_framework_id) X(hbm_read_bytes)      \
    X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) X(spill_save_bytes) X(spill_reload_bytes)    \
    X(psum_read_bytes) X(psum_write_bytes) X(psum_read_sbuf_write_bytes) X(input_queue_bytes)               \
    X(output_queue_bytes) X(weight_queue_bytes) X(tensor_elements) X(raw_flops) X(adjusted_flops)           \
    X(tensor_elements_transpose) X(flops_transpose) X(adjusted_flops_transpose)
/* ... plus pc. */
#define KEYED_INTS(X) X(pc) KEYED_FIELD_INTS(X)

enum {
#define X(name) RC_##name,
    RECORD_COLS(X)
#undef X
    RC_COUNT
};
enum {
#define X(name) KS_##name,
    KEYED_STRS(X)
#undef X
    KS_COUNT
};
enum {
#define X(name) KI_##name,
    KEYED_INTS(X)
#undef X
    KI_COUNT
};

static const char *tensor_type_text(unsigned bits)
{
    switch (bits & 3u) {
    case NX_TENSOR_REGULAR: return "[\"REGULAR\"]";
    case NX_TENSOR_TRANSPOSE: return "[\"TRANSPOSE\"]";
    case NX_TENSOR_REGULAR | NX_TENSOR_TRANSPOSE: return "[\"REGULAR\", \"TRANSPOSE\"]";
    default: return NULL;
    }
}

typedef struct instruction_sink {
    nx_row r;
    size_t rc[RC_COUNT];             /* record columns' indices */
    size_t *prog_base;               /* per program: key of its first instruction */
    size_t n_keys;
    nxpq_str *strs[KS_COUNT];        /* per keyed string column, per key */
    int64_t *ints[KI_COUNT];         /* per keyed integer column, per key */
    char **owned;                    /* formatted ids, 2 per key at most */
    size_t n_owned;
    nx_frame_index frames;           /* stack_frame_ids text per program frame (stack_frames.h) */
} instruction_sink;

static void instruction_sink_free(instruction_sink *s)
{
    for (size_t k = 0; k < s->n_owned; k++)
        free(s->owned[k]);
    free(s->owned);
    for (size_t i = 0; i < KS_COUNT; i++)
        free(s->strs[i]);
    for (size_t i = 0; i < KI_COUNT; i++)
        free(s->ints[i]);
    free(s->prog_base);
    nx_frame_index_free(&s->frames);
    free(s);
}

/* A keyed string value: NULL (and "" unless keep_empty) is null. The text must
 * outlast the table (program strings, frame texts, s->owned). */
static nxpq_str text(const char *t, bool keep_empty)
{
    if (!t || (!*t && !keep_empty))
        return (nxpq_str){NULL, 0};
    return (nxpq_str){t, strlen(t)};
}

/* "<subgraph>:<id>", or "<subgraph>:" for NX_ABSENT, kept in s->owned. */
static const char *id_text(instruction_sink *s, const char *subgraph, int64_t id)
{
    size_t n = strlen(subgraph) + 24;
    char *t = malloc(n);
    if (!t)
        return NULL;
    if (id != NX_ABSENT)
        snprintf(t, n, "%s:%" PRId64, subgraph, id);
    else
        snprintf(t, n, "%s:", subgraph);
    s->owned[s->n_owned++] = t;
    return t;
}

/* Lays out every keyed column's value per key (see the header for the rules). */
static int values_build(instruction_sink *s, const nx_process_ctx *ctx)
{
    s->prog_base = calloc(ctx->n_progs + 1, sizeof *s->prog_base);
    if (!s->prog_base)
        return -1;
    size_t n = 0;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        s->prog_base[p] = n;
        n += ctx->progs[p]->n_instrs;
    }
    s->n_keys = n;
    size_t m = n ? n : 1;
    for (size_t i = 0; i < KS_COUNT; i++)
        if (!(s->strs[i] = malloc(m * sizeof *s->strs[i])))
            return -1;
    for (size_t i = 0; i < KI_COUNT; i++)
        if (!(s->ints[i] = malloc(m * sizeof *s->ints[i])))
            return -1;
    if (!(s->owned = calloc(2 * m, sizeof *s->owned)))
        return -1;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        for (size_t i = 0; i < g->n_instrs; i++) {
            const nx_prog_instr *in = &g->instrs[i];
            size_t key = s->prog_base[p] + i;
            const char *frames = NULL;
            if (in->stack_frame_id >= 0 && (size_t)in->stack_frame_id < s->frames.prog_frames[p])
                frames = s->frames.path[p][in->stack_frame_id];
            const char *bir_id = id_text(s, in->subgraph, in->raw_bir_id);
            const char *penguin_id = NULL;
            if (!bir_id || (in->raw_penguin_id != NX_ABSENT && !(penguin_id = id_text(s, in->subgraph, in->raw_penguin_id))))
                return -1;
            nxpq_str *const *S = s->strs;
            S[KS_engine][key] = text(nx_engine_name(in->engine), false);
            S[KS_operands][key] = text(in->operands, true);
            S[KS_performance_mode][key] = text(nx_performance_mode_name(in->performance_mode), false);
            S[KS_tensor_instruction_type][key] = text(tensor_type_text(in->tensor_instruction_type), false);
            S[KS_stack_frame_ids][key] = text(frames, false);
            S[KS_bir_id][key] = text(bir_id, false);
            S[KS_penguin_id][key] = text(penguin_id, false);
#define X(name) S[KS_##name][key] = text(in->name, false);
            X(timeline_track) X(opcode) X(compiler_opcode) X(compiler_operands) X(bir_instruction_name)
            X(kernel_instruction_name) X(hlo_attrs) X(hlo_name) X(layer) X(nki_source_location)
            X(bir_debug_info_source_location) X(instruction_chain) X(scalar_activation_fn)
#undef X
            s->ints[KI_pc][key] = in->pc;
#define X(name) s->ints[KI_##name][key] = in->name;
            KEYED_FIELD_INTS(X)
#undef X
        }
    }
    return 0;
}

static int instruction_open(const nx_process_ctx *ctx, void **state, nxpq_error *err)
{
    static const char *const record_names[] = {
#define X(name) #name,
        RECORD_COLS(X)
#undef X
    };
    static const char *const str_names[] = {
#define X(name) #name,
        KEYED_STRS(X)
#undef X
    };
    static const char *const int_names[] = {
#define X(name) #name,
        KEYED_INTS(X)
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
    if (values_build(s, ctx) != 0) {
        instruction_sink_free(s);
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory");
        return -1;
    }
    if (nx_row_open(&s->r, &ctx->dest, "Instruction", err) != 0) {
        instruction_sink_free(s);
        return -1;
    }
    for (size_t i = 0; i < RC_COUNT; i++)
        s->rc[i] = nx_row_col(&s->r, record_names[i]);
    int rc = 0;
    for (size_t i = 0; i < KS_COUNT && rc == 0; i++)
        rc = nx_row_keyed_str(&s->r, 0, nx_row_col(&s->r, str_names[i]), s->strs[i], s->n_keys, err);
    for (size_t i = 0; i < KI_COUNT && rc == 0; i++)
        rc = nx_row_keyed_i64(&s->r, 0, nx_row_col(&s->r, int_names[i]), s->ints[i], s->n_keys, err);
    if (rc != 0) {
        nx_row_discard(&s->r);
        instruction_sink_free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int instruction_event(void *state, const nx_device_event *ev, nxpq_error *err)
{
    instruction_sink *s = state;
    nx_row *r = &s->r;
    if (nx_row_begin(r, err) != 0)
        return -1;
    const nx_trace_record *rec = ev->rec;
    int64_t start = ev->start_ns, end = ev->end_ns;
    nx_row_i64(r, s->rc[RC_start_ts], start);
    nx_row_i64(r, s->rc[RC_end_ts], end);
    nx_row_i64(r, s->rc[RC_duration_ns], end - start);
    nx_row_i64(r, s->rc[RC_pcore_idx], rec->pcore);
    nx_row_i64(r, s->rc[RC_id], ev->id);
    if (rec->u.instr.flags & NX_INSTR_FLAG_CRC) {
        nx_row_i64(r, s->rc[RC_crc_in], rec->u.instr.crc_in);
        nx_row_i64(r, s->rc[RC_crc_out], rec->u.instr.crc_out);
    }
    nx_row_i64(r, s->rc[RC_evt_wait_time_ns],
               (int64_t)nx_trace_ticks_to_ns(&ev->trace->hdr, rec->u.instr.evt_wait_ticks));
    nx_row_key(r, 0, (uint32_t)(s->prog_base[ev->trace->prog_index] + (size_t)(ev->instr - ev->trace->prog->instrs)));
    return nx_row_end(r, err);
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
