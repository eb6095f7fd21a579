/*
 * device_pipeline.c — reads the device traces once and feeds the sinks in
 * global start-time order (see device_pipeline.h and device_sink.h).
 *
 * DmaPacketAggregated ids are given to dma_block records as they are read, in
 * file order, and each dma_packet is tied to its block then, because the trace
 * format promises block/packet consistency in file order (blocks of a queue
 * complete in order), not in time order. Instruction and DmaPacket ids are given
 * at dispatch, so they grow with the rows of their time-sorted tables.
 */
#include "process/device/device_pipeline.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/sink_runner.h"
#include "util/ring.h"
#include "util/run_control.h"

typedef struct pending {
    nx_trace_record rec;
    int64_t start_ns, end_ns;        /* end_ns == start_ns for records without an end */
    int64_t block_id;                /* dma_block: its id; dma_packet: its block's id */
    uint64_t seq;                    /* file order, for stable ties */
    uint64_t offset;                 /* the record's byte offset in its trace file */
} pending;

/* An open block of one (pcore, queue): the record's id and the pipeline's. */
typedef struct open_block {
    uint32_t raw;
    int64_t id;
} open_block;

typedef struct trace_stream {
    nx_device_trace *t;
    nx_trace_reader *rd;
    pending *heap;                   /* min-heap by (start_ns, seq) */
    size_t n, cap;
    uint64_t max_ts;                 /* largest tick read so far */
    uint64_t seq;
    bool eof;
    /* The trace's span and record count so far, published to the nx_device_trace
     * once every record is read (trace_publish()): written per record, they stay
     * off the cache lines the sinks' threads read for every event (ev->trace). */
    bool any;
    int64_t first_ns, last_ns;
    uint64_t records;
    nx_ring *fifos;                  /* pcore_count x program queues: open_block, oldest first */
    size_t n_fifos;
} trace_stream;

struct nx_device_pipeline {
    nx_program **progs;
    uint32_t *prog_pcores;
    size_t n_progs;
    nx_device_trace *traces;
    trace_stream *streams;
    size_t n_traces;
    uint64_t total_records;
    int64_t next_block_id;
};

int64_t nx_trace_unix_ns(const nx_trace_header *h, uint64_t ticks)
{
    return h->epoch_ns + (int64_t)nx_trace_ticks_to_ns(h, ticks);
}

/* ------------------------------------------------------------ opening -- */

int nx_device_pipeline_open(const nx_capture *cap, const nx_cap_warner *warn, nx_device_pipeline **out,
                            nx_error *err)
{
    *out = NULL;
    nx_device_pipeline *p = calloc(1, sizeof *p);
    size_t np = 0, nt = 0;
    for (size_t i = 0; i < cap->n_sessions; i++) {
        np += cap->sessions[i].n_programs;
        for (size_t j = 0; j < cap->sessions[i].n_programs; j++)
            nt += cap->sessions[i].programs[j].n_traces;
    }
    if (p) {
        p->progs = calloc(np + 1, sizeof *p->progs);
        p->prog_pcores = calloc(np + 1, sizeof *p->prog_pcores);
        p->traces = calloc(nt + 1, sizeof *p->traces);
        p->streams = calloc(nt + 1, sizeof *p->streams);
    }
    if (!p || !p->progs || !p->prog_pcores || !p->traces || !p->streams) {
        snprintf(err->msg, sizeof err->msg, "out of memory opening the device traces");
        nx_device_pipeline_close(p);
        return -1;
    }
    for (size_t i = 0; i < cap->n_sessions; i++) {
        const nx_cap_session *ses = &cap->sessions[i];
        for (size_t j = 0; j < ses->n_programs; j++) {
            const nx_cap_program_file *pf = &ses->programs[j];
            size_t pi = p->n_progs;
            if (nx_program_open(pf->path, &p->progs[pi], warn, err) != 0)
                goto fail;
            p->n_progs++;
            for (size_t k = 0; k < pf->n_traces; k++) {
                nx_device_trace *t = &p->traces[p->n_traces];
                trace_stream *s = &p->streams[p->n_traces];
                t->index = p->n_traces;
                t->path = pf->traces[k].path;
                t->prog = p->progs[pi];
                t->prog_index = pi;
                if (nx_trace_reader_open(t->path, t->prog, warn, &s->rd, err) != 0)
                    goto fail;
                p->n_traces++;
                s->t = t;
                t->hdr = *nx_trace_reader_header(s->rd);
                nx_trace_clock_init(&t->clock, &t->hdr);
                p->total_records += nx_trace_reader_record_count(s->rd);
                if (t->hdr.pcore_count > p->prog_pcores[pi])
                    p->prog_pcores[pi] = t->hdr.pcore_count;
                s->n_fifos = (size_t)t->hdr.pcore_count * t->prog->n_queues;
                s->fifos = calloc(s->n_fifos + 1, sizeof *s->fifos);
                if (!s->fifos) {
                    snprintf(err->msg, sizeof err->msg, "%s: out of memory", t->path);
                    goto fail;
                }
            }
        }
    }
    *out = p;
    return 0;
fail:
    nx_device_pipeline_close(p);
    return -1;
}

