/*
 * budget.h — a query's memory budget: the bytes a sampled pass (sampled_pass.h)
 * may hold in its pixel buckets, shared by its threads, so that no window,
 * width or nesting makes one request of the server (or one export) allocate
 * without bound. A pass that would need more fails with NX_QUERY_OVER_BUDGET
 * and an error saying so; nothing else is affected.
 *
 * Why the buckets: they are what grows with a request's parameters (width x
 * tracks x depth levels, window.h); everything else a sampled pass holds is
 * at most one entry per bucket (the kept events) or fixed. The limit is
 * NXPROF_QUERY_MEMORY_MIB MiB from the environment (1 .. 1048576), else
 * NX_BUDGET_DEFAULT_MIB. Memory is taken as buckets are allocated and given
 * back when they are freed, so the budget bounds a pass's peak.
 */
#ifndef NX_QUERY_BUDGET_H
#define NX_QUERY_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "parquet/parquet.h"

#define NX_BUDGET_DEFAULT_MIB 256u
#define NX_BUDGET_MAX_MIB (1u << 20)
/* What a query returns when it would exceed its budget (err says so). */
enum { NX_QUERY_OVER_BUDGET = -2 };

typedef struct nx_budget {
    _Atomic uint64_t used;
    uint64_t limit;                  /* bytes */
} nx_budget;

/* A budget of NXPROF_QUERY_MEMORY_MIB (else the default) with nothing used.
 * 0, or -1 with err naming the variable when its value is not a whole number
 * of MiB in range. */
int nx_budget_init(nx_budget *b, nx_error *err);
/* Takes `bytes` from b: true, or false (nothing taken) when that would exceed
 * its limit. Any thread. A NULL budget has no limit. */
bool nx_budget_take(nx_budget *b, uint64_t bytes);
/* Gives back bytes taken. */
void nx_budget_give(nx_budget *b, uint64_t bytes);

#endif
