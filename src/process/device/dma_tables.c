/*
 * dma_tables.c — the DMA tables and what depends on DMA blocks: DmaPacket,
 * DmaPacketAggregated, DmaUsage and HbmUsage (through dma_usage.h), DmaUsageSummary
 * (usage_summary.h, from the DmaUsage rows), PendingDma (pending_dma.h, from the
 * DmaPacketAggregated rows), TensorInfo and Flow. One sink, because all of them
 * follow the same blocks.
 *
 * Rules (also in docs/processing.md, "DMA tables"):
 * - DmaPacket: one row per dma_packet record, in the pipeline's start-time order.
 *   id = the pipeline's packet id; packet_aggregation_id = its block's
 *   DmaPacketAggregated.id; queue_name / queue_type / engine_idx (= dma_engine) /
 *   queue_idx from the program's DMA_QUEUES record; variable from the descriptor of
 *   its block; transfer_bytes = read_bytes + write_bytes; throughput =
 *   transfer_bytes * 1e9 / max(duration_ns, 1) in bytes per second (a zero-length
 *   packet counts as 1 ns). queue_type, queue_name, engine_idx and queue_idx are
 *   keyed columns (row.h) on the queue (key slot 0: the queue's index over all
 *   programs, program p's queues after those of programs 0..p-1), variable on the
 *   descriptor (slot 1, likewise; not set, so null, for a packet without an open
 *   block, and null for an empty variable): rows store keys, not values.
 * - DmaPacketAggregated: one row per dma_block record that received at least one
 *   packet (a block without packets was dropped by the hardware and is not
 *   written). start_ts = its first packet's start, end_ts = the latest end of its
 *   packets, byte columns = sums over its packets, throughput as for packets;
 *   queue columns from DMA_QUEUES; op, variable, source, dest, semaphore_id
 *   (= semaphore_label), modular_flow_function, access patterns, partitions,
 *   transpose fields (is_transpose_mode null when the descriptor says 0xFF),
 *   trigger, completion from its DMA_DESCRIPTORS record. A block is complete when
 *   (process/device/dma_blocks.h, shared with Instruction's dma_trigger_* columns)
 *   (a) a packet of a later block of the same (trace, pcore, queue) arrives (blocks
 *   of a queue complete in order), (b) the pipeline passes the end of the trace's
 *   current execution record and all packets seen so far of the block ended by
 *   then (an execution ends after its DMA work), or (c) the capture ends. Rows are
 *   written sorted by start_ts: a finished row waits in a reorder heap until no
 *   open block can start before it (watermark = min(current event start, earliest
 *   start of an open block that has packets)).
 *   A packet whose block was already completed by rule (b) (a packet after its
 *   execution's end) still gets its DmaPacket row; its block's row does not count it.
 * - TensorInfo: one row per program tensor and physical core (pcore 0 ..
 *   the largest pcore_count of the program's traces - 1), columns from TENSORS.
 *   load_to_sbuf_*: over the written DmaPacketAggregated rows of that pcore (all
 *   traces of the program) whose descriptor variable equals the tensor name and
 *   whose dest contains "[SB]": dma_count = number of blocks, total_size_bytes =
 *   sum of their write_bytes (bytes landed in SBUF), avg_size_bytes = total / count
 *   (integer division; null when count is 0), repeat_factor = total / size (null
 *   when size is absent or 0).
 * - Flow: in_table/out_table use the reference tool's names, "instruction" (an
 *   Instruction.id) and "dma_block" (a DmaPacketAggregated.id).
 *   (a) DMA_TRIGGER: for each written block whose dma_block record names a trigger
 *   (trigger_engine != 0xFF): in = the Instruction.id of the latest instruction
 *   record, dispatched before the dma_block record, on the same (trace, pcore,
 *   engine) with pc == trigger_pc (no edge when none ran); out = the block;
 *   gap_time = block start_ts - that instruction's end_ts. Written when the block
 *   completes.
 *   (b) FLOW_DEPENDENCE: for each instruction record whose program entry has a
 *   wait_semaphore S: in = the producer of S on the same (trace, pcore) with the
 *   latest end <= the instruction's start, among instructions whose
 *   signal_semaphore is S and DMA blocks whose descriptor's completion_semaphore is
 *   S (a block's end = the latest end of its packets seen so far); out = the
 *   instruction; gap_time = instruction start - producer end (>= 0). No edge when
 *   no producer ended by then. Up to NX_SEM_CANDIDATES producers still in flight
 *   are remembered per semaphore (more concurrent producers of one semaphore than
 *   that: the earliest-ending is forgotten).
 *
 * Memory: per trace, open blocks per (pcore, queue), one (id, end) per program
 * instruction and pcore (for trigger edges), a few producers per semaphore and
 * pcore; finished rows waiting for the watermark; never a per-event array.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/device/dma_blocks.h"
#include "process/device/dma_usage.h"
#include "process/device/pending_dma.h"
#include "process/device/reorder.h"
#include "process/row.h"

#define NX_SEM_CANDIDATES 8

/* ------------------------------------------------------------ state -- */