void nx_device_pipeline_describe(const nx_device_pipeline *p, nx_process_ctx *ctx)
{
    ctx->progs = p->progs;
    ctx->n_progs = p->n_progs;
    ctx->prog_pcores = p->prog_pcores;
    ctx->traces = p->traces;
    ctx->n_traces = p->n_traces;
}

uint64_t nx_device_pipeline_total_records(const nx_device_pipeline *p)
{
    return p->total_records;
}

void nx_device_pipeline_close(nx_device_pipeline *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_traces; i++) {
        trace_stream *s = &p->streams[i];
        nx_trace_reader_close(s->rd);
        free(s->heap);
        nx_ring_free_array(s->fifos, s->n_fifos);
    }
    for (size_t i = 0; i < p->n_progs; i++)
        nx_program_close(p->progs[i]);
    free(p->streams);
    free(p->traces);
    free(p->progs);
    free(p->prog_pcores);
    free(p);
}

/* ------------------------------------------------------------ per-trace heap -- */

static bool before(const pending *a, const pending *b)
{
    return a->start_ns < b->start_ns || (a->start_ns == b->start_ns && a->seq < b->seq);
}

static void heap_push(trace_stream *s, const pending *x)
{
    size_t i = s->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(x, &s->heap[up]))
            break;
        s->heap[i] = s->heap[up];
        i = up;
    }
    s->heap[i] = *x;
}

