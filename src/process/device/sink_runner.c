/* sink_runner.c — shared event batches for the sinks' threads (see sink_runner.h). */
#include "process/device/sink_runner.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "process/thread_name.h"
#include "util/handoff.h"

/* Events per batch, and batches in the ring: a sink may hold all but the one
 * being filled, so a sink briefly slower than the pipeline does not stall it
 * (nor a briefly idle one leave a core idle). Sinks work in bursts (a roll-up
 * adding a batch of collected members, a table handing rows to its writer),
 * and a ring of 8 batches (1.7 MB) left a core idle 15-20% of a run while the
 * pipeline waited for the one sink in a burst; 32 (32 x 2048 events, ~7 MB,
 * shared by every sink) halves that idle time. */
#define BATCH_EVENTS 2048                /* at most 65,536: deliver() picks with uint16_t */
#define RING NX_HANDOFF_MAX_DEPTH

typedef struct ev_batch {
    nx_device_event ev[BATCH_EVENTS];
    nx_trace_record rec[BATCH_EVENTS];   /* ev[i].rec points here */
    uint8_t kind[BATCH_EVENTS];          /* rec[i].kind, packed for the sinks' selection */
    size_t n;
    unsigned kinds;                      /* NX_KIND_BIT()s of the events it holds */
    unsigned users;                      /* sinks given it and not done; guarded by the runner's lock */
} ev_batch;

typedef struct sink_slot {
    const nx_device_sink *sink;
    void *state;
    struct nx_sink_runner *r;
    bool started;                        /* its thread runs */
    bool threaded;                       /* it was given a full batch: its events go to the thread */
    nx_handoff h;                        /* the sink's thread */
} sink_slot;

struct nx_sink_runner {
    sink_slot *slots;
    size_t n;
    unsigned wanted;                     /* kinds some sink takes */
    ev_batch *ring[RING];
    size_t cur;                          /* ring[cur] is being filled */
    pthread_mutex_t lock;                /* users of every batch */
    pthread_cond_t done;                 /* a batch's users reached 0 */
};

/* Gives the slot's sink the events of b it wants; stops at its first error.
 * The wanted ones are picked first, without a branch per event (kinds
 * interleave irregularly: a test per event mispredicted often, for each of
 * the dozen sinks). */
static int deliver(const sink_slot *s, const ev_batch *b, nx_error *err)
{
    unsigned kinds = s->sink->kinds;
    uint16_t pick[BATCH_EVENTS];
    size_t m = 0;
    if ((b->kinds & ~kinds) == 0) {
        for (size_t i = 0; i < b->n; i++)
            pick[i] = (uint16_t)i;
        m = b->n;
    } else {
        for (size_t i = 0; i < b->n; i++) {
            pick[m] = (uint16_t)i;
            m += (kinds >> b->kind[i]) & 1u;
        }
    }
    for (size_t j = 0; j < m; j++)
        if (s->sink->event(s->state, &b->ev[pick[j]], err) != 0)
            return -1;
    return 0;
}

static void release(nx_sink_runner *r, ev_batch *b)
{
    pthread_mutex_lock(&r->lock);
    if (--b->users == 0)
        pthread_cond_broadcast(&r->done);
    pthread_mutex_unlock(&r->lock);
}

static int deliver_item(void *ctx, void *item, nx_error *err)
{
    sink_slot *s = ctx;
    nx_error e = {0};
    int rc = deliver(s, item, &e);
    if (rc != 0)
        nx_error_set(err, "%s", e.msg);
    else
        release(s->r, item);   /* on failure the handoff discards it: released there */
    return rc;
}

static void discard_item(void *ctx, void *item)
{
    sink_slot *s = ctx;
    release(s->r, item);
}

nx_sink_runner *nx_sink_runner_new(const nx_device_sink *const *sinks, void *const *states, size_t n,
                                   nx_error *err)
{
    nx_sink_runner *r = calloc(1, sizeof *r);
    if (!r || !(r->slots = calloc(n + 1, sizeof *r->slots)) || !(r->ring[0] = calloc(1, sizeof *r->ring[0]))) {
        if (r)
            free(r->slots);
        free(r);
        snprintf(err->msg, sizeof err->msg, "out of memory for the sinks' event batches");
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->done, NULL);
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        r->slots[i] = (sink_slot){.sink = sinks[i], .state = states[i], .r = r};
        r->wanted |= sinks[i]->kinds;
    }
    return r;
}

