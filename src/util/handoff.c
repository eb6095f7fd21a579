/* handoff.c — a worker thread fed through a short queue (see handoff.h). */
#include "util/handoff.h"

#include <stdio.h>
#include <string.h>

static void *run(void *arg)
{
    nx_handoff *h = arg;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->n && !h->stop)
            pthread_cond_wait(&h->cv, &h->lock);
        if (!h->n)
            break;
        void *item = h->queue[h->head];
        h->head = (h->head + 1) % h->depth;
        h->n--;
        h->busy = true;
        bool skip = h->rc != 0;
        pthread_mutex_unlock(&h->lock);
        nx_error e = {0};
        int rc = skip ? 0 : h->fn(h->ctx, item, &e);
        if ((skip || rc != 0) && h->discard)
            h->discard(h->ctx, item);
        pthread_mutex_lock(&h->lock);
        if (rc != 0 && h->rc == 0) {
            h->rc = rc;
            h->err = e;
        }
        h->busy = false;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int nx_handoff_start(nx_handoff *h, size_t depth, nx_handoff_fn fn, nx_handoff_discard_fn discard, void *ctx)
{
    memset(h, 0, sizeof *h);
    if (depth < 1 || depth > NX_HANDOFF_MAX_DEPTH)
        return -1;
    h->depth = depth;
    h->fn = fn;
    h->discard = discard;
    h->ctx = ctx;
    if (pthread_mutex_init(&h->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&h->cv, NULL) != 0) {
        pthread_mutex_destroy(&h->lock);
        return -1;
    }
    if (pthread_create(&h->tid, NULL, run, h) != 0) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->lock);
        return -1;
    }
    h->started = true;
    return 0;
}

/* Waits, holding the lock, until at most `unfinished` items are; after a
 * failure, until the worker has released every item (so the owner may reuse
 * them all). Returns the first failure, its message in err. */
static int wait_until(nx_handoff *h, size_t unfinished, nx_error *err)
{
    while (h->n + h->busy > (h->rc ? 0 : unfinished))
        pthread_cond_wait(&h->cv, &h->lock);
    if (h->rc != 0 && err)
        *err = h->err;
    return h->rc;
}

int nx_handoff_wait(nx_handoff *h, nx_error *err)
{
    pthread_mutex_lock(&h->lock);
    int rc = wait_until(h, 0, err);
    pthread_mutex_unlock(&h->lock);
    return rc != 0 ? -1 : 0;
}

int nx_handoff_give(nx_handoff *h, void *item, nx_error *err)
{
    pthread_mutex_lock(&h->lock);
    int rc = wait_until(h, h->depth - 1, err);
    if (rc == 0) {
        h->queue[(h->head + h->n) % h->depth] = item;
        h->n++;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->lock);
    return rc != 0 ? -1 : 0;
}

void nx_handoff_stop(nx_handoff *h)
{
    if (!h->started)
        return;
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->tid, NULL);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->lock);
    h->started = false;
}
