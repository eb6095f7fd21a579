/*
 * system_samples.c — the sampled system tables, from the TSVs of every session.
 *
 * CpuUsage — one row per cpu_usage.tsv line: timestamp, util_percent,
 *   cpu_id = the CPU number in decimal or "average", instance_id.
 * HostMemUsage — one row per host_mem.tsv line: timestamp, used_bytes,
 *   used_percent = 100 × used_bytes / total_bytes, instance_id.
 * SystemProfileHbmUsage — one row per device_mem.tsv line: timestamp =
 *   timestamp_ns, device_idx, hbm_idx, every <category>_bytes column as
 *   written, total_bytes = the sum of the 22 category columns (the file has no
 *   total; a sum overflowing int64 is a fatal error naming the file and line,
 *   raised by the reader), instance_id as for the other tables. Written only
 *   when some session has a device_mem.tsv with at least one line.
 *   All three are merged over sessions by timestamp (ties: session order, then
 *   line order), streaming.
 * HbmUsageSummaryByType — the peak snapshot of each HBM, fed every
 *   SystemProfileHbmUsage row (hbm_summary.h), written after that table.
 */
#include "process/system/system_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "process/system/hbm_summary.h"
#include "process/row.h"

/* A sample's timestamp_ns, the merge key (every sample kind starts with it). */
static int64_t sample_time(nx_sys_kind kind, const nx_sys_record *rec)
{
    return kind == NX_SYS_CPU_USAGE  ? rec->u.cpu.timestamp_ns
         : kind == NX_SYS_HOST_MEM   ? rec->u.mem.timestamp_ns
                                     : rec->u.hbm.timestamp_ns;
}

/* Column indices, resolved once per table. */
typedef struct sample_cols {
    size_t ts, inst, a, b;                       /* CpuUsage / HostMemUsage value columns */
    size_t total, device, hbm, cat[NX_HBM_CATEGORY_COUNT];   /* SystemProfileHbmUsage */
} sample_cols;

static void sample_cols_resolve(nx_row *r, nx_sys_kind kind, sample_cols *c)
{
    c->ts = nx_row_col(r, "timestamp");
    c->inst = nx_row_col(r, "instance_id");
    if (kind == NX_SYS_DEVICE_MEM) {
        c->total = nx_row_col(r, "total_bytes");
        c->device = nx_row_col(r, "device_idx");
        c->hbm = nx_row_col(r, "hbm_idx");
        for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++)
            c->cat[k] = nx_row_col(r, nx_sys_hbm_column(k));
    } else {
        c->a = nx_row_col(r, kind == NX_SYS_CPU_USAGE ? "util_percent" : "used_bytes");
        c->b = nx_row_col(r, kind == NX_SYS_CPU_USAGE ? "cpu_id" : "used_percent");
    }
}

/* The value columns of one sample's row (timestamp and instance_id aside). */
static void sample_values(nx_row *r, nx_sys_kind kind, const sample_cols *c, const nx_sys_record *rec)
{
    if (kind == NX_SYS_CPU_USAGE) {
        const nx_sys_cpu_sample *s = &rec->u.cpu;
        nx_row_num(r, c->a, s->util_percent);
        if (s->cpu == NX_SYS_CPU_AVERAGE) {
            nx_row_str(r, c->b, "average");
        } else {
            char num[24];
            snprintf(num, sizeof num, "%" PRId64, s->cpu);
            nx_row_str(r, c->b, num);
        }
    } else if (kind == NX_SYS_HOST_MEM) {
        const nx_sys_mem_sample *s = &rec->u.mem;
        nx_row_i64(r, c->a, s->used_bytes);
        nx_row_num(r, c->b, s->total_bytes > 0 ? 100.0 * (double)s->used_bytes / (double)s->total_bytes : 0.0);
    } else {
        const nx_sys_hbm_sample *s = &rec->u.hbm;
        nx_row_i64(r, c->total, s->total_bytes);   /* the reader's overflow-checked sum */
        for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++)
            nx_row_i64(r, c->cat[k], s->bytes[k]);
        nx_row_i64(r, c->device, s->device_idx);
        nx_row_i64(r, c->hbm, s->hbm_idx);
    }
}

int nx_system_write_samples(const nx_capture *cap, const nx_process_ctx *ctx, nx_sys_kind kind, unsigned *tables,
                         nx_system_result *res, nx_error *err)
{
    const char *table = kind == NX_SYS_CPU_USAGE ? "CpuUsage"
                      : kind == NX_SYS_HOST_MEM  ? "HostMemUsage"
                                                 : "SystemProfileHbmUsage";
    rt_source *src = calloc(cap->n_sessions ? cap->n_sessions : 1, sizeof *src);
    size_t nsrc = 0;
    nx_row r = {0};
    bool row_open = false;
    nx_error cerr = {0};
    nx_error perr = {0};
    int rc = -1;
    uint64_t rows = 0;
    nx_hbm_summary hbm = {0};
    if (!src) {
        nx_error_set(err, "%s: out of memory", table);
        return -1;
    }
    if (nx_sys_open_sources(cap, kind, src, &nsrc, err) != 0)
        goto out;
    if (nsrc == 0) {
        rc = 0;
        goto out;
    }
    if (nx_row_open(&r, &ctx->dest, table, &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        goto out;
    }
    row_open = true;
    sample_cols cols = {0};
    sample_cols_resolve(&r, kind, &cols);
    for (;;) {
        rt_source *best = NULL;
        int64_t bt = 0;
        for (size_t i = 0; i < nsrc; i++) {
            if (!src[i].has)
                continue;
            int64_t t = sample_time(kind, &src[i].rec);
            if (!best || t < bt)
                best = &src[i], bt = t;
        }
        if (!best)
            break;
        if (nx_row_begin(&r, &perr) != 0)
            goto row_fail;
        sample_values(&r, kind, &cols, &best->rec);
        nx_row_i64(&r, cols.ts, bt);
        nx_row_str(&r, cols.inst, nx_sys_instance_of(&cap->sessions[best->session]));
        if (nx_row_end(&r, &perr) != 0)
            goto row_fail;
        if (kind == NX_SYS_DEVICE_MEM && nx_hbm_summary_add(&hbm, &best->rec.u.hbm) != 0) {
            nx_error_set(err, "HbmUsageSummaryByType: out of memory");
            goto out;
        }
        nx_sys_span_add(res, bt, bt);
        rows++;
        int got = nx_sys_reader_next(best->r, &best->rec, &cerr);
        if (got < 0) {
            nx_error_set(err, "%s", cerr.msg);
            goto out;
        }
        best->has = got == 1;
    }
    row_open = false;
    if (nx_row_close(&r, true, tables, &perr) != 0 || nx_hbm_summary_write(&hbm, &ctx->dest, tables, &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        goto out;
    }
    if (kind == NX_SYS_CPU_USAGE)
        res->cpu_samples = rows;
    else if (kind == NX_SYS_HOST_MEM)
        res->mem_samples = rows;
    else
        res->hbm_samples = rows;
    rc = 0;
    goto out;
row_fail:
    nx_error_set(err, "%s", perr.msg);
out:
    if (row_open)
        nx_row_discard(&r);
    for (size_t i = 0; i < nsrc; i++)
        nx_sys_reader_close(src[i].r);
    free(src);
    nx_hbm_summary_free(&hbm);
    return rc;
}
