/*
 * fork_join.h — run n independent pieces of work at once, one thread each, and
 * wait for all of them: for a query that shares a table out among workers
 * (query/engine/row_split.h), each writing only its own result slot.
 *
 * The caller runs piece 0 itself. A piece whose thread cannot be started runs
 * on the caller after piece 0 instead, so every piece always runs once and the
 * results never depend on how many threads could be had.
 */
#ifndef NX_FORK_JOIN_H
#define NX_FORK_JOIN_H

#include <stddef.h>

/* Most pieces per call. */
#define NX_FORK_JOIN_MAX 64

typedef void (*nx_fork_join_fn)(void *ctx, size_t piece);

/* Calls fn(ctx, i) for every i < n (n <= NX_FORK_JOIN_MAX), concurrently, and
 * returns once all have returned. */
void nx_fork_join(size_t n, nx_fork_join_fn fn, void *ctx);

/* The processors online (at least 1). */
size_t nx_cpu_count(void);

#endif
