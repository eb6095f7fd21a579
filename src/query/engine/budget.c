/* budget.c — a query's memory budget (see budget.h). */
#include "query/engine/budget.h"

#include <errno.h>
#include <stdlib.h>

int nx_budget_init(nx_budget *b, nx_error *err)
{
    uint64_t mib = NX_BUDGET_DEFAULT_MIB;
    const char *v = getenv("NXPROF_QUERY_MEMORY_MIB");
    if (v) {
        char *end;
        errno = 0;
        unsigned long long m = strtoull(v, &end, 10);
        if (errno || v[0] < '0' || v[0] > '9' || *end || m < 1 || m > NX_BUDGET_MAX_MIB)
            return nx_error_set(err, "NXPROF_QUERY_MEMORY_MIB: '%.64s' is not a whole number of MiB from 1 to %u", v,
                                  NX_BUDGET_MAX_MIB);
        mib = m;
    }
    atomic_init(&b->used, 0);
    b->limit = mib << 20;
    return 0;
}

bool nx_budget_take(nx_budget *b, uint64_t bytes)
{
    if (!b)
        return true;
    /* Add first, then undo: concurrent takers never see room that is not there. */
    uint64_t used = atomic_fetch_add(&b->used, bytes) + bytes;
    if (used >= bytes && used <= b->limit)
        return true;
    atomic_fetch_sub(&b->used, bytes);
    return false;
}

void nx_budget_give(nx_budget *b, uint64_t bytes)
{
    if (b)
        atomic_fetch_sub(&b->used, bytes);
}
