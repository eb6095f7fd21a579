/*
 * reorder.h — a min-heap of fixed-size items ordered by a time key, for sinks
 * that finish a row later than the record that starts it.
 *
 * The pipeline delivers records by start time, but a DMA block's row is known
 * only at its last packet and an ActiveTime interval only when the engine goes
 * idle. Such rows are pushed here with their start time as key and popped once
 * the sink knows no row still open can start earlier (its watermark), so the
 * table stays sorted by start time. Ties pop in push order, so output is
 * deterministic. Memory is bounded by the rows in flight, not by the table.
 *
 *     nx_reorder q; nx_reorder_init(&q, sizeof(my_row));
 *     nx_reorder_push(&q, start_ns, &row);                 // -1: out of memory
 *     while (nx_reorder_ready(&q, watermark)) { write(nx_reorder_top(&q)); nx_reorder_pop(&q); }
 *     nx_reorder_free(&q);
 */
#ifndef NX_REORDER_H
#define NX_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nx_reorder {
    size_t item_size;
    size_t n, cap;
    uint64_t next_seq;
    unsigned char *slots;            /* n x (key, seq, item) */
} nx_reorder;

void nx_reorder_init(nx_reorder *q, size_t item_size);
int nx_reorder_push(nx_reorder *q, int64_t key, const void *item);
/* True when the earliest item's key is <= watermark (INT64_MAX: anything left). */
bool nx_reorder_ready(const nx_reorder *q, int64_t watermark);
const void *nx_reorder_top(const nx_reorder *q);       /* NULL when empty */
int64_t nx_reorder_top_key(const nx_reorder *q);        /* INT64_MAX when empty */
void nx_reorder_pop(nx_reorder *q);
size_t nx_reorder_size(const nx_reorder *q);
void nx_reorder_free(nx_reorder *q);

#endif
