/*
 * system_metadata.c — the metadata rows of the system half of `process`.
 *
 * SystemProfileMetadata — one row when any of the four tables above has a
 *   row: first/last = the minimum/maximum over every SystemProfileEvents
 *   start_ts/end_ts and every sample (CpuUsage, HostMemUsage,
 *   SystemProfileHbmUsage) timestamp; first_ts/last_ts as Go's
 *   time.String() writes UTC ("2025-12-18 15:35:56.592459482 +0000 UTC",
 *   trailing zeros of the fraction dropped, no fraction when it is 0);
 *   first_ts_ns/last_ts_ns as decimal strings; ntff_version = the largest
 *   major version of the device traces processed, 0 when none;
 *   hbm_capacity_bytes = the largest HARDWARE hbm_capacity_bytes of the
 *   program files processed, 0 when none (not known without a program).
 *
 * Fallback Metadata (nx_system_write_fallback_metadata), for a profile with no
 * device trace: profile_schema_version, explorer_version, profile_name
 * (display name); first_hw_timestamp/last_hw_timestamp = the system data's
 * first/last ns and first_ts/last_ts their "YYYY-MM-DD HH:MM:SS+00:00" text
 * (0 / 1970-01-01 when there is no system row); ntff_version 0,
 * num_physical_cores 0, vnc_enabled false, and every clock, bandwidth, array
 * size, channel count and ticks_per_nanosec 0 (0 = not known: no device trace);
 * optional fields null.
 *
 * Relative times: when some framework trace's times count from its start
 * (framework_tally.c), first_ts/last_ts of both rows read "<ns> ns after the
 * trace start (relative time)" instead of a date in 1970.
 */
#include "process/system/system_internal.h"

#include <inttypes.h>
#include <stdio.h>

#include "nxprof_version.h"
#include "process/row.h"
#include "process/system/system_tables.h"
#include "process/time_text.h"
#include "schema/schema.h"

/* A time as first_ts/last_ts say it: UTC text (go: Go's time.String(), else
 * "YYYY-MM-DD HH:MM:SS+00:00"), or, when some framework trace's times count
 * from its start, "<ns> ns after the trace start (relative time)", since a
 * date in January 1970 would pretend to be one. */
static void time_text(const nx_system_result *res, int64_t ns, bool go, char out[64])
{
    if (res->relative_time)
        snprintf(out, 64, "%" PRId64 " ns after the trace start" NX_RELATIVE_TIME_SUFFIX, ns);
    else if (go)
        nx_go_utc_text(ns, out);
    else
        nx_utc_text(ns, out);
}

int nx_system_write_metadata(const nx_process_ctx *ctx, const nx_system_result *res, unsigned *tables,
                                 nx_error *err)
{
    if (!res->any)
        return 0;
    int64_t ntff = 0, hbm = 0;
    for (size_t i = 0; i < ctx->n_traces; i++)
        if (ctx->traces[i].hdr.version_major > ntff)
            ntff = ctx->traces[i].hdr.version_major;
    for (size_t i = 0; i < ctx->n_progs; i++)
        if (ctx->progs[i]->hw.hbm_capacity_bytes <= (uint64_t)INT64_MAX &&
            (int64_t)ctx->progs[i]->hw.hbm_capacity_bytes > hbm)
            hbm = (int64_t)ctx->progs[i]->hw.hbm_capacity_bytes;
    char first[64], last[64], first_ns[24], last_ns[24];
    time_text(res, res->first_ns, true, first);
    time_text(res, res->last_ns, true, last);
    snprintf(first_ns, sizeof first_ns, "%" PRId64, res->first_ns);
    snprintf(last_ns, sizeof last_ns, "%" PRId64, res->last_ns);
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "SystemProfileMetadata", err) != 0)
        return -1;
    if (nx_row_begin(&r, err) != 0)
        goto fail;
    nx_row_str(&r, nx_row_col(&r, "first_ts"), first);
    nx_row_str(&r, nx_row_col(&r, "last_ts"), last);
    nx_row_str(&r, nx_row_col(&r, "first_ts_ns"), first_ns);
    nx_row_str(&r, nx_row_col(&r, "last_ts_ns"), last_ns);
    nx_row_i64(&r, nx_row_col(&r, "ntff_version"), ntff);
    nx_row_i64(&r, nx_row_col(&r, "hbm_capacity_bytes"), hbm);
    if (nx_row_end(&r, err) != 0)
        goto fail;
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

int nx_system_write_fallback_metadata(const nx_process_ctx *ctx, const nx_system_result *res, unsigned *tables,
                                      nx_error *err)
{
    int64_t first = res->any ? res->first_ns : 0, last = res->any ? res->last_ns : 0;
    char first_txt[64], last_txt[64];
    time_text(res, first, false, first_txt);
    time_text(res, last, false, last_txt);
    static const char *const zero_ints[] = {
        "ntff_version", "num_physical_cores", "num_dma_engines_per_neuroncore", "tensor_engine_num_rows",
        "tensor_engine_num_cols", "vector_engine_num_channels", "scalar_engine_num_channels",
        "gpsimd_engine_num_channels", "ticks_per_nanosec",
    };
    static const char *const zero_nums[] = {
        "dma_ddr_bandwidth", "hbm_ddr_bandwidth", "tensor_engine_clock_freq", "vector_engine_clock_freq",
        "scalar_engine_clock_freq", "gpsimd_engine_clock_freq", "neuroncore_clock_freq",
    };
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "Metadata", err) != 0)
        return -1;
    if (nx_row_begin(&r, err) != 0)
        goto fail;
    nx_row_str(&r, nx_row_col(&r, "profile_schema_version"), NX_SCHEMA_VERSION);
    nx_row_bool(&r, nx_row_col(&r, "vnc_enabled"), false);
    nx_row_i64(&r, nx_row_col(&r, "first_hw_timestamp"), first);
    nx_row_i64(&r, nx_row_col(&r, "last_hw_timestamp"), last);
    nx_row_str(&r, nx_row_col(&r, "first_ts"), first_txt);
    nx_row_str(&r, nx_row_col(&r, "last_ts"), last_txt);
    for (size_t i = 0; i < sizeof zero_ints / sizeof zero_ints[0]; i++)
        nx_row_i64(&r, nx_row_col(&r, zero_ints[i]), 0);
    for (size_t i = 0; i < sizeof zero_nums / sizeof zero_nums[0]; i++)
        nx_row_num(&r, nx_row_col(&r, zero_nums[i]), 0.0);
    nx_row_str(&r, nx_row_col(&r, "explorer_version"), NXPROF_VERSION);
    nx_row_opt_str(&r, nx_row_col(&r, "profile_name"), ctx->o->display_name);
    if (nx_row_end(&r, err) != 0)
        goto fail;
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}
