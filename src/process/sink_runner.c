/* sink_runner.c — double-buffered event batches for one sink's thread (see sink_runner.h). */
#include "process/sink_runner.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH_EVENTS 2048

typedef struct ev_batch {
    nx_device_event ev[BATCH_EVENTS];
    nx_trace_record rec[BATCH_EVENTS];   /* ev[i].rec points here */
    size_t n;
} ev_batch;

struct nx_sink_runner {
    const nx_device_sink *sink;
    void *state;
    ev_batch *cur;                   /* being filled by the pipeline */
    ev_batch *spare;                 /* the other one, once the thread exists */
    bool started;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    ev_batch *pending;               /* owned by the thread until it sets it back to NULL */
    bool stop;
    int rc;                          /* the sink's first failure */
    nxpq_error err;
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

static void *run(void *arg)
{
    nx_sink_runner *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->pending && !r->stop)
            pthread_cond_wait(&r->cv, &r->lock);
        if (!r->pending)
            break;
        ev_batch *b = r->pending;
        bool skip = r->rc != 0;
        pthread_mutex_unlock(&r->lock);
        nxpq_error e;
        int rc = skip ? 0 : deliver(r, b, &e);
        b->n = 0;
        pthread_mutex_lock(&r->lock);
        if (rc != 0 && r->rc == 0) {
            r->rc = rc;
            r->err = e;
        }
        r->pending = NULL;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Waits until the thread holds no batch; its first failure, if any. */
static int wait_idle(nx_sink_runner *r, nxpq_error *err)
{
    pthread_mutex_lock(&r->lock);
    while (r->pending)
        pthread_cond_wait(&r->cv, &r->lock);
    int rc = r->rc;
    if (rc != 0)
        *err = r->err;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static void stop_thread(nx_sink_runner *r)
{
    if (!r->started)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->tid, NULL);
    r->started = false;
}

nx_sink_runner *nx_sink_runner_new(const nx_device_sink *sink, void *state, nxpq_error *err)
{
    nx_sink_runner *r = calloc(1, sizeof *r);
    if (r && !(r->cur = malloc(sizeof *r->cur))) {
        free(r);
        r = NULL;
    }
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", sink->name);
        return NULL;
    }
    r->cur->n = 0;
    r->sink = sink;
    r->state = state;
    return r;
}

static int start(nx_sink_runner *r, nxpq_error *err)
{
    if (!(r->spare = malloc(sizeof *r->spare))) {
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", r->sink->name);
        return -1;
    }
    r->spare->n = 0;
    if (pthread_mutex_init(&r->lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&r->cv, NULL) != 0) {
        pthread_mutex_destroy(&r->lock);
        goto fail;
    }
    if (pthread_create(&r->tid, NULL, run, r) != 0) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->lock);
        goto fail;
    }
    r->started = true;
    return 0;
fail:
    free(r->spare);
    r->spare = NULL;
    snprintf(err->msg, sizeof err->msg, "%s: cannot start a thread", r->sink->name);
    return -1;
}

int nx_sink_runner_event(nx_sink_runner *r, const nx_device_event *ev, nxpq_error *err)
{
    ev_batch *b = r->cur;
    size_t i = b->n++;
    b->rec[i] = *ev->rec;
    b->ev[i] = *ev;
    b->ev[i].rec = &b->rec[i];
    if (b->n < BATCH_EVENTS)
        return 0;
    if (!r->started) {
        if (start(r, err) != 0)
            return -1;
    } else if (wait_idle(r, err) != 0) {
        return -1;
    }
    r->cur = r->spare;
    r->spare = b;
    pthread_mutex_lock(&r->lock);
    r->pending = b;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->lock);
    return 0;
}

int nx_sink_runner_drain(nx_sink_runner *r, nxpq_error *err)
{
    if (r->started) {
        int rc = wait_idle(r, err);
        stop_thread(r);
        if (rc != 0)
            return -1;
    }
    return deliver(r, r->cur, err);
}

void nx_sink_runner_free(nx_sink_runner *r)
{
    if (!r)
        return;
    if (r->started) {
        stop_thread(r);
    }
    if (r->spare) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->lock);
    }
    free(r->cur);
    free(r->spare);
    free(r);
}
