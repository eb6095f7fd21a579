/*
 * summary_table.h — the Summary row, held open until the profile's other
 * tables are written.
 *
 * Summary.total_row_count is the number of rows of every table of the profile,
 * Summary's own row included, so the row can only be finished after the last
 * table closes. The Summary sink (summary_table.c) fills every other field in
 * its finish() and, when the run gives it a hold (nx_process_ctx.summary_hold),
 * leaves the row there unfinished; the processor completes it last, from the
 * tally of rows of the tables closed through the profile's nx_table_dest plus
 * the SchemaFields rows. Without a hold the row is written at once with
 * total_row_count null.
 */
#ifndef NX_SUMMARY_TABLE_H
#define NX_SUMMARY_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "process/row.h"
#include "util/error.h"

typedef struct nx_summary_hold {
    bool held;                       /* r is open, with one row begun and filled */
    nx_row r;
    size_t c_total;                  /* total_row_count's column */
} nx_summary_hold;

/* Puts total_row_count = other_rows + the Summary's own rows, ends the row
 * and closes the table (counted in *tables). Nothing to do (0) when nothing is
 * held. */
int nx_summary_hold_complete(nx_summary_hold *h, uint64_t other_rows, unsigned *tables, nx_error *err);
/* Drops a held row without writing it (error paths); safe when nothing is held. */
void nx_summary_hold_discard(nx_summary_hold *h);

#endif
