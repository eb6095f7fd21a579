/*
 * summary_table.c — the Summary table: one row that sums up the whole device
 * profile (time, FLOPs, DMA, memory traffic, engine and collective activity).
 *
 * Vocabulary (docs/processing.md, "Activity, summaries and roll-ups"):
 *   wall_ns    = max over traces of last_ns - min over traces of first_ns
 *                (first/last: earliest start and latest end of any record);
 *   trace_ns   = sum over traces of (last_ns - first_ns);
 *   lane_ns    = sum over traces of (last_ns - first_ns) x the trace's pcore_count
 *                (the time every physical core was under observation);
 *   union(X)   = length of the union of the intervals X, computed per lane
 *                (engines, DMA: lane = (trace, pcore)) or per trace (collectives,
 *                total activity) and summed; intervals merge on overlap or touch;
 *   peak_flops = 2 x tensor_rows x tensor_cols x tensor_clock_hz (FLOP/s of one
 *                physical core), from the HARDWARE section of the first trace's
 *                program; so are neuroncore_clock_hz and hbm_ddr_bandwidth;
 *   static DMA = packets on queues of every DmaQueueType but software_dynamic
 *                and hardware_dynamic; dynamic = those two.
 *   A "DMA transfer" is a DMA block (one DmaPacketAggregated row): its span is
 *   first packet start .. last packet end, its bytes the sum of its packets'
 *   read_bytes + write_bytes.
 *
 * Fields (times in seconds as the catalogue says; s(x) = x / 1e9):
 *   total_time = s(wall_ns); neuroncore_cycle_count = wall_ns x clock / 1e9;
 *   model_flops = sum raw_flops; transpose_flops = sum flops_transpose;
 *   hardware_flops = model_flops + transpose_flops;
 *   adjusted_transpose_flops = sum adjusted_flops_transpose;
 *   adjusted_hardware_flops = sum adjusted_flops + adjusted_transpose_flops;
 *   mm_arithmetic_intensity = hardware_flops / dma_transfer_total_bytes;
 *   peak_flops_bandwidth_ratio = peak_flops / hbm_ddr_bandwidth;
 *   trace_count; event_count = records of all traces; total_row_count = rows
 *   of every table of the profile, this one included (summary_table.h: the row
 *   is finished after the other tables; null when the run gives no hold);
 *   dma_active_time = s(union(all packets)), dma_active_cycles the same in
 *   neuroncore cycles, dma_active_time_percent = 100 x union / lane_ns;
 *   static/software_dynamic/hardware_dynamic_dma_active_time = s(union of that
 *   class's packets); *_dma_active_time_percent = 100 x class union / union(all);
 *   dynamic_dma_active_time_percent uses the union of both dynamic classes;
 *   dma_packet_time = s(sum packet durations); dma_transfer_time = s(sum block
 *   spans); dma_transfer_count = blocks; dma_transfer_total_bytes = sum packet
 *   bytes; dma_transfer_average_bytes = total bytes / blocks;
 *   dma_queue_count = distinct (program, queue) that carried a packet;
 *   *_dma_packet_count, *_dma_size: packets and bytes of the class;
 *   *_dma_packet_percent, *_dma_size_percent: 100 x class / all;
 *   weight_size_bytes, inputs_and_weights_size_bytes,
 *   inputs_outputs_weights_size_bytes: sums of TENSORS sizes of type WEIGHT,
 *   IN+WEIGHT, IN+OUT+WEIGHT over the programs that have a trace;
 *   hbm/sbuf/psum read/write, spill save/reload, psum_read_sbuf_write,
 *   input/output/weight_queue bytes: sums of the executed instructions' program
 *   values (absent = 0); psum_read_sbuf_write_count = instructions with
 *   psum_read_sbuf_write_bytes > 0;
 *   mbu_estimated_percent = 100 x (hbm_read + hbm_write) / (hbm_bw x s(trace_ns));
 *   mbu_min_read_util_percent = 100 x inputs_and_weights x executions /
 *   (hbm_bw x s(trace_ns));
 *   mfu_estimated_percent = mfu_inst_estimated_percent
 *     = 100 x model_flops / (peak_flops x s(lane_ns));
 *   mfu_max_achievable_estimated_percent = mfu_inst_max_achievable_...
 *     = 100 x model_flops / (peak_flops x tensor_engine_active_time);
 *   hfu_estimated_percent = 100 x hardware_flops / (peak_flops x s(lane_ns));
 *   mfu_hlo_*: null (the capture has no HLO-level FLOP counts);
 *   <engine>_engine_instruction_time = s(sum durations), _active_time =
 *   s(union per lane), _active_time_percent = 100 x union / lane_ns,
 *   _instruction_count; matmul_instruction_count = tensor instructions with
 *   opcode MATMUL; activate_instruction_time/count: opcode ACTIVATE;
 *   cc_op_time = s(sum cc_op durations), cc_op_active_time = s(union per trace),
 *   percent of trace_ns, cc_op_count; cc_cores_instruction_* the same over
 *   cc_instr records (all CC cores of a trace form one union);
 *   total_exec_time = s(sum of execution record durations);
 *   total_active_time = s(union per trace of all instruction intervals);
 *   total_active_time_percent = 100 x total_active / total_exec.
 *   A ratio whose denominator is 0 is null. The table is written only when some
 *   trace holds records.
 *
 * Memory: lanes x (engines + DMA classes) spans, lanes x queues x 8 open blocks,
 * flags per program instruction: bounded by the capture's shape.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"
#include "process/device/sum_guard.h"
#include "process/device/summary_table.h"

#define OPEN_BLOCKS 8                /* open DMA blocks remembered per (lane, queue) */