static void heap_pop(trace_stream *s)
{
    pending last = s->heap[--s->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->n)
            break;
        if (c + 1 < s->n && before(&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!before(&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->n > 0)
        s->heap[i] = last;
}

static bool head_ready(const trace_stream *s)
{
    if (s->n == 0)
        return false;
    if (s->eof)
        return true;
    uint64_t w = s->t->hdr.reorder_window_ticks;
    return s->max_ts >= w && s->heap[0].rec.ts <= s->max_ts - w;
}

/* ------------------------------------------------------------ blocks -- */

/* The id of open block `raw`; blocks before it are finished (they complete in order). */
static int64_t fifo_find(nx_ring *f, uint32_t raw)
{
    while (f->n > 0 && ((const open_block *)nx_ring_at(f, 0))->raw != raw)
        nx_ring_pop(f);
    return f->n > 0 ? ((const open_block *)nx_ring_at(f, 0))->id : -1;
}

static int tie_blocks(nx_device_pipeline *p, trace_stream *s, pending *x, nx_error *err)
{
    const nx_trace_record *r = &x->rec;
    if (r->kind != NX_REC_DMA_BLOCK && r->kind != NX_REC_DMA_PACKET)
        return 0;
    uint16_t q = r->kind == NX_REC_DMA_BLOCK ? r->u.block.queue : r->u.packet.queue;
    nx_ring *f = &s->fifos[(size_t)r->pcore * s->t->prog->n_queues + q];
    if (r->kind == NX_REC_DMA_BLOCK) {
        x->block_id = p->next_block_id++;
        open_block b = {r->u.block.block_id, x->block_id};
        if (nx_ring_push(f, &b, sizeof b) != 0) {
            snprintf(err->msg, sizeof err->msg, "%s: out of memory for open DMA blocks", s->t->path);
            return -1;
        }
        return 0;
    }
    x->block_id = fifo_find(f, r->u.packet.block_id);
    if (x->block_id < 0) {   /* the reader rejects this; kept as a guard */
        snprintf(err->msg, sizeof err->msg, "%s (at %" PRIu64 "): packet of DMA block %" PRIu32 " not announced",
                 s->t->path, nx_trace_reader_offset(s->rd), r->u.packet.block_id);
        return -1;
    }
    return 0;
}

static bool has_end(unsigned kind)
{
    return kind == NX_REC_INSTRUCTION || kind == NX_REC_DMA_PACKET || kind == NX_REC_CC_OP ||
           kind == NX_REC_CC_INSTR || kind == NX_REC_THROTTLE || kind == NX_REC_EXECUTION;
}

/* A record's start and end in Unix ns. A time that does not fit an int64, or a
 * DMA packet lasting longer than NX_MAX_DMA_PACKET_NS, is an error naming the
 * file and the record's offset: such values come from a damaged record, and a
 * packet's DMA usage costs one step per 10 us bucket it covers. */
static int record_times(const trace_stream *s, pending *x, nx_error *err)
{
    const nx_device_trace *t = s->t;
    uint64_t at = x->offset;
    if (!nx_trace_clock_unix_ns(&t->clock, t->hdr.epoch_ns, x->rec.ts, &x->start_ns) ||
        (has_end(x->rec.kind) && !nx_trace_clock_unix_ns(&t->clock, t->hdr.epoch_ns, x->rec.end, &x->end_ns))) {
        snprintf(err->msg, sizeof err->msg,
                 "%s (record at %" PRIu64 "): epoch_ns %" PRId64 " plus the record's ticks (ts %" PRIu64
                 ", end %" PRIu64 ") is not a Unix ns time a record may have (0 to 2^62 - 1, 1970 to 2116)",
                 t->path, at, t->hdr.epoch_ns, x->rec.ts, has_end(x->rec.kind) ? x->rec.end : x->rec.ts);
        return -1;
    }
    if (!has_end(x->rec.kind))
        x->end_ns = x->start_ns;
    if (x->rec.kind == NX_REC_DMA_PACKET && x->end_ns - x->start_ns > NX_MAX_DMA_PACKET_NS) {
        snprintf(err->msg, sizeof err->msg,
                 "%s (record at %" PRIu64 "): dma_packet lasts %" PRId64 " ns, more than the %lld ns a DMA packet may "
                 "last (a damaged end?)",
                 t->path, at, x->end_ns - x->start_ns, (long long)NX_MAX_DMA_PACKET_NS);
        return -1;
    }
    return 0;
}

/* Gives the trace its final span and record count, for the sinks' finish(). */
static void trace_publish(const trace_stream *s)
{
    s->t->any = s->any;
    s->t->first_ns = s->first_ns;
    s->t->last_ns = s->last_ns;
    s->t->records = s->records;
}

/* Reads until the stream's earliest pending record can no longer be preceded by
 * a later one, or the trace ends. */
static int stream_fill(nx_device_pipeline *p, trace_stream *s, nx_error *err)
{
    nx_device_trace *t = s->t;
    while (!s->eof && !head_ready(s)) {
        pending x;
        int rc = nx_trace_reader_next(s->rd, &x.rec, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            s->eof = true;
            break;
        }
        x.offset = nx_trace_reader_offset(s->rd);
        if (record_times(s, &x, err) != 0)
            return -1;
        x.seq = s->seq++;
        x.block_id = -1;
        if (!s->any || x.start_ns < s->first_ns)
            s->first_ns = x.start_ns;
        if (!s->any || x.end_ns > s->last_ns)
            s->last_ns = x.end_ns;
        s->any = true;
        s->records++;
        if (x.rec.ts > s->max_ts)
            s->max_ts = x.rec.ts;
        if (tie_blocks(p, s, &x, err) != 0)
            return -1;
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 256;
            pending *h = realloc(s->heap, cap * sizeof *h);
            if (!h) {
                snprintf(err->msg, sizeof err->msg, "%s: out of memory for the reorder window", t->path);
                return -1;
            }
            s->heap = h;
            s->cap = cap;
        }
        heap_push(s, &x);
    }
    return 0;
}

/* ------------------------------------------------------------ the run -- */

/* Closes the sinks that are open (abort), after the runner has stopped. */
static void abort_sinks(const nx_device_sink *const *sinks, void *const *states, bool *open, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (open[i] && sinks[i]->abort)
            sinks[i]->abort(states[i]);
        open[i] = false;
    }
}

