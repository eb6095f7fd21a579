/* dma_blocks.c — open DMA blocks and their completion (rules in dma_blocks.h). */
#include "process/device/dma_blocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nx_dma_blocks_init(nx_dma_blocks *b, const nx_process_ctx *ctx, size_t elem, nx_dma_done_fn done, void *sink)
{
    memset(b, 0, sizeof *b);
    b->elem = elem;
    b->done = done;
    b->sink = sink;
    b->deadline = INT64_MAX;
    if (!(b->copy = malloc(elem)) || !(b->traces = calloc(ctx->n_traces + 1, sizeof *b->traces)))
        return -1;
    b->n_traces = ctx->n_traces;
    for (size_t i = 0; i < ctx->n_traces; i++) {
        nx_dma_trace_blocks *t = &b->traces[i];
        t->pcores = ctx->traces[i].hdr.pcore_count;
        t->nq = ctx->traces[i].prog->n_queues;
        t->exec_end = INT64_MAX;
        if (!(t->fifos = calloc((size_t)t->pcores * t->nq + 1, sizeof *t->fifos)))
            return -1;
    }
    return 0;
}

void nx_dma_blocks_free(nx_dma_blocks *b)
{
    for (size_t i = 0; b->traces && i < b->n_traces; i++)
        nx_ring_free_array(b->traces[i].fifos, (size_t)b->traces[i].pcores * b->traces[i].nq);
    free(b->traces);
    free(b->copy);
    memset(b, 0, sizeof *b);
}

/* The head of fifo f of trace ti is complete: out of its FIFO, then to the sink. */
static int complete_head(nx_dma_blocks *b, size_t ti, size_t f, nx_error *err)
{
    const nx_dma_trace_blocks *t = &b->traces[ti];
    nx_ring *q = &t->fifos[f];
    memcpy(b->copy, nx_ring_at(q, 0), b->elem);
    nx_ring_pop(q);
    return b->done(b->sink, ti, (unsigned)(f / t->nq), (unsigned)(f % t->nq), b->copy, err);
}

/* Rule (b), for every trace whose execution `now` passed. */
static int complete_executions(nx_dma_blocks *b, int64_t now, nx_error *err)
{
    int64_t next = INT64_MAX;
    for (size_t i = 0; i < b->n_traces; i++) {
        nx_dma_trace_blocks *t = &b->traces[i];
        if (t->exec_end < now) {
            for (size_t f = 0; f < (size_t)t->pcores * t->nq; f++) {
                const nx_ring *q = &t->fifos[f];
                const nx_dma_open *h;
                while (q->n > 0 && (h = nx_ring_at(q, 0), h->npk > 0 && h->end <= t->exec_end))
                    if (complete_head(b, i, f, err) != 0)
                        return -1;
            }
            t->exec_end = INT64_MAX;
        }
        if (t->exec_end < next)
            next = t->exec_end;
    }
    b->deadline = next;
    return 0;
}

int nx_dma_blocks_event(nx_dma_blocks *b, const nx_device_event *ev, nx_error *err)
{
    if (ev->start_ns > b->deadline && complete_executions(b, ev->start_ns, err) != 0)
        return -1;
    if (ev->rec->kind == NX_REC_EXECUTION) {
        b->traces[ev->trace->index].exec_end = ev->end_ns;
        if (ev->end_ns < b->deadline)
            b->deadline = ev->end_ns;
    }
    return 0;
}

int nx_dma_blocks_add(nx_dma_blocks *b, const nx_device_event *ev, void *block, nx_error *err)
{
    const nx_trace_record *r = ev->rec;
    nx_dma_trace_blocks *t = &b->traces[ev->trace->index];
    *(nx_dma_open *)block = (nx_dma_open){.id = ev->id, .end = 0, .npk = 0};
    if (nx_ring_push(&t->fifos[(size_t)r->pcore * t->nq + r->u.block.queue], block, b->elem) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory for open DMA blocks", ev->trace->path);
        return -1;
    }
    return 0;
}

int nx_dma_blocks_packet(nx_dma_blocks *b, const nx_device_event *ev, void **open, nx_error *err)
{
    const nx_trace_record *r = ev->rec;
    size_t ti = ev->trace->index;
    nx_dma_trace_blocks *t = &b->traces[ti];
    size_t f = (size_t)r->pcore * t->nq + r->u.packet.queue;
    const nx_ring *q = &t->fifos[f];
    *open = NULL;
    /* Rule (a): blocks before this packet's block are complete. */
    while (q->n > 0 && ((const nx_dma_open *)nx_ring_at(q, 0))->id < ev->block_id)
        if (complete_head(b, ti, f, err) != 0)
            return -1;
    nx_dma_open *h = q->n > 0 ? nx_ring_at(q, 0) : NULL;
    if (!h || h->id != ev->block_id)
        return 0;
    if (h->npk++ == 0 || ev->end_ns > h->end)
        h->end = ev->end_ns;
    *open = h;
    return 0;
}

int nx_dma_blocks_finish(nx_dma_blocks *b, nx_error *err)
{
    for (size_t i = 0; i < b->n_traces; i++) {
        const nx_dma_trace_blocks *t = &b->traces[i];
        for (size_t f = 0; f < (size_t)t->pcores * t->nq; f++)
            while (t->fifos[f].n > 0)
                if (complete_head(b, i, f, err) != 0)
                    return -1;
    }
    return 0;
}