typedef struct span {
    int64_t s, e;
    bool open;
} span;

/* Adds [a, b] to a union built from intervals arriving in start order; the
 * union's closed parts are summed into *acc (named `what` for messages). */
static inline void span_add(nx_sum_guard *g, span *sp, int64_t *acc, const char *what, int64_t a, int64_t b)
{
    if (sp->open && a <= sp->e) {
        if (b > sp->e)
            sp->e = b;
        return;
    }
    if (sp->open)
        nx_sum_add(g, acc, sp->e - sp->s, what);
    *sp = (span){.s = a, .e = b, .open = true};
}

static inline void span_close(nx_sum_guard *g, span *sp, int64_t *acc, const char *what)
{
    if (sp->open)
        nx_sum_add(g, acc, sp->e - sp->s, what);
    sp->open = false;
}

enum { DMA_ALL, DMA_STATIC, DMA_DYNAMIC, DMA_SW, DMA_HW, DMA_CLASSES };

typedef struct open_block {
    int64_t id;                      /* -1: free */
    int64_t s, e;
} open_block;

#define IFLAG_MATMUL 1u
#define IFLAG_ACTIVATE 2u

typedef struct summary_sink {
    size_t *lane_base;
    size_t n_lanes, n_traces, max_queues;
    uint8_t **iflags;                /* per program: per instruction */
    uint64_t **icount;               /* per program: records of each instruction; the
                                        program's static counts (flops, bytes) are summed
                                        from these at finish, not read per record */
    uint8_t **queue_used;            /* per program: per queue */
    size_t n_progs;
    span *eng;                       /* lanes x engines */
    int64_t eng_active[NX_ENGINE_COUNT], eng_time[NX_ENGINE_COUNT], eng_count[NX_ENGINE_COUNT];
    span *trace_any;                 /* per trace: all instructions */
    int64_t total_active;
    span *dma;                       /* lanes x DMA_CLASSES */
    int64_t dma_active[DMA_CLASSES], dma_packets[DMA_CLASSES], dma_bytes[DMA_CLASSES];
    int64_t dma_packet_time, dma_blocks, dma_transfer_time;
    open_block *blocks;              /* lanes x max_queues x OPEN_BLOCKS */
    span *cc_op, *cc_instr;          /* per trace */
    int64_t cc_op_active, cc_op_time, cc_op_count, cc_instr_active, cc_instr_time, cc_instr_count;
    int64_t exec_time, exec_count;
    int64_t matmul_count, activate_count, activate_time;
    int64_t raw_flops, adj_flops, flops_t, adj_flops_t;
    int64_t hbm_r, hbm_w, sbuf_r, sbuf_w, spill_s, spill_r, psum_r, psum_w, prsw_bytes, prsw_count;
    int64_t in_q, out_q, w_q;
    nx_sum_guard sums;
} summary_sink;

static int oom(nx_error *err)
{
    snprintf(err->msg, sizeof err->msg, "Summary: out of memory");
    return -1;
}