/* Gives the full batch ring[cur] to every sink that wants one of its kinds,
 * starting their threads (and the rest of the ring) on first use, then waits
 * until the next batch in the ring is free. */
static int hand_out(nx_sink_runner *r, nx_error *err)
{
    ev_batch *b = r->ring[r->cur];
    size_t next = (r->cur + 1) % RING;
    if (!r->ring[next]) {
        for (size_t k = 1; k < RING; k++)
            if (!(r->ring[k] = calloc(1, sizeof *r->ring[k]))) {
                snprintf(err->msg, sizeof err->msg, "out of memory for the sinks' event batches");
                return -1;
            }
    }
    for (size_t i = 0; i < r->n; i++) {
        sink_slot *s = &r->slots[i];
        if (!(s->sink->kinds & b->kinds))
            continue;
        if (!s->started) {
            if (nx_handoff_start(&s->h, RING, deliver_item, discard_item, s) != 0) {
                snprintf(err->msg, sizeof err->msg, "%s: cannot start a thread", s->sink->name);
                return -1;
            }
            s->started = s->threaded = true;
            char name[64];
            snprintf(name, sizeof name, "sink:%s", s->sink->name);
            nx_thread_name(s->h.tid, name);
        }
        pthread_mutex_lock(&r->lock);
        b->users++;
        pthread_mutex_unlock(&r->lock);
        if (nx_handoff_give(&s->h, b, err) != 0) {
            release(r, b);   /* not given */
            return -1;
        }
    }
    r->cur = next;
    b = r->ring[next];
    pthread_mutex_lock(&r->lock);
    while (b->users)
        pthread_cond_wait(&r->done, &r->lock);
    pthread_mutex_unlock(&r->lock);
    b->n = 0;
    b->kinds = 0;
    return 0;
}

int nx_sink_runner_event(nx_sink_runner *r, const nx_device_event *ev, nx_error *err)
{
    unsigned bit = NX_KIND_BIT(ev->rec->kind);
    if (!(r->wanted & bit))
        return 0;
    ev_batch *b = r->ring[r->cur];
    size_t i = b->n++;
    b->rec[i] = *ev->rec;
    b->ev[i] = *ev;
    b->ev[i].rec = &b->rec[i];
    b->kind[i] = ev->rec->kind;
    b->kinds |= bit;
    return b->n < BATCH_EVENTS ? 0 : hand_out(r, err);
}

/* Stops every thread; with check, returns -1 and the first sink failure in err. */
static int stop_all(nx_sink_runner *r, bool check, nx_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < r->n; i++) {
        sink_slot *s = &r->slots[i];
        if (!s->started)
            continue;
        if (check && rc == 0 && nx_handoff_wait(&s->h, err) != 0)
            rc = -1;
        nx_handoff_stop(&s->h);
        s->started = false;
    }
    return rc;
}

int nx_sink_runner_drain(nx_sink_runner *r, nx_error *err)
{
    /* Sinks with a thread get the last, partial batch there, after their
     * earlier ones; the others have had no batch and take it here. */
    ev_batch *b = r->ring[r->cur];
    for (size_t i = 0; i < r->n; i++) {
        sink_slot *s = &r->slots[i];
        if (!s->started || !(s->sink->kinds & b->kinds))
            continue;
        pthread_mutex_lock(&r->lock);
        b->users++;
        pthread_mutex_unlock(&r->lock);
        if (nx_handoff_give(&s->h, b, err) != 0) {
            release(r, b);
            stop_all(r, false, err);
            return -1;
        }
    }
    if (stop_all(r, true, err) != 0)
        return -1;
    for (size_t i = 0; i < r->n; i++) {
        sink_slot *s = &r->slots[i];
        if (!s->threaded && (s->sink->kinds & b->kinds) && deliver(s, b, err) != 0)
            return -1;
    }
    b->n = 0;
    return 0;
}

void nx_sink_runner_free(nx_sink_runner *r)
{
    if (!r)
        return;
    nx_error ignored;
    stop_all(r, false, &ignored);
    for (size_t k = 0; k < RING; k++)
        free(r->ring[k]);
    pthread_cond_destroy(&r->done);
    pthread_mutex_destroy(&r->lock);
    free(r->slots);
    free(r);
}
