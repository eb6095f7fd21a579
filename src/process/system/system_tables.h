/*
 * system_tables.h — the system half of `nxprof process`: the runtime events,
 * CPU, host-memory and device-memory samples and Chrome traces of every
 * session become SystemProfileEvents, CpuUsage, HostMemUsage,
 * SystemProfileHbmUsage and SystemProfileMetadata; and
 * the Metadata row of a profile that has no device trace.
 *
 * The derivation rules are stated in system_tables.c's header comment and in
 * docs/processing.md, "System tables".
 */
#ifndef NX_SYSTEM_TABLES_H
#define NX_SYSTEM_TABLES_H

#include <stdbool.h>
#include <stddef.h>

#include "capture/capture.h"
#include "process/device/device_sink.h"
#include "process/system/system_result.h"

/* True when some session of `cap` holds a runtime-events, CPU, host-memory,
 * device-memory or Chrome trace file (the capture has a system profile to process). */
bool nx_system_capture_present(const nx_capture *cap);

/* Reads the system files of every session of `cap` and writes the system tables
 * into ctx->dest (counting each written table in *tables). ctx's programs and
 * traces (possibly none) supply SystemProfileMetadata's hardware facts.
 * Non-fatal problems (unmatched B/E events, oversized args) go to `warn`.
 * Returns 0, or -1 with a message in err naming the file (input) or the
 * table (output). */
int nx_system_tables_write(const nx_capture *cap, const nx_process_ctx *ctx, const nx_cap_warner *warn,
                           unsigned *tables, nx_system_result *res, nx_error *err);

/* The one Metadata row of a profile without device traces (framework-only
 * capture, or --ignore-device-profile): versions, profile name and the system
 * data's time span; every hardware quantity is 0 (not known without a device
 * trace). See system_tables.c for the exact values. */
int nx_system_write_fallback_metadata(const nx_process_ctx *ctx, const nx_system_result *res, unsigned *tables,
                                      nx_error *err);

#endif