int nx_device_pipeline_run(nx_device_pipeline *p, const nx_process_ctx *ctx, nx_progress_fn progress,
                           void *progress_ctx, unsigned *tables, uint64_t *instructions, nx_error *err)
{
    size_t ns = nx_device_sink_count;
    const nx_device_sink *const *sinks = nx_device_sinks;
    void **states = calloc(ns + 1, sizeof *states);
    bool *open = calloc(ns + 1, sizeof *open);
    nx_sink_runner *runner = NULL;
    nx_error perr = {0};
    nx_error cerr = {0};
    int rc = -1;
    *instructions = 0;
    if (!states || !open) {
        nx_error_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ns; i++) {
        if (sinks[i]->open && sinks[i]->open(ctx, &states[i], &perr) != 0) {
            nx_error_set(err, "%s", perr.msg);
            goto done;
        }
        open[i] = true;
    }
    if (!(runner = nx_sink_runner_new(sinks, states, ns, &perr))) {
        nx_error_set(err, "%s", perr.msg);
        goto done;
    }
    for (size_t i = 0; i < p->n_traces; i++) {
        if (stream_fill(p, &p->streams[i], &cerr) != 0) {
            nx_error_set(err, "%s", cerr.msg);
            goto done;
        }
    }
    int64_t next_id[NX_REC_KIND_MAX + 1] = {0};
    uint64_t done_records = 0;
    for (;;) {
        trace_stream *best = NULL;
        for (size_t i = 0; i < p->n_traces; i++) {
            trace_stream *s = &p->streams[i];
            if (s->n > 0 && (!best || s->heap[0].start_ns < best->heap[0].start_ns))
                best = s;
        }
        if (!best)
            break;
        const pending *x = &best->heap[0];
        unsigned k = x->rec.kind;
        nx_device_event ev = {
            .trace = best->t,
            .rec = &x->rec,
            .start_ns = x->start_ns,
            .end_ns = x->end_ns,
            .id = k == NX_REC_DMA_BLOCK ? x->block_id : next_id[k]++,
            .block_id = k == NX_REC_DMA_PACKET ? x->block_id : -1,
            .offset = x->offset,
        };
        if (k == NX_REC_INSTRUCTION &&
            !(ev.instr = nx_program_find_instr(best->t->prog, x->rec.u.instr.engine, x->rec.u.instr.pc))) {
            /* the reader checks every pc; kept so no sink has to */
            nx_error_set(err, "%s: instruction pc %" PRIu32 " not in the program", best->t->path,
                     x->rec.u.instr.pc);
            goto done;
        }
        if (nx_sink_runner_event(runner, &ev, &perr) != 0) {
            nx_error_set(err, "%s", perr.msg);
            goto done;
        }
        heap_pop(best);
        if (stream_fill(p, best, &cerr) != 0) {
            nx_error_set(err, "%s", cerr.msg);
            goto done;
        }
        if ((++done_records & 0xFFFF) == 0) {
            int cancel = ctx->cancel ? atomic_load(ctx->cancel) : 0;
            if (cancel) {
                nx_run_stopped_message(cancel, err);
                goto done;
            }
            if (progress && (done_records & 0xFFFFF) == 0)
                progress(progress_ctx, done_records, p->total_records);
        }
    }
    *instructions = (uint64_t)next_id[NX_REC_INSTRUCTION];
    for (size_t i = 0; i < p->n_traces; i++)
        trace_publish(&p->streams[i]);
    nx_run_phase("device-tables");
    if (nx_sink_runner_drain(runner, &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        goto done;
    }
    nx_sink_runner_free(runner);
    runner = NULL;
    for (size_t i = 0; i < ns; i++) {
        int stopped = nx_run_stopped();
        if (stopped) {
            nx_run_stopped_message(stopped, err);
            goto done;
        }
        open[i] = false;
        if (sinks[i]->finish(states[i], ctx, tables, &perr) != 0) {
            nx_error_set(err, "%s", perr.msg);
            goto done;
        }
    }
    if (progress)
        progress(progress_ctx, done_records, p->total_records);
    rc = 0;
done:
    nx_sink_runner_free(runner);   /* joins the sinks' threads first */
    if (open)
        abort_sinks(sinks, (void *const *)states, open, ns);
    free(states);
    free(open);
    return rc;
}