typedef struct open_block {
    nx_dma_open h;                   /* id: DmaPacketAggregated.id; end, packets (dma_blocks.h) */
    int64_t start, rd, wr;
    int64_t trig_id, trig_end;       /* triggering Instruction.id and its end, or -1 */
    uint32_t raw_block;              /* block_id of the record */
    uint32_t desc;
    uint32_t npk;
} open_block;


typedef struct sem_cand {
    int64_t end, id;
    uint8_t used, dma;
} sem_cand;

typedef struct desc_info {
    int32_t tensor;                  /* index into the program's TENSORS, or -1 */
    bool to_sbuf, hbm;
    size_t variable_len;
} desc_info;

/* Per queue, the strings every DmaPacket row repeats, with their lengths (rows
 * store them by reference: the programs outlive the tables). */
typedef struct queue_info {
    const char *type;
    size_t name_len, type_len;
} queue_info;

typedef struct trace_state {
    const nx_device_trace *t;
    unsigned pcores;
    size_t nq;
    int64_t *last_id, *last_end;     /* pcores x program instructions */
    sem_cand *sems;                  /* pcores x semaphores x NX_SEM_CANDIDATES */
} trace_state;

typedef struct prog_state {
    desc_info *descs;
    queue_info *queues;
    int64_t *tcount, *ttotal;        /* pcores x tensors */
    unsigned pcores;
    /* Per instruction: the semaphore it waits on and the one it signals, each
     * NX_NO_SEMAPHORE when none or out of range. Every instruction record needs
     * them; read from the program's entries (hundreds of bytes each, megabytes in
     * all) they cost a cache miss per record, from here 4 bytes. */
    uint16_t (*sems)[2];
} prog_state;

/* A finished block waiting for the watermark. */
typedef struct agg_item {
    int64_t id, start, end, rd, wr;
    uint32_t trace, raw_block, desc;
    uint16_t queue;
    uint8_t pcore;
} agg_item;

#define PKT_COLS(X)                                                                                    \
    X(start_ts) X(end_ts) X(duration_ns) X(pcore_idx) X(id) X(packet_idx) X(packet_aggregation_id)     \
    X(engine_idx) X(read_bytes) X(write_bytes) X(transfer_bytes) X(throughput) X(queue_type) X(variable) \
    X(queue_name) X(queue_idx) X(crc)
#define AGG_COLS(X)                                                                                     \
    X(start_ts) X(end_ts) X(duration_ns) X(id) X(pcore_idx) X(block_id) X(queue_idx) X(queue_name)       \
    X(queue_type) X(op) X(variable) X(read_bytes) X(write_bytes) X(transfer_bytes) X(throughput) X(source) \
    X(dest) X(semaphore_id) X(modular_flow_function) X(read_sbuf_partitions) X(read_num_sbuf_partitions)  \
    X(read_shape) X(read_offset) X(read_steps) X(write_sbuf_partitions) X(write_num_sbuf_partitions)      \
    X(write_shape) X(write_offset) X(write_steps) X(is_transpose_mode) X(transpose_element_size)         \
    X(transpose_shape) X(transpose_from_shape) X(transpose_to_shape) X(transpose_unroll_factor) X(trigger) \
    X(completion)
#define FLOW_COLS(X) X(in_id) X(out_id) X(in_table) X(out_table) X(dependency_type) X(gap_time)

enum {
#define X(n) PC_##n,
    PKT_COLS(X)
#undef X
    PC_COUNT
};
enum {
#define X(n) AC_##n,
    AGG_COLS(X)
#undef X
    AC_COUNT
};
enum {
#define X(n) FC_##n,
    FLOW_COLS(X)
#undef X
    FC_COUNT
};

typedef struct dma_sink {
    const nx_process_ctx *ctx;
    trace_state *traces;
    size_t n_traces;
    prog_state *progs;
    nx_row pkt, agg, flow;
    size_t pc[PC_COUNT], ac[AC_COUNT], fc[FC_COUNT];
    nx_usage dma_usage, hbm_usage;  /* with the two tables derived from them: */
    nx_usage_summary usage_sum;      /* DmaUsageSummary, fed by dma_usage */
    nx_pending_dma pending;          /* PendingDma, fed every DmaPacketAggregated row */
    bool usage_open;                 /* the four above are open */
    nx_reorder q;                    /* agg_item by start */
    int64_t min_open;                /* earliest start of an open block with packets; INT64_MAX none */
    bool min_open_valid;
    nx_dma_blocks blocks;            /* the open blocks (open_block) */
    struct pkt_keys {                /* DmaPacket's keyed columns, per queue / descriptor of all programs */
        size_t *queue_base, *desc_base;   /* per program: key of its first queue / descriptor */
        nxpq_str *q_type, *q_name, *d_variable;
        int64_t *q_engine, *q_idx;
    } pk;
} dma_sink;

enum { PK_QUEUE, PK_DESC };         /* DmaPacket's key slots */

static int pkt_keys_open(dma_sink *s, const nx_process_ctx *ctx, nx_error *err);
static int flow_keys_open(dma_sink *s, nx_error *err);

/* ------------------------------------------------------------ setup -- */

static int complete_block(void *sink, size_t ti, unsigned pcore, unsigned queue, const void *block, nx_error *err);

