/*
 * handoff.h — a worker thread that takes one item at a time from its owner:
 * the owner fills one buffer while the worker consumes the other (double
 * buffering). Used where a producer must not wait on slow per-item work: a
 * table's row batches going to the Parquet writer (src/process/row.c), a sink's
 * event batches (src/process/sink_runner.c).
 *
 * The worker calls fn(ctx, item, err) for each item given, in order, never two
 * at once. After the first failure it skips the work but still releases the
 * items (calls discard when set), and the failure is returned by the owner's next
 * nx_handoff_give() or nx_handoff_wait(). One owner thread per handoff.
 */
#ifndef NX_HANDOFF_H
#define NX_HANDOFF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define NX_HANDOFF_ERR 512

typedef int (*nx_handoff_fn)(void *ctx, void *item, char *err, size_t errlen);
typedef void (*nx_handoff_discard_fn)(void *ctx, void *item);

typedef struct nx_handoff {
    nx_handoff_fn fn;
    nx_handoff_discard_fn discard;   /* may be NULL */
    void *ctx;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    void *pending;                   /* owned by the worker until it sets it back to NULL */
    bool started, stop;
    int rc;                          /* the first failure */
    char err[NX_HANDOFF_ERR];
} nx_handoff;

/* Starts the worker. 0, or -1 (no thread could be started; nothing to stop). */
int nx_handoff_start(nx_handoff *h, nx_handoff_fn fn, nx_handoff_discard_fn discard, void *ctx);
/* Waits until the worker is idle, then gives it item. -1 with the worker's first
 * failure in err (the item is not given). */
int nx_handoff_give(nx_handoff *h, void *item, char *err, size_t errlen);
/* Waits until the worker is idle. -1 with its first failure in err. */
int nx_handoff_wait(nx_handoff *h, char *err, size_t errlen);
/* Lets the worker finish the item it holds, stops and joins it. Safe when not started. */
void nx_handoff_stop(nx_handoff *h);

#endif
