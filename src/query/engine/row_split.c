/*
 * row_split.c — the spans of row_split.h.
 */
#include "query/engine/row_split.h"

#include "util/fork_join.h"

size_t nx_row_split_count(int64_t rows, int threads)
{
    size_t n;
    if (threads > 0) {
        n = (size_t)threads;
    } else {
        size_t groups = (size_t)((rows + NX_ROW_SPLIT_GROUP_ROWS - 1) / NX_ROW_SPLIT_GROUP_ROWS);
        size_t cpus = nx_cpu_count();
        n = groups < cpus ? groups : cpus;
    }
    if (n > NX_FORK_JOIN_MAX)
        n = NX_FORK_JOIN_MAX;
    if ((int64_t)n > rows)
        n = (size_t)rows;
    return n ? n : 1;
}

void nx_row_split_span(int64_t rows, size_t n, size_t i, int64_t *begin, int64_t *end)
{
    /* rows * (i + 1) can pass 2^63; in 128 bits it cannot (n <= 64). */
    __int128 r = rows;
    *begin = (int64_t)(r * (__int128)i / (__int128)n);
    *end = (int64_t)(r * (__int128)(i + 1) / (__int128)n);
}
