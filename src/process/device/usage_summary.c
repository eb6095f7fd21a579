/*
 * usage_summary.c — DmaUsageSummary from the DmaUsage samples (rules in
 * usage_summary.h). The samples come in time order, so one open bucket shared
 * by every pcore is enough: when a sample falls past it, its rows are final.
 */
#include "process/device/usage_summary.h"
#include "util/int_ops.h"

#include <stdio.h>
#include <string.h>

int nx_usage_summary_open(nx_usage_summary *u, const nx_table_dest *dest, nx_error *err)
{
    memset(u, 0, sizeof *u);
    if (nx_row_open(&u->r, dest, "DmaUsageSummary", err) != 0)
        return -1;
    u->c_ts = nx_row_col(&u->r, "timestamp");
    u->c_pcore = nx_row_col(&u->r, "pcore_idx");
    u->c_sum_thr = nx_row_col(&u->r, "sum_current_throughput");
    u->c_sum_total = nx_row_col(&u->r, "sum_total_transfer_bytes");
    u->c_max_total = nx_row_col(&u->r, "max_total_transfer_bytes");
    u->c_count = nx_row_col(&u->r, "count");
    u->c_res = nx_row_col(&u->r, "bucket_resolution_ns");
    return 0;
}

/* Writes the open bucket's rows, in pcore order, and empties it. */
static int write_bucket(nx_usage_summary *u, nx_error *err)
{
    for (unsigned p = 0; p < NX_USAGE_SUMMARY_SERIES; p++) {
        nx_usage_summary_acc *a = &u->acc[p];
        if (a->count == 0)
            continue;
        if (nx_row_begin(&u->r, err) != 0)
            return -1;
        nx_row_i64(&u->r, u->c_ts, u->cur * NX_USAGE_SUMMARY_NS);
        nx_row_i64(&u->r, u->c_pcore, p);
        nx_row_num(&u->r, u->c_sum_thr, a->sum_throughput);
        nx_row_i64(&u->r, u->c_sum_total, a->sum_total);
        nx_row_i64(&u->r, u->c_max_total, a->max_total);
        nx_row_i64(&u->r, u->c_count, a->count);
        nx_row_i64(&u->r, u->c_res, NX_USAGE_SUMMARY_NS);
        if (nx_row_end(&u->r, err) != 0)
            return -1;
        memset(a, 0, sizeof *a);
    }
    return 0;
}

int nx_usage_summary_add(nx_usage_summary *u, int64_t ts, unsigned pcore, double throughput, int64_t total,
                         nx_error *err)
{
    if (pcore >= NX_USAGE_SUMMARY_SERIES) {
        snprintf(err->msg, sizeof err->msg, "DmaUsageSummary: pcore %u out of range", pcore);
        return -1;
    }
    int64_t b = nx_floor_div(ts, NX_USAGE_SUMMARY_NS);
    if (u->any && b != u->cur && write_bucket(u, err) != 0)
        return -1;
    u->any = true;
    u->cur = b;
    nx_usage_summary_acc *a = &u->acc[pcore];
    if (a->count == 0 || total > a->max_total)
        a->max_total = total;
    if (__builtin_add_overflow(a->sum_total, total, &a->sum_total)) {
        snprintf(err->msg, sizeof err->msg,
                 "DmaUsageSummary: sum_total_transfer_bytes of the bucket at %lld ns (pcore %u) overflows int64",
                 (long long)(b * NX_USAGE_SUMMARY_NS), pcore);
        return -1;
    }
    a->sum_throughput += (double)(float)throughput;   /* the value as DmaUsage stores it (FLOAT) */
    a->count++;
    return 0;
}

int nx_usage_summary_finish(nx_usage_summary *u, unsigned *tables, nx_error *err)
{
    int rc = u->any ? write_bucket(u, err) : 0;
    return nx_row_finish(&u->r, rc, tables, err);
}

void nx_usage_summary_discard(nx_usage_summary *u)
{
    nx_row_discard(&u->r);
}