static void free_sink(dma_sink *s)
{
    if (!s)
        return;
    free(s->pk.queue_base);
    free(s->pk.desc_base);
    free(s->pk.q_type);
    free(s->pk.q_name);
    free(s->pk.d_variable);
    free(s->pk.q_engine);
    free(s->pk.q_idx);
    nx_dma_blocks_free(&s->blocks);
    for (size_t i = 0; i < s->n_traces && s->traces; i++) {
        trace_state *t = &s->traces[i];
        free(t->last_id);
        free(t->last_end);
        free(t->sems);
    }
    free(s->traces);
    for (size_t i = 0; s->progs && i < s->ctx->n_progs; i++) {
        free(s->progs[i].descs);
        free(s->progs[i].queues);
        free(s->progs[i].tcount);
        free(s->progs[i].ttotal);
        free(s->progs[i].sems);
    }
    free(s->progs);
    nx_reorder_free(&s->q);
    free(s);
}

static int oom(nx_error *err, const char *what)
{
    snprintf(err->msg, sizeof err->msg, "DmaPacketAggregated: out of memory (%s)", what);
    return -1;
}

static int setup_state(dma_sink *s, const nx_process_ctx *ctx, nx_error *err)
{
    s->progs = calloc(ctx->n_progs + 1, sizeof *s->progs);
    s->traces = calloc(ctx->n_traces + 1, sizeof *s->traces);
    if (!s->progs || !s->traces)
        return oom(err, "state");
    s->n_traces = ctx->n_traces;
    for (size_t i = 0; i < ctx->n_progs; i++) {
        const nx_program *g = ctx->progs[i];
        prog_state *p = &s->progs[i];
        p->pcores = ctx->prog_pcores[i];
        p->descs = calloc(g->n_descs + 1, sizeof *p->descs);
        p->queues = calloc(g->n_queues + 1, sizeof *p->queues);
        p->tcount = calloc((size_t)p->pcores * g->n_tensors + 1, sizeof *p->tcount);
        p->ttotal = calloc((size_t)p->pcores * g->n_tensors + 1, sizeof *p->ttotal);
        p->sems = calloc(g->n_instrs + 1, sizeof *p->sems);
        if (!p->descs || !p->queues || !p->tcount || !p->ttotal || !p->sems)
            return oom(err, "program");
        for (size_t k = 0; k < g->n_instrs; k++) {
            uint16_t w = g->instrs[k].wait_semaphore, sig = g->instrs[k].signal_semaphore;
            p->sems[k][0] = w < g->n_semaphores ? w : NX_NO_SEMAPHORE;
            p->sems[k][1] = sig < g->n_semaphores ? sig : NX_NO_SEMAPHORE;
        }
        for (size_t q = 0; q < g->n_queues; q++) {
            const char *t = nx_dma_queue_type_name(g->queues[q].type);
            p->queues[q].type = t ? t : "unknown";
            p->queues[q].type_len = strlen(p->queues[q].type);
            p->queues[q].name_len = strlen(g->queues[q].name);
        }
        for (size_t d = 0; d < g->n_descs; d++) {
            const nx_prog_dma_desc *x = &g->descs[d];
            p->descs[d].tensor = -1;
            for (size_t k = 0; k < g->n_tensors; k++) {
                if (strcmp(g->tensors[k].name, x->variable) == 0) {
                    p->descs[d].tensor = (int32_t)k;
                    break;
                }
            }
            p->descs[d].variable_len = strlen(x->variable);
            p->descs[d].to_sbuf = strstr(x->dest, "[SB]") != NULL;
            p->descs[d].hbm = strstr(x->source, "HBM") != NULL || strstr(x->dest, "HBM") != NULL;
        }
    }
    for (size_t i = 0; i < ctx->n_traces; i++) {
        trace_state *t = &s->traces[i];
        const nx_program *g = ctx->traces[i].prog;
        t->t = &ctx->traces[i];
        t->pcores = t->t->hdr.pcore_count;
        t->nq = g->n_queues;
        size_t ni = (size_t)t->pcores * g->n_instrs, nsem = (size_t)t->pcores * g->n_semaphores;
        t->last_id = malloc((ni + 1) * sizeof *t->last_id);
        t->last_end = malloc((ni + 1) * sizeof *t->last_end);
        t->sems = calloc(nsem * NX_SEM_CANDIDATES + 1, sizeof *t->sems);
        if (!t->last_id || !t->last_end || !t->sems)
            return oom(err, t->t->path);
        for (size_t k = 0; k < ni; k++)
            t->last_id[k] = -1, t->last_end[k] = 0;
    }
    s->min_open = INT64_MAX;
    s->min_open_valid = true;
    if (nx_dma_blocks_init(&s->blocks, ctx, sizeof(open_block), complete_block, s) != 0)
        return oom(err, "open blocks");
    return 0;
}

/* DmaUsage, HbmUsage and the tables derived from the DMA rows (DmaUsageSummary,
 * PendingDma): all open, or none. */