static void summary_free(summary_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_progs; i++) {
        if (s->iflags)
            free(s->iflags[i]);
        if (s->icount)
            free(s->icount[i]);
        if (s->queue_used)
            free(s->queue_used[i]);
    }
    free(s->iflags);
    free(s->icount);
    free(s->queue_used);
    free(s->lane_base);
    free(s->eng);
    free(s->trace_any);
    free(s->dma);
    free(s->blocks);
    free(s->cc_op);
    free(s->cc_instr);
    free(s);
}

static int summary_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    *state = NULL;
    if (ctx->n_traces == 0)
        return 0;
    summary_sink *s = calloc(1, sizeof *s);
    if (!s)
        return oom(err);
    s->n_traces = ctx->n_traces;
    s->n_progs = ctx->n_progs;
    s->lane_base = calloc(ctx->n_traces, sizeof *s->lane_base);
    s->iflags = calloc(ctx->n_progs + 1, sizeof *s->iflags);
    s->icount = calloc(ctx->n_progs + 1, sizeof *s->icount);
    s->queue_used = calloc(ctx->n_progs + 1, sizeof *s->queue_used);
    s->trace_any = calloc(ctx->n_traces, sizeof *s->trace_any);
    s->cc_op = calloc(ctx->n_traces, sizeof *s->cc_op);
    s->cc_instr = calloc(ctx->n_traces, sizeof *s->cc_instr);
    if (!s->lane_base || !s->iflags || !s->icount || !s->queue_used || !s->trace_any || !s->cc_op || !s->cc_instr)
        goto nomem;
    for (size_t t = 0; t < ctx->n_traces; t++) {
        s->lane_base[t] = s->n_lanes;
        s->n_lanes += ctx->traces[t].hdr.pcore_count;
    }
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *pr = ctx->progs[p];
        if (pr->n_queues > s->max_queues)
            s->max_queues = pr->n_queues;
        s->iflags[p] = calloc(pr->n_instrs + 1, 1);
        s->icount[p] = calloc(pr->n_instrs + 1, sizeof *s->icount[p]);
        s->queue_used[p] = calloc(pr->n_queues + 1, 1);
        if (!s->iflags[p] || !s->icount[p] || !s->queue_used[p])
            goto nomem;
        for (size_t i = 0; i < pr->n_instrs; i++) {
            const nx_prog_instr *in = &pr->instrs[i];
            if (in->engine == NX_ENGINE_TENSOR && strcmp(in->opcode, "MATMUL") == 0)
                s->iflags[p][i] |= IFLAG_MATMUL;
            if (strcmp(in->opcode, "ACTIVATE") == 0)
                s->iflags[p][i] |= IFLAG_ACTIVATE;
        }
    }
    s->eng = calloc(s->n_lanes * NX_ENGINE_COUNT, sizeof *s->eng);
    s->dma = calloc(s->n_lanes * DMA_CLASSES, sizeof *s->dma);
    size_t nb = s->n_lanes * (s->max_queues ? s->max_queues : 1) * OPEN_BLOCKS;
    s->blocks = malloc(nb * sizeof *s->blocks);
    if (!s->eng || !s->dma || !s->blocks)
        goto nomem;
    for (size_t i = 0; i < nb; i++)
        s->blocks[i].id = -1;
    *state = s;
    return 0;
nomem:
    summary_free(s);
    return oom(err);
}

static void on_instruction(summary_sink *s, const nx_device_event *ev)
{
    const nx_trace_record *rec = ev->rec;
    const nx_program *pr = ev->trace->prog;
    const nx_prog_instr *in = ev->instr;
    unsigned e = rec->u.instr.engine;
    int64_t a = ev->start_ns, b = ev->end_ns;
    size_t lane = s->lane_base[ev->trace->index] + rec->pcore;
    nx_sum_guard *g = &s->sums;
    s->eng_count[e]++;
    nx_sum_add(g, &s->eng_time[e], b - a, "engine instruction time");
    span_add(g, &s->eng[lane * NX_ENGINE_COUNT + e], &s->eng_active[e], "engine active time", a, b);
    span_add(g, &s->trace_any[ev->trace->index], &s->total_active, "total_active_time", a, b);
    size_t i = (size_t)(in - pr->instrs);
    s->icount[ev->trace->prog_index][i]++;
    if (s->iflags[ev->trace->prog_index][i] & IFLAG_ACTIVATE)
        nx_sum_add(g, &s->activate_time, b - a, "activation time");
}

