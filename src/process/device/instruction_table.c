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
 * value per row.
 *
 * From the DMA blocks the instruction triggered (dma_block and dma_packet records):
 *   A dma_block record whose trigger_engine is not 0xFF (and trigger_pc not
 *   0xFFFFFFFF) belongs to the instruction record of the same trace and pcore, with
 *   engine = trigger_engine and pc = trigger_pc, that the pipeline dispatched last
 *   before the dma_block record (the latest-starting one; equal starts: the later in
 *   the trace file), provided the block's trigger_ts (Unix ns, the record's time)
 *   is <= that instruction's end_ts; otherwise it belongs to no instruction. Since
 *   an engine runs its instructions one after another, this is "the latest-starting
 *   instruction of that (trace, pcore, engine, pc) whose [start_ts, end_ts]
 *   contains trigger_ts", and the instruction is the same one Flow's DMA_TRIGGER
 *   edge names (dma_tables.c).
 *   A block's packets are those its DmaPacketAggregated row counts: the dma_packet
 *   records of the block until it completes (process/device/dma_blocks.h).
 *   dma_trigger_start_ts = the earliest start of any packet of the blocks that
 *                          belong to the instruction;
 *   dma_trigger_end_ts   = the latest end of those packets;
 *   dma_wait_time_ns     = dma_trigger_start_ts - the earliest trigger_ts of those
 *                          blocks that received a packet, at least 0: how long the
 *                          DMA the instruction started waited in its queue before
 *                          its first packet moved.
 *   All three are null for an instruction that triggered no block, or whose blocks
 *   received no packet.
 *
 * Streaming: rows must be written sorted by start_ts (the timeline index and the
 * page statistics rely on it) and records arrive in start order, so each
 * instruction record is held back, as a compact copy (held_row, 80 bytes) in a
 * FIFO in arrival order, until its row can no longer change: the pipeline has
 * passed its end_ts (a later dma_block cannot name it) and every block that
 * belongs to it is complete. Only the head of the FIFO is written, so order is
 * kept. The FIFO holds at most NX_INSTR_HOLDBACK_DEFAULT rows (2^20, about 80 MiB;
 * the environment variable NXPROF_INSTRUCTION_HOLDBACK, a positive integer,
 * lowers or raises it, for tests): when it is full, the head is written with what
 * is known so far (its DMA columns may miss blocks or packets not seen yet; blocks
 * that would have belonged to it belong to none) and counted; the count is
 * reported once, at finish, as a warning ("Missing Data", a Warning row and a line
 * on stderr). At the end of the capture every block is complete and every held
 * row is written. Memory: the FIFO (capped), per trace one sequence number per
 * program instruction and pcore, the open blocks per (trace, pcore, queue).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/device/dma_blocks.h"
#include "process/row.h"
#include "process/device/stack_frames.h"

/* Columns filled from the record, per row. */
#define RECORD_COLS(X)                                                                                     \
    X(start_ts) X(end_ts) X(duration_ns) X(pcore_idx) X(id) X(crc_in) X(crc_out) X(evt_wait_time_ns)       \
    X(dma_trigger_start_ts) X(dma_trigger_end_ts) X(dma_wait_time_ns)

#define NX_INSTR_HOLDBACK_DEFAULT ((size_t)1 << 20)

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

/* One instruction record waiting to be written (see the header, "Streaming"). */
typedef struct held_row {
    int64_t start, end, id, evt_wait;
    int64_t dma_start, dma_end;      /* over the packets of its blocks; INT64_MAX / INT64_MIN: none */
    int64_t trig_min;                /* earliest trigger_ts of its blocks that got a packet */
    uint32_t key;                    /* keyed columns' key */
    uint32_t crc_in, crc_out;
    uint32_t open_blocks;            /* its blocks not yet complete */
    uint8_t pcore, crc;
} held_row;