static int usage_open(dma_sink *s, const nx_process_ctx *ctx, nx_error *err)
{
    if (nx_usage_open(&s->dma_usage, &ctx->dest, "DmaUsage", err) != 0)
        return -1;
    if (nx_usage_open(&s->hbm_usage, &ctx->dest, "HbmUsage", err) != 0)
        goto fail_dma;
    if (nx_usage_summary_open(&s->usage_sum, &ctx->dest, err) != 0)
        goto fail_hbm;
    if (nx_pending_open(&s->pending, &ctx->dest, err) != 0) {
        nx_usage_summary_discard(&s->usage_sum);
        goto fail_hbm;
    }
    s->dma_usage.summary = &s->usage_sum;
    s->usage_open = true;
    return 0;
fail_hbm:
    nx_usage_discard(&s->hbm_usage);
fail_dma:
    nx_usage_discard(&s->dma_usage);
    return -1;
}

static void usage_discard(dma_sink *s)
{
    if (!s->usage_open)
        return;
    s->usage_open = false;
    nx_usage_discard(&s->dma_usage);
    nx_usage_discard(&s->hbm_usage);
    nx_usage_summary_discard(&s->usage_sum);
    nx_pending_discard(&s->pending);
}

/* Closes the four (after the last DmaPacketAggregated row); on a failure
 * discards the ones not closed yet. */
static int usage_close(dma_sink *s, unsigned *tables, nx_error *err)
{
    s->usage_open = false;
    if (nx_usage_finish(&s->dma_usage, tables, err) != 0)
        goto fail_hbm;
    if (nx_usage_finish(&s->hbm_usage, tables, err) != 0)
        goto fail_sum;
    if (nx_usage_summary_finish(&s->usage_sum, tables, err) != 0)
        goto fail_pending;
    return nx_pending_finish(&s->pending, tables, err);
fail_hbm:
    nx_usage_discard(&s->hbm_usage);
fail_sum:
    nx_usage_summary_discard(&s->usage_sum);
fail_pending:
    nx_pending_discard(&s->pending);
    return -1;
}

static int dma_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    static const char *const pnames[] = {
#define X(n) #n,
        PKT_COLS(X)
#undef X
    };
    static const char *const anames[] = {
#define X(n) #n,
        AGG_COLS(X)
#undef X
    };
    static const char *const fnames[] = {
#define X(n) #n,
        FLOW_COLS(X)
#undef X
    };
    *state = NULL;
    bool any_queue = false;
    for (size_t i = 0; i < ctx->n_progs; i++)
        any_queue = any_queue || ctx->progs[i]->n_queues > 0 || ctx->progs[i]->n_tensors > 0 ||
                    ctx->progs[i]->n_semaphores > 0;
    if (ctx->n_traces == 0 || !any_queue)
        return 0;   /* nothing to do: finish() sees NULL */
    dma_sink *s = calloc(1, sizeof *s);
    if (!s)
        return oom(err, "sink");
    s->ctx = ctx;
    nx_reorder_init(&s->q, sizeof(agg_item));
    if (setup_state(s, ctx, err) != 0)
        goto fail;
    if (nx_row_open(&s->pkt, &ctx->dest, "DmaPacket", err) != 0)
        goto fail;
    if (nx_row_open(&s->agg, &ctx->dest, "DmaPacketAggregated", err) != 0)
        goto fail_pkt;
    if (nx_row_open(&s->flow, &ctx->dest, "Flow", err) != 0)
        goto fail_agg;
    if (usage_open(s, ctx, err) != 0)
        goto fail_flow;
    for (size_t i = 0; i < PC_COUNT; i++)
        s->pc[i] = nx_row_col(&s->pkt, pnames[i]);
    for (size_t i = 0; i < AC_COUNT; i++)
        s->ac[i] = nx_row_col(&s->agg, anames[i]);
    for (size_t i = 0; i < FC_COUNT; i++)
        s->fc[i] = nx_row_col(&s->flow, fnames[i]);
    if (pkt_keys_open(s, ctx, err) != 0 || flow_keys_open(s, err) != 0) {
        usage_discard(s);
        goto fail_flow;
    }
    *state = s;
    return 0;
fail_flow:
    nx_row_discard(&s->flow);
fail_agg:
    nx_row_discard(&s->agg);
fail_pkt:
    nx_row_discard(&s->pkt);
fail:
    free_sink(s);
    return -1;
}