/* The program-static sums: each instruction's counts (absent and negative
 * values as 0) times the records it had. */
static void add_instruction_totals(summary_sink *s, const nx_process_ctx *ctx)
{
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *pr = ctx->progs[p];
        for (size_t i = 0; i < pr->n_instrs; i++) {
            int64_t n = (int64_t)s->icount[p][i];
            if (n == 0)
                continue;
            const nx_prog_instr *in = &pr->instrs[i];
            if (s->iflags[p][i] & IFLAG_MATMUL)
                s->matmul_count += n;
            if (s->iflags[p][i] & IFLAG_ACTIVATE)
                s->activate_count += n;
#define ADD(acc, field) if (in->field > 0) nx_sum_mul_add(&s->sums, &s->acc, n, in->field, #field);
            ADD(raw_flops, raw_flops) ADD(adj_flops, adjusted_flops) ADD(flops_t, flops_transpose)
            ADD(adj_flops_t, adjusted_flops_transpose) ADD(hbm_r, hbm_read_bytes) ADD(hbm_w, hbm_write_bytes)
            ADD(sbuf_r, sbuf_read_bytes) ADD(sbuf_w, sbuf_write_bytes) ADD(spill_s, spill_save_bytes)
            ADD(spill_r, spill_reload_bytes) ADD(psum_r, psum_read_bytes) ADD(psum_w, psum_write_bytes)
            ADD(prsw_bytes, psum_read_sbuf_write_bytes) ADD(in_q, input_queue_bytes)
            ADD(out_q, output_queue_bytes) ADD(w_q, weight_queue_bytes)
#undef ADD
            if (in->psum_read_sbuf_write_bytes > 0)
                s->prsw_count += n;
        }
    }
}

static void on_packet(summary_sink *s, const nx_device_event *ev)
{
    const nx_trace_record *rec = ev->rec;
    const nx_program *pr = ev->trace->prog;
    unsigned q = rec->u.packet.queue;
    if (q >= pr->n_queues)
        return;
    int64_t a = ev->start_ns, b = ev->end_ns;
    int64_t bytes = (int64_t)rec->u.packet.read_bytes + rec->u.packet.write_bytes;
    size_t lane = s->lane_base[ev->trace->index] + rec->pcore;
    unsigned type = pr->queues[q].type;
    bool sw = type == NX_DMAQ_SOFTWARE_DYNAMIC, hw = type == NX_DMAQ_HARDWARE_DYNAMIC;
    unsigned cls[3] = {DMA_ALL, (sw || hw) ? DMA_DYNAMIC : DMA_STATIC, sw ? DMA_SW : hw ? DMA_HW : DMA_CLASSES};
    for (int i = 0; i < 3; i++) {
        if (cls[i] == DMA_CLASSES)
            continue;
        span_add(&s->sums, &s->dma[lane * DMA_CLASSES + cls[i]], &s->dma_active[cls[i]], "DMA active time", a,
                 b);
        s->dma_packets[cls[i]]++;
        nx_sum_add(&s->sums, &s->dma_bytes[cls[i]], bytes, "dma_transfer_total_bytes");
    }
    nx_sum_add(&s->sums, &s->dma_packet_time, b - a, "dma_packet_time");
    s->queue_used[ev->trace->prog_index][q] = 1;

    /* Block span: the block's slot among the last OPEN_BLOCKS blocks of this
     * (lane, queue); the oldest is retired (its span counted) to make room. */
    open_block *ob = &s->blocks[(lane * s->max_queues + q) * OPEN_BLOCKS];
    open_block *slot = NULL, *oldest = NULL;
    for (int i = 0; i < OPEN_BLOCKS; i++) {
        if (ob[i].id == ev->block_id) {
            slot = &ob[i];
            break;
        }
        if (!oldest || ob[i].id < oldest->id)
            oldest = &ob[i];
    }
    if (slot) {
        if (a < slot->s)
            slot->s = a;
        if (b > slot->e)
            slot->e = b;
        return;
    }
    if (oldest->id >= 0)
        nx_sum_add(&s->sums, &s->dma_transfer_time, oldest->e - oldest->s, "dma_transfer_time");
    *oldest = (open_block){.id = ev->block_id, .s = a, .e = b};
}

