/*
 * row_split.h — how a whole-table query shares a table out among threads:
 * into n spans of consecutive rows (rows numbered across the table's files,
 * profile_table.h nx_profile_scan_options.rows_begin), one per worker.
 *
 * n = `threads` when it is > 0, else min(processors, row groups), the row
 * groups counted as ceil(rows / NX_ROW_SPLIT_GROUP_ROWS) (the writer's row
 * group size; a smaller piece is not worth a thread); always at least 1, at
 * most NX_FORK_JOIN_MAX and at most the row count. Span i is rows
 * [rows * i / n, rows * (i + 1) / n): spans are in table order, so results
 * merged in span order are in file order.
 */
#ifndef NX_QUERY_ROW_SPLIT_H
#define NX_QUERY_ROW_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile_table.h"

#define NX_ROW_SPLIT_GROUP_ROWS (1 << 20)

/* The number of spans for a table of `rows` rows (rule above). */
size_t nx_row_split_count(int64_t rows, int threads);
/* Span i of n over `rows` rows: [*begin, *end). */
void nx_row_split_span(int64_t rows, size_t n, size_t i, int64_t *begin, int64_t *end);

#endif
