/*
 * handoff.h — a worker thread that takes items from its owner through a short
 * queue: the owner fills one buffer while the worker consumes those given
 * before. Used where a producer must not wait on slow per-item work: a table's
 * row batches going to the Parquet writer (src/process/row.c, a few large
 * batches), a sink's event batches (src/process/device/sink_runner.c, a deeper queue of
 * small ones, so a sink that is briefly slower than the pipeline does not stall
 * it, nor a briefly idle sink leave a core idle).
 *
 * Depth d: at most d items are given and not yet finished. When
 * nx_handoff_give() returns, the items finished are all but the d newest at
 * most, so an owner cycling through d + 1 buffers in order may refill the
 * oldest. The worker calls fn(ctx, item, err) for each item given, in order,
 * never two at once. After the first failure it skips the work but still
 * releases the items (calls discard when set), and the failure is returned by
 * the owner's next nx_handoff_give() or nx_handoff_wait(). One owner thread per
 * handoff.
 */
#ifndef NX_HANDOFF_H
#define NX_HANDOFF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "util/error.h"

#define NX_HANDOFF_MAX_DEPTH 32

typedef int (*nx_handoff_fn)(void *ctx, void *item, nx_error *err);
typedef void (*nx_handoff_discard_fn)(void *ctx, void *item);

typedef struct nx_handoff {
    nx_handoff_fn fn;
    nx_handoff_discard_fn discard;   /* may be NULL */
    void *ctx;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    void *queue[NX_HANDOFF_MAX_DEPTH];  /* given, not yet taken by the worker */
    size_t depth, head, n;
    bool busy;                       /* the worker holds an item it took */
    bool started, stop;
    int rc;                          /* the first failure */
    nx_error err;
} nx_handoff;

/* Starts the worker with a queue of `depth` items (1 .. NX_HANDOFF_MAX_DEPTH).
 * 0, or -1 (no thread could be started, or a bad depth; nothing to stop). */
int nx_handoff_start(nx_handoff *h, size_t depth, nx_handoff_fn fn, nx_handoff_discard_fn discard, void *ctx);
/* Waits until fewer than `depth` items are unfinished, then gives it item. -1
 * with the worker's first failure in err (the item is not given). */
int nx_handoff_give(nx_handoff *h, void *item, nx_error *err);
/* Waits until every item given is finished. -1 with the first failure in err. */
int nx_handoff_wait(nx_handoff *h, nx_error *err);
/* Lets the worker finish (or discard, after a failure) every item given, stops
 * and joins it. Safe when not started. */
void nx_handoff_stop(nx_handoff *h);

#endif
