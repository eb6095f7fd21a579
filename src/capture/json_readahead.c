/*
 * json_readahead.c — see json_readahead.h.
 *
 * A ring of blocks: the worker fills the block at `tail` while fewer than all
 * are queued, the reader drains the block at `head`. A queued block belongs to
 * the reader alone until it is handed back, so the copies run outside the lock.
 */
#include "capture/json_readahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct block {
    char *data;
    size_t len;
} block;

struct nx_readahead {
    nx_gzip_input *src;
    size_t block_size;
    unsigned nblocks;
    block *ring;
    pthread_t worker;
    bool started;             /* worker runs (and mu, changed are set up) */
    pthread_mutex_t mu;
    pthread_cond_t changed;   /* a block queued or handed back, or the end */
    unsigned head, count;     /* queued blocks: ring[head], ... (count of them) */
    size_t head_used;         /* bytes of ring[head] already read */
    bool done;                /* the worker has finished: end of file or failed */
    bool failed;
    bool quit;                /* the reader stopped early */
    nx_error why;
};

/* Bytes asked of gzip_input at a time: a read that meets a damaged stream
 * fails whole, so smaller reads deliver more of the text before the damage. */
#define READ_STEP (64u * 1024)

/* Fills b from the file: false on an error (why filled; b->len may still hold
 * bytes before it); b->len short of the block at the end of the file. */
static bool fill(nx_readahead *ra, block *b, nx_error *why)
{
    b->len = 0;
    while (b->len < ra->block_size) {
        size_t want = ra->block_size - b->len;
        long n = nx_gzip_input_read(ra->src, b->data + b->len, want < READ_STEP ? want : READ_STEP, why);
        if (n < 0)
            return false;
        if (n == 0)
            break;
        b->len += (size_t)n;
    }
    return true;
}

static void *work(void *arg)
{
    nx_readahead *ra = arg;
    unsigned tail = 0;
    for (;;) {
        pthread_mutex_lock(&ra->mu);
        while (ra->count == ra->nblocks && !ra->quit)
            pthread_cond_wait(&ra->changed, &ra->mu);
        bool quit = ra->quit;
        pthread_mutex_unlock(&ra->mu);
        if (quit)
            return NULL;
        nx_error why = {0};
        block *b = &ra->ring[tail];
        bool ok = fill(ra, b, &why);
        pthread_mutex_lock(&ra->mu);
        if (b->len > 0) {
            ra->count++;
            tail = (tail + 1) % ra->nblocks;
        }
        if (!ok) {
            ra->failed = true;
            ra->why = why;
        }
        ra->done = !ok || b->len < ra->block_size;
        pthread_cond_broadcast(&ra->changed);
        pthread_mutex_unlock(&ra->mu);
        if (ra->done)   /* only this thread writes done */
            return NULL;
    }
}

nx_readahead *nx_readahead_start(nx_gzip_input *src, size_t block_size, unsigned blocks, nx_error *why)
{
    nx_readahead *ra = calloc(1, sizeof *ra);
    if (!ra) {
        nx_error_set(why, "out of memory");
        return NULL;
    }
    *ra = (nx_readahead){.src = src, .block_size = block_size, .nblocks = blocks};
    ra->ring = calloc(blocks, sizeof *ra->ring);
    bool ok = ra->ring != NULL;
    for (unsigned i = 0; ok && i < blocks; i++)
        ok = (ra->ring[i].data = malloc(block_size)) != NULL;
    if (!ok) {
        nx_error_set(why, "out of memory for %u read-ahead blocks of %zu bytes", blocks, block_size);
        nx_readahead_stop(ra);
        return NULL;
    }
    pthread_mutex_init(&ra->mu, NULL);
    pthread_cond_init(&ra->changed, NULL);
    ra->started = pthread_create(&ra->worker, NULL, work, ra) == 0;
    if (!ra->started) {
        nx_error_set(why, "cannot start the read-ahead thread");
        pthread_mutex_destroy(&ra->mu);
        pthread_cond_destroy(&ra->changed);
        nx_readahead_stop(ra);
        return NULL;
    }
    return ra;
}

long nx_readahead_read(nx_readahead *ra, char *dst, size_t cap, nx_error *why)
{
    pthread_mutex_lock(&ra->mu);
    while (ra->count == 0 && !ra->done)
        pthread_cond_wait(&ra->changed, &ra->mu);
    if (ra->count == 0) {
        bool failed = ra->failed;
        if (failed && why)
            *why = ra->why;
        pthread_mutex_unlock(&ra->mu);
        return failed ? -1 : 0;
    }
    pthread_mutex_unlock(&ra->mu);
    block *b = &ra->ring[ra->head];
    size_t n = b->len - ra->head_used;
    if (n > cap)
        n = cap;
    memcpy(dst, b->data + ra->head_used, n);
    ra->head_used += n;
    if (ra->head_used == b->len) {
        pthread_mutex_lock(&ra->mu);
        ra->head = (ra->head + 1) % ra->nblocks;
        ra->count--;
        ra->head_used = 0;
        pthread_cond_broadcast(&ra->changed);
        pthread_mutex_unlock(&ra->mu);
    }
    return (long)n;
}

void nx_readahead_stop(nx_readahead *ra)
{
    if (!ra)
        return;
    if (ra->started) {
        pthread_mutex_lock(&ra->mu);
        ra->quit = true;
        pthread_cond_broadcast(&ra->changed);
        pthread_mutex_unlock(&ra->mu);
        pthread_join(ra->worker, NULL);
        pthread_mutex_destroy(&ra->mu);
        pthread_cond_destroy(&ra->changed);
    }
    for (unsigned i = 0; ra->ring && i < ra->nblocks; i++)
        free(ra->ring[i].data);
    free(ra->ring);
    free(ra);
}