/* DmaPacket's keyed columns: their values per queue and per descriptor. */
static int pkt_keys_open(dma_sink *s, const nx_process_ctx *ctx, nx_error *err)
{
    struct pkt_keys *k = &s->pk;
    size_t nq = 0, nd = 0;
    k->queue_base = calloc(ctx->n_progs + 1, sizeof *k->queue_base);
    k->desc_base = calloc(ctx->n_progs + 1, sizeof *k->desc_base);
    if (!k->queue_base || !k->desc_base)
        return oom(err, "DmaPacket keys");
    for (size_t p = 0; p < ctx->n_progs; p++) {
        k->queue_base[p] = nq;
        k->desc_base[p] = nd;
        nq += ctx->progs[p]->n_queues;
        nd += ctx->progs[p]->n_descs;
    }
    k->q_type = malloc((nq + 1) * sizeof *k->q_type);
    k->q_name = malloc((nq + 1) * sizeof *k->q_name);
    k->q_engine = malloc((nq + 1) * sizeof *k->q_engine);
    k->q_idx = malloc((nq + 1) * sizeof *k->q_idx);
    k->d_variable = malloc((nd + 1) * sizeof *k->d_variable);
    if (!k->q_type || !k->q_name || !k->q_engine || !k->q_idx || !k->d_variable)
        return oom(err, "DmaPacket keys");
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        const prog_state *ps = &s->progs[p];
        for (size_t q = 0; q < g->n_queues; q++) {
            size_t key = k->queue_base[p] + q;
            k->q_type[key] = (nxpq_str){ps->queues[q].type, ps->queues[q].type_len};
            k->q_name[key] = (nxpq_str){g->queues[q].name, ps->queues[q].name_len};
            k->q_engine[key] = g->queues[q].dma_engine;
            k->q_idx[key] = (int64_t)q;
        }
        for (size_t d = 0; d < g->n_descs; d++)
            k->d_variable[k->desc_base[p] + d] = ps->descs[d].variable_len > 0
                                                     ? (nxpq_str){g->descs[d].variable, ps->descs[d].variable_len}
                                                     : (nxpq_str){NULL, 0};
    }
    nx_row *w = &s->pkt;
    if (nx_row_keyed_str(w, PK_QUEUE, s->pc[PC_queue_type], k->q_type, nq, err) != 0 ||
        nx_row_keyed_str(w, PK_QUEUE, s->pc[PC_queue_name], k->q_name, nq, err) != 0 ||
        nx_row_keyed_i64(w, PK_QUEUE, s->pc[PC_engine_idx], k->q_engine, nq, err) != 0 ||
        nx_row_keyed_i64(w, PK_QUEUE, s->pc[PC_queue_idx], k->q_idx, nq, err) != 0 ||
        nx_row_keyed_str(w, PK_DESC, s->pc[PC_variable], k->d_variable, nd, err) != 0)
        return -1;
    return 0;
}

/* ------------------------------------------------------------ rows -- */

static double rate_bps(int64_t bytes, int64_t dur)
{
    return (double)bytes * 1e9 / (double)(dur > 0 ? dur : 1);
}

/* Flow's text columns are keyed (row.h) on the kind of edge: the row stores the
 * kind, not three strings to hash. */
enum { FLOW_TRIGGER, FLOW_FROM_INSTRUCTION, FLOW_FROM_DMA, FLOW_KINDS };
static const nxpq_str FLOW_IN_TABLE[FLOW_KINDS] = {{"instruction", 11}, {"instruction", 11}, {"dma_block", 9}};
static const nxpq_str FLOW_OUT_TABLE[FLOW_KINDS] = {{"dma_block", 9}, {"instruction", 11}, {"instruction", 11}};
static const nxpq_str FLOW_TYPE[FLOW_KINDS] = {{"DMA_TRIGGER", 11}, {"FLOW_DEPENDENCE", 15}, {"FLOW_DEPENDENCE", 15}};

static int flow_keys_open(dma_sink *s, nx_error *err)
{
    nx_row *r = &s->flow;
    return nx_row_keyed_str(r, 0, s->fc[FC_in_table], FLOW_IN_TABLE, FLOW_KINDS, err) != 0 ||
                   nx_row_keyed_str(r, 0, s->fc[FC_out_table], FLOW_OUT_TABLE, FLOW_KINDS, err) != 0 ||
                   nx_row_keyed_str(r, 0, s->fc[FC_dependency_type], FLOW_TYPE, FLOW_KINDS, err) != 0
               ? -1
               : 0;
}

static int write_flow(dma_sink *s, int64_t in_id, int64_t out_id, unsigned kind, int64_t gap, nx_error *err)
{
    nx_row *r = &s->flow;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, s->fc[FC_in_id], in_id);
    nx_row_i64(r, s->fc[FC_out_id], out_id);
    nx_row_key(r, 0, kind);
    nx_row_i64(r, s->fc[FC_gap_time], gap);
    return nx_row_end(r, err);
}