static int summary_event(void *state, const nx_device_event *ev, nx_error *err)
{
    summary_sink *s = state;
    nx_sum_guard *g = &s->sums;
    g->at = ev;
    const nx_trace_record *rec = ev->rec;
    size_t t = ev->trace->index;
    switch (rec->kind) {
    case NX_REC_INSTRUCTION: on_instruction(s, ev); break;
    case NX_REC_DMA_BLOCK: s->dma_blocks++; break;
    case NX_REC_DMA_PACKET: on_packet(s, ev); break;
    case NX_REC_CC_OP:
        s->cc_op_count++;
        nx_sum_add(g, &s->cc_op_time, ev->end_ns - ev->start_ns, "cc_op_time");
        span_add(g, &s->cc_op[t], &s->cc_op_active, "cc_op_active_time", ev->start_ns, ev->end_ns);
        break;
    case NX_REC_CC_INSTR:
        s->cc_instr_count++;
        nx_sum_add(g, &s->cc_instr_time, ev->end_ns - ev->start_ns, "cc instruction time");
        span_add(g, &s->cc_instr[t], &s->cc_instr_active, "cc instruction active time", ev->start_ns,
                 ev->end_ns);
        break;
    case NX_REC_EXECUTION:
        s->exec_count++;
        nx_sum_add(g, &s->exec_time, ev->end_ns - ev->start_ns, "total_exec_time");
        break;
    default: break;
    }
    return nx_sum_error(g, "Summary", NULL, err);
}

/* Puts num/den (scaled) or leaves the column null when den is 0. */
static void put_ratio(nx_row *r, const char *col, double num, double den, double scale)
{
    if (den > 0 && isfinite(num / den))
        nx_row_num(r, nx_row_col(r, col), scale * num / den);
}

static double secs(int64_t ns) { return (double)ns / 1e9; }

/* Clock cycles in ns nanoseconds at clock_hz, rounded; a count beyond int64 fails the guard. */
static int64_t cycles_of(nx_sum_guard *g, int64_t ns, double clock_hz, const char *what)
{
    double c = (double)ns * clock_hz / 1e9;
    if (!(c > -9.2e18 && c < 9.2e18)) {
        nx_sum_overflowed(g, what);
        return 0;
    }
    return (int64_t)llround(c);
}

