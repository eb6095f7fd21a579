/*
 * fork_join.c — one thread per piece (fork_join.h). Threads rather than a
 * standing pool: a query's pieces each scan millions of rows, so a thread's
 * start (tens of microseconds) is lost in the noise, and nothing idles
 * between queries.
 */
#include "util/fork_join.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

typedef struct piece {
    nx_fork_join_fn fn;
    void *ctx;
    size_t i;
} piece;

static void *piece_main(void *arg)
{
    piece *p = arg;
    p->fn(p->ctx, p->i);
    return NULL;
}

void nx_fork_join(size_t n, nx_fork_join_fn fn, void *ctx)
{
    pthread_t tid[NX_FORK_JOIN_MAX];
    piece pieces[NX_FORK_JOIN_MAX];
    bool started[NX_FORK_JOIN_MAX] = {false};
    for (size_t i = 1; i < n; i++) {
        pieces[i] = (piece){fn, ctx, i};
        started[i] = pthread_create(&tid[i], NULL, piece_main, &pieces[i]) == 0;
    }
    if (n > 0)
        fn(ctx, 0);
    for (size_t i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            fn(ctx, i);
    }
}

size_t nx_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}
