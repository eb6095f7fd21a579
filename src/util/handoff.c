/* handoff.c — one-item-at-a-time worker thread (see handoff.h). */
#include "util/handoff.h"

#include <stdio.h>
#include <string.h>

static void *run(void *arg)
{
    nx_handoff *h = arg;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->pending && !h->stop)
            pthread_cond_wait(&h->cv, &h->lock);
        if (!h->pending)
            break;
        void *item = h->pending;
        bool skip = h->rc != 0;
        pthread_mutex_unlock(&h->lock);
        char e[NX_HANDOFF_ERR] = "";
        int rc = skip ? 0 : h->fn(h->ctx, item, e, sizeof e);
        if ((skip || rc != 0) && h->discard)
            h->discard(h->ctx, item);
        pthread_mutex_lock(&h->lock);
        if (rc != 0 && h->rc == 0) {
            h->rc = rc;
            memcpy(h->err, e, sizeof e);
        }
        h->pending = NULL;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

int nx_handoff_start(nx_handoff *h, nx_handoff_fn fn, nx_handoff_discard_fn discard, void *ctx)
{
    memset(h, 0, sizeof *h);
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

int nx_handoff_wait(nx_handoff *h, char *err, size_t errlen)
{
    pthread_mutex_lock(&h->lock);
    while (h->pending)
        pthread_cond_wait(&h->cv, &h->lock);
    int rc = h->rc;
    if (rc != 0)
        snprintf(err, errlen, "%s", h->err);
    pthread_mutex_unlock(&h->lock);
    return rc != 0 ? -1 : 0;
}

int nx_handoff_give(nx_handoff *h, void *item, char *err, size_t errlen)
{
    if (nx_handoff_wait(h, err, errlen) != 0)
        return -1;
    pthread_mutex_lock(&h->lock);
    h->pending = item;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->lock);
    return 0;
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
