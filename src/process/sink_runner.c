/* sink_runner.c — queued event batches for one sink's thread (see sink_runner.h). */
#include "process/sink_runner.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/handoff.h"

/* Events per batch, and batches given to the sink's thread and not yet done: a
 * queue of several small batches absorbs the moments a sink runs slower or
 * faster than the pipeline, where double buffering made one of them wait. */
#define BATCH_EVENTS 2048
#define QUEUE_DEPTH 8

typedef struct ev_batch {
    nx_device_event ev[BATCH_EVENTS];
    nx_trace_record rec[BATCH_EVENTS];   /* ev[i].rec points here */
    size_t n;
} ev_batch;

struct nx_sink_runner {
    const nx_device_sink *sink;
    void *state;
    /* Filled in turn; batch[cur] is being filled by the pipeline. By the
     * handoff's rule the next one in turn is free once the current is given. */
    ev_batch *batch[QUEUE_DEPTH + 1];
    size_t cur;
    bool started;
    nx_handoff h;                    /* the sink's thread (util/handoff.h) */
};

/* Delivers a batch to the sink; stops at its first error. */
static int deliver(nx_sink_runner *r, ev_batch *b, nxpq_error *err)
{
    for (size_t i = 0; i < b->n; i++)
        if (r->sink->event(r->state, &b->ev[i], err) != 0)
            return -1;
    b->n = 0;
    return 0;
}

static int deliver_item(void *ctx, void *item, char *err, size_t errlen)
{
    nxpq_error e = {{0}};
    int rc = deliver(ctx, item, &e);
    if (rc != 0)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}

static void discard_item(void *ctx, void *item)
{
    (void)ctx;
    ((ev_batch *)item)->n = 0;
}

nx_sink_runner *nx_sink_runner_new(const nx_device_sink *sink, void *state, nxpq_error *err)
{
    nx_sink_runner *r = calloc(1, sizeof *r);
    if (r && !(r->batch[0] = malloc(sizeof *r->batch[0]))) {
        free(r);
        r = NULL;
    }
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", sink->name);
        return NULL;
    }
    r->batch[0]->n = 0;
    r->sink = sink;
    r->state = state;
    return r;
}

int nx_sink_runner_event(nx_sink_runner *r, const nx_device_event *ev, nxpq_error *err)
{
    ev_batch *b = r->batch[r->cur];
    size_t i = b->n++;
    b->rec[i] = *ev->rec;
    b->ev[i] = *ev;
    b->ev[i].rec = &b->rec[i];
    if (b->n < BATCH_EVENTS)
        return 0;
    /* The thread and the other batches only once a sink has a full batch: most
     * sinks of a small capture never need them. */
    if (!r->started) {
        for (size_t k = 1; k <= QUEUE_DEPTH; k++) {
            if (!(r->batch[k] = malloc(sizeof *r->batch[k]))) {
                snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->sink->name);
                return -1;
            }
            r->batch[k]->n = 0;
        }
        if (nx_handoff_start(&r->h, QUEUE_DEPTH, deliver_item, discard_item, r) != 0) {
            snprintf(err->msg, sizeof err->msg, "%s: cannot start a thread", r->sink->name);
            return -1;
        }
        r->started = true;
    }
    if (nx_handoff_give(&r->h, b, err->msg, sizeof err->msg) != 0)
        return -1;
    r->cur = (r->cur + 1) % (QUEUE_DEPTH + 1);
    return 0;
}

int nx_sink_runner_drain(nx_sink_runner *r, nxpq_error *err)
{
    if (r->started) {
        int rc = nx_handoff_wait(&r->h, err->msg, sizeof err->msg);
        nx_handoff_stop(&r->h);
        r->started = false;
        if (rc != 0)
            return -1;
    }
    return deliver(r, r->batch[r->cur], err);
}

void nx_sink_runner_free(nx_sink_runner *r)
{
    if (!r)
        return;
    if (r->started)
        nx_handoff_stop(&r->h);
    for (size_t k = 0; k <= QUEUE_DEPTH; k++)
        free(r->batch[k]);
    free(r);
}