/* An open DMA block (all of them, owned or not, so the completion rule sees the
 * same FIFO heads as dma_tables.c). */
typedef struct open_block {
    nx_dma_open h;                   /* id, end and packets (dma_blocks.h) */
    int64_t trig;                    /* its trigger_ts, Unix ns */
    uint64_t owner;                  /* sequence number + 1 of the held row it belongs to; 0: none */
} open_block;


typedef struct trace_state {
    size_t n_instrs;
    uint64_t *last;                  /* pcores x program instructions: sequence number + 1 of the
                                        latest instruction record of that (pcore, instruction); 0 none */
} trace_state;

typedef struct instruction_sink {
    nx_row r;
    held_row *held;                  /* ring: sequence number q lives at held[q & (held_cap - 1)] */
    size_t held_cap, limit;
    uint64_t head, tail;             /* sequence numbers: held rows are [head, tail) */
    uint64_t early;                  /* rows written because the hold-back was full */
    trace_state *traces;
    size_t n_traces;
    nx_dma_blocks blocks;            /* every open block (open_block), owned or not */
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
    for (size_t i = 0; s->traces && i < s->n_traces; i++) {
        free(s->traces[i].last);
    }
    nx_dma_blocks_free(&s->blocks);
    free(s->traces);
    free(s->held);
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

/* The hold-back limit: NXPROF_INSTRUCTION_HOLDBACK when it is a positive integer. */
static size_t holdback_limit(void)
{
    const char *e = getenv("NXPROF_INSTRUCTION_HOLDBACK");
    if (e && *e) {
        char *stop = NULL;
        unsigned long long v = strtoull(e, &stop, 10);
        if (stop && *stop == '\0' && v > 0 && v <= ((size_t)1 << 40))
            return (size_t)v;
    }
    return NX_INSTR_HOLDBACK_DEFAULT;
}

static int complete_block(void *sink, size_t trace, unsigned pcore, unsigned queue, const void *block, nx_error *err);

/* Per trace: the latest instruction record per (pcore, instruction), the open blocks. */
static int hold_setup(instruction_sink *s, const nx_process_ctx *ctx)
{
    s->limit = holdback_limit();
    s->held_cap = 1024;
    if (!(s->held = malloc(s->held_cap * sizeof *s->held)))
        return -1;
    if (!(s->traces = calloc(ctx->n_traces + 1, sizeof *s->traces)))
        return -1;
    s->n_traces = ctx->n_traces;
    for (size_t i = 0; i < ctx->n_traces; i++) {
        trace_state *t = &s->traces[i];
        t->n_instrs = ctx->traces[i].prog->n_instrs;
        if (!(t->last = calloc((size_t)ctx->traces[i].hdr.pcore_count * t->n_instrs + 1, sizeof *t->last)))
            return -1;
    }
    return nx_dma_blocks_init(&s->blocks, ctx, sizeof(open_block), complete_block, s);
}

static int instruction_open(const nx_process_ctx *ctx, void **state, nx_error *err)
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
    if (nx_frame_index_build(ctx->progs, ctx->n_progs, &s->frames, "Instruction", err) != 0) {
        instruction_sink_free(s);
        return -1;
    }
    if (values_build(s, ctx) != 0 || hold_setup(s, ctx) != 0) {
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

static held_row *held_at(instruction_sink *s, uint64_t seq)
{
    return &s->held[seq & (s->held_cap - 1)];
}

/* The held row a block's owner field names, or NULL when none or already written. */
static held_row *owner_row(instruction_sink *s, uint64_t owner)
{
    return owner > s->head ? held_at(s, owner - 1) : NULL;
}

static int write_row(instruction_sink *s, const held_row *h, nx_error *err)
{
    nx_row *r = &s->r;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, s->rc[RC_start_ts], h->start);
    nx_row_i64(r, s->rc[RC_end_ts], h->end);
    nx_row_i64(r, s->rc[RC_duration_ns], h->end - h->start);
    nx_row_i64(r, s->rc[RC_pcore_idx], h->pcore);
    nx_row_i64(r, s->rc[RC_id], h->id);
    if (h->crc) {
        nx_row_i64(r, s->rc[RC_crc_in], h->crc_in);
        nx_row_i64(r, s->rc[RC_crc_out], h->crc_out);
    }
    nx_row_i64(r, s->rc[RC_evt_wait_time_ns], h->evt_wait);
    if (h->dma_start != INT64_MAX) {
        nx_row_i64(r, s->rc[RC_dma_trigger_start_ts], h->dma_start);
        nx_row_i64(r, s->rc[RC_dma_trigger_end_ts], h->dma_end);
        nx_row_i64(r, s->rc[RC_dma_wait_time_ns], h->dma_start > h->trig_min ? h->dma_start - h->trig_min : 0);
    }
    nx_row_key(r, 0, h->key);
    return nx_row_end(r, err);
}

static int write_head(instruction_sink *s, nx_error *err)
{
    if (write_row(s, held_at(s, s->head), err) != 0)
        return -1;
    s->head++;
    return 0;
}

/* Writes the held rows, from the head, that can no longer change at time `now`. */
static int flush_ready(instruction_sink *s, int64_t now, nx_error *err)
{
    while (s->head < s->tail) {
        const held_row *h = held_at(s, s->head);
        if (h->end >= now || h->open_blocks > 0)
            return 0;
        if (write_head(s, err) != 0)
            return -1;
    }
    return 0;
}

/* Room for one more held row: the ring doubles up to the limit, then the head
 * is written early. */
static int hold_room(instruction_sink *s, nx_error *err)
{
    size_t n = (size_t)(s->tail - s->head);
    if (n >= s->limit) {
        s->early++;
        return write_head(s, err);
    }
    if (n < s->held_cap)
        return 0;
    size_t cap = s->held_cap * 2;
    held_row *v = malloc(cap * sizeof *v);
    if (!v) {
        snprintf(err->msg, sizeof err->msg, "Instruction: out of memory holding %zu rows back", n);
        return -1;
    }
    for (uint64_t q = s->head; q < s->tail; q++)
        v[q & (cap - 1)] = *held_at(s, q);
    free(s->held);
    s->held = v;
    s->held_cap = cap;
    return 0;
}

static int on_instruction(instruction_sink *s, const nx_device_event *ev, nx_error *err)
{
    const nx_trace_record *rec = ev->rec;
    const nx_device_trace *tr = ev->trace;
    if (hold_room(s, err) != 0)
        return -1;
    size_t idx = (size_t)(ev->instr - tr->prog->instrs);
    held_row *h = held_at(s, s->tail);
    *h = (held_row){
        .start = ev->start_ns,
        .end = ev->end_ns,
        .id = ev->id,
        .evt_wait = (int64_t)nx_trace_clock_ns(&tr->clock, rec->u.instr.evt_wait_ticks),
        .dma_start = INT64_MAX,
        .dma_end = INT64_MIN,
        .trig_min = INT64_MAX,
        .key = (uint32_t)(s->prog_base[tr->prog_index] + idx),
        .crc_in = rec->u.instr.crc_in,
        .crc_out = rec->u.instr.crc_out,
        .pcore = rec->pcore,
        .crc = (rec->u.instr.flags & NX_INSTR_FLAG_CRC) != 0,
    };
    trace_state *t = &s->traces[tr->index];
    t->last[(size_t)rec->pcore * t->n_instrs + idx] = ++s->tail;   /* sequence number + 1 */
    return 0;
}


/* A block is complete (dma_blocks.h): its owner has one open block less. */
static int complete_block(void *sink, size_t trace, unsigned pcore, unsigned queue, const void *block, nx_error *err)
{
    (void)trace, (void)pcore, (void)queue, (void)err;
    held_row *h = owner_row(sink, ((const open_block *)block)->owner);
    if (h)
        h->open_blocks--;
    return 0;
}

static int on_block(instruction_sink *s, const nx_device_event *ev, nx_error *err)
{
    const nx_trace_record *r = ev->rec;
    trace_state *t = &s->traces[ev->trace->index];
    open_block b = {.trig = ev->start_ns, .owner = 0};
    if (r->u.block.trigger_engine != NX_ENGINE_NONE && r->u.block.trigger_pc != NX_NO_PC) {
        const nx_program *g = ev->trace->prog;
        const nx_prog_instr *in = nx_program_find_instr(g, r->u.block.trigger_engine, r->u.block.trigger_pc);
        if (in) {
            uint64_t owner = t->last[(size_t)r->pcore * t->n_instrs + (size_t)(in - g->instrs)];
            held_row *h = owner_row(s, owner);
            if (h && h->end >= ev->start_ns) {
                b.owner = owner;
                h->open_blocks++;
            }
        }
    }
    return nx_dma_blocks_add(&s->blocks, ev, &b, err);
}

static int on_packet(instruction_sink *s, const nx_device_event *ev, nx_error *err)
{
    void *open;
    if (nx_dma_blocks_packet(&s->blocks, ev, &open, err) != 0)
        return -1;
    const open_block *b = open;   /* NULL: its block was completed by rule (b): not counted */
    held_row *h = b ? owner_row(s, b->owner) : NULL;
    if (!h)
        return 0;
    if (ev->start_ns < h->dma_start)
        h->dma_start = ev->start_ns;
    if (ev->end_ns > h->dma_end)
        h->dma_end = ev->end_ns;
    if (b->trig < h->trig_min)
        h->trig_min = b->trig;
    return 0;
}

static int instruction_event(void *state, const nx_device_event *ev, nx_error *err)
{
    instruction_sink *s = state;
    int64_t now = ev->start_ns;
    if (nx_dma_blocks_event(&s->blocks, ev, err) != 0)
        return -1;
    switch (ev->rec->kind) {
    case NX_REC_INSTRUCTION:
        if (flush_ready(s, now, err) != 0)
            return -1;
        return on_instruction(s, ev, err);
    case NX_REC_DMA_BLOCK: return on_block(s, ev, err);
    case NX_REC_DMA_PACKET: return on_packet(s, ev, err) != 0 ? -1 : flush_ready(s, now, err);
    default: return 0;   /* executions: the blocks' rule (b) only */
    }
}

static int instruction_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    instruction_sink *s = state;
    /* Rule (c): the capture ended, every block is complete and every held row final. */
    while (s->head < s->tail) {
        if (write_head(s, err) != 0) {
            nx_row_discard(&s->r);
            instruction_sink_free(s);
            return -1;
        }
    }
    if (s->early > 0 && ctx->warn && ctx->warn->fn) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "Instruction: %" PRIu64 " rows were written before their DMA blocks could all be seen "
                 "(hold-back limit %zu rows); their dma_trigger_start_ts, dma_trigger_end_ts and dma_wait_time_ns "
                 "may miss blocks or packets that came later",
                 s->early, s->limit);
        /* A device profile has one trace: name it, so the line says which core. */
        const char *where = ctx->n_traces == 1 ? ctx->traces[0].path : ctx->o ? ctx->o->capture_dir : "Instruction";
        ctx->warn->fn(ctx->warn->ctx, where, NX_CAP_NOWHERE, "Missing Data", msg);
    }
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
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION) | NX_KIND_BIT(NX_REC_DMA_BLOCK) | NX_KIND_BIT(NX_REC_DMA_PACKET) |
             NX_KIND_BIT(NX_REC_EXECUTION),
    .open = instruction_open,
    .event = instruction_event,
    .finish = instruction_finish,
    .abort = instruction_abort,
};
