/*
 * device_pipeline.h — the device half of `nxprof process`: program files and
 * device traces in, every device table out (through the sinks, device_sink.h).
 *
 * Each trace is a stream read once, in constant memory: records wait in a
 * per-trace min-heap only until no later record of that trace can start before
 * them, which the trace's reorder window bounds. The ready heads of all traces
 * are merged by Unix start time and dispatched to the sinks in that order.
 */
#ifndef NX_DEVICE_PIPELINE_H
#define NX_DEVICE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "process/device/device_sink.h"

/* The longest a dma_packet record may last (1 s; real packets last
 * microseconds): a longer one is refused as damaged, since its DMA usage
 * (dma_usage.h) would cost one step per 10 us bucket it covers. */
#define NX_MAX_DMA_PACKET_NS 1000000000LL

typedef struct nx_device_pipeline nx_device_pipeline;

/* Called about every million records and once at the end. */
typedef void (*nx_progress_fn)(void *ctx, uint64_t records_done, uint64_t records_total);

/* Opens every program and trace of `cap` (headers validated, nothing read yet).
 * A capture without device traces gives a pipeline with no traces. */
int nx_device_pipeline_open(const nx_capture *cap, const nx_cap_warner *warn, nx_device_pipeline **out,
                            nx_error *err);
/* Fills the program and trace parts of ctx (valid while p is open). */
void nx_device_pipeline_describe(const nx_device_pipeline *p, nx_process_ctx *ctx);
uint64_t nx_device_pipeline_total_records(const nx_device_pipeline *p);

/* Reads every trace and feeds the sinks; then finishes them. Returns 0, or -1
 * with a message naming the file (capture) or table (output) in err. Counts
 * written tables in *tables and instruction records in *instructions. */
int nx_device_pipeline_run(nx_device_pipeline *p, const nx_process_ctx *ctx, nx_progress_fn progress,
                           void *progress_ctx, unsigned *tables, uint64_t *instructions, nx_error *err);
void nx_device_pipeline_close(nx_device_pipeline *p);

#endif