static int summary_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    summary_sink *s = state;
    if (!s)
        return 0;
    /* Close every open union. */
    nx_sum_guard *g = &s->sums;
    g->at = NULL;
    for (size_t l = 0; l < s->n_lanes; l++) {
        for (unsigned e = 0; e < NX_ENGINE_COUNT; e++)
            span_close(g, &s->eng[l * NX_ENGINE_COUNT + e], &s->eng_active[e], "engine active time");
        for (unsigned c = 0; c < DMA_CLASSES; c++)
            span_close(g, &s->dma[l * DMA_CLASSES + c], &s->dma_active[c], "DMA active time");
    }
    for (size_t t = 0; t < s->n_traces; t++) {
        span_close(g, &s->trace_any[t], &s->total_active, "total_active_time");
        span_close(g, &s->cc_op[t], &s->cc_op_active, "cc_op_active_time");
        span_close(g, &s->cc_instr[t], &s->cc_instr_active, "cc instruction active time");
    }
    for (size_t i = 0; i < s->n_lanes * (s->max_queues ? s->max_queues : 1) * OPEN_BLOCKS; i++)
        if (s->blocks[i].id >= 0)
            nx_sum_add(g, &s->dma_transfer_time, s->blocks[i].e - s->blocks[i].s, "dma_transfer_time");
    add_instruction_totals(s, ctx);

    int64_t first = INT64_MAX, last = INT64_MIN, trace_ns = 0, lane_ns = 0, events = 0;
    const nx_prog_hardware *hw = NULL;
    for (size_t t = 0; t < ctx->n_traces; t++) {
        const nx_device_trace *tr = &ctx->traces[t];
        events += (int64_t)tr->records;
        if (!hw)
            hw = &tr->prog->hw;
        if (!tr->any)
            continue;
        if (tr->first_ns < first)
            first = tr->first_ns;
        if (tr->last_ns > last)
            last = tr->last_ns;
        nx_sum_add(g, &trace_ns, tr->last_ns - tr->first_ns, "trace time");
        nx_sum_mul_add(g, &lane_ns, tr->last_ns - tr->first_ns, (int64_t)tr->hdr.pcore_count, "lane time");
    }
    if (first == INT64_MAX || !hw) {   /* no records: no activity to summarise */
        summary_free(s);
        return 0;
    }
    int64_t wall_ns;
    nx_sum_span(g, &wall_ns, last, first, "total_time (the span of all traces)");

    /* Tensor sizes of the programs that were traced (each program once). */
    int64_t w_size = 0, in_size = 0, out_size = 0;
    bool any_tensor = false;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        bool traced = false;
        for (size_t t = 0; t < ctx->n_traces && !traced; t++)
            traced = ctx->traces[t].prog_index == p;
        if (!traced)
            continue;
        const nx_program *pr = ctx->progs[p];
        for (size_t i = 0; i < pr->n_tensors; i++) {
            const nx_prog_tensor *tn = &pr->tensors[i];
            any_tensor = true;
            if (tn->size < 0)
                continue;
            if (strcmp(tn->type, "WEIGHT") == 0)
                nx_sum_add(g, &w_size, tn->size, "weight tensor size");
            else if (strcmp(tn->type, "IN") == 0)
                nx_sum_add(g, &in_size, tn->size, "input tensor size");
            else if (strcmp(tn->type, "OUT") == 0)
                nx_sum_add(g, &out_size, tn->size, "output tensor size");
        }
    }
    int64_t queues = 0;
    for (size_t p = 0; p < ctx->n_progs; p++)
        for (size_t q = 0; q < ctx->progs[p]->n_queues; q++)
            queues += s->queue_used[p][q];

    double peak = 2.0 * hw->tensor_rows * hw->tensor_cols * (double)hw->tensor_clock_hz;
    double hbm_bw = (double)hw->hbm_ddr_bandwidth, clock = (double)hw->neuroncore_clock_hz;
    int64_t model = s->raw_flops, hwf = s->raw_flops, adj_hwf = s->adj_flops, in_w = in_size, in_out_w;
    nx_sum_add(g, &hwf, s->flops_t, "hardware_flops");
    nx_sum_add(g, &adj_hwf, s->adj_flops_t, "adjusted_hardware_flops");
    nx_sum_add(g, &in_w, w_size, "inputs_and_weights_size_bytes");
    in_out_w = in_w;
    nx_sum_add(g, &in_out_w, out_size, "inputs_outputs_weights_size_bytes");
    int64_t cycles = cycles_of(g, wall_ns, clock, "neuroncore_cycle_count");
    int64_t dma_cycles = cycles_of(g, s->dma_active[DMA_ALL], clock, "dma_active_cycles");
    if (nx_sum_error(g, "Summary", ctx->n_traces == 1 ? ctx->traces[0].path : ctx->o->capture_dir, err) != 0) {
        summary_free(s);
        return -1;
    }

    nx_row local, *r = ctx->summary_hold ? &ctx->summary_hold->r : &local;
    if (nx_row_open(r, &ctx->dest, "Summary", err) != 0) {
        summary_free(s);
        return -1;
    }
    if (nx_row_begin(r, err) != 0)
        goto fail;