static int write_agg(dma_sink *s, const agg_item *b, nx_error *err)
{
    const nx_program *g = s->traces[b->trace].t->prog;
    const nx_prog_queue *qu = &g->queues[b->queue];
    const nx_prog_dma_desc *d = &g->descs[b->desc];
    nx_row *r = &s->agg;
    const size_t *c = s->ac;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, c[AC_start_ts], b->start);
    nx_row_i64(r, c[AC_end_ts], b->end);
    nx_row_i64(r, c[AC_duration_ns], b->end - b->start);
    nx_row_i64(r, c[AC_id], b->id);
    nx_row_i64(r, c[AC_pcore_idx], b->pcore);
    /* block_id is INT32 in the schema: the record's u32 as its two's-complement bits. */
    nx_row_i64(r, c[AC_block_id], (int32_t)b->raw_block);
    nx_row_i64(r, c[AC_queue_idx], b->queue);
    nx_row_str(r, c[AC_queue_name], qu->name);
    nx_row_opt_str(r, c[AC_queue_type], nx_dma_queue_type_name(qu->type));
    nx_row_str(r, c[AC_op], d->op);
    nx_row_str(r, c[AC_variable], d->variable);
    nx_row_i64(r, c[AC_read_bytes], b->rd);
    nx_row_i64(r, c[AC_write_bytes], b->wr);
    nx_row_i64(r, c[AC_transfer_bytes], b->rd + b->wr);
    nx_row_num(r, c[AC_throughput], rate_bps(b->rd + b->wr, b->end - b->start));
    nx_row_str(r, c[AC_source], d->source);
    nx_row_str(r, c[AC_dest], d->dest);
    nx_row_str(r, c[AC_semaphore_id], d->semaphore_label);
    nx_row_opt_str(r, c[AC_modular_flow_function], d->modular_flow_function);
    nx_row_str(r, c[AC_read_sbuf_partitions], d->read_sbuf_partitions);
    nx_row_i64(r, c[AC_read_num_sbuf_partitions], (int32_t)d->read_num_sbuf_partitions);
    nx_row_str(r, c[AC_read_shape], d->read_shape);
    nx_row_str(r, c[AC_read_offset], d->read_offset);
    nx_row_str(r, c[AC_read_steps], d->read_steps);
    nx_row_str(r, c[AC_write_sbuf_partitions], d->write_sbuf_partitions);
    nx_row_i64(r, c[AC_write_num_sbuf_partitions], (int32_t)d->write_num_sbuf_partitions);
    nx_row_str(r, c[AC_write_shape], d->write_shape);
    nx_row_str(r, c[AC_write_offset], d->write_offset);
    nx_row_str(r, c[AC_write_steps], d->write_steps);
    if (d->is_transpose != 0xFF)
        nx_row_bool(r, c[AC_is_transpose_mode], d->is_transpose != 0);
    nx_row_opt_str(r, c[AC_transpose_element_size], d->transpose_element_size);
    nx_row_opt_str(r, c[AC_transpose_shape], d->transpose_shape);
    nx_row_opt_str(r, c[AC_transpose_from_shape], d->transpose_from_shape);
    nx_row_opt_str(r, c[AC_transpose_to_shape], d->transpose_to_shape);
    nx_row_opt_str(r, c[AC_transpose_unroll_factor], d->transpose_unroll_factor);
    nx_row_opt_i64(r, c[AC_trigger], d->trigger);
    nx_row_opt_i64(r, c[AC_completion], d->completion);
    if (nx_row_end(r, err) != 0)
        return -1;
    return nx_pending_add(&s->pending, b->pcore, b->start, b->end, err);
}

/* ------------------------------------------------------------ blocks -- */

static void recompute_min_open(dma_sink *s)
{
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < s->blocks.n_traces; i++) {
        const nx_dma_trace_blocks *t = &s->blocks.traces[i];
        for (size_t f = 0; f < (size_t)t->pcores * t->nq; f++) {
            const nx_ring *q = &t->fifos[f];
            for (size_t k = 0; k < q->n; k++) {
                const open_block *b = nx_ring_at(q, k);
                if (b->h.npk > 0 && b->start < m)
                    m = b->start;
            }
        }
    }
    s->min_open = m;
    s->min_open_valid = true;
}

/* Writes the finished rows no open block can precede. */
static int drain(dma_sink *s, int64_t now, nx_error *err)
{
    if (nx_reorder_top_key(&s->q) > now)
        return 0;
    if (!s->min_open_valid)
        recompute_min_open(s);
    int64_t w = now < s->min_open ? now : s->min_open;
    while (nx_reorder_ready(&s->q, w)) {
        if (write_agg(s, nx_reorder_top(&s->q), err) != 0)
            return -1;
        nx_reorder_pop(&s->q);
    }
    return 0;
}

/* A block of trace ti is complete (dma_blocks.h): queue its row. */
static int complete_block(void *sink, size_t ti, unsigned pcore, unsigned queue, const void *block, nx_error *err)
{
    dma_sink *s = sink;
    trace_state *t = &s->traces[ti];
    const open_block b = *(const open_block *)block;
    if (b.h.npk == 0)
        return 0;   /* dropped block: the reader warned; no row */
    if (b.start <= s->min_open)
        s->min_open_valid = false;
    agg_item it = {b.h.id, b.start, b.h.end, b.rd, b.wr, (uint32_t)ti, b.raw_block, b.desc,
                   (uint16_t)queue, (uint8_t)pcore};
    if (nx_reorder_push(&s->q, b.start, &it) != 0)
        return oom(err, "finished blocks");
    prog_state *p = &s->progs[t->t->prog_index];
    const desc_info *di = &p->descs[b.desc];
    if (di->to_sbuf && di->tensor >= 0 && pcore < p->pcores) {
        size_t k = (size_t)pcore * t->t->prog->n_tensors + (size_t)di->tensor;
        p->tcount[k]++;
        p->ttotal[k] += b.wr;
    }
    if (b.trig_id >= 0)
        return write_flow(s, b.trig_id, b.h.id, FLOW_TRIGGER, b.start - b.trig_end, err);
    return 0;
}

/* ------------------------------------------------------------ semaphores -- */

static sem_cand *sem_slots(trace_state *t, unsigned pcore, uint16_t sem)
{
    return &t->sems[((size_t)pcore * t->t->prog->n_semaphores + sem) * NX_SEM_CANDIDATES];
}

/* Remembers (or, for a DMA block seen before, updates) a producer of a semaphore. */
static void sem_offer(sem_cand *c, bool dma, int64_t id, int64_t end)
{
    int free_slot = -1, low = 0;
    for (int i = 0; i < NX_SEM_CANDIDATES; i++) {
        if (!c[i].used) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (dma && c[i].dma && c[i].id == id) {
            if (end > c[i].end)
                c[i].end = end;
            return;
        }
        if (!c[low].used || c[i].end < c[low].end)
            low = i;
    }
    int at = free_slot >= 0 ? free_slot : low;
    c[at] = (sem_cand){end, id, 1, dma};
}

