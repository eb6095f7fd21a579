/*
 * program_tables.c — the tables that describe the program and the capture rather
 * than its events: NeffHeader (one row per program file), DmaQueuesInfo (one
 * row per program queue and physical core) and Metadata (one row per device
 * trace: clock, hardware, versions, first and last timestamps). They are written
 * when the pipeline finishes, from the program files and the trace headers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nxprof_version.h"
#include "process/device/device_sink.h"
#include "process/row.h"
#include "process/time_text.h"
#include "schema/schema.h"

static void hex_uuid(const uint8_t uuid[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

static int write_neff_header(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "NeffHeader", err) != 0)
        return -1;
    for (size_t i = 0; i < ctx->n_progs; i++) {
        const nx_program *g = ctx->progs[i];
        char uuid[33], hash[17];
        hex_uuid(g->header.uuid, uuid);
        snprintf(hash, sizeof hash, "%016" PRIx64, g->hash);
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_opt_str(&r, nx_row_col(&r, "network_name"), g->header.network_name);
        nx_row_str(&r, nx_row_col(&r, "uuid"), uuid);
        nx_row_str(&r, nx_row_col(&r, "hash"), hash);
        nx_row_opt_str(&r, nx_row_col(&r, "enabled_features"), g->header.enabled_features);
        nx_row_i64(&r, nx_row_col(&r, "header_size"), (int64_t)g->header_bytes);
        nx_row_i64(&r, nx_row_col(&r, "data_size"), (int64_t)(g->file_size - g->header_bytes));
        nx_row_i64(&r, nx_row_col(&r, "major_version"), g->version_major);
        nx_row_i64(&r, nx_row_col(&r, "minor_version"), g->version_minor);
        nx_row_opt_str(&r, nx_row_col(&r, "package_version"), g->header.package_version);
        nx_row_opt_str(&r, nx_row_col(&r, "build_version"), g->header.build_version);
        nx_row_opt_i64(&r, nx_row_col(&r, "cc_participant_count"), g->header.cc_participant_count);
        nx_row_opt_i64(&r, nx_row_col(&r, "neuroncore_count"), g->header.neuroncore_count);
        nx_row_opt_i64(&r, nx_row_col(&r, "logical_neuroncore_count"), g->header.logical_neuroncore_count);
        nx_row_opt_i64(&r, nx_row_col(&r, "pcore_count_per_lnc"), g->header.pcore_count_per_lnc);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int write_dma_queues(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < ctx->n_progs; i++)
        total += ctx->progs[i]->n_queues;
    if (total == 0)
        return 0;
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "DmaQueuesInfo", err) != 0)
        return -1;
    for (size_t i = 0; i < ctx->n_progs; i++) {
        const nx_program *g = ctx->progs[i];
        for (uint32_t pc = 0; pc < ctx->prog_pcores[i]; pc++) {
            for (size_t q = 0; q < g->n_queues; q++) {
                const nx_prog_queue *qu = &g->queues[q];
                if (nx_row_begin(&r, err) != 0)
                    goto fail;
                nx_row_str(&r, nx_row_col(&r, "name"), qu->name);
                nx_row_str(&r, nx_row_col(&r, "type"), qu->purpose);
                nx_row_i64(&r, nx_row_col(&r, "pcore_idx"), pc);
                nx_row_i64(&r, nx_row_col(&r, "idx"), (int64_t)q);
                nx_row_i64(&r, nx_row_col(&r, "engine_idx"), qu->dma_engine);
                nx_row_i64(&r, nx_row_col(&r, "axi_port"), qu->axi_port);
                nx_row_i64(&r, nx_row_col(&r, "dram_channel"), qu->dram_channel);
                if (nx_row_end(&r, err) != 0)
                    goto fail;
            }
        }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static float ghz(uint64_t hz) { return (float)((double)hz / 1e9); }

static int write_metadata(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "Metadata", err) != 0)
        return -1;
    for (size_t i = 0; i < ctx->n_traces; i++) {
        const nx_device_trace *s = &ctx->traces[i];
        const nx_trace_header *h = &s->hdr;
        const nx_prog_hardware *hw = &s->prog->hw;
        int64_t first = s->any ? s->first_ns : h->epoch_ns;
        int64_t last = s->any ? s->last_ns : h->epoch_ns;
        char first_txt[40], last_txt[40];
        nx_utc_text(first, first_txt);
        nx_utc_text(last, last_txt);
        /* The schema stores ticks per ns as an integer: the nearest one, at least 1. */
        int64_t tpn = ((int64_t)h->ticks_per_ns_num * 2 + h->ticks_per_ns_den) / (2 * (int64_t)h->ticks_per_ns_den);
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, nx_row_col(&r, "profile_schema_version"), NX_SCHEMA_VERSION);
        nx_row_i64(&r, nx_row_col(&r, "ntff_version"), h->version_major);
        nx_row_i64(&r, nx_row_col(&r, "num_physical_cores"), (int32_t)h->pcore_count);
        nx_row_bool(&r, nx_row_col(&r, "vnc_enabled"), (h->flags & NX_TRACE_FLAG_VNC) != 0);
        nx_row_i64(&r, nx_row_col(&r, "first_hw_timestamp"), first);
        nx_row_i64(&r, nx_row_col(&r, "last_hw_timestamp"), last);
        nx_row_str(&r, nx_row_col(&r, "first_ts"), first_txt);
        nx_row_str(&r, nx_row_col(&r, "last_ts"), last_txt);
        nx_row_num(&r, nx_row_col(&r, "dma_ddr_bandwidth"), (float)hw->dma_ddr_bandwidth);
        nx_row_i64(&r, nx_row_col(&r, "num_dma_engines_per_neuroncore"), (int32_t)hw->dma_engines_per_neuroncore);
        nx_row_num(&r, nx_row_col(&r, "hbm_ddr_bandwidth"), (float)hw->hbm_ddr_bandwidth);
        nx_row_i64(&r, nx_row_col(&r, "tensor_engine_num_rows"), hw->tensor_rows);
        nx_row_i64(&r, nx_row_col(&r, "tensor_engine_num_cols"), hw->tensor_cols);
        nx_row_num(&r, nx_row_col(&r, "tensor_engine_clock_freq"), ghz(hw->tensor_clock_hz));
        nx_row_num(&r, nx_row_col(&r, "vector_engine_clock_freq"), ghz(hw->vector_clock_hz));
        nx_row_i64(&r, nx_row_col(&r, "vector_engine_num_channels"), hw->vector_channels);
        nx_row_num(&r, nx_row_col(&r, "scalar_engine_clock_freq"), ghz(hw->scalar_clock_hz));
        nx_row_i64(&r, nx_row_col(&r, "scalar_engine_num_channels"), hw->scalar_channels);
        nx_row_num(&r, nx_row_col(&r, "gpsimd_engine_clock_freq"), ghz(hw->gpsimd_clock_hz));
        nx_row_i64(&r, nx_row_col(&r, "gpsimd_engine_num_channels"), hw->gpsimd_channels);
        nx_row_num(&r, nx_row_col(&r, "neuroncore_clock_freq"), ghz(hw->neuroncore_clock_hz));
        nx_row_i64(&r, nx_row_col(&r, "ticks_per_nanosec"), tpn > 0 ? tpn : 1);
        nx_row_opt_str(&r, nx_row_col(&r, "instance_type"), h->instance_type);
        nx_row_opt_str(&r, nx_row_col(&r, "runtime_version"), h->runtime_version);
        nx_row_opt_str(&r, nx_row_col(&r, "collectives_version"), h->collectives_version);
        nx_row_opt_str(&r, nx_row_col(&r, "driver_version"), h->driver_version);
        nx_row_str(&r, nx_row_col(&r, "explorer_version"), NXPROF_VERSION);
        nx_row_opt_str(&r, nx_row_col(&r, "compiler_version"), s->prog->header.compiler_version);
        nx_row_i64(&r, nx_row_col(&r, "neuroncore_idx"), h->neuroncore_idx);
        nx_row_i64(&r, nx_row_col(&r, "neuron_device_idx"), h->neuron_device_idx);
        nx_row_opt_str(&r, nx_row_col(&r, "profile_name"), ctx->o->display_name);
        nx_row_bool(&r, nx_row_col(&r, "is_simulation"), (h->flags & NX_TRACE_FLAG_SIMULATION) != 0);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int program_tables_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    (void)state;
    if (ctx->n_traces == 0)
        return 0;
    if (write_neff_header(ctx, tables, err) != 0 || write_dma_queues(ctx, tables, err) != 0 ||
        write_metadata(ctx, tables, err) != 0)
        return -1;
    return 0;
}

const nx_device_sink nx_sink_program_tables = {
    .name = "program tables",
    .kinds = 0,
    .finish = program_tables_finish,
};