#define I64(col, v) nx_row_i64(r, nx_row_col(r, col), (v))
#define NUM(col, v) nx_row_num(r, nx_row_col(r, col), (v))
    NUM("total_time", secs(wall_ns));
    I64("neuroncore_cycle_count", cycles);
    I64("model_flops", model);
    I64("hardware_flops", hwf);
    I64("transpose_flops", s->flops_t);
    I64("adjusted_hardware_flops", adj_hwf);
    I64("adjusted_transpose_flops", s->adj_flops_t);
    put_ratio(r, "mm_arithmetic_intensity", (double)hwf, (double)s->dma_bytes[DMA_ALL], 1.0);
    put_ratio(r, "peak_flops_bandwidth_ratio", peak, hbm_bw, 1.0);
    I64("trace_count", (int64_t)ctx->n_traces);
    I64("event_count", events);

    I64("dma_active_cycles", dma_cycles);
    NUM("dma_active_time", secs(s->dma_active[DMA_ALL]));
    put_ratio(r, "dma_active_time_percent", (double)s->dma_active[DMA_ALL], (double)lane_ns, 100.0);
    NUM("static_dma_active_time", secs(s->dma_active[DMA_STATIC]));
    put_ratio(r, "static_dma_active_time_percent", (double)s->dma_active[DMA_STATIC], (double)s->dma_active[DMA_ALL], 100.0);
    put_ratio(r, "dynamic_dma_active_time_percent", (double)s->dma_active[DMA_DYNAMIC], (double)s->dma_active[DMA_ALL], 100.0);
    put_ratio(r, "dma_transfer_average_bytes", (double)s->dma_bytes[DMA_ALL], (double)s->dma_blocks, 1.0);
    NUM("dma_packet_time", secs(s->dma_packet_time));
    NUM("dma_transfer_time", secs(s->dma_transfer_time));
    I64("dma_transfer_count", s->dma_blocks);
    I64("dma_transfer_total_bytes", s->dma_bytes[DMA_ALL]);
    I64("dma_queue_count", queues);
    if (any_tensor) {
        I64("inputs_and_weights_size_bytes", in_w);
        I64("inputs_outputs_weights_size_bytes", in_out_w);
        I64("weight_size_bytes", w_size);
    }
    I64("static_dma_packet_count", s->dma_packets[DMA_STATIC]);
    I64("static_dma_size", s->dma_bytes[DMA_STATIC]);
    double all_p = (double)s->dma_packets[DMA_ALL], all_b = (double)s->dma_bytes[DMA_ALL];
    put_ratio(r, "dynamic_dma_packet_percent", (double)s->dma_packets[DMA_DYNAMIC], all_p, 100.0);
    put_ratio(r, "static_dma_packet_percent", (double)s->dma_packets[DMA_STATIC], all_p, 100.0);
    put_ratio(r, "dynamic_dma_size_percent", (double)s->dma_bytes[DMA_DYNAMIC], all_b, 100.0);
    put_ratio(r, "static_dma_size_percent", (double)s->dma_bytes[DMA_STATIC], all_b, 100.0);
    put_ratio(r, "mbu_estimated_percent", (double)s->hbm_r + (double)s->hbm_w, hbm_bw * secs(trace_ns), 100.0);
    if (any_tensor)
        put_ratio(r, "mbu_min_read_util_percent", (double)in_w * (double)s->exec_count,
                  hbm_bw * secs(trace_ns), 100.0);
    I64("hbm_write_bytes", s->hbm_w);
    I64("hbm_read_bytes", s->hbm_r);
    I64("sbuf_write_bytes", s->sbuf_w);
    I64("sbuf_read_bytes", s->sbuf_r);
    I64("spill_save_bytes", s->spill_s);
    I64("spill_reload_bytes", s->spill_r);
    I64("psum_write_bytes", s->psum_w);
    I64("psum_read_bytes", s->psum_r);
    I64("psum_read_sbuf_write_count", s->prsw_count);
    I64("psum_read_sbuf_write_bytes", s->prsw_bytes);
    I64("input_queue_bytes", s->in_q);
    I64("output_queue_bytes", s->out_q);
    I64("weight_queue_bytes", s->w_q);
    static const char *const cls_name[2] = {"software_dynamic", "hardware_dynamic"};
    for (int k = 0; k < 2; k++) {
        int c = k == 0 ? DMA_SW : DMA_HW;
        char col[80];
        snprintf(col, sizeof col, "%s_dma_active_time", cls_name[k]);
        NUM(col, secs(s->dma_active[c]));
        snprintf(col, sizeof col, "%s_dma_active_time_percent", cls_name[k]);
        put_ratio(r, col, (double)s->dma_active[c], (double)s->dma_active[DMA_ALL], 100.0);
        snprintf(col, sizeof col, "%s_dma_packet_count", cls_name[k]);
        I64(col, s->dma_packets[c]);
        snprintf(col, sizeof col, "%s_dma_size", cls_name[k]);
        I64(col, s->dma_bytes[c]);
        snprintf(col, sizeof col, "%s_dma_packet_percent", cls_name[k]);
        put_ratio(r, col, (double)s->dma_packets[c], all_p, 100.0);
        snprintf(col, sizeof col, "%s_dma_size_percent", cls_name[k]);
        put_ratio(r, col, (double)s->dma_bytes[c], all_b, 100.0);
    }
    for (unsigned e = 0; e < NX_ENGINE_COUNT; e++) {
        char col[80];
        const char *n = nx_engine_name(e);
        snprintf(col, sizeof col, "%s_engine_instruction_time", n);
        NUM(col, secs(s->eng_time[e]));
        snprintf(col, sizeof col, "%s_engine_active_time", n);
        NUM(col, secs(s->eng_active[e]));
        snprintf(col, sizeof col, "%s_engine_active_time_percent", n);
        put_ratio(r, col, (double)s->eng_active[e], (double)lane_ns, 100.0);
        snprintf(col, sizeof col, "%s_engine_instruction_count", n);
        I64(col, s->eng_count[e]);
    }
    I64("matmul_instruction_count", s->matmul_count);
    NUM("activate_instruction_time", secs(s->activate_time));
    I64("activate_instruction_count", s->activate_count);
    double tensor_active_s = secs(s->eng_active[NX_ENGINE_TENSOR]);
    put_ratio(r, "mfu_estimated_percent", (double)model, peak * secs(lane_ns), 100.0);
    put_ratio(r, "mfu_inst_estimated_percent", (double)model, peak * secs(lane_ns), 100.0);
    put_ratio(r, "mfu_max_achievable_estimated_percent", (double)model, peak * tensor_active_s, 100.0);
    put_ratio(r, "mfu_inst_max_achievable_estimated_percent", (double)model, peak * tensor_active_s, 100.0);
    put_ratio(r, "hfu_estimated_percent", (double)hwf, peak * secs(lane_ns), 100.0);
    NUM("cc_op_time", secs(s->cc_op_time));
    NUM("cc_op_active_time", secs(s->cc_op_active));
    put_ratio(r, "cc_op_active_time_percent", (double)s->cc_op_active, (double)trace_ns, 100.0);
    I64("cc_op_count", s->cc_op_count);
    NUM("cc_cores_instruction_time", secs(s->cc_instr_time));
    NUM("cc_cores_instruction_active_time", secs(s->cc_instr_active));
    put_ratio(r, "cc_cores_instruction_active_time_percent", (double)s->cc_instr_active, (double)trace_ns, 100.0);
    I64("cc_cores_instruction_count", s->cc_instr_count);
    if (s->exec_count > 0)
        NUM("total_exec_time", secs(s->exec_time));
    NUM("total_active_time", secs(s->total_active));
    put_ratio(r, "total_active_time_percent", (double)s->total_active, (double)s->exec_time, 100.0);