/* The producer with the latest end <= t; forgets the others that ended by then. */
static const sem_cand *sem_pick(sem_cand *c, int64_t t)
{
    int best = -1;
    for (int i = 0; i < NX_SEM_CANDIDATES; i++) {
        if (!c[i].used || c[i].end > t)
            continue;
        if (best < 0 || c[i].end > c[best].end || (c[i].end == c[best].end && c[i].id > c[best].id))
            best = i;
    }
    if (best < 0)
        return NULL;
    for (int i = 0; i < NX_SEM_CANDIDATES; i++)
        if (i != best && c[i].used && c[i].end <= t)
            c[i].used = 0;
    return &c[best];
}

/* ------------------------------------------------------------ events -- */

static int on_instruction(dma_sink *s, trace_state *t, const nx_device_event *ev, nx_error *err)
{
    const nx_program *g = t->t->prog;
    const nx_trace_record *r = ev->rec;
    size_t i = (size_t)(ev->instr - g->instrs), k = (size_t)r->pcore * g->n_instrs + i;
    const uint16_t *sem = s->progs[t->t->prog_index].sems[i];   /* wait, signal */
    t->last_id[k] = ev->id;
    t->last_end[k] = ev->end_ns;
    if (sem[0] != NX_NO_SEMAPHORE) {
        const sem_cand *p = sem_pick(sem_slots(t, r->pcore, sem[0]), ev->start_ns);
        if (p && write_flow(s, p->id, ev->id, p->dma ? FLOW_FROM_DMA : FLOW_FROM_INSTRUCTION, ev->start_ns - p->end,
                            err) != 0)
            return -1;
    }
    if (sem[1] != NX_NO_SEMAPHORE)
        sem_offer(sem_slots(t, r->pcore, sem[1]), false, ev->id, ev->end_ns);
    return 0;
}

static int on_block(dma_sink *s, trace_state *t, const nx_device_event *ev, nx_error *err)
{
    (void)s;
    const nx_program *g = t->t->prog;
    const nx_trace_record *r = ev->rec;
    open_block b = {.trig_id = -1, .trig_end = -1, .raw_block = r->u.block.block_id, .desc = r->u.block.descriptor};
    if (r->u.block.trigger_engine != NX_ENGINE_NONE && r->u.block.trigger_pc != NX_NO_PC) {
        const nx_prog_instr *in = nx_program_find_instr(g, r->u.block.trigger_engine, r->u.block.trigger_pc);
        if (in) {
            size_t k = (size_t)r->pcore * g->n_instrs + (size_t)(in - g->instrs);
            b.trig_id = t->last_id[k];
            b.trig_end = t->last_end[k];
        }
    }
    return nx_dma_blocks_add(&s->blocks, ev, &b, err);
}

static int on_packet(dma_sink *s, size_t ti, const nx_device_event *ev, nx_error *err)
{
    trace_state *t = &s->traces[ti];
    const nx_program *g = t->t->prog;
    const nx_trace_record *r = ev->rec;
    void *open;
    if (nx_dma_blocks_packet(&s->blocks, ev, &open, err) != 0)
        return -1;
    open_block *b = open;   /* the packet is counted in b->h already */
    int64_t rd = r->u.packet.read_bytes, wr = r->u.packet.write_bytes;
    const nx_prog_dma_desc *d = NULL;
    if (b) {
        if (b->h.npk == 1) {
            b->start = ev->start_ns;
            if (ev->start_ns < s->min_open)
                s->min_open = ev->start_ns;
        }
        b->rd += rd;
        b->wr += wr;
        d = &g->descs[b->desc];
        if (d->completion_semaphore != NX_NO_SEMAPHORE && d->completion_semaphore < g->n_semaphores)
            sem_offer(sem_slots(t, r->pcore, d->completion_semaphore), true, b->h.id, b->h.end);
    }
    const prog_state *ps = &s->progs[t->t->prog_index];
    nx_row *w = &s->pkt;
    const size_t *c = s->pc;
    int64_t dur = ev->end_ns - ev->start_ns;
    if (nx_row_begin(w, err) != 0)
        return -1;
    nx_row_i64(w, c[PC_start_ts], ev->start_ns);
    nx_row_i64(w, c[PC_end_ts], ev->end_ns);
    nx_row_i64(w, c[PC_duration_ns], dur);
    nx_row_i64(w, c[PC_pcore_idx], r->pcore);
    nx_row_i64(w, c[PC_id], ev->id);
    nx_row_i64(w, c[PC_packet_idx], r->u.packet.packet_idx);
    nx_row_i64(w, c[PC_packet_aggregation_id], ev->block_id);
    nx_row_i64(w, c[PC_read_bytes], rd);
    nx_row_i64(w, c[PC_write_bytes], wr);
    nx_row_i64(w, c[PC_transfer_bytes], rd + wr);
    nx_row_num(w, c[PC_throughput], rate_bps(rd + wr, dur));
    nx_row_key(w, PK_QUEUE, (uint32_t)(s->pk.queue_base[t->t->prog_index] + r->u.packet.queue));
    if (d)
        nx_row_key(w, PK_DESC, (uint32_t)(s->pk.desc_base[t->t->prog_index] + b->desc));
    nx_row_i64(w, c[PC_crc], r->u.packet.crc);
    if (nx_row_end(w, err) != 0)
        return -1;
    if (nx_usage_add(&s->dma_usage, r->pcore, ev->start_ns, ev->end_ns, rd + wr, err) != 0)
        return -1;
    if (d && ps->descs[b->desc].hbm &&
        nx_usage_add(&s->hbm_usage, r->pcore, ev->start_ns, ev->end_ns, rd + wr, err) != 0)
        return -1;
    return 0;
}

