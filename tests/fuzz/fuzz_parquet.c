/*
 * fuzz_parquet.c — libFuzzer harness for nxprof's Parquet reader.
 *
 * Each input is opened as a Parquet file with nxpq_reader_open_memory; every
 * accessor is exercised, then all supported columns are scanned twice: whole,
 * and pruned by a range (taken from the input's first bytes) on the first
 * INT32/INT64 column, with a small odd batch size so batches cross pages.
 * Every batch is checked for the invariants parquet.h promises (offsets that
 * never go backwards or past their arrays), and every byte of it is read so
 * AddressSanitizer sees any out-of-bounds array. A violated invariant aborts.
 *
 * Built and run by `make fuzz` (tests/fuzz/run.sh); seeds in tests/fuzz/corpus/parquet/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/parquet.h"

/* Keeps one input's work small: a tiny file can legitimately describe
 * millions of rows (runs of nulls cost a few bytes). */
#define MAX_ROWS_PER_SCAN 200000

static void check(int ok)
{
    if (!ok)
        abort();
}

static uint64_t sum_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += b[i];
    return s;
}

/* Checks offsets[0..n] rise and stay within the data; returns the byte count. */
static uint64_t check_offsets(const uint64_t *off, size_t n)
{
    check(off != NULL);
    for (size_t i = 0; i < n; i++)
        check(off[i] <= off[i + 1]);
    return off[n] - off[0];
}

static uint64_t touch_column(const nxpq_column_data *c, size_t rows)
{
    uint64_t s = c->valid ? sum_bytes(c->valid, rows) : 0;
    size_t n = rows, width = 0;
    if (c->type == NXPQ_LIST_INT64 || c->type == NXPQ_LIST_STRING) {
        check(c->list_offsets[0] == 0);
        n = (size_t)check_offsets(c->list_offsets, rows);
        if (c->element_valid)
            s += sum_bytes(c->element_valid, n);
    }
    switch (c->type) {
    case NXPQ_BOOLEAN: width = 1; break;
    case NXPQ_INT32:
    case NXPQ_FLOAT: width = 4; break;
    case NXPQ_INT64:
    case NXPQ_DOUBLE:
    case NXPQ_LIST_INT64: width = 8; break;
    default: break;
    }
    if (width)
        return s + sum_bytes(c->values.b, n * width);
    check(c->offsets[0] == 0);
    return s + sum_bytes(c->data, (size_t)check_offsets(c->offsets, n));
}

static void scan(nxpq_reader *r, const nxpq_range *range, size_t batch_rows)
{
    nxpq_scan_options o;
    memset(&o, 0, sizeof o);
    o.ranges = range;
    o.n_ranges = range ? 1 : 0;
    o.batch_rows = batch_rows;
    nx_error err;
    nxpq_scan *s = nxpq_scan_open(r, &o, &err);
    if (!s)
        return;
    const nxpq_batch *b;
    uint64_t rows = 0, sink = 0;
    int64_t last = -1;
    while (rows < MAX_ROWS_PER_SCAN && nxpq_scan_next(s, &b, &err) == 1) {
        check(b->n_rows > 0 && b->n_rows <= batch_rows && b->first_row > last);
        last = b->first_row + (int64_t)b->n_rows - 1;
        for (size_t j = 0; j < b->n_columns; j++)
            sink += touch_column(&b->columns[j], b->n_rows);
        rows += b->n_rows;
    }
    nxpq_scan_stats st;
    nxpq_scan_get_stats(s, &st);
    check(st.row_groups_read <= st.row_groups_total && st.pages_read <= st.pages_total);
    nxpq_scan_close(s);
    volatile uint64_t keep = sink;
    (void)keep;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nx_error err;
    nxpq_reader *r = nxpq_reader_open_memory(data, size, "fuzz.parquet", &err);
    if (!r)
        return 0;
    int range_col = -1;
    for (size_t i = 0; i < nxpq_reader_num_columns(r); i++) {
        const nxpq_column_info *ci = nxpq_reader_column(r, i);
        check(nxpq_reader_find_column(r, ci->name) >= 0);
        if (range_col < 0 && (ci->type == NXPQ_INT32 || ci->type == NXPQ_INT64))
            range_col = (int)i;
    }
    (void)nxpq_reader_metadata(r, "ARROW:schema");
    (void)nxpq_reader_created_by(r);
    check(nxpq_reader_num_rows(r) >= 0);
    scan(r, NULL, 1000);
    if (range_col >= 0 && size >= 12) {
        int16_t lo, span;
        memcpy(&lo, data + 4, 2);
        memcpy(&span, data + 6, 2);
        nxpq_range range = {(size_t)range_col, lo, (int64_t)lo + (span < 0 ? -span : span)};
        scan(r, &range, 37);
    }
    nxpq_reader_close(r);
    return 0;
}