#undef I64
#undef NUM
    summary_free(s);
    if (ctx->summary_hold) {
        ctx->summary_hold->c_total = nx_row_col(r, "total_row_count");
        ctx->summary_hold->held = true;
        return 0;
    }
    if (nx_row_end(r, err) != 0)
        goto fail_row;
    return nx_row_close(r, true, tables, err);
fail:
    summary_free(s);
fail_row:
    nx_row_discard(r);
    return -1;
}

int nx_summary_hold_complete(nx_summary_hold *h, uint64_t other_rows, unsigned *tables, nx_error *err)
{
    if (!h->held)
        return 0;
    h->held = false;
    /* The row being finished is the table's only one. */
    nx_row_i64(&h->r, h->c_total, (int64_t)(other_rows + nx_row_count(&h->r) + 1));
    if (nx_row_end(&h->r, err) != 0) {
        nx_row_discard(&h->r);
        return -1;
    }
    return nx_row_close(&h->r, true, tables, err);
}

void nx_summary_hold_discard(nx_summary_hold *h)
{
    if (h->held)
        nx_row_discard(&h->r);
    h->held = false;
}

static void summary_abort(void *state)
{
    summary_free(state);
}

const nx_device_sink nx_sink_summary = {
    .name = "Summary",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION) | NX_KIND_BIT(NX_REC_DMA_BLOCK) | NX_KIND_BIT(NX_REC_DMA_PACKET) |
             NX_KIND_BIT(NX_REC_CC_OP) | NX_KIND_BIT(NX_REC_CC_INSTR) | NX_KIND_BIT(NX_REC_EXECUTION),
    .open = summary_open,
    .event = summary_event,
    .finish = summary_finish,
    .abort = summary_abort,
};