static int dma_event(void *state, const nx_device_event *ev, nx_error *err)
{
    dma_sink *s = state;
    if (!s)
        return 0;
    size_t ti = ev->trace->index;
    trace_state *t = &s->traces[ti];
    if (nx_dma_blocks_event(&s->blocks, ev, err) != 0)
        return -1;
    int rc = 0;
    switch (ev->rec->kind) {
    case NX_REC_INSTRUCTION: rc = on_instruction(s, t, ev, err); break;
    case NX_REC_DMA_BLOCK: rc = on_block(s, t, ev, err); break;
    case NX_REC_DMA_PACKET: rc = on_packet(s, ti, ev, err); break;
    default: break;   /* executions: the blocks' rule (b) only */
    }
    if (rc != 0)
        return -1;
    return drain(s, ev->start_ns, err);
}

/* ------------------------------------------------------------ finish -- */

static int write_tensor_info(dma_sink *s, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "TensorInfo", err) != 0)
        return -1;
    size_t c_name = nx_row_col(&r, "variable_name"), c_type = nx_row_col(&r, "type"),
           c_format = nx_row_col(&r, "format"), c_shape = nx_row_col(&r, "shape"), c_size = nx_row_col(&r, "size"),
           c_node = nx_row_col(&r, "node"), c_pcore = nx_row_col(&r, "pcore_idx"),
           c_avg = nx_row_col(&r, "load_to_sbuf_avg_size_bytes"),
           c_total = nx_row_col(&r, "load_to_sbuf_total_size_bytes"),
           c_count = nx_row_col(&r, "load_to_sbuf_dma_count"),
           c_rep = nx_row_col(&r, "load_to_sbuf_repeat_factor");
    for (size_t i = 0; i < ctx->n_progs; i++) {
        const nx_program *g = ctx->progs[i];
        const prog_state *p = &s->progs[i];
        for (unsigned pc = 0; pc < p->pcores; pc++) {
            for (size_t k = 0; k < g->n_tensors; k++) {
                const nx_prog_tensor *x = &g->tensors[k];
                int64_t n = p->tcount[(size_t)pc * g->n_tensors + k], tot = p->ttotal[(size_t)pc * g->n_tensors + k];
                if (nx_row_begin(&r, err) != 0)
                    goto fail;
                nx_row_opt_str(&r, c_name, x->name);
                nx_row_opt_str(&r, c_type, x->type);
                nx_row_opt_str(&r, c_format, x->format);
                nx_row_opt_str(&r, c_shape, x->shape);
                nx_row_opt_i64(&r, c_size, x->size);
                nx_row_opt_i64(&r, c_node, x->node);
                nx_row_i64(&r, c_pcore, pc);
                nx_row_i64(&r, c_count, n);
                nx_row_i64(&r, c_total, tot);
                if (n > 0)
                    nx_row_i64(&r, c_avg, tot / n);
                if (x->size > 0)
                    nx_row_num(&r, c_rep, (double)tot / (double)x->size);
                if (nx_row_end(&r, err) != 0)
                    goto fail;
            }
        }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static void dma_abort(void *state)
{
    dma_sink *s = state;
    if (!s)
        return;
    nx_row_discard(&s->pkt);
    nx_row_discard(&s->agg);
    nx_row_discard(&s->flow);
    usage_discard(s);
    free_sink(s);
}

static int dma_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    dma_sink *s = state;
    if (!s)
        return 0;
    /* Rule (c): the capture ended, every open block is complete. */
    if (nx_dma_blocks_finish(&s->blocks, err) != 0)
        goto fail;
    s->min_open = INT64_MAX;
    s->min_open_valid = true;
    if (drain(s, INT64_MAX, err) != 0)
        goto fail;
    if (usage_close(s, tables, err) != 0)
        goto fail;
    if (nx_row_close(&s->pkt, true, tables, err) != 0 || nx_row_close(&s->agg, true, tables, err) != 0 ||
        nx_row_close(&s->flow, true, tables, err) != 0 || write_tensor_info(s, ctx, tables, err) != 0)
        goto fail;
    free_sink(s);
    return 0;
fail:
    dma_abort(s);
    return -1;
}

const nx_device_sink nx_sink_dma_tables = {
    .name = "DMA tables",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION) | NX_KIND_BIT(NX_REC_DMA_BLOCK) | NX_KIND_BIT(NX_REC_DMA_PACKET) |
             NX_KIND_BIT(NX_REC_EXECUTION),
    .open = dma_open,
    .event = dma_event,
    .finish = dma_finish,
    .abort = dma_abort,
};
